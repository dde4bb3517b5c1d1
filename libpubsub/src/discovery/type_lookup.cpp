// TypeLookupClient: getTypes requests and their replies (see type_lookup.hpp).
#include "discovery/type_lookup.hpp"

#include <algorithm>

#include "discovery/builtin_config.hpp"
#include "wire/constants.hpp"

namespace pubsub::discovery {
namespace {

using Clock = std::chrono::steady_clock;

Guid entity(const GuidPrefix& p, uint32_t id) {
  return Guid{p, EntityId{id}};
}

// Cyclone DDS 0.10 answers with relatedRequestId.writer_guid set to its own reply writer's GUID,
// each 4-byte word in its CPU's (little endian) order, instead of the request's writer; the
// sequence number is the request's.
bool is_cyclone_reply_id(const Guid& id, const Guid& reply_writer) {
  auto b = id.bytes();
  for (size_t i = 0; i < b.size(); i += 4) std::reverse(b.begin() + i, b.begin() + i + 4);
  return Guid::from_bytes(b.data()) == reply_writer;
}

// The service's endpoints are reliable and volatile, like Cyclone DDS's.
std::unique_ptr<rtps::StatefulWriter> make_writer(Transport& t, const GuidPrefix& prefix,
                                                  uint32_t id, size_t samples, size_t bytes) {
  return std::make_unique<rtps::StatefulWriter>(
      builtin_writer_config(prefix, id, DurabilityKind::kVolatile, false, samples, bytes), t,
      prefix);
}

std::unique_ptr<rtps::StatefulReader> make_reader(Transport& t, const GuidPrefix& prefix,
                                                  uint32_t id, size_t max_sample,
                                                  rtps::DeliverFn deliver) {
  return std::make_unique<rtps::StatefulReader>(
      builtin_reader_config(prefix, id, DurabilityKind::kVolatile, 1024, 16u << 20, max_sample), t,
      prefix, std::move(deliver));
}

// Proxies on `w` and `r` for participant p's matching endpoints, where it announces them (SPDP
// builtin endpoint set bits); which of the two it has.
std::pair<bool, bool> add_proxies(const wire::ParticipantData& p, rtps::SteadyTime now,
                                  rtps::StatefulWriter& w, uint32_t reader_bit, uint32_t reader_id,
                                  rtps::StatefulReader& r, uint32_t writer_bit,
                                  uint32_t writer_id) {
  std::vector<Locator> meta = p.metatraffic_unicast;
  if (meta.empty()) meta = p.default_unicast;
  const bool has_reader = (p.builtin_endpoints & reader_bit) != 0;
  const bool has_writer = (p.builtin_endpoints & writer_bit) != 0;
  if (has_reader) {
    rtps::RemoteReaderInfo ri;
    ri.guid = entity(p.guid_prefix, reader_id);
    ri.unicast = meta;
    w.add_reader(ri, now);
  }
  if (has_writer) {
    rtps::RemoteWriterInfo wi;
    wi.guid = entity(p.guid_prefix, writer_id);
    wi.unicast = meta;
    wi.preemptive_base_zero = wire::is_vendor(p.vendor, wire::kVendorFastDds);
    r.add_writer(wi, now);
  }
  return {has_reader, has_writer};
}

}  // namespace

TypeLookupClient::TypeLookupClient(Transport& transport, const GuidPrefix& prefix,
                                   size_t max_sample_size)
    : writer_(
          make_writer(transport, prefix, wire::kEntityIdTypeLookupRequestWriter, 1024, 4u << 20)),
      reader_(make_reader(transport, prefix, wire::kEntityIdTypeLookupReplyReader, max_sample_size,
                          [this](const rtps::ReceivedSample& s) { return on_reply(s); })) {}

void TypeLookupClient::add_participant(const wire::ParticipantData& p, rtps::SteadyTime now) {
  const auto [req, rep] =
      add_proxies(p, now, *writer_, wire::kBuiltinTypeLookupRequestReader,
                  wire::kEntityIdTypeLookupRequestReader, *reader_,
                  wire::kBuiltinTypeLookupReplyWriter, wire::kEntityIdTypeLookupReplyWriter);
  std::lock_guard lk(mu_);
  serving_[p.guid_prefix] = req && rep;
}

void TypeLookupClient::remove_participant(const GuidPrefix& prefix) {
  writer_->remove_reader(entity(prefix, wire::kEntityIdTypeLookupRequestReader));
  reader_->remove_writer(entity(prefix, wire::kEntityIdTypeLookupReplyWriter));
  std::lock_guard lk(mu_);
  serving_.erase(prefix);
}

bool TypeLookupClient::serves(const GuidPrefix& prefix) const {
  std::lock_guard lk(mu_);
  auto it = serving_.find(prefix);
  return it != serving_.end() && it->second;
}

void TypeLookupClient::request(std::span<const wire::HashedTypeId> type_ids, Duration timeout,
                               TypeLookupCallback done) {
  std::unique_lock lk(mu_);
  const SequenceNumber sn = next_sn_++;
  const auto body = wire::encode_type_lookup_get_types(writer_->guid(), sn, type_ids);
  pending_[sn] = Pending{std::move(done), Clock::now() + timeout};
  lk.unlock();
  rtps::WriteRequest r;
  r.body = body.data();
  r.body_size = body.size();
  r.timestamp = Time::now();
  if (!writer_->write(r, false)) {
    // History full (a thousand requests unanswered): ends like a timeout, on the next timer.
    std::lock_guard relock(mu_);
    auto it = pending_.find(sn);
    if (it != pending_.end()) it->second.deadline = rtps::SteadyTime{};
  }
}

bool TypeLookupClient::on_reply(const rtps::ReceivedSample& s) {
  if (s.key_only || !s.data) return true;
  const auto h = wire::decode_type_lookup_reply(s.data, s.size);
  if (!h) return true;
  if (h->request_writer != writer_->guid() && !is_cyclone_reply_id(h->request_writer, s.writer))
    return true;  // a reply to another participant's request
  TypeLookupCallback done;
  {
    std::lock_guard lk(mu_);
    auto it = pending_.find(h->request_sn);
    if (it == pending_.end()) return true;
    done = it->second.done;  // a copy: the callback runs outside mu_
  }
  TypeLookupReply reply;
  reply.from = s.writer.prefix;
  reply.little_endian = h->little_endian;
  reply.error = h->remote_exception != 0 ? h->remote_exception : h->result;
  if (h->body) reply.types.assign(h->body, h->body + h->body_size);
  if (done(reply)) {
    std::lock_guard lk(mu_);
    pending_.erase(h->request_sn);
  }
  return true;
}

rtps::SteadyTime TypeLookupClient::on_timer(rtps::SteadyTime now) {
  std::vector<TypeLookupCallback> expired;
  rtps::SteadyTime next = now + std::chrono::seconds(1);
  {
    std::lock_guard lk(mu_);
    for (auto it = pending_.begin(); it != pending_.end();) {
      if (it->second.deadline <= now) {
        expired.push_back(std::move(it->second.done));
        it = pending_.erase(it);
      } else {
        next = std::min(next, it->second.deadline);
        ++it;
      }
    }
  }
  TypeLookupReply timeout;
  timeout.kind = TypeLookupReply::Kind::kTimeout;
  for (auto& done : expired) done(timeout);
  next = std::min(next, writer_->on_timer(now));
  return std::min(next, reader_->on_timer(now));
}

}  // namespace pubsub::discovery

