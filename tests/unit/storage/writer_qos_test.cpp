// Writers' QoS in a recording (format 5): WriterDef::qos is written as an entry of kind 6, repeated
// at each segment start with the writer, kept by reindex and read back by Recording::writers();
// a writer without QoS is still written as kind 2, and an index without the writer_qos table
// (format 4 and older) reads as writers without QoS.
#include <sqlite3.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>

#include "storage/format.hpp"
#include "storage/recording.hpp"
#include "storage/segment_writer.hpp"
#include "test_util.hpp"

using namespace storage;
using storage_test::TempDir;

namespace {

Bytes text(const std::string& s) {
  Bytes b(s.size());
  std::memcpy(b.data(), s.data(), s.size());
  return b;
}

const Bytes kQosA = text(R"({"ownership":"exclusive","ownership_strength":7})");
const Bytes kQosB = text(R"({"durability":"transient_local"})");

// Two writers with QoS and one without on one topic, 200 records of 1000 B each.
void write_recording(const std::string& dir, size_t segment_max_bytes) {
  SegmentWriterOptions o;
  o.chunk_max_bytes = 8 << 10;
  o.segment_max_bytes = segment_max_bytes;
  o.compression = Compression::kNone;
  auto w = SegmentWriter::create(dir, o);
  REQUIRE(w.ok());
  const TopicId t = *(*w)->add_topic({"pose", "m::Pose", false, {}, {}});
  const WriterId a = *(*w)->add_writer({t, Guid{1}, kQosA});
  const WriterId b = *(*w)->add_writer({t, Guid{2}, {}});
  const WriterId c = *(*w)->add_writer({t, Guid{3}, kQosB});
  const WriterId ids[] = {a, b, c};
  for (int i = 0; i < 200; ++i) {
    RecordMeta m{t, ids[i % 3], i / 3 + 1, i, i, 0, false, {}};
    REQUIRE((*w)->append(m, storage_test::make_payload(static_cast<uint64_t>(i), 1000)).ok());
  }
  REQUIRE((*w)->close().ok());
}

void check_writers(const std::string& dir, const std::vector<Bytes>& want) {
  auto rec = Recording::open(dir);
  REQUIRE(rec.ok());
  auto got = (*rec)->writers();
  REQUIRE(got.ok());
  REQUIRE(got->size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    INFO("writer " << i + 1);
    CHECK((*got)[i].id == i + 1);
    CHECK((*got)[i].def.guid == Guid{static_cast<uint8_t>(i + 1)});
    CHECK((*got)[i].def.qos == want[i]);
  }
}

}  // namespace

TEST_CASE("Writers' QoS are stored, read back and survive reindex") {
  TempDir dir;
  write_recording(dir.path(), 1u << 30);
  check_writers(dir.path(), {kQosA, {}, kQosB});
  REQUIRE(std::filesystem::remove(dir.path() + "/index.sqlite3"));
  auto r = Recording::reindex(dir.path());
  REQUIRE(r.ok());
  CHECK(r->problems == 0);
  check_writers(dir.path(), {kQosA, {}, kQosB});
}

TEST_CASE("Every segment repeats the writers with their QoS, so a later segment alone has them") {
  TempDir dir;
  write_recording(dir.path(), 64u << 10);
  std::vector<std::filesystem::path> segs;
  for (const auto& e : std::filesystem::directory_iterator(dir.path() + "/segments"))
    if (e.path().extension() == ".seg") segs.push_back(e.path());
  std::sort(segs.begin(), segs.end());
  REQUIRE(segs.size() >= 3);
  for (size_t i = 0; i + 1 < segs.size(); ++i) REQUIRE(std::filesystem::remove(segs[i]));
  REQUIRE(std::filesystem::remove(dir.path() + "/index.sqlite3"));
  REQUIRE(Recording::reindex(dir.path()).ok());
  check_writers(dir.path(), {kQosA, {}, kQosB});
}

TEST_CASE("An index without the writer_qos table (format 4 and older) has writers without QoS") {
  TempDir dir;
  write_recording(dir.path(), 1u << 30);
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open((dir.path() + "/index.sqlite3").c_str(), &db) == SQLITE_OK);
  CHECK(sqlite3_exec(db, "DROP TABLE writer_qos", nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(db);
  check_writers(dir.path(), {{}, {}, {}});
}

TEST_CASE("The writer entry: kind 2 without QoS, kind 6 with it, both decoded as kWriter") {
  Bytes plain, with_qos;
  format::append_writer_entry(plain, 4, WriterDef{9, Guid{5}, {}});
  format::append_writer_entry(with_qos, 4, WriterDef{9, Guid{5}, kQosB});
  CHECK(plain.size() == 1 + 1 + 1 + 16);
  CHECK(plain[0] == std::byte{2});
  CHECK(with_qos.size() == 1 + 1 + 1 + 16 + 1 + kQosB.size());
  CHECK(with_qos[0] == std::byte{6});
  for (const Bytes* b : {&plain, &with_qos}) {
    format::EntryDecoder d(*b);
    format::Entry e;
    auto r = d.next(e);
    REQUIRE(r.ok());
    REQUIRE(*r);
    CHECK(e.kind == format::EntryKind::kWriter);
    CHECK(e.writer_id == 4);
    CHECK(e.writer.topic == 9);
    CHECK(e.writer.guid == Guid{5});
    CHECK(e.writer.qos == (b == &plain ? Bytes{} : kQosB));
    CHECK(d.remaining() == 0);
  }
  // A QoS length that runs past the entry is corrupt, not a short read.
  Bytes cut(with_qos.begin(), with_qos.end() - 3);
  format::EntryDecoder d(cut);
  format::Entry e;
  auto r = d.next(e);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == ErrorCode::kCorrupt);
}
