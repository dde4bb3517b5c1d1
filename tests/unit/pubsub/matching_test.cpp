// Matching: the glob patterns of raw readers (glob_match, check_glob) and the writer/reader
// matching rules (match_failure), one rule at a time.
#include <catch2/catch.hpp>
#include <string>
#include <string_view>

#include "common/glob.hpp"
#include "discovery/matching.hpp"
#include "wire/constants.hpp"

using namespace pubsub;
using common::check_glob;
using common::glob_match;
using pubsub::discovery::match_failure;
namespace discovery = pubsub::discovery;
using pubsub::wire::EndpointData;

TEST_CASE("glob_match: literals, * and ?") {
  struct Case {
    const char* pattern;
    const char* name;
    bool match;
  };
  const Case cases[] = {
      {"", "", true},
      {"", "a", false},
      {"a", "", false},
      {"abc", "abc", true},
      {"abc", "abcd", false},  // whole-name match
      {"abc", "ab", false},
      {"abc", "ABC", false},  // case sensitive
      {"*", "", true},
      {"*", "anything/at all", true},
      {"**", "x", true},
      {"a*", "a", true},
      {"a*", "abc", true},
      {"a*", "ba", false},
      {"*c", "abc", true},
      {"*c", "abcd", false},
      {"a*c", "abbbc", true},
      {"a*c", "ac", true},
      {"a*c", "abcd", false},
      {"*ab", "aab", true},  // backtracking after a partial match
      {"*aab", "aaab", true},
      {"*a*b*", "xxaxxbxx", true},
      {"*a*b*", "xxbxxaxx", false},
      {"a*b*c", "aXbYbZc", true},
      {"?", "a", true},
      {"?", "", false},
      {"?", "ab", false},
      {"??", "a", false},
      {"a?c", "abc", true},
      {"a?c", "ac", false},
      {"*?", "", false},
      {"*?", "x", true},
      {"rt/*", "rt/chatter", true},
      {"rt/*", "rq/chatter", false},
      {"DDSPerf?Data*", "DDSPerfRDataKS", true},
      {"DDSPerf?Data*", "DDSPerfRPing", false},
  };
  for (const Case& c : cases) {
    INFO("pattern '" << c.pattern << "' name '" << c.name << "'");
    REQUIRE(glob_match(c.pattern, c.name) == c.match);
  }
}

TEST_CASE("glob_match: character classes, ranges and negation") {
  struct Case {
    const char* pattern;
    const char* name;
    bool match;
  };
  const Case cases[] = {
      {"[abc]", "a", true},
      {"[abc]", "c", true},
      {"[abc]", "d", false},
      {"[abc]", "", false},
      {"[abc]", "ab", false},
      {"[a-z]", "q", true},
      {"[a-z]", "a", true},
      {"[a-z]", "z", true},
      {"[a-z]", "Q", false},
      {"[a-cx-z]", "y", true},
      {"[a-cx-z]", "m", false},
      {"[0-9][0-9]", "42", true},
      {"[0-9][0-9]", "4x", false},
      {"[!a-z]", "Q", true},
      {"[!a-z]", "q", false},
      {"[^a]", "b", true},
      {"[^a]", "a", false},
      {"[]]", "]", true},  // ']' first in a class is a member
      {"[]a]", "a", true},
      {"[]a]", "b", false},
      {"[!]]", "]", false},
      {"[!]]", "x", true},
      {"[a-]", "-", true},  // '-' last is a member
      {"[a-]", "b", false},
      {"[-a]", "-", true},
      {"topic[0-9]", "topic7", true},
      {"*[0-9]", "topic7", true},
      {"*[0-9]", "topic", false},
      {"*[xy]z", "axyz", true},  // class inside a backtracking star
      {"s[?*]", "s*", true},     // ? and * are literal inside a class
      {"s[?*]", "sx", false},
      {"[", "[", true},  // an unterminated '[' matches itself
      {"a[b", "a[b", true},
      {"a[b", "ab", false},
  };
  for (const Case& c : cases) {
    INFO("pattern '" << c.pattern << "' name '" << c.name << "'");
    REQUIRE(glob_match(c.pattern, c.name) == c.match);
  }
}

namespace {
// check_glob's reason, or "" when the pattern is well formed (then no error at all).
std::string glob_problem(std::string_view pattern) {
  const auto ok = check_glob(pattern);
  if (ok) return "";
  CHECK(ok.error().code == common::Errc::kInvalidArgument);
  return ok.error().message;
}
}  // namespace

