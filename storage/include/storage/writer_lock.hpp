// WriterLock: the advisory lock that says a recording is being written.
//
// Whoever changes a recording holds it: SegmentWriter for its whole life (so the recorder while it
// records), Recording::recover() and Recording::reindex() while they work. It is an open file
// description lock (fcntl F_OFD_SETLK) on DIR/writer.lock, whose text names the holder ("pid N",
// "program P"). The kernel drops the lock when the holder's process ends, however it ends, so a
// crash leaves at most a stale file that no one holds: the next holder takes it over, and readers
// report its text as the writer that did not close the recording. A holder that ends normally
// removes the file while it still holds the lock.
//
// Readers never take the lock: holder() asks the kernel whether someone holds it (F_OFD_GETLK),
// so `info` or `verify` cannot make a writer's acquire() fail.
//
// Threads: a WriterLock has one owner; holder() may be called from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "storage/status.hpp"

namespace storage {

// The process that writes, or last wrote, a recording (the lock file's text).
struct LockHolder {
  int64_t pid = 0;      // 0 when the file does not say (being written at this instant)
  std::string program;  // "pubsub-recorder", "pubsub-replay recover", ...
  // "pubsub-recorder (pid 1234)", "pid 1234", or "another process".
  std::string describe() const;
};

// What holder() found.
struct LockState {
  std::optional<LockHolder> live;   // someone holds the lock now
  std::optional<LockHolder> stale;  // no one holds it, but a writer left its file behind
};

class WriterLock {
 public:
  // DIR/writer.lock
  static std::string path(const std::string& dir);
  // Takes the lock on the recording in `dir` (which must exist) without waiting, and writes this
  // process's pid and `program` into the file. kBusy with "DIR is being written by PROGRAM (pid
  // N)" when another holder has it.
  static Result<WriterLock> acquire(const std::string& dir, const std::string& program);
  // Who holds the lock of `dir` now, and what a holder that ended without removing the file left.
  static Result<LockState> state(const std::string& dir);

  WriterLock() = default;
  WriterLock(WriterLock&& other) noexcept;
  WriterLock& operator=(WriterLock&& other) noexcept;
  WriterLock(const WriterLock&) = delete;
  WriterLock& operator=(const WriterLock&) = delete;
  // Removes the file and drops the lock.
  ~WriterLock();
  bool held() const { return fd_ >= 0; }
  // Removes the file and drops the lock now (nothing when not held).
  void release();

 private:
  WriterLock(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  int fd_ = -1;
  std::string path_;
};

}  // namespace storage
