// SegmentWriter implementation. OVERVIEW
//
// Threads and ownership:
// - Caller threads (any number) run add_topic/add_writer/add_gap/append/poll/flush/close. They
//   hold `mu` while touching the open chunk (`open`), the chunk queue, the buffer pool and the
//   per-writer sequence state. Appending is a memcpy of the encoded record into `open`; no
//   allocation once the pool has warmed up. Records of kRunningCrcFrom and more also go into
//   the chunk's running CRC-32C while they are in the cache (when the chunk will likely be
//   stored raw), which the writer thread then uses instead of reading the chunk back.
// - One writer thread (`run`) owns the segment file, the index, the compression buffer and the
//   segment list. It takes closed chunks from `queue` (under `mu`), then without the lock
//   compresses, checksums, writes, syncs and indexes them (one SQLite transaction per batch),
//   applies retention, and hands the buffers back to the pool (under `mu`).
// - Direct I/O (opt.direct_io): chunk buffers (and the compression buffer) are huge-page
//   aligned blocks with the 64-byte chunk header's room before the body, so a chunk of
//   direct_io_min_bytes or more leaves as one O_DIRECT pwrite of header, body and zero padding
//   up to the next 4-KiB boundary, straight from the buffer the records were appended to. Such
//   a write needs a 4-KiB-aligned file offset: the first chunk of a segment (the definitions)
//   and every large chunk written through the page cache are padded to keep the file end
//   aligned; small chunks are not (no padding for low-rate recordings), and the large chunk
//   after them goes through the page cache, padded. (io_uring with up to 8 writes in flight was
//   measured against this and gained nothing here: storage_bench and the three-host recorder
//   points alike.)
// - With FsyncPolicy::kChunk a second thread (`sync_loop`) runs the fdatasync of what the writer
//   thread has written, while the writer thread goes on writing the next chunks: one
//   fdatasync in flight at a time. The rows of the chunks a sync covers wait in `sync_rows`
//   (writer thread only) and are indexed when it has ended, so the index still never points
//   at data that is not on disk. The writer thread waits for that sync before it closes or
//   rolls the segment, and before it answers flush().
// - A ChunkBuf is owned by the pool (free), by the appenders (`open`), or by the writer thread
//   (after it leaves `queue`), never by two at once.
// - Errors of the writer thread are stored in `failure` (sticky) and reported by every later call.
// - The recording's WriterLock (DIR/writer.lock) is taken in create() before the index exists and
//   released at the very end of close(), so recover() and reindex() refuse the recording while it
//   is written and readers can tell it is live.
// - Disk guard (opt.min_free_bytes): the writer thread measures the free space of the recording's
//   filesystem when it starts, right after each segment roll and every disk_check_interval
//   (guard_check). kStop sets `failure` to kLowSpace with `stopping`: appenders are refused from
//   then on, but the writer thread still writes and indexes every chunk accepted before, and
//   close() finishes the recording cleanly. kRotate removes the oldest segments (index rows in
//   a transaction of their own, then the file) until free space is back at the limit.
#include "storage/segment_writer.hpp"

#include <lz4.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <mutex>
#include <random>
#include <thread>

#include "aligned_buffer.hpp"
#include "index.hpp"
#include "segment_file.hpp"
#include "storage/format.hpp"
#include "storage/io.hpp"
#include "storage/writer_lock.hpp"

namespace storage {
namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kGapEntryMax = 1 + 5 + 10 + 10;
constexpr int64_t kNoSeq = INT64_MIN;

int64_t wall_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string hex(const uint8_t* p, size_t n) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    s += d[p[i] >> 4];
    s += d[p[i] & 15];
  }
  return s;
}

// "52.3 MB" (decimal megabytes, as the recorder's log writes them).
std::string mb(uint64_t bytes) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f MB", static_cast<double>(bytes) / 1e6);
  return b;
}

// "00000003.seg"
std::string segment_name(uint64_t number) {
  char b[32];
  std::snprintf(b, sizeof b, "%08llu.seg", static_cast<unsigned long long>(number));
  return b;
}

// The disk guard's default measure: what statvfs calls available to unprivileged users (df's
// "Avail"), so the limit also keeps the filesystem's reserve untouched.
Result<uint64_t> statvfs_free(const std::string& dir) {
  struct statvfs v {};
  if (::statvfs(dir.c_str(), &v) != 0) return errno_error(errno, "statvfs " + dir);
  return static_cast<uint64_t>(v.f_bavail) * static_cast<uint64_t>(v.f_frsize);
}

Status mkdirs(const std::string& path) {
  std::string cur;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    cur = path.substr(0, pos);
    if (cur.empty()) continue;
    if (::mkdir(cur.c_str(), 0755) != 0 && errno != EEXIST)
      return errno_error(errno, "mkdir " + cur);
  }
  return Status{};
}

// One chunk buffer with the statistics gathered while it was open. The entries start
// kChunkHeaderSize into an aligned block, so that header, body and padding leave in one O_DIRECT
// write from this memory.
struct ChunkBuf {
  detail::AlignedBuffer block;
  uint8_t* data = nullptr;  // the body: block + kChunkHeaderSize
  size_t cap = 0;
  size_t size = 0;
  size_t prefetched = 0;  // the body below this has been prefetched for writing
  bool pooled = true;     // false: dedicated buffer of an oversized record, freed after writing
  uint32_t records = 0;
  uint32_t entries = 0;
  uint64_t payload_bytes = 0;
  int64_t first_recv = 0, last_recv = 0, min_seq = 0, max_seq = 0;
  bool sorted = true;
  // While crc_running, crc is the CRC-32C of data[0, size), taken by the appenders while each
  // record was still in the cache (see kRunningCrcFrom).
  bool crc_running = false;
  uint32_t crc = 0;
  format::DeltaState delta;
  Clock::time_point opened;
  detail::ChunkRow row;  // topics/writers filled at close; gaps and definitions while open

  void reset() {
    size = records = entries = 0;
    prefetched = 0;
    payload_bytes = 0;
    first_recv = last_recv = min_seq = max_seq = 0;
    sorted = true;
    crc_running = false;
    crc = 0;
    delta = {};
    row.topics.clear();
    row.writers.clear();
    row.gaps.clear();
    row.topic_defs.clear();
    row.writer_defs.clear();
    row.type_defs.clear();
    row.marks.clear();
  }
};

// A block for `body_cap` bytes of chunk body with the header's room before it and the padding's
// after it; null when out of memory.
bool allocate_chunk(ChunkBuf& b, size_t body_cap) {
  b.block = detail::AlignedBuffer::allocate(format::kChunkHeaderSize + body_cap +
                                            format::kDirectAlignment);
  if (!b.block) return false;
  b.data = reinterpret_cast<uint8_t*>(b.block.get()) + format::kChunkHeaderSize;
  b.cap = body_cap;
  return true;
}

// Body capacity of a pooled chunk buffer: chunk_max_bytes, or a little less when the header's
// and the padding's room would otherwise take the block past the huge pages chunk_max_bytes
// fills (4 MiB chunks: 4 MiB - 4160 bytes of body in two huge pages, not three).
size_t pooled_body_cap(size_t chunk_max) {
  const size_t room = format::kChunkHeaderSize + format::kDirectAlignment;
  using detail::AlignedBuffer;
  if (chunk_max >= AlignedBuffer::kHugePage &&
      AlignedBuffer::usable(chunk_max + room) > AlignedBuffer::usable(chunk_max))
    return AlignedBuffer::usable(chunk_max) - room;
  return chunk_max;
}

