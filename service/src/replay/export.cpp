// export: the selected records as JSON lines or CSV, in reception-time order.
#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <ostream>
#include <string>

#include "common.hpp"
#include "common/hex.hpp"
#include "decode.hpp"
#include "export_mcap.hpp"
#include "service/recording_schema.hpp"

namespace service::replay {
namespace {

// A writer as the export names it: its GUID (32 hex digits) and, in an export of several
// recordings (ExportOptions::writer_members), the member that recorded it.
struct WriterName {
  std::string guid;
  const std::string* member = nullptr;  // none: no "member" field or column
};
using GuidNames = std::map<storage::WriterId, WriterName>;

// ,"member":"..." / ,member after the writer when the export names members.
void append_member_json(std::string& buf, const WriterName& w) {
  if (!w.member) return;
  buf += ",\"member\":";
  detail::append_json_string(buf, *w.member);
}
void append_member_csv(std::string& buf, const WriterName& w) {
  if (!w.member) return;
  buf += ',';
  detail::append_csv_field(buf, *w.member);
}

// --decode: the decoder and what went wrong (messages on `err`, the first kMaxReported).
struct Decoding {
  const detail::SampleDecoder* decoder = nullptr;  // null: no decoding
  std::ostream* err = nullptr;
  detail::ExportProgress* progress = nullptr;
  uint64_t failures = 0;
  static constexpr uint64_t kMaxReported = 20;
  struct Trailing {
    uint64_t samples = 0;
    size_t min = SIZE_MAX, max = 0;
  };
  std::map<std::string, Trailing> trailing;  // topic -> samples with unread trailing bytes

