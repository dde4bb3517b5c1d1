// QoS policy parameters of SEDP announcements (qos_parameters.hpp): one encoder per policy that
// writes it only when it differs from DDS's default, one decoder switch over the parameter ids.
#include "wire/qos_parameters.hpp"

#include <cstring>
#include <string>
#include <vector>

#include "wire/constants.hpp"
#include "wire/message.hpp"

namespace pubsub::wire {

void duration_to_wire(Duration d, int32_t& s, uint32_t& f) {
  if (d >= std::chrono::seconds(0x7fffffff)) {
    s = 0x7fffffff;
    f = 0xffffffffu;
    return;
  }
  time_to_wire(Time{d.count()}, s, f);
}

Duration read_duration(ByteReader& r) {
  const int32_t s = r.i32();
  const uint32_t f = r.u32();
  if (s == 0x7fffffff) return Duration::max();  // DURATION_INFINITE
  return Duration(time_from_wire(s, f).ns);
}

namespace {

// A little-endian value under construction (ParameterListWriter writes little endian).
class Value {
 public:
  Value& u32(uint32_t v) {
    append(&v, 4);
    return *this;
  }
  Value& i32(int32_t v) { return u32(static_cast<uint32_t>(v)); }
  Value& u16(uint16_t v) {
    append(&v, 2);
    return *this;
  }
  Value& u8(uint8_t v) {
    bytes_.push_back(v);
    return *this;
  }
  Value& duration(Duration d) {
    int32_t s;
    uint32_t f;
    duration_to_wire(d, s, f);
    return i32(s).u32(f);
  }
  Value& align4() {
    while (bytes_.size() % 4) bytes_.push_back(0);
    return *this;
  }
  Value& string(const std::string& s) {
    align4().u32(static_cast<uint32_t>(s.size() + 1));
    append(s.data(), s.size());
    return u8(0);
  }
  Value& octets(const std::vector<uint8_t>& b) {
    u32(static_cast<uint32_t>(b.size()));
    append(b.data(), b.size());
    return *this;
  }
  void put(ParameterListWriter& w, uint16_t pid) { w.raw(pid, bytes_.data(), bytes_.size()); }

