// Quality-of-service settings for writers and readers. Every field has a documented default;
// the defaults favour "nothing is lost" (reliable, keep-all with bounded resources).
//
// The standard DDS policies (DDS 1.4, 2.2.3) that libpubsub's own knobs do not already cover live
// in `Policies`, which writers and readers announce in discovery and which remote endpoints are
// described with (TopicInfo). Kinds are ordered as DDS orders them for the requested/offered
// rules: a writer offering kind X is compatible with a reader requesting any kind <= X.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pubsub/basics.hpp"

namespace pubsub {

enum class ReliabilityKind : uint8_t { kBestEffort, kReliable };
// TRANSIENT and PERSISTENT are decoded and offered as announced; libpubsub's writers keep their
// history for late joiners as with TRANSIENT_LOCAL (there is no durability service).
enum class DurabilityKind : uint8_t { kVolatile, kTransientLocal, kTransient, kPersistent };
enum class HistoryKind : uint8_t { kKeepLast, kKeepAll };
enum class LivelinessKind : uint8_t { kAutomatic, kManualByParticipant, kManualByTopic };
enum class OwnershipKind : uint8_t { kShared, kExclusive };
enum class DestinationOrderKind : uint8_t { kByReceptionTimestamp, kBySourceTimestamp };
enum class PresentationScope : uint8_t { kInstance, kTopic, kGroup };

// DURATION_INFINITE.
inline constexpr Duration kInfinite = Duration::max();

// The DDS QoS policy ids (DDS 1.4, 2.3.3 QosPolicyId_t; XTypes for the last two), by which
// incompatibilities are reported.
enum class QosPolicyId : uint8_t {
  kInvalid = 0,
  kUserData = 1,
  kDurability = 2,
  kPresentation = 3,
  kDeadline = 4,
  kLatencyBudget = 5,
  kOwnership = 6,
  kOwnershipStrength = 7,
  kLiveliness = 8,
  kTimeBasedFilter = 9,
  kPartition = 10,
  kReliability = 11,
  kDestinationOrder = 12,
  kHistory = 13,
  kResourceLimits = 14,
  kEntityFactory = 15,
  kWriterDataLifecycle = 16,
  kReaderDataLifecycle = 17,
  kTopicData = 18,
  kGroupData = 19,
  kTransportPriority = 20,
  kLifespan = 21,
  kDurabilityService = 22,
  kDataRepresentation = 23,
  kTypeConsistencyEnforcement = 24,
};
inline constexpr size_t kQosPolicyCount = 25;  // ids 0..24
// "DURABILITY", "DEADLINE", ... as DDS names the policies (RTI and Cyclone print these).
const char* to_string(QosPolicyId id);
// "2 s", "250 ms", "10 us", "0 s", "infinite".
std::string duration_text(Duration d);

struct LivelinessQos {
  LivelinessKind kind = LivelinessKind::kAutomatic;
  Duration lease_duration = kInfinite;
  bool operator==(const LivelinessQos&) const = default;
};

struct PresentationQos {
  PresentationScope access_scope = PresentationScope::kInstance;
  bool coherent_access = false;
  bool ordered_access = false;
  bool operator==(const PresentationQos&) const = default;
};

// RESOURCE_LIMITS as DDS announces it (-1: unlimited). libpubsub bounds its own histories with
// ResourceLimits below; these are what an endpoint declares.
struct ResourceLimitsQos {
  int32_t max_samples = -1;
  int32_t max_instances = -1;
  int32_t max_samples_per_instance = -1;
  bool operator==(const ResourceLimitsQos&) const = default;
};

struct DurabilityServiceQos {
  Duration service_cleanup_delay = Duration::zero();
  HistoryKind history_kind = HistoryKind::kKeepLast;
  int32_t history_depth = 1;
  ResourceLimitsQos limits;
  bool operator==(const DurabilityServiceQos&) const = default;
};

// XTypes TypeConsistencyEnforcementQosPolicy.
struct TypeConsistencyQos {
  enum class Kind : uint16_t { kDisallowTypeCoercion = 0, kAllowTypeCoercion = 1 };
  Kind kind = Kind::kAllowTypeCoercion;
  bool ignore_sequence_bounds = true;
  bool ignore_string_bounds = true;
  bool ignore_member_names = false;
  bool prevent_type_widening = false;
  bool force_type_validation = false;
  bool operator==(const TypeConsistencyQos&) const = default;
};

// A reader's content filter (PID_CONTENT_FILTER_PROPERTY): kept and announced as given.
struct ContentFilterQos {
  std::string content_filtered_topic_name;
  std::string related_topic_name;
  std::string filter_class_name;  // "DDSSQL"
  std::string filter_expression;
  std::vector<std::string> expression_parameters;
  bool operator==(const ContentFilterQos&) const = default;
};

// A discovery parameter libpubsub does not interpret (another vendor's, or a newer standard's):
// kept byte for byte, in the byte order it came in.
struct RawParameter {
  uint16_t pid = 0;  // as sent, with its must-understand and vendor-specific bits
  bool little_endian = true;
  std::vector<uint8_t> value;
  bool operator==(const RawParameter&) const = default;
};

// The standard policies other than reliability, durability, history, resource limits (libpubsub
// bounds), partitions and data representation, which have fields of their own. Defaults are
// DDS's (infinite deadline, zero latency budget, AUTOMATIC liveliness with an infinite lease,
// ...), so an endpoint that sets nothing announces nothing and matches as DDS's defaults do.
struct Policies {
  Duration deadline = kInfinite;
  Duration latency_budget = Duration::zero();
  LivelinessQos liveliness;
  Duration lifespan = kInfinite;  // writers
  DestinationOrderKind destination_order = DestinationOrderKind::kByReceptionTimestamp;
  PresentationQos presentation;
  OwnershipKind ownership = OwnershipKind::kShared;
  int32_t ownership_strength = 0;                 // writers
  Duration time_based_filter = Duration::zero();  // readers: minimum separation
  int32_t transport_priority = 0;                 // writers
  ResourceLimitsQos resource_limits;
  DurabilityServiceQos durability_service;  // writers
  std::vector<uint8_t> user_data;
  std::vector<uint8_t> topic_data;
  std::vector<uint8_t> group_data;
  std::optional<TypeConsistencyQos> type_consistency;  // readers; none: not announced
  std::optional<ContentFilterQos> content_filter;      // readers
  // Remote endpoints only: the parameters of their announcement libpubsub did not interpret.
  std::vector<RawParameter> other;
  bool operator==(const Policies&) const = default;
};

struct HistoryQos {
  HistoryKind kind = HistoryKind::kKeepAll;  // keep every unacknowledged sample
  int32_t depth = 1;                         // only for kKeepLast: samples kept per writer
  bool operator==(const HistoryQos&) const = default;
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
  // The other standard policies, announced in discovery and checked against readers'.
  Policies policies;
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
  // The other standard policies, announced in discovery and checked against writers'.
  Policies policies;
};

}  // namespace pubsub
