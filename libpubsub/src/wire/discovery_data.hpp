// SPDP participant data and SEDP endpoint data: the PL_CDR payloads of the builtin discovery
// topics, encoded and decoded as pure functions (no state, nothing trusted).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pubsub/basics.hpp"
#include "pubsub/qos.hpp"

namespace pubsub::wire {

struct ParticipantData {
  GuidPrefix guid_prefix{};
  uint8_t vendor[2] = {};
  uint8_t version[2] = {};
  std::optional<uint32_t> domain_id;
  uint32_t builtin_endpoints = 0;
  Duration lease_duration = std::chrono::seconds(100);  // the spec's default when absent
  std::vector<Locator> default_unicast;
  std::vector<Locator> default_multicast;
  std::vector<Locator> metatraffic_unicast;
  std::vector<Locator> metatraffic_multicast;
  std::vector<uint8_t> user_data;
};

// Our vendor-specific parameter (PID_PUBSUB_SHM): the endpoint can use shared memory with
// peers whose host id is `host`. Writers name their segment, readers their participant's
// doorbell. Decoded only from participants of our vendor id; other vendors ignore it.
struct ShmLocator {
  std::array<uint8_t, 16> host{};
  std::string name;
  bool operator==(const ShmLocator&) const = default;
};

// A DiscoveredWriterData or DiscoveredReaderData: every policy it announces.
struct EndpointData {
  Guid guid;
  std::string topic_name;
  std::string type_name;
  ReliabilityKind reliability = ReliabilityKind::kBestEffort;
  Duration max_blocking_time = std::chrono::milliseconds(100);
  DurabilityKind durability = DurabilityKind::kVolatile;
  HistoryQos history{HistoryKind::kKeepLast, 1};
  std::vector<Locator> unicast;  // empty: use the participant's default locators
  std::vector<Locator> multicast;
  bool expects_inline_qos = false;
  std::vector<std::string> partitions;
  std::vector<int16_t> data_representation;  // empty: XCDR1 only
  std::vector<uint8_t> type_information;     // PID_TYPE_INFORMATION value, byte for byte
  std::optional<ShmLocator> shm;
  // Every other standard policy; decoded remote endpoints also keep the parameters no one
  // interprets here (Policies::other).
  Policies policies;

  bool is_writer() const;
  bool keyed() const;  // from the entity kind
};

// Full serialized payloads (PL_CDR_LE encapsulation header + parameter list).
std::vector<uint8_t> encode_participant_data(const ParticipantData& p);
std::vector<uint8_t> encode_endpoint_data(const EndpointData& e);

// Decode a serialized payload (any PL_CDR encapsulation). Return false if it is malformed or
// lacks a required parameter (participant GUID; endpoint GUID, topic and type names).
bool decode_participant_data(const uint8_t* payload, size_t size, ParticipantData& out);
bool decode_endpoint_data(const uint8_t* payload, size_t size, bool writer_defaults,
                          EndpointData& out);

// The endpoint GUID carried by an SEDP dispose/unregister (a PL payload holding only the key,
// or the key hash itself). Returns false when neither is usable.
bool decode_endpoint_key(const uint8_t* payload, size_t size, Guid& out);

}  // namespace pubsub::wire
