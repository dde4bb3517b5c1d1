#include "common.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "pubsub/glob.hpp"
#include "service/recording_schema.hpp"

namespace service::replay::detail {

namespace fs = std::filesystem;

int report(std::ostream& err, int status, const std::string& message) {
  err << "pubsub-replay: " << message << '\n';
  err.flush();
  return status;
}

int report(std::ostream& err, int status, const Error& e) {
  return report(err, status, e.message);
}

void warn(std::ostream& err, const std::string& message) {
  err << "pubsub-replay: warning: " << message << '\n';
}

size_t count_segment_files(const std::string& dir) {
  std::error_code ec;
  size_t n = 0;
  for (fs::directory_iterator it(fs::path(dir) / "segments", ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() > 4 && name.ends_with(".seg")) ++n;
  }
  return n;
}

uint64_t segment_file_bytes(const std::string& dir) {
  std::error_code ec;
  uint64_t n = 0;
  for (fs::directory_iterator it(fs::path(dir) / "segments", ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() <= 4 || !name.ends_with(".seg")) continue;
    std::error_code size_ec;
    const auto size = it->file_size(size_ec);
    if (!size_ec) n += size;
  }
  return n;
}

Result<std::unique_ptr<storage::Recording>> open_recording(const std::string& dir,
                                                           storage::ProblemCallback on_problem) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    return Error{Errc::kNotFound, dir + ": no such recording directory"};
  }
  if (!S_ISDIR(st.st_mode)) return Error{Errc::kInvalidArgument, dir + ": not a directory"};
  const std::string index = (fs::path(dir) / "index.sqlite3").string();
  if (::stat(index.c_str(), &st) != 0) {
    if (count_segment_files(dir) > 0) {
      return Error{Errc::kNotFound, dir +
                                        ": index.sqlite3 is missing; rebuild it from the segments "
                                        "with 'pubsub-replay reindex " +
                                        dir + "'"};
    }
    return Error{Errc::kInvalidArgument,
                 dir + " is not a recording (no index.sqlite3, no segment files)"};
  }
  storage::RecordingOptions opt;
  opt.on_problem = std::move(on_problem);
  auto rec = storage::Recording::open(dir, std::move(opt));
  if (!rec) {
    Error e = rec.error().with_context(dir + ": cannot open the recording");
    if (e.code == Errc::kIndex || e.code == Errc::kCorrupt || e.code == Errc::kUnsupported) {
      if (count_segment_files(dir) > 0) {
        e.message +=
            " (if the index is damaged, rebuild it with 'pubsub-replay reindex " + dir + "')";
      }
    }
    return e;
  }
  return std::move(*rec);
}

const storage::TypeDef* recorded_type(const std::vector<storage::TypeDef>& types,
                                      const std::string& type_name) {
  const storage::TypeDef* best = nullptr;
  for (const storage::TypeDef& t : types) {
    if (t.type_name != type_name) continue;
    if (!best || t.source == storage::TypeSource::kIdl) best = &t;
  }
  return best;
}

const char* type_source_name(const storage::TypeDef* def) {
  if (!def) return "";
  return def->source == storage::TypeSource::kIdl ? "idl" : "lookup";
}

namespace {

// Nanoseconds since the epoch of a time argument: a tag's time, an absolute time, or `first_ns`
// plus an offset.
Result<int64_t> resolve_time(storage::Recording& rec, const TimeArg& a, int64_t first_ns) {
  if (a.tag.empty()) return a.absolute ? a.ns : first_ns + a.ns;
  auto marks = rec.marks();
  if (!marks) return marks.error().with_context("cannot read the tags");
  std::string names;
  for (const storage::Mark& m : *marks) {
    if (m.kind != storage::MarkKind::kTag) continue;
    if (m.name == a.tag) return m.time_ns;
    names += (names.empty() ? "" : ", ") + m.name;
  }
  return Error{Errc::kInvalidArgument,
               "no tag \"" + a.tag + "\" in the recording" +
                   (names.empty() ? std::string(" (it has none)") : " (tags: " + names + ")")};
}

}  // namespace

