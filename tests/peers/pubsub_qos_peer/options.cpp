// pubsub_qos_peer: command-line parsing (../README.md, "Command line").
//
// `pubsub_qos_peer pub|sub [--flag value | --flag=value]...`. One table lists every flag: which
// role may use it, whether it takes a value, what the value looks like (for the message) and
// the function that checks and stores it. Anything wrong - an unknown flag, a flag of the other
// role, a missing or malformed value, a contradiction between flags - ends parsing with a
// one-line message, which main() prints before exiting 2. Runs in main() before other threads.
#include "options.hpp"

#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <string_view>

namespace pubsub_peer {
namespace {

using std::chrono::milliseconds;

// Longest duration a QoS option takes: 10^9 ms (about 11.6 days), as the other two peers.
constexpr int64_t kMaxMs = 1000000000;

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t end; (end = s.find(sep, start)) != std::string::npos; start = end + 1) {
    parts.push_back(s.substr(start, end - start));
  }
  parts.push_back(s.substr(start));
  return parts;
}

template <class T>
bool to_int(const std::string& s, int64_t min, int64_t max, T& out) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || v < min || v > max) {
    return false;
  }
  out = static_cast<T>(v);
  return true;
}

// A non-negative finite number (seconds, Hz).
bool to_number(const std::string& s, double& out) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || !std::isfinite(v) || v < 0 || v > 1e9) return false;
  out = v;
  return true;
}

bool to_duration(const std::string& s, pubsub::Duration& out) {
  int64_t ms = 0;
  if (!to_int(s, 0, kMaxMs, ms)) return false;
  out = milliseconds(ms);
  return true;
}

bool parse_history(const std::string& v, Options& o) {
  if (v == "keep_all") {
    o.qos.history = {pubsub::HistoryKind::kKeepAll, 1};
    return true;
  }
  const auto p = split(v, ':');
  int32_t depth = 0;
  if (p.size() != 2 || p[0] != "keep_last" || !to_int(p[1], 1, INT32_MAX, depth)) return false;
  o.qos.history = {pubsub::HistoryKind::kKeepLast, depth};
  return true;
}

bool parse_resource_limits(const std::string& v, Options& o) {
  const auto p = split(v, ':');
  pubsub::ResourceLimitsQos rl;
  int32_t* fields[3] = {&rl.max_samples, &rl.max_instances, &rl.max_samples_per_instance};
  if (p.size() != 3) return false;
  for (size_t i = 0; i < 3; ++i) {
    if (!to_int(p[i], -1, INT32_MAX, *fields[i]) || *fields[i] == 0) return false;
  }
  o.qos.policies.resource_limits = rl;
  o.qos.has_resource_limits = true;
  return true;
}

// The strength goes to the writer only (a reader has none); shared takes no strength.
bool parse_ownership(const std::string& v, Options& o) {
  const auto p = split(v, ':');
  auto& pol = o.qos.policies;
  if (p.size() == 1 && p[0] == "shared") {
    pol.ownership = pubsub::OwnershipKind::kShared;
    return true;
  }
  if (p[0] != "exclusive" || p.size() > 2) return false;
  pol.ownership = pubsub::OwnershipKind::kExclusive;
  int32_t strength = 0;
  if (p.size() == 2 && !to_int(p[1], INT32_MIN, INT32_MAX, strength)) return false;
  if (o.role == Role::kPub) pol.ownership_strength = strength;
  return true;
}

bool parse_liveliness(const std::string& v, Options& o) {
  const auto p = split(v, ':');
  pubsub::LivelinessQos l;
  if (p[0] == "automatic") {
    l.kind = pubsub::LivelinessKind::kAutomatic;
  } else if (p[0] == "manual_by_participant") {
    l.kind = pubsub::LivelinessKind::kManualByParticipant;
  } else if (p[0] == "manual_by_topic") {
    l.kind = pubsub::LivelinessKind::kManualByTopic;
  } else {
    return false;
  }
  if (p.size() > 2) return false;
  if (p.size() == 2 && (!to_duration(p[1], l.lease_duration) || l.lease_duration.count() == 0)) {
    return false;
  }
  o.qos.policies.liveliness = l;
  return true;
}

