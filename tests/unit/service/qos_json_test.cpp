// A writer's recorded QoS as JSON (service/recording_schema.hpp, qos_json.cpp): every policy
// survives encode/decode exactly; older recordings' members still decode; overrides apply only
// the members given, and refuse unknown members, kinds and values with their JSON path.
#include <catch2/catch.hpp>
#include <cstring>
#include <string>

#include "service/recording_schema.hpp"

using namespace service;
using namespace std::chrono_literals;

namespace {

RecordedQos every_policy() {
  RecordedQos q;
  q.reliability = pubsub::ReliabilityKind::kBestEffort;
  q.durability = pubsub::DurabilityKind::kTransientLocal;
  q.history = {pubsub::HistoryKind::kKeepLast, 5};
  q.max_blocking_time = 250ms;
  q.partitions = {"a", "b*"};
  q.data_representation = {2};
  auto& p = q.policies;
  p.deadline = 2s;
  p.latency_budget = 10ms;
  p.liveliness = {pubsub::LivelinessKind::kManualByTopic, 1500ms};
  p.lifespan = 30s;
  p.destination_order = pubsub::DestinationOrderKind::kBySourceTimestamp;
  p.presentation = {pubsub::PresentationScope::kGroup, true, false};
  p.ownership = pubsub::OwnershipKind::kExclusive;
  p.ownership_strength = -3;
  p.time_based_filter = 5ms;
  p.transport_priority = 9;
  p.resource_limits = {100, 10, 10};
  p.durability_service = {1s, pubsub::HistoryKind::kKeepAll, 1, {5, 6, 7}};
  p.user_data = {'h', 'i'};
  p.topic_data = {0, 255};
  p.group_data = {7};
  p.type_consistency = pubsub::TypeConsistencyQos{};
  p.content_filter = pubsub::ContentFilterQos{"c", "t", "DDSSQL", "x > %0", {"1"}};
  p.other = {{0x8007, false, {1, 2, 3, 4}}};
  q.participant = RecordedParticipant{0x0110, "app", 10s};
  q.not_matched = "DATA_REPRESENTATION: requested XCDR1|XCDR2, offered XML";
  return q;
}

RecordedQos decode(const std::string& text) {
  INFO(text);
  auto q =
      decode_qos(storage::ByteSpan(reinterpret_cast<const std::byte*>(text.data()), text.size()));
  if (!q) FAIL(q.error().message);
  return std::move(q).value();
}

}  // namespace

TEST_CASE("Recorded QoS: every policy survives encode and decode") {
  const RecordedQos q = every_policy();
  const std::string text = qos_json_text(q);
  CHECK(decode(text) == q);
  CHECK(text.find("\"deadline_ns\":2000000000") != std::string::npos);
  CHECK(
      text.find("\"liveliness\":{\"kind\":\"manual_by_topic\",\"lease_duration_ns\":1500000000}") !=
      std::string::npos);
  CHECK(text.find("\"user_data\":\"6869\"") != std::string::npos);
  CHECK(text.find(R"("not_matched":"DATA_REPRESENTATION: requested XCDR1|XCDR2, offered XML")") !=
        std::string::npos);
  // A recorded writer has no such member.
  CHECK(qos_json_text(RecordedQos{}).find("not_matched") == std::string::npos);
  // Infinite durations are -1.
  CHECK(qos_json_text(RecordedQos{}).find("\"deadline_ns\":-1") != std::string::npos);
  CHECK(qos_summary(q) ==
        "best_effort, transient_local keep_last 5, exclusive (strength -3), deadline 2 s, "
        "latency_budget 10 ms, liveliness manual_by_topic 1500 ms, lifespan 30 s, "
        "by_source_timestamp, presentation group coherent, partitions \"a\" \"b*\", XCDR2, "
        "user_data 2 B, topic_data 2 B, group_data 1 B, other parameters 0x8007");
}

TEST_CASE("Recorded QoS: a format-4 topic's QoS decodes, the missing policies at their defaults") {
  const RecordedQos q = decode(
      R"({"reliability":"reliable","durability":"transient_local","history":{"kind":"keep_last",)"
      R"("depth":3},"max_blocking_time_ns":100000000,"partitions":["p"],"data_representation":[0]})");
  CHECK(q.durability == pubsub::DurabilityKind::kTransientLocal);
  CHECK(q.history == pubsub::HistoryQos{pubsub::HistoryKind::kKeepLast, 3});
  CHECK(q.policies == pubsub::Policies{});
  CHECK_FALSE(q.participant);
  // A newer recorder's member is ignored when reading a recording.
  CHECK(decode(R"({"reliability":"best_effort","future_policy":{"x":1}})").reliability ==
        pubsub::ReliabilityKind::kBestEffort);
}

TEST_CASE("QoS overrides: only the members given, text durations, exact errors") {
  auto applied = apply_qos_overrides(R"({"durability":"volatile","deadline":"infinite",)"
                                     R"("liveliness":{"lease_duration":"250 ms"}})",
                                     every_policy());
  REQUIRE(applied);
  RecordedQos q = *applied;
  CHECK(q.durability == pubsub::DurabilityKind::kVolatile);
  CHECK(q.policies.deadline == pubsub::kInfinite);
  CHECK(q.policies.liveliness.kind == pubsub::LivelinessKind::kManualByTopic);  // kept
  CHECK(q.policies.liveliness.lease_duration == 250ms);
  CHECK(q.policies.ownership_strength == -3);  // untouched
  const RecordedQos before = q;
  struct Bad {
    const char* json;
    const char* error;
  };
  const Bad bad[] = {
      {R"({"ownership":"exclusve"})",
       R"(/ownership: "exclusve" is not one of "shared", "exclusive")"},
      {R"({"history":{"depth":"5"}})", "/history/depth: must be an integer"},
      {R"({"liveliness":{"lease":"1 s"}})", "/liveliness/lease: unknown QoS member"},
      {R"({"deadline_ns":-5})", "/deadline_ns: must be >= 0, or -1 for infinite"},
      {R"({"user_data":"zz"})", "/user_data: not hex"},
      {R"({"partitions":"a"})", "/partitions: must be an array of strings"},
      {R"({"not_matched":""})",
       "/not_matched: not a QoS policy (it says why a writer was not recorded)"},
      {R"([1])", "/: must be an object"},
      {"not json", "/: not JSON"},
  };
  for (const Bad& b : bad) {
    INFO(b.json);
    const auto refused = apply_qos_overrides(b.json, q);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().code == common::Errc::kInvalidArgument);
    CHECK(refused.error().message == b.error);
    CHECK(q == before);  // unchanged
  }
}

TEST_CASE("A writer that announces no data representation but sends XCDR2 is recorded as XCDR2") {
  RecordedQos q;
  const std::byte cdr2[] = {std::byte{0}, std::byte{7}, std::byte{0}, std::byte{0}};
  const std::byte cdr1[] = {std::byte{0}, std::byte{1}, std::byte{0}, std::byte{0}};
  infer_representation(q, cdr1);
  CHECK(q.data_representation.empty());
  infer_representation(q, cdr2);
  CHECK(q.data_representation == std::vector<int16_t>{2});
  RecordedQos announced;
  announced.data_representation = {0};
  infer_representation(announced, cdr2);  // what it announced wins
  CHECK(announced.data_representation == std::vector<int16_t>{0});
}
