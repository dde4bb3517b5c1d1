// info, verify, recover and reindex: views of a recording and its repairs (reindex rewrites only
// the index; recover cuts torn tails after copying them to DIR/recovered/).
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "common.hpp"
#include "common/hex.hpp"
#include "common/unix_socket.hpp"
#include "service/recording_schema.hpp"

namespace service::replay {
namespace {

using detail::report;

double topic_rate(uint64_t count, int64_t first_ns, int64_t last_ns) {
  if (count < 2 || last_ns <= first_ns) return 0;
  return static_cast<double>(count - 1) * 1e9 / static_cast<double>(last_ns - first_ns);
}

std::string reliability_of(const storage::TopicDef& def) {
  if (def.qos.empty()) return "?";
  const auto q = decode_qos(def.qos);
  if (!q) return "?";
  return q->reliability == pubsub::ReliabilityKind::kReliable ? "reliable" : "best_effort";
}

nlohmann::json time_or_null(uint64_t count, int64_t ns) {
  if (count == 0) return nullptr;
  return format_iso(ns);
}

std::string fmt_rate(double r) {
  char buf[32];
  std::snprintf(buf, sizeof buf, r >= 100 || r == 0 ? "%.0f" : "%.2f", r);
  return buf;
}

// The state a person reads: "live" while a writer holds the recording's lock, else the close state.
std::string state_name(const storage::Recording& rec) {
  return rec.live() ? "live" : storage::to_string(rec.close_state());
}

bool repaired_unclean(const storage::Diagnosis& d) {
  return d.repaired.empty() ||
         std::any_of(d.repaired.begin(), d.repaired.end(), [](const storage::Damage& x) {
           return x.kind == storage::Damage::Kind::kUnclean;
         });
}

// Damage other than an unclean close (a state, which recover finishes).
bool damaged(const storage::Diagnosis& d) {
  return std::any_of(d.damages.begin(), d.damages.end(), [](const storage::Damage& x) {
    return x.kind != storage::Damage::Kind::kUnclean;
  });
}

bool index_missing(const storage::Diagnosis& d) {
  return !d.damages.empty() && d.damages.front().kind == storage::Damage::Kind::kIndexMissing;
}

nlohmann::json damages_json(const std::vector<storage::Damage>& ds,
                            const std::map<storage::TopicId, std::string>& names,
                            const std::string& dir, bool with_repair) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& d : ds) {
    nlohmann::json j;
    j["kind"] = storage::to_string(d.kind);
    j["segment"] = d.segment;
    j["offset"] = d.offset;
    j["chunks"] = d.chunks;
    j["samples"] = d.records;
    j["samples_exact"] = d.records_exact;
    j["bytes"] = d.bytes;
    j["text"] = detail::describe_damage(d, names);
    if (with_repair)
      j["repair"] = std::string("pubsub-replay ") + storage::repair_command(d.kind) + " " + dir;
    a.push_back(std::move(j));
  }
  return a;
}

void print_repaired(std::ostream& out, const storage::Diagnosis& d,
                    const std::map<storage::TopicId, std::string>& names) {
  for (const auto& x : d.repaired)
    out << "repaired earlier by recover: " << detail::describe_damage(x, names) << '\n';
}

// The first line of info and verify when there is no index: what the segments hold.
int no_index(const storage::Diagnosis& d, const std::string& dir, std::ostream& out) {
  out << "recording " << dir << ": " << d.damages.front().detail << ", no index\n";
  detail::print_damages(out, d.damages, {}, dir);
  out.flush();
  return kExitUsage;
}

// ", being written by pubsub-recorder (pid 12) ..." after the first line of info.
std::string state_note(const storage::Recording& rec, const storage::Diagnosis& diag) {
  const storage::LockState& lock = rec.lock_state();
  if (lock.live) {
    return ", live: being written by " + lock.live->describe() +
           " (read up to the last chunk written so far)";
  }
  switch (rec.close_state()) {
    case storage::CloseState::kClean:
      return diag.repaired.empty() ? "" : ", closed cleanly, repaired by recover since";
    case storage::CloseState::kRecovered:
      return repaired_unclean(diag) ? ", recovered after an unclean close"
                                    : ", recovered, repaired by recover since";
    case storage::CloseState::kUnclean:
      break;
  }
  std::string who;
  if (lock.stale) who = ": " + lock.stale->describe() + " ended without closing it";
  return ", not closed cleanly" + who + " (read up to the last good chunk)";
}

