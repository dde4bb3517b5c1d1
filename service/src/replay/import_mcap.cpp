// pubsub-replay import FILE.mcap -o DIR (service/replay.hpp): an MCAP file with CDR messages -
// a rosbag2 bag, an eProsima DDS Record & Replay file, our own export - as a recording, so that
// info, verify, export and play take it like one we recorded.
//
// One thread: McapReader (mcap_reader.hpp) reads the file front to back and hands each record
// to the Importer, which writes the new recording (SegmentWriter). A channel becomes a topic
// and one writer at its first message:
//   - names: the DDS names our own export kept (channel metadata type_name), else ROS 2's mapped
//     back (ros2 profile, or a ros2msg / ros2idl schema: "/chatter" -> "rt/chatter",
//     "std_msgs/msg/String" -> "std_msgs::msg::dds_::String_"), else the channel's topic and
//     the schema's name as they are;
//   - the type: from the schema (omgidl: IDL, ros2msg: .msg, ros2idl: IDL sections), stored as
//     IDL, with the TypeInformation that idlc would give it (so play announces it and XTypes
//     readers match); a channel whose schema does not parse is imported without a type;
//   - QoS: our own (metadata qos), else rosbag2's offered_qos_profiles (its first profile),
//     else reliable, volatile, keep-all; the data representation from the first message;
//   - messages: reception time = log_time, source time = publish_time (none when 0), sequence
//     numbers counting from 1 per channel (an export of ours keeps its RTPS ones).
// Channels whose message encoding is not "cdr" are left out, each named. A damaged chunk is
// skipped and a file cut short is imported up to the cut (exit 1, as verify); anything refused
// before or while writing (not MCAP, an unknown chunk compression, DIR not empty, a write error)
// removes DIR (exit 2 or 1).
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <map>
#include <optional>

#include "common.hpp"
#include "mcap_reader.hpp"
#include "ros2.hpp"
#include "service/recording_schema.hpp"
#include "service/replay.hpp"
#include "storage/segment_writer.hpp"
#include "types/idl.hpp"
#include "types/idl_writer.hpp"
#include "types/type_object_writer.hpp"

namespace service::replay {
namespace {

using Clock = std::chrono::steady_clock;

// A channel of the file and what the import made of it (at its first message).
struct ChannelState {
  detail::McapChannel def;
  bool defined = false;
  bool left_out = false;
  storage::TopicId topic = 0;
  storage::WriterId writer = 0;
  int64_t last_seq = 0;
};

// A schema's types, parsed by its encoding; nullopt (and `why`) when it gives none.
std::optional<types::TypeLibrary> schema_types(const detail::McapSchema& s, std::string& why) {
  Result<types::TypeLibrary> lib = Error{Errc::kUnsupported, ""};
  if (s.encoding == "omgidl")
    lib = types::parse_idl(s.data, s.name);
  else if (s.encoding == "ros2msg")
    lib = detail::parse_ros2msg(s.name, s.data);
  else if (s.encoding == "ros2idl")
    lib = detail::parse_ros2idl(s.name, s.data);
  else
    lib = Error{Errc::kUnsupported, "schema encoding '" + s.encoding + "' is not read here"};
  if (!lib) {
    why = lib.error().message;
    return std::nullopt;
  }
  return std::move(*lib);
}

bool has_key(const types::TypeLibrary& lib, types::TypeId id) {
  for (const auto& m : lib.at(lib.resolve(id)).members)
    if (m.key) return true;
  return false;
}

class Importer : public detail::McapVisitor {
 public:
  Importer(storage::SegmentWriter& w, const std::string& file, bool quiet, std::ostream& err)
      : w_(w), file_(file), quiet_(quiet), err_(err), shown_(Clock::now()) {}

  void header(const std::string& profile, const std::string& library) override {
    profile_ = profile;
    ours_ = library.starts_with("pubsub-replay");
  }
  void schema(const detail::McapSchema& s) override { schemas_[s.id] = s; }
  void channel(const detail::McapChannel& c) override {
    channels_.try_emplace(c.id, ChannelState{c});
  }

