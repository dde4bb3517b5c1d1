// QoS behaviour over the FakeNetwork (network path: no intra-process, no shared memory):
// - a durable writer gives a reader that joins late the last `depth` samples of each instance
//   (DurableHistory), with their sequence numbers and source timestamps, dispose included;
// - a raw reader reads writers of every QoS: EXCLUSIVE ownership, TRANSIENT_LOCAL history,
//   deadlines, liveliness, destination order, latency budget - and knows each writer's offer;
// - an incompatible pair never matches, and is counted per policy;
// - DurableHistory's bounds, unit by unit.
#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <map>
#include <mutex>
#include <set>

#include "pubsub/network.hpp"
#include "pubsub/participant.hpp"
#include "rtps/durable_history.hpp"
#include "test_util.hpp"

using namespace pubsub;
using namespace std::chrono_literals;

namespace {

struct Pair {
  std::shared_ptr<FakeNetwork> net = FakeNetwork::create();
  std::unique_ptr<Participant> pub, sub;
  Pair() {
    auto p = Participant::create(test::fake_options(net));
    auto s = Participant::create(test::fake_options(net));
    REQUIRE(p);
    REQUIRE(s);
    pub = std::move(p).value();
    sub = std::move(s).value();
  }
};

KeyHash key(uint8_t k) {
  KeyHash h;
  h.value[3] = k;
  return h;
}

struct Got {
  std::mutex mu;
  std::vector<std::pair<uint8_t, SequenceNumber>> samples;  // (key byte, sn)
  std::map<SequenceNumber, int64_t> source_ns;
  std::vector<uint32_t> status;
};

}  // namespace

