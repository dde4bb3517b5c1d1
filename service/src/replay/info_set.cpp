// pubsub-replay info DIR DIR... (service/replay.hpp, info_set): several recordings - a recording
// set's members - side by side: a row per member (who, samples, writers, loss, its time span),
// the total with each writer counted once, and the gaps in coverage (a member that started
// later or ended earlier than the others). One thread; every input opened read-only. Times are
// on the first recording's clock where the members measured their offsets (clock_offset marks,
// as merge corrects them), else as recorded.
#include <algorithm>
#include <climits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "common.hpp"
#include "common/hex.hpp"
#include "service/recording_schema.hpp"
#include "service/replay.hpp"
#include "storage/recording.hpp"

namespace service::replay {
namespace {

using json = nlohmann::json;

// A member whose span starts or ends this much inside the set's is a gap in coverage.
constexpr int64_t kCoverageSlackNs = 1'000'000'000;

struct Member {
  std::string dir;
  std::string member;        // its set_member note, "" when it is not a set's
  std::string set;           // the set's name
  std::string recording_id;  // its start mark's name
  storage::Totals totals;
  std::set<storage::Guid> writers;
  std::vector<storage::Mark> marks;
  std::optional<ClockOffset> clock;  // its clock minus the first recording's
};

Result<Member> read_member(const std::string& dir) {
  auto rec = detail::open_recording(dir);
  if (!rec) return rec.error();
  Member m{dir, "", "", "", {}, {}, {}, std::nullopt};
  auto totals = (*rec)->totals();
  auto writers = (*rec)->writers();
  auto marks = (*rec)->marks();
  if (!totals || !writers || !marks) {
    const Error& e = !totals ? totals.error() : !writers ? writers.error() : marks.error();
    return Error{e.code, dir + ": cannot read the index: " + e.message};
  }
  m.totals = *totals;
  for (const auto& w : *writers) {
    if (w.count > 0) m.writers.insert(w.def.guid);
  }
  for (const auto& k : *marks) {
    if (k.kind == storage::MarkKind::kSetMember) {
      m.set = k.name;
      m.member = k.note;
    }
    if (k.kind == storage::MarkKind::kStart) m.recording_id = k.name;
  }
  m.marks = std::move(*marks);
  return m;
}

struct Gap {
  std::string dir;
  int64_t from = 0, to = 0;
};

std::vector<Gap> coverage_gaps(const std::vector<Member>& ms, int64_t start, int64_t end) {
  std::vector<Gap> gaps;
  for (const auto& m : ms) {
    if (m.totals.records == 0) {
      gaps.push_back({m.dir, start, end});
      continue;
    }
    if (m.totals.first_recv_ns - start > kCoverageSlackNs)
      gaps.push_back({m.dir, start, m.totals.first_recv_ns});
    if (end - m.totals.last_recv_ns > kCoverageSlackNs)
      gaps.push_back({m.dir, m.totals.last_recv_ns, end});
  }
  return gaps;
}

// Its times on the first recording's clock.
void correct(Member& m, const Member& first) {
  m.clock = measured_offset(first.marks, first.member, m.marks, m.member);
  if (!m.clock) return;
  m.totals.first_recv_ns -= m.clock->offset_ns;
  m.totals.last_recv_ns -= m.clock->offset_ns;
}

std::string clock_text(const Member& m, bool first) {
  if (first) return "reference";
  return m.clock ? clock_note(*m.clock) : "not measured";
}

std::string span(const storage::Totals& t) {
  return t.records ? format_iso(t.first_recv_ns) + " .. " + format_iso(t.last_recv_ns) : "-";
}

json member_json(const Member& m) {
  json j{{"dir", m.dir},
         {"member", m.member},
         {"set", m.set},
         {"recording_id", m.recording_id},
         {"samples", m.totals.records},
         {"bytes", m.totals.bytes},
         {"writers", m.writers.size()},
         {"lost", m.totals.lost}};
  j["clock_offset_ns"] = m.clock ? json(m.clock->offset_ns) : json(nullptr);
  j["clock_error_ns"] = m.clock ? json(m.clock->error_ns) : json(nullptr);
  j["start"] = m.totals.records ? json(format_iso(m.totals.first_recv_ns)) : json(nullptr);
  j["end"] = m.totals.records ? json(format_iso(m.totals.last_recv_ns)) : json(nullptr);
  return j;
}

}  // namespace

int info_set(const InfoSetOptions& o, std::ostream& out, std::ostream& err) {
  std::vector<Member> ms;
  for (const auto& dir : o.dirs) {
    auto m = read_member(dir);
    if (!m) return detail::report(err, kExitUsage, m.error());
    ms.push_back(std::move(*m));
  }
  for (size_t i = 1; i < ms.size(); ++i) correct(ms[i], ms[0]);
  uint64_t samples = 0, lost = 0;
  int64_t start = INT64_MAX, end = INT64_MIN;
  std::map<storage::Guid, int> holders;
  std::set<std::string> sets, ids;
  for (const auto& m : ms) {
    samples += m.totals.records;
    lost += m.totals.lost;
    if (m.totals.records) {
      start = std::min(start, m.totals.first_recv_ns);
      end = std::max(end, m.totals.last_recv_ns);
    }
    for (const auto& g : m.writers) ++holders[g];
    sets.insert(m.set);
    ids.insert(m.recording_id);
  }
  const size_t several = static_cast<size_t>(
      std::count_if(holders.begin(), holders.end(), [](const auto& h) { return h.second > 1; }));
  const auto gaps = samples ? coverage_gaps(ms, start, end) : std::vector<Gap>{};
  if (o.json) {
    json j{{"members", json::array()},
           {"samples", samples},
           {"lost", lost},
           {"writers", holders.size()},
           {"writers_in_several", several}};
    for (const auto& m : ms) j["members"].push_back(member_json(m));
    j["start"] = samples ? json(format_iso(start)) : json(nullptr);
    j["end"] = samples ? json(format_iso(end)) : json(nullptr);
    j["coverage_gaps"] = json::array();
    for (const auto& g : gaps)
      j["coverage_gaps"].push_back(
          {{"dir", g.dir}, {"from", format_iso(g.from)}, {"to", format_iso(g.to)}});
    out << j.dump(2) << '\n';
    return kExitOk;
  }
  std::vector<std::vector<std::string>> rows{
      {"RECORDING", "MEMBER", "SAMPLES", "WRITERS", "LOST", "RECEIVED", "CLOCK"}};
  for (const auto& m : ms) {
    rows.push_back({m.dir, m.member.empty() ? "-" : m.member, std::to_string(m.totals.records),
                    std::to_string(m.writers.size()), std::to_string(m.totals.lost), span(m.totals),
                    clock_text(m, &m == &ms.front())});
  }
  out << detail::plural(ms.size(), "recording");
  if (sets.size() == 1 && !sets.begin()->empty()) out << " of recording set " << *sets.begin();
  if (ids.size() == 1 && !ids.begin()->empty()) out << ", recording id " << *ids.begin();
  out << ":\n";
  detail::print_table(out, rows, {false, false, true, true, true, false, false});
  out << "total: " << detail::plural(samples, "sample") << " from "
      << detail::plural(holders.size(), "writer") << " (" << several
      << " recorded by more than one member: their samples count once per member), " << lost
      << " lost";
  if (samples) out << ", " << format_iso(start) << " .. " << format_iso(end);
  out << '\n';
  if (sets.size() > 1) out << "note: the recordings belong to different sets or to none\n";
  if (ids.size() > 1) out << "note: the recordings have different recording ids\n";
  if (gaps.empty() && samples) out << "coverage: every member over the whole time\n";
  for (const auto& g : gaps) {
    out << "coverage gap: " << g.dir << " recorded nothing from " << format_iso(g.from) << " to "
        << format_iso(g.to) << '\n';
  }
  return kExitOk;
}

Result<std::map<std::string, std::string>> writer_members(const std::vector<std::string>& dirs) {
  std::map<std::string, std::string> out;
  for (const auto& dir : dirs) {
    auto m = read_member(dir);
    if (!m) return m.error();
    const std::string name = m->member.empty() ? dir : m->member;
    for (const auto& g : m->writers) {
      auto [it, fresh] = out.emplace(common::to_hex(g), name);
      if (!fresh) it->second += "; " + name;
    }
  }
  return out;
}

}  // namespace service::replay
