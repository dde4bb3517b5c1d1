// info, export, verify, recover and reindex against a recording whose content the test knows
// exactly.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "common.hpp"  // service/src/replay: human_bytes
#include "shapes_fixture.hpp"

using namespace replay_test;
namespace replay = service::replay;
using nlohmann::json;

namespace {

std::string hex(const uint8_t* p, size_t n) {
  static const char* k = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    s += k[p[i] >> 4];
    s += k[p[i] & 15];
  }
  return s;
}

struct Fixture {
  TempDir tmp;
  std::string dir = tmp.sub("rec");
  Model model = make_shapes();
  explicit Fixture(storage::SegmentWriterOptions opt = {}) { write_recording(dir, model, opt); }
};

std::string info_json(const std::string& dir) {
  std::ostringstream out, err;
  REQUIRE(replay::info({dir, true}, out, err) == replay::kExitOk);
  CHECK(err.str().empty());
  return out.str();
}

std::vector<json> export_jsonl(const replay::ExportOptions& o) {
  std::ostringstream out, err;
  REQUIRE(replay::export_records(o, out, err) == replay::kExitOk);
  std::vector<json> lines;
  std::istringstream in(out.str());
  for (std::string line; std::getline(in, line);) lines.push_back(json::parse(line));
  return lines;
}

// The model's records that a selection takes, in reception order.
std::vector<const RecordSpec*> expected(const Model& m, const std::set<std::string>& topics,
                                        int64_t start, int64_t end) {
  std::vector<const RecordSpec*> v;
  for (const auto& r : m.records) {
    if (!topics.empty() && !topics.count(m.topics[r.topic].name)) continue;
    if (r.meta.reception_ns < start || r.meta.reception_ns >= end) continue;
    v.push_back(&r);
  }
  return v;
}

// The model recorded by a writer that died without closing (written in a child process), with
// `torn` bytes of a chunk it did not finish at the end of the segment. Returns the segment's
// size before those bytes.
uint64_t write_killed_recording(const std::string& dir, Model& m, const std::string& torn) {
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    try {
      write_recording(dir, m, {}, false);
    } catch (...) {
      ::_exit(1);
    }
    ::_exit(0);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  const std::string seg = dir + "/segments/00000001.seg";
  const uint64_t size = std::filesystem::file_size(seg);
  std::ofstream(seg, std::ios::binary | std::ios::app) << torn;
  return size;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

}  // namespace

