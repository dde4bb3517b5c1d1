// play over libpubsub's FakeNetwork into a raw subscriber: what arrives, in which order, how fast.
#include <atomic>
#include <catch2/catch.hpp>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "shapes_fixture.hpp"

using namespace replay_test;
namespace replay = service::replay;

namespace {

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kSec = 1'000'000'000;

// The received samples of one replay writer, in arrival order.
std::vector<Got> of_writer(const std::vector<Got>& all, const pubsub::Guid& g) {
  std::vector<Got> v;
  for (const auto& s : all) {
    if (s.writer == g) v.push_back(s);
  }
  return v;
}

// Checks every played writer: sequence numbers 1..n, and exactly the model's records of the
// recorded writer (those `take` accepts), byte for byte, in order, with key hash, source time and
// status.
void check_delivery(const Model& m, const replay::PlayReport& rep, const std::vector<Got>& got,
                    const std::function<bool(const RecordSpec&)>& take) {
  size_t total = 0;
  for (const auto& w : rep.writers) {
    size_t widx = m.writer_guid.size();
    for (size_t i = 0; i < m.writer_guid.size(); ++i) {
      if (m.writer_guid[i] == w.recorded_guid) widx = i;
    }
    REQUIRE(widx < m.writer_guid.size());
    std::vector<const RecordSpec*> want;
    for (const auto& r : m.records) {
      if (r.writer == widx && take(r)) want.push_back(&r);
    }
    const auto have = of_writer(got, w.replay_guid);
    INFO("topic " << w.topic << " recorded writer " << widx);
    REQUIRE(have.size() == want.size());
    CHECK(w.samples == want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      const RecordSpec& r = *want[i];
      const Got& g = have[i];
      CHECK(g.sn == static_cast<int64_t>(i + 1));
      CHECK(g.topic == m.topics[r.topic].name);
      CHECK(g.type == m.topics[r.topic].type);
      REQUIRE(to_string(g.payload) == to_string(r.payload, 0));
      if (r.meta.has_key_hash) {
        REQUIRE(g.key_hash.has_value());
        CHECK(g.key_hash->value == r.meta.key_hash);
      } else {
        CHECK_FALSE(g.key_hash.has_value());
      }
      const bool has_source = (r.meta.flags & service::kFlagHasSourceTimestamp) != 0;
      CHECK(g.source_ns == (has_source ? r.meta.source_ns : r.meta.reception_ns));
      const uint32_t status = ((r.meta.flags & service::kFlagDisposed) ? 1u : 0u) |
                              ((r.meta.flags & service::kFlagUnregistered) ? 2u : 0u);
      CHECK(g.status_info == status);
    }
    total += want.size();
  }
  CHECK(got.size() == total);
}

// One topic, `hz` samples per second for `seconds`, evenly spaced reception times.
Model periodic(int hz, double seconds, size_t extra = 56) {
  Model m;
  const size_t t = m.add_topic({"Periodic", "bench::Tick", false});
  const size_t w = m.add_writer(t);
  const int n = static_cast<int>(hz * seconds);
  for (int i = 0; i < n; ++i) {
    add_record(m, w, i + 1, i * (kSec / hz),
               make_payload(t, w, static_cast<uint32_t>(i + 1), 0, extra));
  }
  return m;
}

struct PlayRun {
  int code = -1;
  replay::PlayReport report;
  std::vector<Got> got;
  std::string err;
};

PlayRun run_play(const std::string& dir, const std::function<void(replay::PlayOptions&)>& tweak,
                 size_t expect_samples) {
  auto net = pubsub::FakeNetwork::create();
  Subscriber sub(net);
  auto o = play_options(dir, net);
  tweak(o);
  std::ostringstream err;
  PlayRun r;
  r.code = replay::play(o, err, &r.report);
  sub.wait_for(expect_samples, 5s);
  r.got = sub.samples();
  r.err = err.str();
  return r;
}

}  // namespace

