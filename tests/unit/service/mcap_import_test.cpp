// MCAP in (issue 36): McapReader over files McapWriter writes and over files built by hand here
// (zstd chunks, an unknown compression, damage, a cut), the ros2msg / ros2idl / QoS readers
// against what the writers produce and against rosbag2's form, and import_mcap's round trip:
// record -> export MCAP (both profiles) -> import gives the same topics, types, times and bytes.
#include <zstd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "mcap_reader.hpp"
#include "mcap_writer.hpp"
#include "ros2.hpp"
#include "ros2_msgs.hpp"
#include "storage/recording.hpp"
#include "test_util.hpp"
#include "types/idl.hpp"
#include "types/idl_writer.hpp"

using namespace replay_test;
using namespace service::replay::detail;
using service::RecordedQos;

namespace {

struct Collect : McapVisitor {
  std::string profile;
  std::vector<McapSchema> schemas;
  std::vector<McapChannel> channels;
  std::vector<std::pair<uint32_t, std::string>> messages;  // sequence, data
  std::vector<uint64_t> times;                             // log_time
  std::map<std::string, std::map<std::string, std::string>> metadata_records;
  void header(const std::string& p, const std::string&) override { profile = p; }
  void schema(const McapSchema& s) override { schemas.push_back(s); }
  void channel(const McapChannel& c) override { channels.push_back(c); }
  service::Status message(const McapMessage& m) override {
    messages.emplace_back(m.sequence, std::string(m.data.begin(), m.data.end()));
    times.push_back(m.log_time);
    return {};
  }
  void metadata(const std::string& n, const std::map<std::string, std::string>& m) override {
    metadata_records[n] = m;
  }
};

// A file of `n` messages of 1000 bytes on two channels, 16-KiB chunks.
std::string written_file(int n, bool lz4) {
  std::ostringstream out;
  McapWriterOptions o;
  o.chunk_size = 16 << 10;
  o.lz4 = lz4;
  o.profile = "ros2";
  McapWriter w(out, o);
  w.add_schema({1, "p/msg/T", "ros2msg", "int32 x\n"});
  w.add_channel({1, 1, "/a", "cdr", {{"k", "v"}}});
  w.add_channel({2, 0, "/b", "cdr", {}});
  for (int i = 1; i <= n; ++i) {
    std::vector<uint8_t> data(1000, static_cast<uint8_t>(i));
    w.add_message(static_cast<uint16_t>(1 + i % 2), static_cast<uint32_t>(i), 1000u + i, 500u + i,
                  data);
  }
  w.add_metadata("rosbag2", {{"serialized_metadata", "version: 9"}});
  REQUIRE(w.finish());
  return out.str();
}

Collect read_all(const std::string& bytes, McapReadResult& r) {
  Collect c;
  std::istringstream in(bytes);
  auto got = McapReader().read(in, c);
  REQUIRE(got);
  r = *got;
  return c;
}

// Hand-built records, for what McapWriter does not write.
void le(std::string& b, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) b.push_back(static_cast<char>(v >> (8 * i)));
}
void str(std::string& b, const std::string& s) {
  le(b, s.size(), 4);
  b += s;
}
std::string record(uint8_t op, const std::string& content) {
  std::string b(1, static_cast<char>(op));
  le(b, content.size(), 8);
  return b + content;
}
std::string chunk_file(const std::string& compression, bool good_crc = true) {
  std::string recs = record(0x04, [] {
    std::string c;
    le(c, 7, 2);
    le(c, 0, 2);
    str(c, "Square");
    str(c, "cdr");
    le(c, 0, 4);
    return c;
  }());
  for (int i = 1; i <= 2; ++i) {
    std::string m;
    le(m, 7, 2);
    le(m, i, 4);
    le(m, 100 + i, 8);
    le(m, 90 + i, 8);
    m += "payload " + std::to_string(i);
    recs += record(0x05, m);
  }
  std::string stored = recs;
  if (compression == "zstd") {
    stored.resize(ZSTD_compressBound(recs.size()));
    stored.resize(ZSTD_compress(stored.data(), stored.size(), recs.data(), recs.size(), 3));
  }
  std::string c;
  le(c, 101, 8);
  le(c, 102, 8);
  le(c, recs.size(), 8);
  le(c, good_crc ? 0 : 0x12345678, 4);  // 0: no CRC
  str(c, compression);
  le(c, stored.size(), 8);
  c += stored;
  std::string file = "\x89MCAP0\r\n";
  std::string h;
  str(h, "");
  str(h, "hand");
  return file + record(0x01, h) + record(0x06, c) + record(0x0F, std::string(4, '\0'));
}

}  // namespace

