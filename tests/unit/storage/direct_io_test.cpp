// Direct I/O in the segment writer: chunks of direct_io_min_bytes and more go out with O_DIRECT
// at offsets that are multiples of 4 KiB (the chunk before them padded with zeros to get
// there), smaller ones through the page cache without padding, and the recording reads back,
// verifies and reindexes the same either way. A format-1 recording (written before padding
// existed) still opens and verifies. Chunks of large records carry the checksum the appenders
// took as they copied (the recording verifies, chunk by chunk). Reading: a FileSource reads a
// range it is told will be needed into the page cache, and a cursor reads ahead of its chunks.
#include <sqlite3.h>
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <thread>

#include "storage/format.hpp"
#include "storage/io.hpp"
#include "test_util.hpp"

using namespace storage;
using storage_test::Rec;
using storage_test::TempDir;

namespace {

constexpr size_t kAlign = format::kDirectAlignment;

Bytes slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::vector<char> c((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Bytes b(c.size());
  if (!c.empty()) std::memcpy(b.data(), c.data(), c.size());
  return b;
}

struct ChunkAt {
  uint64_t offset;
  format::ChunkHeader h;
};

// The chunks of a segment file, walked by their headers (sizes and padding).
std::vector<ChunkAt> walk(const Bytes& seg) {
  std::vector<ChunkAt> out;
  uint64_t pos = format::kSegmentHeaderSize;
  while (pos + format::kChunkHeaderSize <= seg.size()) {
    auto h = format::decode_chunk_header(ByteSpan(seg).subspan(pos, format::kChunkHeaderSize));
    REQUIRE(h.ok());
    out.push_back({pos, *h});
    pos += format::chunk_span(*h);
  }
  CHECK(pos == seg.size());
  return out;
}

std::string segment_path(const std::string& dir) {
  return dir + "/segments/00000001.seg";
}

// Writes: a burst of big records (several 1-MiB chunks), a few small records flushed on their
// own (a small chunk), another burst; returns what was written.
std::vector<Rec> write_mixed(SegmentWriter& w, bool compressible) {
  const TopicId t = *w.add_topic({"dio", "D", false, {}, {}});
  const WriterId id = *w.add_writer({t, Guid{7}});
  std::vector<Rec> recs;
  int64_t seq = 1;
  auto put = [&](size_t size) {
    RecordMeta m{t, id, seq, 1000 + seq, 2000 + seq, 0, false, {}};
    recs.push_back({m, storage_test::make_payload(static_cast<uint64_t>(seq), size, compressible)});
    REQUIRE(w.append(m, recs.back().payload).ok());
    ++seq;
  };
  for (int i = 0; i < 70; ++i) put(40000 + static_cast<size_t>(i) * 13);  // ~2.8 MB
  REQUIRE(w.flush().ok());
  for (int i = 0; i < 3; ++i) put(100 + static_cast<size_t>(i));  // one small chunk
  REQUIRE(w.flush().ok());
  for (int i = 0; i < 60; ++i) put(50000 + static_cast<size_t>(i) * 7);  // ~3 MB
  return recs;
}

void check_reads_back(const std::string& dir, const std::vector<Rec>& recs) {
  auto rec = Recording::open(dir);
  REQUIRE(rec.ok());
  const auto got = storage_test::read_all(**rec);
  REQUIRE(got.size() == recs.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("record " << i);
    REQUIRE(storage_test::same_meta(got[i].meta, recs[i].meta));
    REQUIRE(got[i].payload == recs[i].payload);
  }
  auto v = (*rec)->verify();
  REQUIRE(v.ok());
  CHECK(v->problems == 0);
  CHECK(v->records == recs.size());
}

}  // namespace

TEST_CASE("Large chunks go out with O_DIRECT at 4-KiB offsets, small ones unpadded") {
  TempDir dir;
  SegmentWriterOptions o;
  o.chunk_max_bytes = 1 << 20;
  o.compression = Compression::kNone;
  o.direct_io_min_bytes = 256 << 10;
  auto w = SegmentWriter::create(dir.path(), o);
  REQUIRE(w.ok());
  const auto recs = write_mixed(**w, false);
  REQUIRE((*w)->close().ok());
  const WriterStats st = (*w)->stats();
  CHECK_THAT((*w)->io_description(), Catch::StartsWith("O_DIRECT for chunks of 262144 bytes"));

  const Bytes seg = slurp(segment_path(dir.path()));
  const auto chunks = walk(seg);
  REQUIRE(chunks.size() >= 8);
  uint64_t big = 0, aligned_big = 0, padding = 0;
  for (size_t i = 0; i < chunks.size(); ++i) {
    const auto& [offset, h] = chunks[i];
    INFO("chunk " << i << " at " << offset << ", " << h.stored_size << " bytes + " << h.padding);
    const uint64_t end = offset + format::chunk_span(h);
    padding += h.padding;
    // The padding is zeros.
    for (uint64_t k = end - h.padding; k < end; ++k) REQUIRE(seg[k] == std::byte{0});
    if (i == 0) {  // the definitions: padded so that the first data chunk may go direct
      CHECK(end % kAlign == 0);
    } else if (h.stored_size >= o.direct_io_min_bytes) {
      ++big;
      CHECK(end % kAlign == 0);  // the next chunk may go direct
      if (offset % kAlign == 0) ++aligned_big;
    } else {
      CHECK(h.padding == 0);  // small chunks take no room for alignment
    }
  }
  // Every big chunk but the one right after the small chunk starts aligned, and only those
  // were written with O_DIRECT.
  CHECK(big >= 5);
  CHECK(aligned_big == big - 1);
  CHECK(st.direct_chunks == aligned_big);
  CHECK(st.padding_bytes == padding);
  CHECK(st.file_bytes == seg.size());
  check_reads_back(dir.path(), recs);
}

TEST_CASE("With direct_io off every chunk goes through the page cache without padding") {
  TempDir dir;
  SegmentWriterOptions o;
  o.chunk_max_bytes = 1 << 20;
  o.direct_io = false;
  const bool compressible = GENERATE(false, true);
  o.compression = compressible ? Compression::kLz4 : Compression::kNone;
  auto w = SegmentWriter::create(dir.path(), o);
  REQUIRE(w.ok());
  const auto recs = write_mixed(**w, compressible);
  REQUIRE((*w)->close().ok());
  CHECK((*w)->io_description() == "page cache (direct I/O off)");
  CHECK((*w)->stats().direct_chunks == 0);
  CHECK((*w)->stats().padding_bytes == 0);
  for (const auto& c : walk(slurp(segment_path(dir.path())))) CHECK(c.h.padding == 0);
  check_reads_back(dir.path(), recs);
}

TEST_CASE("Compressed chunks big enough go out with O_DIRECT from their compression buffer") {
  TempDir dir;
  SegmentWriterOptions o;
  o.chunk_max_bytes = 4 << 20;  // pooled body 4 MiB - 4160 bytes: two huge pages per buffer
  o.direct_io_min_bytes = 64 << 10;
  auto w = SegmentWriter::create(dir.path(), o);
  REQUIRE(w.ok());
  const auto recs = write_mixed(**w, true);  // ~1/97 of the bytes random: compresses ~10x
  REQUIRE((*w)->close().ok());
  const auto chunks = walk(slurp(segment_path(dir.path())));
  uint64_t lz4_direct = 0;
  for (const auto& c : chunks)
    if (c.h.codec == format::Codec::kLz4 && c.h.stored_size >= o.direct_io_min_bytes &&
        c.offset % kAlign == 0)
      ++lz4_direct;
  CHECK(lz4_direct >= 1);
  CHECK((*w)->stats().direct_chunks >= lz4_direct);
  check_reads_back(dir.path(), recs);
}

TEST_CASE("Reindexing a recording with padded chunks gives the same index answers") {
  TempDir dir;
  SegmentWriterOptions o;
  o.chunk_max_bytes = 1 << 20;
  o.compression = Compression::kNone;
  auto w = SegmentWriter::create(dir.path(), o);
  REQUIRE(w.ok());
  const auto recs = write_mixed(**w, false);
  REQUIRE((*w)->close().ok());
  REQUIRE((*w)->stats().padding_bytes > 0);
  REQUIRE(std::filesystem::remove(dir.path() + "/index.sqlite3"));
  auto r = Recording::reindex(dir.path());
  REQUIRE(r.ok());
  CHECK(r->problems == 0);
  check_reads_back(dir.path(), recs);
}

TEST_CASE("A format-1 recording (no padding field) still opens, reads and verifies") {
  TempDir dir;
  SegmentWriterOptions o;
  o.chunk_max_bytes = 1 << 20;
  o.direct_io = false;  // no padding: the byte layout of version 1
  auto w = SegmentWriter::create(dir.path(), o);
  REQUIRE(w.ok());
  const auto recs = write_mixed(**w, false);
  REQUIRE((*w)->close().ok());
  // Make it what version 1 wrote: version 1 in the segment header (checksum redone) and in the
  // index.
  const std::string path = segment_path(dir.path());
  Bytes seg = slurp(path);
  uint8_t hb[format::kSegmentHeaderSize];
  std::memcpy(hb, seg.data(), sizeof hb);
  auto h = format::decode_segment_header(ByteSpan(seg).first(sizeof hb));
  REQUIRE(h.ok());
  REQUIRE(h->version == format::kFormatVersion);
  h->version = 1;
  format::encode_segment_header(*h, hb);
  std::memcpy(seg.data(), hb, sizeof hb);
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(seg.data()), static_cast<std::streamsize>(seg.size()));
  }
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open((dir.path() + "/index.sqlite3").c_str(), &db) == SQLITE_OK);
  REQUIRE(sqlite3_exec(db, "UPDATE meta SET value = '1' WHERE key = 'format_version'", nullptr,
                       nullptr, nullptr) == SQLITE_OK);
  CHECK(sqlite3_changes(db) == 1);
  sqlite3_close(db);
  check_reads_back(dir.path(), recs);
  // A version this build does not know is refused, with its number.
  h->version = format::kFormatVersion + 1;
  format::encode_segment_header(*h, hb);
  auto bad = format::decode_segment_header(ByteSpan(reinterpret_cast<std::byte*>(hb), sizeof hb));
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().code == ErrorCode::kUnsupported);
  CHECK(bad.error().message == "segment format version 6 not supported");
}

