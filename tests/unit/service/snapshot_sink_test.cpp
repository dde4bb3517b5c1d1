// SnapshotSink (pubsub-recorder's snapshot mode) with records appended by two threads while
// snapshots are triggered: the window, extension, continuity between snapshots, pauses (skips)
// that are no loss, definitions made after the trigger, refusals, and close() finishing a
// snapshot early. Also built under ThreadSanitizer (the tsan preset).
#include "snapshot_sink.hpp"

#include <spdlog/sinks/null_sink.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <filesystem>
#include <mutex>
#include <thread>

#include "scratch_dir.hpp"
#include "storage/recording.hpp"

using namespace service;
namespace fs = std::filesystem;

namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

using service_test::TempDir;

// What the sink reported as finished, in order ("segment PATH", "recording DIR"): the hooks
// pubsub-recorder's storage.on_segment_closed runs on.
struct Finished {
  std::mutex mu;
  std::vector<std::string> events;
  void add(const std::string& e) {
    std::lock_guard lk(mu);
    events.push_back(e);
  }
};

std::unique_ptr<SnapshotSink> make_sink(const fs::path& dir, double before_s, double after_s,
                                        Finished* finished = nullptr) {
  SnapshotSinkOptions o;
  if (finished) {
    o.writer.on_segment_finished = [finished](const std::string& p) {
      finished->add("segment " + p);
    };
    o.on_recording_finished = [finished](const fs::path& p) {
      finished->add("recording " + p.string());
    };
  }
  o.dir = dir / "snaps";
  o.before =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(before_s));
  o.after =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(after_s));
  o.max_bytes = 16u << 20;
  o.chunk_max_age = std::chrono::milliseconds(10);
  o.writer.fsync = storage::FsyncPolicy::kNone;
  o.writer.direct_io = false;
  auto log =
      std::make_shared<spdlog::logger>("test", std::make_shared<spdlog::sinks::null_sink_mt>());
  auto s = SnapshotSink::create(o, log);
  REQUIRE(s.ok());
  return std::move(s).value();
}