TEST_CASE("mcap in: McapReader reads back what McapWriter wrote", "[mcap_in]") {
  for (bool lz4 : {true, false}) {
    McapReadResult r;
    Collect c = read_all(written_file(300, lz4), r);
    CHECK(c.profile == "ros2");
    REQUIRE(c.messages.size() == 300);
    CHECK(r.messages == 300);
    CHECK(r.damaged == 0);
    CHECK_FALSE(r.truncated);
    CHECK(r.chunks > 10);
    for (uint32_t i = 1; i <= 300; ++i) {
      CHECK(c.messages[i - 1].first == i);
      CHECK(c.messages[i - 1].second == std::string(1000, static_cast<char>(i)));
      CHECK(c.times[i - 1] == 1000u + i);
    }
    REQUIRE(c.schemas.size() >= 1);
    CHECK(c.schemas[0] == McapSchema{1, "p/msg/T", "ros2msg", "int32 x\n"});
    CHECK(std::find(c.channels.begin(), c.channels.end(),
                    McapChannel{1, 1, "/a", "cdr", {{"k", "v"}}}) != c.channels.end());
    CHECK(c.metadata_records["rosbag2"] ==
          std::map<std::string, std::string>{{"serialized_metadata", "version: 9"}});
  }
}

TEST_CASE("mcap in: a damaged chunk is skipped whole and a cut file read up to the cut",
          "[mcap_in]") {
  std::string bytes = written_file(300, false);
  bytes[bytes.size() / 2] ^= 0x55;  // inside a chunk's messages (1000-B payloads fill the file)
  McapReadResult r;
  Collect c = read_all(bytes, r);
  CHECK(r.damaged == 1);
  REQUIRE(r.problems.size() == 1);
  CHECK(r.problems[0].find(": CRC mismatch; its messages skipped") != std::string::npos);
  // The missing messages are one run: the damaged chunk's.
  REQUIRE(c.messages.size() < 300);
  REQUIRE(c.messages.size() > 250);
  size_t jumps = 0;
  for (size_t i = 1; i < c.messages.size(); ++i)
    jumps += c.messages[i].first != c.messages[i - 1].first + 1;
  CHECK(jumps == 1);

  const std::string whole = written_file(300, false);
  c = read_all(whole.substr(0, whole.size() * 6 / 10), r);
  CHECK(r.truncated);
  CHECK(r.damaged == 0);
  REQUIRE(r.problems.size() == 1);
  INFO(r.problems[0]);
  CHECK(r.problems[0].find("the file ends inside the record at offset ") == 0);
  REQUIRE(c.messages.size() > 100);
  for (size_t i = 0; i < c.messages.size(); ++i) CHECK(c.messages[i].first == i + 1);
}

TEST_CASE("mcap in: zstd and uncompressed chunks and the refusals", "[mcap_in]") {
  for (const char* comp : {"zstd", ""}) {
    McapReadResult r;
    Collect c = read_all(chunk_file(comp), r);
    REQUIRE(c.messages.size() == 2);
    CHECK(c.messages[1] == std::pair<uint32_t, std::string>{2, "payload 2"});
    CHECK(c.channels.size() == 1);
    CHECK(r.chunks == 1);
    CHECK_FALSE(r.truncated);
  }
  McapReadResult r;
  Collect c = read_all(chunk_file("", false), r);
  CHECK(c.messages.empty());
  CHECK(r.damaged == 1);

  Collect v;
  std::istringstream bz(chunk_file("bz2"));
  auto got = McapReader().read(bz, v);
  REQUIRE_FALSE(got);
  CHECK(got.error().code == service::Errc::kUnsupported);
  CHECK(got.error().message ==
        "chunk at offset 29: compression 'bz2' is not supported (lz4, zstd or none)");
  std::istringstream not_mcap("PAR1 this is parquet");
  got = McapReader().read(not_mcap, v);
  REQUIRE_FALSE(got);
  CHECK(got.error().message == "not an MCAP file (no MCAP magic at its start)");
}