TEST_CASE("Chunks of large records carry the appenders' running CRC, and it verifies") {
  TempDir dir;
  SegmentWriterOptions o;
  o.chunk_max_bytes = 1 << 20;
  o.chunk_max_age = std::chrono::hours(1);  // chunks end only at the flushes below
  const bool lz4 = GENERATE(false, true);
  o.compression = lz4 ? Compression::kLz4 : Compression::kNone;
  auto w = SegmentWriter::create(dir.path(), o);
  REQUIRE(w.ok());
  const TopicId t = *(*w)->add_topic({"crc", "C", false, {}, {}});
  const WriterId id = *(*w)->add_writer({t, Guid{9}});
  std::vector<Rec> recs;
  int64_t seq = 1;
  auto put = [&](size_t size) {
    RecordMeta m{t, id, seq, 1000 + seq, 2000 + seq, 0, false, {}};
    recs.push_back({m, storage_test::make_payload(static_cast<uint64_t>(seq) * 31, size)});
    const auto& b = recs.back().payload;
    if (seq % 3 == 0 && size > 9000) {
      // In four parts, one empty, at odd offsets: the CRC is taken from each part's source.
      const ByteSpan parts[] = {ByteSpan(b.data(), 7), ByteSpan(b.data() + 7, 0),
                                ByteSpan(b.data() + 7, 9000),
                                ByteSpan(b.data() + 9007, size - 9007)};
      REQUIRE((*w)->append_parts(m, parts).ok());
    } else {
      REQUIRE((*w)->append(m, b).ok());
    }
    ++seq;
  };
  // Seven chunks, each written before the next one opens (flush), so which of them the
  // appenders checksum does not depend on the writer thread's timing. 10 records of
  // 30-33 KB (>= 24 KiB, incompressible) make about 316 KB, well under chunk_max_bytes.
  std::vector<bool> appender;
  uint64_t counted = 0;
  for (int g = 0; g < 7; ++g) {
    for (int i = 0; i < 10; ++i) put(g == 5 && i == 4 ? 100 : 30000 + static_cast<size_t>(i) * 331);
    if (g < 6)
      REQUIRE((*w)->flush().ok());
    else
      REQUIRE((*w)->close().ok());
    appender.push_back((*w)->stats().appender_crc_chunks > counted);
    counted = (*w)->stats().appender_crc_chunks;
  }
  const WriterStats st = (*w)->stats();
  CHECK(st.chunks_written == 8);  // the segment opens with a chunk repeating the definitions
  // Chunk 0 holds the definitions and chunk 5 a 100-byte record: the writer thread checksums
  // those. Without compression every other chunk comes with the appenders' CRC. With LZ4 a
  // chunk opens with the running CRC only when the last chunk written left LZ4 backing off
  // (a failed attempt skips 1, then 2, then 4 chunks): chunk 0 fails (skip 1: 1 raw),
  // chunk 2 is tried and fails (skip 2: 3 and 4 raw), chunk 5 fails again (skip 4: 6 raw).
  const std::vector<bool> want =
      lz4 ? std::vector<bool>{false, true, false, true, true, false, true}
          : std::vector<bool>{false, true, true, true, true, false, true};
  CHECK(appender == want);
  check_reads_back(dir.path(), recs);
}

