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
//
// With the ros2 profile (ExportOptions::mcap_profile, ros2.hpp) the file is what rosbag2's MCAP
// storage writes: Header profile "ros2"; only ROS 2 topics (rt/, rq/, rr/ with dds_ types; the
// others are left out and named); channels under ROS names with metadata offered_qos_profiles
// (every writer of the topic) beside our own; schemas "pkg/msg/Name" in ros2msg (ros2idl where
// .msg cannot state the type; encoding "" and no text for a type the recording does not hold,
// as rosbag2 does); and a Metadata record "rosbag2" with serialized_metadata (BagMetadata 9).
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "common.hpp"
#include "common/hex.hpp"
#include "decode.hpp"
#include "export_mcap.hpp"
#include "mcap_writer.hpp"
#include "ros2.hpp"
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

// What the channels of an export are: their keys, the topics left out (ros2 profile: not ROS 2
// topics, "Square (ShapeType)"), the topics without a type, and per channel what rosbag2's
// metadata record lists.
struct Channels {
  std::map<ChannelKey, uint16_t> of;
  std::vector<std::string> left_out;
  size_t untyped = 0;
  std::map<uint16_t, Ros2BagTopic> ros2;
};

// Each topic's (and member's) writers' QoS, from the recording's writer definitions.
std::map<ChannelKey, std::vector<RecordedQos>> writer_qos(
    const std::vector<storage::WriterInfo>& writers,
    const std::map<storage::WriterId, std::string>& member_of) {
  std::map<ChannelKey, std::vector<RecordedQos>> out;
  for (const auto& wi : writers) {
    auto q = decode_qos(wi.def.qos);
    if (q && q->not_matched.empty()) out[{wi.def.topic, member_of.at(wi.id)}].push_back(*q);
  }
  return out;
}

// The schema of a topic's type (0: none) and the name it goes by; registers it once.
std::pair<uint16_t, std::string> schema_for(McapWriter& w, const SampleDecoder::TopicType* tt,
                                            const std::string& ros_type, bool ros2,
                                            std::map<std::string, uint16_t>& schema_of) {
  std::optional<McapSchema> def;
  if (ros2) {
    def = McapSchema{0, ros_type, "", ""};  // rosbag2's form for a type without definition
    if (tt)
      if (auto s = ros2_schema(*tt->lib, tt->id))
        def = McapSchema{0, s->name, s->encoding, s->text};
  } else if (tt) {
    def = McapSchema{0, tt->name, "omgidl",
                     types::to_idl(*tt->lib, tt->id, types::IdlDialect::kFoxglove)};
  }
  if (!def) return {0, ""};
  auto [it, added] = schema_of.emplace(def->name, static_cast<uint16_t>(schema_of.size() + 1));
  def->id = it->second;
  if (added) w.add_schema(*def);
  return {it->second, def->encoding.empty() ? "" : def->name};
}

// Schemas and channels for the selected topics.
Channels add_channels(McapWriter& w, const ExportOptions& o, const ResolvedSelection& sel,
                      const SampleDecoder& types,
                      const std::map<storage::TopicId, std::set<std::string>>& members,
                      const std::map<ChannelKey, std::vector<RecordedQos>>& qos) {
  const bool ros2 = o.mcap_profile == "ros2";
  Channels out;
  std::map<std::string, uint16_t> schema_of;  // schema name -> id
  uint16_t next_channel = 1;
  for (const storage::TopicInfo& t : sel.topics) {
    const auto ros_topic = ros_topic_from_dds(t.def.name);
    const auto ros_type = ros_type_from_dds(t.def.type_name);
    if (ros2 && (!ros_topic || !ros_type)) {
      out.left_out.push_back(t.def.name + " (" + t.def.type_name + ")");
      continue;
    }
    auto tm = members.find(t.id);
    const std::set<std::string> one{""};
    for (const std::string& member : tm == members.end() ? one : tm->second) {
      const auto* tt = types.type_of(t.id);
      auto [schema, described] = schema_for(w, tt, ros2 ? *ros_type : "", ros2, schema_of);
      if (described.empty()) ++out.untyped;
      auto wq = qos.find({t.id, member});
      const std::vector<RecordedQos> offered =
          wq == qos.end() ? std::vector<RecordedQos>{} : wq->second;
      McapChannel c;
      c.id = next_channel++;
      c.schema_id = schema;
      c.topic = ros2 ? *ros_topic : t.def.name;
      c.message_encoding = "cdr";
      if (ros2) {
        c.metadata["offered_qos_profiles"] = offered_qos_profiles(offered);
        out.ros2[c.id] = Ros2BagTopic{*ros_topic, *ros_type, offered, 0};
      } else {
        c.metadata["keyed"] = t.def.keyed ? "true" : "false";
        c.metadata["type_source"] = tt ? tt->source : "none";
      }
      c.metadata["type_name"] = t.def.type_name;
      c.metadata["qos"] =
          std::string(reinterpret_cast<const char*>(t.def.qos.data()), t.def.qos.size());
      if (!member.empty()) c.metadata["member"] = member;
      w.add_channel(c);
      out.of[{t.id, member}] = c.id;
    }
  }
  return out;
}