namespace {

const std::string kMsgSep = "\n" + std::string(80, '=') + "\n";

}  // namespace

TEST_CASE("mcap in: ros2msg schemas back to the types they came from", "[mcap_in]") {
  const auto lib = ros2_msgs_idl();
  for (const char* name : {"std_msgs::msg::dds_::String_", "geometry_msgs::msg::dds_::PoseStamped_",
                           "sensor_msgs::msg::dds_::Imu_"}) {
    const auto id = *lib.find(name);
    auto schema = ros2_schema(lib, id);
    REQUIRE(schema);
    auto back = parse_ros2msg(schema->name, schema->text);
    REQUIRE(back);
    auto top = back->find(name);
    REQUIRE(top);
    CHECK(types::to_idl(*back, *top) == types::to_idl(lib, id));
  }
  // rosbag2's form: the .msg files as written (comments, blank lines, default values, bare names
  // of the same package), dependencies sorted; constants are not members.
  const std::string rosbag2 =
      "# A Pose with reference coordinate frame and timestamp\n\nstd_msgs/Header header\n"
      "Pose pose\nuint8 LEVEL=3\nstring NAME = \"a # b\"\n" +
      kMsgSep +
      "MSG: geometry_msgs/Pose\n# A representation of pose\n\nPoint position\n"
      "Quaternion orientation\n" +
      kMsgSep + "MSG: geometry_msgs/Point\nfloat64 x\nfloat64 y\nfloat64 z\n" + kMsgSep +
      "MSG: geometry_msgs/Quaternion\n\nfloat64 x 0\nfloat64 y 0\nfloat64 z 0\nfloat64 w 1\n" +
      kMsgSep +
      "MSG: std_msgs/Header\n# Standard metadata\nbuiltin_interfaces/Time stamp\n"
      "string frame_id  # the frame\n" +
      kMsgSep + "MSG: builtin_interfaces/Time\nint32 sec\nuint32 nanosec\n";
  auto back = parse_ros2msg("geometry_msgs/msg/PoseStamped", rosbag2);
  REQUIRE(back);
  const char* ps = "geometry_msgs::msg::dds_::PoseStamped_";
  CHECK(types::to_idl(*back, *back->find(ps)) == types::to_idl(lib, *lib.find(ps)));

  // Empty messages, builtin time, every suffix.
  back = parse_ros2msg("p/msg/E", "");
  REQUIRE(back);
  CHECK(types::to_idl(*back, *back->find("p::msg::dds_::E_")) ==
        "module p {\nmodule msg {\nmodule dds_ {\n@final\nstruct E_ {\n"
        "  uint8 structure_needs_at_least_one_member;\n};\n};\n};\n};\n");
  back = parse_ros2msg("p/msg/F", "time t\nint16[] a\nchar[<=3] b\nstring<=4[2] c\nbyte d\n");
  REQUIRE(back);
  const auto& f = back->at(*back->find("p::msg::dds_::F_"));
  REQUIRE(f.members.size() == 5);
  CHECK(back->at(f.members[0].type).name == "builtin_interfaces::msg::dds_::Time_");
  CHECK(back->at(f.members[1].type).kind == types::Kind::kSequence);
  CHECK(back->at(f.members[2].type).bound == 3);
  CHECK(back->at(f.members[3].type).dims == std::vector<uint32_t>{2});
  CHECK(back->at(back->at(f.members[3].type).element).bound == 4);
  CHECK(back->at(f.members[4].type).kind == types::Kind::kOctet);

  auto bad = parse_ros2msg("p/msg/G", "wstring w\n");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.find("wstring is not supported") != std::string::npos);
  bad = parse_ros2msg("p/msg/H", "Missing m\n");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.find("type p/Missing is not in the schema") != std::string::npos);
  CHECK_FALSE(parse_ros2msg("NotRos", "int32 x\n"));
}

