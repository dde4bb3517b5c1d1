// WriterLock (storage/writer_lock.hpp): an open file description lock on DIR/writer.lock.
//
// acquire(): open (create) the file, F_OFD_SETLK a write lock on all of it, then check that the
// path still names the file that was locked - a holder that ends removes the file while locked,
// and a process that opened it just before would otherwise lock a file no one can see. On a
// mismatch it starts again. Once it holds the lock it writes its own text.
#include "storage/writer_lock.hpp"
#include "errno_error.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <utility>

#include "storage/io.hpp"

namespace storage {
namespace {

struct flock whole_file(short type) {
  struct flock fl {};
  fl.l_type = type;
  fl.l_whence = SEEK_SET;
  fl.l_start = 0;
  fl.l_len = 0;  // to the end, however long
  fl.l_pid = 0;  // required for OFD locks
  return fl;
}

bool same_file(int fd, const std::string& path) {
  struct stat a {
  }, b{};
  if (::fstat(fd, &a) != 0 || ::stat(path.c_str(), &b) != 0) return false;
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

// "pid N\nprogram P\n" -> LockHolder (what it cannot read stays 0 / empty).
LockHolder parse(int fd) {
  char buf[512];
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  LockHolder h;
  if (n <= 0) return h;
  std::string_view text(buf, static_cast<size_t>(n));
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    if (line.starts_with("pid ")) {
      h.pid = std::strtoll(std::string(line.substr(4)).c_str(), nullptr, 10);
    } else if (line.starts_with("program ")) {
      h.program = std::string(line.substr(8));
    }
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return h;
}

Status write_text(int fd, const std::string& program, const std::string& path) {
  const std::string text = "pid " + std::to_string(::getpid()) + "\nprogram " + program + "\n";
  if (::ftruncate(fd, 0) != 0) return errno_error(errno, "truncate " + path);
  if (::pwrite(fd, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size()))
    return errno_error(errno, "write " + path);
  return Status{};
}

}  // namespace

std::string LockHolder::describe() const {
  if (pid <= 0) return program.empty() ? "another process" : program;
  const std::string p = "pid " + std::to_string(pid);
  return program.empty() ? p : program + " (" + p + ")";
}

std::string WriterLock::path(const std::string& dir) {
  return dir + "/writer.lock";
}

Result<WriterLock> WriterLock::acquire(const std::string& dir, const std::string& program) {
  const std::string p = path(dir);
  for (int attempt = 0; attempt < 100; ++attempt) {
    const int fd = ::open(p.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return errno_error(errno, "open " + p);
    struct flock fl = whole_file(F_WRLCK);
    if (::fcntl(fd, F_OFD_SETLK, &fl) != 0) {
      const int err = errno;
      if (err != EAGAIN && err != EACCES) {
        ::close(fd);
        return errno_error(err, "lock " + p);
      }
      const LockHolder h = parse(fd);
      ::close(fd);
      return Error{ErrorCode::kBusy, dir + " is being written by " + h.describe()};
    }
    if (!same_file(fd, p)) {  // its holder removed it between our open and our lock
      ::close(fd);
      continue;
    }
    WriterLock lock(fd, p);
    if (auto s = write_text(fd, program, p); !s) return s.error();  // ~WriterLock removes it
    return lock;
  }
  return Error{ErrorCode::kBusy, dir + ": " + p + " keeps changing; another process is using it"};
}

Result<LockState> WriterLock::state(const std::string& dir) {
  const std::string p = path(dir);
  const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return LockState{};
    return errno_error(errno, "open " + p);
  }
  struct flock fl = whole_file(F_WRLCK);
  if (::fcntl(fd, F_OFD_GETLK, &fl) != 0) {
    const int err = errno;
    ::close(fd);
    return errno_error(err, "test the lock of " + p);
  }
  LockState st;
  if (fl.l_type == F_UNLCK) {
    st.stale = parse(fd);
  } else {
    st.live = parse(fd);
  }
  ::close(fd);
  return st;
}

WriterLock::WriterLock(WriterLock&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)) {}

WriterLock& WriterLock::operator=(WriterLock&& other) noexcept {
  if (this != &other) {
    release();
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
  }
  return *this;
}

WriterLock::~WriterLock() {
  release();
}

void WriterLock::release() {
  if (fd_ < 0) return;
  ::unlink(path_.c_str());  // while still locked: see the top of this file
  ::close(fd_);
  fd_ = -1;
}

}  // namespace storage