  Status message(const detail::McapMessage& m) override {
    auto c = channels_.find(m.channel);
    if (c == channels_.end()) {
      ++unknown_channel_;
      return Status{};
    }
    ChannelState& st = c->second;
    if (!st.defined) {
      st.defined = true;
      if (auto s = define(st, m.data); !s) return s;
    }
    if (st.left_out) return Status{};
    storage::RecordMeta meta;
    meta.topic = st.topic;
    meta.writer = st.writer;
    meta.sequence = ours_ && m.sequence > st.last_seq ? m.sequence : st.last_seq + 1;
    st.last_seq = meta.sequence;
    meta.reception_ns = static_cast<int64_t>(m.log_time);
    meta.source_ns = static_cast<int64_t>(m.publish_time);
    meta.flags = m.publish_time != 0 ? kFlagHasSourceTimestamp : 0;
    ++messages_;
    bytes_ += m.data.size();
    progress();
    return w_.append(
        meta, storage::ByteSpan(reinterpret_cast<const std::byte*>(m.data.data()), m.data.size()));
  }

  // The closing line's counts.
  uint64_t messages() const { return messages_; }
  uint64_t bytes() const { return bytes_; }
  size_t topics() const { return topics_; }
  size_t untyped() const { return untyped_; }
  size_t left_out() const { return left_out_; }
  uint64_t unknown_channel() const { return unknown_channel_; }

 private:
  Status define(ChannelState& st, std::span<const uint8_t> first) {
    const detail::McapChannel& c = st.def;
    const std::string where = "channel " + std::to_string(c.id) + " (" + c.topic + ")";
    if (c.message_encoding != "cdr") {
      detail::warn(err_, where + ": message encoding '" + c.message_encoding +
                             "' is not supported (cdr only): left out");
      st.left_out = true;
      ++left_out_;
      return Status{};
    }
    const detail::McapSchema* sc = nullptr;
    if (auto s = schemas_.find(c.schema_id); c.schema_id != 0 && s != schemas_.end())
      sc = &s->second;
    const bool ros = profile_ == "ros2" || (sc && sc->encoding.starts_with("ros2"));
    auto meta = [&](const char* key) {
      auto it = c.metadata.find(key);
      return it == c.metadata.end() ? std::string() : it->second;
    };
    std::string type_name = meta("type_name");
    if (type_name.empty() && sc)
      type_name = ros ? detail::dds_type_from_ros(sc->name).value_or("") : sc->name;
    std::string topic = c.topic;
    if (ros && sc) topic = detail::dds_topic_from_ros(c.topic, sc->name).value_or(c.topic);
    if (type_name.empty()) {
      detail::warn(err_, where + ": no type name (no schema, no type_name metadata): left out");
      st.left_out = true;
      ++left_out_;
      return Status{};
    }
    storage::TopicDef def{topic, type_name, meta("keyed") == "true", {}, {}};
    RecordedQos qos = channel_qos(meta("qos"), meta("offered_qos_profiles"));
    infer_representation(
        qos, storage::ByteSpan(reinterpret_cast<const std::byte*>(first.data()), first.size()));
    if (!define_type(sc, def, where)) ++untyped_;
    def.qos = encode_qos(qos);
    auto t = w_.add_topic(def);
    if (!t) return t.error();
    storage::Guid guid{'m',
                       'c',
                       'a',
                       'p',
                       0,
                       0,
                       0,
                       0,
                       0,
                       0,
                       0,
                       0,
                       0,
                       static_cast<uint8_t>(c.id >> 8),
                       static_cast<uint8_t>(c.id),
                       static_cast<uint8_t>(def.keyed ? 0x02 : 0x03)};
    auto wr = w_.add_writer(storage::WriterDef{*t, guid, def.qos});
    if (!wr) return wr.error();
    st.topic = *t;
    st.writer = *wr;
    ++topics_;
    return Status{};
  }

  static RecordedQos channel_qos(const std::string& ours, const std::string& offered) {
    if (!ours.empty()) {
      auto q = decode_qos(
          storage::ByteSpan(reinterpret_cast<const std::byte*>(ours.data()), ours.size()));
      if (q) return *q;
    }
    if (auto q = detail::parse_offered_qos(offered)) return *q;
    return RecordedQos{};
  }