TEST_CASE("check_glob explains malformed patterns") {
  REQUIRE(glob_problem("") == "empty pattern");
  REQUIRE(glob_problem("[abc") == "unterminated '[' at position 1");
  REQUIRE(glob_problem("ab[") == "unterminated '[' at position 3");
  REQUIRE(glob_problem("a[b]c[") == "unterminated '[' at position 6");
  REQUIRE(glob_problem("[]") == "unterminated '[' at position 1");  // ']' first is a member
  REQUIRE(glob_problem("[!]") == "unterminated '[' at position 1");
  REQUIRE(glob_problem("*") == "");
  REQUIRE(glob_problem("?") == "");
  REQUIRE(glob_problem("abc") == "");
  REQUIRE(glob_problem("[a-z]*") == "");
  REQUIRE(glob_problem("[]]") == "");
  REQUIRE(glob_problem("[!a][^b]x") == "");
  REQUIRE(glob_problem("a]b") == "");  // a ']' outside a class is an ordinary character
}

namespace {

EndpointData endpoint(uint32_t entity) {
  EndpointData e;
  e.guid.prefix = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  e.guid.entity.value = entity;
  e.topic_name = "Temperature";
  e.type_name = "sensors::Reading";
  return e;
}
EndpointData writer() {
  EndpointData w = endpoint(0x00000102);
  w.reliability = ReliabilityKind::kReliable;
  return w;
}
EndpointData reader() {
  EndpointData r = endpoint(0x00000207);
  r.reliability = ReliabilityKind::kReliable;
  return r;
}

}  // namespace

TEST_CASE("match_failure: topic and type names must be identical") {
  REQUIRE(match_failure(writer(), reader()) == "");
  EndpointData r = reader();
  r.topic_name = "temperature";
  REQUIRE(match_failure(writer(), r) == "different topic names");
  r = reader();
  r.type_name = "::sensors::Reading";  // no normalization: exact names only
  REQUIRE(match_failure(writer(), r) ==
          "type names differ ('sensors::Reading' vs '::sensors::Reading')");
  // The first failing rule is reported.
  r.topic_name = "Other";
  r.durability = DurabilityKind::kTransientLocal;
  REQUIRE(match_failure(writer(), r) == "different topic names");
}

TEST_CASE("match_failure: reliability is requested by the reader, offered by the writer") {
  EndpointData w = writer(), r = reader();
  w.reliability = ReliabilityKind::kBestEffort;
  REQUIRE(match_failure(w, r) == "RELIABILITY: requested RELIABLE, offered BEST_EFFORT");
  r.reliability = ReliabilityKind::kBestEffort;
  REQUIRE(match_failure(w, r) == "");
  w.reliability = ReliabilityKind::kReliable;
  REQUIRE(match_failure(w, r) == "");  // a best-effort reader takes a reliable writer
}

TEST_CASE("match_failure: durability is requested by the reader, offered by the writer") {
  EndpointData w = writer(), r = reader();
  r.durability = DurabilityKind::kTransientLocal;
  REQUIRE(match_failure(w, r) == "DURABILITY: requested TRANSIENT_LOCAL, offered VOLATILE");
  w.durability = DurabilityKind::kTransientLocal;
  REQUIRE(match_failure(w, r) == "");
  r.durability = DurabilityKind::kVolatile;
  REQUIRE(match_failure(w, r) == "");
}

TEST_CASE("match_failure: partitions, including the default partition") {
  struct Case {
    std::vector<std::string> writer, reader;
    bool match;
  };
  const Case cases[] = {
      {{}, {}, true},    // both in the default partition
      {{""}, {}, true},  // "" is the default partition, named
      {{}, {""}, true},
      {{"A"}, {}, false},  // a named partition does not match the default one
      {{}, {"A"}, false},
      {{"A"}, {"A"}, true},
      {{"A"}, {"a"}, false},
      {{"A", "B"}, {"C", "B"}, true},  // any common partition
      {{"A", "B"}, {"C", "D"}, false},
      {{"sensors/*"}, {"sensors/temp"}, true},  // a pattern on either side
      {{"sensors/temp"}, {"sensors/*"}, true},
      {{"sensors/?"}, {"sensors/temp"}, false},
      {{"[ab]x"}, {"bx"}, true},
      {{"*"}, {}, true},  // "*" matches the default partition's empty name
      {{}, {"*"}, true},
  };
  for (const Case& c : cases) {
    INFO("writer " << c.writer.size() << " partitions, reader " << c.reader.size());
    EndpointData w = writer(), r = reader();
    w.partitions = c.writer;
    r.partitions = c.reader;
    REQUIRE(match_failure(w, r) == (c.match ? "" : "no common partition"));
  }
}

