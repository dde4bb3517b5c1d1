// ParticipantImpl, matching: discovery callbacks, matching remote endpoints with local ones, and
// the delivery path of each matched pair.
// participant_impl.hpp has the overview of the whole class (what lives in which file, who owns
// what, which thread runs what, the lock order).
//
// - on_endpoint_discovered()/on_endpoint_lost() are Discovery's listener calls. They run on a
//   receive worker (SEDP, from inside a builtin reader's delivery callback, with that reader's
//   lock held; an SPDP dispose), on the event thread (lease expiry), or on the application's
//   thread (create_* and remove_* report our own endpoints the same way). Under entities_mu_
//   they update remote_, connect or disconnect, and publish the routes; new raw-reader
//   subscriptions are announced, and raw-reader listeners called (Deferred), after the lock is
//   released.
// - A remote writer is matched with every compatible local reader (discovery::match) and every
//   raw reader that wants its topic: subscription_for_locked() finds or creates the raw reader's
//   subscription for it, one per class of writer - topic, type, keyedness, reliability,
//   partitions, ownership kind and whether it is durable (TRANSIENT_LOCAL or more). The
//   subscription's reader asks for what every writer of its class accepts: the writer's
//   reliability, ownership kind and partitions, TRANSIENT_LOCAL from a durable writer (so a raw
//   reader that joins late gets its history), and the most lenient value of every other policy
//   (infinite deadline and latency budget, AUTOMATIC liveliness with an infinite lease,
//   reception order, instance presentation, XCDR1 and XCDR2). A remote reader is matched with
//   every compatible local writer.
// - A pair that fails a requested/offered rule is counted per policy and logged once
//   (matches_locked()); raw readers never fail one, by construction.
// - Paths (docs/ARCHITECTURE.md, "Delivery paths"): intra-process when both endpoints are in the
//   process-wide LocalEndpoints registry, else shared memory when the peer announced a segment
//   or doorbell on this host and it opens, else the network - for a reader only while
//   network_data is on. connect_writer_locked() chooses for a local reader (attaching a
//   shared-memory writer to shm_), reader_path_locked() for a local writer.
// - Functions ending in _locked expect entities_mu_ held. LocalEndpoints::mu and the
//   ShmReceiver's lock are taken under it and are leaves; the writers' and readers' own locks
//   come after it.
#include "participant_impl.hpp"

#include <algorithm>
#include <cstring>

#include "common/glob.hpp"
#include "discovery/matching.hpp"
#include "pubsub/network.hpp"
#include "wire/constants.hpp"

namespace pubsub {

bool raw_reader_wants(const RawReaderOptions& options, const std::string& topic) {
  bool in = false;
  for (const auto& p : options.include) in = in || common::glob_match(p, topic);
  if (!in) return false;
  for (const auto& p : options.exclude) {
    if (common::glob_match(p, topic)) return false;
  }
  return !options.filter || options.filter(topic);
}

}  // namespace pubsub

