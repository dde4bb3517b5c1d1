// pubsub_qos_peer: options -> libpubsub's participant options, topic description and QoS
// (entities.hpp).
#include "entities.hpp"

#include <algorithm>

#include "output.hpp"
#include "sample.hpp"

namespace pubsub_peer {

pubsub::TopicDescription topic_description(const Options& o) {
  pubsub::TopicDescription t;
  t.name = o.topic;
  t.type_name = kTypeName;
  t.keyed = true;
  t.partitions = o.qos.partitions;
  // No type information: endpoints match by type name, as with the other two peers.
  if (o.qos.representation) t.data_representation = {*o.qos.representation};
  return t;
}

pubsub::WriterQos writer_qos(const Options& o) {
  pubsub::WriterQos q;
  q.reliability = o.qos.reliability;
  q.durability = o.qos.durability;
  q.history = o.qos.history;
  if (o.qos.max_blocking_ms)
    q.max_blocking_time = std::chrono::milliseconds(*o.qos.max_blocking_ms);
  q.policies = o.qos.policies;
  // A KEEP_ALL writer with MAX_SAMPLES keeps at most that many unacknowledged samples (write()
  // waits for room) and serves at most that many to late joiners, as DDS bounds its history.
  const int32_t max_samples = o.qos.policies.resource_limits.max_samples;
  if (o.qos.has_resource_limits && max_samples > 0) {
    q.resource_limits.max_samples = static_cast<size_t>(max_samples);
  }
  return q;
}

pubsub::ReaderQos reader_qos(const Options& o) {
  pubsub::ReaderQos q;
  q.reliability = o.qos.reliability;
  q.durability = o.qos.durability;
  q.history = o.qos.history;
  // --max-blocking has no reader field in libpubsub (DDS ignores it on readers too); the
  // resource limits are announced only: the reader keeps no samples, its callback takes them.
  q.policies = o.qos.policies;
  return q;
}

std::unique_ptr<pubsub::Participant> create_participant(const Options& o) {
  pubsub::ParticipantOptions po;
  po.domain_id = o.domain;
  po.interface = o.nic;
  po.log = [](const std::string& line) { err("pubsub: " + line); };
  if (o.participant_lease > 0) {  // announced at a third of it, as DDS implementations do
    po.lease_duration = std::chrono::duration_cast<pubsub::Duration>(
        std::chrono::duration<double>(o.participant_lease));
    po.announce_period = std::min(po.announce_period, po.lease_duration / 3);
  }
  // libpubsub asserts no writer liveliness of its own beyond its participant announcements:
  // with a finite lease, announce at half of it (at most every 3 s, the default), so a remote
  // reader's lease check sees the participant alive while the writer is idle.
  const pubsub::Duration lease = o.qos.policies.liveliness.lease_duration;
  if (o.role == Role::kPub && lease != pubsub::kInfinite) {
    po.announce_period =
        std::clamp<pubsub::Duration>(lease / 2, std::chrono::milliseconds(10), po.announce_period);
  }
  auto p = pubsub::Participant::create(po);
  if (!p) {
    err("cannot create the participant (domain " + std::to_string(o.domain) + ", interface '" +
        o.nic + "'): " + p.error().to_string());
    return nullptr;
  }
  return std::move(p).value();
}

}  // namespace pubsub_peer
