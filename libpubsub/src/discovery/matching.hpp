// Matching rules between a writer and a reader: topic and type names, DDS's requested/offered
// rules for every policy that has them (DDS 1.4, 2.2.3: the RxO column), partitions and data
// representation (XTypes 7.6.3.1.1). Pure functions. Glob patterns: common/glob.hpp.
//
// Offered (writer) against requested (reader), each compatible when:
//   RELIABILITY, DURABILITY, DESTINATION_ORDER  offered kind >= requested kind
//   LIVELINESS         offered kind >= requested kind, offered lease <= requested lease
//   DEADLINE           offered period <= requested period
//   LATENCY_BUDGET     offered duration <= requested duration
//   OWNERSHIP          the same kind
//   PRESENTATION       offered scope >= requested; coherent / ordered access if requested
//   DATA_REPRESENTATION  the writer's first representation is among the reader's
// A pair that fails one of these is incompatible (DDS's OFFERED/REQUESTED_INCOMPATIBLE_QOS with
// that policy); a pair without a common partition or with another topic or type simply does not
// match.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "pubsub/qos.hpp"
#include "wire/discovery_data.hpp"

namespace pubsub::discovery {

struct MatchResult {
  enum class Kind {
    kMatch,
    kOtherTopic,       // different topic names: not a candidate at all
    kTypeMismatch,     // same topic, different type names
    kIncompatibleQos,  // a requested/offered rule failed: `policy`
    kNoCommonPartition,
  };
  Kind kind = Kind::kMatch;
  QosPolicyId policy = QosPolicyId::kInvalid;
  std::string
      reason;  // empty on a match; else one phrase, e.g. "DEADLINE: requested 1 s, offered 2 s"
  bool ok() const { return kind == Kind::kMatch; }
};

MatchResult match(const wire::EndpointData& writer, const wire::EndpointData& reader);

// The first policy whose requested/offered rule the pair fails (kInvalid: none).
QosPolicyId first_incompatible(const wire::EndpointData& writer, const wire::EndpointData& reader,
                               std::string* reason = nullptr);

// Empty when the writer and reader match, else match().reason.
std::string match_failure(const wire::EndpointData& writer, const wire::EndpointData& reader);

// Whether writer `w`, whose participant announced `unicast`, runs on the host whose shared-memory
// id is `host` and whose interfaces have `addresses` (IPv4, host order): WriterInfo::same_host.
bool same_host(const wire::EndpointData& w, const std::vector<Locator>& unicast,
               const std::array<uint8_t, 16>& host, const std::vector<uint32_t>& addresses);

}  // namespace pubsub::discovery
