// pubsub-replay merge DIR... -o OUT (service/replay.hpp): several recordings - a recording set's
// members, one per host - written as one, so that info, verify, export and play see the system
// as one recording.
//
// One thread. Every input is opened read-only; the output is a new SegmentWriter recording. The
// definitions come first (topics by their whole definition, writers by GUID, types by name);
// then the records of all inputs in reception-time order (a k-way merge of their cursors), each
// mapped to the output's topic and writer ids, with the inputs' marks put in at their times. A
// sample two inputs hold (same writer GUID and sequence number: overlapping configurations) is
// written once. A writer's sequence jump that an input recorded as a pause (not as a gap) stays a
// pause (skip_to), so only real losses are gaps in the output. On any failure OUT is removed.
// Clocks: the first input is the reference; another input whose clock offset to it was measured
// (clock_offset marks, set_clock.hpp: either member's measurement of the other, the one with the
// smallest error bound) has its reception and mark times moved onto the reference's clock.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iomanip>
#include <map>
#include <queue>
#include <set>
#include <unordered_set>

#include "common.hpp"
#include "service/recording_schema.hpp"
#include "service/replay.hpp"
#include "storage/recording.hpp"
#include "storage/segment_writer.hpp"

namespace service::replay {
namespace {

using Clock = std::chrono::steady_clock;

struct Input {
  std::string dir;
  std::unique_ptr<storage::Recording> rec;
  std::map<storage::TopicId, storage::TopicId> topics;     // input id -> output id
  std::map<storage::WriterId, storage::WriterId> writers;  // input id -> output id
  std::map<storage::WriterId, std::vector<storage::Gap>> gaps;
  std::optional<storage::Cursor> cursor;
  const storage::RecordView* head = nullptr;
  std::string member;  // its set_member mark's note ("host H, address A"), or ""
  std::vector<storage::Mark> marks;
  int64_t shift_ns = 0;  // added to its times: the reference's clock minus its own
};

struct Merge {
  std::vector<Input> in;
  std::unique_ptr<storage::SegmentWriter> w;
  // Topics by name, type and keyedness: one per topic of the system, whatever QoS the first
  // writer each input saw offered (every writer keeps its own QoS).
  std::map<std::tuple<std::string, std::string, bool>, storage::TopicId> topic_ids;
  std::map<std::tuple<std::string, std::string, bool>, storage::TopicDef> topic_defs;
  std::map<storage::Guid, storage::WriterId> writer_ids;
  std::map<storage::WriterId, int> writer_inputs;  // how many inputs hold each output writer
  std::map<storage::WriterId, int64_t> last_seq;
  std::map<storage::WriterId, std::unordered_set<int64_t>> seen;  // writers of several inputs
  uint64_t samples = 0, bytes = 0, duplicates = 0;
};

std::tuple<std::string, std::string, bool> topic_key(const storage::TopicDef& d) {
  return {d.name, d.type_name, d.keyed};
}

// First pass over every input: each topic's definition, the first that has type information.
Status collect_topics(Merge& m) {
  for (auto& in : m.in) {
    auto topics = in.rec->topics();
    if (!topics) return topics.error();
    for (const auto& t : *topics) {
      auto [it, fresh] = m.topic_defs.emplace(topic_key(t.def), t.def);
      if (!fresh && it->second.type_info.empty() && !t.def.type_info.empty()) it->second = t.def;
    }
  }
  return Status{};
}

Status define(Merge& m, Input& in) {
  auto topics = in.rec->topics();
  if (!topics) return topics.error();
  for (const auto& t : *topics) {
    const auto key = topic_key(t.def);
    auto it = m.topic_ids.find(key);
    if (it == m.topic_ids.end()) {
      auto id = m.w->add_topic(m.topic_defs.at(key));
      if (!id) return id.error();
      it = m.topic_ids.emplace(key, *id).first;
    }
    in.topics[t.id] = it->second;
  }
  auto writers = in.rec->writers();
  if (!writers) return writers.error();
  for (const auto& wi : *writers) {
    auto it = m.writer_ids.find(wi.def.guid);
    if (it == m.writer_ids.end()) {
      storage::WriterDef def = wi.def;
      def.topic = in.topics.at(wi.def.topic);
      auto id = m.w->add_writer(def);
      if (!id) return id.error();
      it = m.writer_ids.emplace(wi.def.guid, *id).first;
    }
    in.writers[wi.id] = it->second;
    ++m.writer_inputs[it->second];
  }
  auto types = in.rec->types();
  if (!types) return types.error();
  for (const auto& t : *types) {
    if (auto s = m.w->add_type(t); !s) return s;  // a type already defined is kept once
  }
  auto gaps = in.rec->gaps();
  if (!gaps) return gaps.error();
  for (const auto& g : *gaps) in.gaps[g.writer].push_back(g);
  return Status{};
}

// Whether input `in` recorded [first, last] of its writer `w` as lost (a gap), not left out.
bool recorded_as_gap(const Input& in, storage::WriterId w, int64_t first, int64_t last) {
  auto it = in.gaps.find(w);
  if (it == in.gaps.end()) return false;
  return std::any_of(it->second.begin(), it->second.end(), [&](const storage::Gap& g) {
    return g.first_missing <= first && g.last_missing >= last;
  });
}

// Each input's shift onto the first input's clock; a line per input saying what was done.
void correct_clocks(Merge& m, bool correct, std::ostream& out) {
  for (size_t j = 1; j < m.in.size(); ++j) {
    Input& in = m.in[j];
    auto c = measured_offset(m.in[0].marks, m.in[0].member, in.marks, in.member);
    out << "clock of " << in.dir << ": ";
    if (!c) {
      out << "no offset to " << m.in[0].dir << " measured, reception times as recorded\n";
      continue;
    }
    out << clock_note(*c) << " from " << m.in[0].dir << "'s";
    if (!correct) {
      out << ", not corrected (--no-clock-correction)\n";
      continue;
    }
    in.shift_ns = -c->offset_ns;
    out << ", reception times corrected\n";
  }
}

Status append(Merge& m, Input& in, const storage::RecordView& r) {
  storage::RecordMeta meta = r.meta;
  meta.reception_ns += in.shift_ns;
  meta.topic = in.topics.at(r.meta.topic);
  meta.writer = in.writers.at(r.meta.writer);
  if (m.writer_inputs[meta.writer] > 1 && !m.seen[meta.writer].insert(meta.sequence).second) {
    ++m.duplicates;
    return Status{};
  }
  auto last = m.last_seq.find(meta.writer);
  if (last != m.last_seq.end() && meta.sequence > last->second + 1 &&
      !recorded_as_gap(in, r.meta.writer, last->second + 1, meta.sequence - 1)) {
    if (auto s = m.w->skip_to(meta.writer, meta.sequence - 1); !s) return s;  // a pause
  }
  int64_t& l = m.last_seq[meta.writer];
  l = std::max(l, meta.sequence);
  ++m.samples;
  m.bytes += r.payload.size();
  return m.w->append(meta, r.payload);
}

// The records of every input in reception-time order, the marks put in at their times.
Status copy_records(Merge& m, std::vector<storage::Mark> marks, bool quiet, std::ostream& err) {
  std::sort(marks.begin(), marks.end(),
            [](const auto& a, const auto& b) { return a.time_ns < b.time_ns; });
  size_t next_mark = 0;
  auto at = [&](size_t i) { return m.in[i].head->meta.reception_ns + m.in[i].shift_ns; };
  auto later = [&](size_t a, size_t b) { return at(a) > at(b); };
  std::priority_queue<size_t, std::vector<size_t>, decltype(later)> q(later);
  for (size_t i = 0; i < m.in.size(); ++i) {
    auto c = m.in[i].rec->query();
    if (!c) return c.error();
    m.in[i].cursor.emplace(std::move(*c));
    if ((m.in[i].head = m.in[i].cursor->next())) q.push(i);
  }
  auto shown = Clock::now();
  while (!q.empty()) {
    const size_t i = q.top();
    q.pop();
    Input& in = m.in[i];
    while (next_mark < marks.size() && marks[next_mark].time_ns <= at(i)) {
      if (auto s = m.w->add_mark(marks[next_mark++]); !s) return s;
    }
    if (auto s = append(m, in, *in.head); !s) return s;
    if ((in.head = in.cursor->next())) {
      q.push(i);
    } else if (!in.cursor->status()) {
      return in.cursor->status();
    }
    if (!quiet && Clock::now() - shown > std::chrono::seconds(1)) {
      shown = Clock::now();
      err << "pubsub-replay: merge: " << m.samples << " samples so far\n";
    }
  }
  for (; next_mark < marks.size(); ++next_mark) {
    if (auto s = m.w->add_mark(marks[next_mark]); !s) return s;
  }
  return Status{};
}

int fail_and_remove(Merge& m, const detail::NewRecordingDir& out, std::ostream& err,
                    const std::string& why) {
  if (m.w) (void)m.w->close();
  m.w.reset();
  out.remove();
  return detail::report(err, kExitProblems, "merge failed, " + out.path + " removed: " + why);
}

}  // namespace

int merge(const MergeOptions& o, std::ostream& out, std::ostream& err) {
  const auto started = Clock::now();
  if (o.dirs.size() < 2)
    return detail::report(err, kExitUsage, "merge needs two recordings or more");
  auto out_dir = detail::NewRecordingDir::claim(o.out, "merge");
  if (!out_dir) return detail::report(err, kExitUsage, out_dir.error().message);
  Merge m;
  for (const auto& dir : o.dirs) {
    auto rec = detail::open_recording(dir);
    if (!rec) return detail::report(err, kExitUsage, rec.error());
    if ((*rec)->live()) {
      return detail::report(err, kExitLive,
                            dir + " is being written by a recorder: merge it once it is closed");
    }
    if ((*rec)->close_state() == storage::CloseState::kUnclean) {
      err << "pubsub-replay: note: " << dir
          << " was not closed cleanly: merged as it reads now ('pubsub-replay recover " << dir
          << "' first keeps its torn tail aside)\n";
    }
    auto mk = (*rec)->marks();
    if (!mk) return detail::report(err, kExitUsage, mk.error());
    Input in{dir, std::move(*rec), {}, {}, {}, std::nullopt, nullptr, "", std::move(*mk), 0};
    for (const auto& k : in.marks) {
      if (k.kind == storage::MarkKind::kSetMember) in.member = k.note;
    }
    m.in.push_back(std::move(in));
  }
  correct_clocks(m, o.correct_clocks, out);
  std::vector<storage::Mark> marks;
  for (const auto& in : m.in) {
    for (storage::Mark k : in.marks) {
      k.time_ns += in.shift_ns;
      marks.push_back(std::move(k));
    }
  }
  auto w = storage::SegmentWriter::create(o.out, {});
  if (!w) return detail::report(err, kExitUsage, w.error().with_context("cannot create " + o.out));
  m.w = std::move(*w);
  if (auto s = collect_topics(m); !s) return fail_and_remove(m, *out_dir, err, s.error().message);
  for (auto& in : m.in) {
    if (auto s = define(m, in); !s)
      return fail_and_remove(m, *out_dir, err, in.dir + ": " + s.error().message);
  }
  if (auto s = copy_records(m, std::move(marks), o.quiet, err); !s)
    return fail_and_remove(m, *out_dir, err, s.error().message);
  if (auto s = m.w->close(); !s) return fail_and_remove(m, *out_dir, err, s.error().message);
  m.w.reset();
  const double secs = std::chrono::duration<double>(Clock::now() - started).count();
  out << "merged " << detail::plural(o.dirs.size(), "recording") << " into " << o.out << ": "
      << detail::plural(m.samples, "sample") << " of "
      << detail::plural(m.topic_ids.size(), "topic") << " from "
      << detail::plural(m.writer_ids.size(), "writer") << ", "
      << detail::plural(m.duplicates, "duplicate") << " left out, "
      << detail::plural(m.bytes, "payload byte") << " in " << std::fixed << std::setprecision(1)
      << secs << " s\n";
  return kExitOk;
}

}  // namespace service::replay
