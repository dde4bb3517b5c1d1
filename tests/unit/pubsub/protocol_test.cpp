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

// A publishing and a subscribing participant on one fake network: two hosts.
struct Hosts {
  std::unique_ptr<Participant> pub, sub;
};
Hosts two_hosts(const std::shared_ptr<FakeNetwork>& net) {
  auto pub = Participant::create(test::fake_options(net));
  auto sub = Participant::create(test::fake_options(net));
  REQUIRE(pub);
  REQUIRE(sub);
  return {std::move(pub.value()), std::move(sub.value())};
}

struct Case {
  size_t size;
  size_t count;
  bool keyed;
  bool batching;
};

// Publishes `count` samples and checks that each arrives exactly once, in order, intact.
void run_reliable(const Case& c, FaultOptions faults) {
  auto net = FakeNetwork::create(faults);
  auto [pub, sub] = two_hosts(net);
  TopicDescription topic{"Test", "test::Blob", c.keyed};
  Received got;
  ReaderQos rq;
  auto reader = sub->create_reader(topic, rq, [&](const SampleInfo& info, Bytes body) {
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
  auto writer = pub->create_writer(topic, wq);
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
    INFO("dropped " << ns.dropped << " duplicated " << ns.duplicated << " (user data "
                    << ns.duplicated_user_data << ") reordered " << ns.reordered
                    << " retransmitted " << ws.samples_retransmitted << "+"
                    << ws.fragments_retransmitted << " frags, reader dups " << rs.duplicates);
    REQUIRE(ns.dropped > 0);
    REQUIRE(ns.duplicated > 0);
    REQUIRE(ns.reordered > 0);
    REQUIRE(ws.samples_retransmitted + ws.fragments_retransmitted > 0);
    // Every duplicated datagram with user data (all go to the one reader, unicast) shows as at
    // least one duplicate there. Batching makes few data datagrams: none may be duplicated.
    if (!c.batching) REQUIRE(ns.duplicated_user_data > 0);
    REQUIRE(rs.duplicates >= ns.duplicated_user_data);
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

TEST_CASE("Best effort counts loss exactly under injected drop") {
  // Only data datagrams cross the network while the fault is on (no SPDP announcements in
  // that time, no heartbeats or acknowledgements for best effort), so every dropped datagram is
  // exactly one lost sample. Both counts - from the payload's sequence number and the
  // library's own - must equal what was written minus what arrived, and the network's drops.
  auto net = FakeNetwork::create();
  ParticipantOptions po = test::fake_options(net);
  po.announce_period = std::chrono::seconds(30);
  po.lease_duration = std::chrono::seconds(60);
  auto pub = Participant::create(po);
  auto sub = Participant::create(po);
  REQUIRE(pub);
  REQUIRE(sub);
  TopicDescription topic{"BestEffort", "test::Blob"};
  std::mutex mu;
  uint32_t received = 0, expected_next = 1, payload_lost = 0;
  ReaderQos rq;
  rq.reliability = ReliabilityKind::kBestEffort;
  auto reader = sub.value()->create_reader(topic, rq, [&](const SampleInfo&, Bytes body) {
    uint32_t seq;
    std::memcpy(&seq, body.data(), 4);
    std::lock_guard lk(mu);
    received++;
    payload_lost += seq - expected_next;
    expected_next = seq + 1;
  });
  REQUIRE(reader);
  WriterQos wq;
  wq.reliability = ReliabilityKind::kBestEffort;
  auto writer = pub.value()->create_writer(topic, wq);
  REQUIRE(writer);
  REQUIRE(writer.value()->wait_for_readers(1, 10s));
  REQUIRE(test::eventually([&] { return reader.value()->matched_writers() == 1; }));
  std::this_thread::sleep_for(300ms);  // let discovery traffic settle (SEDP acknowledged)

  constexpr uint32_t kCount = 5000;
  const auto dropped_before = net->stats().dropped;
  FaultOptions drop;
  drop.drop = 0.10;
  drop.seed = 7;
  net->set_faults(drop);
  for (uint32_t i = 1; i < kCount; ++i) {
    REQUIRE(writer.value()->write(test::as_bytes(test::pattern(i, 32))).ok());
  }
  REQUIRE(test::eventually([&] { return net->stats().delivered + net->stats().dropped > 0; }));
  std::this_thread::sleep_for(100ms);  // everything sent is delivered or dropped
  net->set_faults({});
  REQUIRE(writer.value()->write(test::as_bytes(test::pattern(kCount, 32))).ok());  // arrives
  REQUIRE(test::eventually([&] {
    std::lock_guard lk(mu);
    return expected_next == kCount + 1;
  }));
  const uint64_t dropped = net->stats().dropped - dropped_before;
  std::lock_guard lk(mu);
  INFO("received " << received << " payload-lost " << payload_lost << " dropped " << dropped);
  REQUIRE(dropped > 300);  // ~10% of 5000 really happened
  REQUIRE(payload_lost == kCount - received);
  REQUIRE(reader.value()->stats().lost == kCount - received);
  REQUIRE(dropped == kCount - received);
}

TEST_CASE("KEEP_ALL writer blocks, then times out, when a reader stops acknowledging") {
  auto net = FakeNetwork::create();
  auto [pub, sub] = two_hosts(net);
  // A raw reader that refuses every sample never acknowledges anything.
  std::atomic<uint64_t> offered{0};
  RawReaderOptions ro;
  ro.qos.resource_limits.max_samples = 64;
  ro.qos.resource_limits.max_bytes = 64 * 1024;
  RawReaderListener listener;
  listener.on_sample = [&](const RawSample&) {
    offered++;
    return false;
  };
  auto raw = sub->create_raw_reader(ro, listener);
  REQUIRE(raw);
  WriterQos wq;
  wq.resource_limits.max_samples = 200;
  wq.resource_limits.max_bytes = 1u << 20;
  wq.max_blocking_time = 200ms;
  auto writer = pub->create_writer({"Stalled", "test::Blob"}, wq);
  REQUIRE(writer);
  REQUIRE(writer.value()->wait_for_readers(1, 10s));

  int ok = 0, timeouts = 0;
  std::chrono::steady_clock::duration slowest{};
  const auto end = std::chrono::steady_clock::now() + 2s;
  while (std::chrono::steady_clock::now() < end && timeouts < 3) {
    const auto t0 = std::chrono::steady_clock::now();
    auto r = writer.value()->write(test::as_bytes(test::pattern(ok + 1, 1000)));
    const auto took = std::chrono::steady_clock::now() - t0;
    if (r.ok()) {
      ok++;
    } else {
      REQUIRE(r.error().code == ErrorCode::kTimeout);
      timeouts++;
      slowest = std::max(slowest, took);
    }
  }
  const auto ws = writer.value()->stats();
  const auto rs = raw.value()->stats();
  INFO("accepted " << ok << " timeouts " << timeouts << " history " << ws.history_samples << "/"
                   << ws.history_bytes << " reader buffered " << rs.buffered_bytes);
  REQUIRE(timeouts == 3);
  REQUIRE(ok <= 200);         // never more than the history holds
  REQUIRE(offered > 0);       // the reader did see samples and refused them
  REQUIRE(slowest >= 190ms);  // each failing write waited max_blocking_time
  REQUIRE(slowest < 1s);
  REQUIRE(ws.write_timeouts == 3);
  REQUIRE(ws.history_samples == static_cast<size_t>(ok));  // nothing acknowledged, all kept
  REQUIRE(ws.history_bytes <= (1u << 20));
  REQUIRE(rs.buffered_bytes <= 64 * 1024 + 1100);  // the reader's own bound (+ one sample)
}

TEST_CASE("Large samples into a slow reader with a small buffer: paced, no repair storm") {
  // The reader's participant takes in 200 MB/s through a 1-MiB socket buffer (a Cyclone DDS
  // reader, issue 15); each 2-MB sample is ~230 fragments. Sent as one burst, every sample
  // would overflow the buffer by about half and be repaired again and again; the writer must
  // notice and spread the fragments instead (rtps/pacer.hpp), so that overflows and repairs stay
  // a small part of what was sent. Every sample arrives intact.
  auto net = FakeNetwork::create();
  auto [pub, sub] = two_hosts(net);
  TopicDescription topic{"SlowReader", "test::Blob"};
  constexpr uint32_t kCount = 40;
  constexpr size_t kSize = 2'000'000;
  std::mutex mu;
  uint32_t received = 0, intact = 0;
  auto reader = sub->create_reader(topic, ReaderQos{}, [&](const SampleInfo&, Bytes body) {
    uint32_t seq;
    std::memcpy(&seq, body.data(), 4);
    const auto want = test::pattern(seq, kSize);
    std::lock_guard lk(mu);
    received++;
    if (body.size() == kSize && std::memcmp(body.data(), want.data(), kSize) == 0) intact++;
  });
  REQUIRE(reader);
  auto writer = pub->create_writer(topic, WriterQos{});
  REQUIRE(writer);
  REQUIRE(writer.value()->wait_for_readers(1, 10s));
  REQUIRE(test::eventually([&] { return reader.value()->matched_writers() == 1; }));
  FaultOptions slow;
  slow.receive_rate = 200e6;
  slow.receive_buffer_bytes = 1u << 20;
  net->set_faults(slow);
  for (uint32_t i = 1; i <= kCount; ++i) {
    REQUIRE(writer.value()->write(test::as_bytes(test::pattern(i, kSize))).ok());
  }
  REQUIRE(writer.value()->wait_for_acknowledgments(30s));
  const auto ns = net->stats();
  const auto ws = writer.value()->stats();
  std::lock_guard lk(mu);
  const uint64_t fragments = uint64_t{kCount} * ((kSize + 8800) / 8800);  // ~ sent once
  INFO("overflowed " << ns.overflowed << " fragments retransmitted " << ws.fragments_retransmitted
                     << " of ~" << fragments);
  CHECK(received == kCount);
  CHECK(intact == kCount);
  CHECK(ns.overflowed > 0);              // the first burst did overflow
  CHECK(ns.overflowed * 5 < fragments);  // then, under a fifth
  CHECK(ws.fragments_retransmitted * 5 < fragments);
}

namespace {
// The window's cap follows the slowest reader's acknowledgement delay: max_unacked_bytes per
// millisecond, between 1 and 8 times max_unacked_bytes (to the microsecond the statistic is
// rounded to).
void check_window_cap(const WriterStats& ws, size_t base) {
  const double b = static_cast<double>(base);
  const double expected = std::clamp(b * static_cast<double>(ws.ack_delay_us) / 1000.0, b, 8 * b);
  CHECK(std::abs(static_cast<double>(ws.window_cap_bytes) - expected) <= b / 1000.0);
  CHECK(ws.window_bytes <= ws.window_cap_bytes);
}

// Writes `count` 64-KiB samples to one reader with `rq` over `net`; returns the writer's stats.
WriterStats run_window(std::shared_ptr<FakeNetwork> net, const ReaderQos& rq, uint32_t count) {
  auto [pub, sub] = two_hosts(net);
  TopicDescription topic{"Window", "test::Blob"};
  std::atomic<uint32_t> received{0};
  auto reader = sub->create_reader(topic, rq, [&](const SampleInfo&, Bytes) { received++; });
  REQUIRE(reader);
  auto writer = pub->create_writer(topic, WriterQos{});
  REQUIRE(writer);
  REQUIRE(writer.value()->wait_for_readers(1, 10s));
  const auto body = test::pattern(1, 64u << 10);
  for (uint32_t i = 1; i <= count; ++i) REQUIRE(writer.value()->write(test::as_bytes(body)).ok());
  REQUIRE(writer.value()->wait_for_acknowledgments(30s));
  REQUIRE(test::eventually([&] { return received.load() == count; }));
  return writer.value()->stats();
}
}  // namespace

TEST_CASE("A reader that answers HEARTBEATs late on purpose gets a window covering the delay") {
  // heartbeat_response_delay 5 ms, as a Fast DDS reader's: with max_unacked_bytes (4 MiB, which
  // covers 1 ms) the writer would idle most of each round. It measures the delay and lets the
  // window grow to cover it (writer_flow.cpp, Flow control), up to 8 times.
  ReaderQos rq;
  rq.heartbeat_response_delay = 5ms;
  const auto ws = run_window(FakeNetwork::create(), rq, 600);  // 38 MiB: rounds of the window
  const size_t base = ParticipantOptions{}.max_unacked_bytes;
  INFO("acknowledgement delay " << ws.ack_delay_us << " us, window " << ws.window_bytes << " cap "
                                << ws.window_cap_bytes);
  CHECK(ws.ack_delay_us >= 5000);  // never less than the reader's delay
  check_window_cap(ws, base);
  CHECK(ws.window_cap_bytes >= 5 * base);
  CHECK(ws.window_bytes > base);  // and the window did grow past max_unacked_bytes
}

TEST_CASE("A reader that answers at once keeps the window at max_unacked_bytes, even far away") {
  // 1 ms each way: its answers come 2 ms after each HEARTBEAT, but they acknowledge nothing the
  // HEARTBEAT did not announce - it did not hold them back, so the window stays.
  FaultOptions far;
  far.latency = 1ms;
  const auto ws = run_window(FakeNetwork::create(far), ReaderQos{}, 300);
  const size_t base = ParticipantOptions{}.max_unacked_bytes;
  INFO("acknowledgement delay " << ws.ack_delay_us << " us, window " << ws.window_bytes);
  check_window_cap(ws, base);
  CHECK(ws.window_cap_bytes == base);
  CHECK(ws.window_bytes <= base);
}
