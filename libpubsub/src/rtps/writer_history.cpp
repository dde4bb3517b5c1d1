// StatefulWriter, history and loans: how a sample enters the history, and when it leaves.
// writer.hpp has the overview of the whole class (which file holds which role, the threads, the
// lock rule).
//
// write() runs on the caller's thread (synchronous publication): it waits for room, copies the
// serialized sample into the history (WriterHistory; in the shm::WriterSegment when the writer
// has one) and commit_locked() sends it (writer_transmit.cpp), publishes it to the segment and
// hands it to intra-process readers (writer_local.cpp).
//
// Loans: loan() lends the history space of the next sample to the application, write_loan()
// commits it in place (one loan at a time: other writes wait until it ends,
// wait_no_loan_locked()). Readers may hold samples too (LoanedSample): a shared-memory reader
// keeps its slot's hold and acknowledgement below them, an intra-process one reports them
// through its proxy's LoanRegistry; either way history space is reused only below the lowest
// sample any reader holds (min_hold_locked()).
//
// Room: KEEP_LAST drops the oldest samples, unless a reader holds one; otherwise write() waits
// (up to max_blocking_time) while the history is full or more bytes are unacknowledged than the
// congestion window allows (have_room_locked(), writer_flow.cpp). A blocked writer asks for
// acknowledgements at once (a HEARTBEAT, or the open batch with one), waits until half the window
// is free (one wake-up per half window rather than per acknowledgement), and repeats its
// HEARTBEAT every probe_interval() while no answer comes. release_acked_locked() frees the
// history below the lowest sample every reliable reader has acknowledged (less what it holds on
// loan) - on acknowledgements, matching changes and before a writer waits; a transient-local
// writer keeps it, a volatile one with no reliable reader keeps nothing.
//
// wait_locked() waits, with the lock released, for acknowledgements, releases or matches: on the
// condition variable space_cv_, or, with shared-memory readers (which acknowledge in the
// segment), on the segment's progress futex. notify_locked() wakes both.
//
// State it owns: history_ (every role reads it; only this file adds and removes samples), the
// loan (loan_active_, loan_offset_, loan_size_) and space_cv_, on which writes wait.
#include "rtps/writer.hpp"

#include <algorithm>
#include <cstring>

