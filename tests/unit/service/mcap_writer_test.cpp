// The MCAP writer (service/src/replay/mcap_writer.*): files written into a std::ostringstream and
// read back by a minimal reader written here against the spec (mcap.dev/spec): the record walk,
// LZ4 frame decompression, the Message Index offsets, the Chunk Index, Statistics and Summary
// Offset records, and both CRCs recomputed with a bitwise CRC-32 independent of zlib.
#include <lz4frame.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "mcap_writer.hpp"

using service::replay::detail::McapChannel;
using service::replay::detail::McapSchema;
using service::replay::detail::McapWriter;
using service::replay::detail::McapWriterOptions;

namespace {

const std::string kMagic("\x89MCAP0\r\n", 8);

// CRC-32 (IEEE 802.3, reflected, as zlib's crc32), bit by bit.
uint32_t ref_crc32(std::string_view s) {
  uint32_t crc = 0xFFFFFFFFu;
  for (char ch : s) {
    crc ^= static_cast<uint8_t>(ch);
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

// Little-endian reads over a byte range; a read past its end fails the test.
struct Cursor {
  std::string_view s;
  size_t pos = 0;

  uint64_t le(size_t n) {
    REQUIRE(pos + n <= s.size());
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v |= uint64_t{static_cast<uint8_t>(s[pos + i])} << (8 * i);
    pos += n;
    return v;
  }
  uint8_t u8() { return static_cast<uint8_t>(le(1)); }
  uint16_t u16() { return static_cast<uint16_t>(le(2)); }
  uint32_t u32() { return static_cast<uint32_t>(le(4)); }
  uint64_t u64() { return le(8); }
  std::string_view bytes(size_t n) {
    REQUIRE(pos + n <= s.size());
    std::string_view v = s.substr(pos, n);
    pos += n;
    return v;
  }
  std::string str() { return std::string(bytes(u32())); }
  bool done() const { return pos == s.size(); }
};

struct Record {
  uint8_t op;
  uint64_t offset;        // of the opcode, from the start of the walked range's base
  std::string_view body;  // content
  std::string_view whole;
};

// <op u8><len u64><content>... exactly covering `s`.
std::vector<Record> walk(std::string_view s, uint64_t base) {
  std::vector<Record> out;
  Cursor c{s};
  while (!c.done()) {
    const size_t at = c.pos;
    const uint8_t op = c.u8();
    const uint64_t len = c.u64();
    std::string_view body = c.bytes(len);
    out.push_back(Record{op, base + at, body, s.substr(at, 9 + len)});
  }
  return out;
}

std::string lz4_decompress(std::string_view src, size_t size) {
  LZ4F_dctx* ctx = nullptr;
  REQUIRE_FALSE(LZ4F_isError(LZ4F_createDecompressionContext(&ctx, LZ4F_VERSION)));
  std::string out(size, '\0');
  size_t in_pos = 0, out_pos = 0, hint = 1;
  while (hint != 0 && in_pos < src.size()) {
    size_t dst = size - out_pos, in = src.size() - in_pos;
    hint = LZ4F_decompress(ctx, out.data() + out_pos, &dst, src.data() + in_pos, &in, nullptr);
    if (LZ4F_isError(hint)) break;
    out_pos += dst;
    in_pos += in;
  }
  LZ4F_freeDecompressionContext(ctx);
  REQUIRE_FALSE(LZ4F_isError(hint));
  CHECK(hint == 0);  // the frame ended
  CHECK(in_pos == src.size());
  CHECK(out_pos == size);
  return out;
}

struct Message {
  uint16_t channel;
  uint32_t sequence;
  uint64_t log_time, publish_time;
  std::string data;
};

struct Statistics {
  uint64_t message_count = 0;
  uint16_t schema_count = 0;
  uint32_t channel_count = 0, attachment_count = 0, metadata_count = 0, chunk_count = 0;
  uint64_t start = 0, end = 0;
  std::map<uint16_t, uint64_t> channel_message_counts;
};

struct ChunkSeen {
  uint64_t offset = 0, length = 0, start = 0, end = 0, compressed = 0, uncompressed = 0;
  std::string compression;
  uint32_t crc = 0;                            // uncompressed_crc as written
  uint32_t records_crc = 0;                    // ref_crc32 of the (decompressed) records
  std::map<uint16_t, uint64_t> index_offsets;  // channel -> MessageIndex record offset
  uint64_t index_length = 0;
  size_t messages = 0;
};

struct ParsedFile {
  std::vector<uint8_t> ops;                        // top-level records in file order
  uint32_t data_section_crc = 0, summary_crc = 0;  // as written (read_file checks both)
  std::string profile, library;
  std::vector<Message> messages;
  std::vector<ChunkSeen> chunks;
  std::map<uint16_t, std::string> data_schemas, data_channels;  // id -> whole record
  std::map<uint16_t, std::string> summary_schemas, summary_channels;
  Statistics stats;
  std::vector<std::vector<uint8_t>> chunk_inner_ops;
};

// Checks a definition record against earlier copies (all copies of one id must be identical).
void remember(std::map<uint16_t, std::string>& defs, const Record& r) {
  Cursor c{r.body};
  const uint16_t id = c.u16();
  auto [it, inserted] = defs.emplace(id, std::string(r.whole));
  if (!inserted) CHECK(it->second == r.whole);
}

// Reads the records of one chunk, checks the chunk's own fields and the Message Index records
// that follow it (`indexes`, all of them up to the next non-MessageIndex record).
void read_chunk(ParsedFile& f, const Record& rec, const std::vector<Record>& indexes) {
  Cursor c{rec.body};
  ChunkSeen chunk;
  chunk.offset = rec.offset;
  chunk.length = rec.whole.size();
  chunk.start = c.u64();
  chunk.end = c.u64();
  chunk.uncompressed = c.u64();
  const uint32_t crc = c.u32();
  chunk.compression = c.str();
  chunk.compressed = c.u64();
  std::string_view payload = c.bytes(chunk.compressed);
  CHECK(c.done());
  REQUIRE((chunk.compression == "lz4" || chunk.compression.empty()));
  const std::string records = chunk.compression == "lz4"
                                  ? lz4_decompress(payload, chunk.uncompressed)
                                  : std::string(payload);
  REQUIRE(records.size() == chunk.uncompressed);
  chunk.crc = crc;
  chunk.records_crc = ref_crc32(records);
  CHECK(crc == chunk.records_crc);

  std::map<uint16_t, std::vector<std::pair<uint64_t, uint64_t>>> expected_index;
  std::vector<uint8_t> inner;
  uint64_t lo = UINT64_MAX, hi = 0;
  for (const Record& r : walk(records, 0)) {
    inner.push_back(r.op);
    if (r.op == 0x03) remember(f.data_schemas, r);
    if (r.op == 0x04) {
      remember(f.data_channels, r);
      Cursor cc{r.body};
      cc.u16();
      const uint16_t schema = cc.u16();
      if (schema != 0) CHECK(f.data_schemas.count(schema) == 1);  // schema before channel
    }
    if (r.op != 0x05) continue;
    REQUIRE(r.body.size() >= 22);
    Cursor m{r.body};
    Message msg{m.u16(), m.u32(), m.u64(), m.u64(), std::string(r.body.substr(22))};
    CHECK(f.data_channels.count(msg.channel) == 1);  // channel before its messages
    expected_index[msg.channel].emplace_back(msg.log_time, r.offset);
    lo = std::min(lo, msg.log_time);
    hi = std::max(hi, msg.log_time);
    f.messages.push_back(msg);
    ++chunk.messages;
  }
  CHECK(chunk.messages > 0);
  CHECK(chunk.start == lo);
  CHECK(chunk.end == hi);

  // One Message Index record per channel of the chunk, pointing at its Message records.
  std::map<uint16_t, std::vector<std::pair<uint64_t, uint64_t>>> index;
  for (const Record& r : indexes) {
    Cursor mi{r.body};
    const uint16_t channel = mi.u16();
    const uint32_t n = mi.u32();
    REQUIRE(n % 16 == 0);
    CHECK(index.count(channel) == 0);
    auto& entries = index[channel];
    for (uint32_t i = 0; i < n / 16; ++i) {
      const uint64_t log_time = mi.u64();
      entries.emplace_back(log_time, mi.u64());
    }
    CHECK(mi.done());
    chunk.index_offsets[channel] = r.offset;
    chunk.index_length += r.whole.size();
    for (auto [log_time, offset] : entries) {
      Cursor at{std::string_view(records).substr(offset)};
      CHECK(at.u8() == 0x05);
      at.u64();
      CHECK(at.u16() == channel);
      at.u32();
      CHECK(at.u64() == log_time);
    }
  }
  CHECK(index == expected_index);
  f.chunk_inner_ops.push_back(inner);
  f.chunks.push_back(chunk);
}

Statistics read_statistics(const Record& r) {
  Cursor c{r.body};
  Statistics s;
  s.message_count = c.u64();
  s.schema_count = c.u16();
  s.channel_count = c.u32();
  s.attachment_count = c.u32();
  s.metadata_count = c.u32();
  s.chunk_count = c.u32();
  s.start = c.u64();
  s.end = c.u64();
  const uint32_t n = c.u32();
  REQUIRE(n % 10 == 0);
  for (uint32_t i = 0; i < n / 10; ++i) {
    const uint16_t id = c.u16();
    s.channel_message_counts[id] = c.u64();
  }
  CHECK(c.done());
  return s;
}

void check_chunk_index(const Record& r, const ChunkSeen& chunk) {
  Cursor c{r.body};
  CHECK(c.u64() == chunk.start);
  CHECK(c.u64() == chunk.end);
  CHECK(c.u64() == chunk.offset);
  CHECK(c.u64() == chunk.length);
  const uint32_t n = c.u32();
  REQUIRE(n % 10 == 0);
  std::map<uint16_t, uint64_t> offsets;
  for (uint32_t i = 0; i < n / 10; ++i) {
    const uint16_t id = c.u16();
    offsets[id] = c.u64();
  }
  CHECK(offsets == chunk.index_offsets);
  CHECK(c.u64() == chunk.index_length);
  CHECK(c.str() == chunk.compression);
  CHECK(c.u64() == chunk.compressed);
  CHECK(c.u64() == chunk.uncompressed);
  CHECK(c.done());
}

// Summary records are grouped by opcode; each Summary Offset record describes one group exactly.
void check_summary(ParsedFile& f, const std::vector<Record>& summary,
                   const std::vector<Record>& offsets) {
  struct Group {
    uint64_t start, length;
  };
  std::map<uint8_t, Group> groups;
  uint8_t last = 0;
  size_t chunk_index = 0;
  for (const Record& r : summary) {
    if (r.op != last) {
      CHECK(groups.count(r.op) == 0);  // one run per opcode
      groups[r.op] = Group{r.offset, 0};
      last = r.op;
    }
    groups[r.op].length += r.whole.size();
    if (r.op == 0x03) remember(f.summary_schemas, r);
    if (r.op == 0x04) remember(f.summary_channels, r);
    if (r.op == 0x0B) f.stats = read_statistics(r);
    if (r.op == 0x08) {
      REQUIRE(chunk_index < f.chunks.size());
      check_chunk_index(r, f.chunks[chunk_index++]);
    }
  }
  CHECK(chunk_index == f.chunks.size());
  CHECK(groups.count(0x0B) == 1);
  std::map<uint8_t, Group> described;
  for (const Record& r : offsets) {
    Cursor c{r.body};
    const uint8_t op = c.u8();
    described[op] = Group{c.u64(), c.u64()};
    CHECK(c.done());
  }
  REQUIRE(described.size() == groups.size());
  for (const auto& [op, g] : groups) {
    INFO("group " << int(op));
    REQUIRE(described.count(op) == 1);
    CHECK(described[op].start == g.start);
    CHECK(described[op].length == g.length);
  }
}

// The whole file: magic, Header, data section ending in DataEnd (its CRC), summary, Summary
// Offsets, Footer (its offsets and CRC), magic; every chunk and index on the way.
ParsedFile read_file(const std::string& file) {
  ParsedFile f;
  REQUIRE(file.size() >= 16);
  REQUIRE(file.substr(0, 8) == kMagic);
  REQUIRE(file.substr(file.size() - 8) == kMagic);
  const std::vector<Record> recs = walk(std::string_view(file).substr(8, file.size() - 16), 8);
  for (const Record& r : recs) f.ops.push_back(r.op);
  REQUIRE(recs.size() >= 3);
  REQUIRE(recs.front().op == 0x01);
  Cursor h{recs.front().body};
  f.profile = h.str();
  f.library = h.str();
  CHECK(h.done());

  size_t i = 1;
  for (; i < recs.size() && recs[i].op != 0x0F; ++i) {
    const Record& r = recs[i];
    if (r.op == 0x03) remember(f.data_schemas, r);
    if (r.op == 0x04) remember(f.data_channels, r);
    if (r.op == 0x06) {
      size_t j = i + 1;
      while (j < recs.size() && recs[j].op == 0x07) ++j;
      read_chunk(f, r, std::vector<Record>(recs.begin() + i + 1, recs.begin() + j));
      i = j - 1;
      continue;
    }
    REQUIRE((r.op == 0x03 || r.op == 0x04));  // nothing else in this writer's data section
  }
  REQUIRE(i < recs.size());
  const Record& data_end = recs[i];
  Cursor de{data_end.body};
  f.data_section_crc = de.u32();
  CHECK(f.data_section_crc == ref_crc32(std::string_view(file).substr(0, data_end.offset)));
  CHECK(de.done());

  const Record& footer = recs.back();
  REQUIRE(footer.op == 0x02);
  size_t first_offset = i + 1;
  while (first_offset < recs.size() && recs[first_offset].op != 0x0E) ++first_offset;
  const std::vector<Record> summary(recs.begin() + i + 1, recs.begin() + first_offset);
  const std::vector<Record> offsets(recs.begin() + first_offset, recs.end() - 1);
  for (const Record& r : offsets) CHECK(r.op == 0x0E);
  Cursor ft{footer.body};
  const uint64_t summary_start = ft.u64(), summary_offset_start = ft.u64();
  const uint32_t summary_crc = ft.u32();
  f.summary_crc = summary_crc;
  CHECK(ft.done());
  CHECK(summary_start == (summary.empty() ? 0 : summary.front().offset));
  CHECK(summary_offset_start == (offsets.empty() ? 0 : offsets.front().offset));
  CHECK(summary_crc == ref_crc32(std::string_view(file).substr(
                           summary_start, footer.offset + 1 + 8 + 16 - summary_start)));
  check_summary(f, summary, offsets);
  // The summary repeats exactly the definitions of the data section.
  CHECK(f.summary_schemas == f.data_schemas);
  CHECK(f.summary_channels == f.data_channels);
  return f;
}

std::vector<uint8_t> payload(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i * 7);
  return v;
}

std::string as_string(const std::vector<uint8_t>& v) {
  return std::string(v.begin(), v.end());
}

// Two schemas, three channels (channel 3 without schema), `count` messages round robin.
std::string write_three_channels(McapWriterOptions options, int count,
                                 std::vector<Message>* sent = nullptr) {
  std::ostringstream out;
  McapWriter w(out, options);
  w.add_schema({1, "geo::Pose", "omgidl", "struct Pose { double x; };"});
  w.add_schema({2, "std::Text", "omgidl", "struct Text { string s; };"});
  w.add_channel({1, 1, "/pose", "cdr", {{"offered_qos_profiles", ""}, {"reliability", "1"}}});
  w.add_channel({2, 2, "/text", "cdr", {}});
  w.add_channel({3, 0, "/raw", "cdr", {}});
  for (int k = 0; k < count; ++k) {
    const auto channel = static_cast<uint16_t>(1 + k % 3);
    const uint64_t t = 1'700'000'000'000'000'000ull + 1'000'000ull * k;
    const auto data = payload(20 + k % 5, static_cast<uint8_t>(k));
    w.add_message(channel, static_cast<uint32_t>(k), t, t - 500, data);
    if (sent)
      sent->push_back(Message{channel, static_cast<uint32_t>(k), t, t - 500, as_string(data)});
  }
  auto done = w.finish();
  REQUIRE(done.ok());
  CHECK(w.bytes_written() == out.str().size());
  return out.str();
}

void check_messages(const ParsedFile& f, const std::vector<Message>& sent) {
  REQUIRE(f.messages.size() == sent.size());
  for (size_t k = 0; k < sent.size(); ++k) {
    INFO("message " << k);
    CHECK(f.messages[k].channel == sent[k].channel);
    CHECK(f.messages[k].sequence == sent[k].sequence);
    CHECK(f.messages[k].log_time == sent[k].log_time);
    CHECK(f.messages[k].publish_time == sent[k].publish_time);
    CHECK(f.messages[k].data == sent[k].data);
  }
}

std::string le64(uint64_t v) {
  std::string s;
  for (int i = 0; i < 8; ++i) s.push_back(static_cast<char>(v >> (8 * i)));
  return s;
}

size_t count_of(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t at = hay.find(needle); at != std::string::npos; at = hay.find(needle, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("McapWriter writes the magic, the Header and a Schema record byte for byte", "[mcap]") {
  std::ostringstream out;
  McapWriterOptions options;
  options.lz4 = false;
  options.library = "lib";
  options.profile = "ros2";
  McapWriter w(out, options);
  // The magic and Header are written by the constructor.
  const std::string header = std::string("\x01", 1) + le64(4 + 4 + 4 + 3) +
                             std::string("\x04\0\0\0ros2", 8) + std::string("\x03\0\0\0lib", 7);
  CHECK(out.str() == kMagic + header);
  CHECK(w.bytes_written() == 8 + 9 + 15);

  w.add_schema({1, "a", "b", "xy"});
  w.add_channel({7, 1, "t", "cdr", {{"k", "v"}}});
  const std::vector<uint8_t> data{0xAA, 0xBB};
  w.add_message(7, 5, 100, 90, data);
  REQUIRE(w.finish().ok());
  const std::string file = out.str();

  // Schema: op 0x03, length 18, id 1, name "a", encoding "b", data "xy".
  const std::string schema("\x03\x12\0\0\0\0\0\0\0\x01\0\x01\0\0\0a\x01\0\0\0b\x02\0\0\0xy", 27);
  // Channel: op 0x04, id 7, schema 1, topic "t", encoding "cdr", metadata {"k": "v"}.
  const std::string channel(
      "\x04\x1e\0\0\0\0\0\0\0\x07\0\x01\0\x01\0\0\0t\x03\0\0\0cdr\x0a\0\0\0\x01\0\0\0k\x01\0\0\0v",
      39);
  // Message: op 0x05, length 24, channel 7, sequence 5, log_time 100, publish_time 90, data.
  const std::string message =
      std::string("\x05\x18\0\0\0\0\0\0\0\x07\0\x05\0\0\0", 15) + le64(100) + le64(90) + "\xAA\xBB";
  CHECK(count_of(file, schema) == 2);   // in the (uncompressed) chunk and in the summary
  CHECK(count_of(file, channel) == 2);  // likewise
  CHECK(count_of(file, message) == 1);
  // The uncompressed chunk records are exactly Schema, Channel, Message.
  CHECK(count_of(file, schema + channel + message) == 1);

  const ParsedFile f = read_file(file);
  CHECK(f.profile == "ros2");
  CHECK(f.library == "lib");
  CHECK(f.chunks.size() == 1);
  CHECK(f.chunks[0].compression.empty());
  CHECK(f.chunks[0].compressed == f.chunks[0].uncompressed);
}

TEST_CASE("McapWriter lays out records in the order of the spec", "[mcap]") {
  const std::string file = write_three_channels({}, 9);
  const ParsedFile f = read_file(file);
  // Header, Chunk, 3 MessageIndex, DataEnd, 2 Schema, 3 Channel, Statistics, ChunkIndex,
  // 4 SummaryOffset, Footer.
  const std::vector<uint8_t> expected{0x01, 0x06, 0x07, 0x07, 0x07, 0x0F, 0x03, 0x03, 0x04,
                                      0x04, 0x04, 0x0B, 0x08, 0x0E, 0x0E, 0x0E, 0x0E, 0x02};
  CHECK(f.ops == expected);
  // Inside the chunk: each channel's record (after its schema's) before its first message.
  REQUIRE(f.chunk_inner_ops.size() == 1);
  const std::vector<uint8_t> inner{0x03, 0x04, 0x05, 0x03, 0x04, 0x05, 0x04,
                                   0x05, 0x05, 0x05, 0x05, 0x05, 0x05, 0x05};
  CHECK(f.chunk_inner_ops[0] == inner);
  CHECK(f.library == "pubsub-replay");
  CHECK(f.profile.empty());
}

TEST_CASE("McapWriter LZ4 chunks decompress, with CRCs, indexes and statistics that agree",
          "[mcap]") {
  std::vector<Message> sent;
  const std::string file = write_three_channels({}, 50, &sent);
  const ParsedFile f = read_file(file);
  check_messages(f, sent);
  REQUIRE(f.chunks.size() == 1);
  CHECK(f.chunks[0].compression == "lz4");
  CHECK(f.chunks[0].messages == 50);

  const Statistics& s = f.stats;
  CHECK(s.message_count == 50);
  CHECK(s.schema_count == 2);
  CHECK(s.channel_count == 3);
  CHECK(s.attachment_count == 0);
  CHECK(s.metadata_count == 0);
  CHECK(s.chunk_count == 1);
  CHECK(s.start == sent.front().log_time);
  CHECK(s.end == sent.back().log_time);
  CHECK(s.channel_message_counts == std::map<uint16_t, uint64_t>{{1, 17}, {2, 17}, {3, 16}});
}

TEST_CASE("McapWriter closes a chunk once it reaches chunk_size", "[mcap]") {
  // One channel, 100-byte payloads: a Message record is 9 + 22 + 100 = 131 bytes, and each chunk
  // starts with the Schema and Channel records (together under 131 bytes), so a chunk_size of
  // 8 records closes every chunk after its 8th message.
  std::ostringstream out;
  McapWriterOptions options;
  options.chunk_size = 8 * 131;
  McapWriter w(out, options);
  w.add_schema({4, "S", "omgidl", "struct S { long x; };"});
  w.add_channel({9, 4, "/s", "cdr", {}});
  std::vector<Message> sent;
  for (uint32_t k = 0; k < 24; ++k) {
    const auto data = payload(100, static_cast<uint8_t>(k));
    w.add_message(9, k, 1000 + k, 1000 + k, data);
    sent.push_back(Message{9, k, 1000 + k, 1000 + k, as_string(data)});
  }
  REQUIRE(w.finish().ok());
  const ParsedFile f = read_file(out.str());
  check_messages(f, sent);
  REQUIRE(f.chunks.size() == 3);
  for (size_t c = 0; c < 3; ++c) {
    INFO("chunk " << c);
    CHECK(f.chunks[c].messages == 8);
    CHECK(f.chunks[c].start == 1000 + 8 * c);
    CHECK(f.chunks[c].end == 1000 + 8 * c + 7);
    CHECK(f.chunk_inner_ops[c].size() == 10);  // Schema, Channel, 8 Messages
  }
  CHECK(f.stats.chunk_count == 3);
  CHECK(f.stats.message_count == 24);
  CHECK(f.stats.start == 1000);
  CHECK(f.stats.end == 1023);
  CHECK(std::count(f.ops.begin(), f.ops.end(), uint8_t{0x08}) == 3);  // a ChunkIndex each
}

TEST_CASE("McapWriter without compression writes plain chunks", "[mcap]") {
  McapWriterOptions options;
  options.lz4 = false;
  options.chunk_size = 600;
  std::vector<Message> sent;
  const std::string file = write_three_channels(options, 50, &sent);
  const ParsedFile f = read_file(file);
  check_messages(f, sent);
  REQUIRE(f.chunks.size() > 1);
  size_t total = 0;
  for (const ChunkSeen& c : f.chunks) {
    CHECK(c.compression.empty());
    CHECK(c.compressed == c.uncompressed);
    total += c.messages;
  }
  CHECK(total == 50);
  CHECK(f.stats.chunk_count == f.chunks.size());
}

TEST_CASE("McapWriter writes a valid file without messages", "[mcap]") {
  SECTION("nothing at all") {
    std::ostringstream out;
    McapWriter w(out);
    REQUIRE(w.finish().ok());
    const ParsedFile f = read_file(out.str());
    CHECK(f.ops == std::vector<uint8_t>{0x01, 0x0F, 0x0B, 0x0E, 0x02});
    CHECK(f.stats.message_count == 0);
    CHECK(f.stats.chunk_count == 0);
    CHECK(f.stats.start == 0);
    CHECK(f.stats.end == 0);
    CHECK(f.stats.channel_message_counts.empty());
  }
  SECTION("schemas and channels only: their records go into the data section") {
    std::ostringstream out;
    McapWriter w(out);
    w.add_schema({1, "S", "omgidl", "struct S { long x; };"});
    w.add_channel({1, 1, "/a", "cdr", {}});
    w.add_channel({2, 0, "/b", "cdr", {}});
    REQUIRE(w.finish().ok());
    const ParsedFile f = read_file(out.str());
    CHECK(f.ops == std::vector<uint8_t>{0x01, 0x03, 0x04, 0x04, 0x0F, 0x03, 0x04, 0x04, 0x0B, 0x0E,
                                        0x0E, 0x0E, 0x02});
    CHECK(f.stats.schema_count == 1);
    CHECK(f.stats.channel_count == 2);
    CHECK(f.stats.message_count == 0);
  }
}

TEST_CASE("McapWriter reports a failing stream as an I/O error", "[mcap]") {
  SECTION("failing from the start") {
    std::ostringstream out;
    out.setstate(std::ios::badbit);
    McapWriter w(out);
    w.add_schema({1, "S", "", ""});
    w.add_channel({1, 1, "/a", "cdr", {}});
    w.add_message(1, 0, 1, 1, payload(10, 0));
    auto r = w.finish();
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == common::Errc::kIo);
  }
  SECTION("failing after some chunks") {
    std::ostringstream out;
    McapWriterOptions options;
    options.chunk_size = 100;
    McapWriter w(out, options);
    w.add_channel({1, 0, "/a", "cdr", {}});
    for (uint32_t k = 0; k < 5; ++k) w.add_message(1, k, k, k, payload(200, 0));
    const uint64_t before = w.bytes_written();
    CHECK(before > 0);
    out.setstate(std::ios::badbit);
    for (uint32_t k = 5; k < 10; ++k) w.add_message(1, k, k, k, payload(200, 0));
    auto r = w.finish();
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == common::Errc::kIo);
    CHECK(w.bytes_written() == before);
  }
}

TEST_CASE("McapWriter refuses misuse through finish()", "[mcap]") {
  std::ostringstream out;
  McapWriter w(out);
  SECTION("a message on an unknown channel") {
    w.add_message(3, 0, 1, 1, payload(4, 0));
  }
  SECTION("a channel with an unknown schema") {
    w.add_channel({1, 2, "/a", "cdr", {}});
  }
  SECTION("schema id 0") {
    w.add_schema({0, "S", "", ""});
  }
  SECTION("two different channels under one id") {
    w.add_channel({1, 0, "/a", "cdr", {}});
    w.add_channel({1, 0, "/b", "cdr", {}});
  }
  auto r = w.finish();
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == common::Errc::kInvalidArgument);
}

TEST_CASE("McapWriter accepts an identical re-registration", "[mcap]") {
  std::ostringstream out;
  McapWriter w(out);
  w.add_schema({1, "S", "omgidl", "x"});
  w.add_schema({1, "S", "omgidl", "x"});
  w.add_channel({1, 1, "/a", "cdr", {}});
  w.add_channel({1, 1, "/a", "cdr", {}});
  w.add_message(1, 0, 5, 5, payload(3, 0));
  REQUIRE(w.finish().ok());
  const ParsedFile f = read_file(out.str());
  CHECK(f.stats.schema_count == 1);
  CHECK(f.stats.channel_count == 1);
  CHECK(f.messages.size() == 1);
}

namespace {

// Bytes LZ4 cannot shrink (splitmix64).
std::vector<uint8_t> random_payload(size_t n, uint64_t& state) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; i += 8) {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    for (size_t k = 0; k < 8 && i + k < n; ++k) v[i + k] = static_cast<uint8_t>(z >> (8 * k));
  }
  return v;
}

