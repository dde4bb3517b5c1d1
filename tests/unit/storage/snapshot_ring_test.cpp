// SnapshotRing: the in-memory ring of compressed chunks behind pubsub-recorder's snapshot mode.
#include "storage/snapshot_ring.hpp"

#include <atomic>
#include <catch2/catch.hpp>
#include <random>
#include <thread>

using namespace storage;

namespace {

constexpr int64_t kSecond = 1'000'000'000;

RecordMeta meta(int64_t seq, int64_t recv_ns, WriterId w = 1) {
  RecordMeta m;
  m.topic = 1;
  m.writer = w;
  m.sequence = seq;
  m.reception_ns = recv_ns;
  m.source_ns = recv_ns - 5;
  m.flags = static_cast<uint32_t>(seq % 3);
  return m;
}

Bytes payload(size_t n, uint8_t fill) {
  return Bytes(n, std::byte{fill});
}

Bytes random_payload(size_t n, std::mt19937& rng) {
  Bytes b(n);
  for (auto& x : b) x = std::byte(static_cast<uint8_t>(rng()));
  return b;
}

struct Decoded {
  std::vector<RecordMeta> records;
  std::vector<Bytes> payloads;
  std::vector<Mark> marks;
  std::vector<Gap> skips;
};

Decoded decode_all(const std::vector<std::shared_ptr<const SnapshotChunk>>& chunks) {
  Decoded d;
  Bytes scratch;
  for (const auto& c : chunks) {
    auto s = SnapshotRing::for_each_entry(*c, scratch, [&](const format::Entry& e) -> Status {
      if (e.kind == format::EntryKind::kData) {
        d.records.push_back(e.record.meta);
        d.payloads.emplace_back(e.record.payload.begin(), e.record.payload.end());
      } else if (e.kind == format::EntryKind::kMark) {
        d.marks.push_back(e.mark);
      } else if (e.kind == format::EntryKind::kGap) {
        d.skips.push_back(e.gap);
      }
      return {};
    });
    REQUIRE(s.ok());
  }
  return d;
}

}  // namespace

TEST_CASE("snapshot ring: records, marks and skips come back in order, exactly") {
  SnapshotRing ring;
  REQUIRE(ring.append(meta(1, 10 * kSecond), payload(40, 0xab)).ok());
  ring.add_mark({MarkKind::kTag, 10 * kSecond + 1, "brake", "hard"});
  ring.add_skip(1, 7, 10 * kSecond + 2);
  RecordMeta keyed = meta(8, 10 * kSecond + 3);
  keyed.has_key_hash = true;
  keyed.key_hash[0] = 0x42;
  REQUIRE(ring.append(keyed, payload(3, 0x01)).ok());
  CHECK(ring.chunks_from(1).empty());  // nothing sealed yet
  ring.seal();
  auto chunks = ring.chunks_from(1);
  REQUIRE(chunks.size() == 1);
  CHECK(chunks[0]->index == 1);
  CHECK(chunks[0]->records == 2);
  CHECK(chunks[0]->entries == 4);
  CHECK(chunks[0]->first_ns == 10 * kSecond);
  CHECK(chunks[0]->last_ns == 10 * kSecond + 3);
  const Decoded d = decode_all(chunks);
  REQUIRE(d.records.size() == 2);
  CHECK(d.records[0].sequence == 1);
  CHECK(d.records[0].reception_ns == 10 * kSecond);
  CHECK(d.records[0].source_ns == 10 * kSecond - 5);
  CHECK(d.records[0].flags == 1);
  CHECK(d.payloads[0] == payload(40, 0xab));
  CHECK(d.records[1].sequence == 8);
  CHECK(d.records[1].has_key_hash);
  CHECK(d.records[1].key_hash[0] == 0x42);
  CHECK(d.payloads[1] == payload(3, 0x01));
  REQUIRE(d.marks.size() == 1);
  CHECK(d.marks[0] == Mark{MarkKind::kTag, 10 * kSecond + 1, "brake", "hard"});
  REQUIRE(d.skips.size() == 1);
  CHECK(d.skips[0].writer == 1);
  CHECK(d.skips[0].last_missing == 7);
  CHECK(ring.next_index() == 2);
  ring.seal();  // empty: no chunk
  CHECK(ring.next_index() == 2);
}

