// Type definitions in a recording (format 3): written with SegmentWriter::add_type, repeated at
// each segment start, kept by reindex, read back by Recording::types().
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

const TypeDef kPoseIdl{
    "m::Pose", TypeSource::kIdl, "module m { struct Pose { double x; }; };\n", {}};
const TypeDef kPoseLookup{"m::Pose", TypeSource::kLookup,
                          "module m { struct Pose { double x; double y; }; };\n",
                          Bytes{std::byte{1}, std::byte{2}, std::byte{3}}};
const TypeDef kSeq{"KeyedSeq", TypeSource::kLookup, "struct KeyedSeq { unsigned long seq; };\n",
                   Bytes(200, std::byte{7})};

bool same(const TypeDef& a, const TypeDef& b) {
  return a.type_name == b.type_name && a.source == b.source && a.idl == b.idl &&
         a.type_object == b.type_object;
}

void check_types(const std::string& dir, const std::vector<TypeDef>& want) {
  auto rec = Recording::open(dir);
  REQUIRE(rec.ok());
  auto got = (*rec)->types();
  REQUIRE(got.ok());
  REQUIRE(got->size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    INFO("type " << i << ": " << (*got)[i].type_name);
    CHECK(same((*got)[i], want[i]));
  }
}

// Writes 300 records of 1000 B on one topic into segments of at most 64 KiB, defining the types
// before, between and after them.
void write_recording(const std::string& dir, size_t segment_max_bytes) {
  SegmentWriterOptions o;
  o.chunk_max_bytes = 8 << 10;
  o.segment_max_bytes = segment_max_bytes;
  o.compression = Compression::kNone;
  auto w = SegmentWriter::create(dir, o);
  REQUIRE(w.ok());
  const TopicId t = *(*w)->add_topic({"pose", "m::Pose", false, {}, {}});
  const WriterId id = *(*w)->add_writer({t, Guid{3}});
  REQUIRE((*w)->add_type(kPoseIdl).ok());
  TypeDef first = kSeq;
  first.idl = "struct KeyedSeq { long seq; };\n";  // replaced below
  REQUIRE((*w)->add_type(first).ok());
  for (int i = 0; i < 300; ++i) {
    RecordMeta m{t, id, i + 1, i, i, 0, false, {}};
    REQUIRE((*w)->append(m, storage_test::make_payload(static_cast<uint64_t>(i), 1000)).ok());
    if (i == 100) REQUIRE((*w)->add_type(kPoseLookup).ok());
    if (i == 200) REQUIRE((*w)->add_type(kSeq).ok());
    if (i == 201) REQUIRE((*w)->add_type(kSeq).ok());  // the same again: nothing new
  }
  REQUIRE((*w)->close().ok());
}

}  // namespace

TEST_CASE("Type definitions are stored, replaced by name and source, and survive reindex") {
  TempDir dir;
  write_recording(dir.path(), 1u << 30);
  const std::vector<TypeDef> want{kSeq, kPoseIdl, kPoseLookup};  // by name, then source
  check_types(dir.path(), want);

  REQUIRE(std::filesystem::remove(dir.path() + "/index.sqlite3"));
  auto r = Recording::reindex(dir.path());
  REQUIRE(r.ok());
  CHECK(r->problems == 0);
  check_types(dir.path(), want);
}

TEST_CASE("Every segment repeats the type definitions, so a later segment alone has them") {
  TempDir dir;
  write_recording(dir.path(), 64u << 10);
  std::vector<std::filesystem::path> segs;
  for (const auto& e : std::filesystem::directory_iterator(dir.path() + "/segments"))
    if (e.path().extension() == ".seg") segs.push_back(e.path());
  std::sort(segs.begin(), segs.end());
  REQUIRE(segs.size() >= 3);
  // Only the last segment left: the types defined before it come from its opening chunk.
  for (size_t i = 0; i + 1 < segs.size(); ++i) REQUIRE(std::filesystem::remove(segs[i]));
  REQUIRE(std::filesystem::remove(dir.path() + "/index.sqlite3"));
  REQUIRE(Recording::reindex(dir.path()).ok());
  check_types(dir.path(), {kSeq, kPoseIdl, kPoseLookup});
}

TEST_CASE("An index without a types table (format 1 and 2) has no types, and no error") {
  TempDir dir;
  write_recording(dir.path(), 1u << 30);
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open((dir.path() + "/index.sqlite3").c_str(), &db) == SQLITE_OK);
  CHECK(sqlite3_exec(db, "DROP TABLE types", nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(db);
  check_types(dir.path(), {});
}

TEST_CASE("add_type refuses a nameless type, and the decoder a bad source byte") {
  TempDir dir;
  auto w = SegmentWriter::create(dir.path(), {});
  REQUIRE(w.ok());
  auto s = (*w)->add_type(TypeDef{"", TypeSource::kIdl, "struct A { long a; };", {}});
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().message == "add_type: no type name");
  REQUIRE((*w)->close().ok());

  Bytes raw;
  format::append_type_entry(raw, kPoseLookup);
  format::Entry e;
  {
    format::EntryDecoder dec(raw);
    REQUIRE(*dec.next(e));
    CHECK(e.kind == format::EntryKind::kType);
    CHECK(same(e.type, kPoseLookup));
  }
  raw[1 + 1 + kPoseLookup.type_name.size()] = std::byte{3};  // the source byte: no such source
  format::EntryDecoder dec(raw);
  auto bad = dec.next(e);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message == "bad type definition at entry offset " + std::to_string(raw.size()));
  // Every truncation fails cleanly.
  Bytes whole;
  format::append_type_entry(whole, kSeq);
  for (size_t n = 1; n < whole.size(); ++n) {
    format::EntryDecoder d(ByteSpan(whole.data(), n));
    CHECK_FALSE(d.next(e).ok());
  }
}