// One channel without schema, 4096-byte payloads, chunk_size 16 KiB: each chunk holds exactly 4
// messages (4 records of 9 + 22 + 4096 bytes and the Channel record reach 16384 with the 4th).
// `random[c]` says whether chunk c's payloads are random (else a repeating pattern).
std::string write_chunks(const std::vector<bool>& random, std::vector<Message>& sent) {
  std::ostringstream out;
  McapWriterOptions options;
  options.chunk_size = 16 << 10;
  McapWriter w(out, options);
  w.add_channel({1, 0, "/bytes", "cdr", {}});
  uint64_t state = 42;
  uint32_t k = 0;
  for (bool r : random) {
    for (int m = 0; m < 4; ++m, ++k) {
      const auto data = r ? random_payload(4096, state) : payload(4096, static_cast<uint8_t>(k));
      w.add_message(1, k, 5000 + k, 4000 + k, data);
      sent.push_back(Message{1, k, 5000 + k, 4000 + k, as_string(data)});
    }
  }
  REQUIRE(w.finish().ok());
  CHECK(w.bytes_written() == out.str().size());
  return out.str();
}

std::vector<std::string> compressions(const ParsedFile& f) {
  std::vector<std::string> v;
  for (const ChunkSeen& c : f.chunks) v.push_back(c.compression);
  return v;
}

