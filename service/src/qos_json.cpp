// RecordedQos as JSON (recording_schema.hpp): the form recordings keep (TopicDef::qos,
// WriterDef::qos), `pubsub-replay info --json` prints and `play --qos FILE` overrides.
//
// Every policy is written, by its DDS name in lower case; durations are nanoseconds with -1 for
// infinite ("deadline_ns"), or, when read, text such as "2 s", "250 ms", "infinite" under the
// name without "_ns" ("deadline"); octet sequences (user, topic and group data) are hex. Reading
// applies the members present over what is there already, so one function decodes a recording
// (lenient: members of a newer version are ignored) and applies a user's overrides (strict: an
// unknown member, kind or value is an error naming its JSON path).
#include <charconv>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>

#include "common/hex.hpp"
#include "service/recording_schema.hpp"

namespace service {
namespace {

using nlohmann::json;
using pubsub::Duration;

// Enumerations and their names, in the order of their values.
constexpr const char* kReliability[] = {"best_effort", "reliable"};
constexpr const char* kDurability[] = {"volatile", "transient_local", "transient", "persistent"};
constexpr const char* kHistory[] = {"keep_last", "keep_all"};
constexpr const char* kLiveliness[] = {"automatic", "manual_by_participant", "manual_by_topic"};
constexpr const char* kOwnership[] = {"shared", "exclusive"};
constexpr const char* kOrder[] = {"by_reception_timestamp", "by_source_timestamp"};
constexpr const char* kScope[] = {"instance", "topic", "group"};
constexpr const char* kConsistency[] = {"disallow_type_coercion", "allow_type_coercion"};

template <class E, size_t N>
const char* name_of(E e, const char* const (&names)[N]) {
  const auto i = static_cast<size_t>(e);
  return i < N ? names[i] : "?";
}

int64_t ns_of(Duration d) {
  return d >= std::chrono::seconds(0x7fffffff) ? -1 : d.count();
}

json limits_json(const pubsub::ResourceLimitsQos& l) {
  return {{"max_samples", l.max_samples},
          {"max_instances", l.max_instances},
          {"max_samples_per_instance", l.max_samples_per_instance}};
}

json policies_json(const pubsub::Policies& p) {
  json j;
  j["deadline_ns"] = ns_of(p.deadline);
  j["latency_budget_ns"] = ns_of(p.latency_budget);
  j["liveliness"] = {{"kind", name_of(p.liveliness.kind, kLiveliness)},
                     {"lease_duration_ns", ns_of(p.liveliness.lease_duration)}};
  j["lifespan_ns"] = ns_of(p.lifespan);
  j["destination_order"] = name_of(p.destination_order, kOrder);
  j["presentation"] = {{"access_scope", name_of(p.presentation.access_scope, kScope)},
                       {"coherent_access", p.presentation.coherent_access},
                       {"ordered_access", p.presentation.ordered_access}};
  j["ownership"] = name_of(p.ownership, kOwnership);
  j["ownership_strength"] = p.ownership_strength;
  j["time_based_filter_ns"] = ns_of(p.time_based_filter);
  j["transport_priority"] = p.transport_priority;
  j["resource_limits"] = limits_json(p.resource_limits);
  const auto& ds = p.durability_service;
  j["durability_service"] = {
      {"service_cleanup_delay_ns", ns_of(ds.service_cleanup_delay)},
      {"history", {{"kind", name_of(ds.history_kind, kHistory)}, {"depth", ds.history_depth}}},
      {"resource_limits", limits_json(ds.limits)}};
  j["user_data"] = common::to_hex(p.user_data);
  j["topic_data"] = common::to_hex(p.topic_data);
  j["group_data"] = common::to_hex(p.group_data);
  if (p.type_consistency) {
    const auto& t = *p.type_consistency;
    j["type_consistency"] = {{"kind", name_of(t.kind, kConsistency)},
                             {"ignore_sequence_bounds", t.ignore_sequence_bounds},
                             {"ignore_string_bounds", t.ignore_string_bounds},
                             {"ignore_member_names", t.ignore_member_names},
                             {"prevent_type_widening", t.prevent_type_widening},
                             {"force_type_validation", t.force_type_validation}};
  }
  if (p.content_filter) {
    const auto& c = *p.content_filter;
    j["content_filter"] = {{"content_filtered_topic_name", c.content_filtered_topic_name},
                           {"related_topic_name", c.related_topic_name},
                           {"filter_class_name", c.filter_class_name},
                           {"filter_expression", c.filter_expression},
                           {"expression_parameters", c.expression_parameters}};
  }
  json other = json::array();
  for (const auto& o : p.other) {
    other.push_back(
        {{"pid", o.pid}, {"little_endian", o.little_endian}, {"value", common::to_hex(o.value)}});
  }
  j["other_parameters"] = std::move(other);
  return j;
}

// ---- reading --------------------------------------------------------------------------------

// Applies JSON members onto a value; the first error ends it ("/path: what").
class Reader {
 public:
  explicit Reader(bool strict) : strict_(strict) {}
  const std::string& error() const { return error_; }
  bool failed() const { return !error_.empty(); }

