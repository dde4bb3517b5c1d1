// What the recorder says about a domain it records nothing from (service/src/recorder/
// discovery_hints.hpp): topics the filters leave out, named once when first seen and all at the
// end; no participant at all, said only while none has been seen.
#include "discovery_hints.hpp"

#include <catch2/catch.hpp>

using service::DiscoveryHints;

namespace {

pubsub::DiscoveredTopic topic(const char* name, const char* type, size_t writers,
                              size_t readers = 0) {
  return {name, type, writers, readers};
}

// The hints of a recorder with these topics.include, topics.exclude and topics.regex.
DiscoveryHints hints(std::vector<std::string> include, std::vector<std::string> exclude,
                     const std::string& regex, int domain, std::string where) {
  pubsub::RawReaderOptions selection;
  selection.include = std::move(include);
  selection.exclude = std::move(exclude);
  selection.filter = service::topic_regex_filter(regex);
  return DiscoveryHints(std::move(selection), regex, domain, std::move(where));
}

}  // namespace

TEST_CASE("Discovery hints: topics left out by the filters, named once, all at the end") {
  auto h = hints({"DDSPerfData*"}, {}, "", 0, "interface veth1 (198.18.0.2)");
  CHECK(h.wanted("DDSPerfDataKS"));
  CHECK_FALSE(h.wanted("DDSPerfRDataKS"));
  CHECK(h.wanted("pubsub_recorder/control/request"));  // ours: never "left out"
  CHECK(h.new_left_out().empty());
  h.observe({topic("DDSPerfRDataKS", "KeyedSeq", 1), topic("DDSPerfDataKS", "KeyedSeq", 2),
             topic("OnlyReaders", "T", 0, 3)},
            1);
  CHECK(h.new_left_out() ==
        "1 topic discovered and not recorded, left out by topics.include [\"DDSPerfData*\"]: "
        "DDSPerfRDataKS (KeyedSeq, 1 writer)");
  CHECK(h.new_left_out().empty());  // said once
  // A second writer on it, then another topic; the first writer gone by the end.
  h.observe({topic("DDSPerfRDataKS", "KeyedSeq", 2), topic("Other", "T", 1)}, 1);
  CHECK(h.new_left_out() ==
        "1 topic discovered and not recorded, left out by topics.include [\"DDSPerfData*\"]: "
        "Other (T, 1 writer)");
  h.observe({}, 0);
  CHECK(h.at_end(12.0) ==
        std::vector<std::string>{
            "2 topics seen and not recorded, left out by topics.include [\"DDSPerfData*\"]: "
            "DDSPerfRDataKS (KeyedSeq, 2 writers), Other (T, 1 writer)"});
}

TEST_CASE("Discovery hints: exclude patterns, and more than ten topics counted") {
  auto h = hints({"*"}, {"rt/rosout", "debug/*"}, "", 3, "interface lo (127.0.0.1)");
  std::vector<pubsub::DiscoveredTopic> ts;
  for (int i = 0; i < 12; ++i) {
    ts.push_back({"debug/t" + std::to_string(10 + i), "D", 1, 0});
  }
  ts.push_back(topic("rt/chatter", "std_msgs::msg::dds_::String_", 1));
  h.observe(ts, 2);
  const std::string line = h.new_left_out();
  CHECK(line.rfind("12 topics discovered and not recorded, left out by topics.include [\"*\"] and "
                   "topics.exclude [\"rt/rosout\", \"debug/*\"]: debug/t10 (D, 1 writer), ",
                   0) == 0);
  const std::string tail = ", debug/t19 (D, 1 writer) and 2 more";  // 10 named, sorted
  REQUIRE(line.size() > tail.size());
  CHECK(line.substr(line.size() - tail.size()) == tail);
}

TEST_CASE("Discovery hints: no participant, said until one is seen") {
  auto h = hints({"*"}, {}, "", 1, "interface veth1 (198.18.0.2)");
  const std::string none =
      "no participant seen on domain 1 on interface veth1 (198.18.0.2) in 3 s: are the "
      "publishers on this domain, reachable through this interface, and is multicast allowed? "
      "(README: Troubleshooting)";
  CHECK(h.no_participant(3.0) == none);
  h.observe({}, 0);
  CHECK(h.no_participant(3.2) == none);
  CHECK(h.at_end(10.4).size() == 1);
  CHECK(h.at_end(10.4)[0] ==
        "no participant seen on domain 1 on interface veth1 (198.18.0.2) in 10 s: are the "
        "publishers on this domain, reachable through this interface, and is multicast allowed? "
        "(README: Troubleshooting)");
  h.observe({}, 1);
  CHECK(h.no_participant(4.0).empty());
  h.observe({}, 0);  // gone again: it was seen
  CHECK(h.at_end(10.0).empty());
}

TEST_CASE("Discovery hints: topics.regex leaves out what it does not match as a whole") {
  auto h = hints({"*"}, {}, "rt/(tf|scan)", 0, "interface lo (127.0.0.1)");
  CHECK(h.wanted("rt/tf"));
  CHECK_FALSE(h.wanted("rt/tf_static"));  // the whole name must match
  h.observe({topic("rt/tf_static", "tf2_msgs::msg::dds_::TFMessage_", 1)}, 1);
  CHECK(h.new_left_out() ==
        "1 topic discovered and not recorded, left out by topics.include [\"*\"] and "
        "topics.regex \"rt/(tf|scan)\": rt/tf_static (tf2_msgs::msg::dds_::TFMessage_, 1 writer)");
}