// The message of recover or reindex refused because the recording is being written.
int refuse_live(const Error& e, const char* command, std::ostream& err) {
  return report(err, kExitLive,
                e.message + "; nothing changed: " + command +
                    " works only on a recording no process writes (stop the recorder, or let it "
                    "end, first)");
}

const char* mark_kind(storage::MarkKind k) {
  switch (k) {
    case storage::MarkKind::kTag:
      return "tag";
    case storage::MarkKind::kPause:
      return "pause";
    case storage::MarkKind::kResume:
      return "resume";
    case storage::MarkKind::kClockStep:
      return "clock_step";
    case storage::MarkKind::kSetMember:
      return "set_member";
    case storage::MarkKind::kStart:
      return "start";
    case storage::MarkKind::kClockOffset:
      return "clock_offset";
  }
  return "?";
}

nlohmann::json marks_json(const std::vector<storage::Mark>& marks) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& m : marks) {
    a.push_back({{"kind", mark_kind(m.kind)},
                 {"time", format_iso(m.time_ns, 9)},
                 {"time_ns", m.time_ns},
                 {"name", m.name},
                 {"note", m.note}});
  }
  return a;
}

// "marks:" and a table of the tags, pauses and resumes (nothing when there are none).
void print_marks(const std::vector<storage::Mark>& marks, std::ostream& out) {
  if (marks.empty()) return;
  out << "marks (use a tag as --start tag:NAME / --end tag:NAME):\n";
  std::vector<std::vector<std::string>> rows{{"TIME", "KIND", "NAME", "NOTE"}};
  for (const auto& m : marks) {
    const bool topicless = m.kind != storage::MarkKind::kTag && m.name.empty();
    rows.push_back(
        {format_iso(m.time_ns), mark_kind(m.kind), topicless ? "(every topic)" : m.name, m.note});
  }
  detail::print_table(out, rows, {false, false, false, false});
}

// A writer's recorded QoS: its own (format 5), else its topic's; nullopt when unreadable.
std::optional<RecordedQos> writer_qos(const storage::WriterInfo& w, const storage::TopicDef* t) {
  const storage::Bytes& b = !w.def.qos.empty() ? w.def.qos : t ? t->qos : w.def.qos;
  if (b.empty()) return std::nullopt;
  auto q = decode_qos(b);
  if (!q) return std::nullopt;
  return std::move(q).value();
}

nlohmann::json writers_json(const std::vector<storage::WriterInfo>& writers,
                            const std::map<storage::TopicId, const storage::TopicDef*>& topics) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& w : writers) {
    auto t = topics.find(w.def.topic);
    const storage::TopicDef* def = t == topics.end() ? nullptr : t->second;
    nlohmann::json j;
    j["topic"] = def ? nlohmann::json(def->name) : nlohmann::json();
    j["guid"] = common::to_hex(w.def.guid);
    j["samples"] = w.count;
    j["lost"] = w.lost;
    const auto q = writer_qos(w, def);
    j["qos_from"] = w.def.qos.empty() ? "topic" : "writer";
    j["qos"] = q ? nlohmann::json::parse(qos_json_text(*q)) : nlohmann::json();
    // Why the recorder could not read it (null: recorded).
    j["not_matched"] =
        q && !q->not_matched.empty() ? nlohmann::json(q->not_matched) : nlohmann::json();
    a.push_back(std::move(j));
  }
  return a;
}

// "12.3 MiB on disk (payload 40.1 MiB, 3.3x)": the segment files and what they hold.
std::string disk_note(const std::string& dir, uint64_t payload) {
  const uint64_t disk = detail::segment_file_bytes(dir);
  std::string s = detail::human_bytes(disk) + " on disk";
  if (disk == 0 || payload == 0) return s;
  char ratio[32];
  std::snprintf(ratio, sizeof ratio, "%.1fx",
                static_cast<double>(payload) / static_cast<double>(disk));
  return s + " (payload " + detail::human_bytes(payload) + ", " + ratio + ")";
}

