// The disk guard (SegmentWriterOptions::min_free_bytes): with an injected free-space function
// that models a small disk on which every segment file takes one unit, whatever its size, the
// tests know exactly when the guard must act. kRotate: which segments go, in which order, with
// which numbers, and the single warning when only the segment being written is left. kStop: the
// error code and message, nothing accepted is lost and the recording is closed cleanly. Also
// the guard at start, a failing free-space function, and the default statvfs measure.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <limits>
#include <map>
#include <mutex>
#include <thread>

#include "test_util.hpp"

using namespace storage;
using storage_test::TempDir;
namespace fs = std::filesystem;

namespace {

constexpr uint64_t kUnit = 1'000'000;         // what one segment file takes on the model disk
constexpr uint64_t kLimit = 10 * kUnit;       // min_free_bytes
constexpr uint32_t kPayloadBytes = 1000;      // about 56 one-record chunks per 64-KiB segment
constexpr uint64_t kSegmentBytes = 64 << 10;  // segment_max_bytes

// A disk of `capacity` bytes: free = capacity - kUnit per segment file present. Also remembers
// each segment file's latest size, to compare with what the guard says it freed.
struct ModelDisk {
  std::atomic<uint64_t> capacity{0};
  std::atomic<uint64_t> calls{0};
  std::mutex mu;
  std::map<uint64_t, uint64_t> sizes;

  Result<uint64_t> free_space(const std::string& dir) {
    uint64_t files = 0;
    for (const auto& e : fs::directory_iterator(dir + "/segments")) {
      ++files;
      std::lock_guard lk(mu);
      sizes[std::stoull(e.path().stem().string())] = e.file_size();
    }
    ++calls;
    const uint64_t used = files * kUnit;
    return capacity >= used ? capacity - used : 0;
  }
  uint64_t size_of(uint64_t segment) {
    std::lock_guard lk(mu);
    return sizes.at(segment);
  }
  // Waits until the writer thread has measured at least `n` more times.
  void wait_calls(uint64_t n) {
    const uint64_t target = calls + n;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (calls < target && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
};

struct Events {
  std::mutex mu;
  std::vector<DiskGuardEvent> list;
  void add(const DiskGuardEvent& e) {
    std::lock_guard lk(mu);
    list.push_back(e);
  }
  std::vector<DiskGuardEvent> get() {
    std::lock_guard lk(mu);
    return list;
  }
  bool wait_for(size_t n) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      if (get().size() >= n) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
  }
};

SegmentWriterOptions guarded(ModelDisk& disk, Events& events, LowSpacePolicy policy) {
  SegmentWriterOptions o;
  o.compression = Compression::kNone;
  o.fsync = FsyncPolicy::kNone;
  o.direct_io = false;
  o.chunk_max_bytes = 16 << 10;
  o.segment_max_bytes = kSegmentBytes;
  o.min_free_bytes = kLimit;
  o.on_low_space = policy;
  o.disk_check_interval = std::chrono::milliseconds(20);
  o.free_space = [&disk](const std::string& dir) { return disk.free_space(dir); };
  o.on_disk_guard = [&events](const DiskGuardEvent& e) { events.add(e); };
  return o;
}

// A writer with one topic and one writer id, appending one record per chunk (append + flush),
// so that every segment roll happens at a known record.
struct OneByOne {
  SegmentWriter& w;
  TopicId topic = 0;
  WriterId id = 0;
  int64_t seq = 0;

