#include "participant_impl.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>

#include <arpa/inet.h>

#include "common/glob.hpp"
#include "discovery/matching.hpp"
#include "wire/constants.hpp"

namespace pubsub {
namespace detail {
namespace {

using Clock = std::chrono::steady_clock;

GuidPrefix make_prefix() {
  static std::atomic<uint16_t> counter{0};
  std::random_device rd;
  const uint32_t host = rd();
  const uint32_t pid = static_cast<uint32_t>(::getpid());
  const uint16_t n = counter.fetch_add(1);
  GuidPrefix p{};
  p[0] = wire::kVendorId[0];
  p[1] = wire::kVendorId[1];
  std::memcpy(p.data() + 2, &host, 4);
  std::memcpy(p.data() + 6, &pid, 4);
  std::memcpy(p.data() + 10, &n, 2);
  return p;
}

rtps::RemoteWriterInfo writer_info(const discovery::RemoteEndpoint& e) {
  rtps::RemoteWriterInfo w;
  w.guid = e.data.guid;
  w.reliable = e.data.reliability == ReliabilityKind::kReliable;
  w.unicast = e.unicast;
  return w;
}

rtps::RemoteReaderInfo reader_info(const discovery::RemoteEndpoint& e) {
  rtps::RemoteReaderInfo r;
  r.guid = e.data.guid;
  r.reliable = e.data.reliability == ReliabilityKind::kReliable;
  r.durable = e.data.durability == DurabilityKind::kTransientLocal;
  r.unicast = e.unicast;
  r.multicast = e.multicast;
  return r;
}

// The endpoints of every participant in this process that allows intra-process delivery: a
// writer and a reader both listed here are connected directly. A leaf lock (taken under
// entities_mu_, never the other way round).
struct LocalEndpoints {
  std::mutex mu;
  std::unordered_map<Guid, std::weak_ptr<rtps::StatefulReader>> readers;
  std::unordered_map<Guid, bool> writers;
};
LocalEndpoints& local_endpoints() {
  static auto* e = new LocalEndpoints();  // never destroyed: participants may outlive statics
  return *e;
}

// Parameters carry a 16-bit length: blobs must leave room in one parameter.
constexpr size_t kMaxBlobBytes = 32768;
// Datagrams for Fast DDS readers (reader_path_locked).
constexpr size_t kFastDdsDatagram = 65000;

Result<void> check_topic(const TopicDescription& t) {
  if (t.type_information.size() > kMaxBlobBytes) {
    return make_error(ErrorCode::kInvalidArgument,
                      "type_information larger than " + std::to_string(kMaxBlobBytes) + " bytes");
  }
  if (t.partitions.size() > 64) {
    return make_error(ErrorCode::kInvalidArgument, "more than 64 partitions");
  }
  if (t.name.empty() || t.name.size() > 255) {
    return make_error(ErrorCode::kInvalidArgument, "topic name must be 1..255 characters");
  }
  if (t.type_name.empty() || t.type_name.size() > 255) {
    return make_error(ErrorCode::kInvalidArgument, "type name must be 1..255 characters");
  }
  return {};
}

Result<void> check_limits(const ResourceLimits& rl, const HistoryQos& h) {
  if (rl.max_samples == 0 || rl.max_bytes == 0) {
    return make_error(ErrorCode::kInvalidArgument, "resource limits must be positive");
  }
  if (h.kind == HistoryKind::kKeepLast && h.depth < 1) {
    return make_error(ErrorCode::kInvalidArgument, "KEEP_LAST depth must be at least 1");
  }
  return {};
}

}  // namespace

// ---- construction ---------------------------------------------------------------------------

ParticipantImpl::ParticipantImpl(const ParticipantOptions& options)
    : options_(options), prefix_(make_prefix()) {
  limits_.max_sample_size =
      static_cast<uint32_t>(std::min<size_t>(options.max_sample_size, UINT32_MAX));
  routes_.store(std::make_shared<Routes>());
  for (unsigned i = 0; i < kMaxReceiveWorkers; ++i) {
    workers_[i].p = this;
    workers_[i].index = i;
  }
}

Result<std::shared_ptr<ParticipantImpl>> ParticipantImpl::create(const ParticipantOptions& o) {
  if (o.domain_id > 232) {
    return make_error(ErrorCode::kInvalidArgument, "domain id must be 0..232");
  }
  if (o.user_data.size() > kMaxBlobBytes) {
    return make_error(ErrorCode::kInvalidArgument,
                      "user_data larger than " + std::to_string(kMaxBlobBytes) + " bytes");
  }
  if (o.lease_duration < std::chrono::seconds(1) || o.announce_period <= Duration::zero() ||
      o.announce_period >= o.lease_duration) {
    return make_error(ErrorCode::kInvalidArgument,
                      "lease_duration must be >= 1 s and longer than announce_period");
  }
  std::shared_ptr<ParticipantImpl> p(new ParticipantImpl(o));
  if (auto r = p->start(); !r) return r.error();
  return p;
}

Result<void> ParticipantImpl::start() {
  if (options_.transport_factory) {
    transport_ = options_.transport_factory(options_.max_message_size);
    if (!transport_) return make_error(ErrorCode::kInvalidArgument, "transport_factory gave none");
  } else {
    UdpTransportOptions t;
    t.domain_id = options_.domain_id;
    t.interface = options_.interface;
    t.multicast = options_.multicast;
    t.participant_id = options_.participant_id;
    t.receive_buffer_bytes = options_.socket_receive_buffer;
    t.max_message_size = options_.max_message_size;
    t.receive_spin = options_.receive_spin;
    for (const auto& peer : options_.peers) {
      in_addr a{};
      if (inet_pton(AF_INET, peer.c_str(), &a) != 1) {
        return make_error(ErrorCode::kInvalidArgument,
                          "peer '" + peer + "' is not an IPv4 address");
      }
      t.peers.push_back(ntohl(a.s_addr));
    }
    auto tr = make_udp_transport(t);
    if (!tr) return tr.error();
    transport_ = std::move(tr).value();
  }
  discovery::DiscoveryConfig dc;
  dc.domain_id = options_.domain_id;
  dc.lease_duration = options_.lease_duration;
  dc.announce_period = options_.announce_period;
  dc.user_data.assign(options_.user_data.begin(), options_.user_data.end());
  discovery_ = std::make_unique<discovery::Discovery>(dc, *transport_, prefix_, *this);
  start_shared_memory();
  if (auto r = transport_->start(*this); !r) return r;
  schedule_timer(Clock::now());
  event_thread_ = std::thread([this] { io_.run(); });
  return {};
}

void ParticipantImpl::start_shared_memory() {
  if (!options_.shared_memory) return;
  if (shm::disabled_by_environment()) {
    log("shared memory off (PUBSUB_SHM); same-host peers are reached over UDP");
    return;
  }
  if (const size_t n = shm::remove_stale_segments()) {
    log("removed " + std::to_string(n) + " shared-memory segment(s) of dead processes");
  }
  auto r =
      shm::ShmReceiver::create(shm::segment_name(shm::hex(prefix_.data(), 12) + ".bell"),
                               options_.shm_receive_spin, [this](const std::string& m) { log(m); });
  if (!r) {
    log("shared memory unavailable (" + r.error().message + "); same-host peers use UDP");
    return;
  }
  shm_ = std::move(r).value();
}

void ParticipantImpl::log(const std::string& message) const {
  if (options_.log) {
    options_.log(message);
  } else {
    std::fprintf(stderr, "pubsub: %s\n", message.c_str());
  }
}

ParticipantImpl::~ParticipantImpl() {
  close();
}

void ParticipantImpl::close() {
  if (closed_.exchange(true)) return;
  // start() may have failed part way: close only what exists.
  if (discovery_) discovery_->leave();
  boost::asio::post(io_, [this] { timer_.cancel(); });
  io_.stop();
  if (event_thread_.joinable()) event_thread_.join();
  shm_.reset();
  if (transport_) transport_->stop();
  std::lock_guard lk(entities_mu_);
  {
    auto& reg = local_endpoints();
    std::lock_guard rl(reg.mu);
    for (const auto& w : writers_) reg.writers.erase(w->endpoint.guid);
    for (const auto& r : readers_) reg.readers.erase(r.endpoint.guid);
  }
  for (auto& w : writers_) w->closed = true;
  // Break the participant <-> endpoint cycles; live handles keep what they need.
  writers_.clear();
  readers_.clear();
  raw_readers_.clear();
  routes_.store(std::make_shared<Routes>());
}

EntityId ParticipantImpl::next_entity_id(uint8_t kind) {
  return EntityId{(next_entity_key_++ << 8) | kind};
}

// ---- timers ---------------------------------------------------------------------------------

void ParticipantImpl::schedule_timer(rtps::SteadyTime at) {
  timer_.expires_at(at);
  timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) on_timer();
  });
}