uint64_t align_up(uint64_t v) {
  const uint64_t a = format::kDirectAlignment;
  return (v + a - 1) / a * a;
}

// Asks for the chunk's next kPrefetchAhead bytes in the cache, for writing, once each: records
// are copied into memory that is not in the cache, and the unlock after each append waits for
// those stores (11 % of the recorder at 1024 B in perf record, in pthread_mutex_unlock). In a
// single-threaded test program, 1-KiB records into 4-MiB huge-page buffers under a mutex took
// 92 ns each with this against 124 without; in the recorder's profile the unlock's share did not
// visibly change.
constexpr size_t kPrefetchAhead = 4096;
constexpr size_t kCacheLine = 64;
inline void prefetch_ahead(ChunkBuf& c) {
  const size_t until = std::min(c.cap, c.size + kPrefetchAhead);
  for (size_t o = std::max(c.prefetched, c.size); o < until; o += kCacheLine)
    __builtin_prefetch(c.data + o, 1, 3);
  c.prefetched = std::max(c.prefetched, until);
}

// From this payload size on, an appender adds the record to its chunk's running CRC-32C while the
// bytes are still in the cache (three lanes of 8 KiB at once, format.cpp), and the writer thread
// does not read a chunk stored raw back from memory for its checksum: at 63000-B random samples
// that read was the writer thread's only work beside the write itself, in series with it.
// Below it a single lane (bound by the instruction's latency) would cost more than the writer's
// three lanes over memory, so the first smaller record ends the chunk's running CRC.
constexpr size_t kRunningCrcFrom = 24 * 1024;

struct SegState {
  uint64_t number = 0;
  uint64_t size = 0;
  int64_t last_recv = 0;  // newest reception time in the segment (0 if none)
};

}  // namespace

struct SegmentWriter::Impl {
  std::string dir;
  SegmentWriterOptions opt;
  std::array<uint8_t, 16> recording_id{};
  // DIR/writer.lock, held from create() to the end of close(): the recording is live.
  WriterLock lock;

  // ---- guarded by mu ----
  mutable std::mutex mu;
  std::condition_variable work_cv;   // writer thread waits for chunks / stop / flush
  std::condition_variable space_cv;  // appenders wait for buffers; flushers wait for progress
  ChunkBuf* open = nullptr;
  std::vector<ChunkBuf*> queue;
  std::vector<std::unique_ptr<ChunkBuf>> all;  // every pooled buffer (owner of memory)
  std::vector<ChunkBuf*> free_list;
  uint64_t in_use_cap = 0;  // capacity of buffers open, queued or being written
  uint64_t closed_chunks = 0, done_chunks = 0;
  uint64_t sync_req_gen = 0;   // bumped by flush(): "fdatasync everything written so far"
  uint64_t sync_done_gen = 0;  // highest generation the writer thread has honoured
  uint64_t split_req_gen = 0;  // bumped by split(): "end the segment after what is queued"
  uint64_t split_done_gen = 0;
  uint64_t split_next = 0;  // after a split: the number of the segment records go to next
  bool stop = false;
  bool closed = false;
  Status failure;
  // `failure` is the disk guard's kLowSpace stop: the writer thread still writes out what was
  // accepted before it, and close() finishes the recording cleanly.
  bool stopping = false;
  // Definitions: by id (index 0 unused), and encoded for repeating at each segment start.
  std::vector<TopicDef> topics{TopicDef{}};
  std::vector<WriterDef> writers{WriterDef{}};
  std::vector<TypeDef> types;  // the latest of each name and source
  Bytes defs_blob;
  uint32_t defs_count = 0;
  // Per open chunk: slot of each topic/writer in open->row.topics/writers, -1 when untouched.
  std::vector<int32_t> topic_slot{-1};
  std::vector<int32_t> writer_slot{-1};
  std::vector<int64_t> last_seq{kNoSeq};  // per writer, for gap detection
  WriterStats stats;
  std::string io_note;  // io_description()
  // Written by the writer thread, read by appenders when they open a chunk: whether the next
  // chunks are expected to be stored raw (compression off, or LZ4 backing off), so that their
  // running CRC will be used.
  std::atomic<bool> raw_expected{false};

  // ---- writer thread only ----
  std::unique_ptr<detail::Index> index;
  std::unique_ptr<FileSink> seg;
  Clock::time_point seg_opened;
  std::deque<SegState> segs;
  uint64_t next_chunk_seq = 1;
  // LZ4 output, laid out as a chunk buffer (header room, body, padding room) so that a
  // compressed chunk can go out with O_DIRECT too.
  detail::AlignedBuffer cbuf;
  // Compression backoff: after a chunk that LZ4 could not shrink enough, the next
  // lz4_skip chunks are stored raw without trying (1, 2, 4 ... 64 chunks; reset on success).
  uint32_t lz4_skip = 0;
  uint32_t lz4_backoff = 0;
  bool unsynced = false;
  uint64_t dropped_to = 0;  // the segment's bytes below this were synced and dropped from cache
  // Background fdatasync (kChunk). Writer thread only: sync_busy, sync_rows, unsynced_rows,
  // sync_end. Under mu: sync_sink (a request), sync_finished and sync_status (its result).
  std::thread syncer;
  std::condition_variable syncer_cv;
  FileSink* sync_sink = nullptr;
  bool syncer_stop = false;
  bool sync_finished = false;
  Status sync_status;
  bool sync_busy = false;
  uint64_t sync_end = 0;  // segment size when the running sync began
  std::vector<detail::ChunkRow> unsynced_rows, sync_rows;
  Clock::time_point last_sync = Clock::now();
  // Disk guard: on while min_free_bytes is set and it has not stopped the recording.
  bool guard_active = false;
  bool guard_refused = false;  // kRefused reported; again only after free space recovered
  Clock::time_point next_guard;
  std::thread thread;

  // ---------------- caller side (mu held) ----------------

  void close_open_locked() {
    ChunkBuf* c = open;
    if (!c) return;
    open = nullptr;
    if (c->entries == 0) {  // nothing in it: straight back to the pool
      release_locked(c);
      return;
    }
    for (auto& t : c->row.topics) topic_slot[t.topic] = -1;
    for (auto& w : c->row.writers) writer_slot[w.writer] = -1;
    queue.push_back(c);
    ++closed_chunks;
    work_cv.notify_one();
  }

  void release_locked(ChunkBuf* c) {
    in_use_cap -= c->cap;
    stats.queued_bytes -= c->size;
    if (c->pooled) {
      c->reset();
      free_list.push_back(c);
    } else {
      auto it = std::find_if(all.begin(), all.end(), [c](auto& p) { return p.get() == c; });
      if (it != all.end()) all.erase(it);
    }
  }

