// Matching rules (matching.hpp): names, the requested/offered table, partitions.
#include "discovery/matching.hpp"

#include <algorithm>
#include <vector>

#include "common/glob.hpp"
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

const char* kind_name(ReliabilityKind k) {
  return k == ReliabilityKind::kReliable ? "RELIABLE" : "BEST_EFFORT";
}
const char* kind_name(DurabilityKind k) {
  static const char* const n[] = {"VOLATILE", "TRANSIENT_LOCAL", "TRANSIENT", "PERSISTENT"};
  return n[static_cast<size_t>(k)];
}
const char* kind_name(LivelinessKind k) {
  static const char* const n[] = {"AUTOMATIC", "MANUAL_BY_PARTICIPANT", "MANUAL_BY_TOPIC"};
  return n[static_cast<size_t>(k)];
}
const char* kind_name(DestinationOrderKind k) {
  return k == DestinationOrderKind::kBySourceTimestamp ? "BY_SOURCE_TIMESTAMP"
                                                       : "BY_RECEPTION_TIMESTAMP";
}
const char* kind_name(OwnershipKind k) {
  return k == OwnershipKind::kExclusive ? "EXCLUSIVE" : "SHARED";
}
const char* kind_name(PresentationScope k) {
  static const char* const n[] = {"INSTANCE", "TOPIC", "GROUP"};
  return n[static_cast<size_t>(k)];
}

// One failed rule: its policy and "POLICY: requested X, offered Y".
struct Failure {
  QosPolicyId policy = QosPolicyId::kInvalid;
  std::string reason;
};

Failure fail(QosPolicyId id, const std::string& requested, const std::string& offered) {
  return {id, std::string(to_string(id)) + ": requested " + requested + ", offered " + offered};
}

std::string presentation_text(const PresentationQos& p) {
  std::string s = kind_name(p.access_scope);
  if (p.coherent_access) s += " coherent";
  if (p.ordered_access) s += " ordered";
  return s;
}

std::string representation_text(const std::vector<int16_t>& r) {
  if (r.empty()) return "XCDR1";
  std::string s;
  for (int16_t v : r) {
    if (!s.empty()) s += "|";
    s += v == wire::kXcdr1   ? "XCDR1"
         : v == wire::kXcdr2 ? "XCDR2"
         : v == wire::kXml   ? "XML"
                             : std::to_string(v);
  }
  return s;
}

// The kinds and durations whose offered value must be at least (or at most) the requested one.
Failure check_ordered(const wire::EndpointData& w, const wire::EndpointData& r) {
  const Policies& o = w.policies;
  const Policies& q = r.policies;
  if (w.reliability < r.reliability)
    return fail(QosPolicyId::kReliability, kind_name(r.reliability), kind_name(w.reliability));
  if (w.durability < r.durability)
    return fail(QosPolicyId::kDurability, kind_name(r.durability), kind_name(w.durability));
  if (o.deadline > q.deadline) {
    return fail(QosPolicyId::kDeadline, duration_text(q.deadline), duration_text(o.deadline));
  }
  if (o.latency_budget > q.latency_budget) {
    return fail(QosPolicyId::kLatencyBudget, duration_text(q.latency_budget),
                duration_text(o.latency_budget));
  }
  if (o.liveliness.kind < q.liveliness.kind ||
      o.liveliness.lease_duration > q.liveliness.lease_duration) {
    return fail(QosPolicyId::kLiveliness,
                std::string(kind_name(q.liveliness.kind)) + " " +
                    duration_text(q.liveliness.lease_duration),
                std::string(kind_name(o.liveliness.kind)) + " " +
                    duration_text(o.liveliness.lease_duration));
  }
  if (o.destination_order < q.destination_order) {
    return fail(QosPolicyId::kDestinationOrder, kind_name(q.destination_order),
                kind_name(o.destination_order));
  }
  return {};
}

Failure check_equal_and_sets(const wire::EndpointData& w, const wire::EndpointData& r) {
  const Policies& o = w.policies;
  const Policies& q = r.policies;
  if (o.ownership != q.ownership)
    return fail(QosPolicyId::kOwnership, kind_name(q.ownership), kind_name(o.ownership));
  if (o.presentation.access_scope < q.presentation.access_scope ||
      (q.presentation.coherent_access && !o.presentation.coherent_access) ||
      (q.presentation.ordered_access && !o.presentation.ordered_access)) {
    return fail(QosPolicyId::kPresentation, presentation_text(q.presentation),
                presentation_text(o.presentation));
  }
  const int16_t offered = w.data_representation.empty() ? wire::kXcdr1 : w.data_representation[0];
  const auto& accepted = r.data_representation;
  if (accepted.empty() ? offered != wire::kXcdr1
                       : std::find(accepted.begin(), accepted.end(), offered) == accepted.end()) {
    return fail(QosPolicyId::kDataRepresentation, representation_text(accepted),
                representation_text({offered}));
  }
  return {};
}

}  // namespace

QosPolicyId first_incompatible(const wire::EndpointData& w, const wire::EndpointData& r,
                               std::string* reason) {
  Failure f = check_ordered(w, r);
  if (f.policy == QosPolicyId::kInvalid) f = check_equal_and_sets(w, r);
  if (reason) *reason = std::move(f.reason);
  return f.policy;
}

MatchResult match(const wire::EndpointData& w, const wire::EndpointData& r) {
  MatchResult m;
  if (w.topic_name != r.topic_name) {
    m.kind = MatchResult::Kind::kOtherTopic;
    m.reason = "different topic names";
    return m;
  }
  if (w.type_name != r.type_name) {
    m.kind = MatchResult::Kind::kTypeMismatch;
    m.reason = "type names differ ('" + w.type_name + "' vs '" + r.type_name + "')";
    return m;
  }
  if (!partitions_match(w.partitions, r.partitions)) {
    m.kind = MatchResult::Kind::kNoCommonPartition;
    m.reason = "no common partition";
    return m;
  }
  m.policy = first_incompatible(w, r, &m.reason);
  if (m.policy != QosPolicyId::kInvalid) m.kind = MatchResult::Kind::kIncompatibleQos;
  return m;
}

std::string match_failure(const wire::EndpointData& w, const wire::EndpointData& r) {
  return match(w, r).reason;
}

bool same_host(const wire::EndpointData& w, const std::vector<Locator>& unicast,
               const std::array<uint8_t, 16>& host, const std::vector<uint32_t>& addresses) {
  if (w.shm && w.shm->host == host) return true;
  bool any = false, loopback_only = true;
  for (const auto& l : unicast) {
    if (l.kind != Locator::kUdpV4) continue;
    any = true;
    if ((l.ipv4() >> 24) == 127) continue;
    loopback_only = false;
    if (std::find(addresses.begin(), addresses.end(), l.ipv4()) != addresses.end()) return true;
  }
  return any && loopback_only;
}

}  // namespace pubsub::discovery