void ParticipantImpl::wake_at(rtps::SteadyTime at) {
  boost::asio::post(io_, [this, at] {
    if (at < timer_.expiry()) schedule_timer(at);
  });
}

void ParticipantImpl::on_timer() {
  const auto now = Clock::now();
  auto routes = routes_.load();
  rtps::SteadyTime next = discovery_->on_timer(now);
  for (const auto& [id, w] : routes->writers) next = std::min(next, w->on_timer(now));
  for (const auto& r : routes->readers) next = std::min(next, r->on_timer(now));
  // Batches open between ticks: come back within the shortest flush delay.
  if (routes->min_flush_delay != Duration::max()) {
    next = std::min(
        next, now + std::max<Duration>(routes->min_flush_delay, std::chrono::microseconds(100)));
  }
  schedule_timer(std::max(next, now + std::chrono::microseconds(50)));
}

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
  routes_ = p->routes_.load();
  cached_readers_ = nullptr;
  reception_time_ = Time::now();
  const auto e = wire::decode_message(data, size, p->limits_, *this);
  if (e != wire::DecodeError::kNone) {
    p->malformed_.fetch_add(1, std::memory_order_relaxed);
    p->malformed_by_reason_[static_cast<size_t>(e) & 15].fetch_add(1, std::memory_order_relaxed);
  }
}

void ParticipantImpl::ReceiveWorker::batch_end() {
  p->discovery_->on_receive_batch_end();
  for (auto* r : dirty_) r->send_pending_acks();
  dirty_.clear();
  cached_readers_ = nullptr;
  routes_.reset();
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

void ParticipantImpl::ReceiveWorker::mark_dirty(rtps::StatefulReader* r) {
  if (std::find(dirty_.begin(), dirty_.end(), r) == dirty_.end()) dirty_.push_back(r);
}

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
    if (m.reader_id.value == 0 || m.reader_id == r->guid().entity) local(*r);
  }
}

void ParticipantImpl::ReceiveWorker::on_data(const wire::ReceiveContext& ctx,
                                             const wire::DataSubmessage& m) {
  route(
      ctx, m, [&] { p->discovery_->on_data(ctx, m, reception_time_); },
      [&](rtps::StatefulReader& r) { r.on_data(ctx, m, reception_time_); });
}

void ParticipantImpl::ReceiveWorker::on_data_frag(const wire::ReceiveContext& ctx,
                                                  const wire::DataFragSubmessage& m) {
  route(
      ctx, m, [&] { p->discovery_->on_data_frag(ctx, m, reception_time_); },
      [&](rtps::StatefulReader& r) { r.on_data_frag(ctx, m, reception_time_); });
}

void ParticipantImpl::ReceiveWorker::on_heartbeat(const wire::ReceiveContext& ctx,
                                                  const wire::HeartbeatSubmessage& m) {
  route(
      ctx, m, [&] { p->discovery_->on_heartbeat(ctx, m); },
      [&](rtps::StatefulReader& r) {
        rtps::SteadyTime answer_at{};
        if (r.on_heartbeat(ctx, m, &answer_at)) {
          mark_dirty(&r);
        } else if (answer_at != rtps::SteadyTime{}) {
          p->wake_at(answer_at);  // a held-back answer (heartbeat_response_delay)
        }
      });
}