TEST_CASE("play delivers every sample byte-identical, in per-writer order, keys preserved") {
  TempDir tmp;
  Model m = make_shapes();
  // A sample larger than a datagram (DATA_FRAG) and a dispose of instance 2, on a third writer
  // of Square.
  const size_t w5 = m.add_writer(0);
  add_record(m, w5, 1, 1500 * kMs, make_payload(0, w5, 1, 2, 200'000), true, key_hash_of(2));
  storage::Bytes key{std::byte{0}, std::byte{1}, std::byte{0}, std::byte{0}};
  put_u32_le(key, 2);
  add_record(m, w5, 2, 1600 * kMs, key, true, key_hash_of(2),
             service::kFlagDisposed | service::kFlagKeyOnly);
  std::stable_sort(m.records.begin(), m.records.end(),
                   [](const RecordSpec& a, const RecordSpec& b) {
                     return a.meta.reception_ns < b.meta.reception_ns;
                   });
  write_recording(tmp.sub("rec"), m);

  auto r = run_play(
      tmp.sub("rec"), [](replay::PlayOptions& o) { o.rate = 4; }, m.records.size());
  INFO(r.err);
  REQUIRE(r.code == replay::kExitOk);
  CHECK(r.report.samples == m.records.size());
  REQUIRE(r.report.writers.size() == 5);  // the writer of "Empty" has nothing to play
  for (const auto& w : r.report.writers) {
    CHECK(w.acknowledged);
    CHECK(w.reliable == (w.topic != "Circle"));
  }
  check_delivery(m, r.report, r.got, [](const RecordSpec&) { return true; });
  // The dispose arrived as one (key only, status disposed).
  bool disposed = false;
  for (const auto& g : r.got) disposed |= g.status_info == 1 && g.key_only;
  CHECK(disposed);
}

TEST_CASE("play --rate 2 takes about half the time of --rate 1, --fast is not paced") {
  TempDir tmp;
  Model m = periodic(1000, 2.0);
  write_recording(tmp.sub("rec"), m);
  const size_t n = m.records.size();

  auto r1 = run_play(
      tmp.sub("rec"), [](replay::PlayOptions& o) { o.rate = 1; }, n);
  INFO(r1.err);
  REQUIRE(r1.code == replay::kExitOk);
  CHECK(r1.got.size() == n);
  CHECK(r1.report.publish_seconds >= 1.8);
  CHECK(r1.report.publish_seconds <= 2.6);
  CHECK(r1.report.lateness.count == n);

  auto r2 = run_play(
      tmp.sub("rec"), [](replay::PlayOptions& o) { o.rate = 2; }, n);
  INFO(r2.err);
  REQUIRE(r2.code == replay::kExitOk);
  CHECK(r2.got.size() == n);
  CHECK(r2.report.publish_seconds >= 0.9);
  CHECK(r2.report.publish_seconds <= 1.4);

  auto rf = run_play(
      tmp.sub("rec"), [](replay::PlayOptions& o) { o.fast = true; }, n);
  INFO(rf.err);
  REQUIRE(rf.code == replay::kExitOk);
  CHECK(rf.got.size() == n);
  CHECK(rf.report.publish_seconds < 0.5);
  CHECK(rf.report.lateness.count == 0);
  WARN("rate 1: " << r1.report.publish_seconds << " s, rate 2: " << r2.report.publish_seconds
                  << " s, fast: " << rf.report.publish_seconds << " s; late p99 at rate 1 "
                  << r1.report.lateness.p99_ns / 1000 << " us");
}

TEST_CASE("play --topics --start --end publishes exactly what export selects") {
  TempDir tmp;
  Model m = make_shapes();
  write_recording(tmp.sub("rec"), m);
  replay::Selection sel;
  sel.topics = {"S*", "rt/*"};
  sel.start = replay::TimeArg{false, kSec / 2};
  sel.end = *replay::parse_time_arg("2026-11-21T23:38:02.250Z");

  replay::ExportOptions eo;
  eo.dir = tmp.sub("rec");
  eo.selection = sel;
  std::ostringstream out, err;
  REQUIRE(replay::export_records(eo, out, err) == replay::kExitOk);
  std::multiset<std::string> exported;
  std::istringstream in(out.str());
  for (std::string line; std::getline(in, line);) {
    exported.insert(
        base64_decode(nlohmann::json::parse(line)["payload_base64"].get<std::string>()));
  }
  const int64_t start = kT0 + 1 * kMs + kSec / 2, end = kT0 + 2250 * kMs;
  auto take = [&](const RecordSpec& r) {
    const std::string& name = m.topics[r.topic].name;
    return (name == "Square" || name == "rt/chatter") && r.meta.reception_ns >= start &&
           r.meta.reception_ns < end;
  };
  size_t want = 0;
  for (const auto& r : m.records) want += take(r);
  REQUIRE(exported.size() == want);

  auto r = run_play(
      tmp.sub("rec"),
      [&](replay::PlayOptions& o) {
        o.selection = sel;
        o.rate = 4;
      },
      want);
  INFO(r.err);
  REQUIRE(r.code == replay::kExitOk);
  check_delivery(m, r.report, r.got, take);
  std::multiset<std::string> played;
  for (const auto& g : r.got) played.insert(to_string(g.payload));
  CHECK(played == exported);
}

TEST_CASE("play --start paces from the first selected sample, not from the recording's start") {
  TempDir tmp;
  Model m = make_shapes();
  write_recording(tmp.sub("rec"), m);
  auto r = run_play(
      tmp.sub("rec"),
      [](replay::PlayOptions& o) {
        o.selection.start = replay::TimeArg{false, 2 * kSec};
        o.selection.end = replay::TimeArg{false, 2 * kSec + kSec / 2};
      },
      1);
  INFO(r.err);
  REQUIRE(r.code == replay::kExitOk);
  CHECK(r.report.samples > 0);
  // The selection spans about 0.49 s; paced from the start of the recording it would take 2.5 s.
  CHECK(r.report.publish_seconds >= 0.4);
  CHECK(r.report.publish_seconds < 1.5);
}

TEST_CASE("play --loop 3 publishes the selection three times from one writer per recorded one") {
  TempDir tmp;
  Model m = periodic(1000, 0.05);
  write_recording(tmp.sub("rec"), m);
  auto r = run_play(
      tmp.sub("rec"), [](replay::PlayOptions& o) { o.loops = 3; }, 150);
  INFO(r.err);
  REQUIRE(r.code == replay::kExitOk);
  CHECK(r.report.loops == 3);
  REQUIRE(r.got.size() == 150);
  for (size_t i = 0; i < 150; ++i) {
    CHECK(r.got[i].sn == static_cast<int64_t>(i + 1));
    CHECK(to_string(r.got[i].payload) == to_string(m.records[i % 50].payload, 0));
  }
  CHECK(r.report.publish_seconds >= 0.14);
  CHECK(r.report.publish_seconds < 1.0);
}

TEST_CASE("play --wait-readers without readers fails naming the topics") {
  TempDir tmp;
  Model m = make_shapes();
  write_recording(tmp.sub("rec"), m);
  auto net = pubsub::FakeNetwork::create();
  auto o = play_options(tmp.sub("rec"), net);
  o.wait_timeout = std::chrono::milliseconds(500);
  std::ostringstream err;
  replay::PlayReport rep;
  const auto t0 = std::chrono::steady_clock::now();
  CHECK(replay::play(o, err, &rep) == replay::kExitProblems);
  CHECK(std::chrono::steady_clock::now() - t0 < 5s);
  CHECK(rep.samples == 0);
  const std::string s = err.str();
  CHECK(count_lines(s) == 1);
  CHECK(s.find("pubsub-replay: no readers") == 0);
  CHECK(s.find("Square (0 matched)") != std::string::npos);
  CHECK(s.find("Circle") != std::string::npos);
  CHECK(s.find("rt/chatter") != std::string::npos);
}

TEST_CASE("play without --wait-readers: no reader at all is exit 1, topics without one are named") {
  TempDir tmp;
  Model m = make_shapes();
  write_recording(tmp.sub("rec"), m);
  auto net = pubsub::FakeNetwork::create();
  auto o = play_options(tmp.sub("rec"), net);
  o.wait_readers = 0;
  o.rate = 4;
  {
    std::ostringstream err;
    replay::PlayReport rep;
    CHECK(replay::play(o, err, &rep) == replay::kExitProblems);
    CHECK(rep.samples == m.records.size());
    const std::string s = err.str();
    INFO(s);
    CHECK(s.find("pubsub-replay: played ") == 0);
    CHECK(s.substr(s.find('\n') + 1) ==
          "pubsub-replay: no readers: no reader matched any of the 3 topics played, so nothing "
          "was delivered (start the readers first, or give --wait-readers N)\n");
  }
  // A reader of Square only: played, exit 0, the other topics named.
  auto p = pubsub::Participant::create(Subscriber::options(net));
  REQUIRE(p);
  pubsub::RawReaderOptions ro;
  ro.include = {"Square"};
  pubsub::RawReaderListener l;
  l.on_sample = [](const pubsub::RawSample&) { return true; };
  auto square = p.value()->create_raw_reader(ro, l);
  REQUIRE(square);
  std::ostringstream err;
  CHECK(replay::play(o, err) == replay::kExitOk);
  const std::string s = err.str();
  INFO(s);
  CHECK(s.find("pubsub-replay: warning: no reader matched these topics while they were played: "
               "Circle, rt/chatter\n") != std::string::npos);
}

TEST_CASE("play stops cleanly when asked and reports what it published") {
  TempDir tmp;
  Model m = periodic(100, 10.0);
  write_recording(tmp.sub("rec"), m);
  std::atomic<bool> stop{false};
  std::thread stopper([&] {
    std::this_thread::sleep_for(700ms);
    stop = true;
  });
  auto r = run_play(
      tmp.sub("rec"), [&](replay::PlayOptions& o) { o.stop = &stop; }, 1);
  stopper.join();
  INFO(r.err);
  CHECK(r.code == replay::kExitOk);
  CHECK(r.report.interrupted);
  CHECK(r.report.samples > 10);
  CHECK(r.report.samples < 300);
  CHECK(r.err.find("interrupted after") != std::string::npos);
  // Every published sample was delivered (acknowledged before the participant went away).
  CHECK(r.got.size() == r.report.samples);
}

TEST_CASE("play with a selection that holds no samples says so") {
  TempDir tmp;
  Model m = make_shapes();
  write_recording(tmp.sub("rec"), m);
  auto net = pubsub::FakeNetwork::create();
  auto o = play_options(tmp.sub("rec"), net);
  o.selection.topics = {"Empty"};
  std::ostringstream err;
  CHECK(replay::play(o, err) == replay::kExitOk);
  CHECK(err.str() == "pubsub-replay: nothing to play: the selection holds no samples\n");
}

TEST_CASE("play prints progress with elapsed/total, samples/s and late p99") {
  TempDir tmp;
  Model m = periodic(1000, 1.5);
  write_recording(tmp.sub("rec"), m);
  auto r = run_play(
      tmp.sub("rec"),
      [](replay::PlayOptions& o) {
        o.progress = true;
        o.progress_interval = std::chrono::milliseconds(500);
      },
      m.records.size());
  REQUIRE(r.code == replay::kExitOk);
  INFO(r.err);
  CHECK(r.err.find("/1.5 s") != std::string::npos);
  CHECK(r.err.find("samples/s") != std::string::npos);
  CHECK(r.err.find("late p99") != std::string::npos);
  CHECK(r.err.find("pubsub-replay: played 1500 samples") != std::string::npos);
}

TEST_CASE("play skips a corrupted chunk, publishes the rest and exits 1") {
  TempDir tmp;
  Model m = make_shapes();
  storage::SegmentWriterOptions opt;
  opt.chunk_max_bytes = 8192;
  opt.compression = storage::Compression::kNone;
  write_recording(tmp.sub("rec"), m, opt);
  REQUIRE(corrupt_data_chunk(tmp.sub("rec"), 3).first > 0);
  auto r = run_play(
      tmp.sub("rec"), [](replay::PlayOptions& o) { o.fast = true; }, m.records.size());
  INFO(r.err);
  CHECK(r.code == replay::kExitProblems);
  CHECK(r.report.problems == 1);
  CHECK(r.err.find("warning: skipping damaged data: corrupt chunk in segments/00000001.seg") !=
        std::string::npos);
  CHECK(r.err.find("damaged chunks were skipped") != std::string::npos);
  CHECK(r.report.samples < m.records.size());
  CHECK(r.report.samples > m.records.size() / 2);
  CHECK(r.got.size() == r.report.samples);
}

namespace {

template <typename Pred>
bool test_eventually(Pred pred, std::chrono::milliseconds timeout) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < end) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return pred();
}

}  // namespace

