// StatefulReader on a transport that records the ACKNACKs it sends: when a HEARTBEAT is
// answered.
#include <catch2/catch.hpp>
#include <mutex>
#include <vector>

#include "rtps/reader.hpp"
#include "wire/message.hpp"

using namespace pubsub;
using namespace std::chrono_literals;

namespace {

class AckRecorder final : public Transport, public wire::Visitor {
 public:
  Result<void> start(TransportReceiver&) override { return {}; }
  void stop() override {}
  void send(std::span<const Locator>, std::span<const ConstBuffer> parts) override {
    std::vector<uint8_t> d;
    for (const auto& p : parts) {
      const auto* b = static_cast<const uint8_t*>(p.data);
      d.insert(d.end(), b, b + p.size);
    }
    REQUIRE(wire::decode_message(d.data(), d.size(), {}, *this) == wire::DecodeError::kNone);
  }
  const TransportLocators& locators() const override { return loc; }
  size_t max_message_size() const override { return 8972; }
  bool on_receive_thread() const override { return false; }
  TransportStats stats() const override { return {}; }
  void on_acknack(const wire::ReceiveContext&, const wire::AckNackSubmessage& m) override {
    acknacks.push_back(m);
  }

  std::vector<wire::AckNackSubmessage> acknacks;
  TransportLocators loc;
};

}  // namespace

TEST_CASE(
    "A HEARTBEAT that comes with a fragment of the sample still arriving is answered 1 ms "
    "later, once") {
  AckRecorder t;
  rtps::ReaderConfig cfg;
  cfg.guid.entity = EntityId{0x00000107};
  int delivered = 0;
  rtps::StatefulReader r(cfg, t, GuidPrefix{}, [&](const rtps::ReceivedSample&) {
    delivered++;
    return true;
  });
  rtps::RemoteWriterInfo w;
  w.guid.prefix[0] = 1;
  w.guid.entity = EntityId{0x00000102};
  w.unicast = {Locator::udp_v4(0xC6120001u, 7411)};
  r.add_writer(w, std::chrono::steady_clock::now());
  wire::ReceiveContext ctx;
  ctx.source_prefix = w.guid.prefix;

  uint32_t hb_count = 0;
  auto heartbeat = [&](SequenceNumber last, rtps::SteadyTime* answer_at) {
    wire::HeartbeatSubmessage hb;
    hb.reader_id = cfg.guid.entity;
    hb.writer_id = w.guid.entity;
    hb.first = 1;
    hb.last = last;
    hb.count = ++hb_count;
    hb.final = false;  // an answer is required, as Fast DDS asks on every DATA_FRAG datagram
    return r.on_heartbeat(ctx, hb, answer_at);
  };
  const uint8_t payload[1000] = {};
  auto fragment = [&](uint32_t f) {
    wire::DataFragSubmessage m;
    m.reader_id = cfg.guid.entity;
    m.writer_id = w.guid.entity;
    m.sn = 1;
    m.fragment_start = f;
    m.fragments_in_submessage = 1;
    m.fragment_size = 1000;
    m.sample_size = 3000;
    m.data = payload;
    m.data_size = sizeof payload;
    r.on_data_frag(ctx, m, Time{});
  };

  // Nothing written yet: answered at once (the caller sends it at the end of the batch).
  rtps::SteadyTime answer_at{};
  const size_t sent = t.acknacks.size();  // add_writer() may have sent a pre-emptive one
  REQUIRE(heartbeat(0, &answer_at));
  REQUIRE(answer_at == rtps::SteadyTime{});
  r.send_pending_acks();
  REQUIRE(t.acknacks.size() == sent + 1);

  // With fragment 1 of sample 1's three: the answer waits 1 ms; the HEARTBEAT with fragment 2
  // joins it.
  fragment(1);
  const auto before = std::chrono::steady_clock::now();
  REQUIRE_FALSE(heartbeat(1, &answer_at));
  const auto after = std::chrono::steady_clock::now();
  REQUIRE(answer_at >= before + 1ms);
  REQUIRE(answer_at <= after + 1ms);
  fragment(2);
  rtps::SteadyTime second{};
  REQUIRE_FALSE(heartbeat(1, &second));
  REQUIRE(second == rtps::SteadyTime{});
  fragment(3);
  REQUIRE(delivered == 1);
  r.send_pending_acks();
  REQUIRE(t.acknacks.size() == sent + 1);

  // Not before it is due; then one ACKNACK for both, acknowledging sample 1 and asking nothing.
  r.on_timer(before);
  REQUIRE(t.acknacks.size() == sent + 1);
  r.on_timer(answer_at);
  REQUIRE(t.acknacks.size() == sent + 2);
  REQUIRE(t.acknacks.back().set.base == 2);
  REQUIRE(t.acknacks.back().set.num_bits == 0);

  // A HEARTBEAT for what has all arrived is answered at once again.
  REQUIRE(heartbeat(1, &answer_at));
}