// Writers the recorder saw but could not read (stored with the reason, no samples).
uint64_t not_matched_count(const std::vector<storage::WriterInfo>& writers) {
  uint64_t n = 0;
  for (const auto& w : writers) {
    if (w.def.qos.empty()) continue;
    const auto q = decode_qos(w.def.qos);
    if (q && !q->not_matched.empty()) ++n;
  }
  return n;
}

// "writers:" and one line per writer with its QoS, as a person reads them.
void print_writers(const std::vector<storage::WriterInfo>& writers,
                   const std::map<storage::TopicId, const storage::TopicDef*>& topics,
                   std::ostream& out) {
  if (writers.empty()) return;
  out << "writers:\n";
  std::vector<std::vector<std::string>> rows{{"TOPIC", "WRITER", "SAMPLES", "QOS"}};
  for (const auto& w : writers) {
    auto t = topics.find(w.def.topic);
    const storage::TopicDef* def = t == topics.end() ? nullptr : t->second;
    const auto q = writer_qos(w, def);
    std::string qos = q ? qos_summary(*q) : "?";
    if (q && !q->not_matched.empty()) qos = "not recorded (" + q->not_matched + "); " + qos;
    rows.push_back(
        {def ? def->name : "?", common::to_hex(w.def.guid), std::to_string(w.count), qos});
  }
  detail::print_table(out, rows, {false, false, true, false});
}

}  // namespace