namespace pubsub::detail {
namespace {

using Clock = std::chrono::steady_clock;

rtps::RemoteWriterInfo writer_info(const discovery::RemoteEndpoint& e) {
  rtps::RemoteWriterInfo w;
  w.guid = e.data.guid;
  w.reliable = e.data.reliability == ReliabilityKind::kReliable;
  w.unicast = e.unicast;
  w.preemptive_base_zero = wire::is_vendor(e.vendor, wire::kVendorFastDds);
  return w;
}

rtps::RemoteReaderInfo reader_info(const discovery::RemoteEndpoint& e) {
  rtps::RemoteReaderInfo r;
  r.guid = e.data.guid;
  r.reliable = e.data.reliability == ReliabilityKind::kReliable;
  r.durable = e.data.durability >= DurabilityKind::kTransientLocal;
  r.unicast = e.unicast;
  r.multicast = e.multicast;
  return r;
}

// Datagrams for Fast DDS readers (reader_path_locked).
constexpr size_t kFastDdsDatagram = 65000;

}  // namespace

LocalEndpoints& local_endpoints() {
  static auto* e = new LocalEndpoints();  // never destroyed: participants may outlive statics
  return *e;
}

// ---- raw readers ----------------------------------------------------------------------------

bool RawReaderImpl::wants(const std::string& topic) const {
  return raw_reader_wants(options, topic);
}

namespace {

bool durable(DurabilityKind k) {
  return k >= DurabilityKind::kTransientLocal;
}

// Whether a raw reader's subscription reads writer `w` (the class of subscription_for_locked).
bool same_class(const RawReaderImpl::Subscription& s, const wire::EndpointData& w) {
  const auto& i = s.info;
  return i.name == w.topic_name && i.type_name == w.type_name && i.keyed == w.keyed() &&
         i.reliability == w.reliability && i.partitions == w.partitions &&
         s.endpoint.policies.ownership == w.policies.ownership &&
         durable(s.endpoint.durability) == durable(w.durability);
}

// What a raw reader requests from a writer of w's class: all it must match, the most lenient
// value of everything else.
wire::EndpointData raw_reader_endpoint(const wire::EndpointData& w) {
  wire::EndpointData e;
  e.topic_name = w.topic_name;
  e.type_name = w.type_name;
  e.reliability = w.reliability;
  e.durability =
      durable(w.durability) ? DurabilityKind::kTransientLocal : DurabilityKind::kVolatile;
  e.partitions = w.partitions;
  e.data_representation = {wire::kXcdr1, wire::kXcdr2};
  e.policies.ownership = w.policies.ownership;
  e.policies.deadline = kInfinite;
  e.policies.latency_budget = kInfinite;
  e.policies.liveliness = {LivelinessKind::kAutomatic, kInfinite};
  return e;
}

TopicInfo topic_info(const wire::EndpointData& w) {
  TopicInfo t;
  t.name = w.topic_name;
  t.type_name = w.type_name;
  t.keyed = w.keyed();
  t.reliability = w.reliability;
  t.durability = w.durability;
  t.history = w.history;
  t.max_blocking_time = w.max_blocking_time;
  t.partitions = w.partitions;
  t.data_representation = w.data_representation;
  t.type_information = w.type_information;
  t.policies = w.policies;
  return t;
}

// This host's IPv4 addresses, read each time (interfaces come and go); called once per writer
// matched with a raw reader.
std::vector<uint32_t> host_addresses() {
  std::vector<uint32_t> out;
  if (auto ifs = network_interfaces()) {
    for (const auto& i : *ifs) out.push_back(i.address);
  }
  return out;
}

}  // namespace

std::shared_ptr<const WriterInfo> ParticipantImpl::writer_info_locked(
    const discovery::RemoteEndpoint& e) const {
  auto info = std::make_shared<WriterInfo>();
  info->guid = e.data.guid;
  info->topic = topic_info(e.data);
  std::memcpy(info->vendor, e.vendor, 2);
  for (const auto& p : discovery_->participants()) {
    if (p.guid_prefix != e.data.guid.prefix) continue;
    info->participant_user_data = p.user_data;
    info->participant_lease = p.lease_duration;
    info->unicast = p.unicast;
  }
  for (const auto& l : e.data.unicast) {
    if (std::find(info->unicast.begin(), info->unicast.end(), l) == info->unicast.end()) {
      info->unicast.push_back(l);
    }
  }
  info->same_host = discovery::same_host(e.data, info->unicast, shm::host_id(), host_addresses());
  return info;
}

RawReaderImpl::Subscription* ParticipantImpl::subscription_for_locked(
    RawReaderImpl& raw, const wire::EndpointData& w, std::vector<wire::EndpointData>& announce) {
  for (auto& s : raw.subscriptions) {
    if (same_class(*s, w)) return s.get();
  }
  auto s = std::make_unique<RawReaderImpl::Subscription>();
  s->info = topic_info(w);

  auto& e = s->endpoint;
  e = raw_reader_endpoint(w);
  e.guid =
      Guid{prefix_, next_entity_id(w.keyed() ? wire::kKindReaderWithKey : wire::kKindReaderNoKey)};
  e.history = raw.options.qos.history;
  if (shm_) e.shm = wire::ShmLocator{shm::host_id(), shm_->doorbell_name()};

  rtps::ReaderConfig rc;
  rc.guid = e.guid;
  rc.qos = raw.options.qos;
  rc.qos.reliability = e.reliability;
  rc.qos.durability = e.durability;
  rc.qos.policies = e.policies;
  rc.max_sample_size = options_.max_sample_size;
  RawReaderImpl* rawp = &raw;
  const TopicInfo* info = &s->info;
  s->rtps = std::make_shared<rtps::StatefulReader>(
      rc, *transport_, prefix_,
      [rawp, info](const rtps::ReceivedSample& x) {
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
      },
      [rawp] {
        if (rawp->listener.on_batch_end) rawp->listener.on_batch_end();
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

// ---- connecting writers and readers ---------------------------------------------------------

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
    const bool history = e.data.durability >= DurabilityKind::kTransientLocal &&
                         lr.endpoint.durability >= DurabilityKind::kTransientLocal;
    auto r = shm_->attach(g, e.data.shm->name, lr.rtps, reliable, history);
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

UndeliveredSamples ParticipantImpl::disconnect_writer_locked(LocalReader& lr, const Guid& writer) {
  UndeliveredSamples undelivered;
  if (auto m = std::find(lr.matched.begin(), lr.matched.end(), writer); m != lr.matched.end()) {
    lr.matched.erase(m);
    undelivered = lr.rtps->remove_writer(writer);
  }
  if (auto m = std::find(lr.local_writers.begin(), lr.local_writers.end(), writer);
      m != lr.local_writers.end()) {
    lr.local_writers.erase(m);
    lr.rtps->remove_local_writer(writer);
    if (shm_) shm_->detach(writer, lr.endpoint.guid);
  }
  return undelivered;
}

ParticipantImpl::LocalReader* ParticipantImpl::find_local_reader_locked(
    const std::shared_ptr<rtps::StatefulReader>& r) {
  for (auto& lr : readers_) {
    if (lr.rtps == r) return &lr;
  }
  return nullptr;
}

bool ParticipantImpl::matches_locked(const wire::EndpointData& w, const wire::EndpointData& r,
                                     bool local_writer, discovery::MatchResult* result,
                                     bool* newly) {
  discovery::MatchResult local_result;
  discovery::MatchResult& m = result ? *result : local_result;
  m = discovery::match(w, r);
  if (m.kind != discovery::MatchResult::Kind::kIncompatibleQos) return m.ok();
  const Guid& local = local_writer ? w.guid : r.guid;
  const Guid& remote = local_writer ? r.guid : w.guid;
  if (incompatible_seen_.emplace(local, remote).second) {
    if (newly) *newly = true;
    ++incompatible_by_policy_[static_cast<size_t>(m.policy)];
    log(std::string(local_writer ? "OFFERED" : "REQUESTED") + "_INCOMPATIBLE_QOS on topic '" +
        w.topic_name + "': " + (local_writer ? "our writer " : "our reader ") + local.to_string() +
        (local_writer ? " and reader " : " and writer ") + remote.to_string() + " do not match, " +
        m.reason);
  }
  return false;
}

void ParticipantImpl::match_remote_writer_locked(const discovery::RemoteEndpoint& e,
                                                 Deferred& deferred,
                                                 std::vector<wire::EndpointData>& announce) {
  for (auto& lr : readers_) {
    if (lr.raw || !matches_locked(e.data, lr.endpoint, false)) continue;
    connect_writer_locked(lr, e);
  }
  for (auto& raw : raw_readers_) {
    if (!raw->wants(e.data.topic_name)) continue;
    auto* sub = subscription_for_locked(*raw, e.data, announce);
    if (std::find(sub->writers.begin(), sub->writers.end(), e.data.guid) != sub->writers.end()) {
      continue;
    }
    auto winfo = writer_info_locked(e);
    {
      std::lock_guard wl(raw->writers_mu);
      raw->writer_infos[e.data.guid] = winfo;
    }
    // What a raw reader asks for suits every writer of its class but one whose data
    // representation it cannot take (neither XCDR1 nor XCDR2): counted, logged and reported to
    // the listener once, not matched.
    discovery::MatchResult m;
    bool newly = false;
    if (!matches_locked(e.data, sub->endpoint, false, &m, &newly)) {
      if (newly && raw->listener.on_writer_incompatible) {
        deferred.push_back([raw, info = &sub->info, g = e.data.guid, m] {
          raw->listener.on_writer_incompatible(*info, g, m.policy, m.reason);
        });
      }
      continue;
    }
    LocalReader* lr = find_local_reader_locked(sub->rtps);
    if (!lr || !connect_writer_locked(*lr, e)) continue;
    sub->writers.push_back(e.data.guid);
    if (raw->listener.on_writer_matched) {
      deferred.push_back([raw, info = &sub->info, winfo = std::move(winfo)] {
        raw->listener.on_writer_matched(*info, *winfo);
      });
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
  if (options_.max_message_size == 0 && wire::is_vendor(e.vendor, wire::kVendorFastDds)) {
    info.max_datagram = kFastDdsDatagram;
  }
  // A Cyclone DDS reader answers a HEARTBEAT from its event thread once its receive thread has
  // read on, which looks like a deliberate delay; a window grown for it overran its 1-MB socket
  // buffer with bursts of large samples (perf/RESULTS.md, "A window cap for deliberate delays
  // only").
  info.queued_answers = wire::is_vendor(e.vendor, wire::kVendorCyclone);
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
    if (matches_locked(w->endpoint, e.data, true)) connect_reader_locked(*w, e);
  }
}

// ---- discovery callbacks --------------------------------------------------------------------

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
  finish_matching(announce, deferred);
}

void ParticipantImpl::finish_matching(const std::vector<wire::EndpointData>& announce,
                                      Deferred& deferred) {
  for (const auto& a : announce) {
    discovery_->announce(a);
    discovery::RemoteEndpoint self;
    if (discovery_->resolve(a, self)) on_endpoint_discovered(self);
  }
  for (auto& f : deferred) f();
}

bool ParticipantImpl::told_to_listener_locked(const rtps::StatefulReader* r) const {
  for (const auto& raw : raw_readers_) {
    if (!raw->listener.on_writer_lost) continue;
    for (const auto& sub : raw->subscriptions) {
      if (sub->rtps.get() == r) return true;
    }
  }
  return false;
}

void ParticipantImpl::log_undelivered(const Guid& g, const std::string& topic,
                                      const UndeliveredSamples& u) {
  log("writer " + g.to_string() + " on topic '" + topic + "' gone with " + std::to_string(u.count) +
      " of its samples not delivered (held back, or sent and never received): lost unless it "
      "comes back and sends them again");
}

void ParticipantImpl::on_endpoint_lost(const Guid& g) {
  Deferred deferred;
  {
    std::lock_guard lk(entities_mu_);
    auto it = remote_.find(g);
    if (it == remote_.end()) return;
    const bool writer = it->second.data.is_writer();
    const auto shm_locator = it->second.data.shm;
    const std::string topic = it->second.data.topic_name;
    remote_.erase(it);
    if (writer) {
      // Deleted, or its lease expired: what it had not delivered is dropped with its proxy -
      // said, not silent: told to a raw reader's listener that takes on_writer_lost (which then
      // reports it, as the recorder does), logged for every other reader. Matched again (after
      // an outage), a durable writer sends what it still has again.
      std::vector<std::pair<const rtps::StatefulReader*, UndeliveredSamples>> dropped;
      for (auto& lr : readers_) {
        const UndeliveredSamples u = disconnect_writer_locked(lr, g);
        if (u.count != 0) dropped.emplace_back(lr.rtps.get(), u);
      }
      for (const auto& [r, u] : dropped) {
        if (!told_to_listener_locked(r)) log_undelivered(g, topic, u);
      }
      for (auto& raw : raw_readers_) {
        for (auto& sub : raw->subscriptions) {
          auto m = std::find(sub->writers.begin(), sub->writers.end(), g);
          if (m == sub->writers.end()) continue;
          sub->writers.erase(m);
          if (!raw->listener.on_writer_lost) continue;
          UndeliveredSamples u;
          for (const auto& [r, d] : dropped) {
            if (r == sub->rtps.get()) u = d;
          }
          // The subscription's TopicInfo itself (stable while the raw reader lives), as
          // on_writer_matched's: a listener may key its topics by its address.
          deferred.push_back(
              [raw, info = &sub->info, g, u] { raw->listener.on_writer_lost(*info, g, u); });
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

}  // namespace pubsub::detail
