// Writer policies: every fsync policy round-trips, segments roll by duration, retention by age,
// several appending threads while another samples the queue statistics; the background
// fdatasync of fsync per chunk (writing goes on, indexing waits, its pacing) and dropping synced
// pages.
#include <fcntl.h>
#include <linux/magic.h>
#include <sqlite3.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

#include "skip.hpp"
#include "test_util.hpp"
#include "thread_names.hpp"

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

TEST_CASE("SegmentWriter takes appends from several threads while another reads its statistics") {
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
  std::thread sampler([&] {  // the queue's high-water mark
    while (!stop) {
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
  sampler.join();
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

namespace {

// Rows in the index's chunks table, read beside the writer (WAL: readers see committed rows).
int64_t indexed_chunks(const std::string& dir) {
  sqlite3* db = nullptr;
  int64_t n = -1;
  if (sqlite3_open_v2((dir + "/index.sqlite3").c_str(), &db, SQLITE_OPEN_READONLY, nullptr) ==
      SQLITE_OK) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, "SELECT COUNT(*) FROM chunks", -1, &st, nullptr) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
      n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
  return n;
}

std::string only_segment(const std::string& dir) {
  std::vector<std::string> files;
  for (auto& e : std::filesystem::directory_iterator(dir + "/segments"))
    files.push_back(e.path().string());
  REQUIRE(files.size() == 1);
  return files[0];
}

// Pages of the file in the page cache, and its size in pages.
std::pair<size_t, size_t> resident_pages(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  struct stat st {};
  REQUIRE(::fstat(fd, &st) == 0);
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t pages = (static_cast<size_t>(st.st_size) + page - 1) / page;
  void* m = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  REQUIRE(m != MAP_FAILED);
  std::vector<unsigned char> v(pages);
  REQUIRE(::mincore(m, static_cast<size_t>(st.st_size), v.data()) == 0);
  ::munmap(m, static_cast<size_t>(st.st_size));
  size_t resident = 0;
  for (unsigned char b : v) resident += b & 1;
  return {resident, pages};
}

}  // namespace

TEST_CASE(
    "With fsync per chunk the writer goes on writing during an fdatasync and indexes after it") {
  TempDir dir;
  SegmentWriterOptions o;
  o.fsync = FsyncPolicy::kChunk;
  o.chunk_max_bytes = 8 << 10;
  o.chunk_max_age = std::chrono::milliseconds(1);
  o.test_delay_per_sync = std::chrono::milliseconds(1500);  // the first fdatasync takes 1.5 s
  auto w = SegmentWriter::create(dir.path(), o);
  REQUIRE(w.ok());
  auto& wr = **w;
  const TopicId t = *wr.add_topic({"bg", "B", false, {}, {}});
  const WriterId id = *wr.add_writer({t, Guid{}});
  std::vector<storage_test::Rec> recs;
  auto put = [&](int from, int to) {
    for (int i = from; i < to; ++i) {
      RecordMeta m{t, id, i + 1, i, i, 0, false, {}};
      recs.push_back({m, storage_test::make_payload(i, 3000)});
      REQUIRE(wr.append(m, recs.back().payload).ok());
    }
  };
  auto wait_written = [&](uint64_t n) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    while (wr.stats().chunks_written < n && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    return wr.stats().chunks_written;
  };
  const auto start = std::chrono::steady_clock::now();
  put(0, 4);  // two chunks of two records (and the segment's definitions chunk)
  const uint64_t first = wait_written(3);
  REQUIRE(first >= 3);
  put(4, 12);  // written while the first fdatasync still sleeps
  const uint64_t second = wait_written(first + 4);
  const int64_t indexed_during_sync = indexed_chunks(dir.path());
  const bool in_time = std::chrono::steady_clock::now() - start < std::chrono::milliseconds(1200);
  CHECK(in_time);  // else the checks below would not be taken during the first fdatasync
  CHECK(second >= first + 4);
  CHECK(indexed_during_sync == 0);  // nothing indexed before its fdatasync has returned
  REQUIRE(wr.flush().ok());
  CHECK(indexed_chunks(dir.path()) == static_cast<int64_t>(wr.stats().chunks_written));
  REQUIRE(wr.close().ok());
  auto rec = Recording::open(dir.path());
  REQUIRE(rec.ok());
  auto got = storage_test::read_all(**rec);
  REQUIRE(got.size() == recs.size());
  for (size_t i = 0; i < got.size(); ++i) REQUIRE(got[i].payload == recs[i].payload);
  CHECK((*rec)->verify()->ok());
}

namespace {

// A writer with fsync per chunk, chunks of 8 KiB closed 1 ms after their first record and the
// given min_sync_spacing, one topic; put(n) appends n more records of 3000 B.
struct ChunkSyncWriter {
  ChunkSyncWriter(const std::string& topic, std::chrono::milliseconds spacing) {
    SegmentWriterOptions o;
    o.fsync = FsyncPolicy::kChunk;
    o.chunk_max_bytes = 8 << 10;
    o.chunk_max_age = std::chrono::milliseconds(1);
    o.min_sync_spacing = spacing;
    auto created = SegmentWriter::create(dir.path(), o);
    REQUIRE(created.ok());
    w = std::move(*created);
    t = *w->add_topic({topic, "T", false, {}, {}});
    id = *w->add_writer({t, Guid{}});
  }
  void put(int n) {
    for (int k = 0; k < n; ++k, ++seq) {
      RecordMeta m{t, id, seq + 1, seq, seq, 0, false, {}};
      REQUIRE(w->append(m, storage_test::make_payload(static_cast<uint64_t>(seq), 3000)).ok());
    }
  }
  // Closes the writer; the recording holds every record put, and verifies.
  void close_and_check() {
    REQUIRE(w->close().ok());
    auto rec = Recording::open(dir.path());
    REQUIRE(rec.ok());
    CHECK(storage_test::read_all(**rec).size() == static_cast<size_t>(seq));
    CHECK((*rec)->verify()->ok());
  }
  TempDir dir;
  std::unique_ptr<SegmentWriter> w;
  TopicId t = 0;
  WriterId id = 0;
  int64_t seq = 0;
};

}  // namespace

TEST_CASE("SegmentWriter with fsync per chunk starts its fdatasyncs min_sync_spacing apart") {
  const bool paced = GENERATE(true, false);
  ChunkSyncWriter cw("pace", std::chrono::milliseconds(paced ? 400 : 0));
  // 1.1 s of chunks of two 3000-B records, one chunk every 2 ms or so.
  const auto start = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(1100)) {
    cw.put(2);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  const WriterStats st = cw.w->stats();
  INFO(st.chunks_written << " chunks written, " << st.syncs << " fdatasyncs");
  CHECK(st.chunks_written > 100);
  if (paced)
    CHECK(st.syncs <= 4);  // begun at about 0, 400 and 800 ms (and 1200 if it was slow)
  else
    CHECK(st.syncs > 8);  // one as soon as the one before has returned
  cw.close_and_check();
}

TEST_CASE("SegmentWriter's flush() and close() do not wait for min_sync_spacing") {
  ChunkSyncWriter cw("hurry", std::chrono::seconds(60));
  SegmentWriter& wr = *cw.w;
  // The first sync starts at once; the chunks after it wait for the next, 60 s later.
  cw.put(4);
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (wr.stats().syncs < 1 && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  REQUIRE(wr.stats().syncs == 1);
  cw.put(8);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK(wr.stats().syncs == 1);
  CHECK(indexed_chunks(cw.dir.path()) < static_cast<int64_t>(wr.stats().chunks_written));
  const auto f0 = std::chrono::steady_clock::now();
  REQUIRE(wr.flush().ok());
  CHECK(std::chrono::steady_clock::now() - f0 < std::chrono::seconds(10));
  CHECK(indexed_chunks(cw.dir.path()) == static_cast<int64_t>(wr.stats().chunks_written));
  cw.put(4);
  const auto c0 = std::chrono::steady_clock::now();
  REQUIRE(wr.close().ok());
  CHECK(std::chrono::steady_clock::now() - c0 < std::chrono::seconds(10));
  auto rec = Recording::open(cw.dir.path());
  REQUIRE(rec.ok());
  CHECK(storage_test::read_all(**rec).size() == static_cast<size_t>(cw.seq));
}

TEST_CASE("Synced segment data leaves the page cache with drop_synced_pages and stays without") {
  // On a disk: tmpfs pages cannot be dropped. When the temporary directory is tmpfs, the
  // working directory (ctest's: the build tree) is tried before the test is skipped.
  auto on_tmpfs = [](const std::string& path) {
    struct statfs fs {};
    REQUIRE(::statfs(path.c_str(), &fs) == 0);
    return fs.f_type == TMPFS_MAGIC;
  };
  const bool tmp_is_tmpfs = on_tmpfs(std::filesystem::temp_directory_path().string());
  TempDir dir("storage", tmp_is_tmpfs ? std::filesystem::current_path()
                                      : std::filesystem::temp_directory_path());
  REQUIRE_FALSE(dir.path().empty());
  if (on_tmpfs(dir.path())) {
    PUBSUB_SKIP(
        "the temporary and working directories are on tmpfs, whose pages cannot be "
        "dropped");
  }
  const bool drop = GENERATE(true, false);
  SegmentWriterOptions o;
  o.fsync = FsyncPolicy::kChunk;
  o.compression = Compression::kNone;
  o.chunk_max_bytes = 256 << 10;
  o.drop_synced_pages = drop;
  o.direct_io = false;  // the page cache is what this test looks at
  auto w = SegmentWriter::create(dir.path(), o);
  REQUIRE(w.ok());
  const TopicId t = *(*w)->add_topic({"pc", "P", false, {}, {}});
  const WriterId id = *(*w)->add_writer({t, Guid{}});
  for (int i = 0; i < 64; ++i) {  // 2 MiB
    RecordMeta m{t, id, i + 1, i, i, 0, false, {}};
    REQUIRE((*w)->append(m, storage_test::make_payload(i, 32 << 10)).ok());
  }
  REQUIRE((*w)->flush().ok());
  const auto [resident, pages] = resident_pages(only_segment(dir.path()));
  INFO("drop " << drop << ": " << resident << " of " << pages << " pages resident");
  REQUIRE(pages > 500);
  if (drop) {
    CHECK(resident <= 1);  // at most the partial page at the end
  } else {
    CHECK(resident == pages);
  }
  REQUIRE((*w)->close().ok());
}

TEST_CASE("SegmentWriter's lz4_acceleration reaches LZ4: 1 stores small random samples smaller") {
  CHECK(SegmentWriterOptions{}.lz4_acceleration == 16);
  // Records like the recorder's of 32-B random samples: a header that repeats, a sequence
  // number, random bytes. Compressed at acceleration 1, a chunk saves more than the 2 % that keeps
  // LZ4 on; at 65537 LZ4 finds next to no match and the chunks are stored raw.
  auto store = [](int acceleration, std::vector<storage_test::Rec>& recs) {
    TempDir dir;
    SegmentWriterOptions o;
    o.fsync = FsyncPolicy::kNone;
    o.lz4_acceleration = acceleration;
    o.chunk_max_bytes = 256 << 10;
    uint64_t file_bytes = 0;
    {
      auto w = SegmentWriter::create(dir.path(), o);
      REQUIRE(w.ok());
      const TopicId t = *(*w)->add_topic({"p", "P", false, {}, {}});
      const WriterId id = *(*w)->add_writer({t, Guid{}});
      for (int i = 0; i < 20000; ++i) {
        RecordMeta m{t, id, i + 1, 1000 + i * 200, 900 + i * 200, 0, false, {}};
        Bytes p = storage_test::make_payload(i, 32);
        const uint8_t head[8] = {0, 1, 0, 0, uint8_t(i), uint8_t(i >> 8), 0, 0};
        std::memcpy(p.data(), head, sizeof head);
        if (acceleration == 1) recs.push_back({m, p});
        REQUIRE((*w)->append(m, p).ok());
      }
      REQUIRE((*w)->close().ok());
      file_bytes = (*w)->stats().file_bytes;
    }
    auto rec = Recording::open(dir.path());
    REQUIRE(rec.ok());
    auto got = storage_test::read_all(**rec);
    REQUIRE(got.size() == 20000);
    for (size_t i = 0; i < recs.size(); ++i) REQUIRE(got[i].payload == recs[i].payload);
    CHECK((*rec)->verify()->ok());
    return file_bytes;
  };
  std::vector<storage_test::Rec> recs;
  const uint64_t smallest = store(1, recs);
  const uint64_t raw = store(65537, recs);
  INFO("file bytes at acceleration 1: " << smallest << ", at 65537: " << raw);
  CHECK(smallest < raw * 9 / 10);
  CHECK(raw > 20000u * (32 + 8));  // stored raw: every payload and its record header
}

TEST_CASE("SegmentWriter's threads carry names (top -H, ps -L, perf)") {
  const auto names = test_support::thread_names;
  TempDir dir;
  SegmentWriterOptions o;
  o.fsync = FsyncPolicy::kChunk;  // the background fdatasync thread too
  auto w = SegmentWriter::create(dir.path(), o);
  REQUIRE(w.ok());
  const auto running = names();
  CHECK(running.count("storage-writer") == 1);
  CHECK(running.count("storage-sync") == 1);
  REQUIRE((*w)->close().ok());
  w->reset();
  CHECK(names().count("storage-writer") == 0);
}
