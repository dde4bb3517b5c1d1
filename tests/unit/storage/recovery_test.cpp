// Torn tails, corrupt chunks and recovery: the reader reports the bad chunk (topics, time range)
// and returns everything else; read-only opens never modify files; recover() cuts torn tails.
#include <sys/wait.h>

#include <catch2/catch.hpp>

#include <fstream>
#include <map>

#include "storage/format.hpp"
#include "test_util.hpp"

using namespace storage;
using storage_test::Rec;
using storage_test::TempDir;
namespace fs = std::filesystem;

namespace {

constexpr int kTopics = 3;

std::vector<Rec> make_records(size_t n) {
  std::vector<Rec> out;
  for (size_t i = 0; i < n; ++i) {
    RecordMeta m;
    m.topic = 1 + static_cast<TopicId>(i % kTopics);
    m.writer = m.topic;
    m.sequence = static_cast<int64_t>(i / kTopics + 1);
    m.reception_ns = 1'000'000 + static_cast<int64_t>(i) * 1000;
    m.source_ns = m.reception_ns - 7;
    out.push_back({m, storage_test::make_payload(i, 200 + i % 700, i % 3 == 0)});
  }
  return out;
}

// Writes `recs` into dir; when `clean` is false the writer flushes and the process ends without
// close() (a child process exits), leaving an unclean recording whose data is all on disk.
void write_recording(const std::string& dir, const std::vector<Rec>& recs, bool clean) {
  const auto body = [&] {
    SegmentWriterOptions o;
    o.chunk_max_bytes = 16 << 10;
    o.segment_max_bytes = 1 << 20;
    o.fsync = FsyncPolicy::kNone;
    auto w = SegmentWriter::create(dir, o);
    if (!w) return false;
    for (int t = 1; t <= kTopics; ++t) {
      if (!(*w)->add_topic({"t" + std::to_string(t), "T", false, {}, {}})) return false;
      if (!(*w)->add_writer({static_cast<TopicId>(t), Guid{static_cast<uint8_t>(t)}})) return false;
    }
    for (auto& r : recs)
      if (!(*w)->append(r.meta, r.payload)) return false;
    if (clean) return (*w)->close().ok();
    const bool ok = (*w)->flush().ok();
    (void)w->release();  // never closed: the process ends like a killed one
    return ok;
  };
  if (clean) {
    REQUIRE(body());
    return;
  }
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) _exit(body() ? 0 : 1);  // no close(): the recording stays unclean
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
}

struct ChunkPos {
  uint64_t offset, end;
  format::ChunkHeader h;
};

// Walks the chunk headers of a segment file.
std::vector<ChunkPos> chunks_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::vector<char> chars((std::istreambuf_iterator<char>(in)),
                                std::istreambuf_iterator<char>());
  Bytes data(chars.size());
  if (!chars.empty()) std::memcpy(data.data(), chars.data(), chars.size());
  std::vector<ChunkPos> out;
  uint64_t pos = format::kSegmentHeaderSize;
  while (pos + format::kChunkHeaderSize <= data.size()) {
    auto h = format::decode_chunk_header(ByteSpan(data).subspan(pos, format::kChunkHeaderSize));
    if (!h) break;
    const uint64_t end = pos + format::chunk_span(*h);
    if (end > data.size()) break;
    out.push_back({pos, end, *h});
    pos = end;
  }
  return out;
}

std::string last_segment(const std::string& dir) {
  std::string last;
  for (auto& e : fs::directory_iterator(dir + "/segments"))
    if (e.path().string() > last) last = e.path().string();
  return last;
}

uint64_t records_in_segments_before(const std::string& dir, const std::string& seg) {
  uint64_t n = 0;
  for (auto& e : fs::directory_iterator(dir + "/segments"))
    if (e.path().string() < seg)
      for (auto& c : chunks_of(e.path().string())) n += c.h.record_count;
  return n;
}

