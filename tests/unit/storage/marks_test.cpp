// Marks (format 4: tags, pauses, resumes), skip_to (a pause is no gap) and split().
#include <sqlite3.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "storage/format.hpp"
#include "storage/recording.hpp"
#include "storage/segment_writer.hpp"
#include "test_util.hpp"

using namespace storage;
using storage_test::TempDir;

namespace {

const Mark kTag{MarkKind::kTag, 150, "engine-start", "operator: ignition at 15:04"};
const Mark kPause{MarkKind::kPause, 200, "", ""};
const Mark kResume{MarkKind::kResume, 260, "", ""};
const Mark kLate{MarkKind::kTag, 290, "late", ""};

std::vector<Mark> read_marks(const std::string& dir) {
  auto rec = Recording::open(dir);
  REQUIRE(rec.ok());
  auto got = (*rec)->marks();
  REQUIRE(got.ok());
  return *got;
}

// 300 records (reception times 0..299) with the marks added at their times; records 201..259
// are left out as if paused (skip_to), so there is no gap. split() after record 149 when `split`.
void write_recording(const std::string& dir, bool split) {
  SegmentWriterOptions o;
  o.chunk_max_bytes = 8 << 10;
  o.compression = Compression::kNone;
  auto w = SegmentWriter::create(dir, o);
  REQUIRE(w.ok());
  const TopicId t = *(*w)->add_topic({"pose", "m::Pose", false, {}, {}});
  const WriterId id = *(*w)->add_writer({t, Guid{3}});
  for (int i = 0; i < 300; ++i) {
    if (i == 150) {
      REQUIRE((*w)->add_mark(kTag).ok());
      if (split) {
        auto next = (*w)->split();
        REQUIRE(next.ok());
        CHECK(*next == 2);
      }
    }
    if (i == 200) REQUIRE((*w)->add_mark(kPause).ok());
    if (i > 200 && i < 260) {
      REQUIRE((*w)->skip_to(id, i + 1).ok());
      continue;
    }
    if (i == 260) REQUIRE((*w)->add_mark(kResume).ok());
    if (i == 290) REQUIRE((*w)->add_mark(kLate).ok());
    RecordMeta m{t, id, i + 1, i, i, 0, false, {}};
    REQUIRE((*w)->append(m, storage_test::make_payload(static_cast<uint64_t>(i), 1000)).ok());
  }
  REQUIRE((*w)->close().ok());
}

}  // namespace

TEST_CASE("Marks are stored in time order, a pause leaves no gap, and reindex keeps them") {
  TempDir dir;
  write_recording(dir.path(), false);
  const std::vector<Mark> want{kTag, kPause, kResume, kLate};
  CHECK(read_marks(dir.path()) == want);
  {
    auto rec = Recording::open(dir.path());
    REQUIRE(rec.ok());
    auto gaps = (*rec)->gaps();
    REQUIRE(gaps.ok());
    CHECK(gaps->empty());
    auto totals = (*rec)->totals();
    REQUIRE(totals.ok());
    CHECK(totals->records == 241);
    CHECK(totals->lost == 0);
    auto v = (*rec)->verify();
    REQUIRE(v.ok());
    CHECK(v->ok());
  }
  REQUIRE(std::filesystem::remove(dir.path() + "/index.sqlite3"));
  auto r = Recording::reindex(dir.path());
  REQUIRE(r.ok());
  CHECK(r->problems == 0);
  CHECK(read_marks(dir.path()) == want);
}

TEST_CASE("split() ends the segment: the records before it are in segment 1, after it in 2") {
  TempDir dir;
  write_recording(dir.path(), true);
  auto rec = Recording::open(dir.path());
  REQUIRE(rec.ok());
  auto segs = (*rec)->segments();
  REQUIRE(segs.ok());
  REQUIRE(segs->size() == 2);
  CHECK((*segs)[0].number == 1);
  CHECK((*segs)[0].closed);
  CHECK((*segs)[0].record_count == 150);
  CHECK((*segs)[0].last_recv_ns == 149);
  CHECK((*segs)[1].number == 2);
  CHECK((*segs)[1].record_count == 91);
  CHECK((*segs)[1].first_recv_ns == 150);
  // The tag was put before the split: it is in the first segment's last chunk.
  CHECK(read_marks(dir.path()) == std::vector<Mark>{kTag, kPause, kResume, kLate});
}

