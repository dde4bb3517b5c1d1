// pubsub_qos_peer: the command line (../README.md, "Command line") as a struct, and its parser.
//
// main() parses before any other thread exists. The QoS fields are libpubsub's own types, so
// entities.cpp copies them without translation: an option sets only its field, everything else
// keeps libpubsub's default (which for reliability and history already is the contract's:
// reliable, keep_all).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pubsub/qos.hpp"

namespace pubsub_peer {

enum class Role { kPub, kSub };

// The QoS of the peer's own writer or reader, its topic and partitions.
struct QosOptions {
  pubsub::ReliabilityKind reliability = pubsub::ReliabilityKind::kReliable;
  std::optional<int64_t> max_blocking_ms;
  pubsub::DurabilityKind durability = pubsub::DurabilityKind::kVolatile;
  pubsub::HistoryQos history;  // keep_all
  // --resource-limits: announced as DDS's RESOURCE_LIMITS (policies.resource_limits); a writer's
  // max_samples also bounds libpubsub's own writer history.
  bool has_resource_limits = false;
  pubsub::Policies policies;  // deadline, liveliness, ownership, ... as the options set them
  std::vector<std::string> partitions;
  std::optional<int16_t> representation;  // 0 XCDR1, 2 XCDR2; none: libpubsub's default
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
  double linger = 3;  // pub's default; sub's is 0 (set by the parser)
  double timeout = 30;
  int64_t assert_every_ms = 0;   // accepted, not acted on (libpubsub cannot assert liveliness)
  std::string nic;               // --nic IFACE|ADDR -> ParticipantOptions::interface
  double participant_lease = 0;  // --participant-lease S (0: libpubsub's default, 10 s)
  QosOptions qos;
};

// What parse_options() found.
enum class Parsed { kRun, kHelp, kBad };

// Parses argv into `o`; on kBad `error` holds a one-line message.
Parsed parse_options(int argc, char** argv, Options& o, std::string& error);

std::string usage();

}  // namespace pubsub_peer
