// export: the selected records as JSON lines or CSV, in reception-time order.
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <ostream>
#include <string>

#include "common.hpp"
#include "service/recording_schema.hpp"

namespace service::replay {
namespace {

using GuidNames = std::map<storage::WriterId, std::string>;

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
                      const std::string& type, const std::string& guid) {
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
  buf += ",\"payload_base64\":\"";
  buf += detail::base64(r.payload);
  buf += "\"}\n";
}

// Every record of the cursor into `buf`, which goes to `dst` whenever it holds 1 MiB (and the
// loop stops at a write error). Returns the number of records.
uint64_t write_records(storage::Cursor& cursor, const detail::ResolvedSelection& sel,
                       const GuidNames& guid_of, bool csv, std::string& buf, std::ostream& dst) {
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
    if (csv) {
      append_csv_row(buf, *r, topic, type, guid);
    } else {
      append_json_line(buf, *r, topic, type, guid);
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
int export_status(const ExportOptions& o, const std::ostream& dst, const storage::Cursor& cursor,
                  uint64_t n, uint64_t damaged, std::ostream& err) {
  if (!dst) {
    return detail::report(err, kExitProblems,
                          "write error on " +
                              (o.output.empty() ? std::string("standard output") : o.output) +
                              ": " + std::strerror(errno));
  }
  if (!cursor.status().ok()) {
    return detail::report(err, kExitProblems,
                          "reading stopped after " + std::to_string(n) +
                              " samples: " + cursor.status().error().message);
  }
  if (!o.output.empty()) {
    err << "pubsub-replay: exported " << n << " samples to " << o.output << '\n';
  }
  if (damaged || cursor.problems()) {
    return detail::report(err, kExitProblems,
                          "damaged chunks were skipped; the export is incomplete "
                          "(see 'pubsub-replay verify " +
                              o.dir + "')");
  }
  return kExitOk;
}

}  // namespace

int export_records(const ExportOptions& o, std::ostream& out, std::ostream& err) {
  uint64_t damaged = 0;
  auto rec = detail::open_recording(o.dir, [&](const storage::Problem& p) {
    ++damaged;
    detail::warn(err, "skipping damaged data: " + detail::describe(p, {}));
  });
  if (!rec) return detail::report(err, kExitUsage, rec.error());
  auto sel = detail::resolve_selection(**rec, o.selection);
  if (!sel) return detail::report(err, kExitUsage, sel.error());
  auto writers = (*rec)->writers();
  if (!writers) {
    return detail::report(err, kExitUsage,
                          o.dir + ": cannot read the writers: " + writers.error().message);
  }
  GuidNames guid_of;
  for (const auto& w : *writers) guid_of[w.id] = detail::hex(w.def.guid);

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
  std::string buf;
  buf.reserve(1 << 20);
  if (csv) {
    buf +=
        "topic,type,writer,seq,source_time,reception_time,source_ns,reception_ns,flags,"
        "key_hash,payload_base64\n";
  }
  auto cursor = (*rec)->query(sel->query);
  if (!cursor) {
    return detail::report(err, kExitUsage, o.dir + ": cannot query: " + cursor.error().message);
  }
  const uint64_t n = write_records(*cursor, *sel, guid_of, csv, buf, *dst);
  dst->write(buf.data(), static_cast<std::streamsize>(buf.size()));
  dst->flush();
  return export_status(o, *dst, *cursor, n, damaged, err);
}

}  // namespace service::replay
