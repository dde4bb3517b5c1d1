// export --decode: a recording whose payloads are written out by hand (XCDR1 and XCDR2, little and
// big endian), an IDL file for its types; exact JSON lines and CSV, a damaged sample (exit 1,
// reported, the export goes on), and the refusals (exit 2, nothing written).
#include <catch2/catch.hpp>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <regex>
#include <sstream>

#include "test_util.hpp"

using namespace replay_test;
namespace replay = service::replay;

namespace {

constexpr const char* kIdl = R"(module geo {
  struct Point { double x; double y; };
  enum Mode { IDLE, MOVING };
  @appendable struct Pose {
    @key unsigned long id;
    geo::Point position;
    Mode mode;
    string name;
  };
};
)";

storage::Bytes bytes(std::initializer_list<int> v) {
  storage::Bytes b;
  for (int x : v) b.push_back(static_cast<std::byte>(x));
  return b;
}

// XCDR1 little endian (CDR_LE): id 7, position (1.5, -2), MOVING, "ab". Doubles align to 8
// from the byte after the encapsulation header.
storage::Bytes pose_xcdr1_le() {
  return bytes({0x00, 0x01, 0x00, 0x00,                          // CDR_LE
                0x07, 0x00, 0x00, 0x00,                          // id = 7
                0x00, 0x00, 0x00, 0x00,                          // pad to 8
                0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xf8, 0x3f,  // x = 1.5
                0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xc0,  // y = -2
                0x01, 0x00, 0x00, 0x00,                          // mode = MOVING
                0x03, 0x00, 0x00, 0x00, 'a',  'b',  0x00});      // name = "ab"
}

// XCDR2 big endian, delimited (D_CDR2_BE): the appendable Pose has a DHEADER; doubles align
// to 4 only. id 9, position (0.25, 4), IDLE, "".
storage::Bytes pose_xcdr2_be() {
  return bytes({0x00, 0x08, 0x00, 0x00,                          // D_CDR2_BE
                0x00, 0x00, 0x00, 0x1d,                          // DHEADER: 29 bytes follow
                0x00, 0x00, 0x00, 0x09,                          // id = 9
                0x3f, 0xd0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // x = 0.25
                0x40, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // y = 4
                0x00, 0x00, 0x00, 0x00,                          // mode = IDLE
                0x00, 0x00, 0x00, 0x01, 0x00});                  // name = ""
}

struct DecodeFixture {
  TempDir tmp;
  std::string dir = tmp.sub("rec");
  std::string idl = tmp.sub("geo.idl");
  Model model;
  DecodeFixture() {
    const size_t pose = model.add_topic({"robot/pose", "geo::Pose", true});
    const size_t other = model.add_topic({"robot/other", "geo::Unknown", false});
    const size_t w = model.add_writer(pose);
    const size_t w2 = model.add_writer(other);
    add_record(model, w, 1, 0, pose_xcdr1_le());
    add_record(model, w, 2, 1'000'000, pose_xcdr2_be());
    storage::Bytes torn = pose_xcdr1_le();
    torn.resize(16);  // ends inside position.x
    add_record(model, w, 3, 2'000'000, torn);
    add_record(model, w2, 1, 3'000'000, bytes({0, 1, 0, 0, 1, 2, 3, 4}));
    write_recording(dir, model);
    std::ofstream(idl) << kIdl;
  }
  replay::ExportOptions options() const {
    replay::ExportOptions o;
    o.dir = dir;
    o.decode = true;
    o.idl_files = {idl};
    return o;
  }
};

std::string hex_guid(const storage::Guid& g) {
  static const char* k = "0123456789abcdef";
  std::string s;
  for (uint8_t b : g) {
    s += k[b >> 4];
    s += k[b & 15];
  }
  return s;
}

// The statistics line with its time as "T".
std::string timeless(const std::string& err) {
  return std::regex_replace(err, std::regex(R"( in [0-9]+\.[0-9] s\n)"), " in T s\n");
}

// The value part of a JSON line: from ,"value": to the end.
std::string tail_from_value(const std::string& line) {
  const size_t p = line.find(",\"value\":");
  return p == std::string::npos ? line : line.substr(p);
}

}  // namespace