  // Makes `open` a buffer with room for `need` more bytes.
  Status ensure_room(size_t need, bool block, std::unique_lock<std::mutex>& lk) {
    if (open && open->size + need <= open->cap) return Status{};
    close_open_locked();
    const size_t chunk_cap = pooled_body_cap(opt.chunk_max_bytes);
    for (;;) {
      if (!failure.ok()) return failure;
      if (closed) return Error{ErrorCode::kClosed, "writer closed"};
      ChunkBuf* c = nullptr;
      if (need <= chunk_cap) {
        if (!free_list.empty() && in_use_cap + chunk_cap <= opt.queue_max_bytes) {
          c = free_list.back();
          free_list.pop_back();
        } else if (in_use_cap + chunk_cap <= opt.queue_max_bytes || in_use_cap == 0) {
          auto b = std::make_unique<ChunkBuf>();
          if (!allocate_chunk(*b, chunk_cap))
            return Error{ErrorCode::kNoSpace, "out of memory for a chunk buffer"};
          c = b.get();
          all.push_back(std::move(b));
        }
      } else if (in_use_cap + need <= opt.queue_max_bytes || in_use_cap == 0) {
        // Dedicated buffer for an oversized record; drop idle pooled buffers to stay in budget.
        while (!free_list.empty() && (all.size() * chunk_cap + need > opt.queue_max_bytes)) {
          ChunkBuf* f = free_list.back();
          free_list.pop_back();
          auto it = std::find_if(all.begin(), all.end(), [f](auto& p) { return p.get() == f; });
          all.erase(it);
        }
        auto b = std::make_unique<ChunkBuf>();
        if (!allocate_chunk(*b, need))
          return Error{ErrorCode::kNoSpace,
                       "out of memory for a " + std::to_string(need) + " byte record"};
        b->pooled = false;
        c = b.get();
        all.push_back(std::move(b));
      }
      if (c) {
        in_use_cap += c->cap;
        c->opened = Clock::now();
        c->crc_running = raw_expected.load(std::memory_order_relaxed);
        open = c;
        return Status{};
      }
      if (!block) {
        ++stats.full_events;
        return Error{ErrorCode::kFull, "all chunk buffers are in flight"};
      }
      space_cv.wait(lk);
    }
  }

  // Appends an already encoded definition/gap entry to the open chunk (blocking for room).
  Status put_entry_locked(const Bytes& entry, std::unique_lock<std::mutex>& lk) {
    if (auto s = ensure_room(entry.size(), true, lk); !s) return s;
    if (open->entries == 0) work_cv.notify_one();  // the writer thread now watches its age
    std::memcpy(open->data + open->size, entry.data(), entry.size());
    open->size += entry.size();
    open->crc_running = false;  // definitions are rare: the writer thread checksums this chunk
    stats.queued_bytes += entry.size();
    ++open->entries;
    return Status{};
  }

  uint8_t* put_gap(uint8_t* p, const Gap& g) {
    if (open->entries == 0) work_cv.notify_one();
    *p++ = static_cast<uint8_t>(format::EntryKind::kGap);
    p = format::put_varint(p, g.writer);
    p = format::put_svarint(p, g.first_missing);
    p = format::put_svarint(p, g.last_missing);
    ++open->entries;
    open->row.gaps.push_back(g);
    ++stats.gaps;
    return p;
  }

  // ---------------- writer thread ----------------

  void run();
  Status write_batch(std::vector<ChunkBuf*>& batch);
  ByteSpan compress(const ChunkBuf& c, format::ChunkHeader& h, std::byte*& block);
  // `block`, when not null, is the aligned buffer the body sits in at kChunkHeaderSize (room for
  // the header before it and the padding after it): the chunk may then go out with O_DIRECT.
  // `align` pads a chunk written through the page cache up to kDirectAlignment (the next direct
  // write may then follow it).
  // `crc_known`: h.body_crc already holds the body's checksum (the appenders' running CRC).
  Status write_chunk(const format::ChunkHeader& h, ByteSpan body, std::byte* block, bool align,
                     bool crc_known, detail::ChunkRow& row);
  bool direct_ready() const { return seg && seg->direct_fd() >= 0; }
  Status open_segment(uint64_t number);
  Status finish_segment();
  Status maybe_roll(size_t next_chunk_bytes);
  Status apply_retention(std::vector<uint64_t>& removed);
  Status guard_check();
  void stop_for_low_space(uint64_t free_bytes);
  Status remove_oldest_segment(uint64_t& freed);
  void guard_event(DiskGuardEvent e) {
    if (opt.on_disk_guard) opt.on_disk_guard(e);
  }
  // Writer thread: the error that stops it from writing (none while the guard's stop drains).
  Status blocking_failure() {
    std::lock_guard lk(mu);
    return stopping ? Status{} : failure;
  }
  Status sync_now() {
    if (!seg || !unsynced) return Status{};
    if (auto s = seg->sync(); !s) return s;
    unsynced = false;
    synced_to(seg->size());
    return Status{};
  }
  void synced_to(uint64_t end) {
    last_sync = Clock::now();
    // Whole pages only, up to the one holding `end`: the kernel would drop a range's partial last
    // page when the range ends at the end of the file, and the next chunk written into that page
    // then waited for it to be read back from the disk (ext4_read_bh_lock in perf record, once per
    // chunk that leaves the page cache's way through pwritev).
    static const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
    end -= end % page;
    if (!opt.drop_synced_pages || end <= dropped_to) return;
    seg->drop_cached(dropped_to, end - dropped_to);
    dropped_to = end;
  }
  // kChunk: a written chunk's index row, put once an fdatasync begun after it has ended.
  Status index_after_sync(detail::ChunkRow& row) {
    if (opt.fsync != FsyncPolicy::kChunk) return index->put_chunk(row);
    unsynced_rows.push_back(std::move(row));
    return Status{};
  }
  void sync_loop();
  void start_background_sync();
  Status finish_background_sync(bool block);
  Status sync_all();
  Status sync_all_indexed();  // sync_all() in an index transaction of its own
  void stop_syncer();
};

Status SegmentWriter::Impl::open_segment(uint64_t number) {
  auto sink = FileSink::open(detail::segment_path(dir, number), true, opt.direct_io);
  if (!sink) return sink.error();
  seg = std::move(*sink);
  std::string note =
      !opt.direct_io ? "page cache (direct I/O off)"
      : seg->direct_fd() < 0
          ? "page cache (the filesystem refuses O_DIRECT: " + seg->direct_error() + ")"
          : "O_DIRECT for chunks of " + std::to_string(opt.direct_io_min_bytes) +
                " bytes and more, page cache below";
  format::SegmentHeader h;
  h.recording_id = recording_id;
  h.segment_number = number;
  h.created_ns = wall_ns();
  uint8_t hb[format::kSegmentHeaderSize];
  format::encode_segment_header(h, hb);
  const ByteSpan parts[] = {ByteSpan(reinterpret_cast<std::byte*>(hb), sizeof hb)};
  if (auto s = seg->write(parts); !s) {
    // Leave no headerless segment behind (e.g. disk full right at a roll).
    const std::string path = seg->path();
    seg.reset();
    ::unlink(path.c_str());
    return s;
  }
  unsynced = true;
  dropped_to = 0;
  seg_opened = Clock::now();
  segs.push_back({number, seg->size(), 0});
  {
    std::lock_guard lk(mu);
    ++stats.segments_created;
    stats.file_bytes += sizeof hb;
    io_note = std::move(note);
  }
  if (auto s = index->put_segment(number, h.created_ns); !s) return s;
  // Repeat every definition known so far so this segment decodes on its own.
  Bytes defs;
  uint32_t count;
  std::vector<std::pair<TopicId, TopicDef>> tdefs;
  std::vector<std::pair<WriterId, WriterDef>> wdefs;
  detail::ChunkRow row;
  {
    std::lock_guard lk(mu);
    defs = defs_blob;
    count = defs_count;
    for (TopicId i = 1; i < topics.size(); ++i) tdefs.emplace_back(i, topics[i]);
    for (WriterId i = 1; i < writers.size(); ++i) wdefs.emplace_back(i, writers[i]);
    row.type_defs = types;
  }
  if (count == 0) return Status{};
  format::ChunkHeader ch;
  ch.raw_size = ch.stored_size = static_cast<uint32_t>(defs.size());
  ch.entry_count = count;
  ch.codec = format::Codec::kRaw;
  ch.flags = format::kChunkFlagRecvSorted;
  row.topic_defs = std::move(tdefs);
  row.writer_defs = std::move(wdefs);
  return write_chunk(ch, defs, nullptr, true, false, row);  // aligned: data may go direct
}