void flip_byte(const std::string& path, uint64_t offset) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(static_cast<std::streamoff>(offset));
  char c;
  f.read(&c, 1);
  c = static_cast<char>(c ^ 0x5a);
  f.seekp(static_cast<std::streamoff>(offset));
  f.write(&c, 1);
}

void check_prefix(const std::vector<Rec>& got, const std::vector<Rec>& recs, size_t n) {
  REQUIRE(got.size() == n);
  for (size_t i = 0; i < n; ++i) {
    INFO("record " << i);
    REQUIRE(storage_test::same_meta(got[i].meta, recs[i].meta));
    REQUIRE(got[i].payload == recs[i].payload);
  }
}

}  // namespace

TEST_CASE("Truncating the last segment at random offsets: everything before the cut is returned") {
  TempDir tmp;
  const std::string pristine = tmp.sub("pristine");
  const auto recs = make_records(6000);
  write_recording(pristine, recs, false);
  const std::string seg_rel = last_segment(pristine).substr(pristine.size());
  const auto chunks = chunks_of(pristine + seg_rel);
  REQUIRE(chunks.size() > 10);
  const uint64_t before = records_in_segments_before(pristine, pristine + seg_rel);
  const uint64_t full = fs::file_size(pristine + seg_rel);
  REQUIRE(chunks.back().end == full);

  uint64_t s = 99;
  for (int round = 0; round < 25; ++round) {
    const std::string work = tmp.sub("work" + std::to_string(round));
    fs::copy(pristine, work, fs::copy_options::recursive);
    const std::string seg = work + seg_rel;
    // Cut anywhere from inside the segment header to the last byte.
    const uint64_t cut = round == 0 ? full - 1 : 20 + storage_test::splitmix(s) % (full - 20);
    fs::resize_file(seg, cut);
    uint64_t whole = 0;  // records in chunks that end before the cut
    const ChunkPos* torn = nullptr;
    for (auto& c : chunks) {
      if (c.end <= cut)
        whole += c.h.record_count;
      else if (c.offset < cut && !torn)
        torn = &c;
    }
    if (cut < format::kSegmentHeaderSize) whole = 0;
    INFO("round " << round << " cut at " << cut << " of " << full);

    std::vector<Problem> problems;
    RecordingOptions opt;
    opt.on_problem = [&](const Problem& p) { problems.push_back(p); };
    {
      auto rec = Recording::open(work, opt);
      REQUIRE(rec.ok());
      CHECK((*rec)->close_state() == CloseState::kUnclean);
      uint64_t read_problems = 0;
      check_prefix(storage_test::read_all(**rec, {}, &read_problems), recs, before + whole);
      CHECK(read_problems == 0);
      CHECK(fs::file_size(seg) == cut);  // read-only open left the file alone
      if (torn && cut >= format::kSegmentHeaderSize) {
        // The torn chunk is reported with its topics and time range (from the index).
        bool found = false;
        for (auto& p : problems)
          if (p.kind == Problem::Kind::kTornTail && p.chunk_sequence == torn->h.sequence) {
            found = true;
            CHECK(p.offset == torn->offset);
            CHECK(p.first_recv_ns == torn->h.first_recv_ns);
            CHECK(p.last_recv_ns == torn->h.last_recv_ns);
            CHECK(p.topics.size() == kTopics);
          }
        CHECK(found);
      }
    }
    // recover() cuts the file at the last complete chunk and makes the recording clean.
    problems.clear();
    auto rep = Recording::recover(work, [&](const Problem& p) { problems.push_back(p); });
    REQUIRE(rep.ok());
    if (cut >= format::kSegmentHeaderSize) {
      uint64_t good_end = format::kSegmentHeaderSize;
      for (auto& c : chunks)
        if (c.end <= cut) good_end = c.end;
      CHECK(fs::file_size(seg) == good_end);
      // What was cut is kept, byte for byte, in DIR/recovered/.
      if (good_end < cut) {
        const std::string saved =
            work + "/recovered" + seg.substr(seg.rfind('/')) + ".from-" + std::to_string(good_end);
        REQUIRE(rep->saved_files == std::vector<std::string>{saved});
        CHECK(fs::file_size(saved) == cut - good_end);
        CHECK(rep->bytes_cut == cut - good_end);
      }
      // Every chunk past the cut is indexed (the writer flushed): their rows give the count.
      uint64_t lost = 0;
      for (auto& c : chunks)
        if (c.end > cut) lost += c.h.record_count;
      CHECK(rep->records_cut == lost);
      if (good_end == cut) CHECK(rep->saved_files.empty());
    } else {
      // A segment without a whole header is moved aside, not deleted.
      REQUIRE(rep->saved_files.size() == 1);
      CHECK(fs::file_size(rep->saved_files[0]) == cut);
      CHECK_FALSE(fs::exists(seg));
    }
    CHECK(rep->state == CloseState::kUnclean);
    // Idempotent: a second recover() finds a recovered recording and does nothing.
    auto again = Recording::recover(work);
    REQUIRE(again.ok());
    CHECK(again->state == CloseState::kRecovered);
    CHECK(again->bytes_cut == 0);
    CHECK(again->saved_files.empty());
    auto rec = Recording::open(work);
    REQUIRE(rec.ok());
    CHECK((*rec)->close_state() == CloseState::kRecovered);
    check_prefix(storage_test::read_all(**rec), recs, before + whole);
    auto v = (*rec)->verify();
    REQUIRE(v.ok());
    CHECK(v->ok());
    fs::remove_all(work);
  }
}