// Every CRC of the file against a bitwise CRC-32 (ref_crc32) computed here: each chunk's over its
// records, DataEnd's over [0, DataEnd), the Footer's over the summary (read_file checks the
// latter two; here also that none is left 0).
void check_crcs(const ParsedFile& f) {
  for (const ChunkSeen& c : f.chunks) {
    INFO("chunk at " << c.offset);
    CHECK(c.crc != 0);
    CHECK(c.crc == c.records_crc);
  }
  CHECK(f.data_section_crc != 0);
  CHECK(f.summary_crc != 0);
}

}  // namespace

TEST_CASE("McapWriter stores chunks LZ4 does not shrink uncompressed, others as lz4", "[mcap]") {
  std::vector<Message> sent;
  SECTION("incompressible: every chunk \"\"") {
    const ParsedFile f = read_file(write_chunks(std::vector<bool>(8, true), sent));
    check_messages(f, sent);
    CHECK(compressions(f) == std::vector<std::string>(8, ""));
    for (const ChunkSeen& c : f.chunks) {
      CHECK(c.messages == 4);
      CHECK(c.compressed == c.uncompressed);
    }
    CHECK(f.stats.chunk_count == 8);
    check_crcs(f);
  }
  SECTION("compressible: every chunk lz4") {
    const ParsedFile f = read_file(write_chunks(std::vector<bool>(8, false), sent));
    check_messages(f, sent);
    CHECK(compressions(f) == std::vector<std::string>(8, "lz4"));
    for (const ChunkSeen& c : f.chunks) {
      CHECK(c.messages == 4);
      CHECK(c.compressed < c.uncompressed / 4);
    }
    CHECK(f.stats.chunk_count == 8);
    check_crcs(f);
  }
  SECTION("random then compressible: LZ4 is tried again after 1, 2, 4 ... chunks") {
    // Chunks 0 and 2 are tried and fail (then 1, then 2 chunks skipped: 1, 3, 4), chunk 5 is
    // tried and compresses, and so does every chunk after it.
    std::vector<bool> random{true, true, true, false, false, false, false, false, false};
    const ParsedFile f = read_file(write_chunks(random, sent));
    check_messages(f, sent);
    CHECK(compressions(f) ==
          std::vector<std::string>{"", "", "", "", "", "lz4", "lz4", "lz4", "lz4"});
    CHECK(f.stats.chunk_count == 9);
    check_crcs(f);
  }
}