Status SegmentWriter::Impl::finish_segment() {
  if (!seg) return Status{};
  if (opt.fsync != FsyncPolicy::kNone) {
    if (auto s = sync_all(); !s) return s;
  }
  if (auto s = index->set_segment_closed(segs.back().number, true); !s) return s;
  seg.reset();
  return Status{};
}

Status SegmentWriter::Impl::maybe_roll(size_t next_chunk_bytes) {
  if (seg) {
    const bool has_data = seg->size() > format::kSegmentHeaderSize;
    const bool too_big =
        seg->size() + next_chunk_bytes + format::kDirectAlignment > opt.segment_max_bytes;
    const bool too_old = opt.segment_max_duration.count() > 0 &&
                         Clock::now() - seg_opened >= opt.segment_max_duration;
    if (!has_data || (!too_big && !too_old)) return Status{};
    if (auto s = finish_segment(); !s) return s;
  }
  const uint64_t next = segs.empty() ? 1 : segs.back().number + 1;
  if (auto s = open_segment(next); !s) return s;
  if (!guard_active) return Status{};
  // The disk guard at every roll, before data goes into the new segment. It works outside
  // write_batch's index transaction (a removed segment's rows are committed before its file
  // goes): what that transaction holds so far is committed first, as at the end of a batch.
  if (auto s = index->commit(); !s) return s;
  Status g = guard_check();
  Status b = index->begin();
  return g ? b : g;
}

// Writes header + body (+ padding) at the end of the current segment and fills the row's
// location.
Status SegmentWriter::Impl::write_chunk(const format::ChunkHeader& h0, ByteSpan body,
                                        std::byte* block, bool align, bool crc_known,
                                        detail::ChunkRow& row) {
  format::ChunkHeader h = h0;
  h.sequence = next_chunk_seq;
  h.stored_size = static_cast<uint32_t>(body.size());
  if (!crc_known) h.body_crc = format::crc32c(body.data(), body.size());
  const uint64_t offset = seg->size();
  const bool big = body.size() >= opt.direct_io_min_bytes;
  const bool go_direct = block && big && direct_ready() && offset % format::kDirectAlignment == 0;
  if (direct_ready() && (big || align))
    h.padding = static_cast<uint16_t>(align_up(offset + format::kChunkHeaderSize + body.size()) -
                                      (offset + format::kChunkHeaderSize + body.size()));
  uint8_t hb[format::kChunkHeaderSize];
  format::encode_chunk_header(h, hb);
  Status st;
  if (go_direct) {
    // Header into the block's room before the body, zeros into the padding after it.
    std::memcpy(block, hb, sizeof hb);
    std::memset(block + sizeof hb + body.size(), 0, h.padding);
    st = seg->write_direct(block, sizeof hb + body.size() + h.padding);
  } else {
    static const std::byte kZeros[format::kDirectAlignment] = {};
    const ByteSpan parts[] = {ByteSpan(reinterpret_cast<std::byte*>(hb), sizeof hb), body,
                              ByteSpan(kZeros, h.padding)};
    st = seg->write(parts);
  }
  if (!st) {
    (void)seg->truncate(offset);  // never leave a torn chunk behind when we can help it
    return st;
  }
  ++next_chunk_seq;
  unsynced = true;
  // A large chunk through the page cache starts its writeback now, so the fdatasync of the batch
  // overlaps with writing the next chunks; a small one waits for that fdatasync (starting it
  // costs a system call and, on a VM, an exit to the host per chunk).
  if (opt.fsync != FsyncPolicy::kNone && !go_direct && big)
    seg->start_writeback(offset, seg->size() - offset);
  SegState& ss = segs.back();
  ss.size = seg->size();
  if (h.record_count > 0) ss.last_recv = std::max(ss.last_recv, h.last_recv_ns);
  ChunkInfo& c = row.info;
  c.sequence = h.sequence;
  c.segment = ss.number;
  c.offset = offset;
  c.stored_size = h.stored_size;
  c.raw_size = h.raw_size;
  c.codec = static_cast<uint8_t>(h.codec);
  c.record_count = h.record_count;
  c.entry_count = h.entry_count;
  c.first_recv_ns = h.first_recv_ns;
  c.last_recv_ns = h.last_recv_ns;
  if (auto s = index_after_sync(row); !s) return s;
  std::lock_guard lk(mu);
  ++stats.chunks_written;
  stats.file_bytes += format::chunk_span(h);
  if (go_direct) ++stats.direct_chunks;
  stats.padding_bytes += h.padding;
  return Status{};
}

Status SegmentWriter::Impl::apply_retention(std::vector<uint64_t>& removed) {
  if (opt.retention_max_bytes == 0 && opt.retention_max_age.count() == 0) return Status{};
  uint64_t total = 0;
  for (auto& s : segs) total += s.size;
  const int64_t now = wall_ns();
  const int64_t max_age_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(opt.retention_max_age).count();
  while (segs.size() > 1) {
    const SegState& old = segs.front();
    const bool over_size = opt.retention_max_bytes > 0 && total > opt.retention_max_bytes;
    const bool over_age = max_age_ns > 0 && old.last_recv > 0 && now - old.last_recv > max_age_ns;
    if (!over_size && !over_age) break;
    if (auto s = index->delete_segment(old.number); !s) return s;
    removed.push_back(old.number);
    total -= old.size;
    segs.pop_front();
  }
  return Status{};
}

// Writer thread, outside any index transaction: the disk guard's check (see the overview).
Status SegmentWriter::Impl::guard_check() {
  next_guard = Clock::now() + opt.disk_check_interval;
  auto measure = [&]() -> Result<uint64_t> {
    auto f = opt.free_space ? opt.free_space(dir) : statvfs_free(dir);
    if (f) {
      std::lock_guard lk(mu);
      stats.free_bytes = *f;
    }
    return f;
  };
  auto free = measure();
  if (!free) return free.error();
  const uint64_t limit = opt.min_free_bytes;
  if (*free >= limit) {
    guard_refused = false;
    return Status{};
  }
  if (opt.on_low_space == LowSpacePolicy::kStop) {
    stop_for_low_space(*free);
    return Status{};
  }
  // kRotate: the oldest segments go, one at a time, until there is room again; never the newest.
  while (*free < limit && segs.size() > 1) {
    const uint64_t number = segs.front().number;
    uint64_t freed = 0;
    if (auto s = remove_oldest_segment(freed); !s) return s;
    free = measure();
    if (!free) return free.error();
    DiskGuardEvent e;
    e.kind = DiskGuardEvent::Kind::kRemoved;
    e.free_bytes = *free;
    e.min_free_bytes = limit;
    e.segment = number;
    e.segment_bytes = freed;
    e.message = "removed segment " + segment_name(number) + " (" + mb(freed) + ") of " + dir +
                " for min_free_bytes " + mb(limit) + ": free space now " + mb(*free);
    guard_event(std::move(e));
  }
  if (*free >= limit) {
    guard_refused = false;
  } else if (!guard_refused) {
    guard_refused = true;
    DiskGuardEvent e;
    e.kind = DiskGuardEvent::Kind::kRefused;
    e.free_bytes = *free;
    e.min_free_bytes = limit;
    e.segment = segs.empty() ? 0 : segs.back().number;
    e.message = "free space " + mb(*free) + " on " + dir + " is below min_free_bytes " + mb(limit) +
                " and " +
                (segs.empty() ? std::string("there is no segment to remove")
                              : "only segment " + segment_name(e.segment) +
                                    ", the one being written, is left") +
                ": recording goes on";
    guard_event(std::move(e));
  }
  return Status{};
}