TEST_CASE("split() with nothing recorded since the last split keeps the segment") {
  TempDir dir;
  auto w = SegmentWriter::create(dir.path(), {});
  REQUIRE(w.ok());
  auto first = (*w)->split();  // no segment yet: records will go to segment 1
  REQUIRE(first.ok());
  CHECK(*first == 1);
  const TopicId t = *(*w)->add_topic({"a", "A", false, {}, {}});
  const WriterId id = *(*w)->add_writer({t, Guid{1}});
  REQUIRE((*w)->append(RecordMeta{t, id, 1, 5, 5, 0, false, {}}, storage_test::make_payload(1, 100))
              .ok());
  auto second = (*w)->split();
  REQUIRE(second.ok());
  CHECK(*second == 2);
  auto third = (*w)->split();  // segment 2 is not open yet: nothing to split
  REQUIRE(third.ok());
  CHECK(*third == 2);
  REQUIRE((*w)->close().ok());
  auto rec = Recording::open(dir.path());
  REQUIRE(rec.ok());
  auto segs = (*rec)->segments();
  REQUIRE(segs.ok());
  CHECK(segs->size() == 1);
}

TEST_CASE("An index without a marks table (before format 4) has no marks, and no error") {
  TempDir dir;
  write_recording(dir.path(), false);
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open((dir.path() + "/index.sqlite3").c_str(), &db) == SQLITE_OK);
  CHECK(sqlite3_exec(db, "DROP TABLE marks", nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(db);
  CHECK(read_marks(dir.path()).empty());
}

TEST_CASE("The mark decoder refuses a bad kind and every truncation") {
  Bytes raw;
  format::append_mark_entry(raw, kTag);
  format::Entry e;
  {
    format::EntryDecoder dec(raw);
    REQUIRE(*dec.next(e));
    CHECK(e.kind == format::EntryKind::kMark);
    CHECK(e.mark == kTag);
  }
  {
    const Mark step{MarkKind::kClockStep, 170, "wall_clock",
                    "+300.000 s; wall - reception +300.000 s"};
    Bytes one;
    format::append_mark_entry(one, step);
    format::EntryDecoder d(one);
    REQUIRE(*d.next(e));
    CHECK(e.mark == step);
  }
  {
    const Mark member{MarkKind::kSetMember, 1, "rig", "host cell-a, address 198.18.0.1"};
    Bytes one;
    format::append_mark_entry(one, member);
    format::EntryDecoder d(one);
    REQUIRE(*d.next(e));
    CHECK(e.mark == member);
  }
  raw[1] = std::byte{8};  // no such mark kind (7 is kClockOffset)
  format::EntryDecoder dec(raw);
  auto bad = dec.next(e);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message == "bad mark entry at entry offset " + std::to_string(raw.size()));
  Bytes whole;
  format::append_mark_entry(whole, kTag);
  for (size_t n = 1; n < whole.size(); ++n) {
    format::EntryDecoder d(ByteSpan(whole.data(), n));
    CHECK_FALSE(d.next(e).ok());
  }
}

TEST_CASE("on_segment_finished: each segment once, in order, complete, at split and at close") {
  TempDir dir;
  std::vector<std::pair<std::string, uint64_t>> finished;  // path, its size when called
  SegmentWriterOptions o;
  o.compression = Compression::kNone;
  o.on_segment_finished = [&](const std::string& path) {
    finished.emplace_back(path, std::filesystem::file_size(path));
  };
  auto w = SegmentWriter::create(dir.path(), o);
  REQUIRE(w.ok());
  const TopicId t = *(*w)->add_topic({"a", "A", false, {}, {}});
  const WriterId id = *(*w)->add_writer({t, Guid{1}});
  for (int i = 0; i < 30; ++i) {
    if (i == 10 || i == 20) REQUIRE((*w)->split().ok());
    RecordMeta m{t, id, i + 1, i, i, 0, false, {}};
    REQUIRE((*w)->append(m, storage_test::make_payload(static_cast<uint64_t>(i), 1000)).ok());
  }
  REQUIRE((*w)->close().ok());
  const std::string segs = dir.path() + "/segments/";
  REQUIRE(finished.size() == 3);
  for (size_t k = 0; k < 3; ++k) {
    INFO(finished[k].first);
    CHECK(finished[k].first == segs + "0000000" + std::to_string(k + 1) + ".seg");
    CHECK(finished[k].second == std::filesystem::file_size(finished[k].first));  // complete
  }
  auto rec = Recording::open(dir.path());
  REQUIRE(rec.ok());
  auto s = (*rec)->segments();
  REQUIRE(s.ok());
  REQUIRE(s->size() == 3);
  for (const auto& seg : *s) CHECK(seg.record_count == 10);
}