TEST_CASE("play hands out the looked-up TypeObjects it replays through TypeLookup") {
  // The getTypes_Out Cyclone DDS sent for ddsperf's KeyedSeq: one COMPLETE TypeObject.
  const std::string hex =
      "A4000000D14A80528E00000001000000F2C6E6285A68C8F6CD7C4203C46CB200"
      "76000000F25101001100000000000000090000004B6579656453657100000000"
      "5600000003000000120000000000000001000700040000007365710000000000"
      "150000000100000031000700070000006B657976616C0000000000001A000000"
      "02000000010080F3010000020800000062616767616765000000000077658E5B"
      "0400000000000000";
  storage::Bytes out;
  for (size_t i = 0; i < hex.size(); i += 2)
    out.push_back(static_cast<std::byte>(std::stoul(hex.substr(i, 2), nullptr, 16)));
  TempDir tmp;
  Model m = periodic(100, 10.0);
  m.types.push_back({"bench::Tick", storage::TypeSource::kLookup, "struct Tick { long a; };", out});
  write_recording(tmp.sub("rec"), m);

  auto net = pubsub::FakeNetwork::create();
  Subscriber sub(net);
  auto o = play_options(tmp.sub("rec"), net);
  std::atomic<bool> stop{false};
  o.stop = &stop;
  std::ostringstream err;
  std::thread player([&] { (void)replay::play(o, err); });
  pubsub::GuidPrefix replayer{};
  // The replay's participant announces itself before it takes on the recorded types; its
  // writers come after them (as a reader that asks for types sees it): wait for a writer too.
  const bool found = test_eventually(
      [&] {
        const auto topics = sub.participant().discovered_topics();
        if (std::none_of(topics.begin(), topics.end(), [](const auto& t) { return t.writers > 0; }))
          return false;
        for (const auto& d : sub.participant().discovered_participants())
          if (d.user_data == "pubsub-replay") {
            replayer = d.guid_prefix;
            return true;
          }
        return false;
      },
      5s);
  std::mutex mu;
  std::vector<uint8_t> got;
  if (found) {
    std::array<uint8_t, 15> id{0xf2, 0xc6, 0xe6, 0x28, 0x5a, 0x68, 0xc8, 0xf6,
                               0xcd, 0x7c, 0x42, 0x03, 0xc4, 0x6c, 0xb2};
    sub.participant().request_types(replayer, std::vector<std::array<uint8_t, 15>>{id}, 5s,
                                    [&](const pubsub::TypeLookupReply& r) {
                                      std::lock_guard lk(mu);
                                      got = r.types;
                                      return true;
                                    });
    (void)test_eventually(
        [&] {
          std::lock_guard lk(mu);
          return !got.empty();
        },
        5s);
  }
  stop = true;
  player.join();
  REQUIRE(found);
  std::lock_guard lk(mu);
  // The getTypes_Out handed out is byte for byte the one Cyclone DDS sent the recorder.
  CHECK(got == std::vector<uint8_t>(reinterpret_cast<const uint8_t*>(out.data()),
                                    reinterpret_cast<const uint8_t*>(out.data()) + out.size()));
}
