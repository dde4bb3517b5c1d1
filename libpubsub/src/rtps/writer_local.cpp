// StatefulWriter, same-host readers: shared memory and intra-process delivery.
// writer.hpp has the overview of the whole class (which file holds which role, the threads, the
// lock rule).
//
// Nothing is sent to these readers over the network. A reader that could not attach sends
// ACKNACKs instead, and the writer then serves it over the network (on_acknack(),
// writer_repair.cpp).
//
// Shared memory: the history lives in a shm::WriterSegment; write() publishes the sample there
// (publish_locked()) and rings the reader participant's doorbell; the reader reads it in place
// and acknowledges in its slot of the segment, which the writer reads when it needs room (and on
// its timer): refresh_local_acks_locked(), which also finds a reader's slot once it has attached
// and marks one that detached as gone. reap_dead_readers_locked() frees the slots of reader
// processes killed without detaching (at most every 50 ms; from wait_locked() and on_timer()).
//
// Intra-process: write() calls the reader's deliver_local() itself, on the writing thread, with
// the writer's lock held, handing it the sample in the history (no copy). A sample a reliable
// reader refuses (or one past its listener's loan limit) stays in the history and is offered
// again by on_timer(). A listener that releases a loan calls on_loans_released(): inside the
// delivery (t_delivering: this thread holds the lock) it only sets loans_released_, which
// commit_locked() picks up; on any other thread it takes the lock and releases what is
// acknowledged.
//
// State it owns: next_reap_ and loans_released_; of each same-host ReaderProxy, slot, gone, and
// acked as read from the segment or advanced by delivery.
#include "rtps/writer.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

namespace pubsub::rtps {
namespace {

// The writer whose deliver_intra_locked() runs on this thread (its lock is held): a listener
// releasing a loan there must not take that lock again.
thread_local const StatefulWriter* t_delivering = nullptr;

}  // namespace

void StatefulWriter::publish_locked() {
  segment_->publish(history_.last_sn(), first_held_locked());
  for (auto* bell : bells_) shm::ring(*bell);
}

void StatefulWriter::refresh_local_acks_locked() {
  if (!segment_) return;
  for (auto& p : readers_) {
    if (p.info.delivery != Delivery::kSharedMemory || p.gone) continue;
    if (p.slot < 0) {
      p.slot = segment_->find_slot(p.info.guid);
      if (p.slot < 0) continue;
      p.synced = true;  // attached: it reads everything from its start point on
    }
    auto& slot = segment_->slot(static_cast<size_t>(p.slot));
    const auto g = p.info.guid.bytes();
    if (slot.state.load(std::memory_order_acquire) != shm::kSlotActive ||
        std::memcmp(slot.guid, g.data(), 16) != 0) {
      p.gone = true;  // it detached (or died and was reaped)
      continue;
    }
    const SequenceNumber acked =
        std::min(slot.acked.load(std::memory_order_acquire), history_.last_sn());
    if (acked > p.acked) p.acked = acked;
  }
}

void StatefulWriter::reap_dead_readers_locked(SteadyTime now) {
  if (!segment_ || now < next_reap_) return;
  next_reap_ = now + std::chrono::milliseconds(50);
  bool reaped = false;
  for (size_t i = 0; i < shm::kMaxSlots; ++i) {
    auto& slot = segment_->slot(i);
    if (slot.state.load(std::memory_order_acquire) != shm::kSlotActive) continue;
    if (shm::process_alive(slot.pid)) continue;
    // Killed without detaching: nothing it held is in use any more.
    slot.hold.store(shm::kNoHold, std::memory_order_seq_cst);
    slot.state.store(shm::kSlotFree, std::memory_order_release);
    reaped = true;
  }
  if (reaped) shm::remove_stale_segments();  // what the dead reader's process left (doorbell)
}

bool StatefulWriter::deliver_intra_locked() {
  struct Delivering {
    const StatefulWriter* previous;
    explicit Delivering(const StatefulWriter* w) : previous(std::exchange(t_delivering, w)) {}
    ~Delivering() { t_delivering = previous; }
  } delivering(this);
  bool behind = false;
  for (auto& p : readers_) {
    if (p.info.delivery != Delivery::kIntraProcess || p.gone) continue;
    while (p.acked < history_.last_sn()) {
      const SequenceNumber sn = p.acked + 1;
      const CacheChange* c = history_.find(sn);
      if (!c) {  // dropped (KEEP_LAST) before this reader took it
        p.acked = sn;
        p.info.local->count_lost(1);
        continue;
      }
      if (p.loans.registry && p.loans.registry->full()) {  // too many loans: wait for releases
        behind = true;
        break;
      }
      const auto s = local_sample(config_.guid, *c, history_.data(*c), c->timestamp,
                                  p.loans.registry ? &p.loans : nullptr);
      const auto r = p.info.local->deliver_local(s, Delivery::kIntraProcess);
      if (r == LocalDelivery::kGone) {
        p.gone = true;
        break;
      }
      if (r == LocalDelivery::kRefused && p.info.reliable) {
        behind = true;
        break;
      }
      p.acked = sn;
    }
  }
  return behind;
}

void StatefulWriter::on_loans_released() {
  if (t_delivering == this) {
    loans_released_.store(true, std::memory_order_relaxed);  // picked up after the delivery
    return;
  }
  std::lock_guard lk(mu_);
  release_acked_locked();
  notify_locked();
}

}  // namespace pubsub::rtps