  explicit OneByOne(SegmentWriter& writer) : w(writer) {
    topic = *w.add_topic({"guard", "G", false, {}, {}});
    id = *w.add_writer({topic, Guid{}});
  }
  Status append(bool flush = true) {
    ++seq;
    const RecordMeta m{topic, id, seq, seq, seq, 0, false, {}};
    if (auto s = w.append(m, storage_test::make_payload(static_cast<uint64_t>(seq), kPayloadBytes));
        !s)
      return s;
    return flush ? w.flush() : Status{};
  }
  // Appends until `segments` segments were created; false on an error.
  bool until_segments(uint64_t segments) {
    while (w.stats().segments_created < segments) {
      if (!append()) return false;
    }
    return true;
  }
};

std::vector<uint64_t> segment_files(const std::string& dir) {
  std::vector<uint64_t> out;
  for (const auto& e : fs::directory_iterator(dir + "/segments"))
    out.push_back(std::stoull(e.path().stem().string()));
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("disk guard rotate removes the oldest segments, in order, until free space is back") {
  TempDir dir;
  ModelDisk disk;
  Events events;
  // Room for five segments above the limit: the sixth makes the guard remove the first.
  disk.capacity = kLimit + 5 * kUnit + kUnit / 2;
  auto w = SegmentWriter::create(dir.path(), guarded(disk, events, LowSpacePolicy::kRotate));
  REQUIRE(w.ok());
  OneByOne rec(**w);

  REQUIRE(rec.until_segments(5));
  CHECK(events.get().empty());
  REQUIRE(rec.until_segments(8));
  // Each roll past the fifth segment removed exactly the oldest one, at the roll itself.
  auto ev = events.get();
  REQUIRE(ev.size() == 3);
  for (size_t i = 0; i < ev.size(); ++i) {
    INFO("event " << i);
    CHECK(ev[i].kind == DiskGuardEvent::Kind::kRemoved);
    CHECK(ev[i].segment == i + 1);
    CHECK(ev[i].segment_bytes == disk.size_of(i + 1));
    CHECK(ev[i].segment_bytes > kSegmentBytes / 2);
    CHECK(ev[i].free_bytes == kLimit + kUnit / 2);
    CHECK(ev[i].min_free_bytes == kLimit);
  }
  char size[32];
  std::snprintf(size, sizeof size, "%.1f MB", static_cast<double>(ev[0].segment_bytes) / 1e6);
  CHECK(ev[0].message == "removed segment 00000001.seg (" + std::string(size) + ") of " +
                             dir.path() + " for min_free_bytes 10.0 MB: free space now 10.5 MB");
  CHECK(segment_files(dir.path()) == std::vector<uint64_t>{4, 5, 6, 7, 8});
  CHECK((*w)->stats().low_space_removed == 3);
  CHECK((*w)->stats().segments_removed == 3);
  CHECK((*w)->stats().free_bytes == kLimit + kUnit / 2);

  // Another program fills the disk: everything but the segment being written goes, oldest
  // first, at the next periodic check; then one warning, and recording goes on.
  disk.capacity = kLimit + kUnit / 2;
  REQUIRE(events.wait_for(8));
  disk.wait_calls(5);  // more checks, still below the limit: no second warning
  ev = events.get();
  REQUIRE(ev.size() == 8);
  for (size_t i = 3; i < 7; ++i) {
    INFO("event " << i);
    CHECK(ev[i].kind == DiskGuardEvent::Kind::kRemoved);
    CHECK(ev[i].segment == i + 1);  // 4, 5, 6, 7
    CHECK(ev[i].free_bytes == kLimit + kUnit / 2 - (8 - (i + 1)) * kUnit);
  }
  CHECK(ev[7].kind == DiskGuardEvent::Kind::kRefused);
  CHECK(ev[7].segment == 8);
  CHECK(ev[7].free_bytes == kLimit - kUnit / 2);
  CHECK(ev[7].message == "free space 9.5 MB on " + dir.path() +
                             " is below min_free_bytes 10.0 MB and only segment 00000008.seg, "
                             "the one being written, is left: recording goes on");
  CHECK(segment_files(dir.path()) == std::vector<uint64_t>{8});
  REQUIRE(rec.append().ok());  // the recording goes on

  // Space comes back, then goes again: a new warning.
  disk.capacity = 2 * kLimit;
  disk.wait_calls(2);
  disk.capacity = kLimit;
  REQUIRE(events.wait_for(9));
  ev = events.get();
  CHECK(ev[8].kind == DiskGuardEvent::Kind::kRefused);
  CHECK(ev[8].free_bytes == kLimit - kUnit);
  // The next roll makes the old open segment removable: it goes, and the warning is not
  // repeated while free space stays below the limit.
  const int64_t before_roll = rec.seq;
  REQUIRE(rec.until_segments(9));
  disk.wait_calls(3);
  ev = events.get();
  REQUIRE(ev.size() == 10);
  CHECK(ev[9].kind == DiskGuardEvent::Kind::kRemoved);
  CHECK(ev[9].segment == 8);
  CHECK(ev[9].free_bytes == kLimit - kUnit);
  REQUIRE((*w)->close().ok());

  // Index and files agree: the recording verifies and holds exactly segment 9's records (the
  // records appended since the roll to it: here the one that rolled).
  auto r = Recording::open(dir.path());
  REQUIRE(r.ok());
  CHECK((*r)->close_state() == CloseState::kClean);
  auto v = (*r)->verify();
  REQUIRE(v.ok());
  CHECK(v->ok());
  auto segs = (*r)->segments();
  REQUIRE(segs.ok());
  REQUIRE(segs->size() == 1);
  CHECK(segs->front().number == 9);
  const auto got = storage_test::read_all(**r);
  REQUIRE(got.size() == 1);
  CHECK(got.front().meta.sequence == rec.seq);
  CHECK(rec.seq > before_roll);
}

TEST_CASE("disk guard rotate with no segment yet warns once and records on") {
  TempDir dir;
  ModelDisk disk;
  Events events;
  disk.capacity = kLimit - 1;
  auto w = SegmentWriter::create(dir.path(), guarded(disk, events, LowSpacePolicy::kRotate));
  REQUIRE(w.ok());
  REQUIRE(events.wait_for(1));
  auto ev = events.get();
  CHECK(ev[0].kind == DiskGuardEvent::Kind::kRefused);
  CHECK(ev[0].segment == 0);
  CHECK(ev[0].message == "free space 10.0 MB on " + dir.path() +
                             " is below min_free_bytes 10.0 MB and there is no segment to "
                             "remove: recording goes on");
  OneByOne rec(**w);
  REQUIRE(rec.append().ok());
  REQUIRE((*w)->close().ok());
  CHECK(events.get().size() == 1);
  auto r = Recording::open(dir.path());
  REQUIRE(r.ok());
  CHECK(storage_test::read_all(**r).size() == 1);
}

TEST_CASE("disk guard stop ends the recording at the roll with kLowSpace, cleanly") {
  TempDir dir;
  ModelDisk disk;
  Events events;
  disk.capacity = kLimit + 5 * kUnit + kUnit / 2;
  std::atomic<int> errors{0};
  Status reported;
  SegmentWriterOptions o = guarded(disk, events, LowSpacePolicy::kStop);
  o.on_error = [&](const Status& s) {
    reported = s;
    ++errors;
  };
  auto w = SegmentWriter::create(dir.path(), o);
  REQUIRE(w.ok());
  OneByOne rec(**w);
  int64_t accepted = 0;
  Status last;
  for (;;) {
    last = rec.append();
    if (!last) break;
    accepted = rec.seq;
  }
  // The record whose chunk rolled into segment 6 was accepted (append returned ok) and then
  // written; its flush returned the stop.
  const std::string message =
      "free space 9.5 MB on " + dir.path() + " is below min_free_bytes 10.0 MB: recording stopped";
  CHECK(last.error().code == ErrorCode::kLowSpace);
  CHECK(last.error().message == message);
  accepted = rec.seq;
  CHECK((*w)->stats().segments_created == 6);
  auto ev = events.get();
  REQUIRE(ev.size() == 1);
  CHECK(ev[0].kind == DiskGuardEvent::Kind::kStopped);
  CHECK(ev[0].free_bytes == kLimit - kUnit / 2);
  CHECK(ev[0].min_free_bytes == kLimit);
  CHECK(ev[0].message == message);
  // on_error follows on the writer thread once the error is visible to callers.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (errors == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  REQUIRE(errors == 1);
  CHECK(reported.error().code == ErrorCode::kLowSpace);
  CHECK(reported.error().message == message);
  CHECK(reported.error().to_string() == "low disk space: " + message);
  // Nothing more is accepted, and no segment was removed.
  const RecordMeta m{rec.topic, rec.id, rec.seq + 1, 0, 0, 0, false, {}};
  const Bytes p(10);
  CHECK((*w)->try_append(m, p).error().code == ErrorCode::kLowSpace);
  CHECK((*w)->append(m, p).error().code == ErrorCode::kLowSpace);
  CHECK((*w)->add_topic({"late", "L", false, {}, {}}).error().code == ErrorCode::kLowSpace);
  CHECK((*w)->error().error().code == ErrorCode::kLowSpace);
  CHECK(segment_files(dir.path()) == std::vector<uint64_t>{1, 2, 3, 4, 5, 6});
  // close() finishes the recording cleanly and still says why it ended.
  const Status closed = (*w)->close();
  REQUIRE_FALSE(closed.ok());
  CHECK(closed.error().code == ErrorCode::kLowSpace);
  CHECK(errors == 1);

  auto state = Recording::close_state(dir.path());
  REQUIRE(state.ok());
  CHECK(*state == CloseState::kClean);
  auto r = Recording::open(dir.path());
  REQUIRE(r.ok());
  auto v = (*r)->verify();
  REQUIRE(v.ok());
  CHECK(v->ok());
  const auto got = storage_test::read_all(**r);
  REQUIRE(got.size() == static_cast<size_t>(accepted));
  CHECK(got.back().meta.sequence == accepted);
}

TEST_CASE("disk guard stop writes every record accepted before it, open chunk included") {
  TempDir dir;
  ModelDisk disk;
  Events events;
  disk.capacity = 4 * kLimit;
  SegmentWriterOptions o = guarded(disk, events, LowSpacePolicy::kStop);
  o.chunk_max_age = std::chrono::seconds(60);  // the records stay in the open chunk
  o.chunk_max_bytes = 256 << 10;
  o.segment_max_bytes = 1 << 20;
  auto w = SegmentWriter::create(dir.path(), o);
  REQUIRE(w.ok());
  OneByOne rec(**w);
  REQUIRE(rec.append(true).ok());  // a first chunk, written
  for (int i = 0; i < 99; ++i) REQUIRE(rec.append(false).ok());
  CHECK((*w)->stats().records_written == 1);
  // The disk fills: the next periodic check stops the recording.
  disk.capacity = kLimit;
  REQUIRE(events.wait_for(1));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while ((*w)->error().ok() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  CHECK((*w)->error().error().code == ErrorCode::kLowSpace);
  CHECK((*w)->error().error().message == "free space 9.0 MB on " + dir.path() +
                                             " is below min_free_bytes 10.0 MB: recording "
                                             "stopped");
  CHECK(rec.append(false).error().code == ErrorCode::kLowSpace);
  CHECK((*w)->close().error().code == ErrorCode::kLowSpace);
  CHECK((*w)->stats().records_written == 100);

  auto r = Recording::open(dir.path());
  REQUIRE(r.ok());
  CHECK((*r)->close_state() == CloseState::kClean);
  CHECK((*r)->verify()->ok());
  const auto got = storage_test::read_all(**r);
  REQUIRE(got.size() == 100);
  for (size_t i = 0; i < got.size(); ++i)
    CHECK(got[i].meta.sequence == static_cast<int64_t>(i + 1));
}

TEST_CASE("disk guard stop at start: nothing is accepted, the empty recording is clean") {
  TempDir dir;
  ModelDisk disk;
  Events events;
  disk.capacity = kLimit / 2;
  auto w = SegmentWriter::create(dir.path(), guarded(disk, events, LowSpacePolicy::kStop));
  REQUIRE(w.ok());
  REQUIRE(events.wait_for(1));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while ((*w)->error().ok() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  CHECK(events.get()[0].message == "free space 5.0 MB on " + dir.path() +
                                       " is below min_free_bytes 10.0 MB: recording stopped");
  auto t = (*w)->add_topic({"t", "T", false, {}, {}});
  REQUIRE_FALSE(t.ok());
  CHECK(t.error().code == ErrorCode::kLowSpace);
  CHECK((*w)->close().error().code == ErrorCode::kLowSpace);
  CHECK((*w)->stats().segments_created == 0);
  auto state = Recording::close_state(dir.path());
  REQUIRE(state.ok());
  CHECK(*state == CloseState::kClean);
}

TEST_CASE("disk guard: a free-space function that fails fails the writer") {
  TempDir dir;
  Events events;
  std::atomic<int> errors{0};
  SegmentWriterOptions o;
  o.min_free_bytes = 1;
  o.free_space = [](const std::string&) -> Result<uint64_t> {
    return Error{ErrorCode::kIo, "statvfs x: Input/output error"};
  };
  o.on_error = [&](const Status&) { ++errors; };
  auto w = SegmentWriter::create(dir.path(), o);
  REQUIRE(w.ok());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while ((*w)->error().ok() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  CHECK((*w)->error().error().code == ErrorCode::kIo);
  CHECK((*w)->error().error().message == "statvfs x: Input/output error");
  CHECK((*w)->close().error().code == ErrorCode::kIo);
  CHECK(errors == 1);
}

TEST_CASE("disk guard measures with statvfs by default") {
  TempDir dir;
  Events events;
  SECTION("a limit the disk meets: recording as usual") {
    SegmentWriterOptions o;
    o.min_free_bytes = 1;
    o.on_disk_guard = [&events](const DiskGuardEvent& e) { events.add(e); };
    auto w = SegmentWriter::create(dir.path(), o);
    REQUIRE(w.ok());
    OneByOne rec(**w);
    REQUIRE(rec.append().ok());
    CHECK((*w)->stats().free_bytes > 0);
    REQUIRE((*w)->close().ok());
    CHECK(events.get().empty());
  }
  SECTION("a limit no disk meets: stopped at once") {
    SegmentWriterOptions o;
    o.min_free_bytes = std::numeric_limits<uint64_t>::max();
    o.on_disk_guard = [&events](const DiskGuardEvent& e) { events.add(e); };
    auto w = SegmentWriter::create(dir.path(), o);
    REQUIRE(w.ok());
    REQUIRE(events.wait_for(1));
    const auto e = events.get()[0];
    CHECK(e.kind == DiskGuardEvent::Kind::kStopped);
    CHECK(e.free_bytes > 0);
    CHECK(e.message.rfind("free space ", 0) == 0);
    CHECK(e.message.find(" on " + dir.path() +
                         " is below min_free_bytes 18446744073709.6 MB: "
                         "recording stopped") != std::string::npos);
    CHECK((*w)->close().error().code == ErrorCode::kLowSpace);
  }
}
