// common::UnixSocketPath: the name bind() and connect() get for a socket path, short or long.
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "common/unix_socket.hpp"

namespace fs = std::filesystem;
using common::Errc;
using common::UnixSocketPath;

namespace {

// A directory of its own under the temporary directory, removed with what is in it.
struct ScratchDir {
  fs::path path;
  ScratchDir() {
    std::string t = (fs::temp_directory_path() / "unix_socket_test.XXXXXX").string();
    REQUIRE(::mkdtemp(t.data()) != nullptr);
    path = t;
  }
  ~ScratchDir() { fs::remove_all(path); }
};

int socket_at(const std::string& name, bool listen) {
  const int s = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  REQUIRE(name.size() < sizeof a.sun_path);
  std::memcpy(a.sun_path, name.c_str(), name.size() + 1);
  const auto* sa = reinterpret_cast<const sockaddr*>(&a);
  const int r = listen ? ::bind(s, sa, sizeof a) : ::connect(s, sa, sizeof a);
  if (r != 0 || (listen && ::listen(s, 1) != 0)) {
    ::close(s);
    return -1;
  }
  return s;
}

}  // namespace

TEST_CASE("UnixSocketPath: a path that fits sun_path is used as it is") {
  auto p = UnixSocketPath::of("/run/x/control.sock");
  REQUIRE(p.ok());
  CHECK(p->name() == "/run/x/control.sock");
}

TEST_CASE("UnixSocketPath: a longer path is bound and reached through its directory") {
  ScratchDir d;
  const fs::path dir = d.path / std::string(70, 'a') / std::string(70, 'b');
  fs::create_directories(dir);
  const std::string path = (dir / "control.sock").string();
  REQUIRE(path.size() > 107);
  int listener = -1;
  {
    auto bound = UnixSocketPath::of(path);
    REQUIRE(bound.ok());
    CHECK(bound->name().rfind("/proc/self/fd/", 0) == 0);
    CHECK(bound->name().size() - bound->name().rfind('/') == std::string("/control.sock").size());
    listener = socket_at(bound->name(), true);
    REQUIRE(listener >= 0);
  }  // the directory's descriptor is closed: the socket stays where it was bound
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK(S_ISSOCK(st.st_mode));
  auto reach = UnixSocketPath::of(path);
  REQUIRE(reach.ok());
  const int client = socket_at(reach->name(), false);
  CHECK(client >= 0);
  if (client >= 0) ::close(client);
  ::close(listener);
}

TEST_CASE("UnixSocketPath: refusals name what is wrong") {
  ScratchDir d;
  const std::string deep = (d.path / std::string(120, 'c')).string();
  auto missing = UnixSocketPath::of(deep + "/control.sock");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().code == Errc::kNotFound);
  CHECK(missing.error().message ==
        "open directory " + deep + " of socket control.sock: No such file or directory");
  auto name = UnixSocketPath::of((d.path / std::string(100, 'n')).string() + std::string(20, 'm'));
  REQUIRE_FALSE(name.ok());
  CHECK(name.error().code == Errc::kInvalidArgument);
  CHECK(name.error().message ==
        "socket file name too long: " + std::string(100, 'n') + std::string(20, 'm'));
  auto empty = UnixSocketPath::of("");
  REQUIRE_FALSE(empty.ok());
  CHECK(empty.error().code == Errc::kInvalidArgument);
}
