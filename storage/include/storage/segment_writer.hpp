// SegmentWriter: appends records and definitions to a recording directory
// (index.sqlite3 + segments/NNNNNNNN.seg, see storage/format.hpp).
//
// Usage (the recorder):
//   auto w = SegmentWriter::create(dir, opts);   // a new recording; starts the writer thread
//   TopicId t = *(*w)->add_topic({"Square", "ShapeType", true, qos, type_info});
//   WriterId wr = *(*w)->add_writer({t, guid});
//   Status s = (*w)->try_append(meta, payload);  // kFull: stop acknowledging, offer it again
//   ...
//   (*w)->close();                               // writes and indexes the rest, marks it clean
//
// (A full open chunk is handed to the writer thread by the append that fills it, and one older
// than chunk_max_age by the writer thread itself: nothing has to be called from a timer.)
//
// Threads: every public method may be called from any thread (one internal mutex guards the open
// chunk). Appends copy the record once into the open chunk buffer; closed chunks go to one
// background writer thread that compresses, checksums, writes, syncs, indexes and applies
// retention and the disk guard (min_free_bytes). Errors of that thread are sticky and returned by
// the next call.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "storage/append_lock.hpp"
#include "storage/format.hpp"
#include "storage/records.hpp"
#include "storage/status.hpp"

