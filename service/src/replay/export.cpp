// export: the selected records as JSON lines or CSV, in reception-time order.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <ostream>
#include <string>

#include "common.hpp"
#include "decode.hpp"
#include "export_mcap.hpp"
#include "service/recording_schema.hpp"

namespace service::replay {
namespace {

using GuidNames = std::map<storage::WriterId, std::string>;

// --decode: the decoder and what went wrong (messages on `err`, the first kMaxReported).
struct Decoding {
  const detail::SampleDecoder* decoder = nullptr;  // null: no decoding
  std::ostream* err = nullptr;
  uint64_t failures = 0;
  static constexpr uint64_t kMaxReported = 20;

  // The value of a record, or null with `error` set (decoding failed) or left empty (no type,
  // key-only sample).
  std::optional<types::Json> value(const storage::RecordView& r, const std::string& topic,
                                   std::string& error) {
    const auto* type = decoder->type_of(r.meta.topic);
    if (!type || (r.meta.flags & kFlagKeyOnly)) return std::nullopt;
    auto v = detail::SampleDecoder::decode(*type, r.payload);
    if (v) return std::move(v).value();
    error = v.error().message;
    if (++failures <= kMaxReported) {
      detail::warn(*err, "topic " + topic + " seq " + std::to_string(r.meta.sequence) +
                             ": cannot decode: " + error);
    }
    return std::nullopt;
  }
};

std::string dump(const types::Json& v) {
  return v.dump(-1, ' ', false, types::Json::error_handler_t::replace);
}

void append_decoded_csv_row(std::string& buf, const storage::RecordView& r,
                            const std::string& topic, const std::string& guid, Decoding& dec) {
  const storage::RecordMeta& m = r.meta;
  const bool has_source = (m.flags & kFlagHasSourceTimestamp) != 0;
  detail::append_csv_field(buf, topic);
  buf += ',' + guid + ',' + std::to_string(m.sequence) + ',';
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
                    const std::string& type, const std::string& guid) {
  const storage::RecordMeta& m = r.meta;
  const bool has_source = (m.flags & kFlagHasSourceTimestamp) != 0;
  const std::string key = m.has_key_hash ? detail::hex(m.key_hash) : std::string();
  detail::append_csv_field(buf, topic);
  buf += ',';
  detail::append_csv_field(buf, type);
  buf += ',' + guid + ',' + std::to_string(m.sequence) + ',';
  if (has_source) buf += format_iso(m.source_ns, 9);
  buf += ',' + format_iso(m.reception_ns, 9) + ',' + std::to_string(m.source_ns) + ',' +
         std::to_string(m.reception_ns) + ',' + std::to_string(m.flags) + ',' + key + ',';
  buf += detail::base64(r.payload);
  buf += '\n';
}

void append_json_line(std::string& buf, const storage::RecordView& r, const std::string& topic,
                      const std::string& type, const std::string& guid, Decoding& dec) {
  const storage::RecordMeta& m = r.meta;
  const bool has_source = (m.flags & kFlagHasSourceTimestamp) != 0;
  const std::string key = m.has_key_hash ? detail::hex(m.key_hash) : std::string();
  buf += "{\"topic\":";
  detail::append_json_string(buf, topic);
  buf += ",\"type\":";
  detail::append_json_string(buf, type);
  buf += ",\"writer\":\"" + guid + "\",\"seq\":" + std::to_string(m.sequence) + ",\"source_time\":";
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

// Every record of the cursor into `buf`, which goes to `dst` whenever it holds 1 MiB (and the
// loop stops at a write error). Returns the number of records.
uint64_t write_records(storage::Cursor& cursor, const detail::ResolvedSelection& sel,
                       const GuidNames& guid_of, bool csv, Decoding& dec, std::string& buf,
                       std::ostream& dst) {
  uint64_t n = 0;
  while (const storage::RecordView* r = cursor.next()) {
    const storage::RecordMeta& m = r->meta;
    auto ti = sel.topic_index.find(m.topic);
    static const std::string kUnknown = "?";
    const std::string& topic =
        ti != sel.topic_index.end() ? sel.topics[ti->second].def.name : kUnknown;
    const std::string& type =
        ti != sel.topic_index.end() ? sel.topics[ti->second].def.type_name : kUnknown;
    auto wi = guid_of.find(m.writer);
    const std::string& guid = wi != guid_of.end() ? wi->second : kUnknown;
    if (csv && dec.decoder) {
      append_decoded_csv_row(buf, *r, topic, guid, dec);
    } else if (csv) {
      append_csv_row(buf, *r, topic, type, guid);
    } else {
      append_json_line(buf, *r, topic, type, guid, dec);
    }
    ++n;
    if (buf.size() >= (1u << 20)) {
      dst.write(buf.data(), static_cast<std::streamsize>(buf.size()));
      buf.clear();
      if (!dst) break;
    }
  }
  return n;
}

// The exit status once everything is written: a write error, reading stopped early, or damaged
// chunks skipped (kExitProblems), else kExitOk.
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
  if (o.format == ExportFormat::kCsv && (!missing.empty() || d->single_type_name().empty())) {
    return detail::report(err, kExitUsage,
                          "--format csv --decode needs topics of one type, all with a type "
                          "(select them with --topics)");
  }
  decoder.emplace(std::move(d).value());
  return std::nullopt;
}

std::string csv_header(const detail::SampleDecoder* decoder) {
  if (!decoder) {
    return "topic,type,writer,seq,source_time,reception_time,source_ns,reception_ns,flags,"
           "key_hash,payload_base64\n";
  }
  std::string h = "topic,writer,seq,source_time,reception_time";
  for (const auto& c : decoder->csv_columns()) {
    h += ',';
    detail::append_csv_field(h, c);
  }
  return h + ",decode_error\n";
}

}  // namespace

namespace detail {

int export_end(const ExportOptions& o, const std::string& write_error,
               const storage::Cursor& cursor, uint64_t n, uint64_t damaged,
               uint64_t decode_failures, const std::string& done_line, std::ostream& err) {
  if (!write_error.empty()) {
    return report(err, kExitProblems, "write error on " + write_error);
  }
  if (!cursor.status().ok()) {
    return report(err, kExitProblems,
                  "reading stopped after " + std::to_string(n) +
                      " samples: " + cursor.status().error().message);
  }
  if (!done_line.empty()) err << "pubsub-replay: " << done_line << '\n';
  if (decode_failures) {
    return report(err, kExitProblems,
                  std::to_string(decode_failures) +
                      " samples could not be decoded (exported with decode_error and "
                      "payload_base64)");
  }
  if (damaged || cursor.problems()) {
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
  for (const auto& w : *writers) guid_of[w.id] = detail::hex(w.def.guid);
  auto cursor = (*rec)->query(sel->query);
  if (!cursor) {
    return detail::report(err, kExitUsage, o.dir + ": cannot query: " + cursor.error().message);
  }

  std::ofstream file;
  std::ostream* dst = &out;
  if (!o.output.empty()) {
    file.open(o.output, std::ios::binary | std::ios::trunc);
    if (!file) {
      return detail::report(err, kExitUsage,
                            "cannot write " + o.output + ": " + std::strerror(errno));
    }
    dst = &file;
  }
  const bool csv = o.format == ExportFormat::kCsv;
  Decoding dec{decoder ? &*decoder : nullptr, &err};
  std::string buf;
  buf.reserve(1 << 20);
  if (csv) buf += csv_header(dec.decoder);
  const uint64_t n = write_records(*cursor, *sel, guid_of, csv, dec, buf, *dst);
  dst->write(buf.data(), static_cast<std::streamsize>(buf.size()));
  dst->flush();
  if (dec.failures > Decoding::kMaxReported) {
    detail::warn(err, "... and " + std::to_string(dec.failures - Decoding::kMaxReported) +
                          " more samples that could not be decoded");
  }
  const std::string write_error =
      *dst ? std::string()
           : (o.output.empty() ? std::string("standard output") : o.output) + ": " +
                 std::strerror(errno);
  const std::string done = o.output.empty()
                               ? std::string()
                               : "exported " + std::to_string(n) + " samples to " + o.output;
  return detail::export_end(o, write_error, *cursor, n, damaged, dec.failures, done, err);
}

}  // namespace service::replay
