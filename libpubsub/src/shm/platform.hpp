// Operating-system pieces of the shared-memory path: named POSIX shared-memory objects mapped
// into the process (Mapping), futex waits and wake-ups on words inside them, the host identity
// that decides which peers can share memory with us, and removal of segments left behind by
// processes that died.
//
// Why POSIX shm + futex rather than Boost.Interprocess: the only cross-process primitives the
// protocol needs are atomic words and a way to sleep on one. Boost.Interprocess's mutex and
// condition (1.74) are not robust: a process killed while holding one leaves every other
// process blocked on it. A futex word holds no ownership, so a SIGKILLed peer can only stop
// making progress, never wedge the others.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "pubsub/basics.hpp"

namespace pubsub::shm {

// Same boot, same network namespace and same IPC namespace: processes that see one /dev/shm
// and one loopback. Separate network namespaces count as separate hosts, as containers do.
using HostId = std::array<uint8_t, 16>;
const HostId& host_id();

// PUBSUB_SHM=off (or 0, false, no) in the environment disables shared memory.
bool disabled_by_environment();

bool process_alive(int pid);

// Sleeps while *word == expected, at most `timeout` (shared futex: works across processes).
void futex_wait(std::atomic<uint32_t>& word, uint32_t expected, Duration timeout);
void futex_wake_all(std::atomic<uint32_t>& word);

// A named shared-memory object mapped read-write. The creator unlinks the name when the
// Mapping goes (a mapping stays valid for whoever still has it mapped).
class Mapping {
 public:
  Mapping() = default;
  ~Mapping();
  Mapping(Mapping&& o) noexcept { *this = std::move(o); }
  Mapping& operator=(Mapping&& o) noexcept;

  // name: "/pubsub.<pid>.<...>" (see segment_name()). Fails if the name exists.
  static Result<Mapping> create(const std::string& name, size_t size);
  static Result<Mapping> open(const std::string& name);

  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& name() const { return name_; }

 private:
  void reset();
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
  std::string name_;
  bool owner_ = false;
};

// "/pubsub.<pid>.<tag>": the pid lets any later process remove it once its creator is dead.
std::string segment_name(const std::string& tag);
// Removes /dev/shm/pubsub.<pid>.* whose process no longer exists. Returns how many.
size_t remove_stale_segments();
// Removes one segment if its creator (the pid in its name) is dead.
void remove_if_orphaned(const std::string& name);

}  // namespace pubsub::shm
