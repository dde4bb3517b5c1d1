// Discovery's answer to a newcomer: our SPDP announcement sent to its metatraffic unicast locator
// at each of its first announcements (up to 5), so that a participant still starting, which may
// drop the first answer, need not wait for our next periodic announcement.
#include <algorithm>
#include <catch2/catch.hpp>
#include <vector>

#include "discovery/discovery.hpp"
#include "test_util.hpp"
#include "wire/constants.hpp"
#include "wire/discovery_data.hpp"
#include "wire/message.hpp"

using namespace pubsub;

namespace {

// Counts the SPDP announcements (DATA from the SPDP writer) sent to each destination.
class SpdpCounter final : public Transport {
 public:
  Result<void> start(TransportReceiver&) override { return {}; }
  void stop() override {}
  void send(std::span<const Locator> to, std::span<const ConstBuffer> parts) override {
    const std::vector<uint8_t> d = test::gather(parts);
    struct : wire::Visitor {
      bool spdp = false;
      void on_data(const wire::ReceiveContext&, const wire::DataSubmessage& m) override {
        spdp = spdp || m.writer_id == EntityId{wire::kEntityIdSpdpWriter};
      }
    } v;
    REQUIRE(wire::decode_message(d.data(), d.size(), {}, v) == wire::DecodeError::kNone);
    if (!v.spdp) return;
    for (const Locator& l : to) destinations.push_back(l);
  }
  const TransportLocators& locators() const override { return loc; }
  size_t max_message_size() const override { return 8972; }
  bool on_receive_thread() const override { return false; }
  TransportStats stats() const override { return {}; }

  size_t sent_to(const Locator& l) const {
    return static_cast<size_t>(std::count(destinations.begin(), destinations.end(), l));
  }

  std::vector<Locator> destinations;
  TransportLocators loc;
};

struct NoListener final : discovery::DiscoveryListener {
  void on_endpoint_discovered(const discovery::RemoteEndpoint&) override {}
  void on_endpoint_lost(const Guid&) override {}
};

}  // namespace

TEST_CASE("Discovery answers each of a newcomer's first five announcements, then no more") {
  SpdpCounter t;
  t.loc.meta_unicast = Locator::udp_v4(0xC6120001u, 7410);
  t.loc.user_unicast = Locator::udp_v4(0xC6120001u, 7411);
  NoListener listener;
  discovery::DiscoveryConfig cfg;
  GuidPrefix ours{};
  ours[0] = 1;
  discovery::Discovery d(cfg, t, ours, listener);

  auto announcement = [](uint8_t id, uint32_t port) {
    wire::ParticipantData p;
    p.guid_prefix[0] = id;
    p.vendor[0] = 0x01;
    p.vendor[1] = 0x0f;
    p.domain_id = 0;
    p.metatraffic_unicast = {Locator::udp_v4(0xC6120002u, port)};
    p.default_unicast = {Locator::udp_v4(0xC6120002u, port + 1)};
    return p;
  };
  auto receive = [&](const wire::ParticipantData& p, SequenceNumber sn) {
    const std::vector<uint8_t> payload = wire::encode_participant_data(p);
    wire::DataSubmessage m;
    m.writer_id = EntityId{wire::kEntityIdSpdpWriter};
    m.reader_id = EntityId{wire::kEntityIdSpdpReader};
    m.sn = sn;
    m.has_data = true;
    m.payload = payload.data();
    m.payload_size = payload.size();
    wire::ReceiveContext ctx;
    ctx.source_prefix = p.guid_prefix;
    d.on_data(ctx, m, Time{});
  };

  const auto a = announcement(2, 7412);
  const Locator a_meta = a.metatraffic_unicast.front();
  for (SequenceNumber sn = 1; sn <= 7; ++sn) {
    receive(a, sn);
    INFO("announcement " << sn);
    REQUIRE(t.sent_to(a_meta) == std::min<size_t>(sn, 5));
  }
  REQUIRE(d.participants().size() == 1);
  // Another newcomer has answers of its own; nothing more goes to the first.
  const auto b = announcement(3, 7414);
  receive(b, 1);
  receive(b, 2);
  REQUIRE(t.sent_to(b.metatraffic_unicast.front()) == 2);
  REQUIRE(t.sent_to(a_meta) == 5);
  REQUIRE(t.destinations.size() == 7);
}
