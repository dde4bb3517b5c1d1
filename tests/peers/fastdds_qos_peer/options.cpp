// fastdds_qos_peer: command-line parsing (../README.md, "Command line").
//
// Runs in main() before any other thread. Every flag has a handler that checks its value and
// stores it; a flag of the other role (say --dispose for sub) is refused like an unknown one, so
// a test that mixes them up learns it at once (exit 2) instead of testing something else.
#include "options.hpp"

#include <charconv>
#include <cmath>
#include <functional>
#include <map>

namespace qos_peer {
namespace {

// Longest duration option: 10^9 ms (about 11.6 days) still fits Duration_t's int32 seconds.
constexpr int64_t kMaxMs = 1000000000;

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (;;) {
    const size_t end = s.find(sep, start);
    parts.push_back(s.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) return parts;
    start = end + 1;
  }
}

bool parse_int(const std::string& s, int64_t min, int64_t max, int64_t& out) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < min || v > max) return false;
  out = v;
  return true;
}

template <class T>
bool parse_int_as(const std::string& s, int64_t min, int64_t max, T& out) {
  int64_t v = 0;
  if (!parse_int(s, min, max, v)) return false;
  out = static_cast<T>(v);
  return true;
}

bool parse_seconds(const std::string& s, double min, double& out) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(s, &used);
  } catch (...) {
    return false;
  }
  if (used != s.size() || !std::isfinite(v) || v < min || v > 1e9) return false;
  out = v;
  return true;
}

bool parse_ms(const std::string& s, std::optional<int64_t>& out) {
  int64_t v = 0;
  if (!parse_int(s, 0, kMaxMs, v)) return false;
  out = v;
  return true;
}

bool parse_history(const std::string& s, QosOptions& q) {
  if (s == "keep_all") {
    q.keep_last = 0;
    return true;
  }
  const auto p = split(s, ':');
  return p.size() == 2 && p[0] == "keep_last" && parse_int_as(p[1], 1, INT32_MAX, q.keep_last);
}

bool parse_resource_limits(const std::string& s, QosOptions& q) {
  const auto p = split(s, ':');
  if (p.size() != 3) return false;
  ResourceLimits rl;
  int32_t* fields[3] = {&rl.max_samples, &rl.max_instances, &rl.max_samples_per_instance};
  for (size_t i = 0; i < 3; ++i) {
    if (!parse_int_as(p[i], -1, INT32_MAX, *fields[i]) || *fields[i] == 0) return false;
  }
  q.resource_limits = rl;
  return true;
}

bool parse_ownership(const std::string& s, QosOptions& q) {
  const auto p = split(s, ':');
  if (p.size() == 1 && p[0] == "shared") {
    q.ownership = dds::SHARED_OWNERSHIP_QOS;
    return true;
  }
  if (p[0] != "exclusive" || p.size() > 2) return false;
  q.ownership = dds::EXCLUSIVE_OWNERSHIP_QOS;
  if (p.size() == 1) return true;
  int32_t strength = 0;
  if (!parse_int_as(p[1], INT32_MIN, INT32_MAX, strength)) return false;
  q.ownership_strength = strength;
  return true;
}

bool parse_liveliness(const std::string& s, QosOptions& q) {
  const auto p = split(s, ':');
  if (p.size() > 2) return false;
  if (p[0] == "automatic") {
    q.liveliness = dds::AUTOMATIC_LIVELINESS_QOS;
  } else if (p[0] == "manual_by_participant") {
    q.liveliness = dds::MANUAL_BY_PARTICIPANT_LIVELINESS_QOS;
  } else if (p[0] == "manual_by_topic") {
    q.liveliness = dds::MANUAL_BY_TOPIC_LIVELINESS_QOS;
  } else {
    return false;
  }
  return p.size() == 1 || (parse_ms(p[1], q.lease_ms) && *q.lease_ms > 0);
}

bool parse_presentation(const std::string& s, QosOptions& q) {
  const auto p = split(s, ':');
  Presentation pr;
  if (p[0] == "instance") {
    pr.scope = dds::INSTANCE_PRESENTATION_QOS;
  } else if (p[0] == "topic") {
    pr.scope = dds::TOPIC_PRESENTATION_QOS;
  } else if (p[0] == "group") {
    pr.scope = dds::GROUP_PRESENTATION_QOS;
  } else {
    return false;
  }
  for (size_t i = 1; i < p.size(); ++i) {
    if (p[i] == "coherent") {
      pr.coherent = true;
    } else if (p[i] == "ordered") {
      pr.ordered = true;
    } else {
      return false;
    }
  }
  q.presentation = pr;
  return true;
}

// A flag's handler: false when the value is bad.
using Handler = std::function<bool(const std::string&, Options&)>;
enum class For { kBoth, kPub, kSub };
struct Flag {
  For role;
  bool takes_value;
  Handler handle;
};

