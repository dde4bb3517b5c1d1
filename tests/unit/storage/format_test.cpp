// Chunk/entry codec: checksums, varints, headers and entries round trip; bad bytes are rejected.
#include <catch2/catch.hpp>
#include <vector>

#include "storage/format.hpp"
#include "test_util.hpp"

using namespace storage;
namespace fmt = storage::format;

TEST_CASE("crc32c matches the Castagnoli check value") {
  const char* s = "123456789";
  CHECK(fmt::crc32c(s, 9) == 0xE3069283u);
  CHECK(fmt::crc32c("", 0) == 0u);
  // Incremental equals one-shot, with a split that leaves odd-sized pieces.
  const Bytes b = storage_test::make_payload(7, 1000);
  const uint32_t whole = fmt::crc32c(b.data(), b.size());
  CHECK(fmt::crc32c(b.data() + 13, b.size() - 13, fmt::crc32c(b.data(), 13)) == whole);
}

// The bit-at-a-time definition (reflected polynomial 0x82F63B78), independent of format.cpp.
static uint32_t crc32c_bitwise(const std::byte* p, size_t n, uint32_t crc) {
  crc = ~crc;
  for (size_t i = 0; i < n; ++i) {
    crc ^= std::to_integer<uint32_t>(p[i]);
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
  }
  return ~crc;
}

TEST_CASE("crc32c of long inputs equals the bitwise definition") {
  // Lengths around 24 KiB and past it, at odd offsets, from 0 and from another CRC (ISA-L's
  // vector code takes blocks and leaves tails).
  const Bytes b = storage_test::make_payload(11, 3 * 3 * 8192 + 77);
  for (size_t off : {size_t{0}, size_t{1}, size_t{7}}) {
    for (size_t n : {size_t{3 * 8192 - 1}, size_t{3 * 8192}, size_t{3 * 8192 + 1},
                     size_t{2 * 3 * 8192 + 13}, b.size() - off}) {
      INFO("offset " << off << " length " << n);
      CHECK(fmt::crc32c(b.data() + off, n) == crc32c_bitwise(b.data() + off, n, 0));
      CHECK(fmt::crc32c(b.data() + off, n, 0x12345678u) ==
            crc32c_bitwise(b.data() + off, n, 0x12345678u));
    }
  }
}

TEST_CASE("data records round trip through the entry encoding with delta state") {
  std::vector<storage_test::Rec> recs;
  uint64_t s = 1;
  for (int i = 0; i < 500; ++i) {
    RecordMeta m;
    m.topic = 1 + static_cast<TopicId>(storage_test::splitmix(s) % 70000);
    m.writer = 1 + static_cast<WriterId>(storage_test::splitmix(s) % 3);
    m.sequence = static_cast<int64_t>(storage_test::splitmix(s));  // full 64-bit range
    m.reception_ns = static_cast<int64_t>(storage_test::splitmix(s));
    m.source_ns = i % 7 == 0 ? INT64_MIN : static_cast<int64_t>(storage_test::splitmix(s));
    m.flags = static_cast<uint32_t>(storage_test::splitmix(s));
    m.has_key_hash = i % 2 == 0;
    for (auto& k : m.key_hash)
      k = m.has_key_hash ? static_cast<uint8_t>(storage_test::splitmix(s)) : 0;
    recs.push_back({m, storage_test::make_payload(i, static_cast<size_t>(i % 300))});
  }
  Bytes raw(600 * (fmt::kMaxRecordOverhead + 300));
  auto* p = reinterpret_cast<uint8_t*>(raw.data());
  fmt::DeltaState st;
  for (auto& r : recs) p = fmt::encode_data_record(p, r.meta, r.payload, st);
  raw.resize(static_cast<size_t>(p - reinterpret_cast<uint8_t*>(raw.data())));
  TopicDef def{"topic/a", "pkg::Type", true, Bytes(3, std::byte{1}), Bytes(70, std::byte{2})};
  fmt::append_topic_entry(raw, 9, def);
  fmt::append_writer_entry(
      raw, 4, WriterDef{9, Guid{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}});
  fmt::append_gap_entry(raw, Gap{4, -5, 1000000000000});

  fmt::EntryDecoder dec(raw);
  fmt::Entry e;
  for (auto& r : recs) {
    auto more = dec.next(e);
    REQUIRE(more.ok());
    REQUIRE(*more);
    REQUIRE(e.kind == fmt::EntryKind::kData);
    REQUIRE(storage_test::same_meta(e.record.meta, r.meta));
    REQUIRE(storage_test::same_payload(e.record.payload, r.payload));
  }
  REQUIRE(*dec.next(e));
  CHECK(e.kind == fmt::EntryKind::kTopic);
  CHECK(e.topic_id == 9);
  CHECK(e.topic.name == "topic/a");
  CHECK(e.topic.type_name == "pkg::Type");
  CHECK(e.topic.keyed);
  CHECK(e.topic.qos == def.qos);
  CHECK(e.topic.type_info == def.type_info);
  REQUIRE(*dec.next(e));
  CHECK(e.kind == fmt::EntryKind::kWriter);
  CHECK(e.writer_id == 4);
  CHECK(e.writer.topic == 9);
  CHECK(e.writer.guid[15] == 16);
  REQUIRE(*dec.next(e));
  CHECK(e.kind == fmt::EntryKind::kGap);
  CHECK(e.gap.writer == 4);
  CHECK(e.gap.first_missing == -5);
  CHECK(e.gap.last_missing == 1000000000000);
  auto end = dec.next(e);
  REQUIRE(end.ok());
  CHECK_FALSE(*end);
}