TEST_CASE("info --json gives exact totals and per-topic statistics") {
  Fixture f;
  const json j = json::parse(info_json(f.dir));
  constexpr int64_t ms = 1'000'000;
  uint64_t bytes = 0, square_bytes = 0;
  for (const auto& r : f.model.records) {
    bytes += r.payload.size();
    if (r.topic == 0) square_bytes += r.payload.size();
  }
  CHECK(j["samples"] == 300 + 296 + 150 + 30);
  CHECK(j["bytes"] == bytes);
  CHECK(j["lost"] == 4);
  CHECK(j["start"] == "2026-11-21T23:38:00.001Z");
  CHECK(j["end"] == "2026-11-21T23:38:02.993Z");
  CHECK(j["writers"] == 5);
  CHECK(j["state"] == "clean");
  // The segment files on disk, and the payload per byte of them.
  const uint64_t disk = std::filesystem::file_size(f.dir + "/segments/00000001.seg");
  CHECK(j["disk_bytes"] == disk);
  CHECK(j["compression_ratio"].get<double>() ==
        Approx(static_cast<double>(bytes) / static_cast<double>(disk)));
  REQUIRE(j["recorded_writers"].size() == 5);
  const json& w0 = j["recorded_writers"][0];
  CHECK(w0["topic"] == "Square");
  CHECK(w0["guid"] == "404142434445464748494a4b00000102");
  CHECK(w0["samples"] == 300);
  CHECK(w0["qos_from"] == "topic");  // no QoS of its own (written as before format 5)
  CHECK(w0["qos"]["reliability"] == "reliable");
  CHECK(w0["qos"]["deadline_ns"] == -1);
  REQUIRE(j["topics"].size() == 4);
  const json& sq = j["topics"][0];
  CHECK(sq["name"] == "Square");
  CHECK(sq["type"] == "ShapeType");
  CHECK(sq["keyed"] == true);
  CHECK(sq["reliability"] == "reliable");
  CHECK(sq["samples"] == 596);
  CHECK(sq["bytes"] == square_bytes);
  CHECK(sq["lost"] == 4);
  CHECK(sq["writers"] == 2);
  CHECK(sq["start"] == "2026-11-21T23:38:00.001Z");
  CHECK(sq["end"] == "2026-11-21T23:38:02.993Z");
  CHECK(sq["rate"].get<double>() == Approx(595.0 / 2.992));
  const json& ci = j["topics"][1];
  CHECK(ci["name"] == "Circle");
  CHECK(ci["reliability"] == "best_effort");
  CHECK(ci["samples"] == 150);
  CHECK(ci["lost"] == 0);
  CHECK(ci["writers"] == 1);
  CHECK(ci["rate"].get<double>() == Approx(50.0));
  CHECK(ci["end"] == "2026-11-21T23:38:02.985Z");
  const json& ch = j["topics"][2];
  CHECK(ch["name"] == "rt/chatter");
  CHECK(ch["type"] == "std_msgs::msg::dds_::String_");
  CHECK(ch["keyed"] == false);
  CHECK(ch["samples"] == 30);
  CHECK(ch["rate"].get<double>() == Approx(10.0));
  CHECK(ch["start"] == "2026-11-21T23:38:00.007Z");
  const json& em = j["topics"][3];
  CHECK(em["name"] == "Empty");
  CHECK(em["samples"] == 0);
  CHECK(em["writers"] == 1);
  CHECK(em["start"].is_null());
  CHECK(em["end"].is_null());
  CHECK(em["rate"] == 0);
  (void)ms;
}

TEST_CASE("info prints an aligned table and a totals line") {
  Fixture f;
  std::ostringstream out, err;
  REQUIRE(replay::info({f.dir, false}, out, err) == replay::kExitOk);
  const std::string s = out.str();
  std::istringstream in(s);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  INFO(s);
  // recording line, header, 4 topics, total; "writers:", header, 5 writers
  REQUIRE(lines.size() == 14);
  // Sizes in SI units (kB, MB), as the recorder's; the payload per byte on disk.
  char ratio[16];
  const uint64_t disk = std::filesystem::file_size(f.dir + "/segments/00000001.seg");
  uint64_t payload = 0;
  for (const auto& r : f.model.records) payload += r.payload.size();
  std::snprintf(ratio, sizeof ratio, "%.1fx",
                static_cast<double>(payload) / static_cast<double>(disk));
  const uint64_t chunks = json::parse(info_json(f.dir))["chunks"].get<uint64_t>();
  CHECK(lines[0] == "recording " + f.dir + ": 1 segment, " + std::to_string(chunks) + " chunks, " +
                        service::replay::detail::human_bytes(disk) + " on disk (payload " +
                        service::replay::detail::human_bytes(payload) + ", " + ratio + ")");
  CHECK(lines[1].rfind("TOPIC", 0) == 0);
  CHECK(lines[7] == "writers:");
  CHECK(lines[8] == "TOPIC       WRITER                            SAMPLES  QOS");
  // Writers recorded without QoS of their own (as before format 5) show their topic's.
  CHECK(lines[9] ==
        "Square      404142434445464748494a4b00000102      300  reliable, volatile keep_all");
  CHECK(lines[11] ==
        "Circle      4e4f5051525354555657585900000302      150  best_effort, volatile keep_all");
  CHECK(lines[13] ==
        "Empty       5c5d5e5f606162636465666700000503        0  reliable, volatile keep_all");
  // Columns line up: SAMPLES ends at the same column in every row.
  const size_t end_col = lines[1].find("SAMPLES") + std::string("SAMPLES").size();
  CHECK(lines[2].substr(end_col - 3, 3) == "596");
  CHECK(lines[3].substr(end_col - 3, 3) == "150");
  CHECK(lines[4].substr(end_col - 2, 2) == "30");
  CHECK(lines[2].find("2026-11-21T23:38:00.001Z") != std::string::npos);
  CHECK(lines[6].rfind("total: 4 topics, 776 samples", 0) == 0);
  CHECK(lines[6].find("4 lost") != std::string::npos);
}

