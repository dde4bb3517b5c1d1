// SnapshotRing: the last seconds of a recording kept in memory, as compressed chunks in a ring
// (pubsub-recorder's snapshot mode). Nothing is written to disk here: a snapshot takes chunks
// out of the ring (shared, immutable) and appends their entries to a SegmentWriter.
//
// OVERVIEW
// - Appenders (any thread; one internal mutex, held per record or, with lock_appends(), per batch
//   of records) encode records, marks and skips into the open chunk with the segment format's
//   entry encoding (storage/format.hpp). A chunk is sealed (LZ4-compressed when that saves at
//   least 2%, with the segment writer's backoff after a chunk that did not compress; else the
//   open buffer itself becomes the chunk and the buffer of an evicted raw chunk, when nobody
//   holds it, the next open one - no fresh pages in steady state; numbered, pushed to the back of
//   the ring) when the next entry would take it past chunk_max_bytes, when it is older than
//   chunk_max_age (poll()), or on seal().
// - The ring keeps chunks whose newest entry is at most `keep` older than poll()'s clock (time
//   eviction: the normal end of a chunk's life), and at most max_bytes of memory (stored chunk
//   bytes plus the open chunk): past it the oldest chunks go first and are counted
//   (evicted_for_memory), since a snapshot can no longer hold them. The newest sealed chunk is
//   never evicted for memory.
// - Snapshots read with chunks_from(index): the sealed chunks numbered index and later, as
//   shared pointers; they stay valid while held even after the ring dropped them. Chunks between
//   `index` and the oldest one the ring still has were evicted before the reader took them
//   (`missed`).
// - Entries of a ring chunk: data records, marks (MarkKind) and skips. A skip is stored as a gap
//   entry (EntryKind::kGap) and means "the writer's records up to last_missing were left out on
//   purpose" (a paused topic; SegmentWriter::skip_to), not a loss: a ring is never a recording.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "storage/append_lock.hpp"
#include "storage/format.hpp"
#include "storage/records.hpp"
#include "storage/status.hpp"

namespace storage {

struct SnapshotRingOptions {
  // How long a chunk stays after its newest entry (snapshot.before_s). Default 30 s.
  std::chrono::nanoseconds keep = std::chrono::seconds(30);
  // Memory bound: the buffers of the sealed chunks (compressed, or raw) plus the open chunk's
  // buffer. Default 256 MiB.
  uint64_t max_bytes = 256ull << 20;
  // A chunk is sealed before an entry would take its raw size past this (an entry larger than it
  // gets a chunk of its own). Default 1 MiB.
  uint32_t chunk_max_bytes = 1u << 20;
  // poll() seals a chunk holding entries for this long. Default 100 ms.
  std::chrono::milliseconds chunk_max_age{100};
  bool compress = true;
  int lz4_acceleration = format::kDefaultLz4Acceleration;
};

// One sealed chunk. Times are those of its entries (records: reception time; marks: their time).
struct SnapshotChunk {
  uint64_t index = 0;  // 1, 2, 3 ... in sealing order
  int64_t first_ns = 0, last_ns = 0;
  uint32_t records = 0;   // data records
  uint32_t entries = 0;   // all entries
  uint32_t raw_size = 0;  // size of the encoded entries
  bool lz4 = false;       // `stored` is their LZ4 block, else the entries themselves
  Bytes stored;
};

struct SnapshotRingStats {
  uint64_t chunks = 0;                   // sealed chunks in the ring
  uint64_t records = 0;                  // data records in the ring (sealed and open)
  uint64_t memory_bytes = 0;             // what max_bytes bounds
  uint64_t raw_bytes = 0;                // encoded size of the entries in the ring (before LZ4)
  int64_t oldest_ns = 0, newest_ns = 0;  // over the ring's entries; 0 when empty
  uint64_t evicted_for_memory_chunks = 0, evicted_for_memory_records = 0;
  uint64_t evicted_for_age_chunks = 0, evicted_for_age_records = 0;
};

class SnapshotRing {
 public:
  explicit SnapshotRing(SnapshotRingOptions options = {});

