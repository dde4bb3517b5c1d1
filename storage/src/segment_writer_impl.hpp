// SegmentWriter's state (Impl) and the chunk buffer, shared by the files that implement it, one
// role each:
// - segment_writer.cpp: the caller side - create, definitions, appending, flush, split, close;
// - segment_writer_thread.cpp: the writer thread - chunks compressed, checksummed, written into
//   segments and indexed, segment rolls;
// - segment_writer_sync.cpp: the background fdatasync thread (FsyncPolicy::kChunk);
// - segment_writer_guard.cpp: retention and the disk guard (writer thread).
//
// OVERVIEW
//
// Threads and ownership:
// - Caller threads (any number) run add_topic/add_writer/add_mark/append/flush/close. They
//   hold `mu` while touching the open chunk (`open`), the chunk queue, the buffer pool and the
//   per-writer sequence state. Appending is a memcpy of the encoded record into `open`; no
//   allocation once the pool has warmed up. Records of kRunningCrcFrom and more are copied
//   with streaming stores around the cache (stream_copy.hpp) and go into the chunk's running
//   CRC-32C from their source, which is in the cache (when the chunk will likely be stored
//   raw); the writer thread then uses that CRC instead of reading the chunk back.
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
//   fdatasync in flight at a time, and one per opt.min_sync_spacing at most (10 ms: at
//   63000-B samples of zeros, LZ4 made 4-MiB chunks of 16 KB, and one fdatasync and one index
//   transaction per chunk were 490 a second; a flush, roll or close does not wait). The rows of the
//   chunks a sync covers wait in `sync_rows` (writer thread only) and are indexed when it has
//   ended, so the index still never points at data that is not on disk. The writer thread waits for
//   that sync before it closes or rolls the segment, and before it answers flush().
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
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "aligned_buffer.hpp"
#include "segment_file.hpp"
#include "sqlite_index.hpp"
#include "storage/format.hpp"
#include "storage/io.hpp"
#include "storage/segment_writer.hpp"
#include "storage/writer_lock.hpp"

namespace storage::detail {

using Clock = std::chrono::steady_clock;
inline constexpr int64_t kNoSeq = INT64_MIN;

inline int64_t wall_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
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
inline bool allocate_chunk(ChunkBuf& b, size_t body_cap) {
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
inline size_t pooled_body_cap(size_t chunk_max) {
  const size_t room = format::kChunkHeaderSize + format::kDirectAlignment;
  using detail::AlignedBuffer;
  if (chunk_max >= AlignedBuffer::kHugePage &&
      AlignedBuffer::usable(chunk_max + room) > AlignedBuffer::usable(chunk_max))
    return AlignedBuffer::usable(chunk_max) - room;
  return chunk_max;
}

struct SegState {
  uint64_t number = 0;
  uint64_t size = 0;
  int64_t last_recv = 0;  // newest reception time in the segment (0 if none)
};

}  // namespace storage::detail

namespace storage {

using detail::allocate_chunk;
using detail::ChunkBuf;
using detail::Clock;
using detail::kNoSeq;
using detail::pooled_body_cap;
using detail::SegState;
using detail::wall_ns;

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
  // Slot of each writer in open->row.writers (-1 when untouched), and of each topic in a closing
  // chunk's row.topics (summarize_locked).
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
  format::Lz4Backoff lz4_backoff;  // writer thread
  bool unsynced = false;
  uint64_t dropped_to = 0;  // the segment's bytes below this were synced and dropped from cache
  // Background fdatasync (kChunk), at most one per opt.min_sync_spacing unless the writer thread
  // waits for it (sync_hurry). Writer thread only: sync_busy, sync_rows, unsynced_rows,
  // sync_end. Under mu: sync_sink (a request), sync_hurry, sync_finished and sync_status (its
  // result).
  std::thread syncer;
  std::condition_variable syncer_cv;
  FileSink* sync_sink = nullptr;
  bool syncer_stop = false;
  bool sync_hurry = false;  // the writer thread waits for the requested sync: start it now
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
    summarize_locked(*c);
    queue.push_back(c);
    ++closed_chunks;
    work_cv.notify_one();
  }

  // At a chunk's close: its time and sequence ranges, payload bytes and per-topic rows, from its
  // per-writer rows (each writer has one topic), which the appenders kept per record; the slots
  // are cleared for the next chunk.
  void summarize_locked(ChunkBuf& c) {
    if (!c.row.writers.empty()) {
      const ChunkWriterStat& w = c.row.writers.front();
      c.first_recv = w.first_recv_ns;
      c.last_recv = w.last_recv_ns;
      c.min_seq = w.min_seq;
      c.max_seq = w.max_seq;
    }
    for (const ChunkWriterStat& w : c.row.writers) {
      writer_slot[w.writer] = -1;
      c.first_recv = std::min(c.first_recv, w.first_recv_ns);
      c.last_recv = std::max(c.last_recv, w.last_recv_ns);
      c.min_seq = std::min(c.min_seq, w.min_seq);
      c.max_seq = std::max(c.max_seq, w.max_seq);
      c.payload_bytes += w.bytes;
      const TopicId topic = writers[w.writer].topic;
      int32_t& ts = topic_slot[topic];
      if (ts < 0) {
        ts = static_cast<int32_t>(c.row.topics.size());
        c.row.topics.push_back({topic, 0, 0, w.first_recv_ns, w.last_recv_ns});
      }
      ChunkTopicStat& t = c.row.topics[static_cast<size_t>(ts)];
      t.count += w.count;
      t.bytes += w.bytes;
      t.first_recv_ns = std::min(t.first_recv_ns, w.first_recv_ns);
      t.last_recv_ns = std::max(t.last_recv_ns, w.last_recv_ns);
    }
    for (const ChunkTopicStat& t : c.row.topics) topic_slot[t.topic] = -1;
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
    p = format::detail::put_varint(p, g.writer);
    p = format::detail::put_svarint(p, g.first_missing);
    p = format::detail::put_svarint(p, g.last_missing);
    ++open->entries;
    index_gap(g);
    return p;
  }
  // A gap entry just put into the open chunk: its index row and the count.
  void index_gap(const Gap& g) {
    open->row.gaps.push_back(g);
    ++stats.gaps;
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
  // An fdatasync of a segment file, counted in stats.syncs; called without mu (the writer
  // thread's own syncs and the syncer thread's).
  Status sync_file(FileSink& f) {
    Status st = f.sync();
    std::lock_guard lk(mu);
    ++stats.syncs;
    return st;
  }
  Status sync_now() {
    if (!seg || !unsynced) return Status{};
    if (auto s = sync_file(*seg); !s) return s;
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

}  // namespace storage