Result<ResolvedSelection> resolve_selection(storage::Recording& rec, const Selection& sel) {
  ResolvedSelection r;
  auto topics = rec.topics();
  if (!topics) return topics.error().with_context("cannot read the topics");
  auto totals = rec.totals();
  if (!totals) return totals.error().with_context("cannot read the totals");
  r.recording_first_ns = totals->first_recv_ns;
  r.recording_last_ns = totals->last_recv_ns;
  auto types = rec.types();
  if (!types) return types.error().with_context("cannot read the types");
  r.recorded_types = std::move(types).value();

  for (const std::string& pattern : sel.topics) {
    if (auto ok = pubsub::check_glob(pattern); !ok)
      return ok.error().with_context("bad topic pattern '" + pattern + "'");
    const bool any = std::any_of(topics->begin(), topics->end(), [&](const storage::TopicInfo& t) {
      return pubsub::glob_match(pattern, t.def.name);
    });
    if (!any) {
      std::string names;
      for (const auto& t : *topics) names += (names.empty() ? "" : ", ") + t.def.name;
      return Error{
          Errc::kInvalidArgument,
          "--topics '" + pattern + "' matches no topic of the recording" +
              (names.empty() ? std::string(" (it has none)") : " (topics: " + names + ")")};
    }
  }
  for (const auto& t : *topics) {
    const bool selected =
        sel.topics.empty() ||
        std::any_of(sel.topics.begin(), sel.topics.end(),
                    [&](const std::string& p) { return pubsub::glob_match(p, t.def.name); });
    if (!selected) continue;
    r.topic_index[t.id] = r.topics.size();
    r.topics.push_back(t);
    if (!sel.topics.empty()) r.query.topic_ids.push_back(t.id);
  }

  if (sel.start) {
    auto t = resolve_time(rec, *sel.start, r.recording_first_ns);
    if (!t) return t.error().with_context("--start");
    r.query.start_ns = *t;
  }
  if (sel.end) {
    auto t = resolve_time(rec, *sel.end, r.recording_first_ns);
    if (!t) return t.error().with_context("--end");
    r.query.end_ns = *t;
  }
  if (sel.start && sel.end && r.query.start_ns >= r.query.end_ns) {
    return Error{Errc::kInvalidArgument, "--start (" + format_iso(r.query.start_ns) +
                                             ") is not before --end (" +
                                             format_iso(r.query.end_ns) + ")"};
  }
  if (totals->records > 0) {
    if (sel.start && r.query.start_ns > r.recording_last_ns) {
      return Error{Errc::kInvalidArgument,
                   "--start " + format_iso(r.query.start_ns) +
                       " is after the end of the recording (last sample at " +
                       format_iso(r.recording_last_ns) + ")"};
    }
    if (sel.end && r.query.end_ns <= r.recording_first_ns) {
      return Error{Errc::kInvalidArgument,
                   "--end " + format_iso(r.query.end_ns) +
                       " is not after the start of the recording (first sample at " +
                       format_iso(r.recording_first_ns) + ")"};
    }
  }

  bool have = false;
  for (const auto& t : r.topics) {
    if (t.count == 0) continue;
    const int64_t a = std::max(t.first_recv_ns, r.query.start_ns);
    const int64_t b =
        std::min(t.last_recv_ns, r.query.end_ns == INT64_MAX ? INT64_MAX : r.query.end_ns - 1);
    if (a > b) continue;
    r.first_ns = have ? std::min(r.first_ns, a) : a;
    r.last_ns = have ? std::max(r.last_ns, b) : b;
    have = true;
    r.estimated_samples += t.count;
  }
  return r;
}