// Writer thread, kStop: nothing more is accepted; what was is still written (see `stopping`).
void SegmentWriter::Impl::stop_for_low_space(uint64_t free_bytes) {
  guard_active = false;
  DiskGuardEvent e;
  e.kind = DiskGuardEvent::Kind::kStopped;
  e.free_bytes = free_bytes;
  e.min_free_bytes = opt.min_free_bytes;
  e.message = "free space " + mb(free_bytes) + " on " + dir + " is below min_free_bytes " +
              mb(opt.min_free_bytes) + ": recording stopped";
  Error err{ErrorCode::kLowSpace, e.message};
  // The event first: a caller that reacts to kLowSpace from an append has seen it.
  guard_event(std::move(e));
  {
    std::lock_guard lk(mu);
    if (!failure.ok()) return;
    failure = err;
    stopping = true;
    close_open_locked();  // its records were accepted: they are written
  }
  space_cv.notify_all();  // appenders waiting for a buffer get kLowSpace
  if (opt.on_error) opt.on_error(err);
}

// Writer thread, outside any index transaction: removes the oldest segment, index rows first
// (committed), then its file, as retention does.
Status SegmentWriter::Impl::remove_oldest_segment(uint64_t& freed) {
  const SegState old = segs.front();
  if (auto s = index->begin(); !s) return s;
  Status st = index->delete_segment(old.number);
  if (st) st = index->commit();
  if (!st) {
    index->rollback();
    return st;
  }
  segs.pop_front();
  freed = old.size;
  if (::unlink(detail::segment_path(dir, old.number).c_str()) != 0)
    return errno_error(errno, "unlink " + detail::segment_path(dir, old.number));
  std::lock_guard lk(mu);
  ++stats.segments_removed;
  ++stats.low_space_removed;
  return Status{};
}

// The syncer thread: one fdatasync per request from start_background_sync().
void SegmentWriter::Impl::sync_loop() {
  std::unique_lock lk(mu);
  for (;;) {
    syncer_cv.wait(lk, [&] { return sync_sink != nullptr || syncer_stop; });
    if (!sync_sink) return;
    FileSink* sink = sync_sink;
    lk.unlock();
    if (opt.test_delay_per_sync.count() > 0) std::this_thread::sleep_for(opt.test_delay_per_sync);
    Status st = sink->sync();  // fdatasync only: safe beside the writer thread's pwritev
    lk.lock();
    sync_sink = nullptr;
    sync_status = std::move(st);
    sync_finished = true;
    work_cv.notify_one();
  }
}

// Writer thread, kChunk: hands what was written since the last sync to the syncer thread.
void SegmentWriter::Impl::start_background_sync() {
  if (sync_busy || unsynced_rows.empty() || !seg) return;
  sync_rows.swap(unsynced_rows);
  sync_busy = true;
  sync_end = seg->size();
  unsynced = false;
  std::lock_guard lk(mu);
  sync_sink = seg.get();
  syncer_cv.notify_one();
}

// Writer thread, kChunk: when the background sync has ended (or after waiting for it, with
// `block`), indexes the rows it covered (in the open index transaction).
Status SegmentWriter::Impl::finish_background_sync(bool block) {
  if (!sync_busy) return Status{};
  Status st;
  {
    std::unique_lock lk(mu);
    if (!sync_finished && !block) return Status{};
    work_cv.wait(lk, [&] { return sync_finished; });
    sync_finished = false;
    st = std::move(sync_status);
  }
  sync_busy = false;
  if (!st) return st;
  synced_to(sync_end);
  for (auto& row : sync_rows)
    if (auto s = index->put_chunk(row); !s) return s;
  sync_rows.clear();
  return Status{};
}

// Writer thread: everything written is on disk and (kChunk) indexed in the open transaction.
Status SegmentWriter::Impl::sync_all() {
  if (auto s = finish_background_sync(true); !s) return s;
  if (auto s = sync_now(); !s) return s;
  for (auto& row : unsynced_rows)
    if (auto s = index->put_chunk(row); !s) return s;
  unsynced_rows.clear();
  return Status{};
}

Status SegmentWriter::Impl::sync_all_indexed() {
  if (auto s = index->begin(); !s) return s;
  Status st = sync_all();
  if (auto s = index->commit(); !s) {
    index->rollback();
    if (st) st = s;
  }
  return st;
}

// Ends the syncer thread once its fdatasync (if one is running) has returned.
void SegmentWriter::Impl::stop_syncer() {
  {
    std::lock_guard lk(mu);
    syncer_stop = true;
    syncer_cv.notify_one();
  }
  if (syncer.joinable()) syncer.join();
}

// LZ4 of a chunk, when compression is on, not backing off, and it saves enough: then the
// compressed body (in a compression buffer, whose block replaces `block`) and h.codec kLz4;
// otherwise the raw body.
ByteSpan SegmentWriter::Impl::compress(const ChunkBuf& c, format::ChunkHeader& h,
                                       std::byte*& block) {
  const ByteSpan raw(reinterpret_cast<const std::byte*>(c.data), c.size);
  bool try_lz4 = opt.compression == Compression::kLz4 && c.size >= 64;
  if (try_lz4 && lz4_skip > 0) {
    --lz4_skip;
    try_lz4 = false;
  }
  if (!try_lz4) return raw;
  const int bound = LZ4_compressBound(static_cast<int>(c.size));
  const size_t need =
      format::kChunkHeaderSize + static_cast<size_t>(bound) + format::kDirectAlignment;
  if (cbuf.size() < need) cbuf = detail::AlignedBuffer::allocate(need);
  if (!cbuf) return raw;  // no memory for it: stored raw
  char* dst = reinterpret_cast<char*>(cbuf.get()) + format::kChunkHeaderSize;
  const int n = LZ4_compress_fast(reinterpret_cast<const char*>(c.data), dst,
                                  static_cast<int>(c.size), bound, opt.lz4_acceleration);
  if (n <= 0 ||
      static_cast<double>(n) > static_cast<double>(c.size) * (1.0 - opt.min_compression_saving)) {
    lz4_backoff = std::min<uint32_t>(lz4_backoff == 0 ? 1 : lz4_backoff * 2, 64);
    lz4_skip = lz4_backoff;
    return raw;
  }
  lz4_backoff = 0;
  h.codec = format::Codec::kLz4;
  block = cbuf.get();
  return ByteSpan(reinterpret_cast<const std::byte*>(dst), static_cast<size_t>(n));
}

