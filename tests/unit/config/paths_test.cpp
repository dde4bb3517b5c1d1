// validate_storage_path and validate_log_file: every refusal with its message, and that checking
// creates nothing. "Not writable" is tested three ways, because tests usually run as root, for
// whom mode bits do not count: as an unprivileged user (chmod 0555 when not root; as root, in a
// forked child that drops to uid/gid 65534), and on a read-only tmpfs mounted in a private mount
// namespace of a forked child (root only; skipped with a warning where mounting is not allowed).
#include <catch2/catch.hpp>

#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include "skip.hpp"
#include "storage/segment_writer.hpp"
#include "test_util.hpp"

using namespace config;
using config_test::ChildResult;
using config_test::messages_of;
using config_test::run_in_child;
using config_test::TempDir;
using Messages = std::vector<std::string>;
namespace fs = std::filesystem;

namespace {

RecorderConfig with_storage_path(const std::string& path) {
  RecorderConfig c;
  c.storage.path = path;
  return c;
}

RecorderConfig with_log_file(const std::string& file) {
  RecorderConfig c;
  c.storage.path = "unused";
  c.log.file = file;
  return c;
}

Messages storage_messages(const std::string& path) {
  return messages_of(validate_storage_path(with_storage_path(path)));
}

Messages log_messages(const std::string& file) {
  return messages_of(validate_log_file(with_log_file(file)));
}

void touch(const std::string& file) {
  std::ofstream(file) << "x";
}

// Runs `check` as uid 65534 when root, as ourselves otherwise (the caller then made the
// directory 0555). Returns nullopt-like ran=false when dropping privileges is impossible.
ChildResult as_unprivileged(const std::function<Messages()>& check) {
  if (::geteuid() != 0) return ChildResult{true, check()};
  return run_in_child(nullptr, true, check);
}

}  // namespace

TEST_CASE("validate_storage_path accepts a new directory in a writable parent, creating nothing") {
  TempDir dir;
  CHECK(storage_messages(dir.str("rec")).empty());
  CHECK(storage_messages(dir.str("rec") + "/").empty());
  CHECK(storage_messages(dir.str("rec") + "//").empty());
  CHECK(dir.entries().empty());  // neither the recording nor a probe left behind
}

TEST_CASE("validate_storage_path accepts an existing empty directory and leaves it empty") {
  TempDir dir;
  fs::create_directory(dir.path() / "rec");
  CHECK(storage_messages(dir.str("rec")).empty());
  CHECK(storage_messages(dir.str("rec") + "/").empty());
  CHECK(dir.entries() == Messages{"rec"});
  CHECK(dir.entries("rec").empty());
}

TEST_CASE("validate_storage_path refuses a path whose parent does not exist") {
  TempDir dir;
  const std::string p = dir.str("missing/rec");
  CHECK(storage_messages(p) == Messages{"storage path \"" + p + "\": parent directory \"" +
                                        dir.str("missing") + "\" does not exist"});
  CHECK(storage_messages("no-such-dir-for-config-test/rec") ==
        Messages{"storage path \"no-such-dir-for-config-test/rec\": parent directory "
                 "\"no-such-dir-for-config-test\" does not exist"});
  CHECK(dir.entries().empty());
}

TEST_CASE("validate_storage_path refuses a path under a file") {
  TempDir dir;
  touch(dir.str("file"));
  const std::string p = dir.str("file/rec");
  CHECK(storage_messages(p) == Messages{"storage path \"" + p + "\": parent directory \"" +
                                        dir.str("file") + "\" is not a directory"});
}

TEST_CASE("validate_storage_path refuses an existing file") {
  TempDir dir;
  touch(dir.str("file"));
  CHECK(storage_messages(dir.str("file")) ==
        Messages{"storage path \"" + dir.str("file") + "\" is not a directory"});
}

TEST_CASE("validate_storage_path refuses a directory that already holds a recording") {
  TempDir dir;
  fs::create_directories(dir.path() / "rec/segments");
  touch(dir.str("rec/index.sqlite3"));
  CHECK(storage_messages(dir.str("rec")) ==
        Messages{"storage path \"" + dir.str("rec") +
                 "\" already holds a recording (index.sqlite3 present); the recorder never "
                 "appends to one: record into a new directory"});
}

TEST_CASE("validate_storage_path sends a recording that was not closed cleanly to recover") {
  TempDir dir;
  const std::string rec = dir.str("rec");
  // A writer that dies without closing leaves the index marked unclean.
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    auto w = storage::SegmentWriter::create(rec);
    ::_exit(w ? 0 : 1);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  CHECK(storage_messages(rec) ==
        Messages{"storage path \"" + rec +
                 "\" holds a recording that was not closed cleanly (or is being written): the "
                 "recorder never appends to a recording; run 'pubsub-replay recover " +
                 rec + "' to finish it, and record into a new directory"});
}