  // The topic's type from its schema: stored as IDL, its TypeInformation in `def`; false when
  // there is none.
  bool define_type(const detail::McapSchema* sc, storage::TopicDef& def, const std::string& where) {
    if (!sc || sc->encoding.empty()) return false;
    std::string why;
    auto lib = schema_types(*sc, why);
    auto top = lib ? lib->find(def.type_name) : std::nullopt;
    if (lib && !top) why = "it does not define " + def.type_name;
    if (!top) {
      detail::warn(err_, where + ": schema " + sc->name + " not used: " + why);
      return false;
    }
    if (!def.keyed) def.keyed = has_key(*lib, *top);
    if (auto enc = types::encode_type_objects(*lib, *top)) {
      def.type_info.assign(reinterpret_cast<const std::byte*>(enc->type_information.data()),
                           reinterpret_cast<const std::byte*>(enc->type_information.data()) +
                               enc->type_information.size());
    }
    storage::TypeDef t{def.type_name, storage::TypeSource::kIdl, types::to_idl(*lib, *top), {}};
    if (auto s = w_.add_type(t); !s)
      detail::warn(err_, where + ": type not stored: " + s.error().message);
    return true;
  }

  void progress() {
    if (quiet_ || (messages_ & 0xfff) != 0 || Clock::now() - shown_ < std::chrono::seconds(1))
      return;
    shown_ = Clock::now();
    err_ << "pubsub-replay: import: " << messages_ << " messages so far\n";
  }

  storage::SegmentWriter& w_;
  std::string file_;
  bool quiet_;
  std::ostream& err_;
  Clock::time_point shown_;
  std::string profile_;
  bool ours_ = false;
  std::map<uint16_t, detail::McapSchema> schemas_;
  std::map<uint16_t, ChannelState> channels_;
  uint64_t messages_ = 0, bytes_ = 0, unknown_channel_ = 0;
  size_t topics_ = 0, untyped_ = 0, left_out_ = 0;
};

int fail_and_remove(std::unique_ptr<storage::SegmentWriter>& w, const detail::NewRecordingDir& out,
                    std::ostream& err, int status, const std::string& why) {
  if (w) (void)w->close();
  w.reset();
  out.remove();
  return detail::report(err, status, why + "; " + out.path + " not written");
}

}  // namespace

int import_mcap(const ImportOptions& o, std::ostream& out, std::ostream& err) {
  const auto started = Clock::now();
  std::ifstream in(o.file, std::ios::binary);
  if (!in) return detail::report(err, kExitUsage, "cannot open " + o.file);
  auto out_dir = detail::NewRecordingDir::claim(o.out, "import");
  if (!out_dir) return detail::report(err, kExitUsage, out_dir.error().message);
  auto created = storage::SegmentWriter::create(o.out, {});
  if (!created)
    return detail::report(err, kExitUsage, created.error().with_context("cannot create " + o.out));
  std::unique_ptr<storage::SegmentWriter> w = std::move(*created);
  Importer imp(*w, o.file, o.quiet, err);
  detail::McapReader reader;
  auto r = reader.read(in, imp);
  if (!r) {
    const bool refused =
        r.error().code == Errc::kInvalidArgument || r.error().code == Errc::kUnsupported;
    return fail_and_remove(w, *out_dir, err, refused ? kExitUsage : kExitProblems,
                           o.file + ": " + r.error().message);
  }
  if (imp.topics() == 0)
    return fail_and_remove(w, *out_dir, err, kExitUsage, o.file + ": no channel with CDR messages");
  if (auto s = w->close(); !s)
    return fail_and_remove(w, *out_dir, err, kExitProblems, s.error().message);
  w.reset();
  for (const auto& p : r->problems) detail::warn(err, o.file + ": " + p);
  if (imp.unknown_channel() != 0)
    detail::warn(err, o.file + ": " + detail::plural(imp.unknown_channel(), "message") +
                          " on channels the file never defines: left out");
  const double secs = std::chrono::duration<double>(Clock::now() - started).count();
  out << "imported " << detail::plural(imp.messages(), "message") << " on "
      << detail::plural(imp.topics(), "topic") << " (" << imp.untyped() << " without a type, "
      << imp.left_out() << " channels left out) from " << o.file << " into " << o.out << ", "
      << detail::plural(imp.bytes(), "payload byte") << " in " << std::fixed << std::setprecision(1)
      << secs << " s";
  if (r->damaged) out << "; " << detail::plural(r->damaged, "damaged chunk") << " skipped";
  if (r->truncated) out << "; the file is cut short";
  out << "\n";
  return r->damaged || r->truncated ? kExitProblems : kExitOk;
}

}  // namespace service::replay