  // Copies the record into the open chunk (sealing it first when full, then evicting for
  // memory). kInvalidArgument for a record whose reception time is 0.
  Status append(const RecordMeta& meta, ByteSpan payload);
  // One lock for a batch of appends from one thread (the samples of one datagram) instead of one
  // per record, as SegmentWriter::AppendLock: while an AppendLock lives its thread holds the
  // ring's lock (other threads' calls wait), and this thread may call only append(lock, ...) on
  // this ring. Hold it for one batch, not longer.
  using AppendLock = storage::AppendLock<SnapshotRing>;
  AppendLock lock_appends();
  // append under a batch's lock (of this ring).
  Status append(AppendLock& lock, const RecordMeta& meta, ByteSpan payload);
  void add_mark(const Mark& mark);
  // The writer's records up to `sequence` were left out on purpose (see the overview).
  void add_skip(WriterId writer, int64_t sequence, int64_t time_ns);
  // Seals the open chunk when it holds entries.
  void seal();
  // Seals the open chunk when older than chunk_max_age, then evicts the chunks whose newest
  // entry is older than now_ns - keep. Call every few tens of milliseconds.
  void poll(int64_t now_ns);

  // Sealed chunks numbered `index` and later, oldest first. `missed`: how many of those numbers
  // were evicted already. The next call's `index` is the last one's index + 1 (or next_index()).
  std::vector<std::shared_ptr<const SnapshotChunk>> chunks_from(uint64_t index,
                                                                uint64_t* missed = nullptr) const;
  // The number the next sealed chunk gets.
  uint64_t next_index() const;
  SnapshotRingStats stats() const;

  // Decodes a chunk (`scratch` receives the raw entries of an LZ4 chunk) and calls `each` for
  // each entry in order; stops at the first error (its own or `each`'s).
  static Status for_each_entry(const SnapshotChunk& chunk, Bytes& scratch,
                               const std::function<Status(const format::Entry&)>& each);

 private:
  Status append_locked(const RecordMeta& meta, ByteSpan payload);
  void seal_locked();
  bool compress_locked(Bytes& out);
  void drop_front_locked(uint64_t& chunks, uint64_t& records);
  void evict_for_memory_locked();
  void note_entry_locked(int64_t time_ns, bool record);
  // Room for `need` more bytes after the open chunk's entries, at open_size_.
  uint8_t* room_locked(size_t need);
  void put_entry_locked(const Bytes& entry);
  uint64_t memory_locked() const { return stored_bytes_ + open_.capacity(); }

  const SnapshotRingOptions opt_;
  mutable std::mutex mu_;
  std::deque<std::shared_ptr<SnapshotChunk>> ring_;  // handed out as const
  uint64_t stored_bytes_ = 0;  // sum of ring_'s stored capacities (the memory they hold)
  uint64_t ring_raw_bytes_ = 0;
  uint64_t ring_records_ = 0;
  uint64_t next_index_ = 1;
  // The open chunk: its entries are open_[0, open_size_); open_'s size is the room it has (grown
  // in steps when needed, never shrunk while open), so that a record is written without filling
  // its place with zeros first.
  Bytes open_;
  size_t open_size_ = 0;
  std::vector<Bytes> spare_;  // buffers of evicted raw chunks, for the next open chunks
  Bytes lz4_buf_;
  format::Lz4Backoff lz4_backoff_;
  format::DeltaState delta_;
  int64_t open_first_ns_ = 0, open_last_ns_ = 0;
  uint32_t open_records_ = 0, open_entries_ = 0;
  std::chrono::steady_clock::time_point open_since_;
  SnapshotRingStats evicted_;  // the eviction counters only
};

}  // namespace storage
