#include "common/unix_socket.hpp"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace common {

Expected<UnixSocketPath> UnixSocketPath::of(const std::string& path) {
  if (path.empty() || path.find('\0') != std::string::npos)
    return Error{Errc::kInvalidArgument, "bad socket path '" + path + "'"};
  UnixSocketPath p;
  if (path.size() < sizeof(sockaddr_un{}.sun_path)) {
    p.name_ = path;
    return p;
  }
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "."
                          : slash == 0               ? "/"
                                                     : path.substr(0, slash);
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  p.dir_fd_ = ::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (p.dir_fd_ < 0) {
    const int err = errno;
    return Error{err == ENOENT ? Errc::kNotFound : Errc::kIo,
                 "open directory " + dir + " of socket " + base + ": " + std::strerror(err)};
  }
  p.name_ = "/proc/self/fd/" + std::to_string(p.dir_fd_) + "/" + base;
  if (p.name_.size() >= sizeof(sockaddr_un{}.sun_path))
    return Error{Errc::kInvalidArgument, "socket file name too long: " + base};
  return p;
}

sockaddr_un UnixSocketPath::address() const {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::memcpy(a.sun_path, name_.c_str(), name_.size() + 1);  // of() kept it within sun_path
  return a;
}

UnixSocketPath::UnixSocketPath(UnixSocketPath&& o) noexcept
    : name_(std::move(o.name_)), dir_fd_(std::exchange(o.dir_fd_, -1)) {}

UnixSocketPath& UnixSocketPath::operator=(UnixSocketPath&& o) noexcept {
  if (this != &o) {
    if (dir_fd_ >= 0) ::close(dir_fd_);
    name_ = std::move(o.name_);
    dir_fd_ = std::exchange(o.dir_fd_, -1);
  }
  return *this;
}

UnixSocketPath::~UnixSocketPath() {
  if (dir_fd_ >= 0) ::close(dir_fd_);
}

}  // namespace common