TEST_CASE("mcap in: ros2idl schemas and offered_qos_profiles back", "[mcap_in]") {
  auto lib =
      parse_ros2idl("pkg/msg/Thing",
                    "IDL: pkg/msg/Thing\nmodule pkg { module msg { struct Thing { long x; }; "
                    "}; };\n" +
                        kMsgSep +
                        "IDL: pkg/msg/Other\nmodule pkg { module msg { "
                        "struct Other { double y; }; }; };\n");
  REQUIRE(lib);
  CHECK(lib->find("pkg::msg::dds_::Thing_"));
  CHECK(lib->find("pkg::msg::dds_::Other_"));
  CHECK_FALSE(parse_ros2idl("pkg/msg/Nope", "IDL: pkg/msg/Nope\nstruct X { long x; };\n"));

  RecordedQos b;
  b.reliability = pubsub::ReliabilityKind::kBestEffort;
  b.durability = pubsub::DurabilityKind::kTransientLocal;
  b.history = {pubsub::HistoryKind::kKeepLast, 10};
  b.policies.deadline = std::chrono::milliseconds(1500);
  b.policies.liveliness = {pubsub::LivelinessKind::kManualByTopic, std::chrono::seconds(2)};
  CHECK(parse_offered_qos(offered_qos_profiles({b, RecordedQos{}})) == b);
  CHECK(parse_offered_qos(offered_qos_profiles({RecordedQos{}})) == RecordedQos{});
  RecordedQos want;
  want.history = {pubsub::HistoryKind::kKeepLast, 5};
  CHECK(parse_offered_qos("- history: keep_last\n  depth: 5\n  reliability: reliable\n"
                          "  durability: volatile\n  deadline:\n    sec: 0\n    nsec: 0\n"
                          "  liveliness: automatic\n  avoid_ros_namespace_conventions: false") ==
        want);
  CHECK_FALSE(parse_offered_qos(""));
  CHECK_FALSE(parse_offered_qos("reliability: 1"));
}

namespace {

// A recording with a ROS 2 topic (its type stored as IDL) and a plain DDS one.
Model ros_model() {
  Model m;
  m.add_topic({"rt/chatter", "std_msgs::msg::dds_::String_"});
  m.add_topic({"Square", "ShapeType"});
  m.writer_topic = {0, 1};
  m.writer_guid = {storage::Guid{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0, 0, 1, 3},
                   storage::Guid{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0, 0, 2, 3}};
  m.types.push_back({"std_msgs::msg::dds_::String_",
                     storage::TypeSource::kIdl,
                     "module std_msgs { module msg { module dds_ {\n@final struct String_ { string "
                     "data; };\n}; }; };\n",
                     {}});
  for (int i = 1; i <= 50; ++i)
    add_record(m, i % 2, i / 2 + 1, i * 1000, make_payload(i % 2, 0, i, 0, 8));
  return m;
}

struct Sample {
  std::string topic, type;
  int64_t seq, recv, source;
  storage::Bytes payload;
  bool operator==(const Sample&) const = default;
};

std::vector<Sample> samples_of(const std::string& dir) {
  auto rec = storage::Recording::open(dir);
  REQUIRE(rec);
  auto topics = (*rec)->topics();
  REQUIRE(topics);
  std::map<storage::TopicId, storage::TopicDef> defs;
  for (const auto& t : *topics) defs[t.id] = t.def;
  auto cur = (*rec)->query();
  REQUIRE(cur);
  std::vector<Sample> out;
  while (const auto* r = cur->next())
    out.push_back({defs[r->meta.topic].name, defs[r->meta.topic].type_name, r->meta.sequence,
                   r->meta.reception_ns, r->meta.source_ns,
                   storage::Bytes(r->payload.begin(), r->payload.end())});
  return out;
}

}  // namespace