// ros2 profile: rosbag2's metadata record, with the counts and times the writer kept.
void add_rosbag2_metadata(McapWriter& w, Channels& ch, const std::string& output) {
  std::vector<Ros2BagTopic> topics;
  for (auto& [id, t] : ch.ros2) {
    t.messages = w.message_count(id);
    topics.push_back(t);
  }
  const std::string file = std::filesystem::path(output).filename().string();
  w.add_metadata("rosbag2",
                 {{"serialized_metadata", rosbag2_metadata(topics, w.start_time(), w.end_time(),
                                                           w.message_count(), file)}});
}

// Each writer's channel (0: none), indexed by writer id, so that a record finds its channel
// with no lookup by topic and member.
std::vector<uint16_t> writer_channels(const std::vector<storage::WriterInfo>& writers,
                                      const std::map<storage::WriterId, std::string>& member_of,
                                      const std::map<ChannelKey, uint16_t>& channel_of) {
  std::vector<uint16_t> out;
  for (const auto& wi : writers) {
    auto ch = channel_of.find({wi.def.topic, member_of.at(wi.id)});
    if (out.size() <= wi.id) out.resize(wi.id + 1, 0);
    out[wi.id] = ch == channel_of.end() ? 0 : ch->second;
  }
  return out;
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
  McapWriterOptions wo;
  if (o.mcap_profile == "ros2") wo.profile = "ros2";
  McapWriter w(out.stream(), wo);
  Channels channels = add_channels(w, o, sel, *types, members, writer_qos(*writers, member_of));
  const auto& channel_of = channels.of;
  for (const auto& t : channels.left_out)
    warn(err, "topic " + t + " left out: not a ROS 2 topic (--profile ros2)");
  const std::vector<uint16_t> channel_of_writer = writer_channels(*writers, member_of, channel_of);
  ExportProgress progress(o, sel, err);
  uint64_t n = 0;
  while (const storage::RecordView* r = cursor->next()) {
    const storage::RecordMeta& m = r->meta;
    const uint16_t channel = m.writer < channel_of_writer.size() ? channel_of_writer[m.writer] : 0;
    if (channel == 0) continue;
    const bool has_source = (m.flags & kFlagHasSourceTimestamp) != 0;
    w.add_message(channel, static_cast<uint32_t>(m.sequence), static_cast<uint64_t>(m.reception_ns),
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
    if (o.mcap_profile == "ros2") add_rosbag2_metadata(w, channels, o.output);
    auto done = w.finish();
    if (!done && out.stream()) {
      progress.end_line();
      return report(err, kExitProblems,
                    "cannot write " + o.output + ": " + done.error().message + "; " +
                        (out.abandon(), out.outcome()));
    }
  }
  std::string line = "exported " + std::to_string(n) + " samples on " +
                     std::to_string(channel_of.size()) + " channels (" +
                     std::to_string(channels.untyped) + " without a type";
  for (size_t i = 0; i < missing.size(); ++i) line += (i ? ", " : ": ") + missing[i];
  line += ")";
  if (!channels.left_out.empty())
    line += ", " + std::to_string(channels.left_out.size()) + " topics left out";
  line += " to " + o.output + ", " + human_bytes(out.bytes());
  tally.done_line = line;
  return finish_export(o, out, *cursor, progress, tally, err);
}

}  // namespace service::replay::detail