  // The value of a record, or null with `error` set (decoding failed) or left empty (no type,
  // key-only sample).
  std::optional<types::Json> value(const storage::RecordView& r, const std::string& topic,
                                   std::string& error) {
    const auto* type = decoder->type_of(r.meta.topic);
    if (!type || (r.meta.flags & kFlagKeyOnly)) return std::nullopt;
    size_t unread = 0;
    auto v = detail::SampleDecoder::decode(*type, r.payload, &unread);
    if (v) {
      if (unread) {
        Trailing& t = trailing[topic];
        ++t.samples;
        t.min = std::min(t.min, unread);
        t.max = std::max(t.max, unread);
      }
      return std::move(v).value();
    }
    error = v.error().message;
    if (++failures <= kMaxReported) {
      progress->end_line();
      detail::warn(*err, "topic " + topic + " seq " + std::to_string(r.meta.sequence) +
                             ": cannot decode: " + error);
    }
    return std::nullopt;
  }
  // "N samples of TOPIC had M unread trailing bytes - the IDL may not match", per topic.
  std::vector<std::string> trailing_warnings() const {
    std::vector<std::string> v;
    for (const auto& [topic, t] : trailing) {
      const std::string bytes = t.min == t.max
                                    ? std::to_string(t.min)
                                    : std::to_string(t.min) + " to " + std::to_string(t.max);
      v.push_back(detail::plural(t.samples, "sample") + " of " + topic + " had " + bytes +
                  " unread trailing byte" + (t.max == 1 ? "" : "s") + " - the IDL may not match");
    }
    return v;
  }
};

std::string dump(const types::Json& v) {
  return v.dump(-1, ' ', false, types::Json::error_handler_t::replace);
}

void append_decoded_csv_row(std::string& buf, const storage::RecordView& r,
                            const std::string& topic, const WriterName& w, Decoding& dec) {
  const storage::RecordMeta& m = r.meta;
  const bool has_source = (m.flags & kFlagHasSourceTimestamp) != 0;
  detail::append_csv_field(buf, topic);
  buf += ',' + w.guid;
  append_member_csv(buf, w);
  buf += ',' + std::to_string(m.sequence) + ',';
  if (has_source) buf += format_iso(m.source_ns, 9);
  buf += ',' + format_iso(m.reception_ns, 9);
  std::string error;
  const auto value = dec.value(r, topic, error);
  dec.decoder->append_csv_values(buf, value ? *value : types::Json());
  buf += ',';
  detail::append_csv_field(buf, error);
  buf += '\n';
}

void append_csv_row(std::string& buf, const storage::RecordView& r, const std::string& topic,
                    const std::string& type, const WriterName& w) {
  const storage::RecordMeta& m = r.meta;
  const bool has_source = (m.flags & kFlagHasSourceTimestamp) != 0;
  const std::string key = m.has_key_hash ? common::to_hex(m.key_hash) : std::string();
  detail::append_csv_field(buf, topic);
  buf += ',';
  detail::append_csv_field(buf, type);
  buf += ',' + w.guid;
  append_member_csv(buf, w);
  buf += ',' + std::to_string(m.sequence) + ',';
  if (has_source) buf += format_iso(m.source_ns, 9);
  buf += ',' + format_iso(m.reception_ns, 9) + ',' + std::to_string(m.source_ns) + ',' +
         std::to_string(m.reception_ns) + ',' + std::to_string(m.flags) + ',' + key + ',';
  buf += detail::base64(r.payload);
  buf += '\n';
}

void append_json_line(std::string& buf, const storage::RecordView& r, const std::string& topic,
                      const std::string& type, const WriterName& w, Decoding& dec) {
  const storage::RecordMeta& m = r.meta;
  const bool has_source = (m.flags & kFlagHasSourceTimestamp) != 0;
  const std::string key = m.has_key_hash ? common::to_hex(m.key_hash) : std::string();
  buf += "{\"topic\":";
  detail::append_json_string(buf, topic);
  buf += ",\"type\":";
  detail::append_json_string(buf, type);
  buf += ",\"writer\":\"" + w.guid + '"';
  append_member_json(buf, w);
  buf += ",\"seq\":" + std::to_string(m.sequence) + ",\"source_time\":";
  buf += has_source ? '"' + format_iso(m.source_ns, 9) + '"' : std::string("null");
  buf += ",\"reception_time\":\"" + format_iso(m.reception_ns, 9) +
         "\",\"source_ns\":" + std::to_string(m.source_ns) +
         ",\"reception_ns\":" + std::to_string(m.reception_ns) +
         ",\"flags\":" + std::to_string(m.flags) + ",\"key_hash\":";
  buf += m.has_key_hash ? '"' + key + '"' : std::string("null");
  if (dec.decoder) {
    std::string error;
    if (auto value = dec.value(r, topic, error)) {
      buf += ",\"value\":" + dump(*value) + "}\n";
      return;
    }
    buf += ",\"value\":null";
    if (!error.empty()) {
      buf += ",\"decode_error\":";
      detail::append_json_string(buf, error);
    }
  }
  buf += ",\"payload_base64\":\"";
  buf += detail::base64(r.payload);
  buf += "\"}\n";
}

// Every record of the cursor into `buf`, which goes to `dst` whenever it holds 1 MiB. The loop
// stops at a write error and when `progress` says so (interrupted). Returns the number of
// records.
uint64_t write_records(storage::Cursor& cursor, const detail::ResolvedSelection& sel,
                       const GuidNames& guid_of, bool csv, Decoding& dec, std::string& buf,
                       detail::OutputFile& dst, detail::ExportProgress& progress) {
  uint64_t n = 0;
  while (const storage::RecordView* r = cursor.next()) {
    const storage::RecordMeta& m = r->meta;
    auto ti = sel.topic_index.find(m.topic);
    static const std::string kUnknown = "?";
    const std::string& topic =
        ti != sel.topic_index.end() ? sel.topics[ti->second].def.name : kUnknown;
    const std::string& type =
        ti != sel.topic_index.end() ? sel.topics[ti->second].def.type_name : kUnknown;
    static const WriterName kUnknownWriter{"?", nullptr};
    auto wi = guid_of.find(m.writer);
    const WriterName& w = wi != guid_of.end() ? wi->second : kUnknownWriter;
    if (csv && dec.decoder) {
      append_decoded_csv_row(buf, *r, topic, w, dec);
    } else if (csv) {
      append_csv_row(buf, *r, topic, type, w);
    } else {
      append_json_line(buf, *r, topic, type, w, dec);
    }
    ++n;
    if (buf.size() >= (1u << 20)) {
      dst.stream().write(buf.data(), static_cast<std::streamsize>(buf.size()));
      buf.clear();
      if (!dst.stream()) break;
    }
    if (progress.tick(n, dst)) break;
  }
  return n;
}

// --decode: the decoder for the selection (warnings for topics without a type), or the
// kExitUsage report. Nothing has been written when this fails.
std::optional<int> prepare_decoder(const ExportOptions& o, const detail::ResolvedSelection& sel,
                                   std::optional<detail::SampleDecoder>& decoder,
                                   std::ostream& err) {
  if (!o.decode) {
    if (o.idl_files.empty()) return std::nullopt;
    return detail::report(err, kExitUsage, "--idl is used with --decode");
  }
  const bool recorded = std::any_of(sel.topics.begin(), sel.topics.end(), [&](const auto& t) {
    return detail::recorded_type(sel.recorded_types, t.def.type_name) != nullptr;
  });
  if (o.idl_files.empty() && !recorded) {
    return detail::report(err, kExitUsage,
                          "--decode needs the type definitions: the recording has none for the "
                          "selected topics, give --idl FILE (repeatable)");
  }
  std::vector<std::string> missing, warnings;
  auto d = detail::SampleDecoder::create(o.idl_files, sel, missing, warnings);
  for (const auto& w : warnings) detail::warn(err, w);
  if (!d) return detail::report(err, kExitUsage, d.error());
  for (const auto& m : missing)
    detail::warn(err, "no type for topic " + m + ": exported undecoded");
  for (const auto& m : d->type_mismatches()) detail::warn(err, m);
  if (o.format == ExportFormat::kCsv && (!missing.empty() || d->single_type_name().empty())) {
    return detail::report(err, kExitUsage,
                          "--format csv --decode needs topics of one type, all with a type "
                          "(select them with --topics)");
  }
  decoder.emplace(std::move(d).value());
  return std::nullopt;
}

std::string csv_header(const detail::SampleDecoder* decoder, bool members) {
  const std::string writer = members ? "writer,member" : "writer";
  if (!decoder) {
    return "topic,type," + writer +
           ",seq,source_time,reception_time,source_ns,reception_ns,flags,key_hash,"
           "payload_base64\n";
  }
  std::string h = "topic," + writer + ",seq,source_time,reception_time";
  for (const auto& c : decoder->csv_columns()) {
    h += ',';
    detail::append_csv_field(h, c);
  }
  return h + ",decode_error\n";
}

}  // namespace

namespace detail {

ExportProgress::ExportProgress(const ExportOptions& o, const ResolvedSelection& sel,
                               std::ostream& err)
    : o_(o),
      err_(err),
      total_(sel.estimated_samples),
      about_(o.selection.start.has_value() || o.selection.end.has_value()),
      start_(std::chrono::steady_clock::now()),
      next_(start_ + o.progress_interval) {}

double ExportProgress::seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

std::string ExportProgress::count(uint64_t samples, bool of_total) const {
  std::string s = std::to_string(samples);
  if (of_total && total_ > 0) s += (about_ ? " of about " : " of ") + std::to_string(total_);
  return s + " sample" + (samples == 1 && !(of_total && total_ > 0) ? "" : "s");
}

void ExportProgress::print_if_due(uint64_t samples, const OutputFile& out) {
  if (!o_.progress) return;
  const auto now = std::chrono::steady_clock::now();
  if (now < next_) return;
  next_ = now + o_.progress_interval;
  const double s = std::chrono::duration<double>(now - start_).count();
  std::string line = "export: " + count(samples, true);
  if (total_ > 0 && samples <= total_) {
    line += " (" + std::to_string(samples * 100 / total_) + "%)";
  }
  line += ", " + human_bytes(out.bytes()) + ", " +
          human_bytes(static_cast<uint64_t>(static_cast<double>(out.bytes()) / s)) + "/s";
  if (o_.progress_tty) {
    err_ << '\r' << line << "\033[K";
    in_place_ = true;
  } else {
    err_ << "pubsub-replay: " << line << '\n';
  }
  err_.flush();
}

void ExportProgress::end_line() {
  if (!in_place_) return;
  err_ << "\r\033[K";
  err_.flush();
  in_place_ = false;
}

int finish_export(const ExportOptions& o, OutputFile& out, const storage::Cursor& cursor,
                  ExportProgress& progress, const ExportTally& tally, std::ostream& err) {
  progress.end_line();
  const std::string after = " after " + progress.count(tally.samples, true);
  const int sig = o.stop ? o.stop->load() : 0;
  if (sig != 0) {
    out.abandon();
    const char* name = sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : nullptr;
    return report(err, 128 + sig,
                  "export interrupted" +
                      (name ? std::string(" by ") + name : " by signal " + std::to_string(sig)) +
                      after + "; " + out.outcome());
  }
  if (!out.stream()) {
    auto committed = out.commit();  // fails: the stream failed; removes the temporary
    return report(err, kExitProblems,
                  "write error on " + out.name() + after + ": " +
                      (committed ? std::string("unknown error") : committed.error().message) +
                      "; " + out.outcome());
  }
  if (!cursor.status().ok()) {
    out.abandon();
    return report(
        err, kExitProblems,
        "reading stopped" + after + ": " + cursor.status().error().message + "; " + out.outcome());
  }
  if (auto committed = out.commit(); !committed) {
    return report(err, kExitProblems,
                  "write error on " + out.name() + after + ": " + committed.error().message + "; " +
                      out.outcome());
  }
  if (o.progress && !tally.done_line.empty()) {
    char secs[32];
    std::snprintf(secs, sizeof secs, " in %.1f s", progress.seconds());
    err << "pubsub-replay: " << tally.done_line << secs << '\n';
  }
  for (const auto& w : tally.end_warnings) warn(err, w);
  if (tally.decode_failures) {
    return report(err, kExitProblems,
                  std::to_string(tally.decode_failures) +
                      " samples could not be decoded (exported with decode_error and "
                      "payload_base64)");
  }
  if (tally.suspicious) {
    return report(err, kExitProblems,
                  "the types used may not match the recorded data (see the warnings above); "
                  "the values exported may be wrong");
  }
  if (tally.damaged || cursor.problems()) {
    return report(err, kExitProblems,
                  "damaged chunks were skipped; the export is incomplete "
                  "(see 'pubsub-replay verify " +
                      o.dir + "')");
  }
  return kExitOk;
}

}  // namespace detail

int export_records(const ExportOptions& o, std::ostream& out, std::ostream& err) {
  uint64_t damaged = 0;
  // Problems met while opening are told once the topics' names are known.
  std::vector<storage::Problem> at_open;
  std::map<storage::TopicId, std::string> names;
  bool opened = false;
  auto rec = detail::open_recording(o.dir, [&](const storage::Problem& p) {
    ++damaged;
    if (!opened) return at_open.push_back(p);
    detail::warn(err, "skipping damaged data: " + detail::describe(p, names));
  });
  if (!rec) return detail::report(err, kExitUsage, rec.error());
  names = detail::topic_names(**rec);
  opened = true;
  for (const auto& p : at_open)
    detail::warn(err, "skipping damaged data: " + detail::describe(p, names));
  auto sel = detail::resolve_selection(**rec, o.selection);
  if (!sel) return detail::report(err, kExitUsage, sel.error());
  if (o.format == ExportFormat::kMcap) return detail::export_mcap(o, **rec, *sel, err, damaged);
  std::optional<detail::SampleDecoder> decoder;
  if (auto status = prepare_decoder(o, *sel, decoder, err)) return *status;
  auto writers = (*rec)->writers();
  if (!writers) {
    return detail::report(err, kExitUsage,
                          o.dir + ": cannot read the writers: " + writers.error().message);
  }
  GuidNames guid_of;
  static const std::string kNoMember;
  const bool members = !o.writer_members.empty();
  for (const auto& w : *writers) {
    WriterName& n = guid_of[w.id];
    n.guid = common::to_hex(w.def.guid);
    if (!members) continue;
    auto it = o.writer_members.find(n.guid);
    n.member = it != o.writer_members.end() ? &it->second : &kNoMember;
  }
  auto cursor = (*rec)->query(sel->query);
  if (!cursor) {
    return detail::report(err, kExitUsage, o.dir + ": cannot query: " + cursor.error().message);
  }

  auto file = detail::OutputFile::open(o.output, out);
  if (!file) return detail::report(err, kExitUsage, file.error());
  detail::OutputFile& dst = **file;
  const bool csv = o.format == ExportFormat::kCsv;
  detail::ExportProgress progress(o, *sel, err);
  Decoding dec{decoder ? &*decoder : nullptr, &err, &progress};
  std::string buf;
  buf.reserve(1 << 20);
  if (csv) buf += csv_header(dec.decoder, members);
  detail::ExportTally tally;
  tally.samples = write_records(*cursor, *sel, guid_of, csv, dec, buf, dst, progress);
  dst.stream().write(buf.data(), static_cast<std::streamsize>(buf.size()));
  if (dec.failures > Decoding::kMaxReported) {
    progress.end_line();
    detail::warn(err, "... and " + std::to_string(dec.failures - Decoding::kMaxReported) +
                          " more samples that could not be decoded");
  }
  tally.damaged = damaged;
  tally.decode_failures = dec.failures;
  tally.end_warnings = dec.trailing_warnings();
  tally.suspicious = dec.trailing.size() + (decoder ? decoder->type_mismatches().size() : 0);
  tally.done_line = "exported " + progress.count(tally.samples, false) + " of " +
                    detail::plural(sel->topics.size(), "topic") + " to " + dst.name() + ", " +
                    detail::human_bytes(dst.bytes());
  return detail::finish_export(o, dst, *cursor, progress, tally, err);
}

}  // namespace service::replay