TEST_CASE("export jsonl holds every record with its metadata and exact payload") {
  Fixture f;
  replay::ExportOptions o;
  o.dir = f.dir;
  const auto lines = export_jsonl(o);
  const auto want = expected(f.model, {}, INT64_MIN, INT64_MAX);
  REQUIRE(lines.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    const RecordSpec& r = *want[i];
    const json& j = lines[i];
    INFO("record " << i);
    CHECK(j["topic"] == f.model.topics[r.topic].name);
    CHECK(j["type"] == f.model.topics[r.topic].type);
    CHECK(j["writer"] == hex(f.model.writer_guid[r.writer].data(), 16));
    CHECK(j["seq"] == r.meta.sequence);
    CHECK(j["reception_ns"] == r.meta.reception_ns);
    CHECK(j["reception_time"] == replay::format_iso(r.meta.reception_ns, 9));
    CHECK(j["source_ns"] == r.meta.source_ns);
    if (r.meta.flags & service::kFlagHasSourceTimestamp) {
      CHECK(j["source_time"] == replay::format_iso(r.meta.source_ns, 9));
    } else {
      CHECK(j["source_time"].is_null());
    }
    CHECK(j["flags"] == r.meta.flags);
    if (r.meta.has_key_hash) {
      CHECK(j["key_hash"] == hex(r.meta.key_hash.data(), 16));
    } else {
      CHECK(j["key_hash"].is_null());
    }
    CHECK(base64_decode(j["payload_base64"].get<std::string>()) == to_string(r.payload, 0));
  }
}

TEST_CASE("export csv has a header and the same columns") {
  Fixture f;
  replay::ExportOptions o;
  o.dir = f.dir;
  o.format = replay::ExportFormat::kCsv;
  o.selection.topics = {"rt/*"};
  std::ostringstream out, err;
  REQUIRE(replay::export_records(o, out, err) == replay::kExitOk);
  std::istringstream in(out.str());
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  REQUIRE(lines.size() == 31);
  CHECK(lines[0] ==
        "topic,type,writer,seq,source_time,reception_time,source_ns,reception_ns,flags,key_hash,"
        "payload_base64");
  const RecordSpec& r = *expected(f.model, {"rt/chatter"}, INT64_MIN, INT64_MAX)[0];
  json j;  // build the expected line from the jsonl export of the same record
  replay::ExportOptions oj = o;
  oj.format = replay::ExportFormat::kJsonl;
  j = export_jsonl(oj)[0];
  CHECK(lines[1] == "rt/chatter,std_msgs::msg::dds_::String_," + j["writer"].get<std::string>() +
                        ",1,,2026-11-21T23:38:00.007000000Z,0," +
                        std::to_string(r.meta.reception_ns) + ",0,," +
                        j["payload_base64"].get<std::string>());
}