TEST_CASE("match_failure: the writer's first data representation must be accepted") {
  using wire::kXcdr1;
  using wire::kXcdr2;
  struct Case {
    std::vector<int16_t> writer, reader;
    bool match;
  };
  const Case cases[] = {
      {{}, {}, true},  // both XCDR1 by default
      {{kXcdr1}, {}, true},
      {{kXcdr2}, {}, false},  // a reader announcing nothing accepts XCDR1 only
      {{}, {kXcdr2}, false},
      {{kXcdr2}, {kXcdr1, kXcdr2}, true},
      {{}, {kXcdr1, kXcdr2}, true},
      {{kXcdr1, kXcdr2}, {kXcdr2}, false},  // only the writer's first entry counts
      {{kXcdr2, kXcdr1}, {kXcdr2}, true},
  };
  for (const Case& c : cases) {
    INFO("writer " << (c.writer.empty() ? -1 : c.writer[0]) << ", reader accepts "
                   << c.reader.size());
    EndpointData w = writer(), r = reader();
    w.data_representation = c.writer;
    r.data_representation = c.reader;
    const auto m = discovery::match(w, r);
    REQUIRE(m.ok() == c.match);
    if (!c.match) {
      CHECK(m.kind == discovery::MatchResult::Kind::kIncompatibleQos);
      CHECK(m.policy == QosPolicyId::kDataRepresentation);
      CHECK(m.reason.starts_with("DATA_REPRESENTATION: requested "));
    }
  }
}

TEST_CASE("match_failure: names, then partitions, then the requested/offered rules") {
  EndpointData w = writer(), r = reader();
  w.partitions = {"A"};
  w.data_representation = {wire::kXcdr2};
  REQUIRE(match_failure(w, r) == "no common partition");
  CHECK(discovery::match(w, r).kind == discovery::MatchResult::Kind::kNoCommonPartition);
  CHECK(discovery::match(w, r).policy == QosPolicyId::kInvalid);
  w.partitions = {};
  REQUIRE(match_failure(w, r) == "DATA_REPRESENTATION: requested XCDR1, offered XCDR2");
  w.reliability = ReliabilityKind::kBestEffort;
  REQUIRE(match_failure(w, r) == "RELIABILITY: requested RELIABLE, offered BEST_EFFORT");
}