namespace pubsub::discovery {

TypeLookupServer::TypeLookupServer(Transport& transport, const GuidPrefix& prefix,
                                   size_t max_sample_size)
    : writer_(make_writer(transport, prefix, wire::kEntityIdTypeLookupReplyWriter, 256, 16u << 20)),
      reader_(make_reader(transport, prefix, wire::kEntityIdTypeLookupRequestReader,
                          max_sample_size,
                          [this](const rtps::ReceivedSample& s) { return on_request(s); })) {}

void TypeLookupServer::add_participant(const wire::ParticipantData& p, rtps::SteadyTime now) {
  (void)add_proxies(p, now, *writer_, wire::kBuiltinTypeLookupReplyReader,
                    wire::kEntityIdTypeLookupReplyReader, *reader_,
                    wire::kBuiltinTypeLookupRequestWriter, wire::kEntityIdTypeLookupRequestWriter);
}

void TypeLookupServer::remove_participant(const GuidPrefix& prefix) {
  writer_->remove_reader(entity(prefix, wire::kEntityIdTypeLookupReplyReader));
  reader_->remove_writer(entity(prefix, wire::kEntityIdTypeLookupRequestWriter));
}

void TypeLookupServer::add_types(std::span<const TypeObjectEntry> types) {
  std::lock_guard lk(mu_);
  for (const auto& t : types) types_[t.id] = t.type_object;
}

bool TypeLookupServer::on_request(const rtps::ReceivedSample& s) {
  if (s.key_only || !s.data) return true;
  const auto q = wire::decode_type_lookup_request(s.data, s.size);
  if (!q || q->operation != wire::kTypeLookupGetTypesHashId) return true;
  std::vector<uint8_t> reply;
  {
    std::lock_guard lk(mu_);
    std::vector<wire::TypeObjectRef> found;
    for (const auto& id : q->type_ids) {
      auto it = types_.find(id);
      if (it != types_.end()) found.push_back({id, it->second});
    }
    reply = wire::encode_type_lookup_get_types_reply(q->writer, q->sn, found);
  }
  rtps::WriteRequest r;
  r.body = reply.data();
  r.body_size = reply.size();
  r.timestamp = Time::now();
  (void)writer_->write(r, false);  // history full: the requester times out and may ask again
  return true;
}

rtps::SteadyTime TypeLookupServer::on_timer(rtps::SteadyTime now) {
  return std::min(writer_->on_timer(now), reader_->on_timer(now));
}

}  // namespace pubsub::discovery