// Flags that are not QoS: what to do and how long.
void add_run_flags(std::map<std::string, Flag>& f) {
  using S = const std::string&;
  f["--domain"] = {For::kBoth, true, [](S v, Options& o) {
                     return parse_int_as(v, 0, 232, o.domain);  // RTPS port mapping: d <= 232
                   }};
  f["--topic"] = {For::kBoth, true, [](S v, Options& o) { return !(o.topic = v).empty(); }};
  f["--count"] = {For::kBoth, true,
                  [](S v, Options& o) { return parse_int(v, 0, INT32_MAX, o.count); }};
  f["--keys"] = {For::kPub, true,
                 [](S v, Options& o) { return parse_int_as(v, 1, INT32_MAX, o.keys); }};
  f["--size"] = {For::kPub, true,
                 [](S v, Options& o) { return parse_int_as(v, 0, 64 << 20, o.size); }};
  f["--rate"] = {For::kPub, true, [](S v, Options& o) { return parse_seconds(v, 0, o.rate); }};
  f["--wait-readers"] = {For::kPub, true, [](S v, Options& o) {
                           return parse_int_as(v, 0, INT32_MAX, o.wait_readers);
                         }};
  f["--dispose"] = {For::kPub, true, [](S v, Options& o) {
                      int32_t id = 0;
                      if (!parse_int_as(v, 0, INT32_MAX, id)) return false;
                      o.dispose.push_back(id);
                      return true;
                    }};
  f["--unregister-rest"] = {For::kPub, false,
                            [](S, Options& o) { return o.unregister_rest = true; }};
  f["--linger"] = {For::kBoth, true, [](S v, Options& o) {
                     return parse_seconds(v, 0, o.linger) && parse_seconds(v, 0, o.sub_linger);
                   }};
  f["--timeout"] = {For::kBoth, true, [](S v, Options& o) {
                      return parse_seconds(v, 0, o.timeout) && o.timeout > 0;
                    }};
  f["--assert-every"] = {
      For::kPub, true, [](S v, Options& o) { return parse_int(v, 0, kMaxMs, o.assert_every_ms); }};
  f["--nic"] = {For::kBoth, true, [](S v, Options& o) { return !(o.nic = v).empty(); }};
}

// Kind-only policies: --name value -> a fixed enum value.
template <class Kind>
Handler kind_flag(std::map<std::string, Kind> kinds, std::optional<Kind> QosOptions::*field) {
  return [kinds, field](const std::string& v, Options& o) {
    const auto it = kinds.find(v);
    if (it == kinds.end()) return false;
    o.qos.*field = it->second;
    return true;
  };
}

Handler ms_flag(std::optional<int64_t> QosOptions::*field) {
  return [field](const std::string& v, Options& o) { return parse_ms(v, o.qos.*field); };
}

Handler text_flag(std::optional<std::string> QosOptions::*field) {
  return [field](const std::string& v, Options& o) {
    o.qos.*field = v;
    return true;
  };
}

void add_qos_flags(std::map<std::string, Flag>& f) {
  using S = const std::string&;
  f["--reliability"] = {For::kBoth, true, [](S v, Options& o) {
                          if (v != "reliable" && v != "best_effort") return false;
                          o.qos.reliability = v == "reliable" ? dds::RELIABLE_RELIABILITY_QOS
                                                              : dds::BEST_EFFORT_RELIABILITY_QOS;
                          return true;
                        }};
  f["--max-blocking"] = {For::kBoth, true, ms_flag(&QosOptions::max_blocking_ms)};
  f["--durability"] = {For::kBoth, true,
                       kind_flag<dds::DurabilityQosPolicyKind>(
                           {{"volatile", dds::VOLATILE_DURABILITY_QOS},
                            {"transient_local", dds::TRANSIENT_LOCAL_DURABILITY_QOS}},
                           &QosOptions::durability)};
  f["--history"] = {For::kBoth, true, [](S v, Options& o) { return parse_history(v, o.qos); }};
  f["--resource-limits"] = {For::kBoth, true,
                            [](S v, Options& o) { return parse_resource_limits(v, o.qos); }};
  f["--ownership"] = {For::kBoth, true, [](S v, Options& o) { return parse_ownership(v, o.qos); }};
  f["--deadline"] = {For::kBoth, true, ms_flag(&QosOptions::deadline_ms)};
  f["--latency-budget"] = {For::kBoth, true, ms_flag(&QosOptions::latency_budget_ms)};
  f["--liveliness"] = {For::kBoth, true,
                       [](S v, Options& o) { return parse_liveliness(v, o.qos); }};
  f["--lifespan"] = {For::kBoth, true, ms_flag(&QosOptions::lifespan_ms)};
  f["--destination-order"] = {For::kBoth, true,
                              kind_flag<dds::DestinationOrderQosPolicyKind>(
                                  {{"reception", dds::BY_RECEPTION_TIMESTAMP_DESTINATIONORDER_QOS},
                                   {"source", dds::BY_SOURCE_TIMESTAMP_DESTINATIONORDER_QOS}},
                                  &QosOptions::destination_order)};
  f["--presentation"] = {For::kBoth, true,
                         [](S v, Options& o) { return parse_presentation(v, o.qos); }};
  f["--partition"] = {For::kBoth, true, [](S v, Options& o) {
                        o.qos.partitions.push_back(v);
                        return true;
                      }};
  f["--user-data"] = {For::kBoth, true, text_flag(&QosOptions::user_data)};
  f["--topic-data"] = {For::kBoth, true, text_flag(&QosOptions::topic_data)};
  f["--group-data"] = {For::kBoth, true, text_flag(&QosOptions::group_data)};
  f["--time-based-filter"] = {For::kSub, true, ms_flag(&QosOptions::time_based_filter_ms)};
  f["--data-representation"] = {
      For::kBoth, true,
      kind_flag<dds::DataRepresentationId_t>(
          {{"xcdr1", dds::XCDR_DATA_REPRESENTATION}, {"xcdr2", dds::XCDR2_DATA_REPRESENTATION}},
          &QosOptions::representation)};
}

