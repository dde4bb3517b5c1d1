// Damaged copies of a clean recording - a truncated segment, a corrupt chunk, a missing index, a
// stale index: info, verify and recover name each damage in the same words, with the one command
// that repairs it, and exact counts of what is lost (taken here from the chunk headers).
#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "shapes_fixture.hpp"

using namespace replay_test;
namespace replay = service::replay;
using nlohmann::json;

namespace {

struct ChunkAt {
  uint64_t offset = 0, span = 0, records = 0;
};

// The chunks of segment 1 by their headers (as the format lays them out).
std::vector<ChunkAt> chunks_of(const std::string& dir) {
  const std::string bytes = slurp(dir + "/segments/00000001.seg");
  std::vector<ChunkAt> v;
  for (size_t pos = 48; pos + 64 <= bytes.size();) {
    uint32_t stored = 0, records = 0;
    uint16_t padding = 0;
    std::memcpy(&stored, bytes.data() + pos + 16, 4);
    std::memcpy(&records, bytes.data() + pos + 24, 4);
    std::memcpy(&padding, bytes.data() + pos + 50, 2);
    v.push_back({pos, 64u + stored + padding, records});
    pos += 64 + stored + padding;
  }
  return v;
}

struct Damaged {
  TempDir tmp{"damage"};
  std::string dir = tmp.sub("rec");
  Model model = make_shapes();
  std::vector<ChunkAt> chunks;
  Damaged() {
    storage::SegmentWriterOptions opt;
    opt.chunk_max_bytes = 4096;
    opt.compression = storage::Compression::kNone;
    write_recording(dir, model, opt);
    chunks = chunks_of(dir);
    REQUIRE(chunks.size() > 10);
  }
  std::string seg() const { return dir + "/segments/00000001.seg"; }
};

std::vector<std::string> lines_with(const std::string& s, const std::string& prefix) {
  std::vector<std::string> v;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);)
    if (l.rfind(prefix, 0) == 0) v.push_back(l);
  return v;
}

uint64_t samples(const std::string& dir) {
  auto r = run_replay("info --json " + dir);
  return json::parse(r.out)["samples"].get<uint64_t>();
}

}  // namespace

TEST_CASE("damage: a truncated segment is one damage with exact counts, and recover repairs it") {
  Damaged f;
  const size_t total = f.model.records.size();
  // Cut 100 bytes into the chunk 6 from the end.
  const size_t k = f.chunks.size() - 6;
  const uint64_t cut_at = f.chunks[k].offset + 100;
  uint64_t records = 0;
  for (size_t i = k; i < f.chunks.size(); ++i) records += f.chunks[i].records;
  const uint64_t size = std::filesystem::file_size(f.seg());
  std::filesystem::copy(f.dir, f.tmp.sub("copy"), std::filesystem::copy_options::recursive);
  std::filesystem::resize_file(f.seg(), cut_at);
  const std::string line = "damage: truncated segment: segments/00000001.seg ends " +
                           std::to_string(size - cut_at) + " bytes short; 6 chunks cut, " +
                           std::to_string(records) + " samples lost";
  const std::string repair = "  repair: pubsub-replay recover " + f.dir;
  {
    auto r = run_replay("info " + f.dir);
    INFO(r.out << r.err);
    CHECK(r.exit_code == 1);
    REQUIRE(lines_with(r.out, "damage:").size() == 1);
    CHECK(lines_with(r.out, "damage:")[0].rfind(line, 0) == 0);
    CHECK(lines_with(r.out, "  repair:") == std::vector<std::string>{repair});
  }
  {
    auto r = run_replay("verify " + f.dir);
    INFO(r.out << r.err);
    CHECK(r.exit_code == 1);
    REQUIRE(lines_with(r.out, "damage:").size() == 1);
    CHECK(lines_with(r.out, "damage:")[0].rfind(line, 0) == 0);
    CHECK(lines_with(r.out, "  repair:") == std::vector<std::string>{repair});
    CHECK(lines_with(r.out, "result:") ==
          std::vector<std::string>{"result: 1 damage found; run 'pubsub-replay recover " + f.dir +
                                   "' to repair it"});
  }
  {  // export names the topics of what it skips
    auto r = run_replay("export " + f.dir);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("topics #") == std::string::npos);
    CHECK(r.err.find("Square") != std::string::npos);
  }
  {
    auto r = run_replay("recover " + f.dir);
    INFO(r.out << r.err);
    CHECK(r.exit_code == 0);
    CHECK(lines_with(r.out, "repaired:").size() == 1);
    CHECK(r.out.find("recovered " + f.dir + ": " + std::to_string(records) +
                     " samples lost in 6 chunks, 100 bytes moved to " + f.dir + "/recovered/") !=
          std::string::npos);
    CHECK(r.out.find("state: clean (repaired); " + std::to_string(total - records) +
                     " samples, ") != std::string::npos);
  }
  CHECK(samples(f.dir) == total - records);
  {
    auto r = run_replay("info " + f.dir);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("closed cleanly, repaired by recover since") != std::string::npos);
    CHECK(r.out.find("unclean") == std::string::npos);
    CHECK(lines_with(r.out, "repaired earlier by recover: truncated segment").size() == 1);
  }
  CHECK(run_replay("verify " + f.dir).exit_code == 0);

  // The same cut, reindexed first: the index no longer knows the chunks past the cut, so only
  // the cut chunk's own count (from its header) is known.
  const std::string copy = f.tmp.sub("copy");
  std::filesystem::resize_file(copy + "/segments/00000001.seg", cut_at);
  CHECK(run_replay("reindex " + copy).exit_code == 1);
  {
    auto r = run_replay("recover " + copy);
    INFO(r.out << r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("recovered " + copy + ": " + std::to_string(f.chunks[k].records) +
                     " samples lost in 1 chunk, 100 bytes moved") != std::string::npos);
    CHECK(r.out.find("state: clean (repaired)") != std::string::npos);
  }
  auto r = run_replay("info " + copy);
  CHECK(r.out.find("recovered after an unclean close") == std::string::npos);
  CHECK(r.out.find("closed cleanly, repaired by recover since") != std::string::npos);
}