int info(const InfoOptions& o, std::ostream& out, std::ostream& err) {
  // Sizes and segment tails only: info does not read every chunk (verify does).
  auto diag = storage::Recording::diagnose(o.dir, false);
  if (diag && index_missing(*diag) && !o.json) return no_index(*diag, o.dir, out);
  auto rec = detail::open_recording(o.dir);
  if (!rec) return report(err, kExitUsage, rec.error());
  if (!diag) return report(err, kExitUsage, o.dir + ": cannot check it: " + diag.error().message);
  const auto names = detail::topic_names(**rec);
  const int status = damaged(*diag) ? kExitProblems : kExitOk;
  auto topics = (*rec)->topics();
  auto writers = (*rec)->writers();
  auto totals = (*rec)->totals();
  auto types = (*rec)->types();
  auto marks = (*rec)->marks();
  if (!topics || !writers || !totals || !types || !marks) {
    const Status& s = !topics    ? topics.error()
                      : !writers ? writers.error()
                      : !totals  ? totals.error()
                      : !types   ? types.error()
                                 : marks.error();
    return report(err, kExitUsage, o.dir + ": cannot read the index: " + s.error().message);
  }
  std::map<storage::TopicId, uint64_t> writer_count;
  for (const auto& w : *writers) writer_count[w.def.topic]++;
  std::map<storage::TopicId, const storage::TopicDef*> topic_defs;
  for (const auto& t : *topics) topic_defs[t.id] = &t.def;

  if (o.json) {
    nlohmann::json j;
    j["samples"] = totals->records;
    j["bytes"] = totals->bytes;
    j["lost"] = totals->lost;
    j["start"] = time_or_null(totals->records, totals->first_recv_ns);
    j["end"] = time_or_null(totals->records, totals->last_recv_ns);
    j["duration_s"] = totals->records
                          ? static_cast<double>(totals->last_recv_ns - totals->first_recv_ns) / 1e9
                          : 0.0;
    j["writers"] = totals->writers;
    j["writers_not_matched"] = not_matched_count(*writers);
    j["segments"] = totals->segments;
    // The segment files' size, and the payload bytes per byte on disk (null: nothing on disk).
    const uint64_t disk = detail::segment_file_bytes(o.dir);
    j["disk_bytes"] = disk;
    j["compression_ratio"] =
        disk ? nlohmann::json(static_cast<double>(totals->bytes) / static_cast<double>(disk))
             : nlohmann::json();
    j["chunks"] = totals->chunks;
    j["state"] = state_name(**rec);
    if (const auto& live = (*rec)->lock_state().live) {
      j["writer_process"] = {{"pid", live->pid}, {"program", live->program}};
    }
    j["topics"] = nlohmann::json::array();
    for (const auto& t : *topics) {
      nlohmann::json tj;
      tj["name"] = t.def.name;
      tj["type"] = t.def.type_name;
      const storage::TypeDef* td = detail::recorded_type(*types, t.def.type_name);
      tj["type_source"] = td ? nlohmann::json(detail::type_source_name(td)) : nlohmann::json();
      tj["keyed"] = t.def.keyed;
      tj["reliability"] = reliability_of(t.def);
      tj["samples"] = t.count;
      tj["bytes"] = t.bytes;
      tj["lost"] = t.lost;
      tj["writers"] = writer_count[t.id];
      tj["start"] = time_or_null(t.count, t.first_recv_ns);
      tj["end"] = time_or_null(t.count, t.last_recv_ns);
      tj["rate"] = topic_rate(t.count, t.first_recv_ns, t.last_recv_ns);
      j["topics"].push_back(std::move(tj));
    }
    j["recorded_writers"] = writers_json(*writers, topic_defs);
    j["marks"] = marks_json(*marks);
    j["damage"] = damages_json(diag->damages, names, o.dir, true);
    j["repaired"] = damages_json(diag->repaired, names, o.dir, false);
    out << j.dump(2) << '\n';
    out.flush();
    return status;
  }

  out << "recording " << o.dir << ": " << detail::plural(totals->segments, "segment") << ", "
      << detail::plural(totals->chunks, "chunk") << ", " << disk_note(o.dir, totals->bytes)
      << state_note(**rec, *diag) << '\n';
  detail::print_damages(out, diag->damages, names, o.dir);
  print_repaired(out, *diag, names);
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"TOPIC", "TYPE", "TYPE FROM", "KEYED", "RELIABILITY", "SAMPLES", "BYTES",
                  "RATE/s", "WRITERS", "LOST", "START", "END"});
  for (const auto& t : *topics) {
    const storage::TypeDef* td = detail::recorded_type(*types, t.def.type_name);
    rows.push_back(
        {t.def.name, t.def.type_name, td ? detail::type_source_name(td) : "-",
         t.def.keyed ? "yes" : "no", reliability_of(t.def), std::to_string(t.count),
         std::to_string(t.bytes), fmt_rate(topic_rate(t.count, t.first_recv_ns, t.last_recv_ns)),
         std::to_string(writer_count[t.id]), std::to_string(t.lost),
         t.count ? format_iso(t.first_recv_ns) : "-", t.count ? format_iso(t.last_recv_ns) : "-"});
  }
  detail::print_table(
      out, rows, {false, false, false, false, false, true, true, true, true, true, false, false});
  char dur[32];
  std::snprintf(dur, sizeof dur, "%.3f s",
                totals->records
                    ? static_cast<double>(totals->last_recv_ns - totals->first_recv_ns) / 1e9
                    : 0.0);
  out << "total: " << detail::plural(topics->size(), "topic") << ", " << totals->records
      << " samples, " << totals->bytes << " bytes (" << detail::human_bytes(totals->bytes) << "), "
      << detail::plural(totals->writers, "writer");
  if (const uint64_t n = not_matched_count(*writers)) out << " (" << n << " not matched)";
  out << ", " << totals->lost << " lost";
  if (totals->records) {
    out << ", " << format_iso(totals->first_recv_ns) << " .. " << format_iso(totals->last_recv_ns)
        << " (" << dur << ")";
  }
  out << '\n';
  print_writers(*writers, topic_defs, out);
  print_marks(*marks, out);
  out.flush();
  return status;
}

