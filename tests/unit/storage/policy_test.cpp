// Writer policies: every fsync policy round-trips, segments roll by duration, retention by age,
// several appending threads plus a polling timer thread, the queue statistics.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <thread>

#include "test_util.hpp"

using namespace storage;
using storage_test::TempDir;

namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

TEST_CASE("SegmentWriter round-trips under every fsync policy and compression setting") {
  const auto policy = GENERATE(FsyncPolicy::kNone, FsyncPolicy::kChunk, FsyncPolicy::kSegment,
                               FsyncPolicy::kInterval);
  const auto compression = GENERATE(Compression::kNone, Compression::kLz4);
  TempDir dir;
  SegmentWriterOptions o;
  o.fsync = policy;
  o.fsync_interval = std::chrono::milliseconds(10);
  o.compression = compression;
  o.chunk_max_bytes = 8 << 10;
  o.segment_max_bytes = 64 << 10;
  std::vector<storage_test::Rec> recs;
  {
    auto w = SegmentWriter::create(dir.path(), o);
    REQUIRE(w.ok());
    const TopicId t = *(*w)->add_topic({"p", "P", false, {}, {}});
    const WriterId id = *(*w)->add_writer({t, Guid{}});
    for (int i = 0; i < 500; ++i) {
      RecordMeta m{t, id, i + 1, i, i, 0, false, {}};
      recs.push_back({m, storage_test::make_payload(i, 100 + i % 300, i % 2 == 0)});
      REQUIRE((*w)->append(m, recs.back().payload).ok());
      if (i == 250) REQUIRE((*w)->flush().ok());
    }
    REQUIRE((*w)->close().ok());
  }
  auto rec = Recording::open(dir.path());
  REQUIRE(rec.ok());
  auto got = storage_test::read_all(**rec);
  REQUIRE(got.size() == recs.size());
  for (size_t i = 0; i < got.size(); ++i) {
    REQUIRE(storage_test::same_meta(got[i].meta, recs[i].meta));
    REQUIRE(got[i].payload == recs[i].payload);
  }
  CHECK((*rec)->segments()->size() > 1);
  CHECK((*rec)->verify()->ok());
}

TEST_CASE("SegmentWriter rolls a segment at max duration and retention removes old segments") {
  TempDir dir;
  SegmentWriterOptions o;
  o.fsync = FsyncPolicy::kNone;
  o.chunk_max_bytes = 4 << 10;
  o.segment_max_duration = std::chrono::milliseconds(50);
  o.retention_max_age = std::chrono::seconds(3600);
  auto w = SegmentWriter::create(dir.path(), o);
  REQUIRE(w.ok());
  auto& wr = **w;
  const TopicId t = *wr.add_topic({"r", "R", false, {}, {}});
  const WriterId id = *wr.add_writer({t, Guid{}});
  const Bytes p(100);
  const int64_t two_hours_ago = now_ns() - 7200'000'000'000;
  // Old data (reception two hours ago) in the first segments.
  for (int i = 0; i < 100; ++i)
    REQUIRE(wr.append({t, id, i + 1, two_hours_ago + i, two_hours_ago + i}, p).ok());
  REQUIRE(wr.flush().ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  for (int i = 100; i < 200; ++i) REQUIRE(wr.append({t, id, i + 1, now_ns(), now_ns()}, p).ok());
  REQUIRE(wr.flush().ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  for (int i = 200; i < 300; ++i) REQUIRE(wr.append({t, id, i + 1, now_ns(), now_ns()}, p).ok());
  REQUIRE(wr.close().ok());
  const WriterStats st = wr.stats();
  CHECK(st.segments_created >= 3);
  CHECK(st.segments_removed >= 1);
  auto rec = Recording::open(dir.path());
  REQUIRE(rec.ok());
  auto got = storage_test::read_all(**rec);
  REQUIRE(got.size() == 200);  // exactly the old records are gone
  CHECK(got.front().meta.sequence == 101);
  CHECK(got.back().meta.sequence == 300);
}

TEST_CASE("SegmentWriter takes appends from several threads while a timer thread polls") {
  TempDir dir;
  SegmentWriterOptions o;
  o.fsync = FsyncPolicy::kNone;
  o.chunk_max_bytes = 16 << 10;
  o.queue_max_bytes = 64 << 10;
  o.chunk_max_age = std::chrono::milliseconds(1);
  auto w = SegmentWriter::create(dir.path(), o);
  REQUIRE(w.ok());
  auto& wr = **w;
  constexpr int kThreads = 3, kPerThread = 20000;
  std::vector<WriterId> ids;
  for (int i = 0; i < kThreads; ++i) {
    const TopicId t = *wr.add_topic({"mt" + std::to_string(i), "M", false, {}, {}});
    ids.push_back(*wr.add_writer({t, Guid{static_cast<uint8_t>(i)}}));
  }
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> max_queued{0};
  std::thread timer([&] {
    while (!stop) {
      (void)wr.poll();
      max_queued = std::max<uint64_t>(max_queued, wr.stats().queue_in_use_bytes);
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  });
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int k = 0; k < kThreads; ++k)
    threads.emplace_back([&, k] {
      for (int i = 0; i < kPerThread; ++i) {
        const int64_t ts = static_cast<int64_t>(i) * 10 + k;
        const RecordMeta m{
            static_cast<TopicId>(k + 1), ids[static_cast<size_t>(k)], i + 1, ts, ts, 0, false, {}};
        const Bytes p =
            storage_test::make_payload(static_cast<uint64_t>(k) * 1000000 + i, 1 + i % 200);
        Status s;
        while (!(s = wr.try_append(m, p)) && s.error().code == ErrorCode::kFull)
          std::this_thread::yield();
        if (!s) ++failures;
      }
    });
  for (auto& t : threads) t.join();
  stop = true;
  timer.join();
  REQUIRE(failures == 0);
  REQUIRE(wr.close().ok());
  CHECK(max_queued <= o.queue_max_bytes);
  CHECK(wr.stats().records_written == kThreads * kPerThread);
  auto rec = Recording::open(dir.path());
  REQUIRE(rec.ok());
  auto got = storage_test::read_all(**rec);
  REQUIRE(got.size() == kThreads * kPerThread);
  std::vector<int64_t> next(kThreads, 1);
  int64_t prev = INT64_MIN;
  for (auto& r : got) {
    const size_t k = r.meta.topic - 1;
    REQUIRE(r.meta.sequence == next[k]++);  // each thread's records in its own order
    REQUIRE(r.meta.reception_ns > prev);    // and globally in reception order
    prev = r.meta.reception_ns;
    REQUIRE(r.payload ==
            storage_test::make_payload(k * 1000000 + static_cast<uint64_t>(r.meta.sequence - 1),
                                       1 + static_cast<size_t>(r.meta.sequence - 1) % 200));
  }
  CHECK((*rec)->gaps()->empty());
}
