// Chunk and entry codec: see storage/format.hpp for the byte layout. Pure functions, no state.
// CRC-32C is ISA-L's (crc32_iscsi: the instructions the CPU has, chosen at run time).
#include "storage/format.hpp"

#include <isa-l/crc.h>
#include <lz4.h>

#include <algorithm>
#include <array>
#include <bit>
#include <climits>

namespace storage::format {

using detail::put_varint;
using detail::zigzag;
namespace {

// ---- little-endian helpers ----
template <typename T>
void put_le(uint8_t* p, T v) {
  std::memcpy(p, &v, sizeof v);  // x86/ARM little-endian hosts only (static_assert below)
}
template <typename T>
T get_le(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
static_assert(std::endian::native == std::endian::little, "big-endian hosts not supported");

Error corrupt(std::string what) {
  return Error{ErrorCode::kCorrupt, std::move(what)};
}
Error truncated(std::string what) {
  return Error{ErrorCode::kTruncated, std::move(what)};
}

void put_bytes(Bytes& out, const void* data, size_t n) {
  uint8_t tmp[10];
  uint8_t* e = put_varint(tmp, n);
  const auto* b = reinterpret_cast<const std::byte*>(tmp);
  out.insert(out.end(), b, b + (e - tmp));
  const auto* d = static_cast<const std::byte*>(data);
  out.insert(out.end(), d, d + n);
}
void put_varint_to(Bytes& out, uint64_t v) {
  uint8_t tmp[10];
  uint8_t* e = put_varint(tmp, v);
  const auto* b = reinterpret_cast<const std::byte*>(tmp);
  out.insert(out.end(), b, b + (e - tmp));
}

}  // namespace

uint32_t crc32c(const void* data, size_t size, uint32_t crc) {
  // crc32_iscsi takes and returns the register without the final inversion, and an int length.
  auto* p = static_cast<unsigned char*>(const_cast<void*>(data));  // only read
  crc = ~crc;
  while (size > 0) {
    const size_t n = std::min<size_t>(size, INT_MAX);
    crc = crc32_iscsi(p, static_cast<int>(n), crc);
    p += n;
    size -= n;
  }
  return ~crc;
}

const char* to_string(Codec c) {
  return c == Codec::kLz4 ? "lz4" : "raw";
}

void encode_segment_header(const SegmentHeader& h, uint8_t out[kSegmentHeaderSize]) {
  std::memset(out, 0, kSegmentHeaderSize);
  std::memcpy(out, kSegmentMagic, 8);
  put_le<uint32_t>(out + 8, h.version);
  std::memcpy(out + 16, h.recording_id.data(), 16);
  put_le<uint64_t>(out + 32, h.segment_number);
  put_le<int64_t>(out + 40, h.created_ns);
  put_le<uint32_t>(out + 12, crc32c(out, kSegmentHeaderSize));
}

Result<SegmentHeader> decode_segment_header(ByteSpan bytes) {
  if (bytes.size() < kSegmentHeaderSize) return truncated("segment header truncated");
  uint8_t b[kSegmentHeaderSize];
  std::memcpy(b, bytes.data(), kSegmentHeaderSize);
  if (std::memcmp(b, kSegmentMagic, 8) != 0) return corrupt("bad segment magic");
  const uint32_t crc = get_le<uint32_t>(b + 12);
  put_le<uint32_t>(b + 12, 0);
  if (crc32c(b, kSegmentHeaderSize) != crc) return corrupt("segment header checksum mismatch");
  SegmentHeader h;
  h.version = get_le<uint32_t>(b + 8);
  if (h.version < kMinFormatVersion || h.version > kFormatVersion)
    return Error{ErrorCode::kUnsupported,
                 "segment format version " + std::to_string(h.version) + " not supported"};
  std::memcpy(h.recording_id.data(), b + 16, 16);
  h.segment_number = get_le<uint64_t>(b + 32);
  h.created_ns = get_le<int64_t>(b + 40);
  return h;
}

void encode_chunk_header(const ChunkHeader& h, uint8_t out[kChunkHeaderSize]) {
  std::memset(out, 0, kChunkHeaderSize);
  put_le<uint32_t>(out + 0, kChunkMagic);
  put_le<uint64_t>(out + 8, h.sequence);
  put_le<uint32_t>(out + 16, h.stored_size);
  put_le<uint32_t>(out + 20, h.raw_size);
  put_le<uint32_t>(out + 24, h.record_count);
  put_le<uint32_t>(out + 28, h.entry_count);
  put_le<int64_t>(out + 32, h.first_recv_ns);
  put_le<int64_t>(out + 40, h.last_recv_ns);
  out[48] = static_cast<uint8_t>(h.codec);
  out[49] = h.flags;
  put_le<uint16_t>(out + 50, h.padding);
  put_le<uint32_t>(out + 52, h.body_crc);
  put_le<uint32_t>(out + 4, crc32c(out, kChunkHeaderSize));
}

Result<ChunkHeader> decode_chunk_header(ByteSpan bytes, const DecodeLimits& limits) {
  if (bytes.size() < kChunkHeaderSize) return truncated("chunk header truncated");
  uint8_t b[kChunkHeaderSize];
  std::memcpy(b, bytes.data(), kChunkHeaderSize);
  if (get_le<uint32_t>(b) != kChunkMagic) return corrupt("bad chunk magic");
  const uint32_t crc = get_le<uint32_t>(b + 4);
  put_le<uint32_t>(b + 4, 0);
  if (crc32c(b, kChunkHeaderSize) != crc) return corrupt("chunk header checksum mismatch");
  ChunkHeader h;
  h.sequence = get_le<uint64_t>(b + 8);
  h.stored_size = get_le<uint32_t>(b + 16);
  h.raw_size = get_le<uint32_t>(b + 20);
  h.record_count = get_le<uint32_t>(b + 24);
  h.entry_count = get_le<uint32_t>(b + 28);
  h.first_recv_ns = get_le<int64_t>(b + 32);
  h.last_recv_ns = get_le<int64_t>(b + 40);
  if (b[48] > 1) return Error{ErrorCode::kUnsupported, "unknown chunk codec"};
  h.codec = static_cast<Codec>(b[48]);
  h.flags = b[49];
  h.padding = get_le<uint16_t>(b + 50);
  h.body_crc = get_le<uint32_t>(b + 52);
  if (h.raw_size > limits.max_raw_chunk_bytes) return corrupt("chunk raw size over limit");
  if (h.codec == Codec::kRaw && h.stored_size != h.raw_size)
    return corrupt("raw chunk with stored size != raw size");
  if (h.codec == Codec::kLz4 &&
      static_cast<uint64_t>(h.stored_size) >
          static_cast<uint64_t>(LZ4_compressBound(static_cast<int>(h.raw_size))))
    return corrupt("lz4 chunk larger than its bound");
  if (h.record_count > h.entry_count) return corrupt("record count over entry count");
  if (h.entry_count > h.raw_size) return corrupt("entry count over raw size");
  if (h.first_recv_ns > h.last_recv_ns) return corrupt("chunk time range inverted");
  return h;
}

Status decode_chunk_body(const ChunkHeader& h, ByteSpan stored, Bytes& out, bool verify_crc) {
  if (stored.size() < h.stored_size) return truncated("chunk body truncated");
  stored = stored.first(h.stored_size);
  if (verify_crc && crc32c(stored.data(), stored.size()) != h.body_crc)
    return corrupt("chunk body checksum mismatch");
  out.resize(h.raw_size);
  if (h.codec == Codec::kRaw) {
    if (!stored.empty()) std::memcpy(out.data(), stored.data(), stored.size());
    return Status{};
  }
  const int n = LZ4_decompress_safe(reinterpret_cast<const char*>(stored.data()),
                                    reinterpret_cast<char*>(out.data()),
                                    static_cast<int>(stored.size()), static_cast<int>(h.raw_size));
  if (n < 0 || static_cast<uint32_t>(n) != h.raw_size) return corrupt("lz4 body does not decode");
  return Status{};
}

void append_topic_entry(Bytes& out, TopicId id, const TopicDef& def) {
  out.push_back(static_cast<std::byte>(EntryKind::kTopic));
  put_varint_to(out, id);
  put_bytes(out, def.name.data(), def.name.size());
  put_bytes(out, def.type_name.data(), def.type_name.size());
  out.push_back(static_cast<std::byte>(def.keyed ? 1 : 0));
  put_bytes(out, def.qos.data(), def.qos.size());
  put_bytes(out, def.type_info.data(), def.type_info.size());
}

void append_writer_entry(Bytes& out, WriterId id, const WriterDef& def) {
  const bool qos = !def.qos.empty();
  out.push_back(static_cast<std::byte>(qos ? EntryKind::kWriterQos : EntryKind::kWriter));
  put_varint_to(out, id);
  put_varint_to(out, def.topic);
  const auto* g = reinterpret_cast<const std::byte*>(def.guid.data());
  out.insert(out.end(), g, g + 16);
  if (qos) put_bytes(out, def.qos.data(), def.qos.size());
}

void append_gap_entry(Bytes& out, const Gap& gap) {
  out.push_back(static_cast<std::byte>(EntryKind::kGap));
  put_varint_to(out, gap.writer);
  put_varint_to(out, zigzag(gap.first_missing));
  put_varint_to(out, zigzag(gap.last_missing));
}

void append_type_entry(Bytes& out, const TypeDef& def) {
  out.push_back(static_cast<std::byte>(EntryKind::kType));
  put_bytes(out, def.type_name.data(), def.type_name.size());
  out.push_back(static_cast<std::byte>(def.source));
  put_bytes(out, def.idl.data(), def.idl.size());
  put_bytes(out, def.type_object.data(), def.type_object.size());
}

void append_mark_entry(Bytes& out, const Mark& mark) {
  out.push_back(static_cast<std::byte>(EntryKind::kMark));
  out.push_back(static_cast<std::byte>(mark.kind));
  put_varint_to(out, zigzag(mark.time_ns));
  put_bytes(out, mark.name.data(), mark.name.size());
  put_bytes(out, mark.note.data(), mark.note.size());
}

namespace {
struct Reader {
  const uint8_t* p;
  const uint8_t* end;
  bool ok = true;

  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
      if (p >= end) {
        ok = false;
        return 0;
      }
      const uint8_t b = *p++;
      if (shift == 63 && b > 1) {
        ok = false;
        return 0;
      }
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    ok = false;
    return 0;
  }
  int64_t svarint() {
    const uint64_t z = varint();
    return static_cast<int64_t>((z >> 1) ^ (0 - (z & 1)));
  }
  uint32_t u32() {
    const uint64_t v = varint();
    if (v > UINT32_MAX) ok = false;
    return static_cast<uint32_t>(v);
  }
  const uint8_t* take(uint64_t n) {
    if (!ok || n > static_cast<uint64_t>(end - p)) {
      ok = false;
      return nullptr;
    }
    const uint8_t* r = p;
    p += n;
    return r;
  }
  // A length-prefixed string or blob of at most `limit` bytes.
  template <typename Out>
  void lengthed(Out& out, uint64_t limit) {
    using T = typename Out::value_type;
    const uint64_t n = varint();
    if (n > limit) ok = false;
    const uint8_t* d = take(n);
    if (d) out.assign(reinterpret_cast<const T*>(d), reinterpret_cast<const T*>(d + n));
  }
};
}  // namespace

Result<bool> EntryDecoder::next(Entry& e) {
  if (p_ == end_) return false;
  Reader r{p_, end_};
  const uint8_t kind = *r.p++;
  const auto fail = [&](const char* what) -> Result<bool> {
    return Error{ErrorCode::kCorrupt,
                 std::string(what) + " at entry offset " + std::to_string(remaining())};
  };
  if ((kind & 0x0f) > 6 || (kind & 0xe0) || ((kind & kEntryHasKeyHash) && (kind & 0x0f) != 0))
    return fail("bad entry kind");
  e.kind = static_cast<EntryKind>(kind & 0x0f);
  switch (e.kind) {
    case EntryKind::kData: {
      RecordMeta& m = e.record.meta;
      m.topic = r.u32();
      m.writer = r.u32();
      m.sequence = static_cast<int64_t>(static_cast<uint64_t>(st_.prev_seq) +
                                        static_cast<uint64_t>(r.svarint()));
      m.reception_ns = static_cast<int64_t>(static_cast<uint64_t>(st_.prev_recv) +
                                            static_cast<uint64_t>(r.svarint()));
      m.source_ns = static_cast<int64_t>(static_cast<uint64_t>(m.reception_ns) +
                                         static_cast<uint64_t>(r.svarint()));
      m.flags = r.u32();
      m.has_key_hash = (kind & kEntryHasKeyHash) != 0;
      if (m.has_key_hash) {
        const uint8_t* k = r.take(16);
        if (k) std::memcpy(m.key_hash.data(), k, 16);
      }
      const uint64_t len = r.varint();
      if (r.ok && len > limits_.max_record_bytes) return fail("payload over limit");
      const uint8_t* payload = r.take(len);
      if (!r.ok) return fail("truncated data record");
      e.record.payload = ByteSpan(reinterpret_cast<const std::byte*>(payload), len);
      st_.prev_seq = m.sequence;
      st_.prev_recv = m.reception_ns;
      break;
    }
    case EntryKind::kTopic: {
      e.topic_id = r.u32();
      const uint64_t limit = limits_.max_record_bytes;
      r.lengthed(e.topic.name, limit);
      r.lengthed(e.topic.type_name, limit);
      const uint8_t* keyed = r.take(1);
      e.topic.keyed = keyed && *keyed != 0;
      if (keyed && *keyed > 1) r.ok = false;
      r.lengthed(e.topic.qos, limit);
      r.lengthed(e.topic.type_info, limit);
      if (!r.ok) return fail("bad topic definition");
      if (e.topic_id == 0) return fail("topic id 0");
      break;
    }
    case EntryKind::kWriter:
    case EntryKind::kWriterQos: {
      e.writer_id = r.u32();
      e.writer.topic = r.u32();
      const uint8_t* g = r.take(16);
      if (g) std::memcpy(e.writer.guid.data(), g, 16);
      e.writer.qos.clear();
      if (e.kind == EntryKind::kWriterQos) r.lengthed(e.writer.qos, limits_.max_record_bytes);
      if (!r.ok) return fail("bad writer definition");
      if (e.writer_id == 0) return fail("writer id 0");
      e.kind = EntryKind::kWriter;
      break;
    }
    case EntryKind::kGap: {
      e.gap.writer = r.u32();
      e.gap.first_missing = r.svarint();
      e.gap.last_missing = r.svarint();
      if (!r.ok) return fail("bad gap entry");
      if (e.gap.first_missing > e.gap.last_missing) return fail("inverted gap");
      break;
    }
    case EntryKind::kType: {
      const uint64_t limit = limits_.max_record_bytes;
      r.lengthed(e.type.type_name, limit);
      const uint8_t* source = r.take(1);
      if (source && *source != static_cast<uint8_t>(TypeSource::kIdl) &&
          *source != static_cast<uint8_t>(TypeSource::kLookup))
        r.ok = false;
      if (source) e.type.source = static_cast<TypeSource>(*source);
      r.lengthed(e.type.idl, limit);
      r.lengthed(e.type.type_object, limit);
      if (!r.ok) return fail("bad type definition");
      if (e.type.type_name.empty()) return fail("type definition without a name");
      break;
    }
    case EntryKind::kMark: {
      const uint64_t limit = limits_.max_record_bytes;
      const uint8_t* k = r.take(1);
      if (k && (*k < static_cast<uint8_t>(MarkKind::kTag) ||
                *k > static_cast<uint8_t>(MarkKind::kClockOffset)))
        r.ok = false;
      if (k) e.mark.kind = static_cast<MarkKind>(*k);
      e.mark.time_ns = r.svarint();
      r.lengthed(e.mark.name, limit);
      r.lengthed(e.mark.note, limit);
      if (!r.ok) return fail("bad mark entry");
      break;
    }
  }
  p_ = r.p;
  return true;
}

}  // namespace storage::format