Status SegmentWriter::Impl::write_batch(std::vector<ChunkBuf*>& batch) {
  if (auto s = index->begin(); !s) return s;
  Status st = finish_background_sync(false);
  for (ChunkBuf* c : batch) {
    if (!st) break;
    if (opt.test_delay_per_chunk.count() > 0) std::this_thread::sleep_for(opt.test_delay_per_chunk);
    format::ChunkHeader h;
    h.raw_size = static_cast<uint32_t>(c->size);
    h.record_count = c->records;
    h.entry_count = c->entries;
    h.first_recv_ns = c->first_recv;
    h.last_recv_ns = c->last_recv;
    h.flags = c->sorted ? format::kChunkFlagRecvSorted : 0;
    h.codec = format::Codec::kRaw;
    c->row.info.min_seq = c->records ? c->min_seq : 0;
    c->row.info.max_seq = c->records ? c->max_seq : 0;
    std::byte* block = c->block.get();
    const ByteSpan body = compress(*c, h, block);
    raw_expected.store(opt.compression == Compression::kNone || lz4_skip > 0,
                       std::memory_order_relaxed);
    const bool crc_known = h.codec == format::Codec::kRaw && c->crc_running;
    if (crc_known) h.body_crc = c->crc;
    st = maybe_roll(format::kChunkHeaderSize + body.size());
    if (st) st = write_chunk(h, body, block, false, crc_known, c->row);
    if (!st) break;
    std::lock_guard lk(mu);
    if (crc_known) ++stats.appender_crc_chunks;
    stats.records_written += c->records;
    stats.bytes_written += c->payload_bytes;
  }
  // Durability before the index rows become visible (kChunk), so the index never points at
  // data a power loss could take away: the rows wait for the background sync.
  if (st && opt.fsync == FsyncPolicy::kChunk) start_background_sync();
  if (st && opt.fsync == FsyncPolicy::kInterval && Clock::now() - last_sync >= opt.fsync_interval)
    st = sync_now();
  std::vector<uint64_t> removed;
  if (st) st = apply_retention(removed);
  // Commit what was written even after a failure: those chunks are complete on disk.
  if (auto s = index->commit(); !s) {
    index->rollback();
    if (st) st = s;
  }
  for (uint64_t n : removed) {
    if (::unlink(detail::segment_path(dir, n).c_str()) == 0) {
      std::lock_guard lk(mu);
      ++stats.segments_removed;
    }
  }
  return st;
}

void SegmentWriter::Impl::run() {
  std::vector<ChunkBuf*> batch;
  for (;;) {
    uint64_t gen = 0, split_gen = 0;
    {
      std::unique_lock lk(mu);
      for (;;) {
        const bool healthy = failure.ok() || stopping;
        if (!queue.empty() || stop) break;
        if (sync_req_gen > sync_done_gen && healthy) break;
        if (split_req_gen > split_done_gen && healthy) break;
        if (sync_busy && sync_finished && healthy) break;  // index what it covered
        if (guard_active && Clock::now() >= next_guard) break;
        const auto guard_at = guard_active ? next_guard : Clock::time_point::max();
        if (open && open->entries > 0) {
          const auto deadline = open->opened + opt.chunk_max_age;
          if (Clock::now() >= deadline) {
            close_open_locked();
            continue;
          }
          work_cv.wait_until(lk, std::min(deadline, guard_at));
        } else if (opt.fsync == FsyncPolicy::kInterval && unsynced) {
          work_cv.wait_until(lk, std::min(last_sync + opt.fsync_interval, guard_at));
          if (Clock::now() >= last_sync + opt.fsync_interval) break;
        } else if (guard_active) {
          work_cv.wait_until(lk, guard_at);
        } else {
          work_cv.wait(lk);
        }
      }
      if (queue.empty() && stop) break;
      batch.swap(queue);
      gen = sync_req_gen;
      split_gen = split_req_gen;
    }
    bool report = false;
    Status st = blocking_failure();
    if (st.ok() && (!batch.empty() || sync_busy)) st = write_batch(batch);
    // Explicit flush requests and the kInterval timer end here with an fdatasync.
    if (st.ok() && opt.fsync != FsyncPolicy::kNone &&
        (gen > 0 ||
         (opt.fsync == FsyncPolicy::kInterval && Clock::now() - last_sync >= opt.fsync_interval)))
      st = sync_all_indexed();
    uint64_t next_segment = 0;
    if (st.ok() && split_gen > split_done_gen) {  // only this thread advances split_done_gen
      const bool has_data = seg && seg->size() > format::kSegmentHeaderSize;
      if (has_data) st = finish_segment();
      next_segment = seg ? segs.back().number : segs.empty() ? 1 : segs.back().number + 1;
    }
    if (st.ok() && guard_active && Clock::now() >= next_guard) st = guard_check();
    {
      std::lock_guard lk(mu);
      for (ChunkBuf* c : batch) release_locked(c);
      done_chunks += batch.size();
      sync_done_gen = std::max(sync_done_gen, gen);
      if (split_gen > split_done_gen) {
        split_done_gen = split_gen;
        split_next = next_segment;
      }
      // A failure while the guard's stop drains replaces it: the recording is not clean then.
      if (!st.ok() && (failure.ok() || stopping)) {
        failure = st;
        stopping = false;
        report = true;
      }
      if (!failure.ok()) guard_active = false;  // nothing left to guard
    }
    batch.clear();
    space_cv.notify_all();
    if (report && opt.on_error) opt.on_error(st);
  }
}

// ---------------- public API ----------------

SegmentWriter::SegmentWriter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

SegmentWriter::~SegmentWriter() {
  if (impl_) (void)close();
}

Result<std::unique_ptr<SegmentWriter>> SegmentWriter::create(const std::string& dir,
                                                             SegmentWriterOptions options) {
  if (options.chunk_max_bytes < 1024 || options.chunk_max_bytes > (1u << 30))
    return Error{ErrorCode::kInvalidArgument, "chunk_max_bytes must be in [1 KiB, 1 GiB]"};
  if (options.max_record_bytes > (1u << 30) - 4096)
    return Error{ErrorCode::kInvalidArgument, "max_record_bytes must be at most 1 GiB - 4 KiB"};
  if (options.queue_max_bytes < options.chunk_max_bytes)
    return Error{ErrorCode::kInvalidArgument, "queue_max_bytes must hold at least one chunk"};
  if (options.lz4_acceleration < 1) options.lz4_acceleration = 1;
  auto holds_recording = [&dir]() -> Status {
    struct stat st {};
    if (::stat(detail::index_path(dir).c_str(), &st) == 0)
      return Error{ErrorCode::kAlreadyExists, dir + " already holds a recording"};
    if (!detail::list_segment_files(dir).empty())
      return Error{ErrorCode::kAlreadyExists, dir + "/segments is not empty"};
    return Status{};
  };
  if (auto s = mkdirs(detail::segments_dir(dir)); !s) return s.error();
  if (auto s = holds_recording(); !s) return s.error();
  auto lock = WriterLock::acquire(dir, program_invocation_short_name);
  if (!lock) return lock.error();
  if (auto s = holds_recording(); !s) return s.error();  // another writer was quicker

  auto impl = std::make_unique<Impl>();
  impl->lock = std::move(*lock);
  impl->dir = dir;
  impl->opt = std::move(options);
  impl->stats.queue_max_bytes = impl->opt.queue_max_bytes;
  impl->raw_expected = impl->opt.compression == Compression::kNone;
  impl->guard_active = impl->opt.min_free_bytes > 0;
  impl->next_guard = Clock::now();  // the writer thread checks once when it starts
  std::random_device rd;
  for (auto& b : impl->recording_id) b = static_cast<uint8_t>(rd());
  auto index = detail::Index::open(detail::index_path(dir), detail::Index::Mode::kCreate);
  if (!index) return index.error();
  impl->index = std::move(*index);
  auto& idx = *impl->index;
  if (auto s = idx.begin(); !s) return s.error();
  Status s = idx.set_meta("format_version", std::to_string(format::kFormatVersion));
  if (s) s = idx.set_meta("recording_id", hex(impl->recording_id.data(), 16));
  if (s) s = idx.set_meta("clean", "0");
  if (s) s = idx.commit();
  if (!s) return s.error();
  Impl* raw = impl.get();
  if (impl->opt.fsync == FsyncPolicy::kChunk)
    impl->syncer = std::thread([raw] { raw->sync_loop(); });
  impl->thread = std::thread([raw] { raw->run(); });
  return std::unique_ptr<SegmentWriter>(new SegmentWriter(std::move(impl)));
}