bool parse_presentation(const std::string& v, Options& o) {
  const auto p = split(v, ':');
  pubsub::PresentationQos pr;
  if (p[0] == "instance") {
    pr.access_scope = pubsub::PresentationScope::kInstance;
  } else if (p[0] == "topic") {
    pr.access_scope = pubsub::PresentationScope::kTopic;
  } else if (p[0] == "group") {
    pr.access_scope = pubsub::PresentationScope::kGroup;
  } else {
    return false;
  }
  for (size_t i = 1; i < p.size(); ++i) {
    if (p[i] == "coherent") {
      pr.coherent_access = true;
    } else if (p[i] == "ordered") {
      pr.ordered_access = true;
    } else {
      return false;
    }
  }
  o.qos.policies.presentation = pr;
  return true;
}

std::vector<uint8_t> bytes_of(const std::string& s) {
  return {s.begin(), s.end()};
}

enum class For { kBoth, kPub, kSub };

struct Flag {
  std::string_view name;
  For role;
  bool takes_value;
  std::string_view expected;  // for the message about a bad value
  bool (*store)(const std::string& value, Options& o);
};

// The flags that say what to do and for how long.
constexpr Flag kRunFlags[] = {
    {"--domain", For::kBoth, true, "0..232",
     [](const std::string& v, Options& o) { return to_int(v, 0, 232, o.domain); }},
    {"--topic", For::kBoth, true, "a name",
     [](const std::string& v, Options& o) { return !(o.topic = v).empty(); }},
    {"--count", For::kBoth, true, "0..2147483647",
     [](const std::string& v, Options& o) { return to_int(v, 0, INT32_MAX, o.count); }},
    {"--keys", For::kPub, true, "1..2147483647",
     [](const std::string& v, Options& o) { return to_int(v, 1, INT32_MAX, o.keys); }},
    {"--size", For::kPub, true, "0..67108864 bytes",
     [](const std::string& v, Options& o) { return to_int(v, 0, 64 << 20, o.size); }},
    {"--rate", For::kPub, true, "a number of Hz >= 0",
     [](const std::string& v, Options& o) { return to_number(v, o.rate); }},
    {"--wait-readers", For::kPub, true, "0..2147483647",
     [](const std::string& v, Options& o) { return to_int(v, 0, INT32_MAX, o.wait_readers); }},
    {"--dispose", For::kPub, true, "an instance id 0..K-1",
     [](const std::string& v, Options& o) {
       int32_t id = 0;
       if (!to_int(v, 0, INT32_MAX, id)) return false;
       o.dispose.push_back(id);
       return true;
     }},
    {"--unregister-rest", For::kPub, false, "",
     [](const std::string&, Options& o) { return o.unregister_rest = true; }},
    {"--linger", For::kBoth, true, "seconds >= 0",
     [](const std::string& v, Options& o) { return to_number(v, o.linger); }},
    {"--timeout", For::kBoth, true, "seconds > 0",
     [](const std::string& v, Options& o) { return to_number(v, o.timeout) && o.timeout > 0; }},
    {"--assert-every", For::kPub, true, "MS, 0..1000000000",
     [](const std::string& v, Options& o) { return to_int(v, 0, kMaxMs, o.assert_every_ms); }},
    {"--nic", For::kBoth, true, "an interface name or IPv4 address",
     [](const std::string& v, Options& o) { return !(o.nic = v).empty(); }},
    {"--participant-lease", For::kBoth, true, "seconds > 0",
     [](const std::string& v, Options& o) {
       return to_number(v, o.participant_lease) && o.participant_lease > 0;
     }},
};