namespace {

// Pages of [offset, offset + length) of the file in the page cache (mincore over a mapping).
size_t resident_pages(const std::string& path, uint64_t offset, uint64_t length) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  void* m = ::mmap(nullptr, offset + length, PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  REQUIRE(m != MAP_FAILED);
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> in((offset + length + page - 1) / page);
  REQUIRE(::mincore(m, offset + length, in.data()) == 0);
  ::munmap(m, offset + length);
  size_t n = 0;
  for (size_t i = offset / page; i < in.size(); ++i) n += in[i] & 1;
  return n;
}

// Writes the file's dirty pages and drops it from the page cache.
void drop_from_cache(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  REQUIRE(::fdatasync(fd) == 0);
  REQUIRE(::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0);
  ::close(fd);
}

// Polls `pred` until it holds or 20 s passed: the kernel reads advised ranges in the background,
// which takes seconds when the other core runs a heavy test at the same time.
template <class Pred>
bool within_20s(Pred pred) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

}  // namespace

TEST_CASE("FileSource::will_need reads the range it is given into the page cache") {
  TempDir dir;
  const std::string path = dir.sub("f.bin");
  constexpr uint64_t kMiB = 1 << 20;
  {
    const Bytes b = storage_test::make_payload(3, 48 * kMiB);
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  }
  drop_from_cache(path);
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t range_pages = 16 * kMiB / page;
  INFO("the file's pages must leave the page cache first (a disk, not tmpfs)");
  REQUIRE(resident_pages(path, 0, 48 * kMiB) < range_pages / 8);
  auto src = FileSource::open(path);
  REQUIRE(src.ok());
  (*src)->will_need(16 * kMiB, 16 * kMiB);
  CHECK(within_20s([&] { return resident_pages(path, 16 * kMiB, 16 * kMiB) == range_pages; }));
  CHECK(resident_pages(path, 0, 8 * kMiB) < range_pages / 8);  // before the range: not read
}