Result<TopicId> SegmentWriter::add_topic(const TopicDef& def) {
  Impl& m = *impl_;
  std::unique_lock lk(m.mu);
  if (!m.failure.ok()) return m.failure.error();
  if (m.closed) return Error{ErrorCode::kClosed, "writer closed"};
  const auto id = static_cast<TopicId>(m.topics.size());
  Bytes entry;
  format::append_topic_entry(entry, id, def);
  if (entry.size() > m.opt.max_record_bytes + format::kMaxRecordOverhead)
    return Error{ErrorCode::kInvalidArgument, "topic definition too large"};
  if (auto s = m.put_entry_locked(entry, lk); !s) return s.error();
  m.topics.push_back(def);
  m.topic_slot.push_back(-1);
  m.open->row.topic_defs.emplace_back(id, def);
  m.defs_blob.insert(m.defs_blob.end(), entry.begin(), entry.end());
  ++m.defs_count;
  return id;
}

Result<WriterId> SegmentWriter::add_writer(const WriterDef& def) {
  Impl& m = *impl_;
  std::unique_lock lk(m.mu);
  if (!m.failure.ok()) return m.failure.error();
  if (m.closed) return Error{ErrorCode::kClosed, "writer closed"};
  if (def.topic == 0 || def.topic >= m.topics.size())
    return Error{ErrorCode::kInvalidArgument, "add_writer: unknown topic id"};
  const auto id = static_cast<WriterId>(m.writers.size());
  Bytes entry;
  format::append_writer_entry(entry, id, def);
  if (auto s = m.put_entry_locked(entry, lk); !s) return s.error();
  m.writers.push_back(def);
  m.writer_slot.push_back(-1);
  m.last_seq.push_back(kNoSeq);
  m.open->row.writer_defs.emplace_back(id, def);
  m.defs_blob.insert(m.defs_blob.end(), entry.begin(), entry.end());
  ++m.defs_count;
  return id;
}

Status SegmentWriter::add_type(const TypeDef& def) {
  Impl& m = *impl_;
  std::unique_lock lk(m.mu);
  if (!m.failure.ok()) return m.failure;
  if (m.closed) return Error{ErrorCode::kClosed, "writer closed"};
  if (def.type_name.empty()) return Error{ErrorCode::kInvalidArgument, "add_type: no type name"};
  auto same = [&](const TypeDef& t) {
    return t.type_name == def.type_name && t.source == def.source;
  };
  auto it = std::find_if(m.types.begin(), m.types.end(), same);
  if (it != m.types.end() && it->idl == def.idl && it->type_object == def.type_object)
    return Status{};
  Bytes entry;
  format::append_type_entry(entry, def);
  if (entry.size() > m.opt.max_record_bytes + format::kMaxRecordOverhead)
    return Error{ErrorCode::kInvalidArgument, "type definition too large"};
  if (auto s = m.put_entry_locked(entry, lk); !s) return s;
  if (it != m.types.end())
    *it = def;
  else
    m.types.push_back(def);
  m.open->row.type_defs.push_back(def);
  m.defs_blob.insert(m.defs_blob.end(), entry.begin(), entry.end());
  ++m.defs_count;
  return Status{};
}

Status SegmentWriter::add_gap(const Gap& gap) {
  Impl& m = *impl_;
  std::unique_lock lk(m.mu);
  if (!m.failure.ok()) return m.failure;
  if (m.closed) return Error{ErrorCode::kClosed, "writer closed"};
  if (gap.writer == 0 || gap.writer >= m.writers.size())
    return Error{ErrorCode::kInvalidArgument, "add_gap: unknown writer id"};
  if (gap.first_missing > gap.last_missing)
    return Error{ErrorCode::kInvalidArgument, "add_gap: first_missing > last_missing"};
  if (auto s = m.ensure_room(kGapEntryMax, true, lk); !s) return s;
  uint8_t* p = m.open->data + m.open->size;
  m.open->crc_running = false;
  uint8_t* e = m.put_gap(p, gap);
  m.open->size += static_cast<size_t>(e - p);
  m.stats.queued_bytes += static_cast<size_t>(e - p);
  int64_t& last = m.last_seq[gap.writer];
  last = std::max(last, gap.last_missing);
  return Status{};
}

Status SegmentWriter::add_mark(const Mark& mark) {
  Impl& m = *impl_;
  std::unique_lock lk(m.mu);
  if (!m.failure.ok()) return m.failure;
  if (m.closed) return Error{ErrorCode::kClosed, "writer closed"};
  Bytes entry;
  format::append_mark_entry(entry, mark);
  if (entry.size() > m.opt.max_record_bytes + format::kMaxRecordOverhead)
    return Error{ErrorCode::kInvalidArgument, "mark too large"};
  if (auto s = m.put_entry_locked(entry, lk); !s) return s;
  m.open->row.marks.push_back(mark);
  return Status{};
}

Status SegmentWriter::skip_to(WriterId writer, int64_t sequence) {
  Impl& m = *impl_;
  std::lock_guard lk(m.mu);
  if (!m.failure.ok()) return m.failure;
  if (m.closed) return Error{ErrorCode::kClosed, "writer closed"};
  if (writer == 0 || writer >= m.writers.size())
    return Error{ErrorCode::kInvalidArgument, "skip_to: unknown writer id"};
  int64_t& last = m.last_seq[writer];
  last = std::max(last, sequence);
  return Status{};
}

Status SegmentWriter::try_append(const RecordMeta& meta, ByteSpan payload) {
  return append_impl(meta, std::span<const ByteSpan>(&payload, 1), false);
}
Status SegmentWriter::append(const RecordMeta& meta, ByteSpan payload) {
  return append_impl(meta, std::span<const ByteSpan>(&payload, 1), true);
}
Status SegmentWriter::try_append_parts(const RecordMeta& meta, std::span<const ByteSpan> parts) {
  return append_impl(meta, parts, false);
}
Status SegmentWriter::append_parts(const RecordMeta& meta, std::span<const ByteSpan> parts) {
  return append_impl(meta, parts, true);
}