void ParticipantImpl::ReceiveWorker::on_gap(const wire::ReceiveContext& ctx,
                                            const wire::GapSubmessage& m) {
  route(
      ctx, m, [&] { p->discovery_->on_gap(ctx, m); },
      [&](rtps::StatefulReader& r) { r.on_gap(ctx, m); });
}

void ParticipantImpl::ReceiveWorker::on_heartbeat_frag(const wire::ReceiveContext& ctx,
                                                       const wire::HeartbeatFragSubmessage& m) {
  route(
      ctx, m, [&] { p->discovery_->on_heartbeat_frag(ctx, m); },
      [&](rtps::StatefulReader& r) {
        if (r.on_heartbeat_frag(ctx, m)) mark_dirty(&r);
      });
}

void ParticipantImpl::ReceiveWorker::on_acknack(const wire::ReceiveContext& ctx,
                                                const wire::AckNackSubmessage& m) {
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

// ---- matching -------------------------------------------------------------------------------

void ParticipantImpl::publish_routes_locked() {
  auto r = std::make_shared<Routes>();
  for (const auto& w : writers_) {
    r->writers.emplace(w->endpoint.guid.entity.value, w->rtps);
    const auto& b = w->rtps->config().qos.batching;
    if (b.enabled) r->min_flush_delay = std::min(r->min_flush_delay, b.max_flush_delay);
  }
  for (const auto& lr : readers_) {
    r->readers.push_back(lr.rtps);
    for (const Guid& g : lr.matched) r->readers_by_writer[g].push_back(lr.rtps);
  }
  routes_.store(std::move(r));
}

bool RawReaderImpl::wants(const std::string& topic) const {
  bool in = false;
  for (const auto& p : options.include) in = in || common::glob_match(p, topic);
  if (!in) return false;
  for (const auto& p : options.exclude) {
    if (common::glob_match(p, topic)) return false;
  }
  return true;
}

RawReaderImpl::Subscription* ParticipantImpl::subscription_for_locked(
    RawReaderImpl& raw, const wire::EndpointData& w, std::vector<wire::EndpointData>& announce) {
  const bool reliable = w.reliability == ReliabilityKind::kReliable;
  for (auto& s : raw.subscriptions) {
    const auto& i = s->info;
    if (i.name == w.topic_name && i.type_name == w.type_name && i.keyed == w.keyed() &&
        (i.reliability == ReliabilityKind::kReliable) == reliable && i.partitions == w.partitions) {
      return s.get();
    }
  }
  auto s = std::make_unique<RawReaderImpl::Subscription>();
  s->info.name = w.topic_name;
  s->info.type_name = w.type_name;
  s->info.keyed = w.keyed();
  s->info.reliability = w.reliability;
  s->info.durability = w.durability;
  s->info.history = w.history;
  s->info.max_blocking_time = w.max_blocking_time;
  s->info.partitions = w.partitions;
  s->info.data_representation = w.data_representation;
  s->info.type_information = w.type_information;

  auto& e = s->endpoint;
  e.guid =
      Guid{prefix_, next_entity_id(w.keyed() ? wire::kKindReaderWithKey : wire::kKindReaderNoKey)};
  e.topic_name = w.topic_name;
  e.type_name = w.type_name;
  e.reliability = w.reliability;
  e.durability = DurabilityKind::kVolatile;
  e.history = raw.options.qos.history;
  e.partitions = w.partitions;
  e.data_representation = {wire::kXcdr1, wire::kXcdr2};
  if (shm_) e.shm = wire::ShmLocator{shm::host_id(), shm_->doorbell_name()};

  rtps::ReaderConfig rc;
  rc.guid = e.guid;
  rc.qos = raw.options.qos;
  rc.qos.reliability = w.reliability;
  rc.qos.durability = DurabilityKind::kVolatile;
  rc.max_sample_size = options_.max_sample_size;
  RawReaderImpl* rawp = &raw;
  const TopicInfo* info = &s->info;
  s->rtps = std::make_shared<rtps::StatefulReader>(
      rc, *transport_, prefix_, [rawp, info](const rtps::ReceivedSample& x) {
        if (!rawp->listener.on_sample) return true;
        RawSample rs;
        rs.topic = info;
        rs.writer = x.writer;
        rs.sequence_number = x.sn;
        rs.has_source_timestamp = x.has_timestamp;
        rs.source_timestamp = x.source_timestamp;
        rs.reception_timestamp = x.reception_timestamp;
        if (x.has_key_hash) rs.key_hash = x.key_hash;
        rs.status_info = x.status_info;
        rs.key_only = x.key_only;
        rs.serialized = Bytes(reinterpret_cast<const std::byte*>(x.data), x.size);
        return rawp->listener.on_sample(rs);
      });
  readers_.push_back(LocalReader{e, s->rtps, {}, {}, true});
  if (options_.intra_process) {
    auto& reg = local_endpoints();
    std::lock_guard rl(reg.mu);
    reg.readers[e.guid] = s->rtps;
  }
  announce.push_back(e);
  raw.subscriptions.push_back(std::move(s));
  return raw.subscriptions.back().get();
}

// Intra-process when both sides allow it and the writer lives in this process, else shared
// memory when the writer offers a segment on our host and it opens, else the network.
bool ParticipantImpl::connect_writer_locked(LocalReader& lr, const discovery::RemoteEndpoint& e) {
  const Guid& g = e.data.guid;
  if (std::find(lr.local_writers.begin(), lr.local_writers.end(), g) != lr.local_writers.end()) {
    return true;
  }
  bool local = false;  // in-process or through shared memory
  if (options_.intra_process) {
    auto& reg = local_endpoints();
    std::lock_guard rl(reg.mu);
    local = reg.writers.count(g) > 0 && reg.readers.count(lr.endpoint.guid) > 0;
  }
  if (!local && shm_ && e.data.shm && e.data.shm->host == shm::host_id()) {
    const bool reliable = e.data.reliability == ReliabilityKind::kReliable &&
                          lr.endpoint.reliability == ReliabilityKind::kReliable;
    const bool durable = e.data.durability == DurabilityKind::kTransientLocal &&
                         lr.endpoint.durability == DurabilityKind::kTransientLocal;
    auto r = shm_->attach(g, e.data.shm->name, lr.rtps, reliable, durable);
    if (r) {
      local = true;
    } else {
      log("writer " + g.to_string() + " on topic '" + e.data.topic_name +
          "': shared memory not usable (" + r.error().message + "); using UDP");
    }
  }
  if (local) {
    lr.rtps->add_local_writer(g);
    lr.local_writers.push_back(g);
    return true;
  }
  if (!options_.network_data) {
    log("writer " + g.to_string() + " on topic '" + e.data.topic_name +
        "' is not reachable through shared memory and network data is off: not matched");
    return false;
  }
  lr.rtps->add_writer(writer_info(e), Clock::now());
  if (std::find(lr.matched.begin(), lr.matched.end(), g) == lr.matched.end()) {
    lr.matched.push_back(g);
  }
  return true;
}

void ParticipantImpl::disconnect_writer_locked(LocalReader& lr, const Guid& writer) {
  if (auto m = std::find(lr.matched.begin(), lr.matched.end(), writer); m != lr.matched.end()) {
    lr.matched.erase(m);
    lr.rtps->remove_writer(writer);
  }
  if (auto m = std::find(lr.local_writers.begin(), lr.local_writers.end(), writer);
      m != lr.local_writers.end()) {
    lr.local_writers.erase(m);
    lr.rtps->remove_local_writer(writer);
    if (shm_) shm_->detach(writer, lr.endpoint.guid);
  }
}

ParticipantImpl::LocalReader* ParticipantImpl::find_local_reader_locked(
    const std::shared_ptr<rtps::StatefulReader>& r) {
  for (auto& lr : readers_) {
    if (lr.rtps == r) return &lr;
  }
  return nullptr;
}

void ParticipantImpl::match_remote_writer_locked(const discovery::RemoteEndpoint& e,
                                                 Deferred& deferred,
                                                 std::vector<wire::EndpointData>& announce) {
  for (auto& lr : readers_) {
    if (lr.raw || !discovery::match_failure(e.data, lr.endpoint).empty()) continue;
    connect_writer_locked(lr, e);
  }
  for (auto& raw : raw_readers_) {
    if (!raw->wants(e.data.topic_name)) continue;
    auto* sub = subscription_for_locked(*raw, e.data, announce);
    if (std::find(sub->writers.begin(), sub->writers.end(), e.data.guid) != sub->writers.end()) {
      continue;
    }
    LocalReader* lr = find_local_reader_locked(sub->rtps);
    if (!lr || !connect_writer_locked(*lr, e)) continue;
    sub->writers.push_back(e.data.guid);
    if (raw->listener.on_writer_matched) {
      deferred.push_back(
          [raw, info = sub->info, g = e.data.guid] { raw->listener.on_writer_matched(info, g); });
    }
  }
}

std::shared_ptr<shm::Doorbell> ParticipantImpl::doorbell_locked(const std::string& name) {
  if (auto b = doorbells_[name].lock()) return b;
  auto b = shm::Doorbell::open(name);
  if (!b) {
    log("shared memory: cannot open reader doorbell " + name + " (" + b.error().message +
        "); using UDP");
    doorbells_.erase(name);
    return nullptr;
  }
  auto sp = std::make_shared<shm::Doorbell>(std::move(b).value());
  doorbells_[name] = sp;
  return sp;
}

// The writer's side of the same choice as connect_writer_locked.
void ParticipantImpl::connect_reader_locked(WriterImpl& w, const discovery::RemoteEndpoint& e) {
  const auto info = reader_path_locked(w, e);
  w.rtps->add_reader(info, Clock::now());
  // A durable in-process reader gets the history from the writer's timer: run it now.
  if (info.delivery == rtps::Delivery::kIntraProcess) {
    boost::asio::post(io_, [this] { on_timer(); });
  }
}

rtps::RemoteReaderInfo ParticipantImpl::reader_path_locked(const WriterImpl& w,
                                                           const discovery::RemoteEndpoint& e) {
  rtps::RemoteReaderInfo info = reader_info(e);
  // A Fast DDS reader spends its time per datagram, not per byte: it keeps up with large samples
  // only in the 64-KiB datagrams its own writers send (UDPv4 maxMessageSize 65500), and loses
  // most of a burst of MTU-sized fragments (perf/RESULTS.md, "Into Fast DDS readers"). Unless
  // the application chose a size.
  if (options_.max_message_size == 0 && std::memcmp(e.vendor, wire::kVendorFastDds, 2) == 0) {
    info.max_datagram = kFastDdsDatagram;
  }
  // A Cyclone DDS reader answers a HEARTBEAT from its event thread once its receive thread has
  // read on, which looks like a deliberate delay; a window grown for it overran its 1-MB socket
  // buffer with bursts of large samples (perf/RESULTS.md, "A window cap for deliberate delays
  // only").
  info.queued_answers = std::memcmp(e.vendor, wire::kVendorCyclone, 2) == 0;
  if (options_.intra_process) {
    auto& reg = local_endpoints();
    std::lock_guard rl(reg.mu);
    auto it = reg.readers.find(e.data.guid);
    if (reg.writers.count(w.endpoint.guid) && it != reg.readers.end()) {
      if (auto r = it->second.lock()) {
        info.delivery = rtps::Delivery::kIntraProcess;
        info.local = std::move(r);
        return info;
      }
    }
  }
  if (w.rtps->segment() && e.data.shm && e.data.shm->host == shm::host_id()) {
    if (auto bell = doorbell_locked(e.data.shm->name)) {
      info.delivery = rtps::Delivery::kSharedMemory;
      info.doorbell = std::move(bell);
    }
  }
  return info;
}

void ParticipantImpl::match_remote_reader_locked(const discovery::RemoteEndpoint& e) {
  for (auto& w : writers_) {
    if (discovery::match_failure(w->endpoint, e.data).empty()) connect_reader_locked(*w, e);
  }
}

void ParticipantImpl::on_endpoint_discovered(const discovery::RemoteEndpoint& e) {
  Deferred deferred;
  std::vector<wire::EndpointData> announce;
  {
    std::lock_guard lk(entities_mu_);
    if (closed_) return;
    remote_[e.data.guid] = e;
    if (e.data.is_writer()) {
      match_remote_writer_locked(e, deferred, announce);
    } else {
      match_remote_reader_locked(e);
    }
    publish_routes_locked();
  }
  for (const auto& a : announce) {
    discovery_->announce(a);
    discovery::RemoteEndpoint self;
    if (discovery_->resolve(a, self)) on_endpoint_discovered(self);
  }
  for (auto& f : deferred) f();
}

void ParticipantImpl::on_endpoint_lost(const Guid& g) {
  Deferred deferred;
  {
    std::lock_guard lk(entities_mu_);
    auto it = remote_.find(g);
    if (it == remote_.end()) return;
    const bool writer = it->second.data.is_writer();
    const auto shm_locator = it->second.data.shm;
    remote_.erase(it);
    if (writer) {
      for (auto& lr : readers_) disconnect_writer_locked(lr, g);
      for (auto& raw : raw_readers_) {
        for (auto& sub : raw->subscriptions) {
          auto m = std::find(sub->writers.begin(), sub->writers.end(), g);
          if (m == sub->writers.end()) continue;
          sub->writers.erase(m);
          if (raw->listener.on_writer_lost) {
            deferred.push_back(
                [raw, info = sub->info, g] { raw->listener.on_writer_lost(info, g); });
          }
        }
      }
    } else {
      for (auto& w : writers_) w->rtps->remove_reader(g);
    }
    // An endpoint killed on this host (SIGKILL) leaves its segment or doorbell: removed once
    // its process is gone.
    if (shm_locator && shm_locator->host == shm::host_id()) {
      shm::remove_if_orphaned(shm_locator->name);
    }
    publish_routes_locked();
  }
  for (auto& f : deferred) f();
}

// ---- local endpoints ------------------------------------------------------------------------

Result<std::shared_ptr<WriterImpl>> ParticipantImpl::create_writer(const TopicDescription& topic,
                                                                   const WriterQos& qos) {
  if (auto r = check_topic(topic); !r) return r.error();
  if (auto r = check_limits(qos.resource_limits, qos.history); !r) return r.error();
  if (qos.batching.enabled && (qos.batching.max_bytes < 256 || qos.batching.max_bytes > 65000 ||
                               qos.batching.max_samples == 0)) {
    return make_error(ErrorCode::kInvalidArgument,
                      "batching.max_bytes must be 256..65000 and max_samples > 0");
  }
  if (closed_) return make_error(ErrorCode::kClosed, "participant closed");
  auto w = std::make_shared<WriterImpl>();
  w->participant = shared_from_this();
  w->topic = topic;
  {
    std::lock_guard lk(entities_mu_);
    auto& e = w->endpoint;
    e.guid = Guid{prefix_,
                  next_entity_id(topic.keyed ? wire::kKindWriterWithKey : wire::kKindWriterNoKey)};
    e.topic_name = topic.name;
    e.type_name = topic.type_name;
    e.reliability = qos.reliability;
    e.max_blocking_time = qos.max_blocking_time;
    e.durability = qos.durability;
    e.history = qos.history;
    e.partitions = topic.partitions;
    e.data_representation = topic.data_representation;
    e.type_information = topic.type_information;
    rtps::WriterConfig wc;
    wc.guid = e.guid;
    wc.qos = qos;
    wc.keyed = topic.keyed;
    wc.max_unacked_bytes = options_.max_unacked_bytes;
    std::unique_ptr<shm::WriterSegment> segment;
    if (shm_) {
      auto seg = shm::WriterSegment::create(
          e.guid, rtps::StatefulWriter::history_samples(qos),
          rtps::WriterHistory::capacity_for(qos.resource_limits.max_bytes));
      if (seg) {
        segment = std::move(seg).value();
        e.shm = wire::ShmLocator{shm::host_id(), segment->name()};
      } else {
        log("writer on topic '" + topic.name + "': no shared-memory segment (" +
            seg.error().message + "); same-host readers get it over UDP");
      }
    }
    w->rtps = std::make_shared<rtps::StatefulWriter>(wc, *transport_, prefix_, std::move(segment));
    writers_.push_back(w);
    if (options_.intra_process) {
      auto& reg = local_endpoints();
      std::lock_guard rl(reg.mu);
      reg.writers[e.guid] = true;
    }
    for (const auto& [g, re] : remote_) {
      if (!re.data.is_writer() && discovery::match_failure(e, re.data).empty()) {
        connect_reader_locked(*w, re);
      }
    }
    publish_routes_locked();
  }
  discovery_->announce(w->endpoint);
  discovery::RemoteEndpoint self;
  if (discovery_->resolve(w->endpoint, self)) on_endpoint_discovered(self);
  return w;
}

struct LoanedSampleAccess {
  static LoanedSample make(const SampleInfo& info, Bytes body, const rtps::ReceivedSample& s) {
    LoanedSample l;
    l.info_ = info;
    l.valid_ = true;
    if (s.loan_source) {
      s.loan_source->registry->retain(s.sn);
      l.registry_ = s.loan_source->registry;
      l.anchor_ = s.loan_source->anchor.lock();
      l.body_ = body;
    } else if (!body.empty()) {  // the datagram's buffer is reused: a copy of its own
      l.copy_.reset(new std::byte[body.size()]);
      std::memcpy(l.copy_.get(), body.data(), body.size());
      l.body_ = Bytes(l.copy_.get(), body.size());
    }
    return l;
  }
};

bool ReaderImpl::deliver(const rtps::ReceivedSample& s) {
  if (!callback && !loan_callback) return true;
  SampleInfo info;
  info.writer = s.writer;
  info.sequence_number = s.sn;
  if (s.has_timestamp) info.source_timestamp = s.source_timestamp;
  info.reception_timestamp = s.reception_timestamp;
  if (s.has_key_hash) info.key_hash = s.key_hash;
  info.status_info = s.status_info;
  Bytes body;
  if (s.size >= wire::kEncapsulationSize) {
    info.encapsulation = static_cast<uint16_t>(s.data[0] << 8 | s.data[1]);
    const size_t pad = s.data[3] & 3u;
    const size_t n = s.size - wire::kEncapsulationSize;
    body = Bytes(reinterpret_cast<const std::byte*>(s.data) + wire::kEncapsulationSize,
                 n >= pad ? n - pad : 0);
  }
  if (loan_callback) {
    loan_callback(LoanedSampleAccess::make(info, body, s));
  } else {
    callback(info, body);
  }
  return true;
}

Result<std::shared_ptr<ReaderImpl>> ParticipantImpl::create_reader(const TopicDescription& topic,
                                                                   const ReaderQos& qos,
                                                                   SampleCallback cb,
                                                                   LoanCallback loan_cb) {
  if (auto r = check_topic(topic); !r) return r.error();
  if (auto r = check_limits(qos.resource_limits, qos.history); !r) return r.error();
  if (closed_) return make_error(ErrorCode::kClosed, "participant closed");
  auto impl = std::make_shared<ReaderImpl>();
  impl->participant = shared_from_this();
  impl->callback = std::move(cb);
  impl->loan_callback = std::move(loan_cb);
  {
    std::lock_guard lk(entities_mu_);
    auto& e = impl->endpoint;
    e.guid = Guid{prefix_,
                  next_entity_id(topic.keyed ? wire::kKindReaderWithKey : wire::kKindReaderNoKey)};
    e.topic_name = topic.name;
    e.type_name = topic.type_name;
    e.reliability = qos.reliability;
    e.durability = qos.durability;
    e.history = qos.history;
    e.partitions = topic.partitions;
    e.data_representation = topic.data_representation.empty()
                                ? std::vector<int16_t>{wire::kXcdr1, wire::kXcdr2}
                                : topic.data_representation;
    e.type_information = topic.type_information;
    if (shm_) e.shm = wire::ShmLocator{shm::host_id(), shm_->doorbell_name()};
    rtps::ReaderConfig rc;
    rc.guid = e.guid;
    rc.qos = qos;
    rc.max_sample_size = options_.max_sample_size;
    rc.loans = impl->loan_callback != nullptr;
    ReaderImpl* raw = impl.get();
    impl->rtps = std::make_shared<rtps::StatefulReader>(
        rc, *transport_, prefix_, [raw](const rtps::ReceivedSample& s) { return raw->deliver(s); });
    if (options_.intra_process) {
      auto& reg = local_endpoints();
      std::lock_guard rl(reg.mu);
      reg.readers[e.guid] = impl->rtps;
    }
    readers_.push_back(LocalReader{e, impl->rtps, {}, {}, false});
    for (const auto& [g, re] : remote_) {
      if (re.data.is_writer() && discovery::match_failure(re.data, e).empty()) {
        connect_writer_locked(readers_.back(), re);
      }
    }
    publish_routes_locked();
  }
  discovery_->announce(impl->endpoint);
  discovery::RemoteEndpoint self;
  if (discovery_->resolve(impl->endpoint, self)) on_endpoint_discovered(self);
  return impl;
}

Result<std::shared_ptr<RawReaderImpl>> ParticipantImpl::create_raw_reader(
    const RawReaderOptions& options, RawReaderListener listener) {
  for (const auto* list : {&options.include, &options.exclude}) {
    for (const auto& p : *list) {
      if (auto why = common::glob_error(p); !why.empty()) {
        return make_error(ErrorCode::kInvalidArgument, "topic pattern '" + p + "': " + why);
      }
    }
  }
  if (auto r = check_limits(options.qos.resource_limits, options.qos.history); !r) return r.error();
  if (closed_) return make_error(ErrorCode::kClosed, "participant closed");
  auto raw = std::make_shared<RawReaderImpl>();
  raw->participant = shared_from_this();
  raw->options = options;
  raw->listener = std::move(listener);
  Deferred deferred;
  std::vector<wire::EndpointData> announce;
  {
    std::lock_guard lk(entities_mu_);
    raw_readers_.push_back(raw);
    for (const auto& [g, re] : remote_) {
      if (!re.data.is_writer()) continue;
      // Only this raw reader is new; match_remote_writer_locked is idempotent for the others.
      match_remote_writer_locked(re, deferred, announce);
    }
    publish_routes_locked();
  }
  for (const auto& a : announce) {
    discovery_->announce(a);
    discovery::RemoteEndpoint self;
    if (discovery_->resolve(a, self)) on_endpoint_discovered(self);
  }
  for (auto& f : deferred) f();
  return raw;
}

void ParticipantImpl::remove_writer(WriterImpl& w) {
  {
    std::lock_guard lk(entities_mu_);
    auto it = std::find_if(writers_.begin(), writers_.end(),
                           [&](const auto& x) { return x.get() == &w; });
    if (it == writers_.end()) return;
    writers_.erase(it);
    auto& reg = local_endpoints();
    std::lock_guard rl(reg.mu);
    reg.writers.erase(w.endpoint.guid);
    publish_routes_locked();
  }
  if (!closed_) {
    discovery_->withdraw(w.endpoint);
    on_endpoint_lost(w.endpoint.guid);
  }
}

void ParticipantImpl::remove_reader(ReaderImpl& r) {
  // The callback captures the ReaderImpl: stop it before anything else goes.
  r.rtps->detach();
  {
    std::lock_guard lk(entities_mu_);
    auto it = std::find_if(readers_.begin(), readers_.end(),
                           [&](const LocalReader& x) { return x.rtps == r.rtps; });
    if (it == readers_.end()) return;
    while (!it->local_writers.empty()) disconnect_writer_locked(*it, it->local_writers.back());
    {
      auto& reg = local_endpoints();
      std::lock_guard rl(reg.mu);
      reg.readers.erase(it->endpoint.guid);
    }
    readers_.erase(it);
    publish_routes_locked();
  }
  if (!closed_) {
    discovery_->withdraw(r.endpoint);
    on_endpoint_lost(r.endpoint.guid);
  }
}

void ParticipantImpl::remove_raw_reader(RawReaderImpl& raw) {
  std::vector<wire::EndpointData> gone;
  {
    std::lock_guard lk(entities_mu_);
    auto it = std::find_if(raw_readers_.begin(), raw_readers_.end(),
                           [&](const auto& x) { return x.get() == &raw; });
    if (it == raw_readers_.end()) return;
    for (auto& sub : raw.subscriptions) {
      sub->rtps->detach();  // its callback captures the RawReaderImpl and the TopicInfo
      gone.push_back(sub->endpoint);
      if (LocalReader* lr = find_local_reader_locked(sub->rtps)) {
        while (!lr->local_writers.empty()) disconnect_writer_locked(*lr, lr->local_writers.back());
      }
      {
        auto& reg = local_endpoints();
        std::lock_guard rl(reg.mu);
        reg.readers.erase(sub->endpoint.guid);
      }
      std::erase_if(readers_, [&](const LocalReader& x) { return x.rtps == sub->rtps; });
    }
    raw_readers_.erase(it);
    publish_routes_locked();
  }
  if (!closed_) {
    for (const auto& e : gone) {
      discovery_->withdraw(e);
      on_endpoint_lost(e.guid);
    }
  }
}

std::vector<DiscoveredParticipant> ParticipantImpl::discovered_participants() const {
  return discovery_->participants();
}

ParticipantStats ParticipantImpl::stats() const {
  ParticipantStats s;
  const auto t = transport_->stats();
  s.datagrams_received = t.datagrams_received;
  s.bytes_received = t.bytes_received;
  s.datagrams_sent = t.datagrams_sent;
  s.bytes_sent = t.bytes_sent;
  s.malformed_messages = malformed_.load() + discovery_->malformed();
  for (size_t i = 0; i < 16; ++i) s.malformed_by_reason[i] = malformed_by_reason_[i].load();
  s.remote_participants = discovery_->participants().size();
  std::lock_guard lk(entities_mu_);
  for (const auto& [g, e] : remote_) {
    if (e.local) continue;
    (e.data.is_writer() ? s.remote_writers : s.remote_readers)++;
  }
  return s;
}

std::vector<TopicInfo> ParticipantImpl::raw_topics(const RawReaderImpl& r) const {
  std::lock_guard lk(entities_mu_);
  std::vector<TopicInfo> out;
  for (const auto& s : r.subscriptions) out.push_back(s->info);
  return out;
}

size_t ParticipantImpl::raw_matched(const RawReaderImpl& r) const {
  std::lock_guard lk(entities_mu_);
  size_t n = 0;
  for (const auto& s : r.subscriptions) n += s->writers.size();
  return n;
}

void ParticipantImpl::raw_resume(const RawReaderImpl& r) {
  std::vector<std::shared_ptr<rtps::StatefulReader>> readers;
  {
    std::lock_guard lk(entities_mu_);
    for (const auto& s : r.subscriptions) readers.push_back(s->rtps);
  }
  for (auto& reader : readers) reader->resume();
  if (shm_) shm_->kick();
}

ReaderStats ParticipantImpl::raw_stats(const RawReaderImpl& r) const {
  std::lock_guard lk(entities_mu_);
  ReaderStats total;
  for (const auto& s : r.subscriptions) total += s->rtps->stats();
  return total;
}

// ---- writer ---------------------------------------------------------------------------------

Result<void> WriterImpl::write(Bytes data, const WriteOptions& o, bool serialized) {
  if (closed) return make_error(ErrorCode::kClosed, "participant closed");
  if (topic.keyed && !o.key_hash && !serialized) {
    return make_error(ErrorCode::kInvalidArgument,
                      "keyed topic '" + topic.name + "': write needs a key hash");
  }
  rtps::WriteRequest r;
  uint8_t encap[4] = {0x00, 0x01, 0x00, 0x00};  // CDR_LE
  r.body = reinterpret_cast<const uint8_t*>(data.data());
  r.body_size = data.size();
  if (!serialized) {
    const size_t pad = (4 - data.size() % 4) % 4;
    encap[3] = static_cast<uint8_t>(pad);
    r.encapsulation = encap;
    r.encapsulation_size = 4;
    r.padding = pad;
  }
  r.key_hash = o.key_hash;
  r.status_info = o.status_info;
  r.timestamp = o.timestamp ? *o.timestamp : Time::now();
  return rtps->write(r, !participant->transport().on_receive_thread());
}

// A loan covers the encapsulation header, the body and its padding to 4 bytes; the caller
// sees the body.
Result<uint8_t*> WriterImpl::loan(size_t body_size) {
  if (closed) return make_error(ErrorCode::kClosed, "participant closed");
  const size_t pad = (4 - body_size % 4) % 4;
  auto r = rtps->loan(wire::kEncapsulationSize + body_size + pad,
                      !participant->transport().on_receive_thread());
  if (!r) return r.error();
  return r.value() + wire::kEncapsulationSize;
}

Result<void> WriterImpl::write_loan(size_t body_size, const WriteOptions& o) {
  if (closed) {
    rtps->release_loan();
    return make_error(ErrorCode::kClosed, "participant closed");
  }
  if (topic.keyed && !o.key_hash) {
    rtps->release_loan();
    return make_error(ErrorCode::kInvalidArgument,
                      "keyed topic '" + topic.name + "': write needs a key hash");
  }
  rtps::WriteRequest r;
  r.key_hash = o.key_hash;
  r.status_info = o.status_info;
  r.timestamp = o.timestamp ? *o.timestamp : Time::now();
  const size_t pad = (4 - body_size % 4) % 4;
  return rtps->write_loan(r, pad, !participant->transport().on_receive_thread());
}

}  // namespace detail

