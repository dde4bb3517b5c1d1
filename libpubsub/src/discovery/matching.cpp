#include "discovery/matching.hpp"

#include "common/glob.hpp"

#include <algorithm>

#include "wire/constants.hpp"

namespace pubsub::discovery {

namespace {

bool partitions_match(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  static const std::vector<std::string> kDefault{""};
  const auto& x = a.empty() ? kDefault : a;
  const auto& y = b.empty() ? kDefault : b;
  for (const auto& p : x) {
    for (const auto& q : y) {
      if (p == q || common::glob_match(p, q) || common::glob_match(q, p)) return true;
    }
  }
  return false;
}

}  // namespace

std::string match_failure(const wire::EndpointData& w, const wire::EndpointData& r) {
  if (w.topic_name != r.topic_name) return "different topic names";
  if (w.type_name != r.type_name) {
    return "type names differ ('" + w.type_name + "' vs '" + r.type_name + "')";
  }
  if (r.reliability == ReliabilityKind::kReliable && w.reliability != ReliabilityKind::kReliable) {
    return "reliable reader, best-effort writer";
  }
  if (r.durability == DurabilityKind::kTransientLocal &&
      w.durability != DurabilityKind::kTransientLocal) {
    return "transient-local reader, volatile writer";
  }
  if (!partitions_match(w.partitions, r.partitions)) return "no common partition";
  const int16_t offered = w.data_representation.empty() ? wire::kXcdr1 : w.data_representation[0];
  const auto& accepted = r.data_representation;
  if (accepted.empty() ? offered != wire::kXcdr1
                       : std::find(accepted.begin(), accepted.end(), offered) == accepted.end()) {
    return "data representation not accepted";
  }
  return {};
}

}  // namespace pubsub::discovery
