// ParticipantImpl, receive path: from a datagram to the local readers and writers.
// participant_impl.hpp has the overview of the whole class (what lives in which file, who owns
// what, which thread runs what, the lock order).
//
// Runs on the transport's receive workers. on_datagram(worker, ...) hands the datagram to that
// worker's own ReceiveWorker, which renews the sender's lease, loads the current Routes snapshot
// (when it changed since the worker's last datagram: RoutesCell), decodes the message and, as its
// wire::Visitor, routes each submessage addressed to us (for_us(): no INFO_DST, or ours):
// - builtin entity ids -> Discovery (SPDP, SEDP);
// - DATA, DATA_FRAG, HEARTBEAT, GAP, HEARTBEAT_FRAG -> the local readers matched over the network
//   with the sending writer (Routes::readers_by_writer; a non-zero readerId picks one of them);
// - ACKNACK, NACK_FRAG -> the local writer with that writerId (Routes::writers).
// A run of DATA submessages for one reader (the samples of a batch) takes that reader's lock
// once (run_reader_): every other submessage, another reader and the end of the datagram end
// the run first, so no other lock is ever taken while a run's is held.
// Malformed messages are counted (by reason) for stats(). Readers that owe an ACKNACK after a
// HEARTBEAT are collected and answered once per batch, in batch_end() (on_receive_batch_end()).
// Held-back HEARTBEAT answers and the rest of a paced repair are left to the event thread,
// woken through wake_at(). The receive path takes no participant lock; the readers and writers
// take their own (and SEDP samples reach matching through Discovery's builtin readers).
// publish_routes_locked(), which builds the snapshot from the entity lists under entities_mu_
// (held by its callers), is at the end.
#include "participant_impl.hpp"

#include <algorithm>
#include <cstring>

#include "wire/constants.hpp"