// ---- public facade --------------------------------------------------------------------------

Result<std::unique_ptr<Participant>> Participant::create(const ParticipantOptions& options) {
  auto impl = detail::ParticipantImpl::create(options);
  if (!impl) return impl.error();
  return std::unique_ptr<Participant>(new Participant(std::move(impl).value()));
}

Participant::Participant(std::shared_ptr<detail::ParticipantImpl> impl) : impl_(std::move(impl)) {}
Participant::~Participant() {
  impl_->close();
}

Result<std::unique_ptr<Writer>> Participant::create_writer(const TopicDescription& topic,
                                                           const WriterQos& qos) {
  auto w = impl_->create_writer(topic, qos);
  if (!w) return w.error();
  return std::unique_ptr<Writer>(new Writer(std::move(w).value()));
}

Result<std::unique_ptr<Reader>> Participant::create_reader(const TopicDescription& topic,
                                                           const ReaderQos& qos,
                                                           SampleCallback on_sample) {
  auto r = impl_->create_reader(topic, qos, std::move(on_sample));
  if (!r) return r.error();
  return std::unique_ptr<Reader>(new Reader(std::move(r).value()));
}

Result<std::unique_ptr<Reader>> Participant::create_loaning_reader(const TopicDescription& topic,
                                                                   const ReaderQos& qos,
                                                                   LoanCallback on_sample) {
  if (!on_sample)
    return make_error(ErrorCode::kInvalidArgument, "a loaning reader needs a listener");
  auto r = impl_->create_reader(topic, qos, nullptr, std::move(on_sample));
  if (!r) return r.error();
  return std::unique_ptr<Reader>(new Reader(std::move(r).value()));
}