// DDS 1.4 2.2.3 (the RxO column), policy by policy: each case changes one policy of a default
// writer and a default reader and names the result.
TEST_CASE("Requested/offered compatibility: every policy's rule, with its name and values") {
  using namespace std::chrono_literals;
  struct Case {
    const char* what;
    void (*offer)(EndpointData&);
    void (*request)(EndpointData&);
    const char* failure;  // "" = compatible
  };
  const Case cases[] = {
      {"defaults", [](EndpointData&) {}, [](EndpointData&) {}, ""},
      {"deadline offered 2 s, requested 1 s", [](EndpointData& w) { w.policies.deadline = 2s; },
       [](EndpointData& r) { r.policies.deadline = 1s; }, "DEADLINE: requested 1 s, offered 2 s"},
      {"deadline offered 1 s, requested 2 s", [](EndpointData& w) { w.policies.deadline = 1s; },
       [](EndpointData& r) { r.policies.deadline = 2s; }, ""},
      {"deadline offered infinite, requested 2 s", [](EndpointData&) {},
       [](EndpointData& r) { r.policies.deadline = 2s; },
       "DEADLINE: requested 2 s, offered infinite"},
      {"deadline offered 250 ms, requested infinite",
       [](EndpointData& w) { w.policies.deadline = 250ms; }, [](EndpointData&) {}, ""},
      {"latency budget offered 10 ms, requested 0",
       [](EndpointData& w) { w.policies.latency_budget = 10ms; }, [](EndpointData&) {},
       "LATENCY_BUDGET: requested 0 s, offered 10 ms"},
      {"latency budget offered 10 ms, requested 20 ms",
       [](EndpointData& w) { w.policies.latency_budget = 10ms; },
       [](EndpointData& r) { r.policies.latency_budget = 20ms; }, ""},
      {"liveliness automatic offered, manual by topic requested", [](EndpointData&) {},
       [](EndpointData& r) { r.policies.liveliness.kind = LivelinessKind::kManualByTopic; },
       "LIVELINESS: requested MANUAL_BY_TOPIC infinite, offered AUTOMATIC infinite"},
      {"liveliness manual by topic offered, manual by participant requested",
       [](EndpointData& w) { w.policies.liveliness.kind = LivelinessKind::kManualByTopic; },
       [](EndpointData& r) { r.policies.liveliness.kind = LivelinessKind::kManualByParticipant; },
       ""},
      {"liveliness lease offered 2 s, requested 1 s",
       [](EndpointData& w) { w.policies.liveliness.lease_duration = 2s; },
       [](EndpointData& r) { r.policies.liveliness.lease_duration = 1s; },
       "LIVELINESS: requested AUTOMATIC 1 s, offered AUTOMATIC 2 s"},
      {"destination order by reception offered, by source requested", [](EndpointData&) {},
       [](EndpointData& r) {
         r.policies.destination_order = DestinationOrderKind::kBySourceTimestamp;
       },
       "DESTINATION_ORDER: requested BY_SOURCE_TIMESTAMP, offered BY_RECEPTION_TIMESTAMP"},
      {"destination order by source offered, by reception requested",
       [](EndpointData& w) {
         w.policies.destination_order = DestinationOrderKind::kBySourceTimestamp;
       },
       [](EndpointData&) {}, ""},
      {"ownership exclusive offered, shared requested",
       [](EndpointData& w) { w.policies.ownership = OwnershipKind::kExclusive; },
       [](EndpointData&) {}, "OWNERSHIP: requested SHARED, offered EXCLUSIVE"},
      {"ownership shared offered, exclusive requested", [](EndpointData&) {},
       [](EndpointData& r) { r.policies.ownership = OwnershipKind::kExclusive; },
       "OWNERSHIP: requested EXCLUSIVE, offered SHARED"},
      {"ownership exclusive both, different strength",
       [](EndpointData& w) {
         w.policies.ownership = OwnershipKind::kExclusive;
         w.policies.ownership_strength = 9;
       },
       [](EndpointData& r) { r.policies.ownership = OwnershipKind::kExclusive; }, ""},
      {"presentation topic offered, group requested",
       [](EndpointData& w) { w.policies.presentation.access_scope = PresentationScope::kTopic; },
       [](EndpointData& r) { r.policies.presentation.access_scope = PresentationScope::kGroup; },
       "PRESENTATION: requested GROUP, offered TOPIC"},
      {"presentation coherent requested, not offered", [](EndpointData&) {},
       [](EndpointData& r) { r.policies.presentation.coherent_access = true; },
       "PRESENTATION: requested INSTANCE coherent, offered INSTANCE"},
      {"presentation group ordered offered, topic requested",
       [](EndpointData& w) {
         w.policies.presentation = {PresentationScope::kGroup, false, true};
       },
       [](EndpointData& r) { r.policies.presentation.access_scope = PresentationScope::kTopic; },
       ""},
      {"durability persistent offered, transient requested",
       [](EndpointData& w) { w.durability = DurabilityKind::kPersistent; },
       [](EndpointData& r) { r.durability = DurabilityKind::kTransient; }, ""},
      {"durability transient local offered, transient requested",
       [](EndpointData& w) { w.durability = DurabilityKind::kTransientLocal; },
       [](EndpointData& r) { r.durability = DurabilityKind::kTransient; },
       "DURABILITY: requested TRANSIENT, offered TRANSIENT_LOCAL"},
      {"lifespan, time-based filter, strength, data and limits do not take part",
       [](EndpointData& w) {
         w.policies.lifespan = 1ms;
         w.policies.ownership_strength = 3;
         w.policies.user_data = {1};
         w.policies.resource_limits.max_samples = 1;
       },
       [](EndpointData& r) {
         r.policies.time_based_filter = 1s;
         r.policies.topic_data = {2};
       },
       ""},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    EndpointData w = writer(), r = reader();
    c.offer(w);
    c.request(r);
    CHECK(match_failure(w, r) == c.failure);
  }
}

TEST_CASE("same_host: this host's shared-memory id, or an address of one of its interfaces") {
  const std::array<uint8_t, 16> here{1, 2, 3}, there{9, 9, 9};
  const uint32_t a = 0xC6120001, b = 0xC6120002, lo = 0x7F000001;  // 198.18.0.1/.2, 127.0.0.1
  const std::vector<uint32_t> ours{lo, a};
  auto udp = [](uint32_t ip) { return Locator::udp_v4(ip, 7411); };
  EndpointData w;
  CHECK(discovery::same_host(w, {udp(a)}, here, ours));
  CHECK_FALSE(discovery::same_host(w, {udp(b)}, here, ours));
  CHECK(discovery::same_host(w, {udp(b), udp(a)}, here, ours));  // any of them
  // Loopback counts only alone: a participant that also names another host's address is there.
  CHECK(discovery::same_host(w, {udp(lo)}, here, ours));
  CHECK_FALSE(discovery::same_host(w, {udp(lo), udp(b)}, here, ours));
  CHECK_FALSE(discovery::same_host(w, {}, here, ours));  // nothing announced: not known here
  Locator shm_kind = udp(a);
  shm_kind.kind = 16;  // Fast DDS's shared-memory locator: no address to compare
  CHECK_FALSE(discovery::same_host(w, {shm_kind}, here, ours));
  // Our own shared-memory locator names the host, whatever the addresses say.
  w.shm = wire::ShmLocator{here, "pubsub.1.w"};
  CHECK(discovery::same_host(w, {udp(b)}, here, ours));
  w.shm->host = there;
  CHECK_FALSE(discovery::same_host(w, {udp(b)}, here, ours));
  CHECK(discovery::same_host(w, {udp(a)}, here, ours));
}