  // Calls f(member, path) for each member of object `j` at `path` that `known` lists; an unknown
  // member is an error when strict.
  template <class F>
  void object(const json& j, const std::string& path, std::initializer_list<const char*> known,
              F&& f) {
    if (failed()) return;
    if (!j.is_object()) return fail(path, "must be an object");
    for (const auto& [k, v] : j.items()) {
      if (failed()) return;
      bool found = false;
      for (const char* name : known) found = found || k == name;
      if (!found) {
        if (strict_) fail(path + "/" + k, "unknown QoS member");
        continue;
      }
      f(k, v, path + "/" + k);
    }
  }

  template <class E, size_t N>
  void kind(const json& v, const std::string& path, const char* const (&names)[N], E& out) {
    if (!v.is_string()) return fail(path, "must be a string");
    const auto s = v.get<std::string>();
    for (size_t i = 0; i < N; ++i) {
      if (s == names[i]) {
        out = static_cast<E>(i);
        return;
      }
    }
    std::string list;
    for (size_t i = 0; i < N; ++i) list += std::string(i ? ", " : "") + "\"" + names[i] + "\"";
    fail(path, "\"" + s + "\" is not one of " + list);
  }

  // "x_ns": integer nanoseconds, -1 = infinite; "x": the same or text ("2 s", "infinite").
  void duration(const json& v, const std::string& path, Duration& out) {
    if (v.is_number_integer()) {
      const int64_t ns = v.get<int64_t>();
      if (ns < -1) return fail(path, "must be >= 0, or -1 for infinite");
      out = ns == -1 ? pubsub::kInfinite : Duration(ns);
      return;
    }
    if (v.is_string() && text_duration(v.get<std::string>(), out)) return;
    fail(path,
         "must be nanoseconds (-1: infinite) or a text like \"2 s\", \"250 ms\", \"infinite\"");
  }

  template <class T>
  void integer(const json& v, const std::string& path, T& out) {
    if (!v.is_number_integer()) return fail(path, "must be an integer");
    const auto x = v.get<int64_t>();
    if (x < std::numeric_limits<T>::min() || x > std::numeric_limits<T>::max())
      return fail(path, "out of range");
    out = static_cast<T>(x);
  }

  void boolean(const json& v, const std::string& path, bool& out) {
    if (!v.is_boolean()) return fail(path, "must be true or false");
    out = v.get<bool>();
  }

  void octets(const json& v, const std::string& path, std::vector<uint8_t>& out) {
    if (!v.is_string()) return fail(path, "must be a hex string");
    const auto s = v.get<std::string>();
    if (s.size() % 2) return fail(path, "hex string of odd length");
    std::vector<uint8_t> b(s.size() / 2);
    for (size_t i = 0; i < b.size(); ++i) {
      auto r = std::from_chars(s.data() + 2 * i, s.data() + 2 * i + 2, b[i], 16);
      if (r.ec != std::errc() || r.ptr != s.data() + 2 * i + 2) return fail(path, "not hex");
    }
    out = std::move(b);
  }

  void strings(const json& v, const std::string& path, std::vector<std::string>& out) {
    if (!v.is_array()) return fail(path, "must be an array of strings");
    std::vector<std::string> r;
    for (const auto& e : v) {
      if (!e.is_string()) return fail(path, "must be an array of strings");
      r.push_back(e.get<std::string>());
    }
    out = std::move(r);
  }

  void fail(const std::string& path, const std::string& what) {
    if (error_.empty()) error_ = (path.empty() ? "/" : path) + ": " + what;
  }
  bool strict() const { return strict_; }

 private:
  static bool text_duration(const std::string& s, Duration& out) {
    if (s == "infinite") {
      out = pubsub::kInfinite;
      return true;
    }
    double v = 0;
    char unit[8] = {};
    if (std::sscanf(s.c_str(), "%lf %7s", &v, unit) != 2 || v < 0) return false;
    const std::string u = unit;
    const double scale = u == "s" ? 1e9 : u == "ms" ? 1e6 : u == "us" ? 1e3 : u == "ns" ? 1 : 0;
    if (scale == 0) return false;
    out = Duration(static_cast<int64_t>(v * scale + 0.5));
    return true;
  }

