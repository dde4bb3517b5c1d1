// AppendLock<Owner>: an appender's hold on Owner's mutex over a batch of appends from one thread
// (the samples of one datagram) instead of one lock per record. SegmentWriter::AppendLock and
// SnapshotRing::AppendLock are this template; only Owner makes one (lock_appends()) and reads it.
// While it lives its thread holds the owner's lock: other threads' calls on the owner wait.
#pragma once

#include <mutex>
#include <utility>

namespace storage {

template <class Owner>
class AppendLock {
 public:
  AppendLock(AppendLock&&) noexcept = default;
  AppendLock& operator=(AppendLock&&) noexcept = default;

 private:
  friend Owner;
  explicit AppendLock(std::unique_lock<std::mutex> lk) : lk_(std::move(lk)) {}
  std::unique_lock<std::mutex> lk_;
};

}  // namespace storage
