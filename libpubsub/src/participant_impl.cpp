// ParticipantImpl, main part: construction, lifecycle, and creating and removing local endpoints.
// participant_impl.hpp has the overview of the whole class (what lives in which file, who owns
// what, which thread runs what, the lock order).
//
// - create() checks the options; start() builds the transport (UDP, or a FakeNetwork's), the
//   Discovery agent and the shared-memory receiver, then starts the transport's receive workers
//   and the event thread. close() stops them the other way round (event thread, shared-memory
//   thread, receive workers) and then, under entities_mu_, drops the endpoints - which breaks the
//   participant <-> handle cycles - and publishes empty routes.
// - create_writer/create_reader/create_raw_reader run on the application's thread: they check
//   the topic and QoS, build the endpoint and match it against remote_ under entities_mu_,
//   publish the routes, and only after releasing the lock announce it through Discovery. Our own
//   endpoints then come back through on_endpoint_discovered() (participant_matching.cpp), which
//   matches them with this participant's other endpoints.
// - remove_writer/remove_reader/remove_raw_reader undo that: unregister under entities_mu_,
//   publish the routes, then withdraw the endpoint and run on_endpoint_lost() for it.
// - stats() and the raw_* queries read under entities_mu_ (discovery's counts before taking it).
#include "participant_impl.hpp"

#include "common/hex.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>

#include <arpa/inet.h>

#include "common/glob.hpp"
#include "common/thread_name.hpp"
#include "discovery/matching.hpp"
#include "environment.hpp"
#include "wire/constants.hpp"

namespace pubsub::detail {
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

// Parameters carry a 16-bit length: blobs must leave room in one parameter.
constexpr size_t kMaxBlobBytes = 32768;

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
    : options_(options), reception_clock_(options.steady_reception_clock), prefix_(make_prefix()) {
  limits_.max_sample_size =
      static_cast<uint32_t>(std::min<size_t>(options.max_sample_size, UINT32_MAX));
  routes_.publish(std::make_shared<Routes>());
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
    t.receive_coalesce = options_.receive_coalesce;
    if (const char* c = std::getenv("PUBSUB_RECEIVE_COALESCE_US")) {
      t.receive_coalesce = std::chrono::microseconds(std::atoi(c));
    }
    t.segmentation_offload =
        options_.udp_segmentation_offload && !environment_says_off("PUBSUB_UDP_GSO");
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
  dc.limits = options_.discovery_limits;
  dc.log = [this](const std::string& m) { log(m); };
  discovery_ = std::make_unique<discovery::Discovery>(dc, *transport_, prefix_, *this);
  start_shared_memory();
  if (auto r = transport_->start(*this); !r) return r;
  schedule_timer(Clock::now());
  event_thread_ = std::thread([this] { io_.run(); });
  common::name_thread(event_thread_, "pubsub-events");
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
  auto r = shm::ShmReceiver::create(shm::segment_name(common::to_hex(prefix_) + ".bell"),
                                    options_.shm_receive_spin, reception_clock_,
                                    [this](const std::string& m) { log(m); });
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
  routes_.publish(std::make_shared<Routes>());
}

EntityId ParticipantImpl::next_entity_id(uint8_t kind) {
  return EntityId{(next_entity_key_++ << 8) | kind};
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
    e.policies = qos.policies;
    e.policies.other.clear();  // only remote endpoints carry parameters we do not interpret
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
      if (!re.data.is_writer() && matches_locked(e, re.data, true)) {
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
    e.policies = qos.policies;
    e.policies.other.clear();
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
      if (re.data.is_writer() && matches_locked(re.data, e, false)) {
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
      if (auto ok = common::check_glob(p); !ok)
        return ok.error().with_context("topic pattern '" + p + "'");
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
  finish_matching(announce, deferred);
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

// ---- statistics and raw-reader queries ------------------------------------------------------

std::vector<DiscoveredParticipant> ParticipantImpl::discovered_participants() const {
  return discovery_->participants();
}

std::vector<DiscoveredTopic> ParticipantImpl::discovered_topics() const {
  std::map<std::string, DiscoveredTopic> by_name;
  {
    std::lock_guard lk(entities_mu_);
    for (const auto& [g, e] : remote_) {
      if (e.local) continue;
      DiscoveredTopic& t = by_name[e.data.topic_name];
      if (t.name.empty()) t.name = e.data.topic_name;
      if (t.type_name.empty() || (e.data.is_writer() && t.writers == 0)) {
        t.type_name = e.data.type_name;
      }
      (e.data.is_writer() ? t.writers : t.readers)++;
    }
  }
  std::vector<DiscoveredTopic> out;
  out.reserve(by_name.size());
  for (auto& [name, t] : by_name) out.push_back(std::move(t));
  return out;
}

ParticipantStats ParticipantImpl::stats() const {
  ParticipantStats s;
  const auto t = transport_->stats();
  s.datagrams_received = t.datagrams_received;
  s.bytes_received = t.bytes_received;
  s.datagrams_sent = t.datagrams_sent;
  s.bytes_sent = t.bytes_sent;
  s.gso_messages_sent = t.gso_messages_sent;
  s.gro_messages_received = t.gro_messages_received;
  s.coalescing_sleeps = t.coalescing_sleeps;
  s.malformed_messages = malformed_.load() + discovery_->malformed();
  for (size_t i = 0; i < 16; ++i) s.malformed_by_reason[i] = malformed_by_reason_[i].load();
  s.remote_participants = discovery_->participants().size();
  s.participants_refused = discovery_->participants_refused();
  s.endpoints_refused = discovery_->endpoints_refused();
  std::lock_guard lk(entities_mu_);
  for (const auto& [g, e] : remote_) {
    if (e.local) continue;
    (e.data.is_writer() ? s.remote_writers : s.remote_readers)++;
  }
  for (size_t i = 0; i < kQosPolicyCount; ++i) {
    s.incompatible_by_policy[i] = incompatible_by_policy_[i];
    s.incompatible_qos += incompatible_by_policy_[i];
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

}  // namespace pubsub::detail
