#include "discovery/discovery.hpp"

#include <cstring>

#include "common/hex.hpp"
#include "discovery/builtin_config.hpp"
#include "wire/constants.hpp"

namespace pubsub::discovery {
namespace {

using Clock = std::chrono::steady_clock;

// handle_spdp(): a newcomer's announcements answered with ours (unicast), and for how long after
// its first. Fast DDS announces 5 times, 100 ms apart, when it starts.
constexpr uint32_t kAnswersToNewcomer = 5;
constexpr auto kNewcomerPeriod = std::chrono::seconds(2);

int64_t steady_ns(rtps::SteadyTime t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

Guid builtin(const GuidPrefix& p, uint32_t entity) {
  return Guid{p, EntityId{entity}};
}

// SEDP: transient-local, keyed by the endpoint GUID.
rtps::WriterConfig sedp_writer_config(const GuidPrefix& p, uint32_t entity) {
  return builtin_writer_config(p, entity, DurabilityKind::kTransientLocal, true, 65536, 32u << 20);
}

rtps::ReaderConfig sedp_reader_config(const GuidPrefix& p, uint32_t entity, size_t max_sample) {
  return builtin_reader_config(p, entity, DurabilityKind::kTransientLocal, 65536, 32u << 20,
                               max_sample);
}

// Participant GUID as a key hash, and as the serialized key of a dispose.
KeyHash guid_key_hash(const Guid& g) {
  KeyHash h;
  h.value = g.bytes();
  return h;
}

std::vector<uint8_t> key_payload(uint16_t pid, const Guid& g) {
  std::vector<uint8_t> out{0x00, 0x03, 0x00, 0x00};
  const auto b = g.bytes();
  out.push_back(static_cast<uint8_t>(pid));
  out.push_back(static_cast<uint8_t>(pid >> 8));
  out.push_back(16);
  out.push_back(0);
  out.insert(out.end(), b.begin(), b.end());
  out.insert(out.end(), {0x01, 0x00, 0x00, 0x00});  // sentinel
  return out;
}

}  // namespace

Discovery::Discovery(const DiscoveryConfig& config, Transport& transport, const GuidPrefix& prefix,
                     DiscoveryListener& listener)
    : config_(config),
      transport_(transport),
      prefix_(prefix),
      listener_(listener),
      type_lookup_(transport, prefix, config.max_sample_size),
      type_server_(transport, prefix, config.max_sample_size) {
  wire::ParticipantData me;
  me.guid_prefix = prefix;
  me.vendor[0] = wire::kVendorId[0];
  me.vendor[1] = wire::kVendorId[1];
  me.version[0] = wire::kProtocolMajor;
  me.version[1] = wire::kProtocolMinor;
  me.domain_id = config.domain_id;
  me.builtin_endpoints =
      wire::kBuiltinParticipantAnnouncer | wire::kBuiltinParticipantDetector |
      wire::kBuiltinPublicationsAnnouncer | wire::kBuiltinPublicationsDetector |
      wire::kBuiltinSubscriptionsAnnouncer | wire::kBuiltinSubscriptionsDetector |
      wire::kBuiltinTypeLookupRequestWriter | wire::kBuiltinTypeLookupReplyReader |
      wire::kBuiltinTypeLookupRequestReader | wire::kBuiltinTypeLookupReplyWriter |
      wire::kBuiltinParticipantMessageWriter;
  me.lease_duration = config.lease_duration;
  const auto& loc = transport.locators();
  me.default_unicast.push_back(loc.user_unicast);
  me.metatraffic_unicast.push_back(loc.meta_unicast);
  if (loc.user_multicast) me.default_multicast.push_back(*loc.user_multicast);
  if (loc.meta_multicast) me.metatraffic_multicast.push_back(*loc.meta_multicast);
  me.user_data = config.user_data;
  spdp_payload_ = wire::encode_participant_data(me);

  pub_writer_ = std::make_unique<rtps::StatefulWriter>(
      sedp_writer_config(prefix, wire::kEntityIdSedpPubWriter), transport, prefix);
  sub_writer_ = std::make_unique<rtps::StatefulWriter>(
      sedp_writer_config(prefix, wire::kEntityIdSedpSubWriter), transport, prefix);
  auto pmd = builtin_writer_config(prefix, wire::kEntityIdPmdWriter,
                                   DurabilityKind::kTransientLocal, true, 16, 4096);
  pmd.qos.history = {HistoryKind::kKeepLast, 1};  // per instance (kind): the latest assertion
  pmd_writer_ = std::make_unique<rtps::StatefulWriter>(pmd, transport, prefix);
  pub_reader_ = std::make_unique<rtps::StatefulReader>(
      sedp_reader_config(prefix, wire::kEntityIdSedpPubReader, config.max_sample_size), transport,
      prefix, [this](const rtps::ReceivedSample& s) { return handle_sedp(s, true); });
  sub_reader_ = std::make_unique<rtps::StatefulReader>(
      sedp_reader_config(prefix, wire::kEntityIdSedpSubReader, config.max_sample_size), transport,
      prefix, [this](const rtps::ReceivedSample& s) { return handle_sedp(s, false); });
}

// ---- SPDP -----------------------------------------------------------------------------------

void Discovery::send_spdp(std::span<const Locator> to, bool dispose) {
  if (to.empty()) return;
  std::lock_guard lk(spdp_mu_);
  std::vector<uint8_t> buf(spdp_payload_.size() + 256);
  wire::MessageBuilder b(buf.data(), buf.size());
  b.header(prefix_);
  b.info_ts(Time::now());
  const KeyHash key = guid_key_hash(builtin(prefix_, wire::kEntityIdParticipant));
  wire::OutgoingInlineQos qos;
  qos.key_hash = &key;
  if (dispose) {
    qos.status_info = wire::kStatusDisposed | wire::kStatusUnregistered;
    const auto k =
        key_payload(wire::kPidParticipantGuid, builtin(prefix_, wire::kEntityIdParticipant));
    b.data(EntityId{wire::kEntityIdUnknown}, EntityId{wire::kEntityIdSpdpWriter}, ++spdp_sn_, qos,
           k.data(), k.size(), nullptr, 0, true);
  } else {
    b.data(EntityId{wire::kEntityIdUnknown}, EntityId{wire::kEntityIdSpdpWriter}, ++spdp_sn_, qos,
           spdp_payload_.data(), spdp_payload_.size());
  }
  const ConstBuffer part{buf.data(), b.size()};
  transport_.send(to, {&part, 1});
}

void Discovery::announce_participant() {
  send_spdp(transport_.locators().spdp_destinations, false);
}

void Discovery::leave() {
  std::vector<Locator> to = transport_.locators().spdp_destinations;
  {
    std::lock_guard lk(mu_);
    for (const auto& [prefix, p] : participants_) {
      if (!p->data.metatraffic_unicast.empty()) to.push_back(p->data.metatraffic_unicast.front());
    }
  }
  send_spdp(to, true);
}

void Discovery::handle_spdp(const wire::ReceiveContext& ctx, const wire::DataSubmessage& m) {
  if (ctx.source_prefix == prefix_) return;  // our own announcement, looped back
  if (m.qos.status_info & (wire::kStatusDisposed | wire::kStatusUnregistered)) {
    remove_participant(ctx.source_prefix);
    return;
  }
  if (!m.has_data) return;
  wire::ParticipantData data;
  if (!wire::decode_participant_data(m.payload, m.payload_size, data)) {
    malformed_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (data.guid_prefix == prefix_) return;
  if (data.domain_id && *data.domain_id != config_.domain_id) return;
  const auto now = Clock::now();
  bool is_new = false;
  bool answer = false;
  std::string refusal;
  {
    std::lock_guard lk(mu_);
    auto it = participants_.find(data.guid_prefix);
    if (it == participants_.end()) {
      refusal = participant_over_limit(data);
      if (refusal.empty()) {
        it = participants_.emplace(data.guid_prefix, std::make_shared<RemoteParticipant>()).first;
        it->second->discovered = now;
        is_new = true;
      }
    }
    if (refusal.empty()) {
      RemoteParticipant& p = *it->second;
      p.data = data;
      p.last_seen_ns.store(steady_ns(now), std::memory_order_relaxed);
      // Each of a newcomer's first announcements is answered, not only the first: a participant
      // that is still starting may drop our answer (a Fast DDS one does when it comes within
      // milliseconds of its first announcement) and would then learn of us only from our next
      // periodic announcement, up to announce_period later - the samples its writers wrote
      // meanwhile would miss us.
      answer = p.answered < kAnswersToNewcomer && now - p.discovered < kNewcomerPeriod;
      if (answer) p.answered++;
    }
  }
  if (!refusal.empty()) {
    refused(true, "participant " + common::to_hex(data.guid_prefix) + ": " + refusal);
    return;
  }
  if (is_new) add_builtin_proxies(data, now);
  if (answer) {
    // Answer at once so the newcomer need not wait for our next periodic announcement.
    std::vector<Locator> to = data.metatraffic_unicast;
    if (to.size() > 1) to.resize(1);
    send_spdp(to, false);
  }
}

namespace {

// The address a participant is counted under: its first IPv4 metatraffic, else default, unicast
// locator; 0 for none.
uint32_t counted_address(const wire::ParticipantData& p) {
  for (const auto* list : {&p.metatraffic_unicast, &p.default_unicast})
    for (const Locator& l : *list)
      if (l.kind == Locator::kUdpV4) return l.ipv4();
  return 0;
}

}  // namespace

std::string Discovery::participant_over_limit(const wire::ParticipantData& p) const {
  const DiscoveryLimits& l = config_.limits;
  if (participants_.size() >= l.max_participants)
    return std::to_string(participants_.size()) + " participants known (max_participants " +
           std::to_string(l.max_participants) + ")";
  const uint32_t address = counted_address(p);
  size_t same = 0;
  for (const auto& [prefix, other] : participants_) same += counted_address(other->data) == address;
  if (same >= l.max_participants_per_address)
    return std::to_string(same) + " participants known at " +
           Locator::udp_v4(address, 0).address_string() + " (max_participants_per_address " +
           std::to_string(l.max_participants_per_address) + ")";
  return {};
}

std::string Discovery::endpoint_over_limit(const RemoteParticipant& owner) const {
  const DiscoveryLimits& l = config_.limits;
  if (owner.endpoints.size() >= l.max_endpoints_per_participant)
    return "its participant has " + std::to_string(owner.endpoints.size()) +
           " endpoints (max_endpoints_per_participant " +
           std::to_string(l.max_endpoints_per_participant) + ")";
  if (endpoint_count_ >= l.max_endpoints)
    return std::to_string(endpoint_count_) + " endpoints known (max_endpoints " +
           std::to_string(l.max_endpoints) + ")";
  return {};
}

void Discovery::refused(bool participant, const std::string& what) {
  auto& n = participant ? participants_refused_ : endpoints_refused_;
  if (n.fetch_add(1) != 0 || !config_.log) return;
  std::string shown = what.substr(0, 300);  // a topic name is the announcer's text
  for (char& c : shown)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  config_.log(std::string("discovery: refused ") + shown + "; further " +
              (participant ? "participants" : "endpoints") +
              " over a limit are counted, not logged");
}

void Discovery::add_builtin_proxies(const wire::ParticipantData& p, rtps::SteadyTime now) {
  // TypeLookup first: once the SEDP proxies exist a writer of p may be matched, and the recorder
  // then asks p for its type at once.
  type_lookup_.add_participant(p, now);
  type_server_.add_participant(p, now);
  std::vector<Locator> meta = p.metatraffic_unicast;
  if (meta.empty()) meta = p.default_unicast;
  auto reader_info = [&](uint32_t entity) {
    rtps::RemoteReaderInfo r;
    r.guid = builtin(p.guid_prefix, entity);
    r.reliable = true;
    r.durable = true;
    r.unicast = meta;
    return r;
  };
  auto writer_info = [&](uint32_t entity) {
    rtps::RemoteWriterInfo w;
    w.guid = builtin(p.guid_prefix, entity);
    w.reliable = true;
    w.unicast = meta;
    w.preemptive_base_zero = wire::is_vendor(p.vendor, wire::kVendorFastDds);
    return w;
  };
  const uint32_t set = p.builtin_endpoints;
  if (set & wire::kBuiltinPublicationsDetector) {
    pub_writer_->add_reader(reader_info(wire::kEntityIdSedpPubReader), now);
  }
  if (set & wire::kBuiltinSubscriptionsDetector) {
    sub_writer_->add_reader(reader_info(wire::kEntityIdSedpSubReader), now);
  }
  if (set & wire::kBuiltinPublicationsAnnouncer) {
    pub_reader_->add_writer(writer_info(wire::kEntityIdSedpPubWriter), now);
  }
  if (set & wire::kBuiltinSubscriptionsAnnouncer) {
    sub_reader_->add_writer(writer_info(wire::kEntityIdSedpSubWriter), now);
  }
  if (set & wire::kBuiltinParticipantMessageReader) {
    pmd_writer_->add_reader(reader_info(wire::kEntityIdPmdReader), now);
  }
}

void Discovery::remove_participant(const GuidPrefix& prefix) {
  std::shared_ptr<RemoteParticipant> gone;
  {
    std::lock_guard lk(mu_);
    auto it = participants_.find(prefix);
    if (it == participants_.end()) return;
    gone = it->second;
    endpoint_count_ -= gone->endpoints.size();
    participants_.erase(it);
  }
  pub_writer_->remove_reader(builtin(prefix, wire::kEntityIdSedpPubReader));
  sub_writer_->remove_reader(builtin(prefix, wire::kEntityIdSedpSubReader));
  pub_reader_->remove_writer(builtin(prefix, wire::kEntityIdSedpPubWriter));
  sub_reader_->remove_writer(builtin(prefix, wire::kEntityIdSedpSubWriter));
  pmd_writer_->remove_reader(builtin(prefix, wire::kEntityIdPmdReader));
  type_lookup_.remove_participant(prefix);
  type_server_.remove_participant(prefix);
  for (const Guid& g : gone->endpoints) listener_.on_endpoint_lost(g);
}

void Discovery::renew_lease(unsigned worker, const GuidPrefix& prefix) {
  if (prefix == prefix_) return;
  const int64_t now = steady_ns(Clock::now());
  LeaseCache& cache = lease_cache_[worker % kMaxReceiveWorkers];
  if (cache.participant && cache.prefix == prefix) {
    cache.participant->last_seen_ns.store(now, std::memory_order_relaxed);
    return;
  }
  std::lock_guard lk(mu_);
  auto it = participants_.find(prefix);
  if (it == participants_.end()) return;
  it->second->last_seen_ns.store(now, std::memory_order_relaxed);
  cache.prefix = prefix;
  cache.participant = it->second;
}

// ---- SEDP -----------------------------------------------------------------------------------

bool Discovery::resolve(const wire::EndpointData& data, RemoteEndpoint& out) const {
  out.data = data;
  out.unicast = data.unicast;
  out.multicast = data.multicast;
  if (data.guid.prefix == prefix_) {
    const auto& loc = transport_.locators();
    if (out.unicast.empty()) out.unicast.push_back(loc.user_unicast);
    if (out.multicast.empty() && loc.user_multicast) out.multicast.push_back(*loc.user_multicast);
    out.local = true;
    std::memcpy(out.vendor, wire::kVendorId, 2);
    return true;
  }
  std::lock_guard lk(mu_);
  auto it = participants_.find(data.guid.prefix);
  if (it == participants_.end()) return false;
  std::memcpy(out.vendor, it->second->data.vendor, 2);
  if (out.unicast.empty()) out.unicast = it->second->data.default_unicast;
  if (out.multicast.empty()) out.multicast = it->second->data.default_multicast;
  return true;
}

bool Discovery::handle_sedp(const rtps::ReceivedSample& s, bool publications) {
  if (s.status_info & (wire::kStatusDisposed | wire::kStatusUnregistered)) {
    Guid g;
    if (s.has_key_hash) {
      g = Guid::from_bytes(s.key_hash.value.data());
    } else if (!wire::decode_endpoint_key(s.data, s.size, g)) {
      malformed_.fetch_add(1, std::memory_order_relaxed);
      return true;
    }
    {
      std::lock_guard lk(mu_);
      auto it = participants_.find(g.prefix);
      if (it != participants_.end()) endpoint_count_ -= std::erase(it->second->endpoints, g);
    }
    listener_.on_endpoint_lost(g);
    return true;
  }
  wire::EndpointData data;
  if (!wire::decode_endpoint_data(s.data, s.size, publications, data) ||
      data.is_writer() != publications) {
    malformed_.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  {
    // PID_PUBSUB_SHM is ours only from participants of our vendor id.
    std::lock_guard lk(mu_);
    auto it = participants_.find(data.guid.prefix);
    if (it == participants_.end() || !wire::is_vendor(it->second->data.vendor, wire::kVendorId)) {
      data.shm.reset();
    }
    // A Fast DDS 2.9 reader announces no data representation (XCDR1 only, by XTypes) and reads
    // XCDR2 all the same, by the payload's encapsulation: take it at its deeds.
    if (it != participants_.end() && !publications && data.data_representation.empty() &&
        wire::is_vendor(it->second->data.vendor, wire::kVendorFastDds)) {
      data.data_representation = {wire::kXcdr1, wire::kXcdr2};
    }
  }
  RemoteEndpoint e;
  if (!resolve(data, e)) return true;  // participant gone meanwhile
  std::string refusal;
  {
    std::lock_guard lk(mu_);
    auto it = participants_.find(data.guid.prefix);
    if (it != participants_.end()) {
      auto& eps = it->second->endpoints;
      if (std::find(eps.begin(), eps.end(), data.guid) == eps.end()) {
        refusal = endpoint_over_limit(*it->second);
        if (refusal.empty()) {
          eps.push_back(data.guid);
          ++endpoint_count_;
        }
      }
    }
  }
  if (!refusal.empty()) {
    refused(false, std::string(publications ? "writer " : "reader ") + data.guid.to_string() +
                       " on " + data.topic_name + ": " + refusal);
    return true;
  }
  listener_.on_endpoint_discovered(e);
  return true;
}

void Discovery::announce(const wire::EndpointData& endpoint) {
  const auto payload = wire::encode_endpoint_data(endpoint);
  const KeyHash key = guid_key_hash(endpoint.guid);
  rtps::WriteRequest r;
  r.body = payload.data();
  r.body_size = payload.size();
  r.key_hash = &key;
  r.timestamp = Time::now();
  auto& w = endpoint.is_writer() ? *pub_writer_ : *sub_writer_;
  (void)w.write(r, false);
}

void Discovery::withdraw(const wire::EndpointData& endpoint) {
  const auto payload = key_payload(wire::kPidEndpointGuid, endpoint.guid);
  const KeyHash key = guid_key_hash(endpoint.guid);
  rtps::WriteRequest r;
  r.body = payload.data();
  r.body_size = payload.size();
  r.key_hash = &key;
  r.status_info = wire::kStatusDisposed | wire::kStatusUnregistered;
  r.timestamp = Time::now();
  auto& w = endpoint.is_writer() ? *pub_writer_ : *sub_writer_;
  (void)w.write(r, false);
}

// ---- participant messages -------------------------------------------------------------------

void Discovery::assert_participant_liveliness() {
  // ParticipantMessageData {GuidPrefix_t participantGuidPrefix; octet kind[4]; sequence<octet>
  // data;} in CDR big endian, as Cyclone DDS and Fast DDS send it; the key is prefix and kind.
  static constexpr uint8_t kManualLivelinessUpdate[4] = {0x00, 0x00, 0x00, 0x02};
  uint8_t body[12 + 4 + 4] = {};
  std::memcpy(body, prefix_.data(), 12);
  std::memcpy(body + 12, kManualLivelinessUpdate, 4);  // data: an empty sequence (length 0)
  static constexpr uint8_t kCdrBe[4] = {0x00, 0x00, 0x00, 0x00};
  KeyHash key;
  std::memcpy(key.value.data(), body, 16);
  rtps::WriteRequest r;
  r.encapsulation = kCdrBe;
  r.encapsulation_size = 4;
  r.body = body;
  r.body_size = sizeof body;
  r.key_hash = &key;
  r.timestamp = Time::now();
  (void)pmd_writer_->write(r, false);  // KEEP_LAST 1: never waits
}

// ---- routing of builtin traffic -------------------------------------------------------------

rtps::StatefulWriter* Discovery::builtin_writer(EntityId id) {
  if (id.value == wire::kEntityIdSedpPubWriter) return pub_writer_.get();
  if (id.value == wire::kEntityIdSedpSubWriter) return sub_writer_.get();
  if (id.value == wire::kEntityIdPmdWriter) return pmd_writer_.get();
  if (id.value == wire::kEntityIdTypeLookupRequestWriter) return &type_lookup_.writer();
  if (id.value == wire::kEntityIdTypeLookupReplyWriter) return &type_server_.writer();
  return nullptr;
}

rtps::StatefulReader* Discovery::builtin_reader_for_writer(EntityId writer_id) {
  if (writer_id.value == wire::kEntityIdSedpPubWriter) return pub_reader_.get();
  if (writer_id.value == wire::kEntityIdSedpSubWriter) return sub_reader_.get();
  if (writer_id.value == wire::kEntityIdTypeLookupReplyWriter) return &type_lookup_.reader();
  if (writer_id.value == wire::kEntityIdTypeLookupRequestWriter) return &type_server_.reader();
  return nullptr;
}

void Discovery::on_data(const wire::ReceiveContext& ctx, const wire::DataSubmessage& m,
                        Time reception) {
  if (m.writer_id.value == wire::kEntityIdSpdpWriter) {
    handle_spdp(ctx, m);
  } else if (auto* r = builtin_reader_for_writer(m.writer_id)) {
    r->on_data(ctx, m, reception);
  }
}

void Discovery::on_data_frag(const wire::ReceiveContext& ctx, const wire::DataFragSubmessage& m,
                             Time reception) {
  if (auto* r = builtin_reader_for_writer(m.writer_id)) r->on_data_frag(ctx, m, reception);
}

void Discovery::on_heartbeat(const wire::ReceiveContext& ctx, const wire::HeartbeatSubmessage& m) {
  if (auto* r = builtin_reader_for_writer(m.writer_id)) r->on_heartbeat(ctx, m);
}

void Discovery::on_gap(const wire::ReceiveContext& ctx, const wire::GapSubmessage& m) {
  if (auto* r = builtin_reader_for_writer(m.writer_id)) r->on_gap(ctx, m);
}

void Discovery::on_heartbeat_frag(const wire::ReceiveContext& ctx,
                                  const wire::HeartbeatFragSubmessage& m) {
  if (auto* r = builtin_reader_for_writer(m.writer_id)) r->on_heartbeat_frag(ctx, m);
}

void Discovery::on_acknack(const wire::ReceiveContext& ctx, const wire::AckNackSubmessage& m) {
  if (auto* w = builtin_writer(m.writer_id)) w->on_acknack(ctx.source_prefix, m, Clock::now());
}

void Discovery::on_nack_frag(const wire::ReceiveContext& ctx, const wire::NackFragSubmessage& m) {
  if (auto* w = builtin_writer(m.writer_id)) w->on_nack_frag(ctx.source_prefix, m, Clock::now());
}

void Discovery::on_receive_batch_end() {
  pub_reader_->send_pending_acks();
  sub_reader_->send_pending_acks();
  type_lookup_.reader().send_pending_acks();
  type_server_.reader().send_pending_acks();
}

// ---- timers ---------------------------------------------------------------------------------

rtps::SteadyTime Discovery::on_timer(rtps::SteadyTime now) {
  if (now >= next_announce_) {
    announce_participant();
    next_announce_ = now + config_.announce_period;
  }
  std::vector<GuidPrefix> expired;
  {
    std::lock_guard lk(mu_);
    const int64_t t = steady_ns(now);
    for (const auto& [prefix, p] : participants_) {
      const auto lease = p->data.lease_duration;
      if (lease == Duration::max()) continue;
      if (t - p->last_seen_ns.load(std::memory_order_relaxed) > lease.count()) {
        expired.push_back(prefix);
      }
    }
  }
  for (const auto& prefix : expired) remove_participant(prefix);
  rtps::SteadyTime next = next_announce_;
  next = std::min(next, pub_writer_->on_timer(now));
  next = std::min(next, sub_writer_->on_timer(now));
  next = std::min(next, pmd_writer_->on_timer(now));
  next = std::min(next, pub_reader_->on_timer(now));
  next = std::min(next, sub_reader_->on_timer(now));
  next = std::min(next, type_lookup_.on_timer(now));
  next = std::min(next, type_server_.on_timer(now));
  return std::min(next, now + std::chrono::milliseconds(100));
}

void Discovery::request_types(const GuidPrefix& participant,
                              std::span<const wire::HashedTypeId> type_ids, Duration timeout,
                              TypeLookupCallback done) {
  if (!type_lookup_.serves(participant)) {
    TypeLookupReply r;
    r.kind = TypeLookupReply::Kind::kUnsupported;
    r.from = participant;
    done(r);
    return;
  }
  type_lookup_.request(type_ids, timeout, std::move(done));
}

std::vector<DiscoveredParticipant> Discovery::participants() const {
  std::lock_guard lk(mu_);
  std::vector<DiscoveredParticipant> out;
  for (const auto& [prefix, p] : participants_) {
    DiscoveredParticipant d;
    d.guid_prefix = prefix;
    d.vendor[0] = p->data.vendor[0];
    d.vendor[1] = p->data.vendor[1];
    d.user_data.assign(p->data.user_data.begin(), p->data.user_data.end());
    d.unicast = p->data.default_unicast;
    d.lease_duration = p->data.lease_duration;
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace pubsub::discovery
