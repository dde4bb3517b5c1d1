// Clock offsets of a recording set (set_clock.hpp, dds_control.hpp's clock_offset, the
// clock_offset mark's note in recording_schema.hpp): the NTP-style arithmetic, the note's exact
// form both ways, and two members over libpubsub's FakeNetwork measuring each other.
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "dds_control.hpp"
#include "pubsub/testing/fake_network.hpp"
#include "set_clock.hpp"

using nlohmann::json;
using service::ClockOffset;
using namespace std::chrono_literals;

TEST_CASE("clock_offset: NTP arithmetic on the reply's times, inconsistent times refused") {
  // Sent at 1000 (ours), arrived at 1500 (theirs), answered at 1600 (theirs), back at 1200.
  const json reply{{"ok", true}, {"recv_ns", 1500}, {"send_ns", 1600}};
  CHECK(service::clock_offset(reply, 1000, 1200) == ClockOffset{450, 50});
  // Their clock behind ours: arrived at 500, answered at 520, back at 1100.
  CHECK(service::clock_offset(json{{"recv_ns", 500}, {"send_ns", 520}}, 1000, 1100) ==
        ClockOffset{-540, 40});
  CHECK_FALSE(service::clock_offset(json{{"ok", true}}, 1000, 1200));
  CHECK_FALSE(service::clock_offset(json{{"recv_ns", "1500"}, {"send_ns", 1600}}, 1000, 1200));
  CHECK_FALSE(service::clock_offset(json{{"recv_ns", 1600}, {"send_ns", 1500}}, 1000, 1200));
  CHECK_FALSE(service::clock_offset(json{{"recv_ns", 1500}, {"send_ns", 1600}}, 1200, 1000));
  // Their time between arrival and answer longer than our whole round trip.
  CHECK_FALSE(service::clock_offset(json{{"recv_ns", 1500}, {"send_ns", 1900}}, 1000, 1200));
  CHECK(service::asks_for_times(json{{"cmd", "status"}, {"clock", true}}));
  CHECK_FALSE(service::asks_for_times(json{{"cmd", "status"}, {"clock", 1}}));
  CHECK_FALSE(service::asks_for_times(json{{"cmd", "status"}}));
}

TEST_CASE("clock_offset mark note: exact form, read back, anything else refused") {
  CHECK(service::clock_note({1234567, 210000}) == "+0.001234567 s, error 0.000210000 s");
  CHECK(service::clock_note({-5000000001, 1}) == "-5.000000001 s, error 0.000000001 s");
  CHECK(service::clock_note({0, 0}) == "+0.000000000 s, error 0.000000000 s");
  for (const ClockOffset c : {ClockOffset{1234567, 210000}, ClockOffset{-5000000001, 1},
                              ClockOffset{86400000000000, 999999999}, ClockOffset{0, 0}})
    CHECK(service::parse_clock_note(service::clock_note(c)) == c);
  for (const char* bad :
       {"", "+1 s, error 0 s", "+0.00123456 s, error 0.000210000 s",
        "+0.001234567 s, error -0.000210000 s", "+0.001234567 s, error 0.000210000 s ",
        "0.001234567 s error 0.1 s", "+0.0012345678 s, error 0.000210000 s"}) {
    INFO(bad);
    CHECK_FALSE(service::parse_clock_note(bad));
  }
  CHECK(service::parse_clock_note("0.000000002 s, error 0.000000001 s") == ClockOffset{2, 1});
}

namespace {

std::unique_ptr<pubsub::Participant> member(const std::shared_ptr<pubsub::FakeNetwork>& net) {
  pubsub::ParticipantOptions o;
  pubsub::use_fake_network(o, net);
  o.announce_period = 100ms;
  o.lease_duration = 3s;
  o.user_data = service::recorder_user_data("rig");
  o.log = [](const std::string&) {};
  auto p = pubsub::Participant::create(o);
  REQUIRE(p.ok());
  return std::move(p).value();
}

}  // namespace

TEST_CASE("SetClock: a member measures the other one, within its error bound of the truth") {
  auto net = pubsub::FakeNetwork::create();
  auto a = member(net);
  auto b = member(net);
  auto other_set = member(net);
  const config::Ipv4Network everyone{0, 0};
  std::vector<std::unique_ptr<service::DdsControl>> controls;
  int n = 0;
  for (auto* p : {a.get(), b.get()}) {
    const std::string host = "host-" + std::to_string(n++);
    auto c = service::DdsControl::start(
        *p, {everyone},
        [host](const json& r) -> json {
          if (r.value("set", std::string()) != "rig") return nullptr;
          return {{"ok", true}, {"member", {{"host", host}, {"address", "198.18.0.9"}}}};
        },
        [](const std::string&) {});
    REQUIRE(c.ok());
    controls.push_back(std::move(c).value());
  }
  std::mutex mu;
  std::condition_variable cv;
  std::vector<service::SetClock::Offset> got;
  service::SetClock::Options o;
  o.set = "rig";
  o.poll = 50ms;
  o.interval = 300ms;
  o.on_offset = [&](const service::SetClock::Offset& off) {
    std::lock_guard lk(mu);
    got.push_back(off);
    cv.notify_all();
  };
  auto clock = service::SetClock::start(*a, std::move(o));
  REQUIRE(clock.ok());
  std::unique_lock lk(mu);
  REQUIRE(cv.wait_for(lk, 20s, [&] { return got.size() >= 2; }));
  for (const auto& off : got) {
    // Only b answers for the set (a's own participant and the other set's are not asked).
    CHECK(off.participant == b->guid().prefix);
    CHECK(off.member == "host host-1, address 198.18.0.9");
    CHECK(off.rounds == 4);
    // One machine, one clock: the true offset is 0, which the bound must cover.
    CHECK(std::abs(off.clock.offset_ns) <= off.clock.error_ns);
    CHECK(off.clock.error_ns < 1000000000);
  }
}