std::string base64(storage::ByteSpan bytes) {
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  const size_t n = bytes.size();
  std::string out;
  out.resize((n + 2) / 3 * 4);
  size_t o = 0, i = 0;
  for (; i + 3 <= n; i += 3) {
    const uint32_t v = (uint32_t{p[i]} << 16) | (uint32_t{p[i + 1]} << 8) | p[i + 2];
    out[o++] = kAlphabet[v >> 18];
    out[o++] = kAlphabet[(v >> 12) & 63];
    out[o++] = kAlphabet[(v >> 6) & 63];
    out[o++] = kAlphabet[v & 63];
  }
  if (i < n) {
    uint32_t v = uint32_t{p[i]} << 16;
    if (i + 1 < n) v |= uint32_t{p[i + 1]} << 8;
    out[o++] = kAlphabet[v >> 18];
    out[o++] = kAlphabet[(v >> 12) & 63];
    out[o++] = i + 1 < n ? kAlphabet[(v >> 6) & 63] : '=';
    out[o++] = '=';
  }
  return out;
}

void append_json_string(std::string& out, std::string_view s) {
  out += '"';
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += ch;
        }
    }
  }
  out += '"';
}

void append_csv_field(std::string& out, std::string_view s) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) {
    out += s;
    return;
  }
  out += '"';
  for (const char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
}

std::string describe(const storage::Problem& p,
                     const std::map<storage::TopicId, std::string>& topic_names) {
  char seg[64];
  std::snprintf(seg, sizeof seg, "segments/%08llu.seg", static_cast<unsigned long long>(p.segment));
  std::string s = std::string(storage::to_string(p.kind)) + " in " + seg + " at offset " +
                  std::to_string(p.offset);
  if (p.chunk_sequence) s += " (chunk " + std::to_string(p.chunk_sequence) + ")";
  if (!p.topics.empty()) {
    s += ": topics ";
    for (size_t i = 0; i < p.topics.size(); ++i) {
      auto it = topic_names.find(p.topics[i]);
      s += (i ? ", " : "") +
           (it != topic_names.end() ? it->second : "#" + std::to_string(p.topics[i]));
    }
    s += ";";
  } else {
    s += ":";
  }
  if (p.first_recv_ns || p.last_recv_ns) {
    s += " reception " + format_iso(p.first_recv_ns) + " .. " + format_iso(p.last_recv_ns) + ";";
  }
  if (p.records) s += " " + std::to_string(p.records) + " records;";
  s += " " + p.message;
  return s;
}

std::map<storage::TopicId, std::string> topic_names(storage::Recording& rec) {
  std::map<storage::TopicId, std::string> names;
  if (auto topics = rec.topics())
    for (const auto& t : *topics) names[t.id] = t.def.name;
  return names;
}

namespace {

std::string segment_name(uint64_t n) {
  char seg[64];
  std::snprintf(seg, sizeof seg, "segments/%08llu.seg", static_cast<unsigned long long>(n));
  return seg;
}

// "203 samples", "at least 3 samples", "an unknown number of samples".
std::string samples_text(const storage::Damage& d) {
  if (d.records_exact) return plural(d.records, "sample");
  if (d.records == 0) return "an unknown number of samples";
  return "at least " + plural(d.records, "sample");
}

std::string topics_text(const storage::Damage& d,
                        const std::map<storage::TopicId, std::string>& names) {
  if (d.topics.empty()) return "";
  std::string s = " (topic" + std::string(d.topics.size() == 1 ? " " : "s ");
  for (size_t i = 0; i < d.topics.size(); ++i) {
    auto it = names.find(d.topics[i]);
    s += (i ? ", " : "") + (it != names.end() ? it->second : "#" + std::to_string(d.topics[i]));
  }
  return s + ")";
}

}  // namespace