LoanedSample& LoanedSample::operator=(LoanedSample&& o) noexcept {
  if (this != &o) {
    (void)release();
    info_ = o.info_;
    body_ = std::exchange(o.body_, Bytes{});
    valid_ = std::exchange(o.valid_, false);
    registry_ = std::move(o.registry_);
    anchor_ = std::move(o.anchor_);
    copy_ = std::move(o.copy_);
  }
  return *this;
}

LoanedSample::~LoanedSample() {
  (void)release();
}

Result<void> LoanedSample::release() {
  if (!valid_) return make_error(ErrorCode::kInvalidArgument, "sample already released");
  valid_ = false;
  if (registry_) registry_->release(info_.sequence_number);
  registry_.reset();
  anchor_.reset();
  copy_.reset();
  body_ = {};
  return {};
}

Result<std::unique_ptr<RawReader>> Participant::create_raw_reader(const RawReaderOptions& options,
                                                                  RawReaderListener listener) {
  auto r = impl_->create_raw_reader(options, std::move(listener));
  if (!r) return r.error();
  return std::unique_ptr<RawReader>(new RawReader(std::move(r).value()));
}

Guid Participant::guid() const {
  return impl_->guid();
}
const ParticipantOptions& Participant::options() const {
  return impl_->options();
}
std::vector<DiscoveredParticipant> Participant::discovered_participants() const {
  return impl_->discovered_participants();
}
ParticipantStats Participant::stats() const {
  return impl_->stats();
}
Locator Participant::unicast_locator() const {
  return impl_->transport().locators().user_unicast;
}

