// Configurations of the builtin endpoints (SEDP, TypeLookup): reliable, KEEP_ALL writers that
// never block, with the durability and resource limits each service asks for.
#pragma once

#include "rtps/reader.hpp"
#include "rtps/writer.hpp"

namespace pubsub::discovery {

inline rtps::WriterConfig builtin_writer_config(const GuidPrefix& prefix, uint32_t entity,
                                                DurabilityKind durability, bool keyed,
                                                size_t max_samples, size_t max_bytes) {
  rtps::WriterConfig c;
  c.guid = Guid{prefix, EntityId{entity}};
  c.keyed = keyed;
  c.qos.reliability = ReliabilityKind::kReliable;
  c.qos.durability = durability;
  c.qos.history.kind = HistoryKind::kKeepAll;
  c.qos.resource_limits.max_samples = max_samples;
  c.qos.resource_limits.max_bytes = max_bytes;
  c.qos.max_blocking_time = Duration::zero();
  return c;
}

inline rtps::ReaderConfig builtin_reader_config(const GuidPrefix& prefix, uint32_t entity,
                                                DurabilityKind durability, size_t max_samples,
                                                size_t max_bytes, size_t max_sample_size) {
  rtps::ReaderConfig c;
  c.guid = Guid{prefix, EntityId{entity}};
  c.qos.reliability = ReliabilityKind::kReliable;
  c.qos.durability = durability;
  c.qos.resource_limits.max_samples = max_samples;
  c.qos.resource_limits.max_bytes = max_bytes;
  c.max_sample_size = max_sample_size;
  return c;
}

}  // namespace pubsub::discovery
