// StatefulWriter on a transport that records destinations: where new data goes (a multicast
// locator when two or more matched readers share it, else each reader's unicast locator), and how
// often a NACKed sample is repaired.
#include <catch2/catch.hpp>
#include <mutex>
#include <set>

#include "rtps/writer.hpp"
#include "wire/message.hpp"

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

TEST_CASE("Writer repairs a NACKed sample once per holdoff, however often the reader asks") {
  using std::chrono::microseconds;
  RecordingTransport t;
  rtps::WriterConfig cfg;
  cfg.guid.entity = EntityId{0x00000103};
  rtps::StatefulWriter w(cfg, t, GuidPrefix{});
  const auto t0 = std::chrono::steady_clock::now();
  auto r = reader(1, uc(1), {});
  r.reliable = true;
  w.add_reader(r, t0);
  for (int i = 0; i < 10; ++i) t.destinations_of_next_write(w);

  uint32_t count = 0;
  auto nack = [&](std::initializer_list<SequenceNumber> missing, microseconds at) {
    wire::AckNackSubmessage a;
    a.reader_id = r.guid.entity;
    a.writer_id = cfg.guid.entity;
    a.set.base = 3;  // 1 and 2 acknowledged
    a.set.num_bits = 8;
    for (auto sn : missing) a.set.set(static_cast<uint32_t>(sn - a.set.base));
    a.count = ++count;
    w.on_acknack(r.guid.prefix, a, t0 + at);
    return w.stats().samples_retransmitted;
  };
  REQUIRE(nack({3, 4}, microseconds(0)) == 2);
  // A reader answering every HEARTBEAT asks again before the repair reached it: not resent.
  REQUIRE(nack({3, 4}, microseconds(500)) == 2);
  // A sample it had not asked for yet is repaired at once, the others still are not.
  REQUIRE(nack({3, 4, 7}, microseconds(1000)) == 3);
  REQUIRE(nack({3, 4, 7}, microseconds(2500)) == 3);  // within 2 ms of the repair of 7
  // After the holdoff the repairs themselves count as lost: everything goes again.
  REQUIRE(nack({3, 4, 7}, microseconds(3500)) == 6);
}