namespace storage {

enum class FsyncPolicy {
  kNone,      // never fdatasync (page cache only; survives a process crash, not a power loss)
  kChunk,     // fdatasync after each written batch of chunks, before their index rows commit
              // (chunks the writer thread finds queued together share one fdatasync, and so do
              // those written within min_sync_spacing of the last one's start)
  kSegment,   // fdatasync when a segment is finished (rolled or closed)
  kInterval,  // fdatasync at most every fsync_interval while data is pending
};

enum class Compression {
  kNone,  // store chunks raw
  kLz4,   // LZ4 block per chunk, stored raw instead when it saves less than
          // min_compression_saving; after such a chunk the next 1, 2, 4 ... 64 chunks are stored
          // raw without trying (the backoff resets when compression pays again)
};

// What the disk guard (SegmentWriterOptions::min_free_bytes) does when the free space of the
// recording's filesystem is below the limit.
enum class LowSpacePolicy {
  // End the recording: the open chunk is closed and everything accepted so far is still
  // written and indexed; every later call returns kLowSpace (nothing more is accepted), and
  // close() finishes the recording cleanly and then returns kLowSpace too.
  kStop,
  // Remove the oldest whole segments of this recording (file and index rows, as retention
  // does), one at a time, until free space is back at the limit. The newest segment (the one
  // being written) is never removed: with only it left the guard reports kRefused once and the
  // recording goes on (a full disk then fails it as usual, with kNoSpace).
  kRotate,
};

// What the disk guard did, for the caller's log (SegmentWriterOptions::on_disk_guard).
struct DiskGuardEvent {
  enum class Kind {
    kStopped,  // kStop: free space below the limit; the recording stops (on_error follows)
    kRemoved,  // kRotate: segment `segment` (`segment_bytes` bytes) was removed
    kRefused,  // kRotate: still below the limit and only segment `segment`, the one being
               // written, is left; reported once until free space is back at the limit
  };
  Kind kind = Kind::kStopped;
  uint64_t free_bytes = 0;      // free space measured (kRemoved: after the removal)
  uint64_t min_free_bytes = 0;  // the limit
  uint64_t segment = 0;         // kRemoved: the removed segment; kRefused: the one left
  uint64_t segment_bytes = 0;   // kRemoved: its size (what the removal freed in the files)
  // One line with the numbers, e.g. "free space 20.1 MB on rec is below min_free_bytes
  // 25.2 MB: recording stopped" or "removed segment 00000003.seg (4.2 MB) of rec for
  // min_free_bytes 25.2 MB: free space now 29.3 MB".
  std::string message;
};

struct SegmentWriterOptions {
  // Soft ceiling of a chunk's raw size: a record that does not fit closes the chunk; a record
  // larger than this gets a chunk of its own. Default 4 MiB.
  uint32_t chunk_max_bytes = 4u << 20;
  // A chunk holding records closes when it is this old (the writer thread checks it).
  // Default 100 ms.
  std::chrono::milliseconds chunk_max_age{100};
  // A segment file rolls before a chunk would take it over this size. Default 256 MiB.
  uint64_t segment_max_bytes = 256ull << 20;
  // A segment rolls when it has been open this long; 0 = no limit. Default 10 minutes.
  std::chrono::milliseconds segment_max_duration{600'000};
  // Default kLz4.
  Compression compression = Compression::kLz4;
  // LZ4_compress_fast acceleration. Default format::kDefaultLz4Acceleration (16).
  int lz4_acceleration = format::kDefaultLz4Acceleration;
  // Store a chunk raw when LZ4 saves less than this fraction of its size. Default 0.02.
  double min_compression_saving = 0.02;
  // Default kChunk.
  FsyncPolicy fsync = FsyncPolicy::kChunk;
  // Chunks of at least direct_io_min_bytes (stored) are written with O_DIRECT from their own
  // (huge-page) buffers, bypassing the page cache, at file offsets that are multiples of 4 KiB:
  // such a chunk is followed by up to 4095 zero bytes of padding. Smaller chunks go through the
  // page cache, and so does everything where the filesystem refuses O_DIRECT
  // (io_description() says which). Default true, 256 KiB.
  bool direct_io = true;
  uint32_t direct_io_min_bytes = 256u << 10;
  // Period for FsyncPolicy::kInterval. Default 1 s.
  std::chrono::milliseconds fsync_interval{1000};
  // FsyncPolicy::kChunk: the background fdatasyncs start at least this far apart, so that a
  // stream of chunks that each take less than this to sync (small ones: LZ4 over compressible
  // samples) shares one fdatasync, and one index transaction, per interval instead of paying one
  // per chunk; the index rows wait for it. flush(), segment rolls and close() do not wait for
  // the interval. 0: each sync starts as soon as the one before has ended. Default 10 ms.
  std::chrono::milliseconds min_sync_spacing{10};
  // After each fdatasync the synced part of the segment is dropped from the page cache
  // (POSIX_FADV_DONTNEED): a long recording does not push everything else out of memory, and
  // the kernel writes the next chunks into the pages just freed (on a VM, touching memory the
  // guest has not used before costs more than the copy). Nothing is dropped with kNone.
  // Default true.
  bool drop_synced_pages = true;
  // Total capacity of the chunk buffers (open + queued + being written). When all are in flight,
  // try_append returns kFull and append blocks. A record larger than this is still accepted when
  // the queue is empty. Default 64 MiB.
  uint64_t queue_max_bytes = 64ull << 20;
  // Largest accepted payload (kInvalidArgument above it); at most 1 GiB - 4 KiB. Default 64 MiB.
  uint32_t max_record_bytes = 64u << 20;
  // Retention: remove whole segments, oldest first, while the recording is larger than this
  // (0 = unlimited). The segment being written is never removed. Default 0.
  uint64_t retention_max_bytes = 0;
  // Retention: remove whole segments whose newest record is older than this (now_ns against
  // reception time); 0 = unlimited. Default 0.
  std::chrono::seconds retention_max_age{0};
  // Now, in nanoseconds since the UNIX epoch, on the clock the reception times come from (the
  // recorder's: pubsub::ReceptionClock). Default (empty): the wall clock.
  std::function<int64_t()> now_ns;
  // Disk guard: the free space of the recording's filesystem must stay at least this; 0 = off.
  // The writer thread checks it when it starts, at every segment roll (once the new segment is
  // open, before data goes into it) and every disk_check_interval, and acts by on_low_space.
  // Default 0.
  uint64_t min_free_bytes = 0;
  // Default kStop.
  LowSpacePolicy on_low_space = LowSpacePolicy::kStop;
  // Period of the disk guard's checks between rolls. Default 2 s.
  std::chrono::milliseconds disk_check_interval{2000};
  // The free space of the filesystem holding `dir` (the recording directory), in bytes. Default
  // (empty): statvfs(dir), f_bavail * f_frsize (what df calls available). An error fails the
  // writer like a failed write. Tests inject a model of a small disk here.
  std::function<Result<uint64_t>(const std::string& dir)> free_space;
  // Called from the writer thread for each thing the disk guard does (kStopped before the
  // writer fails with kLowSpace). Must not call back into the writer. Default none.
  std::function<void(const DiskGuardEvent&)> on_disk_guard;
  // Called once a segment file is complete - rolled, or finished by close() - with its path,
  // after its fdatasync (unless fsync is kNone); from the writer thread or close()'s thread. The
  // index marks it closed in the same or the next transaction. Must not call back into the
  // writer; must be quick (pubsub-recorder queues storage.on_segment_closed). Default none.
  std::function<void(const std::string& path)> on_segment_finished;
  // Test hook: the writer thread sleeps this long before each chunk (back-pressure tests).
  // Default 0.
  std::chrono::milliseconds test_delay_per_chunk{0};
  // Test hook: the background fdatasync of FsyncPolicy::kChunk sleeps this long first (a slow
  // disk). Default 0.
  std::chrono::milliseconds test_delay_per_sync{0};
  // Called once, from the writer thread, when it fails (e.g. disk full, or kLowSpace when the
  // disk guard stops the recording; should writing out what was accepted fail after that, once
  // more with that error). Must not call back into the writer. Default none.
  std::function<void(const Status&)> on_error;
};

struct WriterStats {
  uint64_t records_appended = 0;     // data records accepted by append/try_append
  uint64_t bytes_appended = 0;       // their payload bytes
  uint64_t records_written = 0;      // data records in chunks written to segment files
  uint64_t bytes_written = 0;        // their payload bytes
  uint64_t chunks_written = 0;       // chunks written (including definition chunks)
  uint64_t file_bytes = 0;           // bytes written to segment files (headers, bodies, padding)
  uint64_t direct_chunks = 0;        // chunks written with O_DIRECT
  uint64_t padding_bytes = 0;        // zero bytes after chunks, for O_DIRECT's alignment
  uint64_t appender_crc_chunks = 0;  // chunks stored raw whose CRC the appenders had taken
                                     // (every record >= 24 KiB) instead of the writer thread
  uint64_t queued_bytes = 0;         // raw bytes in chunk buffers not yet written (open + queued)
  uint64_t queue_in_use_bytes = 0;   // capacity of buffers in flight (compare queue_max_bytes):
                                     // the open chunk's and those closed, not yet written
  uint64_t open_chunk_bytes = 0;     // raw bytes in the chunk being filled (0: none open)
  uint64_t open_chunk_capacity = 0;  // its buffer's capacity, part of queue_in_use_bytes
  uint64_t queue_max_bytes = 0;
  uint64_t full_events = 0;  // try_append calls that returned kFull
  uint64_t segments_created = 0;
  uint64_t segments_removed = 0;   // by retention and the disk guard
  uint64_t low_space_removed = 0;  // of segments_removed: by the disk guard (kRotate)
  uint64_t free_bytes = 0;         // free space at the disk guard's latest check (0: none yet)
  uint64_t gaps = 0;               // gap rows recorded (sequence jumps)
  uint64_t syncs = 0;              // fdatasync calls on segment files
};

class SegmentWriter {
 public:
  // Creates a new recording in `dir` (created if missing; must not already hold index.sqlite3)
  // and starts the writer thread.
  static Result<std::unique_ptr<SegmentWriter>> create(const std::string& dir,
                                                       SegmentWriterOptions options = {});
  // Closes (see close()) if not closed; an error is then only visible through on_error.
  ~SegmentWriter();
  SegmentWriter(const SegmentWriter&) = delete;
  SegmentWriter& operator=(const SegmentWriter&) = delete;

