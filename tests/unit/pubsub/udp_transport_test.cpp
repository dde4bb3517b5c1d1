// The UDP transport on loopback: send_many's segmentation offload (runs of equal-sized
// datagrams in one UDP_SEGMENT message) and the receive side's UDP_GRO split must hand the
// receiver exactly the datagrams sent, in order, whatever the mix of sizes - with offload on
// and off.
#include <catch2/catch.hpp>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "pubsub/transport.hpp"

namespace pubsub {
namespace {

struct Collector final : TransportReceiver {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::vector<uint8_t>> datagrams;
  void on_datagram(unsigned, const uint8_t* data, size_t size) override {
    std::lock_guard lock(mu);
    datagrams.emplace_back(data, data + size);
    cv.notify_all();
  }
  void on_receive_batch_end(unsigned) override {}
  bool wait_for(size_t n) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, std::chrono::seconds(5), [&] { return datagrams.size() >= n; });
  }
};

std::unique_ptr<Transport> loopback_transport(bool offload,
                                              Duration coalesce = std::chrono::microseconds(100)) {
  UdpTransportOptions o;
  o.receive_coalesce = coalesce;
  o.domain_id = 77;
  o.interface = "127.0.0.1";
  o.multicast = false;
  o.segmentation_offload = offload;
  auto t = make_udp_transport(o);
  REQUIRE(t.ok());
  return std::move(t).value();
}

// Datagram i: `size` bytes, byte k = i * 31 + k, gathered from two parts.
struct Datagrams {
  std::vector<std::vector<uint8_t>> bodies;
  std::vector<std::array<ConstBuffer, 2>> parts;
  std::vector<std::span<const ConstBuffer>> spans;
  explicit Datagrams(const std::vector<size_t>& sizes) {
    for (size_t i = 0; i < sizes.size(); ++i) {
      std::vector<uint8_t> b(sizes[i]);
      for (size_t k = 0; k < b.size(); ++k) b[k] = static_cast<uint8_t>(i * 31 + k);
      bodies.push_back(std::move(b));
    }
    for (const auto& b : bodies) {
      const size_t half = b.size() / 3;
      parts.push_back({ConstBuffer{b.data(), half}, ConstBuffer{b.data() + half, b.size() - half}});
    }
    for (const auto& p : parts) spans.emplace_back(p.data(), p.size());
  }
};

}  // namespace

TEST_CASE("UDP send_many delivers every datagram whole and in order, with offload and without") {
  const bool offload = GENERATE(true, false);
  CAPTURE(offload);
  auto tx = loopback_transport(offload);
  auto rx = loopback_transport(offload);
  Collector got;
  REQUIRE(rx->start(got).ok());
  // Runs of one size, a shorter datagram closing a run, a longer one starting the next, a run
  // across the 64 datagrams of one sendmmsg and a run past 65000 bytes.
  std::vector<size_t> sizes = {1000, 1000, 1000, 1000, 1000, 600, 1200, 1200, 1200, 2000, 100};
  for (int i = 0; i < 70; ++i) sizes.push_back(512);
  for (int i = 0; i < 9; ++i) sizes.push_back(8000);
  sizes.push_back(8000);
  sizes.push_back(40);
  Datagrams d(sizes);
  const Locator to = rx->locators().user_unicast;
  tx->send_many({&to, 1}, d.spans);
  REQUIRE(got.wait_for(sizes.size()));
  rx->stop();
  REQUIRE(got.datagrams.size() == sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) {
    CAPTURE(i);
    REQUIRE(got.datagrams[i] == d.bodies[i]);
  }
  const TransportStats ts = tx->stats(), rs = rx->stats();
  CHECK(ts.datagrams_sent == sizes.size());
  CHECK(ts.send_errors == 0);
  CHECK(rs.datagrams_received == sizes.size());
  size_t total = 0;
  for (size_t s : sizes) total += s;
  CHECK(ts.bytes_sent == total);
  CHECK(rs.bytes_received == total);
  if (offload) {
    // Runs, in sendmmsg groups of 64 datagrams: 5x1000+600 | 3x1200 | 2000+100 | 53x512, then
    // 17x512 | 8x8000 (64000 B) | 2x8000+40.
    CHECK(ts.gso_messages_sent == 7);
    // Loopback keeps a GSO message whole up to the receive socket, which takes it with UDP_GRO.
    CHECK(rs.gro_messages_received == 7);
  } else {
    CHECK(ts.gso_messages_sent == 0);
    CHECK(rs.gro_messages_received == 0);
  }
}

TEST_CASE("UDP send_many sends datagrams of the largest size one per message") {
  // Two 65000-B datagrams exceed what one UDP_SEGMENT message may carry.
  auto tx = loopback_transport(true);
  auto rx = loopback_transport(true);
  Collector got;
  REQUIRE(rx->start(got).ok());
  Datagrams d({65000, 65000, 10});
  const Locator to = rx->locators().user_unicast;
  tx->send_many({&to, 1}, d.spans);
  REQUIRE(got.wait_for(3));
  rx->stop();
  REQUIRE(got.datagrams.size() == 3);
  for (size_t i = 0; i < 3; ++i) REQUIRE(got.datagrams[i] == d.bodies[i]);
  CHECK(tx->stats().gso_messages_sent == 0);
}

TEST_CASE("UDP receive coalescing sleeps once datagrams queue up, and never without a queue") {
  const bool on = GENERATE(true, false);
  CAPTURE(on);
  auto tx = loopback_transport(true);
  auto rx = loopback_transport(true, std::chrono::microseconds(on ? 100 : 0));
  Collector got;
  std::vector<size_t> sizes(200, 300);
  Datagrams d(sizes);
  const Locator to = rx->locators().user_unicast;
  // Sent before the receive threads start: the first receive finds 200 queued.
  for (size_t i = 0; i < sizes.size(); ++i) tx->send({&to, 1}, d.spans[i]);
  REQUIRE(rx->start(got).ok());
  REQUIRE(got.wait_for(sizes.size()));
  REQUIRE(got.datagrams == d.bodies);
  if (on) {
    // The receive thread counts its sleep after it delivered the round's last datagram: on a
    // busy machine this thread can look before it has.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (rx->stats().coalescing_sleeps == 0 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    CHECK(rx->stats().coalescing_sleeps >= 1);
  } else {
    CHECK(rx->stats().coalescing_sleeps == 0);
  }
  // One datagram at a time (a ping-pong): no queue, no sleep. (First let the receive thread
  // finish the round that delivered the last of the burst, and its sleep.)
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const uint64_t before = rx->stats().coalescing_sleeps;
  for (size_t i = 0; i < 20; ++i) {
    tx->send({&to, 1}, d.spans[i]);
    REQUIRE(got.wait_for(sizes.size() + i + 1));
  }
  rx->stop();
  CHECK(rx->stats().coalescing_sleeps == before);
}

}  // namespace pubsub