 private:
  void append(const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    bytes_.insert(bytes_.end(), b, b + n);
  }
  std::vector<uint8_t> bytes_;
};

bool read_octets(ByteReader& r, std::vector<uint8_t>& out) {
  const uint32_t n = r.u32();
  if (!r.ok() || n > r.remaining()) return false;
  const uint8_t* d = r.take(n);
  out.assign(d, d + n);
  return true;
}

bool read_string(ByteReader& r, std::string& out) {
  r.align(4);
  const uint32_t n = r.u32();
  if (!r.ok() || n == 0 || n > r.remaining()) return false;
  const uint8_t* s = r.take(n);
  if (s[n - 1] != 0) return false;
  out.assign(reinterpret_cast<const char*>(s), n - 1);
  return out.find('\0') == std::string::npos;
}

// An enumeration value the policy defines, else false (a kind from a newer standard is not
// guessed at: the announcement is rejected as malformed).
template <class E>
bool read_kind(ByteReader& r, E& out, uint32_t count) {
  const uint32_t v = r.u32();
  if (!r.ok() || v >= count) return false;
  out = static_cast<E>(v);
  return true;
}

void put_limits(Value& v, const ResourceLimitsQos& l) {
  v.i32(l.max_samples).i32(l.max_instances).i32(l.max_samples_per_instance);
}

void read_limits(ByteReader& r, ResourceLimitsQos& l) {
  l.max_samples = r.i32();
  l.max_instances = r.i32();
  l.max_samples_per_instance = r.i32();
}

void put_content_filter(ParameterListWriter& w, const ContentFilterQos& c) {
  Value v;
  v.string(c.content_filtered_topic_name).string(c.related_topic_name);
  v.string(c.filter_class_name).string(c.filter_expression).align4();
  v.u32(static_cast<uint32_t>(c.expression_parameters.size()));
  for (const auto& p : c.expression_parameters) v.string(p);
  v.put(w, kPidContentFilterProperty);
}

bool read_content_filter(ByteReader& r, ContentFilterQos& c) {
  if (!read_string(r, c.content_filtered_topic_name) || !read_string(r, c.related_topic_name) ||
      !read_string(r, c.filter_class_name) || !read_string(r, c.filter_expression)) {
    return false;
  }
  r.align(4);
  const uint32_t n = r.u32();
  if (!r.ok() || n > r.remaining() / 5) return false;  // each string is at least 5 bytes
  c.expression_parameters.resize(n);
  for (auto& p : c.expression_parameters) {
    if (!read_string(r, p)) return false;
  }
  return true;
}

// XTypes gives TypeConsistencyKind 16 bits (8 bytes in all); a 32-bit kind (12 bytes) is read too.
bool read_type_consistency(ByteReader& r, uint16_t length, TypeConsistencyQos& t) {
  const uint32_t kind = length >= 12 ? r.u32() : r.u16();
  if (!r.ok() || kind > 1) return false;
  t.kind = static_cast<TypeConsistencyQos::Kind>(kind);
  if (r.remaining() < 5) {  // an older form: the kind alone
    return true;
  }
  t.ignore_sequence_bounds = r.u8() != 0;
  t.ignore_string_bounds = r.u8() != 0;
  t.ignore_member_names = r.u8() != 0;
  t.prevent_type_widening = r.u8() != 0;
  t.force_type_validation = r.u8() != 0;
  return r.ok();
}

void put_durations(ParameterListWriter& w, const Policies& p, const Policies& d) {
  if (p.deadline != d.deadline) Value().duration(p.deadline).put(w, kPidDeadline);
  if (p.latency_budget != d.latency_budget) {
    Value().duration(p.latency_budget).put(w, kPidLatencyBudget);
  }
  if (p.lifespan != d.lifespan) Value().duration(p.lifespan).put(w, kPidLifespan);
  if (p.time_based_filter != d.time_based_filter) {
    Value().duration(p.time_based_filter).put(w, kPidTimeBasedFilter);
  }
}

void put_kinds(ParameterListWriter& w, const Policies& p, const Policies& d) {
  if (p.liveliness != d.liveliness) {
    Value()
        .u32(static_cast<uint32_t>(p.liveliness.kind))
        .duration(p.liveliness.lease_duration)
        .put(w, kPidLiveliness);
  }
  if (p.destination_order != d.destination_order) {
    Value().u32(static_cast<uint32_t>(p.destination_order)).put(w, kPidDestinationOrder);
  }
  if (p.presentation != d.presentation) {
    Value()
        .u32(static_cast<uint32_t>(p.presentation.access_scope))
        .u8(p.presentation.coherent_access ? 1 : 0)
        .u8(p.presentation.ordered_access ? 1 : 0)
        .put(w, kPidPresentation);
  }
  if (p.ownership != d.ownership) {
    Value().u32(static_cast<uint32_t>(p.ownership)).put(w, kPidOwnership);
  }
  if (p.ownership_strength != d.ownership_strength) {
    Value().i32(p.ownership_strength).put(w, kPidOwnershipStrength);
  }
  if (p.transport_priority != d.transport_priority) {
    Value().i32(p.transport_priority).put(w, kPidTransportPriority);
  }
}

void put_data_and_limits(ParameterListWriter& w, const Policies& p, const Policies& d) {
  if (p.resource_limits != d.resource_limits) {
    Value v;
    put_limits(v, p.resource_limits);
    v.put(w, kPidResourceLimits);
  }
  if (p.durability_service != d.durability_service) {
    const auto& s = p.durability_service;
    Value v;
    v.duration(s.service_cleanup_delay)
        .u32(s.history_kind == HistoryKind::kKeepAll ? 1 : 0)
        .i32(s.history_depth);
    put_limits(v, s.limits);
    v.put(w, kPidDurabilityService);
  }
  if (!p.user_data.empty()) Value().octets(p.user_data).put(w, kPidUserData);
  if (!p.topic_data.empty()) Value().octets(p.topic_data).put(w, kPidTopicData);
  if (!p.group_data.empty()) Value().octets(p.group_data).put(w, kPidGroupData);
  if (p.type_consistency) {
    const auto& t = *p.type_consistency;
    Value()
        .u16(static_cast<uint16_t>(t.kind))
        .u8(t.ignore_sequence_bounds)
        .u8(t.ignore_string_bounds)
        .u8(t.ignore_member_names)
        .u8(t.prevent_type_widening)
        .u8(t.force_type_validation)
        .put(w, kPidTypeConsistencyEnforcement);
  }
  if (p.content_filter) put_content_filter(w, *p.content_filter);
}

// The policies with a duration or a kind.
PolicyDecode decode_simple(uint16_t pid, ByteReader& r, Policies& out) {
  switch (pid) {
    case kPidDeadline:
      out.deadline = read_duration(r);
      break;
    case kPidLatencyBudget:
      out.latency_budget = read_duration(r);
      break;
    case kPidLifespan:
      out.lifespan = read_duration(r);
      break;
    case kPidTimeBasedFilter:
      out.time_based_filter = read_duration(r);
      break;
    case kPidLiveliness:
      if (!read_kind(r, out.liveliness.kind, 3)) return PolicyDecode::kBad;
      out.liveliness.lease_duration = read_duration(r);
      break;
    case kPidDestinationOrder:
      if (!read_kind(r, out.destination_order, 2)) return PolicyDecode::kBad;
      break;
    case kPidPresentation:
      if (!read_kind(r, out.presentation.access_scope, 3)) return PolicyDecode::kBad;
      out.presentation.coherent_access = r.u8() != 0;
      out.presentation.ordered_access = r.u8() != 0;
      break;
    case kPidOwnership:
      if (!read_kind(r, out.ownership, 2)) return PolicyDecode::kBad;
      break;
    case kPidOwnershipStrength:
      out.ownership_strength = r.i32();
      break;
    case kPidTransportPriority:
      out.transport_priority = r.i32();
      break;
    default:
      return PolicyDecode::kNotPolicy;
  }
  return r.ok() ? PolicyDecode::kDecoded : PolicyDecode::kBad;
}

}  // namespace

void put_duration(ParameterListWriter& w, uint16_t pid, Duration d) {
  Value().duration(d).put(w, pid);
}

void put_policies(ParameterListWriter& w, const Policies& p) {
  static const Policies kDefaults;
  put_durations(w, p, kDefaults);
  put_kinds(w, p, kDefaults);
  put_data_and_limits(w, p, kDefaults);
}

PolicyDecode decode_policy(const Parameter& param, bool le, Policies& out) {
  const uint16_t pid = param.pid & ~kPidMustUnderstand;
  ByteReader r(param.value, param.length, le);
  if (const PolicyDecode d = decode_simple(pid, r, out); d != PolicyDecode::kNotPolicy) return d;
  bool ok = true;
  switch (pid) {
    case kPidResourceLimits:
      read_limits(r, out.resource_limits);
      break;
    case kPidDurabilityService: {
      auto& s = out.durability_service;
      s.service_cleanup_delay = read_duration(r);
      s.history_kind = r.u32() == 1 ? HistoryKind::kKeepAll : HistoryKind::kKeepLast;
      s.history_depth = r.i32();
      read_limits(r, s.limits);
      break;
    }
    case kPidUserData:
      ok = read_octets(r, out.user_data);
      break;
    case kPidTopicData:
      ok = read_octets(r, out.topic_data);
      break;
    case kPidGroupData:
      ok = read_octets(r, out.group_data);
      break;
    case kPidTypeConsistencyEnforcement:
      ok = read_type_consistency(r, param.length, out.type_consistency.emplace());
      break;
    case kPidContentFilterProperty:
      ok = read_content_filter(r, out.content_filter.emplace());
      break;
    default:
      return PolicyDecode::kNotPolicy;
  }
  return ok && r.ok() ? PolicyDecode::kDecoded : PolicyDecode::kBad;
}

}  // namespace pubsub::wire
