// The writer lock: a recording being written is live - recover() and reindex() refuse it without
// touching a file, readers see who writes it - and a writer that dies leaves only a stale file
// that the next holder takes over.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <fstream>
#include <map>

#include "storage/writer_lock.hpp"
#include "test_util.hpp"

using namespace storage;
using storage_test::TempDir;
namespace fs = std::filesystem;

namespace {

std::string self_program() {
  return program_invocation_short_name;
}

std::string pid_text(pid_t pid) {
  return self_program() + " (pid " + std::to_string(pid) + ")";
}

// A writer with one topic and `n` records, flushed to disk (not closed).
std::unique_ptr<SegmentWriter> open_writer(const std::string& dir, int n) {
  SegmentWriterOptions o;
  o.chunk_max_bytes = 4096;
  o.fsync = FsyncPolicy::kNone;
  auto w = SegmentWriter::create(dir, o);
  REQUIRE(w);
  auto t = (*w)->add_topic({"t", "T", false, {}, {}});
  REQUIRE(t);
  auto id = (*w)->add_writer({*t, Guid{1}});
  REQUIRE(id);
  for (int i = 1; i <= n; ++i) {
    RecordMeta m;
    m.topic = *t;
    m.writer = *id;
    m.sequence = i;
    m.reception_ns = 1'000'000 + i;
    REQUIRE((*w)->append(m, storage_test::make_payload(static_cast<uint64_t>(i), 300)));
  }
  REQUIRE((*w)->flush());
  return std::move(*w);
}

// Every file of the recording with its bytes.
std::map<std::string, std::string> snapshot_files(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    std::ifstream in(e.path(), std::ios::binary);
    files[fs::relative(e.path(), dir).string()] =
        std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  return files;
}

}  // namespace

TEST_CASE("A recording being written is live: recover and reindex refuse it, readers see it") {
  TempDir tmp;
  const std::string dir = tmp.sub("rec");
  auto w = open_writer(dir, 50);
  REQUIRE(fs::exists(WriterLock::path(dir)));

  const auto before = snapshot_files(dir);
  auto rec = Recording::recover(dir);
  REQUIRE_FALSE(rec);
  CHECK(rec.error().code == ErrorCode::kBusy);
  CHECK(rec.error().message == dir + " is being written by " + pid_text(::getpid()));
  auto rei = Recording::reindex(dir);
  REQUIRE_FALSE(rei);
  CHECK(rei.error().code == ErrorCode::kBusy);
  CHECK(rei.error().message == dir + " is being written by " + pid_text(::getpid()));
  CHECK(snapshot_files(dir) == before);  // not one byte changed, no file added

  auto state = WriterLock::state(dir);
  REQUIRE(state);
  REQUIRE(state->live);
  CHECK(state->live->pid == ::getpid());
  CHECK(state->live->program == self_program());
  CHECK_FALSE(state->stale);

  auto r = Recording::open(dir);
  REQUIRE(r);
  CHECK((*r)->live());
  CHECK((*r)->close_state() == CloseState::kUnclean);
  CHECK(storage_test::read_all(**r).size() == 50);
  r->reset();

  REQUIRE(w->close());
  CHECK_FALSE(fs::exists(WriterLock::path(dir)));  // removed on close
  auto after = Recording::open(dir);
  REQUIRE(after);
  CHECK_FALSE((*after)->live());
  CHECK_FALSE((*after)->lock_state().stale);
  CHECK((*after)->close_state() == CloseState::kClean);
  auto again = Recording::reindex(dir);
  REQUIRE(again);
  CHECK(again->records == 50);
  CHECK_FALSE(fs::exists(WriterLock::path(dir)));  // reindex removes its own lock file too
}

TEST_CASE("A writer that dies leaves a stale lock: readers name it, recover takes it over") {
  TempDir tmp;
  const std::string dir = tmp.sub("rec");
  int ready[2], done[2];
  REQUIRE(::pipe(ready) == 0);
  REQUIRE(::pipe(done) == 0);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    SegmentWriterOptions o;
    o.fsync = FsyncPolicy::kNone;
    auto w = SegmentWriter::create(dir, o);
    bool ok = w.ok();
    if (ok) {
      auto t = (*w)->add_topic({"t", "T", false, {}, {}});
      auto id = t ? (*w)->add_writer({*t, Guid{1}}) : Result<WriterId>(t.error());
      RecordMeta m;
      m.topic = t ? *t : 0;
      m.writer = id ? *id : 0;
      m.sequence = 1;
      m.reception_ns = 5;
      ok = id && (*w)->append(m, storage_test::make_payload(1, 100)) && (*w)->flush();
    }
    char c = ok ? 'y' : 'n';
    (void)!::write(ready[1], &c, 1);
    (void)!::read(done[0], &c, 1);  // holds the lock until the parent has looked
    _exit(ok ? 0 : 1);              // no close(): like a killed recorder
  }
  char c = 0;
  REQUIRE(::read(ready[0], &c, 1) == 1);
  REQUIRE(c == 'y');

  // Another process holds it: live, and recover refuses.
  auto live = WriterLock::state(dir);
  REQUIRE(live);
  REQUIRE(live->live);
  CHECK(live->live->pid == child);
  auto busy = Recording::recover(dir);
  REQUIRE_FALSE(busy);
  CHECK(busy.error().message == dir + " is being written by " + pid_text(child));

  REQUIRE(::write(done[1], "x", 1) == 1);
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  for (int fd : {ready[0], ready[1], done[0], done[1]}) ::close(fd);

  auto r = Recording::open(dir);
  REQUIRE(r);
  CHECK_FALSE((*r)->live());
  REQUIRE((*r)->lock_state().stale);
  CHECK((*r)->lock_state().stale->pid == child);
  CHECK((*r)->lock_state().stale->describe() == pid_text(child));
  CHECK((*r)->close_state() == CloseState::kUnclean);
  r->reset();

  auto rep = Recording::recover(dir);
  REQUIRE(rep);
  CHECK(rep->state == CloseState::kUnclean);  // as found
  CHECK_FALSE(fs::exists(WriterLock::path(dir)));
  CHECK(*Recording::close_state(dir) == CloseState::kRecovered);
}

TEST_CASE("The writer lock admits one holder: a second writer of the same directory is refused") {
  TempDir tmp;
  const std::string dir = tmp.sub("rec");
  fs::create_directories(dir);
  auto a = WriterLock::acquire(dir, "first");
  REQUIRE(a);
  auto b = WriterLock::acquire(dir, "second");
  REQUIRE_FALSE(b);
  CHECK(b.error().code == ErrorCode::kBusy);
  CHECK(b.error().message ==
        dir + " is being written by first (pid " + std::to_string(::getpid()) + ")");
  auto w = SegmentWriter::create(dir, {});
  REQUIRE_FALSE(w);
  CHECK(w.error().code == ErrorCode::kBusy);
  CHECK_FALSE(fs::exists(dir + "/index.sqlite3"));  // nothing created under another's lock

  // Readers only look: a state() check does not stand in a writer's way.
  auto st = WriterLock::state(dir);
  REQUIRE(st);
  REQUIRE(st->live);
  CHECK(st->live->program == "first");
  a->release();
  CHECK_FALSE(fs::exists(WriterLock::path(dir)));
  auto st2 = WriterLock::state(dir);
  REQUIRE(st2);
  CHECK_FALSE(st2->live);
  CHECK_FALSE(st2->stale);
  auto c = WriterLock::acquire(dir, "third");
  REQUIRE(c);
  CHECK(c->held());
}