constexpr Flag kQosFlags[] = {
    {"--reliability", For::kBoth, true, "reliable or best_effort",
     [](const std::string& v, Options& o) {
       if (v != "reliable" && v != "best_effort") return false;
       o.qos.reliability = v == "reliable" ? pubsub::ReliabilityKind::kReliable
                                           : pubsub::ReliabilityKind::kBestEffort;
       return true;
     }},
    {"--max-blocking", For::kBoth, true, "MS, 0..1000000000",
     [](const std::string& v, Options& o) {
       int64_t ms = 0;
       if (!to_int(v, 0, kMaxMs, ms)) return false;
       o.qos.max_blocking_ms = ms;
       return true;
     }},
    {"--durability", For::kBoth, true, "volatile or transient_local",
     [](const std::string& v, Options& o) {
       if (v != "volatile" && v != "transient_local") return false;
       o.qos.durability = v == "volatile" ? pubsub::DurabilityKind::kVolatile
                                          : pubsub::DurabilityKind::kTransientLocal;
       return true;
     }},
    {"--history", For::kBoth, true, "keep_last:N (N >= 1) or keep_all", parse_history},
    {"--resource-limits", For::kBoth, true,
     "MAX_SAMPLES:MAX_INSTANCES:MAX_SAMPLES_PER_INSTANCE, each -1 or >= 1", parse_resource_limits},
    {"--ownership", For::kBoth, true, "shared or exclusive[:STRENGTH]", parse_ownership},
    {"--deadline", For::kBoth, true, "MS, 0..1000000000",
     [](const std::string& v, Options& o) { return to_duration(v, o.qos.policies.deadline); }},
    {"--latency-budget", For::kBoth, true, "MS, 0..1000000000",
     [](const std::string& v, Options& o) {
       return to_duration(v, o.qos.policies.latency_budget);
     }},
    {"--liveliness", For::kBoth, true,
     "automatic, manual_by_participant or manual_by_topic, then optionally :LEASE_MS (>= 1)",
     parse_liveliness},
    {"--lifespan", For::kPub, true, "MS, 0..1000000000",
     [](const std::string& v, Options& o) { return to_duration(v, o.qos.policies.lifespan); }},
    {"--destination-order", For::kBoth, true, "reception or source",
     [](const std::string& v, Options& o) {
       if (v != "reception" && v != "source") return false;
       o.qos.policies.destination_order = v == "reception"
                                              ? pubsub::DestinationOrderKind::kByReceptionTimestamp
                                              : pubsub::DestinationOrderKind::kBySourceTimestamp;
       return true;
     }},
    {"--presentation", For::kBoth, true, "instance, topic or group, then [:coherent][:ordered]",
     parse_presentation},
    {"--partition", For::kBoth, true, "a name",
     [](const std::string& v, Options& o) {
       o.qos.partitions.push_back(v);
       return true;
     }},
    {"--user-data", For::kBoth, true, "text",
     [](const std::string& v, Options& o) {
       return (o.qos.policies.user_data = bytes_of(v), true);
     }},
    {"--topic-data", For::kBoth, true, "text",
     [](const std::string& v, Options& o) {
       return (o.qos.policies.topic_data = bytes_of(v), true);
     }},
    {"--group-data", For::kBoth, true, "text",
     [](const std::string& v, Options& o) {
       return (o.qos.policies.group_data = bytes_of(v), true);
     }},
    {"--time-based-filter", For::kSub, true, "MS, 0..1000000000",
     [](const std::string& v, Options& o) {
       return to_duration(v, o.qos.policies.time_based_filter);
     }},
    {"--data-representation", For::kBoth, true, "xcdr1, xcdr2 or xml",
     [](const std::string& v, Options& o) {
       // xml (id 1): a writer no raw reader can read, for the recorder's "not matched" test.
       if (v != "xcdr1" && v != "xcdr2" && v != "xml") return false;
       o.qos.representation = static_cast<int16_t>(v == "xcdr1" ? 0 : v == "xml" ? 1 : 2);
       return true;
     }},
};

