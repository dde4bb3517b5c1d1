// Where a writer sends new data: to a multicast locator when two or more matched readers share
// it, else to each reader's unicast locator. Checked on StatefulWriter with a transport that
// records destinations.
#include <catch2/catch.hpp>
#include <mutex>
#include <set>

#include "rtps/writer.hpp"

using namespace pubsub;

namespace {

class RecordingTransport final : public Transport {
 public:
  Result<void> start(TransportReceiver&) override { return {}; }
  void stop() override {}
  void send(std::span<const Locator> to, std::span<const ConstBuffer>) override {
    std::lock_guard lk(mu);
    for (const auto& l : to) sent.push_back(l);
  }
  const TransportLocators& locators() const override { return loc; }
  size_t max_message_size() const override { return 8972; }
  bool on_receive_thread() const override { return false; }
  TransportStats stats() const override { return {}; }

  std::set<Locator> destinations_of_next_write(rtps::StatefulWriter& w) {
    {
      std::lock_guard lk(mu);
      sent.clear();
    }
    const uint8_t body[8] = {};
    rtps::WriteRequest r;
    r.body = body;
    r.body_size = sizeof body;
    REQUIRE(w.write(r, false).ok());
    std::lock_guard lk(mu);
    return {sent.begin(), sent.end()};
  }

  std::mutex mu;
  std::vector<Locator> sent;
  TransportLocators loc;
};

Locator uc(uint8_t host) {
  return Locator::udp_v4(0xC6120000u | host, 7411);
}
Locator mc(uint8_t group) {
  return Locator::udp_v4(0xEFFF0000u | group, 7401);
}

rtps::RemoteReaderInfo reader(uint8_t id, Locator unicast, std::vector<Locator> multicast) {
  rtps::RemoteReaderInfo r;
  r.guid.prefix[0] = id;
  r.guid.entity = EntityId{0x00000107};
  r.reliable = false;  // no heartbeats in the way
  r.unicast = {unicast};
  r.multicast = std::move(multicast);
  return r;
}

}  // namespace

TEST_CASE("Writer sends by multicast when two readers share a multicast locator, else unicast") {
  RecordingTransport t;
  rtps::WriterConfig cfg;
  cfg.guid.entity = EntityId{0x00000103};
  cfg.qos.reliability = ReliabilityKind::kBestEffort;
  rtps::StatefulWriter w(cfg, t, GuidPrefix{});
  const auto now = std::chrono::steady_clock::now();

  w.add_reader(reader(1, uc(1), {mc(1)}), now);
  REQUIRE(t.destinations_of_next_write(w) == std::set<Locator>{uc(1)});

  w.add_reader(reader(2, uc(2), {mc(1)}), now);
  REQUIRE(t.destinations_of_next_write(w) == std::set<Locator>{mc(1)});

  // A third reader on another group gets unicast; the shared group still covers the first two.
  w.add_reader(reader(3, uc(3), {mc(2)}), now);
  REQUIRE(t.destinations_of_next_write(w) == (std::set<Locator>{mc(1), uc(3)}));

  // Readers without multicast locators: one datagram per unicast locator.
  w.remove_reader(reader(1, uc(1), {}).guid);
  w.remove_reader(reader(2, uc(2), {}).guid);
  w.add_reader(reader(4, uc(4), {}), now);
  REQUIRE(t.destinations_of_next_write(w) == (std::set<Locator>{uc(3), uc(4)}));
}