void print_gaps(storage::Recording& rec, const std::map<storage::TopicId, std::string>& names,
                std::ostream& out) {
  // Recorded loss: what the recorder knew it never received. Information, not damage.
  auto gaps = rec.gaps();
  auto writers = rec.writers();
  if (!gaps || !writers || gaps->empty()) return;
  std::map<storage::WriterId, const storage::WriterInfo*> by_id;
  for (const auto& w : *writers) by_id[w.id] = &w;
  uint64_t lost = 0;
  for (const auto& g : *gaps) lost += static_cast<uint64_t>(g.last_missing - g.first_missing + 1);
  out << "loss: " << detail::plural(gaps->size(), "gap") << ", " << lost
      << " samples the recorder never received (recorded loss, not damage)\n";
  size_t shown = 0;
  for (const auto& g : *gaps) {
    if (++shown > 20) {
      out << "  ... and " << gaps->size() - 20 << " more\n";
      break;
    }
    auto it = by_id.find(g.writer);
    std::string topic = "?", guid = "?";
    if (it != by_id.end()) {
      auto n = names.find(it->second->def.topic);
      if (n != names.end()) topic = n->second;
      guid = common::to_hex(it->second->def.guid);
    }
    out << "  " << topic << " writer " << guid << ": seq " << g.first_missing << ".."
        << g.last_missing << " (" << g.last_missing - g.first_missing + 1 << ")\n";
  }
}

int verify(const std::string& dir, std::ostream& out, std::ostream& err) {
  auto diag = storage::Recording::diagnose(dir, true);
  if (diag && index_missing(*diag)) return no_index(*diag, dir, out);
  auto rec = detail::open_recording(dir);
  if (!rec) return report(err, kExitUsage, rec.error());
  if (!diag) return report(err, kExitUsage, dir + ": cannot verify: " + diag.error().message);
  const auto names = detail::topic_names(**rec);
  const bool live = diag->lock.live.has_value();
  uint64_t segments = 0, bad = 0;
  if (auto segs = (*rec)->segments()) segments = segs->size();
  for (const auto& d : diag->damages)
    if (d.kind != storage::Damage::Kind::kIndexStale) bad += d.chunks;
  out << "recording " << dir << ": " << detail::plural(segments, "segment") << ", "
      << diag->chunks_ok << " good chunks, " << bad << " lost, " << diag->records_ok
      << " samples in the good chunks\n";
  out << "state: " << state_name(**rec);
  if (live) out << " (being written by " << diag->lock.live->describe() << ")";
  out << '\n';
  detail::print_damages(out, diag->damages, names, dir);
  print_repaired(out, *diag, names);
  print_gaps(**rec, names, out);
  if (live && diag->damages.empty()) {
    out << "result: live; no damage in what is written so far (verify again when the recording "
           "has ended)\n";
    out.flush();
    return kExitLive;
  }
  if (diag->damages.empty()) {
    out << "result: ok\n";
    out.flush();
    return kExitOk;
  }
  if (!damaged(*diag)) {
    const bool torn = diag->damages.front().segment != 0;
    out << "result: not closed cleanly" << (torn ? ", torn tail only" : "")
        << "; run 'pubsub-replay recover " << dir << "' to finish it\n";
    out.flush();
    return kExitNotClosed;
  }
  const bool index_only =
      std::all_of(diag->damages.begin(), diag->damages.end(), [](const storage::Damage& d) {
        return std::string(storage::repair_command(d.kind)) == "reindex";
      });
  const size_t n = diag->damages.size();
  out << "result: " << detail::plural(n, "damage") << " found; run 'pubsub-replay "
      << (index_only ? "reindex " : "recover ") << dir << "' to repair " << (n == 1 ? "it" : "them")
      << "\n";
  out.flush();
  return kExitProblems;
}

// A killed recorder leaves its control socket (DIR/control.sock, the default place) behind:
// removed when it is a socket nobody listens on, and said so.
void remove_stale_control_socket(const std::string& dir, std::ostream& out) {
  const std::string path = dir + "/control.sock";
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode)) return;
  auto name = common::UnixSocketPath::of(path);  // a long path through its directory
  if (!name) return;
  const sockaddr_un addr = name->address();
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  const bool refused = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 &&
                       errno == ECONNREFUSED;
  ::close(fd);
  if (refused && ::unlink(path.c_str()) == 0) {
    out << "removed " << path << ": the control socket of a recorder that is gone\n";
  }
}

