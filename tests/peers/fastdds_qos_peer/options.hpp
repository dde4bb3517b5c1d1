// fastdds_qos_peer: the command line (../README.md, "Command line") as a struct, and its parser.
//
// Only main() parses, before any other thread exists. The QoS fields hold Fast DDS's own enums;
// an empty std::optional means "leave Fast DDS's default", except reliability and history, which
// default to reliable and keep_all for both roles.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <fastdds/dds/core/policy/QosPolicies.hpp>

namespace qos_peer {

namespace dds = eprosima::fastdds::dds;

enum class Role { kPub, kSub };

struct Presentation {
  dds::PresentationQosPolicyAccessScopeKind scope = dds::INSTANCE_PRESENTATION_QOS;
  bool coherent = false;
  bool ordered = false;
};

struct ResourceLimits {
  int32_t max_samples = -1;
  int32_t max_instances = -1;
  int32_t max_samples_per_instance = -1;
};

// QoS of the peer's own entity (and its publisher/subscriber and topic). Durations in ms.
struct QosOptions {
  dds::ReliabilityQosPolicyKind reliability = dds::RELIABLE_RELIABILITY_QOS;
  std::optional<int64_t> max_blocking_ms;
  std::optional<dds::DurabilityQosPolicyKind> durability;
  int32_t keep_last = 0;  // 0: KEEP_ALL
  std::optional<ResourceLimits> resource_limits;
  std::optional<dds::OwnershipQosPolicyKind> ownership;
  std::optional<int32_t> ownership_strength;
  std::optional<int64_t> deadline_ms;
  std::optional<int64_t> latency_budget_ms;
  std::optional<dds::LivelinessQosPolicyKind> liveliness;
  std::optional<int64_t> lease_ms;
  std::optional<int64_t> lifespan_ms;
  std::optional<dds::DestinationOrderQosPolicyKind> destination_order;
  std::optional<Presentation> presentation;
  std::vector<std::string> partitions;
  std::optional<std::string> user_data;
  std::optional<std::string> topic_data;
  std::optional<std::string> group_data;
  std::optional<int64_t> time_based_filter_ms;
  std::optional<dds::DataRepresentationId_t> representation;
};

struct Options {
  Role role = Role::kSub;
  uint32_t domain = 0;
  std::string topic = "QosTest";
  int64_t count = 10;
  int32_t keys = 1;
  uint32_t size = 16;
  double rate = 100;
  int32_t wait_readers = 0;
  std::vector<int32_t> dispose;
  bool unregister_rest = false;
  double linger = 3;  // pub; sub: only when given (sub_linger), as cyclone_qos_peer's extension
  double sub_linger = 0;
  double timeout = 30;
  int64_t assert_every_ms = 0;
  std::string nic;  // --nic IFACE|ADDR: UDPv4 interface whitelist (as fastdds_perftest -nic)
  QosOptions qos;
};

// Parses argv; false with a one-line message in `error`. `help` is set for -h/--help.
bool parse_options(int argc, char** argv, Options& o, std::string& error, bool& help);

std::string usage();

}  // namespace qos_peer
