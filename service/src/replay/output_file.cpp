// The output of an export: a temporary renamed on success, or direct output (output_file.hpp).
#include "output_file.hpp"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <vector>

namespace service::replay {
namespace {

// The temporary of the export in progress, for abandon_export_from_signal_handler(): the path is
// written before the flag is set and not changed while it is.
char g_temp_path[PATH_MAX + 1];
std::atomic<bool> g_temp_registered{false};

void register_temp(const std::string& path) {
  if (path.size() > PATH_MAX) return;
  std::memcpy(g_temp_path, path.c_str(), path.size() + 1);
  g_temp_registered.store(true);
}

void unregister_temp() {
  g_temp_registered.store(false);
}

}  // namespace

void abandon_export_from_signal_handler() noexcept {
  if (!g_temp_registered.exchange(false)) return;
  const int saved = errno;
  if (::unlink(g_temp_path) == 0) {
    static const char kMsg[] =
        "pubsub-replay: export interrupted again; its temporary file removed, no output written\n";
    [[maybe_unused]] const ssize_t w = ::write(STDERR_FILENO, kMsg, sizeof kMsg - 1);
  }
  errno = saved;
}

namespace detail {

// A stream buffer over a file descriptor, or forwarding to another stream buffer (standard
// output), that counts what it passed on and keeps the errno of the first failed write.
class OutputFile::Buf : public std::streambuf {
 public:
  explicit Buf(int fd) : fd_(fd) { init(); }
  explicit Buf(std::streambuf* target) : target_(target) { init(); }
  ~Buf() override = default;
  uint64_t bytes() const { return written_ + static_cast<uint64_t>(pptr() - pbase()); }
  int error() const { return error_; }
  bool drain() { return flush_buffer(); }

 protected:
  int_type overflow(int_type ch) override {
    if (!flush_buffer()) return traits_type::eof();
    if (!traits_type::eq_int_type(ch, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(ch);
      pbump(1);
    }
    return traits_type::not_eof(ch);
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    if (error_) return 0;
    const auto room = static_cast<std::streamsize>(epptr() - pptr());
    if (n <= room) {
      std::memcpy(pptr(), s, static_cast<size_t>(n));
      pbump(static_cast<int>(n));
      return n;
    }
    if (!flush_buffer() || !write_all(s, static_cast<size_t>(n))) return 0;
    return n;
  }
  int sync() override {
    if (!flush_buffer()) return -1;
    if (target_ && target_->pubsync() != 0) return fail(errno ? errno : EIO);
    return 0;
  }

 private:
  void init() {
    space_.resize(1 << 16);
    setp(space_.data(), space_.data() + space_.size());
  }
  int fail(int e) {
    if (!error_) error_ = e;
    return -1;
  }
  bool flush_buffer() {
    if (error_) return false;
    const size_t n = static_cast<size_t>(pptr() - pbase());
    setp(space_.data(), space_.data() + space_.size());
    return n == 0 || write_all(space_.data(), n);
  }
  bool write_all(const char* p, size_t n) {
    if (error_) return false;
    if (target_) {
      errno = 0;
      const auto put = target_->sputn(p, static_cast<std::streamsize>(n));
      if (put != static_cast<std::streamsize>(n)) {
        fail(errno ? errno : EIO);
        return false;
      }
      written_ += n;
      return true;
    }
    while (n > 0) {
      const ssize_t w = ::write(fd_, p, n);
      if (w < 0) {
        if (errno == EINTR) continue;
        fail(errno);
        return false;
      }
      p += w;
      n -= static_cast<size_t>(w);
      written_ += static_cast<uint64_t>(w);
    }
    return true;
  }

  int fd_ = -1;
  std::streambuf* target_ = nullptr;
  std::vector<char> space_;
  uint64_t written_ = 0;
  int error_ = 0;
};

namespace {

std::string errno_text(int e) {
  return std::strerror(e);
}

std::string dir_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string base_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

Result<std::unique_ptr<OutputFile>> OutputFile::open(const std::string& path, std::ostream& out) {
  std::unique_ptr<OutputFile> f(new OutputFile());
  f->path_ = path;
  if (path.empty()) {
    f->name_ = "standard output";
    f->out_ = &out;
    f->buf_ = std::make_unique<Buf>(out.rdbuf());
    f->own_stream_ = std::make_unique<std::ostream>(f->buf_.get());
    f->stream_ = f->own_stream_.get();
    return f;
  }
  f->name_ = path;
  auto cannot = [&](int e) {
    return make_error(Errc::kIo, "cannot write " + path + ": " + errno_text(e));
  };
  f->target_ = path;
  struct stat st {};
  mode_t mode = 0666;
  bool preserve_mode = false;
  if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    char resolved[PATH_MAX];
    if (::realpath(path.c_str(), resolved)) f->target_ = resolved;  // else: a dangling link
  }
  if (::stat(f->target_.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return cannot(EISDIR);
    f->existed_ = true;
    if (!S_ISREG(st.st_mode)) {  // a device or a FIFO: written directly
      f->fd_ = ::open(f->target_.c_str(), O_WRONLY | O_CLOEXEC);
      if (f->fd_ < 0) return cannot(errno);
      f->buf_ = std::make_unique<Buf>(f->fd_);
      f->own_stream_ = std::make_unique<std::ostream>(f->buf_.get());
      f->stream_ = f->own_stream_.get();
      return f;
    }
    mode = st.st_mode & 07777;
    preserve_mode = true;
  }
  f->temp_ =
      dir_of(f->target_) + "/." + base_of(f->target_) + ".partial-" + std::to_string(::getpid());
  f->fd_ = ::open(f->temp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, mode);
  if (f->fd_ < 0) {
    const int e = errno;
    f->temp_.clear();
    return cannot(e);
  }
  register_temp(f->temp_);
  if (preserve_mode) (void)::fchmod(f->fd_, mode);  // not subject to the umask, as before
  f->buf_ = std::make_unique<Buf>(f->fd_);
  f->own_stream_ = std::make_unique<std::ostream>(f->buf_.get());
  f->stream_ = f->own_stream_.get();
  return f;
}

OutputFile::~OutputFile() {
  abandon();
  if (fd_ >= 0) ::close(fd_);
}

uint64_t OutputFile::bytes() const {
  return buf_ ? buf_->bytes() : 0;
}

Result<void> OutputFile::commit() {
  stream_->flush();
  if (!buf_->drain() || buf_->error()) {
    const int e = buf_->error() ? buf_->error() : EIO;
    abandon();
    return make_error(Errc::kIo, errno_text(e));
  }
  if (path_.empty()) {
    out_->flush();
    return {};
  }
  if (!atomic()) return {};
  int e = 0;
  if (::fsync(fd_) != 0) e = errno;
  if (::close(fd_) != 0 && !e) e = errno;
  fd_ = -1;
  if (!e && ::rename(temp_.c_str(), target_.c_str()) != 0) e = errno;
  if (e) {
    abandon();
    return make_error(Errc::kIo, errno_text(e));
  }
  unregister_temp();
  temp_.clear();
  return {};
}

void OutputFile::abandon() {
  if (temp_.empty()) return;
  unregister_temp();
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  ::unlink(temp_.c_str());
  temp_.clear();
}

std::string OutputFile::outcome() const {
  if (path_.empty()) return "the output on standard output is incomplete";
  if (!atomic() && existed_ && fd_ >= 0) return name_ + " is incomplete";
  return existed_ ? name_ + " left as it was" : "no output file written";
}

}  // namespace detail
}  // namespace service::replay