namespace pubsub::rtps {
namespace {

// With intra-process readers only, what they took is freed once this many samples are held
// (one pass over the readers per group rather than per sample).
constexpr size_t kIntraReleaseEvery = 32;

}  // namespace

Result<void> StatefulWriter::write(const WriteRequest& r, bool may_block) {
  const size_t size = r.encapsulation_size + r.body_size + r.padding;
  std::unique_lock lk(mu_);
  if (partial_.sn) wait_no_partial_locked(lk);
  if (!history_.fits(size)) {
    return make_error(ErrorCode::kResourceLimit, "sample of " + std::to_string(size) +
                                                     " bytes exceeds the history's max_bytes (" +
                                                     std::to_string(history_.max_bytes()) + ")");
  }
  if (loan_active_) {
    if (auto ok = wait_no_loan_locked(lk, may_block); !ok) return ok;
  }
  if (!room_now_locked(size, cwnd_)) {  // the fast path: room without waiting
    if (auto room = make_room_locked(lk, size, may_block); !room) return room;
    if (loan_active_) return wait_no_loan_locked(lk, false);  // taken while we waited for room
  }
  CacheChange* c = history_.try_append(size);
  uint8_t* dst = history_.data(*c);
  if (r.encapsulation_size) std::memcpy(dst, r.encapsulation, r.encapsulation_size);
  if (r.body_size) std::memcpy(dst + r.encapsulation_size, r.body, r.body_size);
  if (r.padding) std::memset(dst + r.encapsulation_size + r.body_size, 0, r.padding);
  commit_locked(*c, r, may_block);
  if (partial_.sn) finish_partial_locked(lk);
  return {};
}

void StatefulWriter::commit_locked(CacheChange& c, const WriteRequest& r, bool may_pace) {
  c.timestamp = r.timestamp;
  c.status_info = r.status_info;
  c.max_payload = static_cast<uint32_t>(max_payload_);
  if (r.key_hash) {
    c.has_key_hash = true;
    c.key_hash = *r.key_hash;
  }
  if (durable_) durable_->add(c, history_.data(c));
  stats_.samples_written++;
  stats_.bytes_written += c.size;
  send_new_locked(c, may_pace);
  if (segment_) publish_locked();
  if (intra_readers_) {
    deliver_intra_locked();
    // Loans released by the listeners themselves, during the delivery.
    if (loans_released_.exchange(false, std::memory_order_relaxed)) release_acked_locked();
  }
  if (config_.qos.durability == DurabilityKind::kVolatile) {
    if (reliable_readers_ + local_reliable_ == 0) {
      remove_through_locked(history_.last_sn());  // nobody will ask for it again
    } else if (reliable_readers_ == 0 && shm_readers_ == 0 &&
               history_.size() >= kIntraReleaseEvery) {
      // Intra-process readers only: what they took is acknowledged. Released in groups, and
      // by make_room_locked() before a writer would wait.
      release_acked_locked();
    }
  }
}

Result<void> StatefulWriter::wait_no_loan_locked(std::unique_lock<std::mutex>& lk, bool may_block) {
  if (!loan_active_) return {};  // the common case: no clock read on the write path
  const auto deadline = std::chrono::steady_clock::now() + config_.qos.max_blocking_time;
  while (loan_active_) {
    if (!may_block || !wait_locked(lk, deadline)) {
      if (!loan_active_) break;
      stats_.write_timeouts++;
      return make_error(ErrorCode::kTimeout, "a loaned sample is still outstanding");
    }
  }
  return {};
}

Result<uint8_t*> StatefulWriter::loan(size_t size, bool may_block) {
  std::unique_lock lk(mu_);
  if (!history_.fits(size)) {
    return make_error(ErrorCode::kResourceLimit, "loan of " + std::to_string(size) +
                                                     " bytes exceeds the history's max_bytes (" +
                                                     std::to_string(history_.max_bytes()) + ")");
  }
  do {
    if (auto ok = wait_no_loan_locked(lk, may_block); !ok) return ok.error();
    if (auto room = make_room_locked(lk, size, may_block); !room) return room.error();
  } while (loan_active_);
  loan_offset_ = history_.reserve(size);
  loan_size_ = size;
  loan_active_ = true;
  return history_.bytes_at(loan_offset_);
}

Result<void> StatefulWriter::write_loan(const WriteRequest& meta, size_t padding, bool may_block) {
  std::unique_lock lk(mu_);
  if (!loan_active_) return make_error(ErrorCode::kInvalidArgument, "no loan outstanding");
  if (partial_.sn) wait_no_partial_locked(lk);
  loan_active_ = false;
  // The header and padding around the body the application filled.
  uint8_t* p = history_.bytes_at(loan_offset_);
  const uint8_t header[4] = {0x00, 0x01, 0x00, static_cast<uint8_t>(padding)};  // CDR_LE
  std::memcpy(p, header, 4);
  if (padding) std::memset(p + loan_size_ - padding, 0, padding);
  commit_locked(*history_.append_at(loan_offset_, loan_size_), meta, may_block);
  notify_locked();
  if (partial_.sn) finish_partial_locked(lk);
  return {};
}

void StatefulWriter::release_loan() {
  std::lock_guard lk(mu_);
  loan_active_ = false;
  notify_locked();
}

bool StatefulWriter::room_now_locked(size_t size, size_t window) {
  if (config_.qos.history.kind == HistoryKind::kKeepLast) return drop_oldest_locked(size);
  return have_room_locked(size, window);
}

Result<void> StatefulWriter::make_room_locked(std::unique_lock<std::mutex>& lk, size_t size,
                                              bool may_block) {
  if (room_now_locked(size, cwnd_)) return {};
  if (shm_readers_ || intra_readers_) {
    refresh_local_acks_locked();
    release_acked_locked();
    if (room_now_locked(size, cwnd_)) return {};
  }
  if (!may_block) {
    stats_.write_timeouts++;
    return make_error(ErrorCode::kTimeout, "history full (no blocking on this thread)");
  }
  stats_.write_blocked++;
  // Ask the readers for acknowledgements now rather than at the next periodic heartbeat.
  if (batch_size_) {
    flush_batch_locked(true);
  } else {
    send_heartbeat_locked(destinations_, nullptr);
  }
  const auto deadline = std::chrono::steady_clock::now() + config_.qos.max_blocking_time;
  // Hysteresis: once the window is full, wait until half of it is acknowledged, so a
  // steady stream costs one wake-up per half window rather than one per acknowledgement.
  while (!room_now_locked(size, cwnd_ / 2)) {
    // No answer within a probe interval: the HEARTBEAT or its answer was lost (or the last
    // fragments, which carry the HEARTBEAT_FRAG), so ask again instead of idling until the
    // periodic one (heartbeat_period, 100 ms).
    const uint64_t answers = answers_;
    const auto probe_at = std::min(deadline, std::chrono::steady_clock::now() + probe_interval());
    if (wait_locked(lk, probe_at)) continue;
    if (std::chrono::steady_clock::now() < deadline) {
      if (answers_ == answers && !room_now_locked(size, cwnd_ / 2)) {
        send_heartbeat_locked(destinations_, nullptr);
        stats_.heartbeat_probes++;
      }
      continue;
    }
    // Past the deadline wait_locked() no longer waits: room within the whole window will do,
    // else it is a timeout (looping here would spin with the lock held).
    if (room_now_locked(size, cwnd_)) return {};
    stats_.write_timeouts++;
    return make_error(ErrorCode::kTimeout,
                      "write blocked for max_blocking_time: readers did not acknowledge");
  }
  return {};
}

bool StatefulWriter::drop_oldest_locked(size_t size) {
  while (!history_.can_append(size) && !history_.empty()) {
    const SequenceNumber first = history_.first_sn();
    if (segment_) history_.invalidate_through(first);
    if (min_hold_locked() <= first) return false;  // a reader is reading it or holds it
    history_.remove_oldest();
  }
  return true;
}

void StatefulWriter::remove_through_locked(SequenceNumber sn) {
  if (!history_.empty() && history_.first_sn() <= sn) {
    // Readers of the segment may be reading these: clear them first, then free only what no
    // reader holds (segment.hpp).
    if (segment_) history_.invalidate_through(sn);
    sn = std::min(sn, min_hold_locked() - 1);
  }
  history_.remove_through(sn);
}

SequenceNumber StatefulWriter::min_hold_locked() {
  SequenceNumber h = segment_ ? segment_->min_hold() : shm::kNoHold;
  for (const auto& p : readers_) {
    if (p.loans.registry && !p.gone) h = std::min(h, p.loans.registry->lowest());
  }
  return h;
}

SequenceNumber StatefulWriter::min_acked_locked() const {
  SequenceNumber m = history_.last_sn();
  for (const auto& r : readers_) {
    if (r.holds_history()) m = std::min(m, r.effective_acked());
  }
  return m;
}

void StatefulWriter::release_acked_locked() {
  if (config_.qos.durability == DurabilityKind::kTransientLocal) return;
  // Samples still in the open batch have not been sent; acknowledgements cannot cover them.
  remove_through_locked(min_acked_locked());
}

bool StatefulWriter::wait_locked(std::unique_lock<std::mutex>& lk, SteadyTime deadline) {
  const auto now = std::chrono::steady_clock::now();
  if (now >= deadline) return false;
  if (!segment_ || shm_readers_ == 0) {
    return space_cv_.wait_until(lk, deadline) == std::cv_status::no_timeout;
  }
  // Readers of the segment acknowledge in shared memory and wake us through its progress word;
  // network acknowledgements bump it too (notify_locked).
  auto& h = segment_->header();
  h.writer_waiting.fetch_add(1, std::memory_order_seq_cst);
  const uint32_t seen = h.progress.load(std::memory_order_seq_cst);
  refresh_local_acks_locked();
  const size_t before = history_.bytes_used();
  release_acked_locked();
  if (history_.bytes_used() == before) {
    lk.unlock();
    shm::futex_wait(h.progress, seen,
                    std::min<Duration>(deadline - now, std::chrono::milliseconds(20)));
    lk.lock();
  }
  h.writer_waiting.fetch_sub(1, std::memory_order_seq_cst);
  const auto after = std::chrono::steady_clock::now();
  reap_dead_readers_locked(after);
  refresh_local_acks_locked();
  release_acked_locked();
  return after < deadline;
}

void StatefulWriter::notify_locked() {
  space_cv_.notify_all();
  if (segment_) shm::signal_progress(segment_->header());
}

}  // namespace pubsub::rtps