namespace pubsub::detail {
namespace {

using Clock = std::chrono::steady_clock;
using Reader = std::shared_ptr<rtps::StatefulReader>;

// True while this thread is a receive worker decoding a datagram (ReceiveWorker::handle): route
// changes wait for its end.
thread_local bool t_in_datagram = false;

}  // namespace

// ---- receive path ---------------------------------------------------------------------------

void ParticipantImpl::on_datagram(unsigned worker, const uint8_t* data, size_t size) {
  workers_[worker % kMaxReceiveWorkers].handle(data, size);
}

void ParticipantImpl::on_receive_batch_end(unsigned worker) {
  workers_[worker % kMaxReceiveWorkers].batch_end();
}

void ParticipantImpl::ReceiveWorker::handle(const uint8_t* data, size_t size) {
  // Only a plausible RTPS header renews a lease (the decoder checks the rest).
  if (size >= wire::kHeaderSize && std::memcmp(data, "RTPS", 4) == 0 && data[4] == 2) {
    GuidPrefix src;
    std::memcpy(src.data(), data + 8, 12);
    p->discovery_->renew_lease(index, src);
  }
  if (p->routes_.changed_since(routes_version_)) {
    routes_ = p->routes_.load(routes_version_);
    cached_readers_ = nullptr;
  }
  reception_time_ = p->reception_clock_.now();
  t_in_datagram = true;
  const auto e = wire::decode_message(data, size, p->limits_, *this);
  end_run();
  t_in_datagram = false;
  p->publish_deferred_routes();
  if (e != wire::DecodeError::kNone) {
    p->malformed_.fetch_add(1, std::memory_order_relaxed);
    p->malformed_by_reason_[static_cast<size_t>(e) & 15].fetch_add(1, std::memory_order_relaxed);
  }
}

void ParticipantImpl::ReceiveWorker::batch_end() {
  p->discovery_->on_receive_batch_end();
  for (const auto& r : dirty_) r->send_pending_acks();
  dirty_.clear();
  cached_readers_ = nullptr;
  routes_.reset();
  routes_version_ = 0;
}

bool ParticipantImpl::for_us(const wire::ReceiveContext& ctx) const {
  static const GuidPrefix kAnyone{};
  return ctx.dest_prefix == kAnyone || ctx.dest_prefix == prefix_;
}

const std::vector<std::shared_ptr<rtps::StatefulReader>>*
ParticipantImpl::ReceiveWorker::readers_of(const Guid& writer) {
  if (cached_readers_ && cached_writer_ == writer) return cached_readers_;
  auto it = routes_->readers_by_writer.find(writer);
  if (it == routes_->readers_by_writer.end()) return nullptr;
  cached_writer_ = writer;
  cached_readers_ = &it->second;
  return cached_readers_;
}

// dirty_ owns its readers until batch_end(): a reader removed during the batch leaves the next
// datagram's Routes snapshot, and that snapshot may have held its last reference.
void ParticipantImpl::ReceiveWorker::mark_dirty(const std::shared_ptr<rtps::StatefulReader>& r) {
  if (std::find(dirty_.begin(), dirty_.end(), r) == dirty_.end()) dirty_.push_back(r);
}

namespace {

// A submessage with readerId 0 (unknown) is for every reader matched with the writer; otherwise
// for the one reader it names.
template <class M>
bool addressed_to(const M& m, const rtps::StatefulReader& r) {
  return m.reader_id.value == 0 || m.reader_id == r.guid().entity;
}

}  // namespace

// The common route of the writer-to-reader submessages: builtin ones to discovery, the rest to
// the local readers matched with the sending writer (all of them, or the one named by readerId).
template <class M, class Builtin, class Local>
void ParticipantImpl::ReceiveWorker::route(const wire::ReceiveContext& ctx, const M& m,
                                           Builtin&& builtin, Local&& local) {
  if (!p->for_us(ctx)) return;
  if (discovery::Discovery::is_builtin(m.writer_id)) {
    builtin();
    return;
  }
  const auto* readers = readers_of(Guid{ctx.source_prefix, m.writer_id});
  if (!readers) return;
  for (const auto& r : *readers) {
    if (addressed_to(m, *r)) local(r);
  }
}

void ParticipantImpl::ReceiveWorker::end_run() {
  if (run_reader_ == nullptr) return;
  run_reader_->unlock_run();
  run_reader_ = nullptr;
}

// DATA for exactly one local reader goes on (or starts) that reader's run: its lock stays held
// until the next submessage that is not such a DATA (end_run()).
void ParticipantImpl::ReceiveWorker::on_data(const wire::ReceiveContext& ctx,
                                             const wire::DataSubmessage& m) {
  if (p->for_us(ctx) && !discovery::Discovery::is_builtin(m.writer_id)) {
    const auto* readers = readers_of(Guid{ctx.source_prefix, m.writer_id});
    if (!readers) return;
    if (readers->size() == 1) {
      rtps::StatefulReader* r = readers->front().get();
      if (!addressed_to(m, *r)) return;
      if (run_reader_ != r) {
        end_run();
        r->lock_run();
        run_reader_ = r;
      }
      r->on_data_in_run(ctx, m, reception_time_);
      return;
    }
  }
  end_run();
  route(
      ctx, m, [&] { p->discovery_->on_data(ctx, m, reception_time_); },
      [&](const Reader& r) { r->on_data(ctx, m, reception_time_); });
}

void ParticipantImpl::ReceiveWorker::on_data_frag(const wire::ReceiveContext& ctx,
                                                  const wire::DataFragSubmessage& m) {
  end_run();
  route(
      ctx, m, [&] { p->discovery_->on_data_frag(ctx, m, reception_time_); },
      [&](const Reader& r) { r->on_data_frag(ctx, m, reception_time_); });
}

void ParticipantImpl::ReceiveWorker::on_heartbeat(const wire::ReceiveContext& ctx,
                                                  const wire::HeartbeatSubmessage& m) {
  end_run();
  route(
      ctx, m, [&] { p->discovery_->on_heartbeat(ctx, m); },
      [&](const Reader& r) {
        rtps::SteadyTime answer_at{};
        if (r->on_heartbeat(ctx, m, &answer_at)) {
          mark_dirty(r);
        } else if (answer_at != rtps::SteadyTime{}) {
          p->wake_at(answer_at);  // a held-back answer (heartbeat_response_delay)
        }
      });
}

void ParticipantImpl::ReceiveWorker::on_gap(const wire::ReceiveContext& ctx,
                                            const wire::GapSubmessage& m) {
  end_run();
  route(
      ctx, m, [&] { p->discovery_->on_gap(ctx, m); }, [&](const Reader& r) { r->on_gap(ctx, m); });
}

void ParticipantImpl::ReceiveWorker::on_heartbeat_frag(const wire::ReceiveContext& ctx,
                                                       const wire::HeartbeatFragSubmessage& m) {
  end_run();
  route(
      ctx, m, [&] { p->discovery_->on_heartbeat_frag(ctx, m); },
      [&](const Reader& r) {
        if (r->on_heartbeat_frag(ctx, m)) mark_dirty(r);
      });
}

void ParticipantImpl::ReceiveWorker::on_acknack(const wire::ReceiveContext& ctx,
                                                const wire::AckNackSubmessage& m) {
  end_run();
  if (!p->for_us(ctx)) return;
  if (discovery::Discovery::is_builtin(m.writer_id)) {
    p->discovery_->on_acknack(ctx, m);
    return;
  }
  auto it = routes_->writers.find(m.writer_id.value);
  if (it != routes_->writers.end()) it->second->on_acknack(ctx.source_prefix, m, Clock::now());
}

void ParticipantImpl::ReceiveWorker::on_nack_frag(const wire::ReceiveContext& ctx,
                                                  const wire::NackFragSubmessage& m) {
  end_run();
  if (!p->for_us(ctx)) return;
  if (discovery::Discovery::is_builtin(m.writer_id)) {
    p->discovery_->on_nack_frag(ctx, m);
    return;
  }
  auto it = routes_->writers.find(m.writer_id.value);
  if (it == routes_->writers.end()) return;
  // The rest of a repair the pacer spreads goes out from the writer's timer.
  const rtps::SteadyTime more = it->second->on_nack_frag(ctx.source_prefix, m, Clock::now());
  if (more != rtps::SteadyTime{}) p->wake_at(more);
}

// ---- routes ---------------------------------------------------------------------------------

void ParticipantImpl::publish_deferred_routes() {
  if (!routes_deferred_.load(std::memory_order_relaxed)) return;
  std::lock_guard lk(entities_mu_);
  if (routes_deferred_.exchange(false)) publish_routes_locked();
}

void ParticipantImpl::publish_routes_locked() {
  if (t_in_datagram) {
    routes_deferred_.store(true, std::memory_order_relaxed);
    return;
  }
  routes_deferred_.store(false, std::memory_order_relaxed);
  auto r = std::make_shared<Routes>();
  for (const auto& w : writers_) {
    r->writers.emplace(w->endpoint.guid.entity.value, w->rtps);
    const auto& b = w->rtps->config().qos.batching;
    if (b.enabled) r->min_flush_delay = std::min(r->min_flush_delay, b.max_flush_delay);
    const auto& l = w->rtps->config().qos.policies.liveliness;
    if (l.kind == LivelinessKind::kManualByParticipant && l.lease_duration > Duration::zero()) {
      r->manual_participant_lease = std::min(r->manual_participant_lease, l.lease_duration);
    }
  }
  for (const auto& lr : readers_) {
    r->readers.push_back(lr.rtps);
    for (const Guid& g : lr.matched) r->readers_by_writer[g].push_back(lr.rtps);
  }
  routes_.publish(std::move(r));
}

}  // namespace pubsub::detail