TEST_CASE("mcap in: record, export MCAP (both profiles), import: same topics, types, bytes",
          "[mcap_in]") {
  TempDir tmp("mcap-import");
  Model m = ros_model();
  write_recording(tmp.sub("rec"), m);
  const auto original = samples_of(tmp.sub("rec"));
  REQUIRE(original.size() == 50);
  for (const std::string profile : {"", "ros2"}) {
    service::replay::ExportOptions o;
    o.dir = tmp.sub("rec");
    o.format = service::replay::ExportFormat::kMcap;
    o.output = tmp.sub("out" + profile + ".mcap");
    o.progress = false;
    o.mcap_profile = profile;
    std::ostringstream out, err;
    REQUIRE(service::replay::export_records(o, out, err) == service::replay::kExitOk);
    const std::string dir = tmp.sub("imported" + profile);
    REQUIRE(service::replay::import_mcap({o.output, dir, true}, out, err) ==
            service::replay::kExitOk);
    auto got = samples_of(dir);
    std::vector<Sample> want;
    for (const auto& s : original)
      if (profile.empty() || s.topic == "rt/chatter") want.push_back(s);
    // Our own export keeps the RTPS sequence numbers (the reader's writer is one per channel).
    CHECK(got == want);
    auto rec = storage::Recording::open(dir);
    REQUIRE(rec);
    auto ty = (*rec)->types();
    REQUIRE(ty);
    REQUIRE(ty->size() == 1);
    CHECK((*ty)[0].type_name == "std_msgs::msg::dds_::String_");
    CHECK(
        (*ty)[0].idl ==
        "module std_msgs {\nmodule msg {\nmodule dds_ {\n@final\nstruct String_ {\n  string data;\n"
        "};\n};\n};\n};\n");
    auto topics = (*rec)->topics();
    REQUIRE(topics);
    for (const auto& t : *topics)
      CHECK(t.def.type_info.empty() ==
            (t.def.name == "Square"));  // TypeInformation from the schema
    const std::string counts = profile.empty()
                                   ? "imported 50 messages on 2 topics (1 without a type, "
                                   : "imported 25 messages on 1 topic (0 without a type, ";
    CHECK(out.str().find(counts + "0 channels left out) from " + o.output + " into " + dir +
                         ", ") != std::string::npos);
  }
}

TEST_CASE("mcap in: channels of other encodings are left out by name, none at all is refused",
          "[mcap_in]") {
  TempDir tmp("mcap-import");
  auto write = [&](const std::string& path, bool with_cdr) {
    std::ofstream out(path, std::ios::binary);
    McapWriter w(out);
    w.add_schema({1, "foxglove.Log", "protobuf", "descriptor"});
    w.add_channel({1, 1, "/log", "protobuf", {}});
    if (with_cdr) w.add_channel({2, 0, "Square", "cdr", {{"type_name", "ShapeType"}}});
    const std::vector<uint8_t> data{0, 1, 0, 0, 7, 0, 0, 0};
    for (uint32_t i = 1; i <= 3; ++i) {
      w.add_message(1, i, 100 + i, 100 + i, data);
      if (with_cdr) w.add_message(2, i, 100 + i, 0, data);
    }
    REQUIRE(w.finish());
  };
  write(tmp.sub("mixed.mcap"), true);
  std::ostringstream out, err;
  REQUIRE(service::replay::import_mcap({tmp.sub("mixed.mcap"), tmp.sub("rec"), true}, out, err) ==
          service::replay::kExitOk);
  CHECK(err.str() ==
        "pubsub-replay: warning: channel 1 (/log): message encoding 'protobuf' is not supported "
        "(cdr only): left out\n");
  CHECK(out.str().find("imported 3 messages on 1 topic (1 without a type, 1 channels left out)") ==
        0);
  auto got = samples_of(tmp.sub("rec"));
  REQUIRE(got.size() == 3);
  CHECK(got[2].topic == "Square");
  CHECK(got[2].type == "ShapeType");
  CHECK(got[2].seq == 3);
  CHECK(got[2].recv == 103);
  CHECK(got[2].source == 0);

  write(tmp.sub("protobuf.mcap"), false);
  std::ostringstream out2, err2;
  CHECK(service::replay::import_mcap({tmp.sub("protobuf.mcap"), tmp.sub("rec2"), true}, out2,
                                     err2) == service::replay::kExitUsage);
  CHECK(err2.str().find("pubsub-replay: " + tmp.sub("protobuf.mcap") +
                        ": no channel with CDR messages; " + tmp.sub("rec2") + " not written\n") !=
        std::string::npos);
  CHECK_FALSE(std::filesystem::exists(tmp.sub("rec2")));
}