const Flag* find_flag(std::string_view name) {
  for (const Flag& f : kRunFlags) {
    if (f.name == name) return &f;
  }
  for (const Flag& f : kQosFlags) {
    if (f.name == name) return &f;
  }
  return nullptr;
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
  const auto kind = o.qos.policies.liveliness.kind;
  if (o.assert_every_ms > 0 && kind == pubsub::LivelinessKind::kAutomatic) {
    error = "--assert-every needs --liveliness manual_by_participant or manual_by_topic";
    return false;
  }
  return true;
}

// One flag at argv[i] (and its value); advances i past what it used.
bool parse_flag(int argc, char** argv, int& i, Options& o, std::string& error) {
  std::string name = argv[i];
  std::optional<std::string> value;
  if (const size_t eq = name.find('='); name.rfind("--", 0) == 0 && eq != std::string::npos) {
    value = name.substr(eq + 1);
    name.resize(eq);
  }
  const Flag* f = find_flag(name);
  if (f == nullptr) {
    error = "unknown option '" + std::string(argv[i]) + "' (--help: usage)";
    return false;
  }
  const For mine = o.role == Role::kPub ? For::kPub : For::kSub;
  if (f->role != For::kBoth && f->role != mine) {
    error = name + " is an option of " + (f->role == For::kPub ? "pub" : "sub") + " only";
    return false;
  }
  if (!f->takes_value && value) {
    error = name + " takes no value";
    return false;
  }
  if (f->takes_value && !value) {
    if (i + 1 >= argc) {
      error = name + " needs a value (" + std::string(f->expected) + ")";
      return false;
    }
    value = argv[++i];
  }
  if (!f->store(value.value_or(""), o)) {
    error = name + ": bad value '" + *value + "', expected " + std::string(f->expected);
    return false;
  }
  return true;
}

}  // namespace

Parsed parse_options(int argc, char** argv, Options& o, std::string& error) {
  const std::string role = argc >= 2 ? argv[1] : "";
  if (role == "--help" || role == "-h") return Parsed::kHelp;
  if (role != "pub" && role != "sub") {
    error = role.empty() ? "missing role: pub or sub (--help: usage)"
                         : "the first argument must be pub or sub, not '" + role + "'";
    return Parsed::kBad;
  }
  o.role = role == "pub" ? Role::kPub : Role::kSub;
  if (o.role == Role::kSub) o.linger = 0;
  for (int i = 2; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") return Parsed::kHelp;
    if (!parse_flag(argc, argv, i, o, error)) return Parsed::kBad;
  }
  return check_combination(o, error) ? Parsed::kRun : Parsed::kBad;
}

std::string usage() {
  return "usage: pubsub_qos_peer pub|sub [options]   (tests/peers/README.md)\n"
         "  --domain N  --topic NAME  --count N  --timeout S  --linger S  --nic IFACE|ADDR\n"
         "  --participant-lease S (libpubsub only)\n"
         "  pub: --keys K  --size B  --rate HZ  --wait-readers N  --dispose ID (repeatable)\n"
         "       --unregister-rest  --assert-every MS (accepted, ignored)\n"
         "  QoS: --reliability reliable|best_effort  --max-blocking MS\n"
         "       --durability volatile|transient_local  --history keep_last:N|keep_all\n"
         "       --resource-limits MAX_SAMPLES:MAX_INSTANCES:MAX_SAMPLES_PER_INSTANCE (-1: "
         "unlimited)\n"
         "       --ownership shared|exclusive[:STRENGTH]  --deadline MS  --latency-budget MS\n"
         "       --liveliness automatic|manual_by_participant|manual_by_topic[:LEASE_MS]\n"
         "       --lifespan MS (pub)  --destination-order reception|source\n"
         "       --presentation instance|topic|group[:coherent][:ordered]  --partition NAME\n"
         "       --user-data TEXT  --topic-data TEXT  --group-data TEXT\n"
         "       --time-based-filter MS (sub)  --data-representation xcdr1|xcdr2|xml\n"
         "stdout: JSON lines; exit 0 ok, 1 timeout or failure, 2 bad arguments\n";
}

}  // namespace pubsub_peer