TEST_CASE("export --decode: values of XCDR1 and XCDR2 samples, a damaged one reported") {
  DecodeFixture f;
  std::ostringstream out, err;
  CHECK(replay::export_records(f.options(), out, err) == replay::kExitProblems);
  const auto lines = lines_of(out.str());
  REQUIRE(lines.size() == 4);
  CHECK(tail_from_value(lines[0]) ==
        ",\"value\":{\"id\":7,\"position\":{\"x\":1.5,\"y\":-2.0},\"mode\":\"MOVING\","
        "\"name\":\"ab\"}}");
  CHECK(tail_from_value(lines[1]) ==
        ",\"value\":{\"id\":9,\"position\":{\"x\":0.25,\"y\":4.0},\"mode\":\"IDLE\","
        "\"name\":\"\"}}");
  CHECK(lines[2].find(",\"value\":null,\"decode_error\":\"") != std::string::npos);
  CHECK(lines[2].find("position.x") != std::string::npos);
  CHECK(lines[2].find("\"payload_base64\":\"AAEAAAcAAAAAAAAAAAAAAA==\"}") != std::string::npos);
  CHECK(tail_from_value(lines[3]) == ",\"value\":null,\"payload_base64\":\"AAEAAAECAwQ=\"}");
  const auto msgs = lines_of(timeless(err.str()));
  REQUIRE(msgs.size() == 4);
  CHECK(msgs[0] ==
        "pubsub-replay: warning: no type for topic robot/other (type geo::Unknown): "
        "exported undecoded");
  CHECK(msgs[1].rfind("pubsub-replay: warning: topic robot/pose seq 3: cannot decode: ", 0) == 0);
  CHECK(msgs[2] ==
        "pubsub-replay: exported 4 samples of 2 topics to standard output, 1.5 kB in T s");
  CHECK(msgs[3] ==
        "pubsub-replay: 1 samples could not be decoded (exported with decode_error and "
        "payload_base64)");
}

TEST_CASE("export --decode without --idl uses the recording's types, --idl wins over them") {
  TempDir tmp;
  Model model;
  const size_t pose = model.add_topic({"robot/pose", "geo::Pose", true});
  add_record(model, model.add_writer(pose), 1, 0, pose_xcdr1_le());
  // Looked up: the right type. IDL-sourced: one that cannot decode the sample (wins over lookup).
  model.types.push_back({"geo::Pose", storage::TypeSource::kLookup, kIdl, {}});
  const std::string dir = tmp.sub("rec");
  write_recording(dir, model);
  replay::ExportOptions o;
  o.dir = dir;
  o.decode = true;
  std::ostringstream out, err;
  o.progress = false;  // no statistics line
  CHECK(replay::export_records(o, out, err) == replay::kExitOk);
  CHECK(err.str() == "");
  REQUIRE(lines_of(out.str()).size() == 1);
  CHECK(tail_from_value(lines_of(out.str())[0]) ==
        ",\"value\":{\"id\":7,\"position\":{\"x\":1.5,\"y\":-2.0},\"mode\":\"MOVING\","
        "\"name\":\"ab\"}}");

  Model model2 = model;
  model2.types.push_back({"geo::Pose",
                          storage::TypeSource::kIdl,
                          "module geo { struct Pose { double a[20]; }; };\n",
                          {}});
  const std::string dir2 = tmp.sub("rec2");
  write_recording(dir2, model2);
  o.dir = dir2;
  std::ostringstream out2, err2;
  CHECK(replay::export_records(o, out2, err2) == replay::kExitProblems);  // the IDL one is used
  CHECK(out2.str().find("\"decode_error\"") != std::string::npos);
  // The user's --idl wins over both (with a warning that it differs from the stored IDL one,
  // and exit 1).
  const std::string idl = tmp.sub("geo.idl");
  std::ofstream(idl) << kIdl;
  o.idl_files = {idl};
  std::ostringstream out3, err3;
  CHECK(replay::export_records(o, out3, err3) == replay::kExitProblems);
  CHECK(out3.str() == out.str());
  CHECK(err3.str() ==
        "pubsub-replay: warning: topic robot/pose: type geo::Pose from " + idl +
            " differs from the one recorded (idl): the type: @appendable here, @final in the "
            "recording\n"
            "pubsub-replay: the types used may not match the recorded data (see the warnings "
            "above); the values exported may be wrong\n");
  // A stored definition that does not parse: a warning, the topic undecoded.
  Model model3 = model;
  model3.types[0].idl = "struct {";
  const std::string dir3 = tmp.sub("rec3");
  write_recording(dir3, model3);
  o.dir = dir3;
  o.idl_files.clear();
  std::ostringstream out4, err4;
  CHECK(replay::export_records(o, out4, err4) == replay::kExitUsage);
  CHECK(err4.str().rfind("pubsub-replay: warning: type geo::Pose in the recording (lookup):1:",
                         0) == 0);
}

