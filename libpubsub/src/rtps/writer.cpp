// StatefulWriter, core: construction, matching, the event thread's timer and stats().
// writer.hpp has the overview of the whole class (which file holds which role, the threads, the
// lock rule).
//
// add_reader()/remove_reader() run on whichever thread discovery matches on (the participant
// holds its entities lock). A new reader gets a ReaderProxy: a volatile one starts after the last
// sample written (join_sn), a durable one (transient-local) gets the whole history, and an
// intra-process reader whose listener takes loans gets a LoanRegistry; what is still in the open
// batch is sent before it joins. A reliable network reader is sent a HEARTBEAT at once. After
// every change recompute_destinations_locked() counts the readers by delivery (which decides
// heartbeats, flow control and the same-host work), collects the shared-memory readers'
// doorbells, and picks the destinations of new data: a multicast group two readers or more
// share, else each reader's unicast locator.
//
// Datagram size: samples are fragmented to fit the transport's datagram (the MTU), except while
// every network reader asks for bigger ones (RemoteReaderInfo::max_datagram: Fast DDS readers,
// which spend their time per datagram): then up to kMaxDatagram, which IP fragments
// (update_max_payload_locked()). Each sample keeps the size it was written with
// (CacheChange::max_payload) through every repair; writer_repair.cpp has the fall-back to the
// transport's size for a reader on a lossy path.
//
// on_timer() runs on the participant's event thread and returns when it next wants to run: it
// flushes a batch older than batching.max_flush_delay, reaps dead shared-memory readers and reads
// their acknowledgements, offers intra-process readers what they refused, sends the rest of paced
// fragment repairs, and sends the periodic HEARTBEAT (every heartbeat_period while a reliable
// network reader has anything unacknowledged; directed, too, to each one that has not answered
// yet). wait_for_readers(), wait_for_acknowledgments() and stats() run on application threads.
//
// State it owns: readers_ (a ReaderProxy per matched reader; each role keeps its own fields of
// it), destinations_, the reader counts (reliable_readers_, local_reliable_, shm_readers_,
// intra_readers_), bells_ and max_payload_, which the other roles read; next_heartbeat_ (the
// periodic HEARTBEAT); and what is set at construction.
#include "rtps/writer.hpp"

#include <algorithm>

#include "rtps/writer_detail.hpp"

namespace pubsub::rtps {
namespace {

// The largest datagram sent to a reader that asks for big ones (RemoteReaderInfo::max_datagram);
// UdpTransport's own limit.
constexpr size_t kMaxDatagram = 65000;
// The congestion window's size at the start (writer_flow.cpp).
constexpr size_t kInitialWindow = 256u << 10;

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
      cwnd_(std::min(kInitialWindow, config.max_unacked_bytes)) {
  if (config.qos.durability >= DurabilityKind::kTransientLocal) {
    durable_ =
        std::make_unique<DurableHistory>(config.qos.history, config.qos.resource_limits.max_samples,
                                         config.qos.resource_limits.max_bytes);
  }
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

std::vector<Guid> StatefulWriter::matched_reader_guids() const {
  std::lock_guard lk(mu_);
  std::vector<Guid> guids;
  guids.reserve(readers_.size());
  for (const auto& r : readers_) guids.push_back(r.info.guid);
  return guids;
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
  if (const SteadyTime at = assert_liveliness_locked(now); at != SteadyTime{}) {
    next = std::min(next, at);
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