TEST_CASE("export selects exactly the topics and the time range asked for") {
  Fixture f;
  constexpr int64_t s = 1'000'000'000;
  SECTION("offsets in seconds") {
    replay::ExportOptions o;
    o.dir = f.dir;
    o.selection.topics = {"S*", "rt/*"};
    o.selection.start = replay::TimeArg{false, s / 2 - 1'000'000};  // from the first reception
    o.selection.end = replay::TimeArg{false, 2 * s + s / 4};
    const auto lines = export_jsonl(o);
    const auto want =
        expected(f.model, {"Square", "rt/chatter"}, kT0 + s / 2, kT0 + 2 * s + s / 4 + 1'000'000);
    REQUIRE(lines.size() == want.size());
    for (size_t i = 0; i < want.size(); ++i)
      CHECK(lines[i]["reception_ns"] == want[i]->meta.reception_ns);
  }
  SECTION("ISO-8601 times") {
    replay::ExportOptions o;
    o.dir = f.dir;
    o.selection.topics = {"Circle"};
    o.selection.start = *replay::parse_time_arg("2026-11-21T23:38:01.005Z");
    o.selection.end = *replay::parse_time_arg("2026-11-22T00:38:02.005+01:00");
    const auto lines = export_jsonl(o);
    const auto want = expected(f.model, {"Circle"}, kT0 + s + 5'000'000, kT0 + 2 * s + 5'000'000);
    REQUIRE(lines.size() == 50);
    REQUIRE(lines.size() == want.size());
    CHECK(lines.front()["seq"] == 51);
    CHECK(lines.back()["seq"] == 100);
  }
}

TEST_CASE("verify passes a clean recording and lists recorded loss as information") {
  Fixture f;
  std::ostringstream out, err;
  CHECK(replay::verify(f.dir, out, err) == replay::kExitOk);
  CHECK(out.str().find("loss: 1 gap, 4 samples") != std::string::npos);
  CHECK(out.str().find("Square writer " + hex(f.model.writer_guid[1].data(), 16) +
                       ": seq 101..104 (4)") != std::string::npos);
  CHECK(out.str().find("result: ok") != std::string::npos);
  CHECK(err.str().empty());
}

TEST_CASE("verify finds a corrupted chunk and names it") {
  storage::SegmentWriterOptions opt;
  opt.chunk_max_bytes = 8192;
  opt.compression = storage::Compression::kNone;
  Fixture f(opt);
  // Flip one byte in the body of the fourth data chunk.
  const auto [target, target_seq] = corrupt_data_chunk(f.dir, 4);
  REQUIRE(target > 0);
  std::ostringstream out, err;
  CHECK(replay::verify(f.dir, out, err) == replay::kExitProblems);
  const std::string s = out.str();
  INFO(s);
  (void)target_seq;
  CHECK(s.find("damage: corrupt chunk: segments/00000001.seg at offset " + std::to_string(target) +
               ", ") != std::string::npos);
  CHECK(s.find("Square") != std::string::npos);
  CHECK(s.find("result: 1 damage found; run 'pubsub-replay recover " + f.dir + "' to repair it") !=
        std::string::npos);

  // Export still gives everything else, but says it is incomplete (exit 1).
  replay::ExportOptions o;
  o.dir = f.dir;
  std::ostringstream eout, eerr;
  CHECK(replay::export_records(o, eout, eerr) == replay::kExitProblems);
  CHECK(eerr.str().find("damaged") != std::string::npos);
  CHECK(count_lines(eout.str()) < f.model.records.size());
  CHECK(count_lines(eout.str()) > f.model.records.size() / 2);
}

TEST_CASE("reindex after deleting the index restores identical info") {
  storage::SegmentWriterOptions opt;
  opt.chunk_max_bytes = 16384;
  Fixture f(opt);
  const std::string before = info_json(f.dir);
  std::filesystem::remove(f.dir + "/index.sqlite3");
  {
    std::ostringstream out, err;
    CHECK(replay::info({f.dir, true}, out, err) == replay::kExitUsage);
    CHECK(err.str().find("index.sqlite3 is missing") != std::string::npos);
    CHECK(err.str().find("pubsub-replay reindex") != std::string::npos);
    CHECK(count_lines(err.str()) == 1);
  }
  std::ostringstream out, err;
  REQUIRE(replay::reindex(f.dir, out, err) == replay::kExitOk);
  CHECK(out.str().find("reindexed") == 0);
  // Segments alone do not show how the writer ended: the rebuilt index says "recovered".
  CHECK(out.str().find("; state recovered\n") != std::string::npos);
  json was = json::parse(before), now = json::parse(info_json(f.dir));
  CHECK(was["state"] == "clean");
  CHECK(now["state"] == "recovered");
  was.erase("state");
  now.erase("state");
  CHECK(now == was);
  std::ostringstream vout, verr;
  CHECK(replay::verify(f.dir, vout, verr) == replay::kExitOk);
}

