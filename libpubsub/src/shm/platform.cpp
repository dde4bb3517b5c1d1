#include "shm/platform.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string_view>

#include "common/md5.hpp"
#include "environment.hpp"

namespace pubsub::shm {
namespace {

std::string read_first_line(const char* path) {
  std::ifstream in(path);
  std::string s;
  std::getline(in, s);
  return s;
}

std::string namespace_inode(const char* path) {
  struct stat st {};
  if (::stat(path, &st) != 0) return "?";
  return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
}

Error os_error(const std::string& what) {
  return make_error(ErrorCode::kIo, what + ": " + std::strerror(errno));
}

// The pid in "pubsub.<pid>.<tag>", or 0.
int pid_of(std::string_view name) {
  if (!name.empty() && name[0] == '/') name.remove_prefix(1);
  constexpr std::string_view kPrefix = "pubsub.";
  if (name.substr(0, kPrefix.size()) != kPrefix) return 0;
  name.remove_prefix(kPrefix.size());
  int pid = 0;
  size_t i = 0;
  for (; i < name.size() && name[i] >= '0' && name[i] <= '9' && i < 9; ++i) {
    pid = pid * 10 + (name[i] - '0');
  }
  return i < name.size() && name[i] == '.' ? pid : 0;
}

}  // namespace

const HostId& host_id() {
  static const HostId id = [] {
    const std::string s = read_first_line("/proc/sys/kernel/random/boot_id") + "|" +
                          namespace_inode("/proc/self/ns/net") + "|" +
                          namespace_inode("/proc/self/ns/ipc");
    return common::md5({reinterpret_cast<const uint8_t*>(s.data()), s.size()});
  }();
  return id;
}

bool disabled_by_environment() {
  return environment_says_off("PUBSUB_SHM");
}

bool process_alive(int pid) {
  if (pid <= 0) return false;
  return ::kill(pid, 0) == 0 || errno != ESRCH;
}

void futex_wait(std::atomic<uint32_t>& word, uint32_t expected, Duration timeout) {
  if (timeout <= Duration::zero()) return;
  const auto ns = timeout.count();
  timespec ts{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
  ::syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAIT, expected, &ts, nullptr, 0);
}

void futex_wake_all(std::atomic<uint32_t>& word) {
  ::syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAKE, INT32_MAX, nullptr, nullptr,
            0);
}

// ---- Mapping ----------------------------------------------------------------------------------

Mapping::~Mapping() {
  reset();
}

Mapping& Mapping::operator=(Mapping&& o) noexcept {
  if (this != &o) {
    reset();
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
    name_ = std::move(o.name_);
    owner_ = std::exchange(o.owner_, false);
  }
  return *this;
}

void Mapping::reset() {
  if (data_) ::munmap(data_, size_);
  if (owner_) ::shm_unlink(name_.c_str());
  data_ = nullptr;
  size_ = 0;
  owner_ = false;
}

Result<Mapping> Mapping::create(const std::string& name, size_t size) {
  const int fd = ::shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return os_error("shm_open " + name);
  if (::ftruncate(fd, static_cast<off_t>(size)) != 0) {
    auto e = os_error("ftruncate " + name);
    ::close(fd);
    ::shm_unlink(name.c_str());
    return e;
  }
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) {
    auto e = os_error("mmap " + name);
    ::shm_unlink(name.c_str());
    return e;
  }
  Mapping m;
  m.data_ = static_cast<uint8_t*>(p);
  m.size_ = size;
  m.name_ = name;
  m.owner_ = true;
  return m;
}

Result<Mapping> Mapping::open(const std::string& name) {
  const int fd = ::shm_open(name.c_str(), O_RDWR | O_CLOEXEC, 0);
  if (fd < 0) return os_error("shm_open " + name);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    auto e = os_error("fstat " + name);
    ::close(fd);
    return e;
  }
  const size_t size = static_cast<size_t>(st.st_size);
  if (size == 0) {
    ::close(fd);
    return make_error(ErrorCode::kCorrupt, name + ": empty segment");
  }
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) return os_error("mmap " + name);
  Mapping m;
  m.data_ = static_cast<uint8_t*>(p);
  m.size_ = size;
  m.name_ = name;
  return m;
}

std::string segment_name(const std::string& tag) {
  return "/pubsub." + std::to_string(::getpid()) + "." + tag;
}

void remove_if_orphaned(const std::string& name) {
  const int pid = pid_of(name);
  if (pid > 0 && !process_alive(pid)) {
    ::shm_unlink((name[0] == '/' ? name : "/" + name).c_str());
  }
}

size_t remove_stale_segments() {
  DIR* d = ::opendir("/dev/shm");
  if (!d) return 0;
  size_t n = 0;
  while (const dirent* e = ::readdir(d)) {
    const int pid = pid_of(e->d_name);
    if (pid > 0 && !process_alive(pid)) {
      n += ::shm_unlink((std::string("/") + e->d_name).c_str()) == 0;
    }
  }
  ::closedir(d);
  return n;
}

}  // namespace pubsub::shm
