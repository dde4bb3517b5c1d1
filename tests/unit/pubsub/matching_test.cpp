// Matching: the glob patterns of raw readers (glob_match, glob_error) and the writer/reader
// matching rules (match_failure), one rule at a time.
#include <catch2/catch.hpp>
#include <string>

#include "common/glob.hpp"
#include "discovery/matching.hpp"
#include "wire/constants.hpp"

using namespace pubsub;
using common::glob_error;
using common::glob_match;
using pubsub::discovery::match_failure;
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

TEST_CASE("glob_error explains malformed patterns") {
  REQUIRE(glob_error("") == "empty pattern");
  REQUIRE(glob_error("[abc") == "unterminated '[' at position 1");
  REQUIRE(glob_error("ab[") == "unterminated '[' at position 3");
  REQUIRE(glob_error("a[b]c[") == "unterminated '[' at position 6");
  REQUIRE(glob_error("[]") == "unterminated '[' at position 1");  // ']' first is a member
  REQUIRE(glob_error("[!]") == "unterminated '[' at position 1");
  REQUIRE(glob_error("*") == "");
  REQUIRE(glob_error("?") == "");
  REQUIRE(glob_error("abc") == "");
  REQUIRE(glob_error("[a-z]*") == "");
  REQUIRE(glob_error("[]]") == "");
  REQUIRE(glob_error("[!a][^b]x") == "");
  REQUIRE(glob_error("a]b") == "");  // a ']' outside a class is an ordinary character
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
  REQUIRE(match_failure(w, r) == "reliable reader, best-effort writer");
  r.reliability = ReliabilityKind::kBestEffort;
  REQUIRE(match_failure(w, r) == "");
  w.reliability = ReliabilityKind::kReliable;
  REQUIRE(match_failure(w, r) == "");  // a best-effort reader takes a reliable writer
}

TEST_CASE("match_failure: durability is requested by the reader, offered by the writer") {
  EndpointData w = writer(), r = reader();
  r.durability = DurabilityKind::kTransientLocal;
  REQUIRE(match_failure(w, r) == "transient-local reader, volatile writer");
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
    REQUIRE(match_failure(w, r) == (c.match ? "" : "data representation not accepted"));
  }
}

TEST_CASE("match_failure: rules are checked in order, partitions before representation") {
  EndpointData w = writer(), r = reader();
  w.partitions = {"A"};
  w.data_representation = {wire::kXcdr2};
  REQUIRE(match_failure(w, r) == "no common partition");
  w.reliability = ReliabilityKind::kBestEffort;
  REQUIRE(match_failure(w, r) == "reliable reader, best-effort writer");
}