TEST_CASE("export --format csv --decode: one column per leaf, exact rows") {
  DecodeFixture f;
  auto o = f.options();
  o.format = replay::ExportFormat::kCsv;
  o.selection.topics = {"robot/pose"};
  std::ostringstream out, err;
  CHECK(replay::export_records(o, out, err) == replay::kExitProblems);
  const auto lines = lines_of(out.str());
  REQUIRE(lines.size() == 4);
  CHECK(lines[0] ==
        "topic,writer,seq,source_time,reception_time,value.id,value.position.x,"
        "value.position.y,value.mode,value.name,decode_error");
  const std::string guid = hex_guid(f.model.writer_guid[0]);
  CHECK(lines[1] == "robot/pose," + guid +
                        ",1,2026-11-21T23:37:59.999000000Z,2026-11-21T23:38:00.000000000Z,7,1.5,"
                        "-2.0,MOVING,ab,");
  CHECK(lines[2] == "robot/pose," + guid +
                        ",2,2026-11-21T23:38:00.000000000Z,2026-11-21T23:38:00.001000000Z,9,0.25,"
                        "4.0,IDLE,,");
  CHECK(lines[3].rfind("robot/pose," + guid +
                           ",3,2026-11-21T23:38:00.001000000Z,2026-11-21T23:38:00.002000000Z,,,,,,",
                       0) == 0);
}

TEST_CASE("export --decode refusals: exit 2 and nothing written") {
  DecodeFixture f;
  const std::string target = f.tmp.sub("out.jsonl");
  auto refused = [&](replay::ExportOptions o) {
    o.output = target;
    std::ostringstream out, err;
    CHECK(replay::export_records(o, out, err) == replay::kExitUsage);
    CHECK_FALSE(std::filesystem::exists(target));
    return err.str();
  };
  auto o = f.options();
  o.idl_files.clear();
  CHECK(refused(o) ==
        "pubsub-replay: --decode needs the type definitions: the recording has none for the "
        "selected topics, give --idl FILE (repeatable)\n");
  o = f.options();
  o.decode = false;
  CHECK(refused(o) == "pubsub-replay: --idl is used with --decode\n");
  o = f.options();
  const std::string bad = f.tmp.sub("bad.idl");
  std::ofstream(bad) << "module m {\n  struct S { long a };\n};\n";
  o.idl_files = {bad};
  CHECK(refused(o).rfind("pubsub-replay: " + bad + ":2:", 0) == 0);
  o = f.options();
  o.selection.topics = {"robot/other"};
  CHECK(refused(o) ==
        "pubsub-replay: --decode: no type, in the recording or the IDL given, for any selected "
        "topic: robot/other (type geo::Unknown)\n");
  o = f.options();
  o.format = replay::ExportFormat::kCsv;
  CHECK(refused(o) ==
        "pubsub-replay: warning: no type for topic robot/other (type geo::Unknown): "
        "exported undecoded\n"
        "pubsub-replay: --format csv --decode needs topics of one type, all with a type (select "
        "them with --topics)\n");
}

TEST_CASE("export --format mcap refusals: exit 2 and nothing written") {
  DecodeFixture f;
  auto o = f.options();
  o.format = replay::ExportFormat::kMcap;
  o.decode = false;
  std::ostringstream out, err;
  CHECK(replay::export_records(o, out, err) == replay::kExitUsage);
  CHECK(err.str() == "pubsub-replay: --format mcap needs an output file: -o FILE.mcap\n");
  CHECK(out.str().empty());
  const std::string target = f.tmp.sub("out.mcap");
  o.output = target;
  o.decode = true;
  std::ostringstream out2, err2;
  CHECK(replay::export_records(o, out2, err2) == replay::kExitUsage);
  CHECK(err2.str() ==
        "pubsub-replay: --decode does not apply to --format mcap (the types go into the file as "
        "schemas: give --idl)\n");
  CHECK_FALSE(std::filesystem::exists(target));
  o.decode = false;
  const std::string bad = f.tmp.sub("bad.idl");
  std::ofstream(bad) << "struct S { long a }\n";
  o.idl_files = {bad};
  std::ostringstream out3, err3;
  CHECK(replay::export_records(o, out3, err3) == replay::kExitUsage);
  CHECK(err3.str().rfind("pubsub-replay: " + bad + ":", 0) == 0);
  CHECK_FALSE(std::filesystem::exists(target));
}