std::string describe_damage(const storage::Damage& d,
                            const std::map<storage::TopicId, std::string>& names) {
  using K = storage::Damage::Kind;
  std::string s = std::string(storage::to_string(d.kind)) + ": ";
  switch (d.kind) {
    case K::kTruncated:
      s += segment_name(d.segment) + " ends " +
           (d.bytes ? std::to_string(d.bytes) + " bytes short" : "inside a chunk") + "; " +
           plural(d.chunks, "chunk") + " cut, " + samples_text(d) + " lost" + topics_text(d, names);
      break;
    case K::kCorruptChunk:
      s += segment_name(d.segment) + " at offset " + std::to_string(d.offset) + ", " +
           std::to_string(d.bytes) + " bytes; " + samples_text(d) + " lost" +
           topics_text(d, names) + ": " + d.detail;
      break;
    case K::kMissingSegment:
      s += segment_name(d.segment) + "; " + plural(d.chunks, "chunk") + ", " + samples_text(d) +
           " lost" + topics_text(d, names);
      break;
    case K::kIndexMissing:
      s += "index.sqlite3 does not exist; the segments hold " + plural(d.chunks, "chunk") + ", " +
           samples_text(d);
      break;
    case K::kIndexStale:
      s += segment_name(d.segment) + " holds " + plural(d.chunks, "chunk") + " (" +
           samples_text(d) + ") that the index does not list or lists differently";
      break;
    case K::kUnclean:
      if (d.segment == 0) {
        s += "the writer ended without closing it; no torn chunk";
      } else {
        s += "torn tail in " + segment_name(d.segment) + " at offset " + std::to_string(d.offset) +
             "; " + plural(d.chunks, "chunk") + " cut, " + samples_text(d) + " lost" +
             topics_text(d, names);
      }
      break;
  }
  if (d.tail_bytes) s += "; " + std::to_string(d.tail_bytes) + " bytes of it left at the end";
  return s;
}

void print_damages(std::ostream& out, const std::vector<storage::Damage>& damages,
                   const std::map<storage::TopicId, std::string>& names, const std::string& dir) {
  for (const auto& d : damages) {
    out << "damage: " << describe_damage(d, names) << '\n';
    out << "  repair: pubsub-replay " << storage::repair_command(d.kind) << ' ' << dir << '\n';
  }
}

void print_table(std::ostream& out, const std::vector<std::vector<std::string>>& rows,
                 const std::vector<bool>& right) {
  std::vector<size_t> width(rows.front().size(), 0);
  for (const auto& r : rows) {
    for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  }
  for (const auto& r : rows) {
    std::string line;
    for (size_t i = 0; i < r.size(); ++i) {
      const size_t pad = width[i] - r[i].size();
      if (i) line += "  ";
      if (right[i]) line.append(pad, ' ');
      line += r[i];
      if (!right[i] && i + 1 < r.size()) line.append(pad, ' ');
    }
    out << line << '\n';
  }
}

Result<NewRecordingDir> NewRecordingDir::claim(const std::string& path, std::string_view command) {
  std::error_code ec;
  const bool existed = std::filesystem::exists(path, ec);
  if (existed && !std::filesystem::is_empty(path, ec))
    return Error{Errc::kInvalidArgument, path + " exists and is not empty: " +
                                             std::string(command) + " writes a new recording"};
  return NewRecordingDir{path, existed};
}

void NewRecordingDir::remove() const {
  std::error_code ec;
  if (!existed) {
    std::filesystem::remove_all(path, ec);
    return;
  }
  for (const auto& e : std::filesystem::directory_iterator(path, ec))
    std::filesystem::remove_all(e.path(), ec);
}

std::string plural(uint64_t n, std::string_view noun) {
  return std::to_string(n) + " " + std::string(noun) + (n == 1 ? "" : "s");
}

std::string human_bytes(uint64_t bytes) {
  // SI units, as pubsub-recorder's log and ctl status ("12.3 MB" = 12.3 * 10^6 bytes).
  const char* units[] = {"B", "kB", "MB", "GB", "TB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1000 && u < 4) {
    v /= 1000;
    ++u;
  }
  char buf[32];
  if (u == 0) {
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  } else {
    std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  }
  return buf;
}

}  // namespace service::replay::detail
