// export --format mcap: the selected records as an MCAP file (mcap_writer.hpp) that Foxglove and
// the MCAP tools open. One Schema per type found in the --idl files (encoding "omgidl", the IDL
// text of the type and its dependencies from types::to_idl), one Channel per recorded topic
// (message_encoding "cdr"; metadata: type name, keyed, the recorded QoS as JSON, where the type
// came from; in an export of several recordings one per topic and member, metadata "member"), one
// Message per sample (log_time = reception time, publish_time = source time or the reception time
// when the writer sent none, sequence = the RTPS sequence number modulo 2^32, data = the payload as
// recorded, encapsulation header included). Topics without a type get schema id 0, which the spec
// allows, and are counted in the summary line. Runs on the calling thread; progress on `err`
// (ExportProgress), written through a temporary file that is renamed at the end (OutputFile).
#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "common.hpp"
#include "common/hex.hpp"
#include "decode.hpp"
#include "export_mcap.hpp"
#include "mcap_writer.hpp"
#include "service/recording_schema.hpp"
#include "types/idl_writer.hpp"

namespace service::replay::detail {
namespace {

// A channel per selected topic, or in an export of several recordings per topic and member
// (ExportOptions::writer_members; metadata "member"): the channel of a sample by its topic and
// the member that recorded its writer ("" for one recording).
using ChannelKey = std::pair<storage::TopicId, std::string>;

// Each topic's members, from the writers' GUIDs (one "" per topic without writer_members).
std::map<storage::TopicId, std::set<std::string>> topic_members(
    const ExportOptions& o, const std::vector<storage::WriterInfo>& writers,
    std::map<storage::WriterId, std::string>& member_of) {
  std::map<storage::TopicId, std::set<std::string>> out;
  for (const auto& wi : writers) {
    std::string member;
    if (!o.writer_members.empty()) {
      auto it = o.writer_members.find(common::to_hex(wi.def.guid));
      if (it != o.writer_members.end()) member = it->second;
    }
    member_of[wi.id] = member;
    out[wi.def.topic].insert(member);
  }
  return out;
}

// Schemas and channels for the selected topics; returns how many channels have no schema.
size_t add_channels(McapWriter& w, const ResolvedSelection& sel, const SampleDecoder& types,
                    const std::map<storage::TopicId, std::set<std::string>>& members,
                    std::map<ChannelKey, uint16_t>& channel_of) {
  std::map<std::string, uint16_t> schema_of;  // type name -> schema id
  size_t untyped = 0;
  uint16_t next_channel = 1;
  for (const storage::TopicInfo& t : sel.topics) {
    auto tm = members.find(t.id);
    const std::set<std::string> one{""};
    for (const std::string& member : tm == members.end() ? one : tm->second) {
      uint16_t schema = 0;
      const char* source = "none";
      if (const auto* tt = types.type_of(t.id)) {
        source = tt->source;
        auto [it, added] = schema_of.emplace(tt->name, static_cast<uint16_t>(schema_of.size() + 1));
        if (added)
          w.add_schema({it->second, tt->name, "omgidl",
                        types::to_idl(*tt->lib, tt->id, types::IdlDialect::kFoxglove)});
        schema = it->second;
      } else {
        ++untyped;
      }
      McapChannel c;
      c.id = next_channel++;
      c.schema_id = schema;
      c.topic = t.def.name;
      c.message_encoding = "cdr";
      c.metadata["type_name"] = t.def.type_name;
      c.metadata["keyed"] = t.def.keyed ? "true" : "false";
      c.metadata["qos"] =
          std::string(reinterpret_cast<const char*>(t.def.qos.data()), t.def.qos.size());
      c.metadata["type_source"] = source;
      if (!member.empty()) c.metadata["member"] = member;
      w.add_channel(c);
      channel_of[{t.id, member}] = c.id;
    }
  }
  return untyped;
}

}  // namespace

int export_mcap(const ExportOptions& o, storage::Recording& rec, const ResolvedSelection& sel,
                std::ostream& err, uint64_t& damaged) {
  if (o.output.empty()) {
    return report(err, kExitUsage, "--format mcap needs an output file: -o FILE.mcap");
  }
  if (o.decode) {
    return report(err, kExitUsage,
                  "--decode does not apply to --format mcap (the types go into the file as "
                  "schemas: give --idl)");
  }
  std::vector<std::string> missing, warnings;
  auto types = SampleDecoder::create(o.idl_files, sel, missing, warnings, false);
  for (const auto& w : warnings) warn(err, w);
  if (!types) return report(err, kExitUsage, types.error());
  auto cursor = rec.query(sel.query);
  if (!cursor) return report(err, kExitUsage, o.dir + ": cannot query: " + cursor.error().message);
  auto file = OutputFile::open(o.output, err);
  if (!file) return report(err, kExitUsage, file.error());
  OutputFile& out = **file;
  for (const auto& m : types->type_mismatches()) warn(err, m);

  auto writers = rec.writers();
  if (!writers)
    return report(err, kExitUsage, o.dir + ": cannot read the writers: " + writers.error().message);
  std::map<storage::WriterId, std::string> member_of;
  const auto members = topic_members(o, *writers, member_of);
  McapWriter w(out.stream());
  std::map<ChannelKey, uint16_t> channel_of;
  const size_t untyped = add_channels(w, sel, *types, members, channel_of);
  ExportProgress progress(o, sel, err);
  uint64_t n = 0;
  while (const storage::RecordView* r = cursor->next()) {
    const storage::RecordMeta& m = r->meta;
    auto mo = member_of.find(m.writer);
    auto ch = channel_of.find({m.topic, mo == member_of.end() ? std::string() : mo->second});
    if (ch == channel_of.end()) continue;
    const bool has_source = (m.flags & kFlagHasSourceTimestamp) != 0;
    w.add_message(ch->second, static_cast<uint32_t>(m.sequence),
                  static_cast<uint64_t>(m.reception_ns),
                  static_cast<uint64_t>(has_source ? m.source_ns : m.reception_ns),
                  std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(r->payload.data()),
                                           r->payload.size()));
    ++n;
    if (!out.stream() || progress.tick(n, out)) break;
  }
  ExportTally tally;
  tally.samples = n;
  tally.damaged = damaged;
  tally.suspicious = types->type_mismatches().size();
  const bool stopped = o.stop && o.stop->load() != 0;
  if (!stopped && out.stream()) {
    auto done = w.finish();
    if (!done && out.stream()) {
      progress.end_line();
      return report(err, kExitProblems,
                    "cannot write " + o.output + ": " + done.error().message + "; " +
                        (out.abandon(), out.outcome()));
    }
  }
  std::string line = "exported " + std::to_string(n) + " samples on " +
                     std::to_string(channel_of.size()) + " channels (" + std::to_string(untyped) +
                     " without a type";
  for (size_t i = 0; i < missing.size(); ++i) line += (i ? ", " : ": ") + missing[i];
  line += ") to " + o.output + ", " + human_bytes(out.bytes());
  tally.done_line = line;
  return finish_export(o, out, *cursor, progress, tally, err);
}

}  // namespace service::replay::detail
