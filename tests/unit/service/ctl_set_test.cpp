// ctl --dds --set's output (service/src/recorder/ctl_set.hpp): the status table, a line per
// member for other commands, members that did not answer named on stderr, and the exit status.
#include "ctl_set.hpp"

#include <catch2/catch.hpp>

using service::SetMember;
using json = nlohmann::json;

namespace {

SetMember member(uint8_t id, const char* host, const char* addr, std::optional<json> reply) {
  SetMember m;
  m.participant[0] = 0x01;
  m.participant[11] = id;
  m.addresses = addr;
  if (reply) (*reply)["member"] = {{"set", "rig"}, {"host", host}, {"address", addr}};
  m.reply = std::move(reply);
  return m;
}

json status(uint64_t samples, double seconds, bool paused, double offset) {
  return {{"ok", true},
          {"status",
           {{"samples", samples},
            {"bytes", samples * 1000},
            {"seconds", seconds},
            {"lost", 2},
            {"writers", 3},
            {"paused", paused},
            {"mode", "record"},
            {"free_bytes", 12345678901},
            {"wall_clock_offset_s", offset}}}};
}

}  // namespace

TEST_CASE("ctl --set status: a row per member, one that did not answer named, exit 3") {
  std::vector<SetMember> ms = {member(1, "cell-a", "198.18.0.1", status(5000, 10, false, 0)),
                               member(2, "cell-b", "198.18.0.2", status(100, 4, true, -0.25)),
                               member(3, "", "198.18.0.3", std::nullopt)};
  ms[0].clock = service::ClockOffset{1234567, 210000};
  auto armed = status(0, 2, false, 0);
  armed["status"]["armed"] = true;
  ms.push_back(member(4, "cell-d", "198.18.0.4", armed));
  ms[3].clock = service::ClockOffset{-5000000000, 49999};
  const auto o = service::set_output("rig", "status", ms, false);
  CHECK(
      o.out ==
      "MEMBER                           STATE        SAMPLES     AVG/S        MB    MB/S     LOST "
      "WRITERS  FREE GB  STEPS S  OFFSET MS\n"
      "cell-a 198.18.0.1                recording       5000     500.0       5.0    0.50        2 "
      "      3     12.3   +0.000  +1.235\u00b10.210\n"
      "cell-b 198.18.0.2                paused           100      25.0       0.1    0.03        2 "
      "      3     12.3   -0.250  ?\n"
      "cell-d 198.18.0.4                armed              0       0.0       0.0    0.00        2 "
      "      3     12.3   +0.000  -5000.000\u00b10.050\n"
      "3 of 4 members of set rig answered\n");
  CHECK(o.err ==
        "pubsub-recorder ctl: status: participant 010000000000000000000003 (198.18.0.3) of set "
        "rig did not answer\n");
  CHECK(o.exit == service::kExitSetMissing);
}

TEST_CASE("ctl --set tag: a line per member, a refusal is exit 1, all ok exit 0") {
  json ok = {{"ok", true}, {"message", "tag engine-start at 2026-11-29T21:00:00.000Z"}};
  json no = {{"ok", false}, {"error", "a tag name is 1 to 64 characters"}};
  const auto all_ok = service::set_output(
      "rig", "tag", {member(1, "a", "198.18.0.1", ok), member(2, "b", "198.18.0.2", ok)}, false);
  CHECK(all_ok.out ==
        "a 198.18.0.1: tag engine-start at 2026-11-29T21:00:00.000Z\n"
        "b 198.18.0.2: tag engine-start at 2026-11-29T21:00:00.000Z\n"
        "2 of 2 members of set rig answered\n");
  CHECK(all_ok.err.empty());
  CHECK(all_ok.exit == 0);
  const auto one_no = service::set_output(
      "rig", "tag", {member(1, "a", "198.18.0.1", ok), member(2, "b", "198.18.0.2", no)}, false);
  CHECK(one_no.out ==
        "a 198.18.0.1: tag engine-start at 2026-11-29T21:00:00.000Z\n"
        "2 of 2 members of set rig answered, 1 refused\n");
  CHECK(one_no.err == "pubsub-recorder ctl: tag: b 198.18.0.2: a tag name is 1 to 64 characters\n");
  CHECK(one_no.exit == 1);
}

TEST_CASE("ctl --set status --json: one object with every member's reply") {
  std::vector<SetMember> ms = {member(1, "a", "198.18.0.1", status(1, 1, false, 0)),
                               member(2, "", "198.18.0.2", {})};
  ms[0].clock = service::ClockOffset{-42, 7};
  const auto o = service::set_output("rig", "status", ms, true);
  const json j = json::parse(o.out);
  CHECK(j["members"][0]["clock_offset_ns"] == -42);
  CHECK(j["members"][0]["clock_error_ns"] == 7);
  CHECK(j["set"] == "rig");
  REQUIRE(j["members"].size() == 2);
  CHECK(j["members"][0]["answered"] == true);
  CHECK(j["members"][0]["status"]["samples"] == 1);
  CHECK(j["members"][0]["member"]["host"] == "a");
  CHECK(j["members"][1] ==
        json{{"member", "participant 010000000000000000000002 (198.18.0.2)"}, {"answered", false}});
  CHECK(o.exit == service::kExitSetMissing);
}