Status SegmentWriter::append_impl(const RecordMeta& meta, std::span<const ByteSpan> parts,
                                  bool block) {
  size_t payload_size = 0;
  for (const ByteSpan& part : parts) payload_size += part.size();
  Impl& m = *impl_;
  std::unique_lock lk(m.mu);
  if (!m.failure.ok()) [[unlikely]]
    return m.failure;
  if (m.closed) [[unlikely]]
    return Error{ErrorCode::kClosed, "writer closed"};
  if (meta.writer == 0 || meta.writer >= m.writers.size() ||
      m.writers[meta.writer].topic != meta.topic) [[unlikely]]
    return Error{ErrorCode::kInvalidArgument,
                 "append: unknown writer id or writer of another topic"};
  if (payload_size > m.opt.max_record_bytes) [[unlikely]]
    return Error{ErrorCode::kInvalidArgument, "append: payload of " + std::to_string(payload_size) +
                                                  " bytes over max_record_bytes"};
  const size_t need = format::kMaxRecordOverhead + kGapEntryMax + payload_size;
  if (!m.open || m.open->size + need > m.open->cap) {
    if (auto s = m.ensure_room(need, block, lk); !s) return s;
  }
  ChunkBuf& c = *m.open;
  uint8_t* const start = c.data + c.size;
  uint8_t* p = start;
  int64_t& last = m.last_seq[meta.writer];
  if (last != kNoSeq && meta.sequence > last + 1) [[unlikely]]
    p = m.put_gap(p, Gap{meta.writer, last + 1, meta.sequence - 1});
  if (meta.sequence > last) last = meta.sequence;
  p = format::encode_data_header(p, meta, payload_size, c.delta);
  for (const ByteSpan& part : parts) {
    if (part.empty()) continue;
    std::memcpy(p, part.data(), part.size());
    p += part.size();
  }
  const size_t written = static_cast<size_t>(p - start);
  if (c.crc_running) {
    if (payload_size >= kRunningCrcFrom)
      c.crc = format::crc32c(start, written, c.crc);
    else
      c.crc_running = false;
  }
  c.size += written;
  prefetch_ahead(c);
  m.stats.queued_bytes += written;
  ++m.stats.records_appended;
  m.stats.bytes_appended += payload_size;
  const int64_t t = meta.reception_ns;
  if (c.records == 0) {
    c.first_recv = c.last_recv = t;
    c.min_seq = c.max_seq = meta.sequence;
  } else {
    if (t < c.last_recv) c.sorted = false;
    c.first_recv = std::min(c.first_recv, t);
    c.last_recv = std::max(c.last_recv, t);
    c.min_seq = std::min(c.min_seq, meta.sequence);
    c.max_seq = std::max(c.max_seq, meta.sequence);
  }
  c.payload_bytes += payload_size;
  if (c.entries == 0) m.work_cv.notify_one();  // the writer thread now watches its age
  ++c.records;
  ++c.entries;
  int32_t& ts = m.topic_slot[meta.topic];
  if (ts < 0) {
    ts = static_cast<int32_t>(c.row.topics.size());
    c.row.topics.push_back({meta.topic, 0, 0, t, t});
  }
  ChunkTopicStat& tst = c.row.topics[static_cast<size_t>(ts)];
  ++tst.count;
  tst.bytes += payload_size;
  tst.first_recv_ns = std::min(tst.first_recv_ns, t);
  tst.last_recv_ns = std::max(tst.last_recv_ns, t);
  int32_t& ws = m.writer_slot[meta.writer];
  if (ws < 0) {
    ws = static_cast<int32_t>(c.row.writers.size());
    c.row.writers.push_back({meta.writer, 0, 0, t, t, meta.sequence, meta.sequence});
  }
  ChunkWriterStat& wst = c.row.writers[static_cast<size_t>(ws)];
  ++wst.count;
  wst.bytes += payload_size;
  wst.first_recv_ns = std::min(wst.first_recv_ns, t);
  wst.last_recv_ns = std::max(wst.last_recv_ns, t);
  wst.min_seq = std::min(wst.min_seq, meta.sequence);
  wst.max_seq = std::max(wst.max_seq, meta.sequence);
  if (c.size >= m.opt.chunk_max_bytes) m.close_open_locked();
  return Status{};
}

Status SegmentWriter::poll() {
  Impl& m = *impl_;
  std::lock_guard lk(m.mu);
  if (!m.failure.ok()) return m.failure;
  if (m.open && m.open->entries > 0 && Clock::now() - m.open->opened >= m.opt.chunk_max_age)
    m.close_open_locked();
  return Status{};
}

Status SegmentWriter::flush() {
  Impl& m = *impl_;
  std::unique_lock lk(m.mu);
  if (!m.failure.ok()) return m.failure;
  if (m.closed) return Error{ErrorCode::kClosed, "writer closed"};
  m.close_open_locked();
  const uint64_t target = m.closed_chunks;
  const uint64_t gen = ++m.sync_req_gen;
  m.work_cv.notify_one();
  m.space_cv.wait(
      lk, [&] { return (m.done_chunks >= target && m.sync_done_gen >= gen) || !m.failure.ok(); });
  return m.failure;
}

Result<uint64_t> SegmentWriter::split() {
  Impl& m = *impl_;
  std::unique_lock lk(m.mu);
  if (!m.failure.ok()) return m.failure.error();
  if (m.closed) return Error{ErrorCode::kClosed, "writer closed"};
  m.close_open_locked();
  const uint64_t gen = ++m.split_req_gen;
  m.work_cv.notify_one();
  m.space_cv.wait(lk, [&] { return m.split_done_gen >= gen || !m.failure.ok(); });
  if (!m.failure.ok()) return m.failure.error();
  return m.split_next;
}

Status SegmentWriter::close() {
  Impl& m = *impl_;
  {
    std::unique_lock lk(m.mu);
    if (m.closed)
      return m.failure.ok() ? Status{Error{ErrorCode::kClosed, "writer closed"}} : m.failure;
    m.close_open_locked();
    m.closed = true;
    m.stop = true;
    m.work_cv.notify_one();
    m.space_cv.notify_all();
  }
  if (m.thread.joinable()) m.thread.join();
  // The writer thread is gone; its state is this thread's now (mu only for what appenders see).
  // After the disk guard's stop it has written everything accepted: finish the recording.
  bool failed;
  {
    std::lock_guard lk(m.mu);
    failed = !m.failure.ok() && !m.stopping;
  }
  Status s;
  if (!failed) {
    s = m.index->begin();
    if (s) s = m.finish_segment();  // waits for a background sync still running
    if (s) s = m.index->set_meta("clean", "1");
    if (s) s = m.index->commit();
    // At rest the index is a plain rollback-journal database: read-only opens then create no
    // -wal/-shm files (a writer or recover() switches back to WAL).
    if (s) s = m.index->exec("PRAGMA journal_mode=DELETE");
  }
  m.stop_syncer();  // no fdatasync runs on the segment after this
  std::lock_guard lk(m.mu);
  if (failed) {
    m.index.reset();
    m.seg.reset();
    m.lock.release();
    return m.failure;  // left unclean: a reader checks the tail
  }
  if (!s) {
    m.failure = s;
    m.stopping = false;
  }
  m.index.reset();
  m.lock.release();          // last: the files are complete
  return s ? m.failure : s;  // kLowSpace after the disk guard's stop
}

WriterStats SegmentWriter::stats() const {
  std::lock_guard lk(impl_->mu);
  WriterStats s = impl_->stats;
  s.queue_in_use_bytes = impl_->in_use_cap;
  if (const ChunkBuf* open = impl_->open) {
    s.open_chunk_bytes = open->size;
    s.open_chunk_capacity = open->cap;
  }
  return s;
}

std::string SegmentWriter::io_description() const {
  std::lock_guard lk(impl_->mu);
  return impl_->io_note;
}

Status SegmentWriter::error() const {
  std::lock_guard lk(impl_->mu);
  return impl_->failure;
}

const std::string& SegmentWriter::directory() const {
  return impl_->dir;
}

}  // namespace storage
