// StatefulReader on a transport that records the ACKNACKs it sends: when a HEARTBEAT is
// answered, what a reader sends before the writer's first HEARTBEAT, and what it delivers
// without one.
#include <catch2/catch.hpp>
#include <mutex>
#include <tuple>
#include <vector>

#include "rtps/reader.hpp"
#include "test_util.hpp"
#include "wire/message.hpp"

using namespace pubsub;
using namespace std::chrono_literals;

namespace {

class AckRecorder final : public Transport, public wire::Visitor {
 public:
  Result<void> start(TransportReceiver&) override { return {}; }
  void stop() override {}
  void send(std::span<const Locator>, std::span<const ConstBuffer> parts) override {
    std::vector<uint8_t> d = test::gather(parts);
    REQUIRE(wire::decode_message(d.data(), d.size(), {}, *this) == wire::DecodeError::kNone);
    datagrams.push_back(std::move(d));
  }
  const TransportLocators& locators() const override { return loc; }
  size_t max_message_size() const override { return 8972; }
  bool on_receive_thread() const override { return false; }
  TransportStats stats() const override { return {}; }
  void on_acknack(const wire::ReceiveContext&, const wire::AckNackSubmessage& m) override {
    acknacks.push_back(m);
  }

  // The bitmapBase of the ACKNACK in datagram i, as sent (the decoder reads a pre-emptive base 0
  // as 1). Our datagrams are little-endian.
  int64_t sent_base(size_t i) const {
    const std::vector<uint8_t>& d = datagrams.at(i);
    size_t off = 20;
    while (off + 4 <= d.size()) {
      const uint16_t len = static_cast<uint16_t>(d[off + 2] | d[off + 3] << 8);
      if (d[off] == 0x06) {
        REQUIRE(off + 4 + 16 <= d.size());
        const uint8_t* b = d.data() + off + 4 + 8;
        const int32_t high = static_cast<int32_t>(b[0] | b[1] << 8 | b[2] << 16 | b[3] << 24);
        const uint32_t low = b[4] | b[5] << 8 | b[6] << 16 | static_cast<uint32_t>(b[7]) << 24;
        return (static_cast<int64_t>(high) << 32) | low;
      }
      off += 4 + len;
    }
    FAIL("no ACKNACK in datagram " << i);
    return -1;
  }

  std::vector<wire::AckNackSubmessage> acknacks;
  std::vector<std::vector<uint8_t>> datagrams;
  TransportLocators loc;
};

constexpr EntityId kReader{0x00000107};
const uint8_t kPayload[8] = {0, 1, 0, 0, 1, 2, 3, 4};  // CDR_LE, 4 bytes

rtps::RemoteWriterInfo remote_writer() {
  rtps::RemoteWriterInfo w;
  w.guid.prefix[0] = 1;
  w.guid.entity = EntityId{0x00000102};
  w.unicast = {Locator::udp_v4(0xC6120001u, 7411)};
  return w;
}

wire::DataSubmessage data_from(const rtps::RemoteWriterInfo& w, SequenceNumber sn) {
  wire::DataSubmessage m;
  m.reader_id = kReader;
  m.writer_id = w.guid.entity;
  m.sn = sn;
  m.has_data = true;
  m.payload = kPayload;
  m.payload_size = sizeof kPayload;
  return m;
}

wire::HeartbeatSubmessage heartbeat_from(const rtps::RemoteWriterInfo& w, SequenceNumber first,
                                         SequenceNumber last, uint32_t count) {
  wire::HeartbeatSubmessage hb;
  hb.reader_id = kReader;
  hb.writer_id = w.guid.entity;
  hb.first = first;
  hb.last = last;
  hb.count = count;
  return hb;
}

}  // namespace

TEST_CASE("A writer's samples from sequence number 1 are delivered before its first HEARTBEAT") {
  AckRecorder t;
  rtps::ReaderConfig cfg;
  cfg.guid.entity = kReader;
  std::vector<SequenceNumber> delivered;
  rtps::StatefulReader r(cfg, t, GuidPrefix{}, [&](const rtps::ReceivedSample& s) {
    delivered.push_back(s.sn);
    return true;
  });
  const rtps::RemoteWriterInfo w = remote_writer();
  r.add_writer(w, std::chrono::steady_clock::now());
  wire::ReceiveContext ctx;
  ctx.source_prefix = w.guid.prefix;
  // 2 and 3 first: where the writer's history starts is unknown until 1 or a HEARTBEAT comes.
  for (SequenceNumber sn : {2, 3}) r.on_data(ctx, data_from(w, sn), Time{});
  REQUIRE(delivered.empty());
  r.on_data(ctx, data_from(w, 1), Time{});
  REQUIRE(delivered == std::vector<SequenceNumber>{1, 2, 3});
  r.on_data(ctx, data_from(w, 4), Time{});
  REQUIRE(delivered == std::vector<SequenceNumber>{1, 2, 3, 4});
  REQUIRE(r.stats().lost == 0);

  // A writer whose first sample here is 5: held until a HEARTBEAT says where its history starts.
  rtps::RemoteWriterInfo w2 = remote_writer();
  w2.guid.prefix[0] = 2;
  r.add_writer(w2, std::chrono::steady_clock::now());
  ctx.source_prefix = w2.guid.prefix;
  delivered.clear();
  r.on_data(ctx, data_from(w2, 5), Time{});
  REQUIRE(delivered.empty());
  r.on_heartbeat(ctx, heartbeat_from(w2, 5, 5, 1), nullptr);
  REQUIRE(delivered == std::vector<SequenceNumber>{5});
}