Writer::Writer(std::shared_ptr<detail::WriterImpl> impl) : impl_(std::move(impl)) {}
Writer::~Writer() {
  impl_->rtps->flush();
  impl_->participant->remove_writer(*impl_);
}
Result<void> Writer::write(Bytes cdr_body, const WriteOptions& options) {
  return impl_->write(cdr_body, options, false);
}
Result<void> Writer::write_serialized(Bytes payload, const WriteOptions& options) {
  if (payload.size() < 4) {
    return make_error(ErrorCode::kInvalidArgument, "serialized payload shorter than its header");
  }
  return impl_->write(payload, options, true);
}
Result<Loan> Writer::loan(size_t body_size) {
  auto p = impl_->loan(body_size);
  if (!p) return p.error();
  Loan l;
  l.writer_ = impl_;
  l.data_ = reinterpret_cast<std::byte*>(p.value());
  l.size_ = body_size;
  return l;
}

Result<void> Writer::write(Loan&& loan, const WriteOptions& options) {
  if (loan.writer_ != impl_) {
    return make_error(ErrorCode::kInvalidArgument,
                      loan.writer_ ? "loan of another writer" : "loan already written or released");
  }
  const size_t size = loan.size_;
  loan.writer_.reset();
  return impl_->write_loan(size, options);
}

