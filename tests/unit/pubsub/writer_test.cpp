// StatefulWriter on a transport that records destinations and datagrams: where new data goes
// (a multicast locator when two or more matched readers share it, else each reader's unicast
// locator), how often a NACKed sample is repaired, the datagram size a reader asks for, and how
// a fragment repair the pacer spreads goes out.
#include <atomic>
#include <catch2/catch.hpp>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "rtps/writer.hpp"
#include "test_util.hpp"
#include "wire/message.hpp"

using namespace pubsub;

namespace {

class RecordingTransport final : public Transport {
 public:
  Result<void> start(TransportReceiver&) override { return {}; }
  void stop() override {}
  void send(std::span<const Locator> to, std::span<const ConstBuffer> parts) override {
    std::lock_guard lk(mu);
    const std::vector<uint8_t> datagram = test::gather(parts);
    for (const auto& l : to) {
      sent.push_back(l);
      sizes.push_back(datagram.size());
      datagrams.push_back(datagram);
    }
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

  // The sizes of the datagrams a write of `size` bytes (or what `act` does) sends.
  template <typename F>
  std::vector<size_t> sizes_of(F&& act) {
    {
      std::lock_guard lk(mu);
      sent.clear();
      sizes.clear();
      datagrams.clear();
    }
    act();
    std::lock_guard lk(mu);
    return sizes;
  }
  std::vector<size_t> sizes_of_write(rtps::StatefulWriter& w, size_t size) {
    return sizes_of([&] {
      std::vector<uint8_t> body(size, 0x5a);
      rtps::WriteRequest r;
      r.body = body.data();
      r.body_size = body.size();
      REQUIRE(w.write(r, false).ok());
    });
  }

  std::mutex mu;
  std::vector<Locator> sent;
  std::vector<size_t> sizes;                    // of each datagram in `sent`
  std::vector<std::vector<uint8_t>> datagrams;  // their bytes
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

// An ACKNACK from `r` to the writer of `cfg`: all below `base` received, `missing` (at or above
// it) not, num_bits wide.
wire::AckNackSubmessage acknack(const rtps::RemoteReaderInfo& r, const rtps::WriterConfig& cfg,
                                SequenceNumber base, uint32_t num_bits,
                                std::initializer_list<SequenceNumber> missing, uint32_t count) {
  wire::AckNackSubmessage a;
  a.reader_id = r.guid.entity;
  a.writer_id = cfg.guid.entity;
  a.set.base = base;
  a.set.num_bits = num_bits;
  for (auto sn : missing) a.set.set(static_cast<uint32_t>(sn - base));
  a.count = count;
  return a;
}

// A NACK_FRAG from `r` for `n` fragments of sample `sn` from fragment `first`.
wire::NackFragSubmessage nack_frag(const rtps::RemoteReaderInfo& r, const rtps::WriterConfig& cfg,
                                   SequenceNumber sn, uint32_t first, uint32_t n, uint32_t count) {
  wire::NackFragSubmessage m;
  m.reader_id = r.guid.entity;
  m.writer_id = cfg.guid.entity;
  m.sn = sn;
  m.fragments.base = first;
  for (uint32_t i = 0; i < n; ++i) m.fragments.set(i);
  m.count = count;
  return m;
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
    // 1 and 2 acknowledged
    w.on_acknack(r.guid.prefix, acknack(r, cfg, 3, 8, missing, ++count), t0 + at);
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

namespace {
// Datagrams of at least `min` and at most `max` bytes, and how many.
size_t count_within(const std::vector<size_t>& sizes, size_t min, size_t max) {
  size_t n = 0;
  for (size_t s : sizes) n += s >= min && s <= max;
  return n;
}

// A writer (KEEP_LAST 16: writes never wait for acknowledgements) with one reliable reader that
// takes datagrams of up to 65000 bytes.
struct BigDatagramWriter {
  static rtps::WriterConfig config() {
    rtps::WriterConfig c;
    c.guid.entity = EntityId{0x00000103};
    c.qos.history.kind = HistoryKind::kKeepLast;
    c.qos.history.depth = 16;
    return c;
  }
  static rtps::RemoteReaderInfo big_reader() {
    auto r = reader(1, uc(1), {});
    r.reliable = true;
    r.max_datagram = 65000;
    return r;
  }
  BigDatagramWriter() { w.add_reader(big, t0); }

  // The big reader asks for fragment 2 of sample 1 at t0 + at: the datagrams sent in answer.
  std::vector<size_t> nack_frag(std::chrono::milliseconds at) {
    const auto m = ::nack_frag(big, cfg, 1, 2, 1, ++nackfrag_count);
    return t.sizes_of([&] { w.on_nack_frag(big.guid.prefix, m, t0 + at); });
  }

  RecordingTransport t;  // max_message_size 8972
  rtps::WriterConfig cfg = config();
  rtps::StatefulWriter w{cfg, t, GuidPrefix{}};
  rtps::RemoteReaderInfo big = big_reader();
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  uint32_t nackfrag_count = 0;
};
}  // namespace

TEST_CASE(
    "A reader that takes big datagrams gets them, and its samples keep their fragments in "
    "repairs") {
  BigDatagramWriter f;
  auto& t = f.t;
  auto& w = f.w;

  // Fragments of (65000 - 180) & ~7 = 64816 bytes: 200000 B in 4 DATA_FRAGs, the last with
  // 5552 bytes and the HEARTBEAT_FRAG; a 60000-B sample goes whole in one datagram.
  auto sizes = t.sizes_of_write(w, 200000);
  REQUIRE(sizes.size() == 4);
  REQUIRE(count_within(sizes, 64816, 65000) == 3);
  REQUIRE(count_within(sizes, 5552, 8972) == 1);
  sizes = t.sizes_of_write(w, 60000);
  REQUIRE(sizes.size() == 1);
  REQUIRE(count_within(sizes, 60000, 60200) == 1);

  // With a reader of the transport's size matched too, new samples fit 8972-B datagrams:
  // fragments of 8792 B, 23 for 200000 B, to each of the two readers.
  auto small = reader(2, uc(2), {});
  small.reliable = true;
  w.add_reader(small, f.t0);
  sizes = t.sizes_of_write(w, 200000);
  REQUIRE(sizes.size() == 2 * 23);
  REQUIRE(count_within(sizes, 0, 8972) == 2 * 23);

  // Fragment 2 of the first sample, asked for again, is still 64816 bytes long.
  sizes = f.nack_frag(std::chrono::milliseconds(0));
  REQUIRE(sizes.size() == 1);
  REQUIRE(count_within(sizes, 64816, 65000) == 1);

  // The small reader gone, samples are 64816-B fragments again.
  w.remove_reader(small.guid);
  sizes = t.sizes_of_write(w, 200000);
  REQUIRE(sizes.size() == 4);
  REQUIRE(count_within(sizes, 64816, 65000) == 3);
}

TEST_CASE("A writer blocked on its window repeats its HEARTBEAT while no answer comes") {
  using namespace std::chrono_literals;
  RecordingTransport t;
  rtps::WriterConfig cfg;
  cfg.guid.entity = EntityId{0x00000103};
  cfg.qos.max_blocking_time = 5s;
  rtps::StatefulWriter w(cfg, t, GuidPrefix{});
  auto r = reader(1, uc(1), {});
  r.reliable = true;
  w.add_reader(r, std::chrono::steady_clock::now());
  // Four 64-KiB samples fill the first window (256 KiB); the fifth write waits.
  std::vector<uint8_t> body(64 << 10, 1);
  rtps::WriteRequest req;
  req.body = body.data();
  req.body_size = body.size();
  for (int i = 0; i < 4; ++i) REQUIRE(w.write(req, false).ok());
  std::atomic<bool> written{false}, ok{false};
  std::thread writer([&] {  // Catch2's assertions are for the test's own thread
    ok = w.write(req, true).ok();
    written = true;
  });
  // Nothing answers: a HEARTBEAT every 2 ms (kMinProbe) instead of one per 100 ms.
  std::this_thread::sleep_for(40ms);
  const auto probes = w.stats().heartbeat_probes;
  CHECK(probes >= 4);
  CHECK(probes <= 20);
  CHECK_FALSE(written);
  // All four acknowledged.
  w.on_acknack(r.guid.prefix, acknack(r, cfg, 5, 0, {}, 1), std::chrono::steady_clock::now());
  writer.join();
  REQUIRE(ok);
  // No longer blocked: no more probes.
  const auto after = w.stats().heartbeat_probes;
  std::this_thread::sleep_for(20ms);
  REQUIRE(w.stats().heartbeat_probes == after);
}

TEST_CASE("A reader that keeps missing a repaired sample in big datagrams gets small ones") {
  using std::chrono::milliseconds;
  BigDatagramWriter f;
  auto& t = f.t;
  auto& w = f.w;
  REQUIRE(t.sizes_of_write(w, 200000).size() == 4);
  // The first request, one again before that repair could have been answered (2 ms: held
  // back), and one after it: a socket buffer's overflow looks like this, and the datagrams stay
  // big.
  REQUIRE(f.nack_frag(milliseconds(10)).size() == 1);
  REQUIRE(f.nack_frag(milliseconds(11)).empty());
  REQUIRE(w.stats().repairs_held_back == 1);
  REQUIRE(f.nack_frag(milliseconds(20)).size() == 1);
  REQUIRE(w.stats().datagram_fallbacks == 0);
  REQUIRE(t.sizes_of_write(w, 200000).size() == 4);
  // Missing it after a second repair (past its 4-ms holdoff): a lossy path. The sample's repair
  // keeps its 64816-B fragment; new samples go in 8792-B fragments.
  const auto repair = f.nack_frag(milliseconds(30));
  REQUIRE(repair.size() == 1);
  REQUIRE(count_within(repair, 64816, 65000) == 1);
  REQUIRE(w.stats().datagram_fallbacks == 1);
  const auto sizes = t.sizes_of_write(w, 200000);
  REQUIRE(sizes.size() == 23);
  REQUIRE(count_within(sizes, 0, 8972) == 23);
}

TEST_CASE("Repairs of a sample in big datagrams that a reader keeps missing back off") {
  using std::chrono::milliseconds;
  BigDatagramWriter f;
  REQUIRE(f.t.sizes_of_write(f.w, 200000).size() == 4);
  // Repaired at 0 ms; then each repair waits 2 ms (kRepairHoldoff: no acknowledgement delay
  // measured), doubled per repair lost since: 2, 4, 8, 16 ms ... up to 500 ms. Every request
  // in between (a Fast DDS reader asks at each HEARTBEAT) is held back.
  int at = 0;
  REQUIRE(f.nack_frag(milliseconds(at)).size() == 1);
  uint64_t held = 0;
  for (int holdoff = 2; holdoff <= 512; holdoff *= 2) {
    const int wait = std::min(holdoff, 500);
    REQUIRE(f.nack_frag(milliseconds(at + 1)).empty());
    REQUIRE(f.nack_frag(milliseconds(at + wait)).empty());  // not past the holdoff yet
    held += 2;
    REQUIRE(f.w.stats().repairs_held_back == held);
    at += wait + 1;
    const auto repair = f.nack_frag(milliseconds(at));
    REQUIRE(repair.size() == 1);
    REQUIRE(count_within(repair, 64816, 65000) == 1);  // the sample keeps its fragments
  }
  REQUIRE(f.w.stats().datagram_fallbacks == 1);
}

namespace {
// What a sequence of datagrams carries: the DATA_FRAG fragment numbers of one sample, the
// datagram each came in, and the index of each datagram with both a DATA_FRAG and a HEARTBEAT
// (HEARTBEATs on their own, periodic ones, are left out).
struct Carried : wire::Visitor {
  std::multiset<uint32_t> fragments;
  std::map<uint32_t, size_t> datagram_of;
  std::vector<size_t> heartbeats;
  size_t index = 0;
  void on_data_frag(const wire::ReceiveContext&, const wire::DataFragSubmessage& m) override {
    for (uint32_t i = 0; i < m.fragments_in_submessage; ++i) {
      fragments.insert(m.fragment_start + i);
      datagram_of[m.fragment_start + i] = index;
    }
  }
  void on_heartbeat(const wire::ReceiveContext&, const wire::HeartbeatSubmessage&) override {
    if (!datagram_of.empty() && datagram_of.rbegin()->second == index) heartbeats.push_back(index);
  }
  static Carried of(const std::vector<std::vector<uint8_t>>& datagrams) {
    Carried c;
    for (; c.index < datagrams.size(); ++c.index) {
      const auto& d = datagrams[c.index];
      REQUIRE(wire::decode_message(d.data(), d.size(), {}, c) == wire::DecodeError::kNone);
    }
    return c;
  }
};
}  // namespace

TEST_CASE(
    "A repair the pacer spreads sends every fragment asked for, and the HEARTBEAT only after "
    "the last") {
  using namespace std::chrono_literals;
  RecordingTransport t;
  rtps::WriterConfig cfg;
  cfg.guid.entity = EntityId{0x00000103};
  cfg.qos.history.kind = HistoryKind::kKeepLast;
  cfg.qos.history.depth = 4;
  rtps::StatefulWriter w(cfg, t, GuidPrefix{});
  auto r = reader(1, uc(1), {});
  r.reliable = true;
  const auto t0 = std::chrono::steady_clock::now();
  w.add_reader(r, t0);
  // 2,000,000 B in 8792-B fragments: 228 DATA_FRAGs, and a HEARTBEAT with the last (a sample
  // of a third of the window or more always ends with one: a Cyclone reader answers
  // HEARTBEAT_FRAG alone only after its NackDelay). The others come every half window (15
  // fragments of the first window, 256 KiB), the last of them three fragments before the end.
  t.sizes_of_write(w, 2'000'000);
  auto carried = Carried::of(t.datagrams);
  REQUIRE(carried.fragments.size() == 228);
  REQUIRE(carried.heartbeats.size() == 16);
  REQUIRE(carried.heartbeats[14] == 224);
  REQUIRE(carried.heartbeats[15] == 227);

  // The reader lost fragments 11-210: the pacer starts (no credit yet), so one run of 32 goes at
  // once and the rest waits for the writer's timer - which sends all of it, with no further
  // request, and ends with the HEARTBEAT.
  const auto m = nack_frag(r, cfg, 1, 11, 200, 1);
  rtps::SteadyTime more{};
  t.sizes_of([&] { more = w.on_nack_frag(r.guid.prefix, m, t0 + 1ms); });
  carried = Carried::of(t.datagrams);
  REQUIRE(carried.fragments.size() == 32);
  REQUIRE(*carried.fragments.begin() == 11);
  REQUIRE(*carried.fragments.rbegin() == 42);
  REQUIRE(carried.heartbeats.empty());
  REQUIRE(more > t0 + 1ms);
  REQUIRE(w.stats().pacing_rate > 0);

  std::vector<std::vector<uint8_t>> rest;
  rtps::SteadyTime at = more;
  for (int i = 0; i < 10000 && w.stats().fragments_retransmitted < 200; ++i) {
    t.sizes_of([&] { at = std::max(at, w.on_timer(at)); });
    for (auto& d : t.datagrams) rest.push_back(std::move(d));
  }
  carried = Carried::of(rest);
  REQUIRE(w.stats().fragments_retransmitted == 200);
  REQUIRE(carried.fragments.size() == 168);
  REQUIRE(*carried.fragments.begin() == 43);
  REQUIRE(*carried.fragments.rbegin() == 210);
  REQUIRE(carried.fragments.count(100) == 1);
  // The only HEARTBEAT with the fragments is in the datagram of the last one.
  REQUIRE(carried.heartbeats == std::vector<size_t>{carried.datagram_of.at(210)});
  // Nothing is left to send.
  t.sizes_of([&] { w.on_timer(at + 1ms); });
  REQUIRE(Carried::of(t.datagrams).fragments.empty());
}

TEST_CASE("A loss halves the window, or takes a fifth off for a reader of big datagrams") {
  auto window_after_nack = [](bool big) {
    RecordingTransport t;
    rtps::WriterConfig cfg = BigDatagramWriter::config();
    rtps::StatefulWriter w(cfg, t, GuidPrefix{});
    auto r = BigDatagramWriter::big_reader();
    if (!big) r.max_datagram = 0;
    const auto t0 = std::chrono::steady_clock::now();
    w.add_reader(r, t0);
    for (int i = 0; i < 4; ++i) t.sizes_of_write(w, 1000);
    REQUIRE(w.stats().window_bytes == 256u << 10);                   // the initial window
    w.on_acknack(r.guid.prefix, acknack(r, cfg, 1, 4, {1}, 1), t0);  // sample 1 missing
    return w.stats().window_bytes;
  };
  REQUIRE(window_after_nack(false) == 131072);
  REQUIRE(window_after_nack(true) == 262144 / 5 * 4);
}

TEST_CASE(
    "Lost fragments of a sample the window governs in datagrams of the MTU halve it once, never "
    "below two such samples") {
  RecordingTransport t;
  rtps::WriterConfig cfg = BigDatagramWriter::config();
  rtps::StatefulWriter w(cfg, t, GuidPrefix{});
  auto r = reader(1, uc(1), {});
  r.reliable = true;
  const auto t0 = std::chrono::steady_clock::now();
  w.add_reader(r, t0);
  // 20000 B: 3 fragments, under a third of max_unacked_bytes - not paced.
  REQUIRE(t.sizes_of_write(w, 20000).size() == 3);
  REQUIRE(w.stats().window_bytes == 256u << 10);  // the initial window
  w.on_nack_frag(r.guid.prefix, nack_frag(r, cfg, 1, 2, 2, 1), t0);
  REQUIRE(w.stats().window_bytes == 128u << 10);
  REQUIRE(w.stats().pacing_rate == 0);
  // The same loss asked for again, and another in what was out then: one cut per window.
  w.on_nack_frag(r.guid.prefix, nack_frag(r, cfg, 1, 2, 2, 2), t0);
  REQUIRE(w.stats().window_bytes == 128u << 10);
  // A 1-MiB sample lost in part: the window makes room for two of them.
  REQUIRE(t.sizes_of_write(w, 1u << 20).size() == 120);
  w.on_nack_frag(r.guid.prefix, nack_frag(r, cfg, 2, 2, 2, 3), t0);
  REQUIRE(w.stats().window_bytes == 2u << 20);
  REQUIRE(w.stats().pacing_rate == 0);
  {  // Two samples the pacer spreads may not fit: the window stops at its cap (max_unacked_bytes).
    rtps::StatefulWriter w2(cfg, t, GuidPrefix{});
    w2.add_reader(r, t0);
    t.sizes_of_write(w2, 3u << 20);
    w2.on_acknack(r.guid.prefix, acknack(r, cfg, 1, 1, {1}, 1), t0);
    REQUIRE(w2.stats().window_bytes == cfg.max_unacked_bytes);
  }

  // In big datagrams (a Fast DDS reader, which loses one now and then however small the
  // window), lost fragments leave the window as it is.
  BigDatagramWriter f;
  REQUIRE(f.t.sizes_of_write(f.w, 200000).size() == 4);
  REQUIRE(f.nack_frag(std::chrono::milliseconds(10)).size() == 1);
  REQUIRE(f.w.stats().window_bytes == 256u << 10);
}

TEST_CASE(
    "An answer held back raises the window's cap, unless the reader queues its answers (Cyclone "
    "DDS)") {
  using namespace std::chrono_literals;
  // A HEARTBEAT announces sample 1; sample 2 goes out after it; 5 ms later the reader
  // acknowledges both - more than the HEARTBEAT announced, so the delay was not its queue's.
  auto after_late_answer = [](bool queued) {
    RecordingTransport t;
    rtps::WriterConfig cfg = BigDatagramWriter::config();  // KEEP_LAST: writes never wait
    rtps::StatefulWriter w(cfg, t, GuidPrefix{});
    auto r = reader(1, uc(1), {});
    r.reliable = true;
    r.queued_answers = queued;
    const auto t0 = std::chrono::steady_clock::now();
    w.add_reader(r, t0);
    t.sizes_of_write(w, 1000);
    w.on_timer(t0 + 1s);  // the periodic HEARTBEAT: 1 unacknowledged
    t.sizes_of_write(w, 1000);
    w.on_acknack(r.guid.prefix, acknack(r, cfg, 3, 0, {}, 1),
                 std::chrono::steady_clock::now() + 5ms);
    return w.stats();
  };
  const size_t base = rtps::WriterConfig{}.max_unacked_bytes;
  const auto late = after_late_answer(false);
  CHECK(late.ack_delay_us >= 5000);
  CHECK(late.ack_delay_us < 6000);
  CHECK(late.window_cap_bytes >= 5 * base);
  const auto queued = after_late_answer(true);
  CHECK(queued.ack_delay_us == 0);
  CHECK(queued.window_cap_bytes == base);
}