// A writer appending sequence 1, 2, 3 ... every 200 us (5000/s) with the current time, from its
// own thread (the even ones under a batch's lock, as the recorder appends); `paused` makes it
// skip instead.
struct Feeder {
  SnapshotSink& sink;
  storage::WriterId writer;
  std::atomic<bool> stop{false}, paused{false};
  std::atomic<int64_t> seq{0};
  std::atomic<int> failures{0};  // Catch2's assertions are for the test's thread only
  std::thread t;
  Feeder(SnapshotSink& s, storage::TopicId topic, storage::WriterId w) : sink(s), writer(w) {
    t = std::thread([this, topic] {
      const storage::Bytes payload(64, std::byte{7});
      while (!stop.load()) {
        const int64_t n = seq.load() + 1;
        if (paused.load()) {
          if (!sink.skip_to(writer, n)) ++failures;
        } else {
          storage::RecordMeta m;
          m.topic = topic;
          m.writer = writer;
          m.sequence = n;
          m.reception_ns = m.source_ns = now_ns();
          if (n % 2 == 0) {  // as the recorder's receive threads append: under the ring's lock
            auto lock = sink.lock_appends();
            if (!sink.try_append(lock, m, payload)) ++failures;
          } else if (!sink.try_append(m, payload)) {
            ++failures;
          }
        }
        seq.store(n);
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
    });
  }
  ~Feeder() {
    stop = true;
    t.join();
  }
};

struct Read {
  std::vector<int64_t> seqs[3];  // by writer id
  int64_t first_ns = 0, last_ns = 0;
  std::vector<storage::Mark> marks;
  uint64_t lost = 0;
  uint64_t writers = 0;
};

Read read(const fs::path& dir) {
  auto rec = storage::Recording::open(dir.string());
  REQUIRE(rec.ok());
  Read r;
  auto cur = (*rec)->query();
  REQUIRE(cur.ok());
  while (const storage::RecordView* v = cur->next()) {
    REQUIRE(v->meta.writer < 3);
    r.seqs[v->meta.writer].push_back(v->meta.sequence);
    if (r.first_ns == 0) r.first_ns = v->meta.reception_ns;
    r.last_ns = v->meta.reception_ns;
  }
  r.marks = *(*rec)->marks();
  r.lost = (*rec)->totals()->lost;
  r.writers = (*rec)->totals()->writers;
  return r;
}

bool continuous(const std::vector<int64_t>& s) {
  for (size_t i = 1; i < s.size(); ++i)
    if (s[i] != s[i - 1] + 1) return false;
  return !s.empty();
}

std::vector<fs::path> snapshot_dirs(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir / "snaps")) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("snapshot sink: window, extension, pause and the next snapshot") {
  TempDir tmp;
  Finished finished;
  auto sink = make_sink(tmp.dir(), 0.5, 0.3, &finished);
  const auto topic = *sink->add_topic({"pose", "m::Pose", false, {}, {}});
  const auto w1 = *sink->add_writer({topic, storage::Guid{1}});
  REQUIRE(
      sink->add_type({"m::Pose", storage::TypeSource::kIdl, "struct Pose { long x; };", {}}).ok());
  Feeder f1(*sink, topic, w1);
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  CHECK(sink->status().buffered_seconds >= 0.45);
  CHECK(sink->status().buffered_seconds <= 0.6);

  auto t1 = sink->trigger("brake");
  REQUIRE(t1.ok());
  CHECK_FALSE(t1->extended);
  CHECK(t1->path.filename().string().ends_with("-brake"));
  CHECK(t1->from_ns == t1->trigger_ns - 500'000'000);
  // A writer defined after the trigger is in the snapshot too; a pause is no loss.
  const auto w2 = *sink->add_writer({topic, storage::Guid{2}});
  Feeder f2(*sink, topic, w2);
  f1.paused = true;
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  f1.paused = false;
  CHECK(f1.failures == 0);
  CHECK(f2.failures == 0);
  auto t2 = sink->trigger("");
  REQUIRE(t2.ok());
  CHECK(t2->extended);
  CHECK(t2->path == t1->path);
  CHECK(t2->until_ns == t2->trigger_ns + 300'000'000);
  auto bad = sink->trigger("a b");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message == "a snapshot tag has at most 64 characters of A-Z a-z 0-9 . _ -");
  CHECK_FALSE(sink->split().ok());
  // The window ends 0.3 s after t2, the snapshot 0.2 s later.
  for (int i = 0; i < 100 && sink->status().snapshots < 1; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  REQUIRE(sink->status().snapshots == 1);
  auto t3 = sink->trigger("next");
  REQUIRE(t3.ok());
  CHECK_FALSE(t3->extended);
  CHECK(t3->from_ns == t2->until_ns + 1);  // starts where the first ended
  REQUIRE(sink->close().ok());             // finishes the second early
  CHECK(sink->status().snapshots == 2);

  const auto dirs = snapshot_dirs(tmp.dir());
  REQUIRE(dirs.size() == 2);
  CHECK(dirs[0] == t1->path);
  {
    std::lock_guard lk(finished.mu);
    const std::string s0 = dirs[0].string(), s1 = dirs[1].string();
    CHECK(finished.events ==
          std::vector<std::string>{"segment " + s0 + "/segments/00000001.seg", "recording " + s0,
                                   "segment " + s1 + "/segments/00000001.seg", "recording " + s1});
  }
  const Read a = read(dirs[0]);
  CHECK(a.writers == 2);
  CHECK(a.lost == 0);
  // Writer 1's pause: one jump in its sequence numbers, skipped, not lost.
  int jumps = 0;
  for (size_t i = 1; i < a.seqs[1].size(); ++i) {
    CHECK(a.seqs[1][i] > a.seqs[1][i - 1]);
    jumps += a.seqs[1][i] != a.seqs[1][i - 1] + 1;
  }
  CHECK(jumps == 1);
  CHECK(continuous(a.seqs[2]));
  CHECK(a.seqs[2].front() == 1);
  CHECK(a.first_ns >= t1->from_ns);
  CHECK(a.first_ns <= t1->from_ns + 5'000'000);
  CHECK(a.last_ns <= t2->until_ns);
  CHECK(a.last_ns >= t2->until_ns - 5'000'000);
  REQUIRE(a.marks.size() == 2);
  CHECK(a.marks[0] ==
        storage::Mark{storage::MarkKind::kTag, t1->trigger_ns, "brake", "snapshot trigger"});
  CHECK(a.marks[1] ==
        storage::Mark{storage::MarkKind::kTag, t2->trigger_ns, "snapshot", "snapshot trigger"});
  auto rec = storage::Recording::open(dirs[0].string());
  REQUIRE(rec.ok());
  REQUIRE((*rec)->types()->size() == 1);
  CHECK((*rec)->verify()->ok());

  const Read b = read(dirs[1]);
  REQUIRE(!b.seqs[1].empty());
  CHECK(b.seqs[1].front() == a.seqs[1].back() + 1);  // nothing twice, nothing left out
  CHECK(b.seqs[2].front() == a.seqs[2].back() + 1);
  CHECK(continuous(b.seqs[1]));
  CHECK(b.lost == 0);
  CHECK(b.marks.size() == 1);
  CHECK_FALSE(sink->trigger("late").ok());  // closed
}

