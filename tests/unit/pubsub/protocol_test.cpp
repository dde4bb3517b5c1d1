// End-to-end protocol tests: participants over the in-process FakeNetwork, with and without
// injected faults (drop, duplicate, reorder). Discovery, matching, reliability, fragmentation
// and batching all run as in production; only the sockets are replaced.
#include <atomic>
#include <catch2/catch.hpp>
#include <mutex>

#include "pubsub/participant.hpp"
#include "test_util.hpp"

using namespace pubsub;
using namespace std::chrono_literals;

namespace {

struct Received {
  std::mutex mu;
  std::vector<std::pair<uint32_t, std::vector<uint8_t>>> samples;  // (seq, body)
  std::vector<KeyHash> keys;
  size_t size() {
    std::lock_guard lk(mu);
    return samples.size();
  }
};

struct Case {
  size_t size;
  size_t count;
  bool keyed;
  bool batching;
};

// Publishes `count` samples and checks that each arrives exactly once, in order, intact.
void run_reliable(const Case& c, FaultOptions faults) {
  auto net = FakeNetwork::create(faults);
  auto pub = Participant::create(test::fake_options(net));
  auto sub = Participant::create(test::fake_options(net));
  REQUIRE(pub);
  REQUIRE(sub);
  TopicDescription topic{"Test", "test::Blob", c.keyed};
  Received got;
  ReaderQos rq;
  auto reader = sub.value()->create_reader(topic, rq, [&](const SampleInfo& info, Bytes body) {
    std::lock_guard lk(got.mu);
    uint32_t seq = 0;
    std::memcpy(&seq, body.data(), 4);
    got.samples.emplace_back(
        seq, std::vector<uint8_t>(reinterpret_cast<const uint8_t*>(body.data()),
                                  reinterpret_cast<const uint8_t*>(body.data()) + body.size()));
    if (info.key_hash) got.keys.push_back(*info.key_hash);
  });
  REQUIRE(reader);
  WriterQos wq;
  wq.max_blocking_time = 5s;
  wq.batching.enabled = c.batching;
  wq.heartbeat_period = 20ms;
  auto writer = pub.value()->create_writer(topic, wq);
  REQUIRE(writer);
  REQUIRE(writer.value()->wait_for_readers(1, 10s));

  for (uint32_t i = 1; i <= c.count; ++i) {
    const auto body = test::pattern(i, c.size);
    WriteOptions wo;
    KeyHash key;
    if (c.keyed) {
      const uint8_t k[4] = {0, 0, 0, static_cast<uint8_t>(i % 16)};
      key = KeyHash::from_key_cdr_be(Bytes(reinterpret_cast<const std::byte*>(k), 4));
      wo.key_hash = &key;
    }
    auto r = writer.value()->write(test::as_bytes(body), wo);
    REQUIRE(r.ok());
  }
  writer.value()->flush();
  REQUIRE(test::eventually([&] { return got.size() >= c.count; }, 60s));
  REQUIRE(writer.value()->wait_for_acknowledgments(10s));
  std::this_thread::sleep_for(50ms);  // anything extra (a duplicate) would arrive now

  if (faults.drop > 0) {
    // The faults really happened and the protocol repaired them.
    const auto ns = net->stats();
    const auto ws = writer.value()->stats();
    const auto rs = reader.value()->stats();
    INFO("dropped " << ns.dropped << " duplicated " << ns.duplicated << " reordered "
                    << ns.reordered << " retransmitted " << ws.samples_retransmitted << "+"
                    << ws.fragments_retransmitted << " frags, reader dups " << rs.duplicates);
    REQUIRE(ns.dropped > 0);
    REQUIRE(ns.duplicated > 0);
    REQUIRE(ns.reordered > 0);
    REQUIRE(ws.samples_retransmitted + ws.fragments_retransmitted > 0);
    REQUIRE(rs.duplicates > 0);
  }
  std::lock_guard lk(got.mu);
  REQUIRE(got.samples.size() == c.count);
  for (uint32_t i = 1; i <= c.count; ++i) {
    const auto& [seq, body] = got.samples[i - 1];
    REQUIRE(seq == i);
    REQUIRE(body == test::pattern(i, c.size));
  }
  if (c.keyed) {
    REQUIRE(got.keys.size() == c.count);
    const uint8_t k[4] = {0, 0, 0, 5};
    REQUIRE(got.keys[4] ==
            KeyHash::from_key_cdr_be(Bytes(reinterpret_cast<const std::byte*>(k), 4)));
  }
}

}  // namespace

TEST_CASE("Reliable delivery over a clean network, small samples") {
  run_reliable({32, 2000, false, false}, {});
}

TEST_CASE("Reliable delivery with batching") {
  run_reliable({32, 5000, false, true}, {});
}

TEST_CASE("Reliable delivery of fragmented samples") {
  run_reliable({200000, 20, false, false}, {});
}

namespace {
FaultOptions harsh() {
  FaultOptions f;
  f.drop = 0.10;
  f.duplicate = 0.05;
  f.reorder = 0.25;
  f.max_reorder_delay = 2ms;
  f.seed = 42;
  return f;
}
}  // namespace

TEST_CASE("Reliable delivery under 10% drop, duplicates and reordering") {
  SECTION("32 B unkeyed") {
    run_reliable({32, 3000, false, false}, harsh());
  }
  SECTION("32 B keyed, batched") {
    run_reliable({32, 3000, true, true}, harsh());
  }
  SECTION("63000 B unkeyed") {
    run_reliable({63000, 300, false, false}, harsh());
  }
  SECTION("63000 B keyed") {
    run_reliable({63000, 300, true, false}, harsh());
  }
  SECTION("4 MiB unkeyed") {
    run_reliable({4u << 20, 6, false, false}, harsh());
  }
  SECTION("4 MiB keyed") {
    run_reliable({4u << 20, 6, true, false}, harsh());
  }
}
