// SegmentWriter, retention and the disk guard (writer thread): the oldest segments go while the
// recording is over retention_max_bytes or they are older than retention_max_age (never the
// newest); free space is measured at start, at each roll and every disk_check_interval, and
// below min_free_bytes the recording stops (kLowSpace) or the oldest segments go.
// segment_writer_impl.hpp has the overview.
#include "errno_error.hpp"
#include "segment_writer_impl.hpp"

#include <sys/statvfs.h>

#include <cerrno>
#include <cstdio>

#include "common/units.hpp"

namespace storage {
namespace {

using common::mb;

// The disk guard's default measure: what statvfs calls available to unprivileged users (df's
// "Avail"), so the limit also keeps the filesystem's reserve untouched.
Result<uint64_t> statvfs_free(const std::string& dir) {
  struct statvfs v {};
  if (::statvfs(dir.c_str(), &v) != 0) return errno_error(errno, "statvfs " + dir);
  return static_cast<uint64_t>(v.f_bavail) * static_cast<uint64_t>(v.f_frsize);
}

}  // namespace

Status SegmentWriter::Impl::apply_retention(std::vector<uint64_t>& removed) {
  if (opt.retention_max_bytes == 0 && opt.retention_max_age.count() == 0) return Status{};
  uint64_t total = 0;
  for (auto& s : segs) total += s.size;
  const int64_t now = opt.now_ns ? opt.now_ns() : wall_ns();
  const int64_t max_age_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(opt.retention_max_age).count();
  while (segs.size() > 1) {
    const SegState& old = segs.front();
    const bool over_size = opt.retention_max_bytes > 0 && total > opt.retention_max_bytes;
    const bool over_age = max_age_ns > 0 && old.last_recv > 0 && now - old.last_recv > max_age_ns;
    if (!over_size && !over_age) break;
    if (auto s = index->delete_segment(old.number); !s) return s;
    removed.push_back(old.number);
    total -= old.size;
    segs.pop_front();
  }
  return Status{};
}

// Writer thread, outside any index transaction: the disk guard's check (see the overview).
Status SegmentWriter::Impl::guard_check() {
  next_guard = Clock::now() + opt.disk_check_interval;
  auto measure = [&]() -> Result<uint64_t> {
    auto f = opt.free_space ? opt.free_space(dir) : statvfs_free(dir);
    if (f) {
      std::lock_guard lk(mu);
      stats.free_bytes = *f;
    }
    return f;
  };
  auto free = measure();
  if (!free) return free.error();
  const uint64_t limit = opt.min_free_bytes;
  if (*free >= limit) {
    guard_refused = false;
    return Status{};
  }
  if (opt.on_low_space == LowSpacePolicy::kStop) {
    stop_for_low_space(*free);
    return Status{};
  }
  // kRotate: the oldest segments go, one at a time, until there is room again; never the newest.
  while (*free < limit && segs.size() > 1) {
    const uint64_t number = segs.front().number;
    uint64_t freed = 0;
    if (auto s = remove_oldest_segment(freed); !s) return s;
    free = measure();
    if (!free) return free.error();
    DiskGuardEvent e;
    e.kind = DiskGuardEvent::Kind::kRemoved;
    e.free_bytes = *free;
    e.min_free_bytes = limit;
    e.segment = number;
    e.segment_bytes = freed;
    e.message = "removed segment " + detail::segment_name(number) + " (" + mb(freed) + ") of " +
                dir + " for min_free_bytes " + mb(limit) + ": free space now " + mb(*free);
    guard_event(std::move(e));
  }
  if (*free >= limit) {
    guard_refused = false;
  } else if (!guard_refused) {
    guard_refused = true;
    DiskGuardEvent e;
    e.kind = DiskGuardEvent::Kind::kRefused;
    e.free_bytes = *free;
    e.min_free_bytes = limit;
    e.segment = segs.empty() ? 0 : segs.back().number;
    e.message = "free space " + mb(*free) + " on " + dir + " is below min_free_bytes " + mb(limit) +
                " and " +
                (segs.empty() ? std::string("there is no segment to remove")
                              : "only segment " + detail::segment_name(e.segment) +
                                    ", the one being written, is left") +
                ": recording goes on";
    guard_event(std::move(e));
  }
  return Status{};
}

// Writer thread, kStop: nothing more is accepted; what was is still written (see `stopping`).
void SegmentWriter::Impl::stop_for_low_space(uint64_t free_bytes) {
  guard_active = false;
  DiskGuardEvent e;
  e.kind = DiskGuardEvent::Kind::kStopped;
  e.free_bytes = free_bytes;
  e.min_free_bytes = opt.min_free_bytes;
  e.message = "free space " + mb(free_bytes) + " on " + dir + " is below min_free_bytes " +
              mb(opt.min_free_bytes) + ": recording stopped";
  Error err{ErrorCode::kLowSpace, e.message};
  // The event first: a caller that reacts to kLowSpace from an append has seen it.
  guard_event(std::move(e));
  {
    std::lock_guard lk(mu);
    if (!failure.ok()) return;
    failure = err;
    stopping = true;
    close_open_locked();  // its records were accepted: they are written
  }
  space_cv.notify_all();  // appenders waiting for a buffer get kLowSpace
  if (opt.on_error) opt.on_error(err);
}

// Writer thread, outside any index transaction: removes the oldest segment, index rows first
// (committed), then its file, as retention does.
Status SegmentWriter::Impl::remove_oldest_segment(uint64_t& freed) {
  const SegState old = segs.front();
  if (auto s = index->begin(); !s) return s;
  Status st = index->delete_segment(old.number);
  if (st) st = index->commit();
  if (!st) {
    index->rollback();
    return st;
  }
  segs.pop_front();
  freed = old.size;
  if (::unlink(detail::segment_path(dir, old.number).c_str()) != 0)
    return errno_error(errno, "unlink " + detail::segment_path(dir, old.number));
  std::lock_guard lk(mu);
  ++stats.segments_removed;
  ++stats.low_space_removed;
  return Status{};
}

// The syncer thread: one fdatasync per request from start_background_sync().

}  // namespace storage