Loan& Loan::operator=(Loan&& o) noexcept {
  if (this != &o) {
    (void)release();
    writer_ = std::move(o.writer_);
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
  }
  return *this;
}

Loan::~Loan() {
  (void)release();
}

Result<void> Loan::release() {
  if (!writer_) {
    return make_error(ErrorCode::kInvalidArgument, "loan already written or released");
  }
  writer_->rtps->release_loan();
  writer_.reset();
  return {};
}

void Writer::flush() {
  impl_->rtps->flush();
}
size_t Writer::matched_readers() const {
  return impl_->rtps->matched_readers();
}
bool Writer::wait_for_readers(size_t n, Duration timeout) {
  return impl_->rtps->wait_for_readers(n, std::chrono::steady_clock::now() + timeout);
}
bool Writer::wait_for_acknowledgments(Duration timeout) {
  return impl_->rtps->wait_for_acknowledgments(std::chrono::steady_clock::now() + timeout);
}
const Guid& Writer::guid() const {
  return impl_->endpoint.guid;
}
WriterStats Writer::stats() const {
  return impl_->rtps->stats();
}

Reader::Reader(std::shared_ptr<detail::ReaderImpl> impl) : impl_(std::move(impl)) {}
Reader::~Reader() {
  impl_->participant->remove_reader(*impl_);
}
size_t Reader::matched_writers() const {
  return impl_->rtps->matched_writers();
}
bool Reader::wait_for_writers(size_t n, Duration timeout) {
  return impl_->rtps->wait_for_writers(n, std::chrono::steady_clock::now() + timeout);
}
const Guid& Reader::guid() const {
  return impl_->endpoint.guid;
}
ReaderStats Reader::stats() const {
  return impl_->rtps->stats();
}

RawReader::RawReader(std::shared_ptr<detail::RawReaderImpl> impl) : impl_(std::move(impl)) {}
RawReader::~RawReader() {
  impl_->participant->remove_raw_reader(*impl_);
}
void RawReader::resume() {
  impl_->participant->raw_resume(*impl_);
}
size_t RawReader::matched_writers() const {
  return impl_->participant->raw_matched(*impl_);
}
std::vector<TopicInfo> RawReader::topics() const {
  return impl_->participant->raw_topics(*impl_);
}
ReaderStats RawReader::stats() const {
  return impl_->participant->raw_stats(*impl_);
}

}  // namespace pubsub
