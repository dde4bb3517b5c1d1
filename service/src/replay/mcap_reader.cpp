// McapReader (mcap_reader.hpp). Records are <opcode u8><content length u64><content>, integers
// little endian, strings and byte fields u32-length-prefixed, maps u32-byte-length-prefixed;
// a Chunk's records are a u64-length-prefixed field of it, compressed as a whole.
#include "mcap_reader.hpp"

#include "mcap_format.hpp"

#include <libdeflate.h>
#include <lz4frame.h>
#include <zstd.h>

#include <array>
#include <cstring>
#include <memory>
#include <string_view>

namespace service::replay::detail {
namespace {

using namespace mcap;  // kMagic, Op

// Reads fields off a span; any read past its end sets `bad` and yields zeros / empties.
struct Fields {
  std::span<const uint8_t> b;
  size_t pos = 0;
  bool bad = false;

  bool take(size_t n) {
    if (bad || b.size() - pos < n) {
      bad = true;
      return false;
    }
    pos += n;
    return true;
  }
  template <class T>
  T le() {
    if (!take(sizeof(T))) return 0;
    T v = 0;
    for (size_t i = 0; i < sizeof(T); ++i) v |= static_cast<T>(b[pos - sizeof(T) + i]) << (8 * i);
    return v;
  }
  std::span<const uint8_t> bytes(uint64_t n) {
    if (n > b.size() - pos || !take(static_cast<size_t>(n))) {
      bad = true;
      return {};
    }
    return b.subspan(pos - static_cast<size_t>(n), static_cast<size_t>(n));
  }
  std::string str() {
    auto s = bytes(le<uint32_t>());
    return std::string(reinterpret_cast<const char*>(s.data()), s.size());
  }
  std::map<std::string, std::string> map() {
    Fields m{bytes(le<uint32_t>())};
    std::map<std::string, std::string> out;
    while (!bad && !m.bad && m.pos < m.b.size()) {
      std::string k = m.str();
      out[std::move(k)] = m.str();
    }
    bad = bad || m.bad;
    return out;
  }
  std::span<const uint8_t> rest() { return bytes(b.size() - pos); }
};

std::string at(uint64_t offset) {
  return "offset " + std::to_string(offset);
}

// Decompresses `in` into exactly out.size() bytes; false when it does not.
bool lz4_frame(std::span<const uint8_t> in, std::vector<uint8_t>& out) {
  LZ4F_dctx* raw = nullptr;
  if (LZ4F_isError(LZ4F_createDecompressionContext(&raw, LZ4F_VERSION))) return false;
  std::unique_ptr<LZ4F_dctx, decltype(&LZ4F_freeDecompressionContext)> ctx(
      raw, LZ4F_freeDecompressionContext);
  size_t in_pos = 0, out_pos = 0;
  for (;;) {
    size_t in_n = in.size() - in_pos, out_n = out.size() - out_pos;
    const size_t hint = LZ4F_decompress(ctx.get(), out.data() + out_pos, &out_n, in.data() + in_pos,
                                        &in_n, nullptr);
    if (LZ4F_isError(hint)) return false;
    in_pos += in_n;
    out_pos += out_n;
    if (hint == 0) return in_pos == in.size() && out_pos == out.size();
    if (in_n == 0 && out_n == 0) return false;  // no progress: input or output exhausted
  }
}

bool zstd(std::span<const uint8_t> in, std::vector<uint8_t>& out) {
  const size_t n = ZSTD_decompress(out.data(), out.size(), in.data(), in.size());
  return !ZSTD_isError(n) && n == out.size();
}

}  // namespace

Status McapReader::record(uint8_t op, std::span<const uint8_t> content, bool deliver,
                          McapVisitor& v, McapReadResult& r, bool& ok) {
  Fields c{content};
  switch (op) {
    case kSchema: {
      McapSchema s;
      s.id = c.le<uint16_t>();
      s.name = c.str();
      s.encoding = c.str();
      auto data = c.bytes(c.le<uint32_t>());
      s.data.assign(reinterpret_cast<const char*>(data.data()), data.size());
      if (!c.bad && deliver) v.schema(s);
      break;
    }
    case kChannel: {
      McapChannel ch;
      ch.id = c.le<uint16_t>();
      ch.schema_id = c.le<uint16_t>();
      ch.topic = c.str();
      ch.message_encoding = c.str();
      ch.metadata = c.map();
      if (!c.bad && deliver) v.channel(ch);
      break;
    }
    case kMessage: {
      McapMessage m;
      m.channel = c.le<uint16_t>();
      m.sequence = c.le<uint32_t>();
      m.log_time = c.le<uint64_t>();
      m.publish_time = c.le<uint64_t>();
      m.data = c.rest();
      if (!c.bad && deliver) {
        if (auto st = v.message(m); !st) return st;
        ++r.messages;
      }
      break;
    }
    case kMetadata: {
      std::string name = c.str();
      auto map = c.map();
      if (!c.bad && deliver) v.metadata(name, map);
      break;
    }
    default:
      break;  // indexes, attachments, statistics: not needed
  }
  ok = !c.bad;
  return Status{};
}

Status McapReader::records(std::span<const uint8_t> bytes, bool deliver, McapVisitor& v,
                           McapReadResult& r, bool& ok) {
  Fields f{bytes};
  ok = true;
  while (ok && f.pos < bytes.size()) {
    const uint8_t op = f.le<uint8_t>();
    auto content = f.bytes(f.le<uint64_t>());
    if (f.bad) break;
    if (auto st = record(op, content, deliver, v, r, ok); !st) return st;
  }
  ok = ok && !f.bad;
  return Status{};
}

Status McapReader::read_chunk(std::span<const uint8_t> content, uint64_t offset, McapVisitor& v,
                              McapReadResult& r) {
  Fields f{content};
  f.le<uint64_t>();  // message_start_time
  f.le<uint64_t>();  // message_end_time
  const uint64_t size = f.le<uint64_t>();
  const uint32_t crc = f.le<uint32_t>();
  const std::string compression = f.str();
  auto stored = f.bytes(f.le<uint64_t>());
  auto damaged = [&](const std::string& why) {
    ++r.damaged;
    r.problems.push_back("chunk at " + at(offset) + ": " + why + "; its messages skipped");
    return Status{};
  };
  if (f.bad || f.pos != content.size()) return damaged("malformed");
  if (compression != "" && compression != "lz4" && compression != "zstd") {
    return Error{Errc::kUnsupported, "chunk at " + at(offset) + ": compression '" + compression +
                                         "' is not supported (lz4, zstd or none)"};
  }
  if (size > options_.max_chunk_bytes)
    return damaged(std::to_string(size) + " bytes uncompressed, over the limit");
  std::span<const uint8_t> records_bytes = stored;
  if (!compression.empty()) {
    chunk_.resize(static_cast<size_t>(size));
    const bool done = compression == "lz4" ? lz4_frame(stored, chunk_) : zstd(stored, chunk_);
    if (!done) return damaged("does not decompress (" + compression + ")");
    records_bytes = chunk_;
  } else if (stored.size() != size) {
    return damaged("size differs from its uncompressed_size");
  }
  if (crc != 0 && libdeflate_crc32(0, records_bytes.data(), records_bytes.size()) != crc)
    return damaged("CRC mismatch");
  bool ok = true;
  if (auto s = records(records_bytes, false, v, r, ok); !s) return s;
  if (!ok) return damaged("records do not parse");
  ++r.chunks;
  return records(records_bytes, true, v, r, ok);
}

Result<McapReadResult> McapReader::read(std::istream& in, McapVisitor& v) {
  McapReadResult r;
  std::array<uint8_t, 8> magic{};
  in.read(reinterpret_cast<char*>(magic.data()), magic.size());
  if (in.gcount() != static_cast<std::streamsize>(magic.size()) || magic != kMagic)
    return Error{Errc::kInvalidArgument, "not an MCAP file (no MCAP magic at its start)"};
  r.bytes = magic.size();
  for (;;) {
    std::array<uint8_t, 9> prefix{};
    in.read(reinterpret_cast<char*>(prefix.data()), prefix.size());
    const auto got = static_cast<size_t>(in.gcount());
    if (got < prefix.size()) {
      r.truncated = true;
      r.problems.push_back("the file ends at " + at(r.bytes + got) + " before its DataEnd record");
      return r;
    }
    Fields p{prefix};
    const uint8_t op = p.le<uint8_t>();
    const uint64_t len = p.le<uint64_t>();
    const uint64_t limit =
        op == kChunk ? options_.max_chunk_bytes + 1024 : options_.max_record_bytes;
    const uint64_t offset = r.bytes;
    if (len > limit) {
      r.truncated = true;
      r.problems.push_back("record at " + at(offset) + ": length " + std::to_string(len) +
                           " over the limit; read no further");
      return r;
    }
    record_.resize(static_cast<size_t>(len));
    in.read(reinterpret_cast<char*>(record_.data()), static_cast<std::streamsize>(len));
    if (static_cast<uint64_t>(in.gcount()) != len) {
      r.truncated = true;
      r.problems.push_back("the file ends inside the record at " + at(offset));
      r.bytes += prefix.size() + static_cast<uint64_t>(in.gcount());
      return r;
    }
    r.bytes += prefix.size() + len;
    if (op == kDataEnd || op == kFooter) return r;
    if (op == kHeader) {
      Fields h{record_};
      r.profile = h.str();
      const std::string library = h.str();
      v.header(r.profile, library);
      continue;
    }
    if (op == kChunk) {
      if (auto s = read_chunk(record_, offset, v, r); !s) return s.error();
      continue;
    }
    bool ok = true;  // a record outside chunks (unchunked files hold every message so)
    if (auto s = record(op, record_, true, v, r, ok); !s) return s.error();
    if (!ok) r.problems.push_back("record at " + at(offset) + " does not parse; skipped");
  }
}

}  // namespace service::replay::detail