TEST_CASE("Flipping bytes in a middle chunk: the reader reports it and returns everything else") {
  TempDir tmp;
  const auto recs = make_records(3000);
  const std::string dir = tmp.sub("rec");
  write_recording(dir, recs, true);
  const std::string seg = last_segment(dir);
  const auto chunks = chunks_of(seg);
  REQUIRE(chunks.size() > 8);
  const ChunkPos bad = chunks[chunks.size() / 2];
  const bool in_header = GENERATE(false, true);
  flip_byte(seg, in_header ? bad.offset + 30
                           : bad.offset + format::kChunkHeaderSize + bad.h.stored_size / 2);

  // Model: every record except those of the bad chunk (identified by its time range).
  std::vector<Rec> want;
  for (auto& r : recs)
    if (r.meta.reception_ns < bad.h.first_recv_ns || r.meta.reception_ns > bad.h.last_recv_ns)
      want.push_back(r);
  REQUIRE(want.size() == recs.size() - bad.h.record_count);

  std::vector<Problem> problems;
  RecordingOptions opt;
  opt.on_problem = [&](const Problem& p) { problems.push_back(p); };
  auto rec = Recording::open(dir, opt);
  REQUIRE(rec.ok());
  uint64_t n_problems = 0;
  auto got = storage_test::read_all(**rec, {}, &n_problems);
  CHECK(n_problems == 1);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].kind == Problem::Kind::kCorruptChunk);
  CHECK(problems[0].chunk_sequence == bad.h.sequence);
  CHECK(problems[0].offset == bad.offset);
  CHECK(problems[0].first_recv_ns == bad.h.first_recv_ns);
  CHECK(problems[0].last_recv_ns == bad.h.last_recv_ns);
  CHECK(problems[0].records == bad.h.record_count);
  CHECK(problems[0].topics == std::vector<TopicId>{1, 2, 3});
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    REQUIRE(storage_test::same_meta(got[i].meta, want[i].meta));
    REQUIRE(got[i].payload == want[i].payload);
  }
  // A query for one topic only skips the same chunk.
  Query q;
  q.topic_ids = {2};
  problems.clear();
  auto topic2 = storage_test::read_all(**rec, q);
  CHECK(problems.size() == 1);
  CHECK(topic2.size() ==
        static_cast<size_t>(std::count_if(want.begin(), want.end(),
                                          [](const Rec& r) { return r.meta.topic == 2; })));

  // verify() names the same chunk.
  std::vector<Problem> vp;
  auto v = (*rec)->verify([&](const Problem& p) { vp.push_back(p); });
  REQUIRE(v.ok());
  CHECK(v->chunks_bad == 1);
  CHECK(v->records == want.size());
  REQUIRE(vp.size() == 1);
  CHECK(vp[0].chunk_sequence == bad.h.sequence);
  CHECK(vp[0].kind == Problem::Kind::kCorruptChunk);

  // reindex leaves the corrupt chunk out and still serves everything else.
  rec->reset();
  std::vector<Problem> rp;
  auto r = Recording::reindex(dir, [&](const Problem& p) { rp.push_back(p); });
  REQUIRE(r.ok());
  CHECK(r->problems == 1);
  REQUIRE(rp.size() == 1);
  CHECK(rp[0].offset == bad.offset);
  auto again = Recording::open(dir);
  REQUIRE(again.ok());
  auto got2 = storage_test::read_all(**again);
  REQUIRE(got2.size() == want.size());
  for (size_t i = 0; i < got2.size(); ++i)
    REQUIRE(storage_test::same_meta(got2[i].meta, want[i].meta));
}