  // Defines a topic; written into the segment stream and repeated at the start of each segment.
  Result<TopicId> add_topic(const TopicDef& def);
  // Defines a writer of an existing topic.
  Result<WriterId> add_writer(const WriterDef& def);
  // Defines (or redefines) a topic data type, repeated at the start of each segment like topics.
  // A definition equal to the one stored for its name and source is not written again.
  Status add_type(const TypeDef& def);
  // Puts a mark (tag, pause, resume) into the open chunk; indexed with it.
  Status add_mark(const Mark& mark);
  // The writer's records up to `sequence` were left out on purpose (a pause): a later record
  // after them is no gap.
  Status skip_to(WriterId writer, int64_t sequence);
  // The writer's records `first` to `last` are missing though no later record of it shows it
  // (it went away before they were delivered): a gap entry [first, last] in the open chunk,
  // indexed as a sequence jump's is. A later record after `last` is no second gap.
  Status add_gap(WriterId writer, int64_t first, int64_t last);

  // Copies the record into the open chunk. Returns kFull (without blocking) when it needs a new
  // chunk buffer and all are in flight. A sequence jump of the writer (seq > last + 1) records a
  // gap [last + 1, seq - 1].
  Status try_append(const RecordMeta& meta, ByteSpan payload);
  // Like try_append but waits for a free chunk buffer instead of returning kFull.
  Status append(const RecordMeta& meta, ByteSpan payload);
  // One lock for a batch of appends from one thread (the samples of one datagram) instead of one
  // per record. While an AppendLock lives its thread holds the writer's lock: other threads'
  // calls wait, and this thread may call only try_append(lock, ...) on this writer. Hold it for
  // one batch, not longer: the writer thread waits for it to take full chunks.
  using AppendLock = storage::AppendLock<SegmentWriter>;
  AppendLock lock_appends();
  // try_append under a batch's lock (of this writer).
  Status try_append(AppendLock& lock, const RecordMeta& meta, ByteSpan payload);
  // Gather variants: the payload is the concatenation of `parts` (e.g. the fragments of a
  // sample), still copied once, straight into the chunk buffer.
  Status try_append_parts(const RecordMeta& meta, std::span<const ByteSpan> parts);
  Status append_parts(const RecordMeta& meta, std::span<const ByteSpan> parts);
  // Closes the open chunk and waits until every queued chunk is written and indexed (and
  // fdatasync'ed unless the policy is kNone).
  Status flush();
  // Closes the open chunk, waits until it is written, then finishes the current segment and
  // opens the next. Returns the number of the segment records go to from now on (the current
  // one when it holds no chunk yet: nothing to split).
  Result<uint64_t> split();
  // Flushes, finishes the last segment, marks the recording clean and stops the writer thread.
  // Further calls return kClosed (or the sticky error). After the disk guard stopped the
  // recording (kLowSpace) the recording is still finished cleanly, and kLowSpace is returned.
  Status close();

  WriterStats stats() const;
  // How the current segment is written, for logs: "O_DIRECT for chunks of 262144 bytes and
  // more, page cache below", or "page cache (...)" with the reason. Empty before the first
  // segment is open.
  std::string io_description() const;
  // The sticky error of the writer thread, ok while healthy.
  Status error() const;
  const std::string& directory() const;

  struct Impl;

 private:
  explicit SegmentWriter(std::unique_ptr<Impl> impl);
  Status append_impl(const RecordMeta& meta, std::span<const ByteSpan> parts, bool block);
  Status append_locked(const RecordMeta& meta, std::span<const ByteSpan> parts, bool block,
                       std::unique_lock<std::mutex>& lk);
  std::unique_ptr<Impl> impl_;
};

}  // namespace storage
