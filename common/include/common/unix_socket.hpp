// The address of a Unix-domain socket at a path of any length (Linux). sockaddr_un holds 107
// bytes of path; a socket deeper in the file system (a recorder's control socket in a recording
// directory with a long name) is reached through an O_PATH descriptor of its directory, as
// /proc/self/fd/N/NAME, which bind() and connect() resolve like the path itself. The descriptor
// is held for as long as the UnixSocketPath lives: bind or connect before it goes.
#pragma once

#include <sys/un.h>

#include <string>

#include "common/expected.hpp"

namespace common {

class UnixSocketPath {
 public:
  // kInvalidArgument for an empty path or one with a NUL; kNotFound / kIo when a long path's
  // directory cannot be opened (the message names it).
  static Expected<UnixSocketPath> of(const std::string& path);

  UnixSocketPath(UnixSocketPath&& o) noexcept;
  UnixSocketPath& operator=(UnixSocketPath&& o) noexcept;
  UnixSocketPath(const UnixSocketPath&) = delete;
  UnixSocketPath& operator=(const UnixSocketPath&) = delete;
  ~UnixSocketPath();

  // What to put in sun_path: the path itself, or /proc/self/fd/N/NAME (at most 107 bytes).
  const std::string& name() const { return name_; }
  // The address for bind() or connect() (AF_UNIX, name() in sun_path).
  sockaddr_un address() const;

 private:
  UnixSocketPath() = default;
  std::string name_;
  int dir_fd_ = -1;
};

}  // namespace common
