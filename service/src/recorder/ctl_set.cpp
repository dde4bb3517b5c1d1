// ctl_set.hpp: the text of a recording set's replies.
#include "ctl_set.hpp"

#include <cstdio>

#include "common/hex.hpp"
#include "text.hpp"

namespace service {
namespace {

using json = nlohmann::json;

// "robot-a 198.18.0.1": the member as it names itself, else as discovery showed it.
std::string member_name(const SetMember& m) {
  if (m.reply && m.reply->contains("member") && (*m.reply)["member"].is_object()) {
    const json& j = (*m.reply)["member"];
    return j.value("host", std::string("?")) + " " + j.value("address", m.addresses);
  }
  return "participant " + common::to_hex(m.participant) + " (" + m.addresses + ")";
}

// "+12.345±0.210": the member's clock minus ours in milliseconds, and the error bound; "?"
// without a measurement.
std::string offset_ms(const std::optional<ClockOffset>& c) {
  if (!c) return "?";
  char b[64];
  std::snprintf(b, sizeof b, "%+.3f\u00b1%.3f", static_cast<double>(c->offset_ns) / 1e6,
                static_cast<double>(c->error_ns) / 1e6);
  return b;
}

std::string status_row(const std::string& name, const json& s,
                       const std::optional<ClockOffset>& c) {
  const double seconds = s.value("seconds", 0.0);
  const auto samples = s.value("samples", uint64_t{0});
  const auto bytes = s.value("bytes", uint64_t{0});
  const std::string state = s.value("mode", std::string("record")) == "snapshot" ? "snapshot"
                            : s.value("armed", false)                            ? "armed"
                            : s.value("paused", false)                           ? "paused"
                                                                                 : "recording";
  char row[512];
  std::snprintf(
      row, sizeof row, "%-32s %-9s %10llu %9.1f %9.1f %7.2f %8llu %7llu %8.1f %+8.3f  %s\n",
      name.c_str(), state.c_str(), static_cast<unsigned long long>(samples),
      seconds > 0 ? static_cast<double>(samples) / seconds : 0.0, static_cast<double>(bytes) / 1e6,
      seconds > 0 ? static_cast<double>(bytes) / 1e6 / seconds : 0.0,
      static_cast<unsigned long long>(s.value("lost", uint64_t{0})),
      static_cast<unsigned long long>(s.value("writers", uint64_t{0})),
      static_cast<double>(s.value("free_bytes", uint64_t{0})) / 1e9,
      s.value("wall_clock_offset_s", 0.0), offset_ms(c).c_str());
  return row;
}

}  // namespace

SetOutput set_output(const std::string& set, const std::string& cmd,
                     const std::vector<SetMember>& members, bool as_json) {
  SetOutput o;
  json all = json::array();
  size_t answered = 0, refused = 0;
  if (cmd == "status" && !as_json) {
    char head[256];
    std::snprintf(head, sizeof head, "%-32s %-9s %10s %9s %9s %7s %8s %7s %8s %8s  %s\n", "MEMBER",
                  "STATE", "SAMPLES", "AVG/S", "MB", "MB/S", "LOST", "WRITERS", "FREE GB",
                  "STEPS S", "OFFSET MS");
    o.out = head;
  }
  for (const auto& m : members) {
    const std::string name = member_name(m);
    if (!m.reply) {
      o.err += "pubsub-recorder ctl: " + cmd + ": " + name + " of set " + set + " did not answer\n";
      all.push_back({{"member", name}, {"answered", false}});
      continue;
    }
    ++answered;
    const json& r = *m.reply;
    if (!r.value("ok", false)) {
      ++refused;
      o.err += "pubsub-recorder ctl: " + cmd + ": " + name + ": " +
               r.value("error", std::string("refused")) + "\n";
    } else if (cmd == "status" && !as_json) {
      o.out += status_row(name, r.value("status", json::object()), m.clock);
    } else if (cmd != "status") {
      o.out += name + ": " + r.value("message", std::string("done")) + "\n";
    }
    json entry = r;
    entry["answered"] = true;
    if (m.clock) {
      entry["clock_offset_ns"] = m.clock->offset_ns;
      entry["clock_error_ns"] = m.clock->error_ns;
    }
    all.push_back(std::move(entry));
  }
  if (cmd == "status" && as_json) {
    o.out = json{{"set", set}, {"members", all}}.dump() + "\n";
  } else {
    o.out += std::to_string(answered) + " of " + std::to_string(members.size()) +
             " members of set " + set + " answered" +
             (refused ? ", " + std::to_string(refused) + " refused" : "") + "\n";
  }
  o.exit = answered < members.size() ? kExitSetMissing : refused ? 1 : 0;
  return o;
}

}  // namespace service