TEST_CASE("snapshot sink: a snapshot directory that exists is refused, nothing touched") {
  TempDir tmp;
  auto sink = make_sink(tmp.dir(), 1, 0);
  // The directories of every millisecond of the next 3 s, as snapshot-YYYYMMDD-HHMMSS.mmm-x.
  const int64_t start_ms = now_ns() / 1'000'000;
  for (int64_t ms = start_ms; ms < start_ms + 3000; ++ms) {
    const std::time_t t = static_cast<std::time_t>(ms / 1000);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char b[64];
    const size_t n = std::strftime(b, sizeof b, "snapshot-%Y%m%d-%H%M%S", &tm);
    std::snprintf(b + n, sizeof b - n, ".%03d-x", static_cast<int>(ms % 1000));
    fs::create_directories(tmp.dir() / "snaps" / b);
  }
  auto t = sink->trigger("x");
  REQUIRE_FALSE(t.ok());
  CHECK(t.error().code == common::Errc::kAlreadyExists);
  CHECK(t.error().message.ends_with(" exists already"));
  REQUIRE(sink->close().ok());
  CHECK(sink->status().snapshots == 0);
  for (const auto& d : snapshot_dirs(tmp.dir())) CHECK(fs::is_empty(d));
}

TEST_CASE("snapshot sink: every snapshot starts with durable writers' latched state") {
  TempDir tmp;
  auto sink = make_sink(tmp.dir(), 0.3, 0.1);
  const auto topic = *sink->add_topic({"tf_static", "m::Tf", true, {}, {}});
  const std::string durable =
      R"({"durability":"transient_local","history":{"kind":"keep_last","depth":2}})";
  const auto w1 = *sink->add_writer(
      {topic, storage::Guid{1},
       storage::Bytes(reinterpret_cast<const std::byte*>(durable.data()),
                      reinterpret_cast<const std::byte*>(durable.data()) + durable.size())});
  // Two instances, three samples each, long before any window: 1..6.
  const storage::Bytes payload(16, std::byte{3});
  for (int64_t seq = 1; seq <= 6; ++seq) {
    storage::RecordMeta m;
    m.topic = topic;
    m.writer = w1;
    m.sequence = seq;
    m.reception_ns = m.source_ns = now_ns();
    m.has_key_hash = true;
    m.key_hash[3] = static_cast<uint8_t>(seq % 2);
    REQUIRE(sink->try_append(m, payload).ok());
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(600));   // out of the ring's window
  const auto w2 = *sink->add_writer({topic, storage::Guid{2}});  // volatile: no latched state
  Feeder f2(*sink, topic, w2);
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  auto t1 = sink->trigger("one");
  REQUIRE(t1.ok());
  for (int i = 0; i < 100 && sink->status().snapshots < 1; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  auto t2 = sink->trigger("two");
  REQUIRE(t2.ok());
  REQUIRE(sink->close().ok());
  CHECK(f2.failures == 0);
  const auto dirs = snapshot_dirs(tmp.dir());
  REQUIRE(dirs.size() == 2);
  for (const auto& d : dirs) {
    INFO(d.string());
    const Read r = read(d);
    // The last two of each instance, in order: 3, 4, 5, 6 - superseded ones skipped, not lost.
    CHECK(r.seqs[1] == std::vector<int64_t>{3, 4, 5, 6});
    CHECK(r.lost == 0);
    CHECK(continuous(r.seqs[2]));
    CHECK(r.seqs[2].front() > 1);  // the volatile writer: only its window
  }
}