  bool strict_;
  std::string error_;
};

void read_limits(Reader& r, const json& j, const std::string& path, pubsub::ResourceLimitsQos& l) {
  r.object(j, path, {"max_samples", "max_instances", "max_samples_per_instance"},
           [&](const std::string& k, const json& v, const std::string& p) {
             if (k == "max_samples") r.integer(v, p, l.max_samples);
             if (k == "max_instances") r.integer(v, p, l.max_instances);
             if (k == "max_samples_per_instance") r.integer(v, p, l.max_samples_per_instance);
           });
}

void read_durability_service(Reader& r, const json& j, const std::string& path,
                             pubsub::DurabilityServiceQos& d) {
  r.object(j, path,
           {"service_cleanup_delay_ns", "service_cleanup_delay", "history", "resource_limits"},
           [&](const std::string& k, const json& v, const std::string& p) {
             if (k == "resource_limits") return read_limits(r, v, p, d.limits);
             if (k == "history") {
               return r.object(v, p, {"kind", "depth"},
                               [&](const std::string& hk, const json& hv, const std::string& hp) {
                                 if (hk == "kind") r.kind(hv, hp, kHistory, d.history_kind);
                                 if (hk == "depth") r.integer(hv, hp, d.history_depth);
                               });
             }
             r.duration(v, p, d.service_cleanup_delay);
           });
}

void read_type_consistency(Reader& r, const json& j, const std::string& path,
                           pubsub::TypeConsistencyQos& t) {
  r.object(j, path,
           {"kind", "ignore_sequence_bounds", "ignore_string_bounds", "ignore_member_names",
            "prevent_type_widening", "force_type_validation"},
           [&](const std::string& k, const json& v, const std::string& p) {
             if (k == "kind") return r.kind(v, p, kConsistency, t.kind);
             bool& b = k == "ignore_sequence_bounds"  ? t.ignore_sequence_bounds
                       : k == "ignore_string_bounds"  ? t.ignore_string_bounds
                       : k == "ignore_member_names"   ? t.ignore_member_names
                       : k == "prevent_type_widening" ? t.prevent_type_widening
                                                      : t.force_type_validation;
             r.boolean(v, p, b);
           });
}

void read_content_filter(Reader& r, const json& j, const std::string& path,
                         pubsub::ContentFilterQos& c) {
  r.object(j, path,
           {"content_filtered_topic_name", "related_topic_name", "filter_class_name",
            "filter_expression", "expression_parameters"},
           [&](const std::string& k, const json& v, const std::string& p) {
             if (k == "expression_parameters") return r.strings(v, p, c.expression_parameters);
             if (!v.is_string()) return r.fail(p, "must be a string");
             std::string& s = k == "content_filtered_topic_name" ? c.content_filtered_topic_name
                              : k == "related_topic_name"        ? c.related_topic_name
                              : k == "filter_class_name"         ? c.filter_class_name
                                                                 : c.filter_expression;
             s = v.get<std::string>();
           });
}

void read_other(Reader& r, const json& v, const std::string& path,
                std::vector<pubsub::RawParameter>& out) {
  if (!v.is_array()) return r.fail(path, "must be an array");
  std::vector<pubsub::RawParameter> params;
  for (size_t i = 0; i < v.size(); ++i) {
    pubsub::RawParameter p;
    r.object(v[i], path + "/" + std::to_string(i), {"pid", "little_endian", "value"},
             [&](const std::string& k, const json& e, const std::string& ep) {
               if (k == "pid") r.integer(e, ep, p.pid);
               if (k == "little_endian") r.boolean(e, ep, p.little_endian);
               if (k == "value") r.octets(e, ep, p.value);
             });
    params.push_back(std::move(p));
  }
  out = std::move(params);
}

// The members of Policies, one at a time.
void read_policy(Reader& r, const std::string& k, const json& v, const std::string& p,
                 pubsub::Policies& q) {
  if (k == "deadline_ns" || k == "deadline") return r.duration(v, p, q.deadline);
  if (k == "latency_budget_ns" || k == "latency_budget") return r.duration(v, p, q.latency_budget);
  if (k == "lifespan_ns" || k == "lifespan") return r.duration(v, p, q.lifespan);
  if (k == "time_based_filter_ns" || k == "time_based_filter") {
    return r.duration(v, p, q.time_based_filter);
  }
  if (k == "liveliness") {
    return r.object(v, p, {"kind", "lease_duration_ns", "lease_duration"},
                    [&](const std::string& lk, const json& lv, const std::string& lp) {
                      if (lk == "kind") return r.kind(lv, lp, kLiveliness, q.liveliness.kind);
                      r.duration(lv, lp, q.liveliness.lease_duration);
                    });
  }
  if (k == "destination_order") return r.kind(v, p, kOrder, q.destination_order);
  if (k == "presentation") {
    return r.object(v, p, {"access_scope", "coherent_access", "ordered_access"},
                    [&](const std::string& pk, const json& pv, const std::string& pp) {
                      auto& x = q.presentation;
                      if (pk == "access_scope") return r.kind(pv, pp, kScope, x.access_scope);
                      r.boolean(pv, pp,
                                pk == "coherent_access" ? x.coherent_access : x.ordered_access);
                    });
  }
  if (k == "ownership") return r.kind(v, p, kOwnership, q.ownership);
  if (k == "ownership_strength") return r.integer(v, p, q.ownership_strength);
  if (k == "transport_priority") return r.integer(v, p, q.transport_priority);
  if (k == "resource_limits") return read_limits(r, v, p, q.resource_limits);
  if (k == "durability_service") return read_durability_service(r, v, p, q.durability_service);
  if (k == "user_data") return r.octets(v, p, q.user_data);
  if (k == "topic_data") return r.octets(v, p, q.topic_data);
  if (k == "group_data") return r.octets(v, p, q.group_data);
  if (k == "type_consistency") {
    if (v.is_null()) return q.type_consistency.reset();
    return read_type_consistency(r, v, p, q.type_consistency.emplace());
  }
  if (k == "content_filter") {
    if (v.is_null()) return q.content_filter.reset();
    return read_content_filter(r, v, p, q.content_filter.emplace());
  }
  if (k == "other_parameters") return read_other(r, v, p, q.other);
}

void read_participant(Reader& r, const json& v, const std::string& path, RecordedQos& q) {
  auto& part = q.participant.emplace();
  r.object(v, path, {"vendor_id", "user_data", "lease_duration_ns"},
           [&](const std::string& k, const json& e, const std::string& p) {
             if (k == "vendor_id") return r.integer(e, p, part.vendor_id);
             if (k == "lease_duration_ns") return r.duration(e, p, part.lease_duration);
             if (!e.is_string()) return r.fail(p, "must be a string");
             part.user_data = e.get<std::string>();
           });
}

constexpr std::initializer_list<const char*> kMembers = {
    "reliability",          "durability",         "history",
    "max_blocking_time_ns", "max_blocking_time",  "partitions",
    "data_representation",  "deadline_ns",        "deadline",
    "latency_budget_ns",    "latency_budget",     "liveliness",
    "lifespan_ns",          "lifespan",           "destination_order",
    "presentation",         "ownership",          "ownership_strength",
    "time_based_filter_ns", "time_based_filter",  "transport_priority",
    "resource_limits",      "durability_service", "user_data",
    "topic_data",           "group_data",         "type_consistency",
    "content_filter",       "other_parameters",   "participant",
    "not_matched"};

void read_qos(Reader& r, const json& j, RecordedQos& q) {
  r.object(j, "", kMembers, [&](const std::string& k, const json& v, const std::string& p) {
    if (k == "reliability") return r.kind(v, p, kReliability, q.reliability);
    if (k == "durability") return r.kind(v, p, kDurability, q.durability);
    if (k == "history") {
      return r.object(v, p, {"kind", "depth"},
                      [&](const std::string& hk, const json& hv, const std::string& hp) {
                        if (hk == "kind") return r.kind(hv, hp, kHistory, q.history.kind);
                        r.integer(hv, hp, q.history.depth);
                      });
    }
    if (k == "max_blocking_time_ns" || k == "max_blocking_time") {
      return r.duration(v, p, q.max_blocking_time);
    }
    if (k == "partitions") return r.strings(v, p, q.partitions);
    if (k == "data_representation") {
      if (!v.is_array()) return r.fail(p, "must be an array of integers");
      std::vector<int16_t> reps;
      for (const auto& e : v) {
        int16_t x = 0;
        r.integer(e, p, x);
        reps.push_back(x);
      }
      q.data_representation = std::move(reps);
      return;
    }
    if (k == "participant") return read_participant(r, v, p, q);
    if (k == "not_matched") {
      if (r.strict()) return r.fail(p, "not a QoS policy (it says why a writer was not recorded)");
      if (!v.is_string()) return r.fail(p, "must be a string");
      q.not_matched = v.get<std::string>();
      return;
    }
    read_policy(r, k, v, p, q.policies);
  });
}

}  // namespace

storage::Bytes encode_qos(const RecordedQos& q) {
  json j = policies_json(q.policies);
  j["reliability"] = name_of(q.reliability, kReliability);
  j["durability"] = name_of(q.durability, kDurability);
  j["history"] = {{"kind", name_of(q.history.kind, kHistory)}, {"depth", q.history.depth}};
  j["max_blocking_time_ns"] = ns_of(q.max_blocking_time);
  j["partitions"] = q.partitions;
  j["data_representation"] = q.data_representation;
  if (q.participant) {
    j["participant"] = {{"vendor_id", q.participant->vendor_id},
                        {"user_data", q.participant->user_data},
                        {"lease_duration_ns", ns_of(q.participant->lease_duration)}};
  }
  if (!q.not_matched.empty()) j["not_matched"] = q.not_matched;
  const std::string s = j.dump();
  storage::Bytes out(s.size());
  std::memcpy(out.data(), s.data(), s.size());
  return out;
}

Result<RecordedQos> decode_qos(storage::ByteSpan bytes) {
  const auto* text = reinterpret_cast<const char*>(bytes.data());
  const auto j = json::parse(text, text + bytes.size(), nullptr, false);
  if (!j.is_object()) return Error{Errc::kCorrupt, "QoS is not a JSON object"};
  RecordedQos q;
  Reader r(false);
  read_qos(r, j, q);
  if (r.failed()) return Error{Errc::kCorrupt, r.error()};
  return q;
}

Result<RecordedQos> apply_qos_overrides(std::string_view json_object, RecordedQos qos) {
  const auto j = json::parse(json_object, nullptr, false);
  Reader r(true);
  if (j.is_discarded()) r.fail("", "not JSON");
  read_qos(r, j, qos);
  if (r.failed()) return Error{Errc::kInvalidArgument, r.error()};
  return qos;
}

std::string qos_summary(const RecordedQos& q) {
  static const pubsub::Policies kDefault;
  const pubsub::Policies& p = q.policies;
  std::string s = name_of(q.reliability, kReliability);
  s += std::string(", ") + name_of(q.durability, kDurability);
  s += q.history.kind == pubsub::HistoryKind::kKeepLast
           ? " keep_last " + std::to_string(q.history.depth)
           : std::string(" keep_all");
  auto dur = [](Duration d) { return pubsub::duration_text(d); };
  if (p.ownership != kDefault.ownership) {
    s += ", exclusive (strength " + std::to_string(p.ownership_strength) + ")";
  }
  if (p.deadline != kDefault.deadline) s += ", deadline " + dur(p.deadline);
  if (p.latency_budget != kDefault.latency_budget) {
    s += ", latency_budget " + dur(p.latency_budget);
  }
  if (p.liveliness != kDefault.liveliness) {
    s += std::string(", liveliness ") + name_of(p.liveliness.kind, kLiveliness) + " " +
         dur(p.liveliness.lease_duration);
  }
  if (p.lifespan != kDefault.lifespan) s += ", lifespan " + dur(p.lifespan);
  if (p.destination_order != kDefault.destination_order) s += ", by_source_timestamp";
  if (p.presentation != kDefault.presentation) {
    s += std::string(", presentation ") + name_of(p.presentation.access_scope, kScope) +
         (p.presentation.coherent_access ? " coherent" : "") +
         (p.presentation.ordered_access ? " ordered" : "");
  }
  if (!q.partitions.empty()) {
    s += ", partitions";
    for (const auto& n : q.partitions) s += " \"" + n + "\"";
  }
  if (!q.data_representation.empty() && q.data_representation[0] == 2) s += ", XCDR2";
  if (!p.user_data.empty()) s += ", user_data " + std::to_string(p.user_data.size()) + " B";
  if (!p.topic_data.empty()) s += ", topic_data " + std::to_string(p.topic_data.size()) + " B";
  if (!p.group_data.empty()) s += ", group_data " + std::to_string(p.group_data.size()) + " B";
  if (!p.other.empty()) {
    s += ", other parameters";
    for (const auto& o : p.other) {
      char pid[16];
      std::snprintf(pid, sizeof pid, " 0x%04x", o.pid);
      s += pid;
    }
  }
  return s;
}

std::string qos_json_text(const RecordedQos& qos) {
  const storage::Bytes b = encode_qos(qos);
  return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

}  // namespace service