// remove_writer's result as (count, first, last).
using Undelivered = std::tuple<uint64_t, SequenceNumber, SequenceNumber>;
Undelivered undelivered(const UndeliveredSamples& u) {
  return {u.count, u.first, u.last};
}

TEST_CASE(
    "remove_writer counts the samples the writer sent or announced that were not delivered, and "
    "gives the lowest and highest") {
  AckRecorder t;
  rtps::ReaderConfig cfg;
  cfg.guid.entity = kReader;
  bool take = true;
  std::vector<SequenceNumber> delivered;
  rtps::StatefulReader r(cfg, t, GuidPrefix{}, [&](const rtps::ReceivedSample& s) {
    if (take) delivered.push_back(s.sn);
    return take;
  });
  wire::ReceiveContext ctx;
  auto writer = [&](uint8_t id, bool reliable) {
    rtps::RemoteWriterInfo w = remote_writer();
    w.guid.prefix[0] = id;
    w.reliable = reliable;
    r.add_writer(w, std::chrono::steady_clock::now());
    ctx.source_prefix = w.guid.prefix;
    return w;
  };
  // Delivered 1-2; 4 arrived after a hole (3); the HEARTBEAT announces up to 6: 3, 4, 5, 6.
  const auto a = writer(1, true);
  for (SequenceNumber sn : {1, 2, 4}) r.on_data(ctx, data_from(a, sn), Time{});
  r.on_heartbeat(ctx, heartbeat_from(a, 1, 6, 1), nullptr);
  REQUIRE(delivered == std::vector<SequenceNumber>{1, 2});
  REQUIRE(undelivered(r.remove_writer(a.guid)) == Undelivered{4, 3, 6});

  // Everything delivered: none. A GAP'd (irrelevant) sample is not one of them.
  const auto b = writer(2, true);
  for (SequenceNumber sn : {1, 2}) r.on_data(ctx, data_from(b, sn), Time{});
  r.on_heartbeat(ctx, heartbeat_from(b, 1, 2, 1), nullptr);
  REQUIRE(undelivered(r.remove_writer(b.guid)) == Undelivered{0, 0, 0});
  const auto c = writer(3, true);
  r.on_data(ctx, data_from(c, 1), Time{});
  wire::GapSubmessage gap;
  gap.reader_id = kReader;
  gap.writer_id = c.guid.entity;
  gap.gap_start = 3;
  gap.gap_list.base = 4;  // [3, 3] irrelevant, 2 still missing
  r.on_gap(ctx, gap);
  r.on_heartbeat(ctx, heartbeat_from(c, 1, 3, 1), nullptr);
  REQUIRE(undelivered(r.remove_writer(c.guid)) == Undelivered{1, 2, 2});

  // Refused (back-pressure) and held: 1-3.
  take = false;
  const auto d = writer(4, true);
  for (SequenceNumber sn : {1, 2, 3}) r.on_data(ctx, data_from(d, sn), Time{});
  REQUIRE(undelivered(r.remove_writer(d.guid)) == Undelivered{3, 1, 3});

  // No HEARTBEAT yet, first sample not 1: what arrived (5, 6). Best effort: none.
  const auto e = writer(5, true);
  for (SequenceNumber sn : {5, 6}) r.on_data(ctx, data_from(e, sn), Time{});
  REQUIRE(undelivered(r.remove_writer(e.guid)) == Undelivered{2, 5, 6});
  const auto f = writer(6, false);
  for (SequenceNumber sn : {1, 3}) r.on_data(ctx, data_from(f, sn), Time{});
  REQUIRE(undelivered(r.remove_writer(f.guid)) == Undelivered{0, 0, 0});
  REQUIRE(undelivered(r.remove_writer(f.guid)) == Undelivered{0, 0, 0});  // gone already
}

TEST_CASE("The pre-emptive ACKNACK has bitmapBase 0 for a Fast DDS writer, 1 for the others") {
  for (const bool fast_dds : {false, true}) {
    INFO("Fast DDS writer: " << fast_dds);
    AckRecorder t;
    rtps::ReaderConfig cfg;
    cfg.guid.entity = kReader;
    rtps::StatefulReader r(cfg, t, GuidPrefix{}, [](const rtps::ReceivedSample&) { return true; });
    rtps::RemoteWriterInfo w = remote_writer();
    w.preemptive_base_zero = fast_dds;
    const auto start = std::chrono::steady_clock::now();
    r.add_writer(w, start);
    REQUIRE(t.datagrams.size() == 1);
    REQUIRE(t.sent_base(0) == (fast_dds ? 0 : 1));
    REQUIRE_FALSE(t.acknacks[0].final);
    REQUIRE(t.acknacks[0].set.num_bits == 0);
    // Again every 200 ms until a HEARTBEAT comes; then the regular form.
    r.on_timer(start + 250ms);
    REQUIRE(t.datagrams.size() == 2);
    REQUIRE(t.sent_base(1) == (fast_dds ? 0 : 1));
    wire::ReceiveContext ctx;
    ctx.source_prefix = w.guid.prefix;
    REQUIRE(r.on_heartbeat(ctx, heartbeat_from(w, 1, 0, 1), nullptr));
    r.send_pending_acks();
    REQUIRE(t.datagrams.size() == 3);
    REQUIRE(t.sent_base(2) == 1);
    REQUIRE(t.acknacks[2].final);
    r.on_timer(start + 500ms);
    REQUIRE(t.datagrams.size() == 3);
  }
}

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