TEST_CASE("every truncation of an entry stream is rejected, never read past the end") {
  Bytes raw(fmt::kMaxRecordOverhead + 100);
  RecordMeta m{3, 2, 77, 5, 6, 1, true, {}};
  fmt::DeltaState st;
  const Bytes payload = storage_test::make_payload(1, 100);
  auto* end = fmt::encode_data_record(reinterpret_cast<uint8_t*>(raw.data()), m, payload, st);
  raw.resize(static_cast<size_t>(end - reinterpret_cast<uint8_t*>(raw.data())));
  for (size_t n = 1; n < raw.size(); ++n) {
    Bytes cut(raw.begin(), raw.begin() + static_cast<long>(n));
    fmt::EntryDecoder dec(cut);
    fmt::Entry e;
    auto r = dec.next(e);
    INFO("length " << n);
    CHECK_FALSE(r.ok());
  }
}

TEST_CASE("chunk headers round trip and reject flipped bits") {
  fmt::ChunkHeader h;
  h.sequence = 42;
  h.stored_size = 1000;
  h.raw_size = 5000;
  h.record_count = 10;
  h.entry_count = 12;
  h.first_recv_ns = -3;
  h.last_recv_ns = 99;
  h.codec = fmt::Codec::kLz4;
  h.flags = fmt::kChunkFlagRecvSorted;
  h.body_crc = 0xdeadbeef;
  uint8_t b[fmt::kChunkHeaderSize];
  fmt::encode_chunk_header(h, b);
  auto d = fmt::decode_chunk_header(ByteSpan(reinterpret_cast<std::byte*>(b), sizeof b));
  REQUIRE(d.ok());
  CHECK(d->sequence == 42);
  CHECK(d->stored_size == 1000);
  CHECK(d->raw_size == 5000);
  CHECK(d->record_count == 10);
  CHECK(d->entry_count == 12);
  CHECK(d->first_recv_ns == -3);
  CHECK(d->last_recv_ns == 99);
  CHECK(d->codec == fmt::Codec::kLz4);
  CHECK(d->body_crc == 0xdeadbeef);
  for (size_t i = 0; i < sizeof b; ++i) {
    uint8_t c[fmt::kChunkHeaderSize];
    std::memcpy(c, b, sizeof b);
    c[i] ^= 0x10;
    CHECK_FALSE(fmt::decode_chunk_header(ByteSpan(reinterpret_cast<std::byte*>(c), sizeof c)).ok());
  }
  CHECK(fmt::decode_chunk_header(ByteSpan(reinterpret_cast<std::byte*>(b), 63)).error().code ==
        ErrorCode::kTruncated);
}

TEST_CASE("chunk bodies decode only with the right checksum and size") {
  const Bytes raw = storage_test::make_payload(3, 4096, true);
  fmt::ChunkHeader h;
  h.raw_size = h.stored_size = static_cast<uint32_t>(raw.size());
  h.entry_count = 1;
  h.body_crc = fmt::crc32c(raw.data(), raw.size());
  Bytes out;
  REQUIRE(fmt::decode_chunk_body(h, raw, out).ok());
  CHECK(out == raw);
  Bytes bad = raw;
  bad[100] ^= std::byte{1};
  CHECK(fmt::decode_chunk_body(h, bad, out).error().code == ErrorCode::kCorrupt);
  CHECK(fmt::decode_chunk_body(h, ByteSpan(raw).first(10), out).error().code ==
        ErrorCode::kTruncated);
}

TEST_CASE("Lz4Backoff skips 1, 2, 4 ... 64 chunks after failures and none after a success") {
  storage::format::Lz4Backoff b;
  // Tries taken, then chunks skipped, after each failure in a row.
  auto skipped_after_failure = [&b] {
    b.failed();
    int n = 0;
    while (!b.try_next()) ++n;
    return n;
  };
  CHECK(b.try_next());
  CHECK_FALSE(b.skipping());
  std::vector<int> skips;
  for (int i = 0; i < 9; ++i) skips.push_back(skipped_after_failure());
  CHECK(skips == std::vector<int>{1, 2, 4, 8, 16, 32, 64, 64, 64});
  b.succeeded();
  CHECK(skipped_after_failure() == 1);  // the backoff starts again from 1
  b.failed();
  CHECK(b.skipping());
  b.succeeded();  // a success does not cancel skips already decided
  CHECK(b.skipping());
}