TEST_CASE("verify exits 3 on a killed recording, recover cuts its torn tail into recovered/") {
  TempDir tmp;
  const std::string dir = tmp.sub("rec");
  Model m = make_shapes();
  const std::string torn = "PSCK" + std::string(96, 'x');
  const uint64_t good_end = write_killed_recording(dir, m, torn);
  const json before = json::parse(info_json(dir));
  CHECK(before["state"] == "unclean");
  CHECK(before["samples"] == m.records.size());
  {
    std::ostringstream out, err;
    CHECK(replay::verify(dir, out, err) == replay::kExitNotClosed);
    INFO(out.str());
    CHECK(out.str().find("state: unclean\n") != std::string::npos);
    CHECK(out.str().find("damage: not closed cleanly: torn tail in segments/00000001.seg at "
                         "offset " +
                         std::to_string(good_end) +
                         "; 1 chunk cut, an unknown number of samples lost; 100 bytes of it "
                         "left at the end\n  repair: pubsub-replay recover " +
                         dir + "\n") != std::string::npos);
    CHECK(out.str().find("result: not closed cleanly, torn tail only; run 'pubsub-replay "
                         "recover " +
                         dir + "' to finish it\n") != std::string::npos);
  }
  {
    std::ostringstream out, err;
    CHECK(replay::recover(dir, out, err) == replay::kExitOk);
    INFO(out.str() << err.str());
    const std::string saved = dir + "/recovered/00000001.seg.from-" + std::to_string(good_end);
    CHECK(out.str().find("saved: " + saved + "\n") != std::string::npos);
    CHECK(out.str().find("recovered " + dir +
                         ": an unknown number of samples lost in 1 chunk, 100 bytes moved to " +
                         dir + "/recovered/\n") != std::string::npos);
    CHECK(out.str().find("state: recovered; " + std::to_string(m.records.size()) + " samples") !=
          std::string::npos);
    CHECK(read_file(saved) == torn);
    CHECK(std::filesystem::file_size(dir + "/segments/00000001.seg") == good_end);
  }
  {
    std::ostringstream out, err;
    CHECK(replay::verify(dir, out, err) == replay::kExitOk);
    CHECK(out.str().find("state: recovered\n") != std::string::npos);
    CHECK(out.str().find("result: ok\n") != std::string::npos);
  }
  json after = json::parse(info_json(dir));
  CHECK(after["state"] == "recovered");
  CHECK(after["repaired"].size() == 1);
  after["state"] = "unclean";
  after.erase("repaired");
  json before_state = before;
  before_state.erase("repaired");
  before_state.erase("damage");
  after.erase("damage");
  for (const char* k : {"disk_bytes", "compression_ratio"}) {  // the torn tail is cut
    after.erase(k);
    before_state.erase(k);
  }
  CHECK(after == before_state);
  {
    std::ostringstream out, err;  // idempotent
    CHECK(replay::recover(dir, out, err) == replay::kExitOk);
    CHECK(out.str() == "recording " + dir + " is recovered; nothing to recover\n");
  }
}