TEST_CASE("damage: a corrupt chunk is named with its samples, and recover moves it out") {
  Damaged f;
  const size_t total = f.model.records.size();
  const auto [offset, seq] = corrupt_data_chunk(f.dir, 4);
  REQUIRE(offset > 0);
  ChunkAt c;
  for (const auto& x : f.chunks)
    if (x.offset == offset) c = x;
  REQUIRE(c.records > 0);
  const std::string line = "damage: corrupt chunk: segments/00000001.seg at offset " +
                           std::to_string(offset) + ", " + std::to_string(c.span) + " bytes; " +
                           std::to_string(c.records) + " samples lost";
  {
    auto r = run_replay("verify " + f.dir);
    INFO(r.out);
    CHECK(r.exit_code == 1);
    REQUIRE(lines_with(r.out, "damage:").size() == 1);
    CHECK(lines_with(r.out, "damage:")[0].rfind(line, 0) == 0);
    CHECK(lines_with(r.out, "  repair:") ==
          std::vector<std::string>{"  repair: pubsub-replay recover " + f.dir});
  }
  {
    auto r = run_replay("recover " + f.dir);
    INFO(r.out << r.err);
    CHECK(r.exit_code == 0);
    REQUIRE(lines_with(r.out, "repaired:").size() == 1);
    CHECK(lines_with(r.out, "repaired:")[0].rfind("repaired:" + line.substr(7), 0) == 0);
    CHECK(r.out.find("recovered " + f.dir + ": " + std::to_string(c.records) +
                     " samples lost in 1 chunk, " + std::to_string(c.span) + " bytes moved") !=
          std::string::npos);
    CHECK(std::filesystem::file_size(f.dir + "/recovered/00000001.seg.chunk-at-" +
                                     std::to_string(offset)) == c.span);
  }
  CHECK(samples(f.dir) == total - c.records);
  CHECK(run_replay("verify " + f.dir).exit_code == 0);
}

TEST_CASE("damage: a missing index is counted from the segments, and recover rebuilds it") {
  Damaged f;
  const size_t total = f.model.records.size();
  std::filesystem::remove(f.dir + "/index.sqlite3");
  const std::vector<std::string> expect{
      "damage: index missing: index.sqlite3 does not exist; the segments hold " +
          std::to_string(f.chunks.size()) + " chunks, " + std::to_string(total) + " samples",
      "  repair: pubsub-replay reindex " + f.dir};
  for (const char* cmd : {"info ", "verify "}) {
    auto r = run_replay(cmd + f.dir);
    INFO(cmd << r.out << r.err);
    CHECK(r.exit_code == 2);
    auto l = lines_with(r.out, "damage:");
    auto l2 = lines_with(r.out, "  repair:");
    l.insert(l.end(), l2.begin(), l2.end());
    CHECK(l == expect);
  }
  auto r = run_replay("recover " + f.dir);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(lines_with(r.out, "repaired:") ==
        std::vector<std::string>{"repaired:" + expect[0].substr(7)});
  CHECK(samples(f.dir) == total);
  CHECK(run_replay("verify " + f.dir).exit_code == 0);
}

TEST_CASE("damage: a stale index (chunks it does not list) is named, and reindex repairs it") {
  Damaged f;
  const size_t total = f.model.records.size();
  const std::string full = slurp(f.seg());
  // An index of the first chunks only: reindex a copy cut at a chunk boundary, then put the
  // whole segment back.
  const size_t k = f.chunks.size() - 4;
  uint64_t records = 0;
  for (size_t i = k; i < f.chunks.size(); ++i) records += f.chunks[i].records;
  std::filesystem::resize_file(f.seg(), f.chunks[k].offset);
  REQUIRE(run_replay("reindex " + f.dir).exit_code == 0);
  std::ofstream(f.seg(), std::ios::binary | std::ios::trunc) << full;
  const std::vector<std::string> expect{
      "damage: index stale: segments/00000001.seg holds 4 chunks (" + std::to_string(records) +
          " samples) that the index does not list or lists differently",
      "  repair: pubsub-replay reindex " + f.dir};
  for (const char* cmd : {"info ", "verify "}) {
    auto r = run_replay(cmd + f.dir);
    INFO(cmd << r.out << r.err);
    CHECK(r.exit_code == 1);
    auto l = lines_with(r.out, "damage:");
    auto l2 = lines_with(r.out, "  repair:");
    l.insert(l.end(), l2.begin(), l2.end());
    CHECK(l == expect);
  }
  CHECK(samples(f.dir) == total - records);
  CHECK(run_replay("reindex " + f.dir).exit_code == 0);
  CHECK(samples(f.dir) == total);
  CHECK(run_replay("verify " + f.dir).exit_code == 0);
}