TEST_CASE("Recovery adds chunks that were written but not indexed, and drops stale rows") {
  TempDir tmp;
  const auto recs = make_records(2000);
  const std::string dir = tmp.sub("rec");
  write_recording(dir, recs, false);
  // Simulate a crash between the segment write and the index commit: an index without the
  // newest chunks.
  const std::string seg = last_segment(dir);
  const auto chunks = chunks_of(seg);
  REQUIRE(chunks.size() > 4);
  // Rebuild an index that lacks the last 3 chunks by reindexing a copy truncated before them.
  const std::string cut = tmp.sub("cut");
  fs::copy(dir, cut, fs::copy_options::recursive);
  fs::resize_file(cut + seg.substr(dir.size()), chunks[chunks.size() - 3].offset);
  fs::remove(cut + "/index.sqlite3");
  REQUIRE(Recording::reindex(cut).ok());
  fs::remove(dir + "/index.sqlite3-wal");  // the crashed writer's WAL belongs to the old index
  fs::remove(dir + "/index.sqlite3-shm");
  fs::copy_file(cut + "/index.sqlite3", dir + "/index.sqlite3",
                fs::copy_options::overwrite_existing);
  // The copied index says "clean": mark it unclean as the writer would have left it.
  {
    // Append a few garbage bytes too: a torn chunk after the unindexed ones.
    std::ofstream out(seg, std::ios::binary | std::ios::app);
    out << "PSCKgarbage";
  }
  // (recover() on the index as it is - "recovered", stale, with a torn tail - repairs both;
  // the replay damage tests cover that.)
  // Force the unclean path the way a crashed writer leaves it.
  {
    auto idx_path = dir + "/index.sqlite3";
    REQUIRE(std::system(("sqlite3 " + idx_path +
                         " \"UPDATE meta SET value='0' WHERE key='clean'; "
                         "UPDATE segments SET closed=0;\"")
                            .c_str()) == 0);
  }
  auto ro = Recording::open(dir);
  REQUIRE(ro.ok());
  CHECK((*ro)->recovery().chunks_added == 3);
  CHECK((*ro)->recovery().bytes_cut == 11);
  check_prefix(storage_test::read_all(**ro), recs, recs.size());
  ro->reset();
  auto rep2 = Recording::recover(dir);
  REQUIRE(rep2.ok());
  CHECK(rep2->chunks_added == 3);
  CHECK(fs::file_size(seg) == chunks.back().end);
  auto rec = Recording::open(dir);
  REQUIRE(rec.ok());
  CHECK((*rec)->close_state() == CloseState::kRecovered);
  check_prefix(storage_test::read_all(**rec), recs, recs.size());
  CHECK((*rec)->verify()->ok());
}