TEST_CASE("A late durable reader gets the last depth samples of every instance, dispose included") {
  Pair pair;
  WriterQos wq;
  wq.durability = DurabilityKind::kTransientLocal;
  wq.history = {HistoryKind::kKeepLast, 2};
  auto writer = pair.pub->create_writer({"Latched", "test::K", true}, wq);
  REQUIRE(writer);
  // Three instances, five samples each, round robin; then instance 2 is disposed.
  for (int i = 0; i < 15; ++i) {
    const KeyHash k = key(static_cast<uint8_t>(i % 3));
    WriteOptions o;
    o.key_hash = &k;
    o.timestamp = Time{1'000'000'000 + i};
    REQUIRE(writer.value()->write(test::as_bytes(test::pattern(static_cast<uint32_t>(i), 40)), o));
  }
  const KeyHash k2 = key(2);
  WriteOptions d;
  d.key_hash = &k2;
  d.status_info = 1;
  d.timestamp = Time{2'000'000'000};
  REQUIRE(writer.value()->write_serialized(
      test::as_bytes(std::vector<uint8_t>{0, 1, 0, 0, 0, 0, 0, 2}), d));

  Got got;
  ReaderQos rq;
  rq.durability = DurabilityKind::kTransientLocal;
  auto reader =
      pair.sub->create_reader({"Latched", "test::K", true}, rq, [&](const SampleInfo& i, Bytes) {
        std::lock_guard lk(got.mu);
        got.samples.emplace_back(i.key_hash->value[3], i.sequence_number);
        got.source_ns[i.sequence_number] = i.source_timestamp.ns;
        got.status.push_back(i.status_info);
      });
  REQUIRE(reader);
  REQUIRE(test::eventually([&] {
    std::lock_guard lk(got.mu);
    return got.samples.size() >= 6;
  }));
  std::this_thread::sleep_for(200ms);
  std::lock_guard lk(got.mu);
  // Instance 0: 10, 13; instance 1: 11, 14; instance 2: 15 and the dispose, 16.
  const std::vector<std::pair<uint8_t, SequenceNumber>> want{{0, 10}, {1, 11}, {0, 13},
                                                             {1, 14}, {2, 15}, {2, 16}};
  CHECK(got.samples == want);
  CHECK(got.source_ns[10] == 1'000'000'009);
  CHECK(got.source_ns[16] == 2'000'000'000);
  CHECK(got.status.back() == 1u);
}

TEST_CASE("A late volatile reader gets none of a durable writer's history") {
  Pair pair;
  WriterQos wq;
  wq.durability = DurabilityKind::kTransientLocal;
  wq.history = {HistoryKind::kKeepLast, 3};
  auto writer = pair.pub->create_writer({"Latched", "test::K"}, wq);
  REQUIRE(writer);
  for (int i = 0; i < 5; ++i) REQUIRE(writer.value()->write(test::as_bytes(test::pattern(i, 8))));
  std::atomic<int> got{0};
  auto reader = pair.sub->create_reader({"Latched", "test::K"}, ReaderQos{},
                                        [&](const SampleInfo&, Bytes) { got++; });
  REQUIRE(reader);
  REQUIRE(writer.value()->wait_for_readers(1, 10s));
  REQUIRE(writer.value()->write(test::as_bytes(test::pattern(9, 8))));
  REQUIRE(test::eventually([&] { return got == 1; }));
  std::this_thread::sleep_for(200ms);
  CHECK(got == 1);
}

TEST_CASE("A raw reader reads writers of every QoS and knows each writer's own offer") {
  Pair pair;
  // The durable writer writes 6 samples before the raw reader exists: the last 4 (its depth)
  // must reach it from its history.
  WriterQos dq;
  dq.durability = DurabilityKind::kTransientLocal;
  dq.history = {HistoryKind::kKeepLast, 4};
  auto durable = pair.pub->create_writer({"durable", "test::T"}, dq);
  REQUIRE(durable);
  for (int i = 0; i < 6; ++i) REQUIRE(durable.value()->write(test::as_bytes(test::pattern(i, 8))));
  std::mutex mu;
  std::map<std::string, int> samples;
  RawReaderListener l;
  l.on_sample = [&](const RawSample& s) {
    std::lock_guard lk(mu);
    samples[s.topic->name]++;
    return true;
  };
  auto raw = pair.sub->create_raw_reader({}, l);
  REQUIRE(raw);
  struct W {
    const char* topic;
    void (*set)(WriterQos&);
  };
  const W writers[] = {
      {"exclusive",
       [](WriterQos& q) {
         q.policies.ownership = OwnershipKind::kExclusive;
         q.policies.ownership_strength = 7;
       }},
      {"deadline", [](WriterQos& q) { q.policies.deadline = 2s; }},
      {"liveliness",
       [](WriterQos& q) {
         q.policies.liveliness = {LivelinessKind::kManualByTopic, 3s};
       }},
      {"by_source",
       [](WriterQos& q) {
         q.policies.destination_order = DestinationOrderKind::kBySourceTimestamp;
       }},
      {"budget", [](WriterQos& q) { q.policies.latency_budget = 10ms; }},
  };
  std::vector<std::unique_ptr<Writer>> ws;
  for (const W& w : writers) {
    WriterQos q;
    w.set(q);
    auto created = pair.pub->create_writer({w.topic, "test::T"}, q);
    REQUIRE(created);
    ws.push_back(std::move(created).value());
  }
  for (auto& w : ws) {
    REQUIRE(w->wait_for_readers(1, 10s));
    for (int k = 0; k < 3; ++k) REQUIRE(w->write(test::as_bytes(test::pattern(k, 8))));
  }
  const std::map<std::string, int> want{{"exclusive", 3}, {"deadline", 3}, {"liveliness", 3},
                                        {"by_source", 3}, {"budget", 3},   {"durable", 4}};
  const bool all = test::eventually([&] {
    std::lock_guard lk(mu);
    return samples == want;
  });
  {
    std::lock_guard lk(mu);
    for (const auto& [topic, n] : samples) INFO(topic << ": " << n);
    CHECK(samples == want);
  }
  REQUIRE(all);
  CHECK(raw.value()->matched_writers() == 6);
  auto info = raw.value()->writer_info(ws[0]->guid());
  REQUIRE(info);
  CHECK(info->topic.name == "exclusive");
  CHECK(info->topic.policies.ownership == OwnershipKind::kExclusive);
  CHECK(info->topic.policies.ownership_strength == 7);
  auto d = raw.value()->writer_info(durable.value()->guid());
  REQUIRE(d);
  CHECK(d->topic.durability == DurabilityKind::kTransientLocal);
  CHECK(d->topic.history == HistoryQos{HistoryKind::kKeepLast, 4});
  CHECK(raw.value()->writer_info(Guid{}) == nullptr);
  // Where its participant is: the announced locator; on this host only if an interface has it.
  const Locator at = pair.pub->unicast_locator();
  CHECK(std::count(info->unicast.begin(), info->unicast.end(), at) == 1);
  const auto ifs = network_interfaces();
  REQUIRE(ifs);
  bool here = false;
  for (const auto& i : *ifs) here = here || i.address == at.ipv4();
  CHECK(info->same_host == here);
  CHECK(pair.sub->stats().incompatible_qos == 0);
}

TEST_CASE("An incompatible pair never matches, and is counted once per pair by policy") {
  Pair pair;
  WriterQos wq;
  wq.policies.deadline = 2s;
  auto writer = pair.pub->create_writer({"Deadline", "test::T"}, wq);
  REQUIRE(writer);
  std::atomic<int> got{0};
  ReaderQos strict;
  strict.policies.deadline = 1s;  // asks for more than is offered
  auto r1 = pair.sub->create_reader({"Deadline", "test::T"}, strict,
                                    [&](const SampleInfo&, Bytes) { got++; });
  ReaderQos lenient;
  lenient.policies.deadline = 5s;
  auto r2 = pair.sub->create_reader({"Deadline", "test::T"}, lenient,
                                    [&](const SampleInfo&, Bytes) { got += 100; });
  REQUIRE(r1);
  REQUIRE(r2);
  REQUIRE(writer.value()->wait_for_readers(1, 10s));
  REQUIRE(test::eventually([&] {
    return pair.sub->stats().incompatible_qos == 1 && pair.pub->stats().incompatible_qos == 1;
  }));
  REQUIRE(writer.value()->write(test::as_bytes(test::pattern(1, 8))));
  REQUIRE(test::eventually([&] { return got == 100; }));
  std::this_thread::sleep_for(300ms);  // announcements repeat: still one per pair
  CHECK(got == 100);
  CHECK(writer.value()->matched_readers() == 1);
  const auto s = pair.sub->stats();
  CHECK(s.incompatible_qos == 1);
  CHECK(s.incompatible_by_policy[static_cast<size_t>(QosPolicyId::kDeadline)] == 1);
  CHECK(pair.pub->stats().incompatible_by_policy[static_cast<size_t>(QosPolicyId::kDeadline)] == 1);
}

TEST_CASE("DurableHistory keeps depth per instance within max_samples and max_bytes") {
  using rtps::CacheChange;
  using rtps::DurableHistory;
  auto change = [](SequenceNumber sn, uint8_t k, uint32_t size) {
    CacheChange c;
    c.sn = sn;
    c.size = size;
    c.has_key_hash = true;
    c.key_hash = key(k);
    return c;
  };
  const std::vector<uint8_t> payload(100, 7);
  SECTION("KEEP_LAST 2 per instance") {
    DurableHistory h({HistoryKind::kKeepLast, 2}, 100, 1 << 20);
    for (SequenceNumber sn = 1; sn <= 9; ++sn) {
      h.add(change(sn, static_cast<uint8_t>(sn % 3), 10), payload.data());
    }
    CHECK(h.size() == 6);
    CHECK(h.instances() == 3);
    CHECK(h.first_sn() == 4);
    for (SequenceNumber sn : {1, 2, 3}) CHECK(h.find(sn) == nullptr);
    for (SequenceNumber sn : {4, 5, 6, 7, 8, 9}) {
      const CacheChange* c = h.find(sn);
      REQUIRE(c);
      CHECK(h.holds(*c));
      CHECK(h.data(*c)[0] == 7);
    }
    CacheChange other = change(9, 0, 10);
    CHECK_FALSE(h.holds(other));  // the same sequence number, not this history's
  }
  SECTION("max_samples over all instances: the oldest leaves") {
    DurableHistory h({HistoryKind::kKeepAll, 1}, 4, 1 << 20);
    for (SequenceNumber sn = 1; sn <= 6; ++sn) h.add(change(sn, 1, 10), payload.data());
    CHECK(h.size() == 4);
    CHECK(h.first_sn() == 3);
  }
  SECTION("max_bytes: the oldest leave until the new sample fits; a too-big one is not kept") {
    DurableHistory h({HistoryKind::kKeepAll, 1}, 100, 250);
    for (SequenceNumber sn = 1; sn <= 3; ++sn) h.add(change(sn, 1, 100), payload.data());
    CHECK(h.size() == 2);
    CHECK(h.bytes() == 200);
    CHECK(h.first_sn() == 2);
    std::vector<uint8_t> big(300, 1);
    h.add(change(4, 2, 300), big.data());
    CHECK(h.find(4) == nullptr);
    CHECK(h.size() == 2);
  }
}

TEST_CASE("A raw reader refuses a writer whose data representation it cannot take, counted") {
  Pair pair;
  std::atomic<int> got{0};
  RawReaderListener l;
  l.on_sample = [&](const RawSample&) {
    got++;
    return true;
  };
  std::mutex mu;
  std::vector<std::string> refused;  // "topic writer policy: reason", in order
  l.on_writer_incompatible = [&](const TopicInfo& t, const Guid& g, QosPolicyId p,
                                 const std::string& reason) {
    std::lock_guard lk(mu);
    refused.push_back(t.name + " " + g.to_string() + " " + to_string(p) + " / " + reason);
  };
  auto raw = pair.sub->create_raw_reader({}, l);
  REQUIRE(raw);
  TopicDescription xml{"Xml", "test::T"};
  xml.data_representation = {1};  // XML: neither XCDR1 nor XCDR2
  auto w = pair.pub->create_writer(xml);
  REQUIRE(w);
  auto ok = pair.pub->create_writer({"Cdr", "test::T"});
  REQUIRE(ok);
  REQUIRE(ok.value()->wait_for_readers(1, 10s));
  REQUIRE(ok.value()->write(test::as_bytes(test::pattern(1, 8))));
  REQUIRE(test::eventually([&] { return got == 1; }));
  REQUIRE(test::eventually([&] {
    return pair.sub->stats()
               .incompatible_by_policy[static_cast<size_t>(QosPolicyId::kDataRepresentation)] == 1;
  }));
  CHECK(raw.value()->matched_writers() == 1);
  CHECK(w.value()->matched_readers() == 0);
  REQUIRE(test::eventually([&] {
    std::lock_guard lk(mu);
    return !refused.empty();
  }));
  std::lock_guard lk(mu);
  REQUIRE(refused.size() == 1);  // once, though discovery repeats the writer
  CHECK(refused[0] == "Xml " + w.value()->guid().to_string() +
                          " DATA_REPRESENTATION / DATA_REPRESENTATION: requested XCDR1|XCDR2, "
                          "offered XML");
  const auto info = raw.value()->writer_info(w.value()->guid());
  REQUIRE(info);
  CHECK(info->topic.name == "Xml");
}

TEST_CASE("Writer::matched_reader_guids: the readers matched now, deleted or lapsed ones leave") {
  Pair pair;  // lease 2 s (test::fake_options)
  auto w = pair.pub->create_writer({"Guids", "test::T"});
  REQUIRE(w);
  auto cb = [](const SampleInfo&, Bytes) {};
  auto r1 = pair.sub->create_reader({"Guids", "test::T"}, ReaderQos{}, cb);
  auto r2 = pair.sub->create_reader({"Guids", "test::T"}, ReaderQos{}, cb);
  REQUIRE(r1);
  REQUIRE(r2);
  REQUIRE(w.value()->wait_for_readers(2, 10s));
  auto sorted = [](std::vector<Guid> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  const Guid g1 = r1.value()->guid(), g2 = r2.value()->guid();
  CHECK(sorted(w.value()->matched_reader_guids()) == sorted({g1, g2}));
  r1.value().reset();  // deleted: announced, so it leaves at once
  REQUIRE(test::eventually([&] { return w.value()->matched_reader_guids() == std::vector{g2}; }));
  // The network goes away for longer than the lease: the reader lapses, and comes back with it.
  pair.net->set_faults({.drop = 1.0});
  REQUIRE(test::eventually([&] { return w.value()->matched_reader_guids().empty(); }, 6s));
  pair.net->set_faults({});
  REQUIRE(
      test::eventually([&] { return w.value()->matched_reader_guids() == std::vector{g2}; }, 10s));
}
