// Quality-of-service settings for writers and readers. Every field has a documented default;
// the defaults favour "nothing is lost" (reliable, keep-all with bounded resources).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>

#include "pubsub/types.hpp"

namespace pubsub {

enum class ReliabilityKind : uint8_t { kBestEffort, kReliable };
enum class DurabilityKind : uint8_t { kVolatile, kTransientLocal };
enum class HistoryKind : uint8_t { kKeepLast, kKeepAll };

struct HistoryQos {
  HistoryKind kind = HistoryKind::kKeepAll;  // keep every unacknowledged sample
  int32_t depth = 1;                         // only for kKeepLast: samples kept per writer
};

// Bounds on what a writer's history (or a reader's reorder/reassembly buffers) may hold.
struct ResourceLimits {
  size_t max_samples = 16384;    // samples in the writer history / reader reorder buffer
  size_t max_bytes = 64u << 20;  // serialized bytes held (a single sample must fit)
};

// Message packing: many small samples in one datagram. Off unless asked for.
struct BatchingQos {
  bool enabled = false;
  size_t max_bytes = 8192;    // flush once the samples' bytes in a batch reach this (as
                              // RTI's batch size; a sample this big goes alone). The
                              // datagram never exceeds the transport's message size
                              // (ParticipantOptions::max_message_size): a sample that
                              // would overflow it goes into the next batch
  size_t max_samples = 1024;  // flush after this many samples
  Duration max_flush_delay = std::chrono::milliseconds(1);  // flush a partial batch this late
};

struct WriterQos {
  ReliabilityKind reliability = ReliabilityKind::kReliable;
  DurabilityKind durability = DurabilityKind::kVolatile;
  HistoryQos history;
  ResourceLimits resource_limits;
  // How long write() waits for space in a KEEP_ALL history full of unacknowledged samples.
  Duration max_blocking_time = std::chrono::milliseconds(100);
  BatchingQos batching;
  // Period of HEARTBEATs while samples are unacknowledged (also sent piggybacked on data).
  Duration heartbeat_period = std::chrono::milliseconds(100);
};

struct ReaderQos {
  ReliabilityKind reliability = ReliabilityKind::kReliable;
  DurabilityKind durability = DurabilityKind::kVolatile;
  HistoryQos history;
  ResourceLimits resource_limits;  // bounds the out-of-order and fragment buffers
  // Answer a HEARTBEAT this much later (RTPS heartbeatResponseDelay; Fast DDS waits 5 ms):
  // HEARTBEATs arriving meanwhile share the one answer, which reports what has arrived by then.
  // 0: at once (after the datagrams received together).
  Duration heartbeat_response_delay = Duration::zero();
};

}  // namespace pubsub