TEST_CASE("reindex keeps a killed recording unclean and verify still exits 3") {
  TempDir tmp;
  const std::string dir = tmp.sub("rec");
  Model m = make_shapes();
  const uint64_t good_end = write_killed_recording(dir, m, "PSCK" + std::string(60, 'y'));
  std::filesystem::remove(dir + "/index.sqlite3");
  std::ostringstream out, err;
  CHECK(replay::reindex(dir, out, err) == replay::kExitProblems);
  CHECK(out.str().find("; state unclean\n") != std::string::npos);
  CHECK(out.str().find("note: not closed cleanly; 'pubsub-replay recover " + dir +
                       "' finishes it\n") != std::string::npos);
  CHECK(json::parse(info_json(dir))["state"] == "unclean");
  std::ostringstream vout, verr;
  CHECK(replay::verify(dir, vout, verr) == replay::kExitNotClosed);
  std::ostringstream rout, rerr;
  CHECK(replay::recover(dir, rout, rerr) == replay::kExitOk);
  CHECK(std::filesystem::file_size(dir + "/segments/00000001.seg") == good_end);
  std::ostringstream v2out, v2err;
  CHECK(replay::verify(dir, v2out, v2err) == replay::kExitOk);
}

TEST_CASE("recover on a clean recording changes nothing") {
  Fixture f;
  const std::string before = info_json(f.dir);
  std::ostringstream out, err;
  CHECK(replay::recover(f.dir, out, err) == replay::kExitOk);
  CHECK(out.str() == "recording " + f.dir + " is clean; nothing to recover\n");
  CHECK(info_json(f.dir) == before);
  CHECK_FALSE(std::filesystem::exists(f.dir + "/recovered"));
}

TEST_CASE("reindex refuses a directory without segments") {
  TempDir tmp;
  std::ostringstream out, err;
  CHECK(replay::reindex(tmp.path(), out, err) == replay::kExitUsage);
  CHECK(err.str().find("not a recording") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(tmp.sub("index.sqlite3")));
}

namespace {

// A recording set's member: `n` samples of one writer a second apart from `first_s` on its own
// clock, its set_member and start marks, and `marks` besides.
Model member_model(const std::string& member, int n, int64_t first_s,
                   std::vector<storage::Mark> marks, size_t writers_before = 0) {
  Model m;
  const size_t t = m.add_topic({"Shared", "T", false});
  for (size_t i = 0; i <= writers_before; ++i) m.add_writer(t);  // the last one writes
  m.marks = {{storage::MarkKind::kSetMember, first_s * 1000000000, "rig", member},
             {storage::MarkKind::kStart, first_s * 1000000000, "rig-7", ""}};
  m.marks.insert(m.marks.end(), marks.begin(), marks.end());
  for (int i = 0; i < n; ++i) {
    RecordSpec r;
    r.writer = writers_before;
    r.meta.sequence = i + 1;
    r.meta.reception_ns = (first_s + i) * 1000000000;
    r.payload = storage::Bytes(4, std::byte{1});
    m.records.push_back(r);
  }
  return m;
}

}  // namespace