TEST_CASE("export --format mcap: a channel per topic, schema 0 for a topic without a type") {
  DecodeFixture f;
  auto o = f.options();
  o.format = replay::ExportFormat::kMcap;
  o.decode = false;
  o.output = f.tmp.sub("out.mcap");
  std::ostringstream out, err;
  CHECK(replay::export_records(o, out, err) == replay::kExitOk);
  const std::string msg = err.str();
  CHECK(msg.rfind("pubsub-replay: exported 4 samples on 2 channels (1 without a type: robot/other "
                  "(type geo::Unknown)) to " +
                      o.output + ", ",
                  0) == 0);
  std::ifstream in(o.output, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE(bytes.size() > 16);
  CHECK(bytes.substr(0, 8) == "\x89MCAP0\r\n");
  CHECK(bytes.substr(bytes.size() - 8) == "\x89MCAP0\r\n");
  // The schema carries the IDL of geo::Pose and what it uses.
  CHECK(bytes.find("omgidl") != std::string::npos);
  CHECK(bytes.find("struct Pose {") != std::string::npos);
  CHECK(bytes.find("struct Point {") != std::string::npos);
}

TEST_CASE("export --format mcap takes schemas from the recording's types, type_source lookup") {
  TempDir tmp;
  Model model;
  const size_t pose = model.add_topic({"robot/pose", "geo::Pose", true});
  model.add_topic({"robot/other", "geo::Unknown", false});
  add_record(model, model.add_writer(pose), 1, 0, pose_xcdr1_le());
  model.types.push_back({"geo::Pose", storage::TypeSource::kLookup, kIdl, {}});
  const std::string dir = tmp.sub("rec");
  write_recording(dir, model);
  replay::ExportOptions o;
  o.dir = dir;
  o.format = replay::ExportFormat::kMcap;
  o.output = tmp.sub("out.mcap");
  std::ostringstream out, err;
  CHECK(replay::export_records(o, out, err) == replay::kExitOk);
  CHECK(err.str().rfind("pubsub-replay: exported 1 samples on 2 channels (1 without a type: "
                        "robot/other (type geo::Unknown)) to ",
                        0) == 0);
  std::ifstream in(o.output, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(bytes.find("struct Pose {") != std::string::npos);
  // Channel metadata: "type_source" -> "lookup" for robot/pose, "none" for robot/other.
  using namespace std::string_literals;
  CHECK(bytes.find("type_source\x06\0\0\0lookup"s) != std::string::npos);
  CHECK(bytes.find("type_source\x04\0\0\0none"s) != std::string::npos);
}

namespace {

// XCDR1 little endian Pose (as pose_xcdr1_le) with name `name`.
storage::Bytes pose_named(const std::string& name) {
  storage::Bytes b = pose_xcdr1_le();
  b.resize(b.size() - 7);  // the name: length 3, "ab\0"
  put_u32_le(b, static_cast<uint32_t>(name.size() + 1));
  for (char c : name) b.push_back(static_cast<std::byte>(c));
  b.push_back(std::byte{0});
  return b;
}

}  // namespace

TEST_CASE("export --format csv --decode: every column header is unique (members seq and topic)") {
  TempDir tmp;
  Model model;
  const size_t t = model.add_topic({"counter", "Counter", false});
  // seq 5, topic "x", padded to 4 (declared in the encapsulation options).
  add_record(model, model.add_writer(t), 1, 0,
             bytes({0x00, 0x01, 0x00, 0x02, 0x05, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 'x',
                    0x00, 0x00, 0x00}));
  const std::string dir = tmp.sub("rec");
  write_recording(dir, model);
  const std::string idl = tmp.sub("counter.idl");
  std::ofstream(idl) << "struct Counter { unsigned long seq; string topic; };\n";
  replay::ExportOptions o;
  o.dir = dir;
  o.decode = true;
  o.idl_files = {idl};
  o.format = replay::ExportFormat::kCsv;
  o.progress = false;
  std::ostringstream out, err;
  CHECK(replay::export_records(o, out, err) == replay::kExitOk);
  CHECK(err.str() == "");
  const auto lines = lines_of(out.str());
  REQUIRE(lines.size() == 2);
  CHECK(lines[0] ==
        "topic,writer,seq,source_time,reception_time,value.seq,value.topic,decode_error");
  CHECK(lines[1] == "counter," + hex_guid(model.writer_guid[0]) +
                        ",1,2026-11-21T23:37:59.999000000Z,2026-11-21T23:38:00.000000000Z,5,x,");
}

TEST_CASE("export --decode: an --idl type that differs from the recorded one is warned about") {
  TempDir tmp;
  Model model;
  const size_t pose = model.add_topic({"robot/pose", "geo::Pose", true});
  const size_t pose2 = model.add_topic({"robot/pose2", "geo::Pose", true});
  add_record(model, model.add_writer(pose), 1, 0, pose_xcdr1_le());
  add_record(model, model.add_writer(pose2), 1, 1'000'000, pose_xcdr1_le());
  model.types.push_back({"geo::Pose", storage::TypeSource::kLookup, kIdl, {}});
  const std::string dir = tmp.sub("rec");
  write_recording(dir, model);
  // The same layout on the wire, but id is signed: it decodes, and is not what was recorded.
  std::string other = kIdl;
  other.replace(other.find("unsigned long id"), 16, "long id");
  const std::string idl = tmp.sub("other.idl");
  std::ofstream(idl) << other;
  replay::ExportOptions o;
  o.dir = dir;
  o.decode = true;
  o.idl_files = {idl};
  std::ostringstream out, err;
  CHECK(replay::export_records(o, out, err) == replay::kExitProblems);
  CHECK(lines_of(out.str()).size() == 2);
  CHECK(timeless(err.str()) ==
        "pubsub-replay: warning: topic robot/pose: type geo::Pose from " + idl +
            " differs from the one recorded (lookup): member id: long here, unsigned long in "
            "the recording\n"
            "pubsub-replay: warning: topic robot/pose2: type geo::Pose from " +
            idl +
            " differs from the one recorded (lookup): member id: long here, unsigned long in "
            "the recording\n"
            "pubsub-replay: exported 2 samples of 2 topics to standard output, 719 B in T s\n"
            "pubsub-replay: the types used may not match the recorded data (see the warnings "
            "above); the values exported may be wrong\n");
  // A member left out: named, with where it was.
  std::string shorter = kIdl;
  shorter.erase(shorter.find("    string name;\n"), 17);
  const std::string idl2 = tmp.sub("shorter.idl");
  std::ofstream(idl2) << shorter;
  o.idl_files = {idl2};
  std::ostringstream out1, err1;
  CHECK(replay::export_records(o, out1, err1) == replay::kExitProblems);
  CHECK(lines_of(err1.str())[0] ==
        "pubsub-replay: warning: topic robot/pose: type geo::Pose from " + idl2 +
            " differs from the one recorded (lookup): no member here, member name in the "
            "recording (after mode)");
  // The recorded type's own IDL: no warning, exit 0.
  const std::string same = tmp.sub("same.idl");
  std::ofstream(same) << kIdl;
  o.idl_files = {same};
  o.progress = false;
  std::ostringstream out2, err2;
  CHECK(replay::export_records(o, out2, err2) == replay::kExitOk);
  CHECK(err2.str() == "");
}

TEST_CASE("export --decode: unread trailing bytes after samples are counted per topic, exit 1") {
  TempDir tmp;
  Model model;
  const size_t pose = model.add_topic({"robot/pose", "geo::Pose", true});
  const size_t w = model.add_writer(pose);
  add_record(model, w, 1, 0, pose_named("ab"));        // 7 bytes of name
  add_record(model, w, 2, 1'000'000, pose_named(""));  // 5 bytes
  add_record(model, w, 3, 2'000'000, pose_named("abcd"));
  const std::string dir = tmp.sub("rec");
  write_recording(dir, model);
  // An IDL without the last member, name: every sample leaves its name unread.
  std::string older = kIdl;
  older.erase(older.find("    string name;\n"), 17);
  const std::string idl = tmp.sub("older.idl");
  std::ofstream(idl) << older;
  replay::ExportOptions o;
  o.dir = dir;
  o.decode = true;
  o.idl_files = {idl};
  std::ostringstream out, err;
  CHECK(replay::export_records(o, out, err) == replay::kExitProblems);
  const auto lines = lines_of(out.str());
  REQUIRE(lines.size() == 3);
  CHECK(tail_from_value(lines[0]) ==
        ",\"value\":{\"id\":7,\"position\":{\"x\":1.5,\"y\":-2.0},\"mode\":\"MOVING\"}}");
  CHECK(timeless(err.str()) ==
        "pubsub-replay: exported 3 samples of 1 topic to standard output, 1.0 kB in T s\n"
        "pubsub-replay: warning: 3 samples of robot/pose had 5 to 9 unread trailing bytes - the "
        "IDL may not match\n"
        "pubsub-replay: the types used may not match the recorded data (see the warnings above); "
        "the values exported may be wrong\n");
}