TEST_CASE("snapshot ring: chunks seal at chunk_max_bytes, LZ4 only where it pays") {
  SnapshotRingOptions o;
  o.chunk_max_bytes = 4096;
  SnapshotRing ring(o);
  std::mt19937 rng(7);
  for (int i = 1; i <= 100; ++i)
    REQUIRE(ring.append(meta(i, i * 1000), i <= 50 ? payload(200, 0x11) : random_payload(200, rng))
                .ok());
  ring.seal();
  auto chunks = ring.chunks_from(1);
  REQUIRE(chunks.size() >= 5);
  uint64_t records = 0;
  for (size_t i = 0; i < chunks.size(); ++i) {
    CHECK(chunks[i]->index == i + 1);
    CHECK(chunks[i]->raw_size <= 4096);
    records += chunks[i]->records;
  }
  CHECK(records == 100);
  CHECK(chunks.front()->lz4);       // repeated bytes
  CHECK_FALSE(chunks.back()->lz4);  // random bytes
  CHECK(chunks.front()->stored.size() < chunks.front()->raw_size / 4);
  const Decoded d = decode_all(chunks);
  REQUIRE(d.records.size() == 100);
  for (int i = 0; i < 100; ++i) {
    CHECK(d.records[static_cast<size_t>(i)].sequence == i + 1);
    CHECK(d.records[static_cast<size_t>(i)].reception_ns == (i + 1) * 1000);
  }
  // A chunk taken from the middle on.
  uint64_t missed = 9;
  auto tail = ring.chunks_from(3, &missed);
  CHECK(missed == 0);
  REQUIRE(tail.size() == chunks.size() - 2);
  CHECK(tail.front()->index == 3);
  CHECK(ring.chunks_from(ring.next_index()).empty());
}

TEST_CASE("snapshot ring: max_bytes evicts the oldest chunks first, counted") {
  SnapshotRingOptions o;
  o.chunk_max_bytes = 1100;
  o.max_bytes = 5000;
  o.compress = false;
  SnapshotRing ring(o);
  // Each record ~1030 bytes encoded: one per chunk.
  for (int i = 1; i <= 20; ++i) REQUIRE(ring.append(meta(i, i * kSecond), payload(1000, 1)).ok());
  const auto s = ring.stats();
  CHECK(s.memory_bytes <= 5000);
  CHECK(s.evicted_for_memory_records == s.evicted_for_memory_chunks);
  CHECK(s.evicted_for_memory_records + s.records == 20);
  CHECK(s.evicted_for_memory_records >= 15);
  CHECK(s.newest_ns == 20 * kSecond);
  uint64_t missed = 0;
  auto chunks = ring.chunks_from(1, &missed);
  CHECK(missed == s.evicted_for_memory_chunks);
  const Decoded d = decode_all(chunks);
  REQUIRE(!d.records.empty());
  CHECK(d.records.front().sequence == static_cast<int64_t>(s.evicted_for_memory_records) + 1);
  CHECK(d.records.back().sequence == 19);  // 20 is in the open chunk
  // A record larger than max_bytes still gets in (alone).
  REQUIRE(ring.append(meta(21, 21 * kSecond), payload(8000, 2)).ok());
  ring.seal();
  CHECK(ring.stats().chunks == 1);
  CHECK(ring.chunks_from(1).back()->records == 1);
}

TEST_CASE("snapshot ring: poll() seals old chunks and evicts those older than keep") {
  SnapshotRingOptions o;
  o.keep = std::chrono::seconds(10);
  o.chunk_max_age = std::chrono::milliseconds(0);
  SnapshotRing ring(o);
  for (int i = 1; i <= 30; ++i) {
    REQUIRE(ring.append(meta(i, i * kSecond), payload(10, 3)).ok());
    ring.poll(i * kSecond);  // seals each record into a chunk of its own
  }
  // At t = 30 s, chunks whose newest record is before 20 s are gone: records 1..19.
  auto s = ring.stats();
  CHECK(s.evicted_for_age_chunks == 19);
  CHECK(s.evicted_for_age_records == 19);
  CHECK(s.evicted_for_memory_chunks == 0);
  CHECK(s.records == 11);
  CHECK(s.chunks == 11);
  CHECK(s.oldest_ns == 20 * kSecond);
  CHECK(s.newest_ns == 30 * kSecond);
  ring.poll(45 * kSecond);
  s = ring.stats();
  CHECK(s.chunks == 0);
  CHECK(s.records == 0);
  CHECK(s.memory_bytes == (1u << 20));  // the open chunk's buffer, reserved at chunk_max_bytes
  CHECK(s.oldest_ns == 0);
}

TEST_CASE("snapshot ring: a record without reception time is refused") {
  SnapshotRing ring;
  auto s = ring.append(meta(1, 0), payload(4, 0));
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().code == ErrorCode::kInvalidArgument);
  CHECK(ring.stats().records == 0);
}