const std::map<std::string, Flag>& flags() {
  static const std::map<std::string, Flag> table = [] {
    std::map<std::string, Flag> f;
    add_run_flags(f);
    add_qos_flags(f);
    return f;
  }();
  return table;
}

// Checks between flags, once all are read.
bool check_combination(const Options& o, std::string& error) {
  for (const int32_t id : o.dispose) {
    if (id >= o.keys) {
      error = "--dispose " + std::to_string(id) + ": not an instance of --keys " +
              std::to_string(o.keys) + " (ids 0.." + std::to_string(o.keys - 1) + ")";
      return false;
    }
  }
  return true;
}

}  // namespace

bool parse_options(int argc, char** argv, Options& o, std::string& error, bool& help) {
  help = false;
  if (argc >= 2 && (std::string(argv[1]) == "-h" || std::string(argv[1]) == "--help")) {
    help = true;
    return false;
  }
  const std::string role = argc >= 2 ? argv[1] : "";
  if (role != "pub" && role != "sub") {
    error = "the first argument must be pub or sub (--help: usage)";
    return false;
  }
  o.role = role == "pub" ? Role::kPub : Role::kSub;
  const For mine = o.role == Role::kPub ? For::kPub : For::kSub;
  for (int i = 2; i < argc; ++i) {
    const std::string name = argv[i];
    const auto it = flags().find(name);
    if (it == flags().end()) {
      error = "unknown option " + name + " (--help: usage)";
      return false;
    }
    const Flag& f = it->second;
    if (f.role != For::kBoth && f.role != mine) {
      error = name + " is an option of " + (f.role == For::kPub ? "pub" : "sub") + ", not " + role;
      return false;
    }
    if (f.takes_value && i + 1 >= argc) {
      error = name + " needs a value";
      return false;
    }
    const std::string value = f.takes_value ? argv[++i] : "";
    if (!f.handle(value, o)) {
      error = "bad value for " + name + ": '" + value + "'";
      return false;
    }
  }
  return check_combination(o, error);
}

std::string usage() {
  return "usage: fastdds_qos_peer pub|sub [options]   (tests/peers/README.md)\n"
         "  --domain N  --topic NAME  --count N  --timeout S  --nic IFACE|ADDR\n"
         "  pub: --keys K  --size B  --rate HZ  --wait-readers N  --dispose ID (repeatable)\n"
         "       --unregister-rest  --linger S  --assert-every MS\n"
         "  QoS: --reliability reliable|best_effort  --max-blocking MS\n"
         "       --durability volatile|transient_local  --history keep_last:N|keep_all\n"
         "       --resource-limits MAX_SAMPLES:MAX_INSTANCES:MAX_SAMPLES_PER_INSTANCE (-1: "
         "unlimited)\n"
         "       --ownership shared|exclusive[:STRENGTH]  --deadline MS  --latency-budget MS\n"
         "       --liveliness automatic|manual_by_participant|manual_by_topic[:LEASE_MS]\n"
         "       --lifespan MS  --destination-order reception|source\n"
         "       --presentation instance|topic|group[:coherent][:ordered]  --partition NAME\n"
         "       --user-data TEXT  --topic-data TEXT  --group-data TEXT\n"
         "       --time-based-filter MS (sub)  --data-representation xcdr1|xcdr2\n"
         "Output: JSON lines on stdout. Exit: 0 ok, 1 timeout or failure, 2 bad arguments.\n";
}

}  // namespace qos_peer