TEST_CASE("A cursor reads ahead of the chunk it loads: the next 32 MiB of the segment") {
  TempDir dir;
  SegmentWriterOptions o;
  o.chunk_max_bytes = 4 << 20;
  o.compression = Compression::kNone;
  {
    auto w = SegmentWriter::create(dir.path(), o);
    REQUIRE(w.ok());
    const TopicId t = *(*w)->add_topic({"ra", "R", false, {}, {}});
    const WriterId id = *(*w)->add_writer({t, Guid{9}});
    for (int64_t seq = 1; seq <= 800; ++seq) {  // 800 x 60000 B: 48 MB, a dozen chunks
      RecordMeta m{t, id, seq, 1000 + seq, 2000 + seq, 0, false, {}};
      REQUIRE((*w)->append(m, storage_test::make_payload(static_cast<uint64_t>(seq), 60000)).ok());
    }
    REQUIRE((*w)->close().ok());
  }
  const std::string seg = segment_path(dir.path());
  drop_from_cache(seg);
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const uint64_t window = 24 << 20;  // well past the first chunk, inside the 32-MiB read-ahead
  INFO("the segment's pages must leave the page cache first (a disk, not tmpfs)");
  REQUIRE(resident_pages(seg, 0, window) < window / page / 8);
  auto rec = Recording::open(dir.path());
  REQUIRE(rec.ok());
  auto c = (*rec)->query({});
  REQUIRE(c.ok());
  REQUIRE(c->next() != nullptr);  // one record: the first chunk is loaded
  // From the first chunk on (the segment header before it is not read here).
  const uint64_t from = 1 << 20;
  const size_t want = (window - from) / page;
  within_20s([&] { return resident_pages(seg, from, window - from) == want; });
  CHECK(resident_pages(seg, from, window - from) == want);
  // Reading on to the end returns every record once, in order.
  int64_t expect = 2;
  while (const RecordView* v = c->next()) REQUIRE(v->meta.sequence == expect++);
  CHECK(expect == 801);
}