TEST_CASE("validate_storage_path refuses a non-empty directory without an index") {
  TempDir dir;
  fs::create_directory(dir.path() / "rec");
  touch(dir.str("rec/notes.txt"));
  CHECK(
      storage_messages(dir.str("rec")) ==
      Messages{"storage path \"" + dir.str("rec") + "\" is not empty (it contains \"notes.txt\")"});
  fs::remove(dir.path() / "rec/notes.txt");
  fs::create_directory(dir.path() / "rec/.hidden");
  CHECK(storage_messages(dir.str("rec")) ==
        Messages{"storage path \"" + dir.str("rec") + "\" is not empty (it contains \".hidden\")"});
}

TEST_CASE("validate_storage_path refuses a dangling symbolic link") {
  TempDir dir;
  fs::create_symlink(dir.path() / "nowhere", dir.path() / "link");
  CHECK(storage_messages(dir.str("link")) ==
        Messages{"storage path \"" + dir.str("link") + "\" is a dangling symbolic link"});
}

TEST_CASE("validate_storage_path follows a symbolic link to an empty directory") {
  TempDir dir;
  fs::create_directory(dir.path() / "real");
  fs::create_directory_symlink(dir.path() / "real", dir.path() / "link");
  CHECK(storage_messages(dir.str("link")).empty());
}

TEST_CASE("validate_storage_path refuses an empty path") {
  CHECK(storage_messages("") == Messages{"storage path is empty (set /storage/path or --path)"});
}

TEST_CASE("validate_storage_path refuses a parent the user may not write") {
  TempDir dir;
  fs::create_directory(dir.path() / "ro");
  fs::permissions(dir.path() / "ro", fs::perms(0555));
  const std::string p = dir.str("ro/rec");
  const ChildResult r = as_unprivileged([&] { return storage_messages(p); });
  if (!r.ran) PUBSUB_SKIP("cannot drop privileges to uid 65534");
  CHECK(r.messages == Messages{"storage path \"" + p + "\": parent directory \"" + dir.str("ro") +
                               "\" is not writable (Permission denied)"});
  // The empty directory itself is refused the same way.
  const ChildResult self = as_unprivileged([&] { return storage_messages(dir.str("ro")); });
  CHECK(self.messages ==
        Messages{"storage path \"" + dir.str("ro") + "\" is not writable (Permission denied)"});
  CHECK(dir.entries("ro").empty());
}

TEST_CASE("validate_storage_path refuses a parent on a read-only file system, even for root") {
  if (::geteuid() != 0) PUBSUB_SKIP("not root: cannot mount a read-only file system");
  TempDir dir;
  fs::create_directory(dir.path() / "mnt");
  const std::string mnt = dir.str("mnt");
  auto mount_read_only = [&] {
    return ::unshare(CLONE_NEWNS) == 0 &&
           ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0 &&
           ::mount("config-test", mnt.c_str(), "tmpfs", MS_RDONLY, "size=64k") == 0;
  };
  const ChildResult r = run_in_child(mount_read_only, false, [&] {
    Messages m = storage_messages(mnt + "/rec");
    for (auto& s : storage_messages(mnt)) m.push_back(s);
    return m;
  });
  if (!r.ran) PUBSUB_SKIP("cannot mount tmpfs in a private mount namespace");
  CHECK(r.messages ==
        Messages{"storage path \"" + mnt + "/rec\": parent directory \"" + mnt +
                     "\" is not writable (Read-only file system)",
                 "storage path \"" + mnt + "\" is not writable (Read-only file system)"});
}

TEST_CASE("validate_log_file accepts no file, a new file or an existing file, creating nothing") {
  TempDir dir;
  CHECK(log_messages("").empty());
  CHECK(log_messages(dir.str("rec.log")).empty());
  CHECK(dir.entries().empty());
  touch(dir.str("old.log"));
  CHECK(log_messages(dir.str("old.log")).empty());
  CHECK(dir.entries() == Messages{"old.log"});
}

TEST_CASE("validate_log_file refuses missing parents, directories and unwritable files") {
  TempDir dir;
  const std::string f = dir.str("nope/rec.log");
  CHECK(log_messages(f) == Messages{"log file \"" + f + "\": parent directory \"" +
                                    dir.str("nope") + "\" does not exist"});
  CHECK(log_messages(dir.str()) == Messages{"log file \"" + dir.str() + "\" is a directory"});
  CHECK(log_messages(dir.str() + "/logs/") ==
        Messages{"log file \"" + dir.str() + "/logs/\" names a directory, not a file"});

  touch(dir.str("ro.log"));
  fs::permissions(dir.path() / "ro.log", fs::perms(0444));
  const std::string ro = dir.str("ro.log");
  const ChildResult r = as_unprivileged([&] { return log_messages(ro); });
  if (!r.ran) PUBSUB_SKIP("cannot drop privileges to uid 65534");
  CHECK(r.messages == Messages{"log file \"" + ro + "\" is not writable (Permission denied)"});
}
