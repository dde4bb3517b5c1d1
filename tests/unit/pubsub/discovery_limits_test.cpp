// Discovery's bounds (ParticipantOptions::discovery_limits) over a FakeNetwork: participants over
// max_participants and endpoints over max_endpoints_per_participant / max_endpoints are refused,
// counted in ParticipantStats, logged once, and what was taken still matches and delivers. (The
// per-address bound is driven by tests/integration/recorder/discovery_flood.sh, whose flood
// announces many participants at one address.)
#include <catch2/catch.hpp>
#include <mutex>
#include <string>
#include <vector>

#include "test_util.hpp"

using namespace pubsub;
using namespace std::chrono_literals;
using pubsub::test::eventually;
using pubsub::test::fake_options;

namespace {

struct Log {
  std::mutex mu;
  std::vector<std::string> lines;
  std::vector<std::string> refusals() {
    std::lock_guard lk(mu);
    std::vector<std::string> out;
    for (const auto& l : lines)
      if (l.rfind("discovery: refused ", 0) == 0) out.push_back(l);
    return out;
  }
};

std::unique_ptr<Participant> make(const std::shared_ptr<FakeNetwork>& net,
                                  DiscoveryLimits limits = {}, Log* log = nullptr) {
  ParticipantOptions o = fake_options(net);
  o.discovery_limits = limits;
  if (log) {
    o.log = [log](const std::string& l) {
      std::lock_guard lk(log->mu);
      log->lines.push_back(l);
    };
  }
  auto p = Participant::create(o);
  REQUIRE(p.ok());
  return std::move(p).value();
}

}  // namespace

TEST_CASE(
    "Discovery limits: participants beyond max_participants are refused, counted, logged once") {
  auto net = FakeNetwork::create();
  Log log;
  DiscoveryLimits limits;
  limits.max_participants = 2;
  auto watcher = make(net, limits, &log);
  std::vector<std::unique_ptr<Participant>> others;
  for (int i = 0; i < 4; ++i) others.push_back(make(net));
  // Two are taken; the other two are refused at each announcement (every 200 ms).
  REQUIRE(eventually([&] { return watcher->stats().participants_refused >= 4; }));
  CHECK(watcher->discovered_participants().size() == 2);
  CHECK(watcher->stats().remote_participants == 2);
  const auto lines = log.refusals();
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].find(": 2 participants known (max_participants 2); further participants over a "
                      "limit are counted, not logged") != std::string::npos);
  // One of the two known leaves: a refused one is taken at its next announcement.
  const auto known = watcher->discovered_participants();
  for (auto& o : others)
    if (o && o->guid().prefix == known[0].guid_prefix) o.reset();
  REQUIRE(eventually([&] {
    const auto now = watcher->discovered_participants();
    return now.size() == 2 && (now[0].guid_prefix != known[0].guid_prefix &&
                               now[1].guid_prefix != known[0].guid_prefix);
  }));
  CHECK(log.refusals().size() == 1);
}

TEST_CASE("Discovery limits: endpoints beyond the per-participant and total bounds are forgotten") {
  auto net = FakeNetwork::create();
  Log log;
  DiscoveryLimits limits;
  limits.max_endpoints_per_participant = 3;
  limits.max_endpoints = 5;
  auto watcher = make(net, limits, &log);
  auto a = make(net);
  auto b = make(net);
  // a announces 4 writers: 3 taken, the 4th refused (per participant). b announces 3: 2 taken
  // (5 in all), the 3rd refused (total).
  std::vector<std::unique_ptr<Writer>> writers;
  for (int i = 0; i < 4; ++i) {
    auto w = a->create_writer({"a" + std::to_string(i), "T"});
    REQUIRE(w.ok());
    writers.push_back(std::move(w).value());
  }
  REQUIRE(eventually([&] { return watcher->stats().remote_writers == 3; }));
  for (int i = 0; i < 3; ++i) {
    auto w = b->create_writer({"b" + std::to_string(i), "T"});
    REQUIRE(w.ok());
    writers.push_back(std::move(w).value());
  }
  REQUIRE(eventually([&] { return watcher->stats().endpoints_refused == 2; }));
  REQUIRE(eventually([&] { return watcher->stats().remote_writers == 5; }));
  std::this_thread::sleep_for(300ms);  // nothing more arrives
  CHECK(watcher->stats().remote_writers == 5);
  CHECK(watcher->stats().endpoints_refused == 2);
  const auto lines = log.refusals();
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].find("its participant has 3 endpoints (max_endpoints_per_participant 3); further "
                      "endpoints over a limit are counted, not logged") != std::string::npos);
  // A writer that was taken still delivers to a reader of the watcher.
  std::atomic<int> got{0};
  auto r =
      watcher->create_reader({"a0", "T"}, {}, [&](const SampleInfo&, Bytes) { got.fetch_add(1); });
  REQUIRE(r.ok());
  REQUIRE(writers[0]->wait_for_readers(1, 10s));
  const std::vector<uint8_t> v{1, 2, 3};
  REQUIRE(writers[0]->write(pubsub::test::as_bytes(v)).ok());
  CHECK(eventually([&] { return got.load() == 1; }));
}