TEST_CASE("snapshot ring: recycled and reused chunk buffers hold exactly their own entries") {
  // Raw chunks evicted for memory hand their buffers to the next open chunks, and after an LZ4
  // chunk the open buffer is reused as it is: no chunk may carry bytes of an earlier one.
  SnapshotRingOptions o;
  o.chunk_max_bytes = 4096;
  o.max_bytes = 6 * 4096;
  SnapshotRing ring(o);
  std::mt19937 rng(11);
  std::vector<Bytes> sent;
  uint64_t missed_before = 0;
  for (int i = 1; i <= 400; ++i) {
    // Runs of 40: compressible, then random (a different size each time), with a mark in each.
    const size_t n = 50 + static_cast<size_t>(rng() % 700);
    sent.push_back((i / 40) % 2 == 0 ? payload(n, static_cast<uint8_t>(i))
                                     : random_payload(n, rng));
    REQUIRE(ring.append(meta(i, i * 1000), sent.back()).ok());
    if (i % 40 == 20) ring.add_mark({MarkKind::kTag, i * 1000 + 1, "m" + std::to_string(i), ""});
  }
  ring.seal();
  auto chunks = ring.chunks_from(1, &missed_before);
  REQUIRE(missed_before > 0);  // buffers of evicted raw chunks were recycled
  bool lz4 = false, raw = false;
  uint64_t raw_bytes = 0;
  for (const auto& c : chunks) {
    lz4 = lz4 || c->lz4;
    raw = raw || !c->lz4;
    if (!c->lz4) CHECK(c->stored.size() == c->raw_size);
    raw_bytes += c->raw_size;
  }
  CHECK(lz4);
  CHECK(raw);
  CHECK(ring.stats().raw_bytes == raw_bytes);
  const Decoded d = decode_all(chunks);
  REQUIRE(!d.records.empty());
  const auto first = static_cast<size_t>(d.records.front().sequence);
  REQUIRE(d.records.back().sequence == 400);
  REQUIRE(d.records.size() == 400 - first + 1);
  for (size_t k = 0; k < d.records.size(); ++k) {
    CHECK(d.records[k].sequence == static_cast<int64_t>(first + k));
    CHECK(d.payloads[k] == sent[first + k - 1]);
  }
  for (const Mark& m : d.marks) CHECK(m.name == "m" + std::to_string((m.time_ns - 1) / 1000));
}

TEST_CASE("snapshot ring: a batch of appends under one lock, other threads wait for its end") {
  SnapshotRing ring;
  std::atomic<bool> marked{false};
  std::thread other;
  {
    SnapshotRing::AppendLock lock = ring.lock_appends();
    REQUIRE(ring.append(lock, meta(1, 10 * kSecond), payload(20, 1)).ok());
    other = std::thread([&] {
      ring.add_mark({MarkKind::kTag, 10 * kSecond + 5, "during", ""});
      marked = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    CHECK_FALSE(marked.load());  // held by the batch
    REQUIRE(ring.append(lock, meta(2, 10 * kSecond + 1), payload(30, 2)).ok());
    auto refused = ring.append(lock, meta(3, 0), payload(1, 3));
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().code == ErrorCode::kInvalidArgument);
  }
  other.join();
  CHECK(marked.load());
  REQUIRE(ring.append(meta(4, 10 * kSecond + 6), payload(5, 4)).ok());
  ring.seal();
  const Decoded d = decode_all(ring.chunks_from(1));
  REQUIRE(d.records.size() == 3);
  CHECK(d.records[0].sequence == 1);
  CHECK(d.records[1].sequence == 2);
  CHECK(d.records[2].sequence == 4);
  CHECK(d.payloads[1] == payload(30, 2));
  REQUIRE(d.marks.size() == 1);
  CHECK(d.marks[0].name == "during");
  // The mark went in after the batch: record 1, record 2, the mark, record 4.
  std::vector<int64_t> order;  // sequence numbers, -1 for the mark
  Bytes scratch;
  for (const auto& c : ring.chunks_from(1)) {
    REQUIRE(SnapshotRing::for_each_entry(*c, scratch, [&](const format::Entry& e) -> Status {
              order.push_back(e.kind == format::EntryKind::kData ? e.record.meta.sequence : -1);
              return {};
            }).ok());
  }
  CHECK(order == std::vector<int64_t>{1, 2, -1, 4});
}

TEST_CASE(
    "snapshot ring: large records come back exactly, compressed, raw and copied around the cache") {
  // From 24 KiB a record bound for a chunk kept raw (LZ4 off, or backing off after random chunks)
  // is copied with streaming stores; one bound for a chunk LZ4 will try is copied as usual.
  for (const bool compress : {true, false}) {
    SnapshotRingOptions o;
    o.compress = compress;
    o.chunk_max_bytes = 256 * 1024;
    SnapshotRing ring(o);
    std::mt19937 rng(compress ? 21 : 22);
    std::vector<Bytes> sent;
    for (int i = 1; i <= 120; ++i) {
      const size_t n = 24 * 1024 - 8 + static_cast<size_t>(rng() % (40 * 1024));
      // Random records, with a run of compressible ones in the middle (LZ4 pays again there).
      sent.push_back(i > 50 && i <= 70 ? payload(n, static_cast<uint8_t>(i))
                                       : random_payload(n, rng));
      REQUIRE(ring.append(meta(i, i * 1000), sent.back()).ok());
    }
    ring.seal();
    const auto chunks = ring.chunks_from(1);
    size_t lz4 = 0;
    for (const auto& c : chunks) lz4 += c->lz4 ? 1 : 0;
    CHECK((compress ? lz4 > 0 : lz4 == 0));
    CHECK(lz4 < chunks.size());
    const Decoded d = decode_all(chunks);
    REQUIRE(d.records.size() == 120);
    for (size_t k = 0; k < 120; ++k) {
      CHECK(d.records[k].sequence == static_cast<int64_t>(k + 1));
      CHECK((d.payloads[k] == sent[k]));  // not printed when it fails: tens of KiB each
    }
  }
}
