#include "rtps/writer.hpp"

#include <algorithm>
#include <cstring>
#include <thread>

namespace pubsub::rtps {
namespace {

constexpr EntityId kUnknownReader{wire::kEntityIdUnknown};
// Worst-case bytes around a payload in one datagram: RTPS header, INFO_DST, INFO_TS, DATA or
// DATA_FRAG header with inline QoS, padding, and a piggybacked HEARTBEAT + HEARTBEAT_FRAG.
constexpr size_t kDatagramOverhead = 20 + 16 + 12 + 36 + 32 + 4 + 32 + 28;
// The largest datagram sent to a reader that asks for big ones (RemoteReaderInfo::max_datagram);
// UdpTransport's own limit.
constexpr size_t kMaxDatagram = 65000;
constexpr size_t kInitialWindow = 256u << 10;
// A writer blocked on its window repeats its HEARTBEAT after this long without an answer, more
// for readers that answer late on purpose (probe_interval()).
constexpr Duration kMinProbe = std::chrono::milliseconds(2);
// big_repair_due_locked(): how often a reader may ask again for one sample in big datagrams after
// its repair had time to arrive before it gets small ones. Once would be safer on a lossy path
// but sends a saturated Fast DDS reader on a clean one (whose socket buffer drops repairs too)
// to small datagrams in most runs from 1 MiB up (perf/RESULTS.md, "Big datagrams through loss").
constexpr uint32_t kBigRelostMax = 2;
// big_repair_due_locked(): the longest a re-lost sample in big datagrams waits for its next repair.
constexpr auto kBigRepairBackoffMax = std::chrono::milliseconds(500);
constexpr size_t kMinWindow = 16u << 10;
// max_unacked_bytes covers this much acknowledgement delay; a reader answering later raises the
// window's cap in proportion, up to kMaxWindowFactor times (writer.hpp, Flow control).
constexpr auto kAckDelayCovered = std::chrono::milliseconds(1);
constexpr size_t kMaxWindowFactor = 8;
// A reader that asks again for samples repaired less than this long ago has not seen the repair
// yet (a reader answering every HEARTBEAT, as Cyclone's does, asks several times per round
// trip): those are not sent again until the holdoff has passed.
constexpr auto kRepairHoldoff = std::chrono::milliseconds(2);
// With intra-process readers only, what they took is freed once this many samples are held
// (one pass over the readers per group rather than per sample).
constexpr size_t kIntraReleaseEvery = 32;

}  // namespace

size_t StatefulWriter::history_samples(const WriterQos& q) {
  return q.history.kind == HistoryKind::kKeepLast
             ? std::min<size_t>(std::max(q.history.depth, 1), q.resource_limits.max_samples)
             : q.resource_limits.max_samples;
}

WriterHistory StatefulWriter::make_history(const WriterConfig& config,
                                           shm::WriterSegment* segment) {
  const auto& q = config.qos;
  const size_t samples = history_samples(q);
  if (segment) {
    return WriterHistory(samples, q.resource_limits.max_bytes, segment->changes(), segment->ring());
  }
  return WriterHistory(samples, q.resource_limits.max_bytes);
}

StatefulWriter::StatefulWriter(const WriterConfig& config, Transport& transport,
                               const GuidPrefix& local, std::unique_ptr<shm::WriterSegment> segment)
    : config_(config),
      segment_(std::move(segment)),
      transport_(transport),
      local_prefix_(local),
      max_message_(transport.max_message_size()),
      history_(make_history(config, segment_.get())),
      max_payload_(transport_payload()),
      batch_datagram_limit_(transport.batch_message_size() - 64),
      batch_buf_(transport.batch_message_size()),
      send_buf_(transport.max_message_size()),
      repair_message_(std::min(transport.unfragmented_message_size(), send_buf_.size())),
      frag_scratch_(kFragmentBatch * kFragmentScratch),
      cwnd_(std::min(kInitialWindow, config.max_unacked_bytes)) {}

wire::OutgoingInlineQos StatefulWriter::inline_qos(const CacheChange& c) const {
  wire::OutgoingInlineQos q;
  if (c.has_key_hash) q.key_hash = &c.key_hash;
  q.status_info = c.status_info;
  return q;
}

StatefulWriter::ReaderProxy* StatefulWriter::find_locked(const Guid& g) {
  for (auto& r : readers_) {
    if (r.info.guid == g) return &r;
  }
  return nullptr;
}

std::span<const Locator> StatefulWriter::reader_locators(const ReaderProxy& p) const {
  // A view of the proxy's first unicast (else multicast) locator: no copy on the repair path.
  if (!p.info.unicast.empty()) return {p.info.unicast.data(), 1};
  if (!p.info.multicast.empty()) return {p.info.multicast.data(), 1};
  return {};
}

// ---- writing --------------------------------------------------------------------------------

bool StatefulWriter::have_room_locked(size_t size, size_t window) const {
  if (!history_.can_append(size)) return false;
  // Flow control towards reliable readers (a lone oversized sample may always go).
  if (reliable_readers_ > 0 && config_.qos.durability == DurabilityKind::kVolatile &&
      !history_.empty() && history_.bytes_used() + size > window) {
    return false;
  }
  return true;
}

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

bool StatefulWriter::in_big_datagrams(const CacheChange& c) const {
  return c.size > transport_payload() && c.max_payload > transport_payload();
}

// Datagrams above the MTU are sent as IP fragments: one lost packet loses the whole datagram,
// and the incomplete ones fill the reader's reassembly memory until they time out (30 s), so that
// on a lossy path (5 % packet loss) nearly nothing gets through - Fast DDS's own pairs stall so.
// A reader overrunning its socket buffer loses big datagrams too, but their repairs arrive: a
// reader that still misses one sample after kBigRelostMax of its repairs had time to arrive gets
// datagrams of the transport's size from then on (samples already written keep their fragments).
// Returns whether to repair sn now: a sample asked for again is repaired again only after a
// holdoff that doubles with each repair lost (kBigRepairBackoffMax at most). Answering every
// request (a Fast DDS reader asks at each HEARTBEAT) sent each missing fragment about a hundred
// times a second; each copy that loses a packet leaves an incomplete datagram behind, so the
// reader's reassembly memory stayed full and no repair arrived (the kernel drops every fragment
// while it is over net.ipv4.ipfrag_high_thresh) until the writer gave up.
bool StatefulWriter::big_repair_due_locked(ReaderProxy& p, SequenceNumber sn, SteadyTime now) {
  // Its answer to a repair cannot come sooner than this.
  const auto settle = slowest_ack_ + kRepairHoldoff;
  auto& slots = p.big_repairs;
  auto it = std::find_if(slots.begin(), slots.end(), [&](const auto& r) { return r.sn == sn; });
  if (it == slots.end()) {  // a first repair: in place of the oldest
    it = std::min_element(slots.begin(), slots.end(),
                          [](const auto& a, const auto& b) { return a.at < b.at; });
    *it = {sn, now, 0};
    return true;
  }
  const auto holdoff = std::min<Duration>(settle * (Duration::rep{1} << std::min(it->again, 10u)),
                                          kBigRepairBackoffMax);
  if (now - it->at <= holdoff) {  // asked before the repair could have arrived, or backing off
    stats_.repairs_held_back++;
    return false;
  }
  it->at = now;
  if (++it->again >= kBigRelostMax && big_datagram_reader(p)) {
    p.info.max_datagram = 0;
    update_max_payload_locked();
    stats_.datagram_fallbacks++;
  }
  return true;
}

Duration StatefulWriter::probe_interval() const {
  // Twice the slowest reader's deliberate delay (Fast DDS: 5 ms), at least kMinProbe.
  return std::max<Duration>(kMinProbe, 2 * slowest_ack_ + kMinProbe);
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

namespace {
// The writer whose deliver_intra_locked() runs on this thread (its lock is held): a listener
// releasing a loan there must not take that lock again.
thread_local const StatefulWriter* t_delivering = nullptr;
}  // namespace

void StatefulWriter::on_loans_released() {
  if (t_delivering == this) {
    loans_released_.store(true, std::memory_order_relaxed);  // picked up after the delivery
    return;
  }
  std::lock_guard lk(mu_);
  release_acked_locked();
  notify_locked();
}

void StatefulWriter::publish_locked() {
  segment_->publish(history_.last_sn(), first_held_locked());
  for (auto* bell : bells_) shm::ring(*bell);
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

void StatefulWriter::flush() {
  std::lock_guard lk(mu_);
  flush_batch_locked(true);
}

void StatefulWriter::send_new_locked(const CacheChange& c, bool may_pace) {
  if (destinations_.empty()) return;
  const auto& batching = config_.qos.batching;
  const auto qos = inline_qos(c);
  const size_t need = wire::MessageBuilder::data_overhead(qos) + c.size;
  // As RTI's batch size: a sample of at least max_bytes goes alone, and a batch is flushed once
  // its samples' bytes reach max_bytes. Independently the datagram, headers included, stays
  // within the transport's message size: a sample that would overflow it starts a new batch.
  if (batching.enabled && c.size < batching.max_bytes &&
      need + wire::kHeaderSize <= batch_datagram_limit_) {
    append_to_batch_locked(c, qos, need);
    return;
  }
  flush_batch_locked(false);
  if (c.size <= c.max_payload) {
    send_whole_locked(c, destinations_, nullptr, heartbeat_due_locked());
  } else if (may_pace && pacer_.active() && reliable_readers_ > 0 && paced_size(c.size)) {
    partial_ = {c.sn, 1};  // the writing thread sends it run by run (finish_partial_locked)
  } else {
    send_fragments_locked(c, destinations_, nullptr, 1, fragment_count(c),
                          sample_heartbeat_due_locked(c));
  }
}

void StatefulWriter::append_to_batch_locked(const CacheChange& c,
                                            const wire::OutgoingInlineQos& qos, size_t need) {
  const auto& batching = config_.qos.batching;
  if (batch_size_ && batch_size_ + need > batch_datagram_limit_) flush_batch_locked(false);
  wire::MessageBuilder b(batch_buf_.data(), batch_buf_.size());
  if (batch_size_ == 0) {
    b.header(local_prefix_);
    batch_opened_ = std::chrono::steady_clock::now();
  } else {
    b.truncate(batch_size_);
  }
  b.info_ts(c.timestamp);
  b.data(kUnknownReader, config_.guid.entity, c.sn, qos, history_.data(c), c.size, nullptr, 0,
         c.status_info != 0 && c.size > 0);
  batch_size_ = b.size();
  batch_payload_ += c.size;
  bytes_since_heartbeat_ += c.size;
  samples_since_heartbeat_++;
  if (++batch_samples_ >= batching.max_samples || batch_payload_ >= batching.max_bytes) {
    flush_batch_locked(false);
  }
}

void StatefulWriter::flush_batch_locked(bool with_heartbeat) {
  if (batch_size_ == 0) return;
  if (reliable_readers_ > 0 && (with_heartbeat || heartbeat_due_locked())) {
    wire::MessageBuilder b(batch_buf_.data(), batch_buf_.size());
    b.truncate(batch_size_);
    if (put_heartbeat_locked(b, nullptr, history_.last_sn(), true)) batch_size_ = b.size();
  }
  const ConstBuffer part{batch_buf_.data(), batch_size_};
  transport_.send(destinations_, {&part, 1});
  stats_.datagrams_sent += destinations_.size();
  batch_size_ = 0;
  batch_samples_ = 0;
  batch_payload_ = 0;
}

SequenceNumber StatefulWriter::sent_last_locked() const {
  // A sample still being sent run by run is not announced until its last fragment is out.
  return history_.last_sn() - static_cast<SequenceNumber>(batch_samples_) - (partial_.sn ? 1 : 0);
}

// One rate decrease per loss episode: a loss of data sent before the previous decrease (the same
// sample asked for again, say) is the same episode.
void StatefulWriter::pace_after_loss_locked(SequenceNumber lost, SteadyTime now) {
  if (lost <= pacer_recovery_sn_) return;
  pacer_.on_loss(now);
  pacer_recovery_sn_ = history_.last_sn();
  stats_.pacing_cuts++;
}

void StatefulWriter::wait_no_partial_locked(std::unique_lock<std::mutex>& lk) {
  space_cv_.wait(lk, [&] { return partial_.sn == 0; });
}

void StatefulWriter::finish_partial_locked(std::unique_lock<std::mutex>& lk) {
  while (partial_.sn) {
    // Repairs go first: a reader may not ask again for long (see send_frag_repair_locked).
    if (const SteadyTime more = continue_repairs_locked(std::chrono::steady_clock::now());
        more != SteadyTime{}) {
      lk.unlock();
      std::this_thread::sleep_until(more);
      lk.lock();
      continue;
    }
    const CacheChange* c = history_.find(partial_.sn);
    if (!c || destinations_.empty()) break;  // no longer wanted (readers gone)
    const uint32_t total = fragment_count(*c);
    const uint32_t last = std::min<uint32_t>(total, partial_.next + kFragmentBatch - 1);
    const size_t end = std::min<size_t>(c->size, size_t{last} * fragment_size(*c));
    const size_t bytes = end - size_t{partial_.next - 1} * fragment_size(*c);
    const auto wait = pacer_.reserve(bytes, std::chrono::steady_clock::now());
    if (wait > Duration::zero()) {
      lk.unlock();
      std::this_thread::sleep_for(wait);
      lk.lock();
      c = history_.find(partial_.sn);
      if (!c || destinations_.empty()) break;
    }
    const bool final_run = last == total;
    const bool heartbeat = final_run && sample_heartbeat_due_locked(*c);
    send_fragments_locked(*c, destinations_, nullptr, partial_.next, last, heartbeat);
    partial_.next = last + 1;
    if (final_run) break;
  }
  partial_ = {};
  space_cv_.notify_all();  // writes waiting for this sample to be out
}

// After a fragmented sample: when one is due, and always after a sample of a third of the window
// or more (HEARTBEAT_FRAG alone has a Cyclone reader ask for missing fragments only after its
// NackDelay, 100 ms).
bool StatefulWriter::sample_heartbeat_due_locked(const CacheChange& c) const {
  return paced_size(c.size) || heartbeat_due_locked();
}

bool StatefulWriter::heartbeat_due_locked() const {
  if (reliable_readers_ == 0) return false;
  const size_t max_samples = history_.max_samples();
  // One per half window: the point where a blocked writer resumes (see write()).
  return bytes_since_heartbeat_ >= cwnd_ / 2 || samples_since_heartbeat_ >= max_samples / 4 ||
         !history_.can_append(max_payload_);
}

void StatefulWriter::send_whole_locked(const CacheChange& c, std::span<const Locator> to,
                                       const ReaderProxy* directed, bool heartbeat) {
  wire::MessageBuilder b(scratch_, sizeof scratch_);
  b.header(local_prefix_);
  if (directed) b.info_dst(directed->info.guid.prefix);
  b.info_ts(c.timestamp);
  const EntityId reader = directed ? directed->info.guid.entity : kUnknownReader;
  b.data_header(reader, config_.guid.entity, c.sn, inline_qos(c), c.size,
                c.status_info != 0 && c.size > 0);
  const size_t head = b.size();
  // Padding and a piggybacked heartbeat follow the payload.
  uint8_t* tail = scratch_ + head;
  const size_t pad = wire::MessageBuilder::padding(c.size);
  std::memset(tail, 0, pad);
  size_t tail_size = pad;
  if (heartbeat && reliable_readers_ > 0) {
    wire::MessageBuilder hb(tail + pad, sizeof scratch_ - head - pad);
    put_heartbeat_locked(hb, directed, history_.last_sn(), true);
    tail_size += hb.size();
  } else if (!directed) {
    bytes_since_heartbeat_ += c.size;
    samples_since_heartbeat_++;
  }
  const ConstBuffer parts[3] = {{scratch_, head}, {history_.data(c), c.size}, {tail, tail_size}};
  transport_.send(to, parts);
  stats_.datagrams_sent += to.size();
}

void StatefulWriter::send_fragments_locked(const CacheChange& c, std::span<const Locator> to,
                                           const ReaderProxy* directed, uint32_t first,
                                           uint32_t last, bool heartbeat) {
  const EntityId reader = directed ? directed->info.guid.entity : kUnknownReader;
  const auto qos = inline_qos(c);
  // Up to kFragmentBatch fragments leave in one send_many (one sendmmsg per destination); their
  // headers and tails are built side by side in frag_scratch_.
  ConstBuffer parts[kFragmentBatch][3];
  std::span<const ConstBuffer> datagrams[kFragmentBatch];
  size_t n = 0;
  size_t sent_bytes = 0;
  const auto began = std::chrono::steady_clock::now();
  auto send = [&] {
    if (n == 0) return;
    transport_.send_many(to, {datagrams, n});
    stats_.datagrams_sent += n * to.size();
    n = 0;
  };
  const uint32_t total = fragment_count(c);
  const uint32_t frag_size = fragment_size(c);
  for (uint32_t f = first; f <= last; ++f) {
    const size_t begin = size_t{f - 1} * frag_size;
    const size_t len = std::min<size_t>(frag_size, c.size - begin);
    uint8_t* area = frag_scratch_.data() + n * kFragmentScratch;
    wire::MessageBuilder b(area, kFragmentScratch);
    b.header(local_prefix_);
    if (directed) b.info_dst(directed->info.guid.prefix);
    b.info_ts(c.timestamp);
    // Inline QoS (key hash) travels with the first fragment only.
    b.data_frag_header(reader, config_.guid.entity, c.sn, f == 1 ? qos : wire::OutgoingInlineQos{},
                       f, 1, static_cast<uint16_t>(frag_size), c.size, len);
    const size_t head = b.size();
    uint8_t* tail = area + head;
    const size_t pad = wire::MessageBuilder::padding(len);
    std::memset(tail, 0, pad);
    size_t tail_size = pad;
    if (!directed) bytes_since_heartbeat_ += len;
    if (!directed && f < total && reliable_readers_ > 0 && bytes_since_heartbeat_ >= cwnd_ / 2) {
      // Half a window within one sample: a HEARTBEAT for the samples before it, so that a
      // reader's answer can come (and show whether it waited on purpose) while this one is sent.
      wire::MessageBuilder hb(tail + pad, kFragmentScratch - head - pad);
      put_heartbeat_locked(hb, nullptr, c.sn - 1, true);
      tail_size += hb.size();
    } else if (f == last && reliable_readers_ > 0 && (directed || last == total)) {
      // HEARTBEAT_FRAG after every fragmented sample (a reader missing fragments asks for them
      // at once; a complete one stays silent); a HEARTBEAT only when one is due.
      wire::MessageBuilder hb(tail + pad, kFragmentScratch - head - pad);
      hb.heartbeat_frag(reader, config_.guid.entity, c.sn, fragment_count(c),
                        ++heartbeat_frag_count_);
      // A repair may go out while a new sample is half sent: announce only what is out.
      if (heartbeat) {
        put_heartbeat_locked(hb, directed, directed ? sent_last_locked() : history_.last_sn(),
                             true);
      }
      tail_size += hb.size();
    }
    sent_bytes += len;
    parts[n][0] = {area, head};
    parts[n][1] = {history_.data(c) + begin, len};
    parts[n][2] = {tail, tail_size};
    datagrams[n] = {parts[n], 3};
    if (++n == kFragmentBatch) send();
  }
  send();
  pacer_.note_sent(sent_bytes, began, std::chrono::steady_clock::now());
  if (!directed && !heartbeat && last == total) samples_since_heartbeat_++;
}

void StatefulWriter::send_heartbeat_locked(std::span<const Locator> to,
                                           const ReaderProxy* directed) {
  if (to.empty()) return;
  wire::MessageBuilder b(scratch_, sizeof scratch_);
  b.header(local_prefix_);
  if (directed) b.info_dst(directed->info.guid.prefix);
  put_heartbeat_locked(b, directed, sent_last_locked(), true);
  const ConstBuffer part{scratch_, b.size()};
  transport_.send(to, {&part, 1});
  stats_.datagrams_sent += to.size();
}

bool StatefulWriter::put_heartbeat_locked(wire::MessageBuilder& b, const ReaderProxy* directed,
                                          SequenceNumber last, bool due_reset) {
  const EntityId reader = directed ? directed->info.guid.entity : kUnknownReader;
  if (!b.heartbeat(reader, config_.guid.entity, std::min(first_held_locked(), last + 1), last,
                   ++heartbeat_count_, false)) {
    return false;
  }
  heartbeat_sent_locked(directed, due_reset, last);
  return true;
}

void StatefulWriter::heartbeat_sent_locked(const ReaderProxy* directed, bool due_reset,
                                           SequenceNumber announced) {
  stats_.heartbeats_sent++;
  if (due_reset) {
    bytes_since_heartbeat_ = 0;
    samples_since_heartbeat_ = 0;
  }
  SteadyTime now{};  // read once, and only when a clock starts
  for (auto& r : readers_) {
    if (!r.network() || !r.info.reliable || (directed && &r != directed)) continue;
    if (r.hb_since == SteadyTime{}) {
      if (now == SteadyTime{}) now = std::chrono::steady_clock::now();
      r.hb_since = now;
      r.hb_clean = r.acked >= r.hb_last;
      r.hb_announced = announced;
    }
    r.hb_last = announced;
  }
}

void StatefulWriter::ack_delay_locked(ReaderProxy& p, SequenceNumber acked_through,
                                      SteadyTime now) {
  if (p.hb_since == SteadyTime{}) return;
  const auto d = std::chrono::duration_cast<std::chrono::nanoseconds>(now - p.hb_since);
  p.hb_since = {};
  // Only an answer held back by design: one that acknowledges data sent after the HEARTBEAT. A
  // reader working through a queue in its socket buffer answers as it reaches the HEARTBEAT;
  // that delay is its queue's, which a larger window would only lengthen.
  if (!p.hb_clean || d.count() < 0 || acked_through <= p.hb_announced) return;
  p.ack_delay = p.ack_delay.count() == 0 ? d : (3 * p.ack_delay + d) / 4;
  std::chrono::nanoseconds longest{0};
  for (const auto& r : readers_) {
    if (r.network() && r.info.reliable && !r.info.queued_answers) {
      longest = std::max(longest, r.ack_delay);
    }
  }
  if (longest == slowest_ack_) return;
  slowest_ack_ = longest;
  update_wrap_ahead_locked();  // window_cap() follows slowest_ack_
}

// A reader missing data it was sent: treat it as congestion, once per window of data - halve the
// window, or take a fifth off for a reader of big datagrams (Fast DDS: its answers come 5 ms
// late, so the window regrows slowly, and its socket buffer is not the 1 MB of a Cyclone reader,
// which needs the halving).
void StatefulWriter::cut_window_locked(const ReaderProxy& p, SequenceNumber lost,
                                       SequenceNumber sent_last) {
  if (lost <= recovery_sn_ || lost <= p.join_sn) return;
  // Never below two samples of the size lost: one going out while the other is acknowledged.
  // With room for one only, a writer of big samples (a third of max_unacked_bytes at most, or the
  // pacer would have them) would wait a round trip and the reader's whole processing of each.
  // Within the cap: two of the pacer's samples may not fit.
  const CacheChange* c = history_.find(lost);
  const size_t floor = std::min(window_cap(), std::max<size_t>(kMinWindow, c ? 2 * c->size : 0));
  cwnd_ = std::max(floor, big_datagram_reader(p) ? cwnd_ / 5 * 4 : cwnd_ / 2);
  recovery_sn_ = sent_last;
  had_loss_ = true;
}

size_t StatefulWriter::window_cap() const {
  const size_t base = config_.max_unacked_bytes;
  const double scale = std::chrono::duration<double>(slowest_ack_) / kAckDelayCovered;
  return std::clamp(static_cast<size_t>(static_cast<double>(base) * scale), base,
                    base * kMaxWindowFactor);
}

// ---- repair ---------------------------------------------------------------------------------

SequenceNumber StatefulWriter::retransmit_locked(ReaderProxy& p,
                                                 std::span<const SequenceNumber> sns,
                                                 SteadyTime now) {
  const auto to = reader_locators(p);
  if (to.empty()) return 0;
  SequenceNumber highest = 0;
  wire::MessageBuilder b(send_buf_.data(), repair_message_);
  auto start = [&] {
    b.truncate(0);
    b.header(local_prefix_);
    b.info_dst(p.info.guid.prefix);
  };
  auto send = [&] {
    if (b.size() <= wire::kHeaderSize + 16) return;
    const ConstBuffer part{send_buf_.data(), b.size()};
    transport_.send(to, {&part, 1});
    stats_.datagrams_sent += to.size();
    start();
  };
  start();
  const EntityId reader = p.info.guid.entity;
  // Irrelevant sequence numbers go out as GAPs, one per run.
  SequenceNumber gap_begin = 0, gap_end = 0;
  auto flush_gap = [&] {
    if (!gap_begin) return;
    wire::NumberSet list;
    list.base = gap_end + 1;
    if (!b.gap(reader, config_.guid.entity, gap_begin, list)) {
      send();
      b.gap(reader, config_.guid.entity, gap_begin, list);
    }
    stats_.gaps_sent++;
    gap_begin = gap_end = 0;
  };
  // At most one congestion window of repair per request: what is left is asked for again at
  // the next heartbeat, instead of overrunning a receiver that is already losing data.
  size_t budget = cwnd_;
  for (SequenceNumber sn : sns) {
    const CacheChange* c = history_.find(sn);
    const bool irrelevant = !c || (!p.info.durable && sn <= p.join_sn);
    if (!irrelevant && budget == 0) continue;
    highest = sn;
    if (irrelevant) {
      if (gap_begin && sn == gap_end + 1) {
        gap_end = sn;
      } else {
        flush_gap();
        gap_begin = gap_end = sn;
      }
      continue;
    }
    flush_gap();
    if (in_big_datagrams(*c) && !big_repair_due_locked(p, sn, now)) continue;
    stats_.samples_retransmitted++;
    budget -= std::min<size_t>(budget, c->size);
    if (c->size > c->max_payload) {
      send();
      send_fragments_locked(*c, to, &p, 1, fragment_count(*c), false);
      continue;
    }
    if (c->size + kDatagramOverhead > repair_message_) {  // a big datagram: gathered, not copied
      send();
      send_whole_locked(*c, to, &p, false);
      continue;
    }
    const auto qos = inline_qos(*c);
    const size_t need = 12 + 24 + (qos.empty() ? 0 : qos.encoded_size()) + c->size + 3;
    if (b.remaining() < need + 32) send();
    b.info_ts(c->timestamp);
    b.data(reader, config_.guid.entity, c->sn, qos, history_.data(*c), c->size, nullptr, 0,
           c->status_info != 0 && c->size > 0);
  }
  flush_gap();
  if (b.remaining() < 32) send();
  put_heartbeat_locked(b, &p, sent_last_locked(), false);
  send();
  return highest;
}

void StatefulWriter::on_acknack(const GuidPrefix& source, const wire::AckNackSubmessage& m,
                                SteadyTime now) {
  std::lock_guard lk(mu_);
  ReaderProxy* p = find_locked(Guid{source, m.reader_id});
  if (!p || !p->info.reliable) return;
  stats_.acknacks_received++;
  answers_++;
  if (!p->network()) {
    // A reader we meant to serve locally talks RTPS to us: it could not (or chose not to)
    // read from shared memory or in-process. Serve it over the network from now on.
    p->info.delivery = Delivery::kNetwork;
    p->info.local.reset();
    p->info.doorbell.reset();
    p->gone = false;
    recompute_destinations_locked();
  }
  if (p->has_count && static_cast<int32_t>(m.count - p->last_acknack_count) <= 0) return;
  p->has_count = true;
  p->last_acknack_count = m.count;
  ack_delay_locked(*p, m.set.base - 1, now);
  const bool first_ack = !p->synced;
  p->synced = true;
  const SequenceNumber sent_last = sent_last_locked();
  const SequenceNumber acked = std::min<SequenceNumber>(m.set.base - 1, sent_last);
  if (acked > p->acked) p->acked = acked;
  SequenceNumber nacks[256];
  size_t n = 0;
  const SequenceNumber in_flight = now - p->repaired_at < kRepairHoldoff ? p->repaired_hi : 0;
  for (uint32_t i = 0; i < m.set.num_bits; ++i) {
    const SequenceNumber sn = m.set.base + i;
    if (sn > sent_last) break;
    if (m.set.test(i) && sn > in_flight) nacks[n++] = sn;
  }
  if (n > 0) {
    cut_window_locked(*p, nacks[0], sent_last);
    for (size_t i = 0; i < n; ++i) {  // a sample the pacer spreads was lost: pace
      const CacheChange* c = history_.find(nacks[i]);
      if (c && paced_size(c->size) && nacks[i] > p->join_sn) {
        pace_after_loss_locked(nacks[i], now);
        break;
      }
    }
    if (const SequenceNumber hi = retransmit_locked(*p, {nacks, n}, now)) {
      p->repaired_hi = hi;
      p->repaired_at = now;
    }
  } else if (first_ack || (m.set.base == 1 && m.set.num_bits == 0 && !m.final)) {
    send_heartbeat_locked(reader_locators(*p), p);
  }
  const size_t before = history_.bytes_used();
  release_acked_locked();
  const size_t released = before - history_.bytes_used();
  if (released) {
    // After a loss, additive increase: one full datagram per window's worth of acknowledgements.
    const size_t grow =
        had_loss_ ? std::max<size_t>(1, released * send_buf_.size() / std::max<size_t>(cwnd_, 1))
                  : released;
    cwnd_ = std::min(window_cap(), cwnd_ + grow);
    pacer_.on_acked(released, now);
  }
  notify_locked();
}

SteadyTime StatefulWriter::on_nack_frag(const GuidPrefix& source, const wire::NackFragSubmessage& m,
                                        SteadyTime now) {
  std::lock_guard lk(mu_);
  ReaderProxy* p = find_locked(Guid{source, m.reader_id});
  if (!p || !p->info.reliable) return {};
  if (p->has_nackfrag_count && static_cast<int32_t>(m.count - p->last_nackfrag_count) <= 0) {
    return {};
  }
  p->has_nackfrag_count = true;
  answers_++;
  p->last_nackfrag_count = m.count;
  const CacheChange* c = history_.find(m.sn);
  if (!c || (!p->info.durable && m.sn <= p->join_sn)) {
    const SequenceNumber sn = m.sn;
    retransmit_locked(*p, {&sn, 1}, now);  // becomes a GAP
    return {};
  }
  if (in_big_datagrams(*c) && !big_repair_due_locked(*p, m.sn, now)) {
    return {};
  }
  // Fragments of a sample the window cannot pace went missing: the pacer takes over (pacer.hpp);
  // of one it governs, in datagrams of the MTU, the window shrinks as for a whole sample lost (a
  // burst overran the reader's socket buffer). Not in big datagrams: a Fast DDS reader loses one
  // now and then however small the window, and cutting for those cost it about a tenth of its
  // rate at 1 MiB (perf/RESULTS.md, "1 MiB into Cyclone readers").
  if (paced_size(c->size)) {
    pace_after_loss_locked(m.sn, now);
  } else if (!in_big_datagrams(*c)) {
    cut_window_locked(*p, m.sn, sent_last_locked());
  }
  // Every fragment asked for goes out (a newer request replaces what is left of an older one):
  // what the pacer lets go now, at least a run, and the rest at its rate (continue_repairs_locked)
  // - before any new data.
  p->frag_repair = {m.sn, m.fragments, 0};
  const size_t run = size_t{kFragmentBatch} * fragment_size(*c);
  const size_t budget = pacer_.active() ? std::max(pacer_.available(now), run) : SIZE_MAX;
  return send_frag_repair_locked(*p, *c, budget, now);
}

SteadyTime StatefulWriter::continue_repairs_locked(SteadyTime now) {
  SteadyTime next{};
  for (auto& r : readers_) {
    if (!r.frag_repair.sn) continue;
    const SteadyTime again = continue_frag_repair_locked(r, now);
    if (again != SteadyTime{} && (next == SteadyTime{} || again < next)) next = again;
  }
  return next;
}

SteadyTime StatefulWriter::continue_frag_repair_locked(ReaderProxy& p, SteadyTime now) {
  const CacheChange* c = history_.find(p.frag_repair.sn);
  if (!c) {
    p.frag_repair.sn = 0;  // acknowledged meanwhile (or gone): nothing left to repair
    return {};
  }
  // Wait for the pacer's credit for a run (or what is left, if less).
  const size_t run =
      size_t{fragment_size(*c)} * std::min<size_t>(kFragmentBatch / 2, frag_repair_left(p, *c));
  const auto wait = pacer_.until_available(run, now);
  if (wait > Duration::zero()) return now + wait;
  return send_frag_repair_locked(p, *c, pacer_.available(now), now);
}

uint32_t StatefulWriter::frag_repair_end(const ReaderProxy& p, const CacheChange& c) const {
  const auto& r = p.frag_repair;
  const uint32_t total = fragment_count(c);
  uint32_t end = r.frags.num_bits;
  while (end > r.next && !(r.frags.test(end - 1) && r.frags.base + end - 1 <= total)) --end;
  return end;
}

size_t StatefulWriter::frag_repair_left(const ReaderProxy& p, const CacheChange& c) const {
  size_t n = 0;
  const uint32_t end = frag_repair_end(p, c);
  for (uint32_t i = p.frag_repair.next; i < end; ++i) n += p.frag_repair.frags.test(i);
  return n;
}

// Sends up to `budget` bytes (at least one fragment) of p's pending fragment repair, run by
// run, from its cursor. The request's last run ends with HEARTBEAT_FRAG + HEARTBEAT, so that the
// reader asks for whatever is still missing right away - only then: a Cyclone reader asks again
// for fragments overlapping its previous request only after its NackDelay (100 ms), so a
// HEARTBEAT before all of them went out would only cost that. Returns when to go on (epoch:
// done).
SteadyTime StatefulWriter::send_frag_repair_locked(ReaderProxy& p, const CacheChange& c,
                                                   size_t budget, SteadyTime now) {
  auto& r = p.frag_repair;
  const auto to = reader_locators(p);
  const uint32_t frag_size = fragment_size(c);
  const uint32_t end = frag_repair_end(p, c);
  const uint32_t base = static_cast<uint32_t>(r.frags.base);
  size_t left = std::max<size_t>(1, budget / frag_size);
  size_t sent = 0;
  uint32_t i = r.next;
  while (i < end && left > 0) {
    if (!r.frags.test(i) || base + i < 1) {
      ++i;
      continue;
    }
    uint32_t j = i;  // the run [i, j]
    --left;
    while (left > 0 && j + 1 < end && r.frags.test(j + 1)) {
      ++j;
      --left;
    }
    send_fragments_locked(c, to, &p, base + i, base + j, j + 1 == end);
    sent += j - i + 1;
    i = j + 1;
  }
  r.next = i;
  stats_.fragments_retransmitted += sent;
  // What was repaired delays new data (repairs do not wait themselves).
  (void)pacer_.reserve(sent * frag_size, now);
  if (i < end && !to.empty()) return now + pacer_.until_available(frag_size, now);
  r.sn = 0;
  return {};
}

SequenceNumber StatefulWriter::min_acked_locked() const {
  SequenceNumber m = history_.last_sn();
  for (const auto& r : readers_) {
    if (r.holds_history()) m = std::min(m, r.effective_acked());
  }
  return m;
}

// Network readers only: this decides the periodic HEARTBEATs.
bool StatefulWriter::anything_unacked_locked() const {
  for (const auto& r : readers_) {
    if (r.network() && r.info.reliable && (r.acked < history_.last_sn() || !r.synced)) {
      return true;
    }
  }
  return false;
}

void StatefulWriter::release_acked_locked() {
  if (config_.qos.durability == DurabilityKind::kTransientLocal) return;
  // Samples still in the open batch have not been sent; acknowledgements cannot cover them.
  remove_through_locked(min_acked_locked());
}

// ---- matching -------------------------------------------------------------------------------

void StatefulWriter::recompute_destinations_locked() {
  destinations_.clear();
  reliable_readers_ = local_reliable_ = shm_readers_ = intra_readers_ = 0;
  bells_.clear();
  std::vector<std::pair<Locator, int>> groups;
  for (const auto& r : readers_) {
    if (!r.network()) {
      if (r.info.reliable) local_reliable_++;
      if (r.info.delivery == Delivery::kIntraProcess) {
        intra_readers_++;
        continue;
      }
      shm_readers_++;
      auto* bell = &r.info.doorbell->header();
      if (std::find(bells_.begin(), bells_.end(), bell) == bells_.end()) bells_.push_back(bell);
      continue;
    }
    if (r.info.reliable) reliable_readers_++;
    for (const auto& l : r.info.multicast) {
      auto it = std::find_if(groups.begin(), groups.end(), [&](auto& g) { return g.first == l; });
      if (it == groups.end()) {
        groups.emplace_back(l, 1);
      } else {
        it->second++;
      }
    }
  }
  auto add = [&](const Locator& l) {
    if (std::find(destinations_.begin(), destinations_.end(), l) == destinations_.end()) {
      destinations_.push_back(l);
    }
  };
  for (const auto& r : readers_) {
    if (!r.network()) continue;
    const Locator* chosen = nullptr;
    for (const auto& l : r.info.multicast) {
      auto it = std::find_if(groups.begin(), groups.end(), [&](auto& g) { return g.first == l; });
      if (it->second >= 2) {
        chosen = &l;
        break;
      }
    }
    if (!chosen && !r.info.unicast.empty()) chosen = &r.info.unicast.front();
    if (!chosen && !r.info.multicast.empty()) chosen = &r.info.multicast.front();
    if (chosen) add(*chosen);
  }
  update_max_payload_locked();
  update_wrap_ahead_locked();
}

// The history may wrap early (history.hpp) only where the flow-control window bounds what it
// takes before its oldest samples are acknowledged: KEEP_ALL, volatile, reliable network
// readers and no same-host readers (whose holds are not windowed).
void StatefulWriter::update_wrap_ahead_locked() {
  const bool windowed = config_.qos.history.kind == HistoryKind::kKeepAll &&
                        config_.qos.durability == DurabilityKind::kVolatile &&
                        reliable_readers_ > 0 && shm_readers_ == 0 && intra_readers_ == 0;
  // The slack covers the rounding of payloads to 8 bytes.
  history_.set_wrap_ahead(windowed ? window_cap() + 4096 : 0);
}

size_t StatefulWriter::transport_payload() const {
  return max_message_ - kDatagramOverhead;
}

void StatefulWriter::update_max_payload_locked() {
  size_t datagram = 0;  // the smallest any network reader takes
  for (const auto& r : readers_) {
    if (!r.network()) continue;
    const size_t d =
        r.info.max_datagram ? std::min(r.info.max_datagram, kMaxDatagram) : max_message_;
    datagram = datagram ? std::min(datagram, d) : d;
  }
  max_payload_ = (datagram ? datagram : max_message_) - kDatagramOverhead;
}

void StatefulWriter::add_reader(const RemoteReaderInfo& info, SteadyTime now) {
  std::lock_guard lk(mu_);
  ReaderProxy* p = find_locked(info.guid);
  if (p) {
    if (p->info.delivery != info.delivery) {
      p->slot = -1;
      p->gone = false;
    }
    p->info = info;
  } else {
    // Anything still in the open batch is sent after this point, so it is for the new reader.
    flush_batch_locked(false);
    ReaderProxy r;
    r.info = info;
    const bool durable = info.durable && config_.qos.durability == DurabilityKind::kTransientLocal;
    r.info.durable = durable;
    r.join_sn = durable ? 0 : history_.last_sn();
    r.acked = r.join_sn;
    // In-process readers are there at once; shared-memory ones once they claim a slot.
    r.synced = info.delivery == Delivery::kIntraProcess;
    if (info.delivery == Delivery::kIntraProcess && info.local->config().loans) {
      r.loans.registry = std::make_shared<detail::LoanRegistry>([w = weak_from_this()] {
        if (auto self = w.lock()) self->on_loans_released();
      });
      r.loans.anchor = weak_from_this();  // a loan points into this writer's history
    }
    readers_.push_back(std::move(r));
    p = &readers_.back();
  }
  recompute_destinations_locked();
  if (p->info.reliable && p->network()) {
    send_heartbeat_locked(reader_locators(*p), p);
    next_heartbeat_ = now + config_.qos.heartbeat_period;
  }
  notify_locked();
}

void StatefulWriter::remove_reader(const Guid& g) {
  std::lock_guard lk(mu_);
  readers_.erase(std::remove_if(readers_.begin(), readers_.end(),
                                [&](const ReaderProxy& r) { return r.info.guid == g; }),
                 readers_.end());
  recompute_destinations_locked();
  release_acked_locked();
  notify_locked();
}

size_t StatefulWriter::matched_readers() const {
  std::lock_guard lk(mu_);
  return readers_.size();
}

bool StatefulWriter::wait_for_readers(size_t n, SteadyTime deadline) {
  std::unique_lock lk(mu_);
  auto ready = [&] {
    refresh_local_acks_locked();
    size_t k = 0;
    for (const auto& r : readers_) k += (!r.info.reliable || r.synced);
    return k >= n;
  };
  while (!ready()) {
    if (!wait_locked(lk, deadline)) return ready();
  }
  return true;
}

bool StatefulWriter::wait_for_acknowledgments(SteadyTime deadline) {
  std::unique_lock lk(mu_);
  flush_batch_locked(true);
  auto done = [&] {
    refresh_local_acks_locked();
    for (const auto& r : readers_) {
      if (r.holds_history() && r.effective_acked() < history_.last_sn()) return false;
    }
    return true;
  };
  while (!done()) {
    if (!wait_locked(lk, deadline)) return done();
  }
  return true;
}

SteadyTime StatefulWriter::on_timer(SteadyTime now) {
  std::lock_guard lk(mu_);
  SteadyTime next = now + std::chrono::seconds(1);
  if (batch_size_) {
    const auto due = batch_opened_ + config_.qos.batching.max_flush_delay;
    if (now >= due) {
      flush_batch_locked(false);
    } else {
      next = std::min(next, due);
    }
  }
  if (segment_ && shm_readers_) {
    reap_dead_readers_locked(now);
    refresh_local_acks_locked();
    const size_t before = history_.bytes_used();
    release_acked_locked();
    if (history_.bytes_used() != before) notify_locked();
  }
  if (intra_readers_) {
    const size_t before = history_.bytes_used();
    if (deliver_intra_locked()) next = std::min(next, now + std::chrono::milliseconds(2));
    release_acked_locked();
    if (history_.bytes_used() != before) notify_locked();
  }
  if (const SteadyTime more = continue_repairs_locked(now); more != SteadyTime{}) {
    next = std::min(next, more);
  }
  if (reliable_readers_ > 0 && anything_unacked_locked()) {
    if (now >= next_heartbeat_) {
      send_heartbeat_locked(destinations_, nullptr);
      for (auto& r : readers_) {
        if (r.network() && r.info.reliable && !r.synced) {
          send_heartbeat_locked(reader_locators(r), &r);
        }
      }
      next_heartbeat_ = now + config_.qos.heartbeat_period;
    }
    next = std::min(next, next_heartbeat_);
  } else {
    next_heartbeat_ = now + config_.qos.heartbeat_period;
  }
  return next;
}

WriterStats StatefulWriter::stats() const {
  std::lock_guard lk(mu_);
  WriterStats s = stats_;
  s.matched_readers = readers_.size();
  s.history_samples = history_.size();
  s.history_bytes = history_.bytes_used();
  s.window_bytes = cwnd_;
  s.window_cap_bytes = window_cap();
  s.pacing_rate = static_cast<uint64_t>(pacer_.rate());
  s.ack_delay_us = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(slowest_ack_).count());
  return s;
}

}  // namespace pubsub::rtps