int recover(const std::string& dir, std::ostream& out, std::ostream& err) {
  {  // the same checks and messages as the other commands, but a missing index is repaired too
    auto diag = storage::Recording::diagnose(dir, false);
    if (!diag || !index_missing(*diag)) {
      auto rec = detail::open_recording(dir);
      if (!rec) return report(err, kExitUsage, rec.error());
    }
  }
  auto rep = storage::Recording::recover(dir);
  if (!rep) {
    if (rep.error().code == Errc::kBusy) return refuse_live(rep.error(), "recover", err);
    return report(err, kExitProblems, dir + ": recover failed: " + rep.error().message);
  }
  remove_stale_control_socket(dir, out);
  if (rep->repaired.empty()) {
    out << "recording " << dir << " is " << storage::to_string(rep->state)
        << "; nothing to recover\n";
    out.flush();
    return kExitOk;
  }
  auto rec = detail::open_recording(dir);
  if (!rec) return report(err, kExitUsage, rec.error());
  const auto names = detail::topic_names(**rec);
  uint64_t lost = 0, chunks = 0;
  bool exact = true;
  for (const auto& d : rep->repaired) {
    out << "repaired: " << detail::describe_damage(d, names) << '\n';
    if (d.kind == storage::Damage::Kind::kIndexMissing ||
        d.kind == storage::Damage::Kind::kIndexStale)
      continue;
    lost += d.records;
    chunks += d.chunks;
    exact = exact && d.records_exact;
  }
  for (const auto& f : rep->saved_files) out << "saved: " << f << '\n';
  out << "recovered " << dir << ": " << (exact ? "" : lost ? "at least " : "an unknown number of ");
  if (exact || lost) out << lost << ' ';
  out << "sample" << (lost == 1 && exact ? "" : "s") << " lost in "
      << detail::plural(chunks, "chunk") << ", " << rep->bytes_cut << " bytes moved to " << dir
      << "/recovered/" << (rep->reindexed ? "; index rebuilt from the segments" : "") << '\n';
  auto totals = (*rec)->totals();
  if (!totals) {
    return report(err, kExitProblems,
                  dir + ": cannot read the recovered index: " + totals.error().message);
  }
  const bool clean = (*rec)->close_state() == storage::CloseState::kClean;
  out << "state: " << storage::to_string((*rec)->close_state()) << (clean ? " (repaired)" : "")
      << "; " << totals->records << " samples, " << totals->bytes << " bytes\n";
  out.flush();
  return kExitOk;
}

int reindex(const std::string& dir, std::ostream& out, std::ostream& err) {
  if (detail::count_segment_files(dir) == 0) {
    auto rec = detail::open_recording(dir);  // for its message about a missing directory
    if (!rec && rec.error().code == Errc::kNotFound) {
      return report(err, kExitUsage, rec.error());
    }
    return report(err, kExitUsage,
                  dir + " is not a recording: no segment files in " + dir +
                      "/segments to rebuild an index from");
  }
  std::vector<storage::Problem> problems;
  auto rep =
      storage::Recording::reindex(dir, [&](const storage::Problem& p) { problems.push_back(p); });
  if (!rep) {
    if (rep.error().code == Errc::kBusy) return refuse_live(rep.error(), "reindex", err);
    return report(err, kExitUsage, dir + ": reindex failed: " + rep.error().message);
  }
  out << "reindexed " << dir << ": " << detail::plural(rep->segments, "segment") << ", "
      << detail::plural(rep->chunks, "chunk") << ", " << detail::plural(rep->records, "sample")
      << "; state " << storage::to_string(rep->state) << '\n';
  std::map<storage::TopicId, std::string> names;
  if (auto rec = detail::open_recording(dir)) names = detail::topic_names(**rec);
  for (const auto& p : problems) out << "problem: " << detail::describe(p, names) << '\n';
  if (rep->state == storage::CloseState::kUnclean) {
    out << "note: not closed cleanly; 'pubsub-replay recover " << dir << "' finishes it\n";
  }
  if (!problems.empty()) {
    out << "result: " << detail::plural(problems.size(), "problem")
        << "; damaged chunks were left out of the index\n";
    out.flush();
    return kExitProblems;
  }
  out.flush();
  return kExitOk;
}

}  // namespace service::replay