TEST_CASE("info over several recordings: side by side on the first one's clock, gaps named") {
  TempDir tmp;
  const std::string a = tmp.sub("a"), b = tmp.sub("b");
  const int64_t t0 = 1'800'000'000;  // 2027-01-15T08:00:00Z
  // b's clock is 2 s ahead of a's (b measured a at -2 s); on a's clock it records t0 .. t0+4,
  // while a records t0 .. t0+9: a coverage gap in b from t0+4 to t0+9.
  Model ma = member_model("host a, address 198.18.0.1", 10, t0, {});
  Model mb = member_model("host b, address 198.18.0.2", 5, t0 + 2,
                          {{storage::MarkKind::kClockOffset, (t0 + 3) * 1000000000,
                            "host a, address 198.18.0.1", "-2.000000000 s, error 0.000100000 s"},
                           {storage::MarkKind::kClockOffset, (t0 + 4) * 1000000000,
                            "host a, address 198.18.0.1", "-2.000000500 s, error 0.000900000 s"}},
                          1);
  write_recording(a, ma);
  write_recording(b, mb);
  const auto iso = [](int64_t s) { return replay::format_iso(s * 1000000000); };
  std::ostringstream out, err;
  REQUIRE(replay::info_set({{a, b}, false}, out, err) == replay::kExitOk);
  CHECK(err.str().empty());
  CHECK(out.str() ==
        "2 recordings of recording set rig, recording id rig-7:\n"
        "RECORDING" +
            std::string(a.size() - 9, ' ') +
            "  MEMBER                      SAMPLES  WRITERS  LOST  RECEIVED" +
            std::string(2 * iso(t0).size() + 4 - 8, ' ') + "  CLOCK\n" + a +
            "  host a, address 198.18.0.1       10        1     0  " + iso(t0) + " .. " +
            iso(t0 + 9) + "  reference\n" + b +
            "  host b, address 198.18.0.2        5        1     0  " + iso(t0) + " .. " +
            iso(t0 + 4) + "  +2.000000000 s, error 0.000100000 s\n" +
            "total: 15 samples from 2 writers (0 recorded by more than one member: their samples "
            "count once per member), 0 lost, " +
            iso(t0) + " .. " + iso(t0 + 9) + "\n" + "coverage gap: " + b +
            " recorded nothing from " + iso(t0 + 4) + " to " + iso(t0 + 9) + "\n");
  std::ostringstream jout, jerr;
  REQUIRE(replay::info_set({{a, b, a}, true}, jout, jerr) == replay::kExitOk);
  const json j = json::parse(jout.str());
  CHECK(j["samples"] == 25);
  CHECK(j["writers"] == 2);
  CHECK(j["writers_in_several"] == 1);  // a's writer, in a twice
  CHECK(j["members"][1]["clock_offset_ns"] == 2000000000);
  CHECK(j["members"][1]["clock_error_ns"] == 100000);
  CHECK(j["members"][0]["clock_offset_ns"].is_null());
  CHECK(j["coverage_gaps"] ==
        json::array({{{"dir", b}, {"from", iso(t0 + 4)}, {"to", iso(t0 + 9)}}}));
  std::ostringstream bad_out, bad_err;
  CHECK(replay::info_set({{a, tmp.sub("none")}, false}, bad_out, bad_err) == replay::kExitUsage);
  CHECK(bad_out.str().empty());
}

TEST_CASE("export of several recordings names each writer's member: JSON member, CSV column") {
  Fixture f;
  replay::ExportOptions o;
  o.dir = f.dir;
  o.selection.topics = {"rt/*"};
  const std::string guid = export_jsonl(o)[0]["writer"].get<std::string>();
  o.writer_members = {{guid, "host a, address 198.18.0.1"}};
  const auto lines = export_jsonl(o);
  REQUIRE(lines.size() == 30);
  for (const auto& l : lines) {
    // Writers not in the map (none here) would get "member":"".
    CHECK(l["member"] == (l["writer"] == guid ? "host a, address 198.18.0.1" : ""));
  }
  std::ostringstream raw, raw_err;  // the field's place: right after the writer
  REQUIRE(replay::export_records(o, raw, raw_err) == replay::kExitOk);
  CHECK(raw.str().find(R"("writer":")" + guid +
                       R"(","member":"host a, address 198.18.0.1","seq":1,)") != std::string::npos);
  o.format = replay::ExportFormat::kCsv;
  std::ostringstream out, err;
  REQUIRE(replay::export_records(o, out, err) == replay::kExitOk);
  std::istringstream in(out.str());
  std::string header, first;
  std::getline(in, header);
  std::getline(in, first);
  CHECK(header ==
        "topic,type,writer,member,seq,source_time,reception_time,source_ns,reception_ns,flags,"
        "key_hash,payload_base64");
  CHECK(first.rfind("rt/chatter,std_msgs::msg::dds_::String_," + guid +
                        ",\"host a, address 198.18.0.1\",1,,",
                    0) == 0);
}
