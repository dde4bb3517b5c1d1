// Recording: read access to a recording directory written by SegmentWriter.
//
// Opening never modifies files unless asked: Recording::open() is read-only. If the recording
// was not closed cleanly (writer killed, disk full, power loss), open() checks the tail of every
// unfinished segment chunk by chunk and works on a private in-memory copy of the index in which
// chunks past the first incomplete or corrupt one are dropped and chunks written but not indexed
// are added. Recording::recover() does the same on disk: it copies the torn tails to
// DIR/recovered/, truncates them, re-syncs index.sqlite3 and marks the recording recovered
// (needs write access). Recording::reindex() rebuilds index.sqlite3 from the segment files alone.
//
// How a recording was closed (CloseState) is kept in the index: clean (the writer closed it),
// recovered (recover() finished it after a crash) or unclean (neither). Only the writer's close
// and recover() change it; reindex() keeps it (and never makes an unclean recording clean).
//
// A recording being written is live: its writer holds DIR/writer.lock (WriterLock), which
// recover() and reindex() take too, so they refuse it (kBusy) instead of cutting a tail that is
// still growing; open() reports it (lock_state()) and reads it as an unclean one.
//
// Threads: a Recording and its cursors belong to one thread at a time (they share one SQLite
// connection and file handles). Open several Recordings for parallel readers.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "storage/format.hpp"
#include "storage/index.hpp"
#include "storage/records.hpp"
#include "storage/status.hpp"
#include "storage/writer_lock.hpp"

namespace storage {

// Something wrong with one place of a recording.
struct Problem {
  enum class Kind {
    kTornTail,        // the end of a segment is incomplete or corrupt and was (or would be) cut
    kCorruptChunk,    // a chunk fails its checksum or does not decode; its records are skipped
    kMissingSegment,  // the index names a segment file that does not exist
    kUnindexedChunk,  // a valid chunk in a segment that the index does not list
    kIndexMismatch,   // the index disagrees with a chunk (counts, ranges, location)
    kBadSegment,      // a segment file without a valid header
    kTruncated,       // the segment file ends before (or inside) chunks the index lists
  };
  Kind kind = Kind::kCorruptChunk;
  uint64_t segment = 0;         // segment number
  uint64_t offset = 0;          // byte offset of the chunk (or of the cut) in the segment file
  uint64_t chunk_sequence = 0;  // 0 when unknown
  std::vector<TopicId> topics;  // topics whose records are affected (from the index), if known
  int64_t first_recv_ns = 0;    // reception time range affected, if known (else 0, 0)
  int64_t last_recv_ns = 0;
  uint64_t records = 0;  // records affected, if known
  std::string message;   // what is wrong
  uint64_t chunks = 0;   // kTruncated: indexed chunks cut
  uint64_t bytes = 0;    // kTruncated, kTornTail: bytes missing (0: unknown); kCorruptChunk: span
  uint64_t tail_bytes = 0;    // kTruncated, kTornTail: bytes of a cut chunk left at the file's end
  bool records_known = true;  // false: no index row or chunk header says how many records
};
const char* to_string(Problem::Kind kind);

enum class CloseState { kClean, kRecovered, kUnclean };
// "clean", "recovered", "unclean".
const char* to_string(CloseState state);
using ProblemCallback = std::function<void(const Problem&)>;

struct RecordingOptions {
  // Verify each chunk's body checksum when reading it. Default true.
  bool verify_checksums = true;
  // Limits for decoding (largest chunk and record accepted). Default: 1 GiB each.
  format::DecodeLimits limits;
  // Receives problems found while opening (tail recovery) and while reading. Default: none
  // (problems are still counted in RecoveryReport and Cursor::problems()).
  ProblemCallback on_problem;
};

// One damage of a recording as Recording::diagnose() classifies it. Each kind has one command
// that repairs it (repair_command()).
struct Damage {
  enum class Kind {
    kTruncated,       // bytes missing at the end of a segment: the chunks there are cut
    kCorruptChunk,    // a chunk fails its checksum or does not decode (or a segment header is bad)
    kMissingSegment,  // a segment file the index names does not exist
    kIndexMissing,    // no index.sqlite3 (the segments are there)
    kIndexStale,      // the segments hold valid chunks the index does not list, or rows differ
    kUnclean,         // not closed cleanly (the writer died): a torn tail or chunks not indexed
  };
  Kind kind = Kind::kCorruptChunk;
  uint64_t segment = 0;  // segment number (0: the whole recording)
  uint64_t offset = 0;   // the damage's first byte (kTruncated: the file's end now)
  uint64_t chunks = 0;   // chunks lost (kIndexStale: not indexed; kIndexMissing: in the segments)
  uint64_t records = 0;  // samples those chunks hold
  bool records_exact = true;    // false: some chunk's count is unknown (its header is cut too)
  uint64_t bytes = 0;           // bytes missing (kTruncated, kUnclean; 0: unknown) or damaged
  uint64_t tail_bytes = 0;      // bytes of cut chunks left at the end of the segment (recover
                                // moves them to DIR/recovered/)
  std::vector<TopicId> topics;  // topics affected, where the index knows
  std::string detail;           // the first underlying message
};
// "truncated segment", "corrupt chunk", "missing segment file", "index missing", "index stale",
// "not closed cleanly".
const char* to_string(Damage::Kind kind);
// "recover" or "reindex": the pubsub-replay command that repairs this kind of damage.
const char* repair_command(Damage::Kind kind);

// What opening (or recover()) found and repaired.
struct RecoveryReport {
  CloseState state = CloseState::kClean;  // as found: unclean ones were checked
  uint64_t chunks_checked = 0;            // tail chunks read and verified
  uint64_t chunks_added = 0;              // valid chunks that were missing from the index
  uint64_t chunks_dropped = 0;  // index rows removed (chunk missing, truncated or corrupt)
  uint64_t bytes_cut = 0;       // bytes past the last good chunk of unfinished segments
  uint64_t records_cut = 0;     // samples the cut chunks held, where their header or row says
  uint64_t problems = 0;
  // recover() only: where the cut bytes were copied (DIR/recovered/...), one file per cut.
  std::vector<std::string> saved_files;
  // recover() only: each damage it repaired (empty: nothing was wrong) and whether it rebuilt
  // the index from the segments.
  std::vector<Damage> repaired;
  bool reindexed = false;
};

struct Diagnosis {
  CloseState state = CloseState::kClean;  // from the index (kUnclean without one)
  LockState lock;
  bool chunks_read = false;      // every chunk was read and checked (else sizes and tails only)
  std::vector<Damage> damages;   // in segment order; empty: nothing wrong
  std::vector<Damage> repaired;  // what recover() repaired earlier (kept in the index)
  uint64_t chunks_ok = 0;        // chunks_read only
  uint64_t records_ok = 0;
};

struct VerifyReport {
  uint64_t segments = 0;
  uint64_t chunks_ok = 0;
  uint64_t chunks_bad = 0;
  uint64_t records = 0;   // data records in the good chunks
  uint64_t problems = 0;  // total reported through the callback
  bool ok() const { return problems == 0; }
};

struct ReindexReport {
  uint64_t segments = 0;
  uint64_t chunks = 0;
  uint64_t records = 0;
  uint64_t problems = 0;  // bad chunks skipped, torn tails ignored
  uint64_t torn_tails = 0;
  CloseState state = CloseState::kUnclean;  // of the new index
};

struct Totals {
  uint64_t topics = 0;
  uint64_t writers = 0;
  uint64_t records = 0;
  uint64_t bytes = 0;  // payload bytes
  uint64_t lost = 0;
  uint64_t chunks = 0;
  uint64_t segments = 0;
  int64_t first_recv_ns = 0;
  int64_t last_recv_ns = 0;
};

struct Query {
  // Topics to return; both empty = all topics. Unknown names match nothing.
  std::vector<TopicId> topic_ids;
  std::vector<std::string> topic_names;
  // Reception time range [start_ns, end_ns).
  int64_t start_ns = std::numeric_limits<int64_t>::min();
  int64_t end_ns = std::numeric_limits<int64_t>::max();
};

// Iterates records in reception-time order (ties: chunk order, then write order), merging the
// chunks that overlap in time. Corrupt chunks are reported and skipped.
class Cursor {
 public:
  ~Cursor();
  Cursor(Cursor&&) noexcept;
  Cursor& operator=(Cursor&&) noexcept;
  // The next record, or nullptr at the end or on a fatal error (see status()). The view and its
  // payload stay valid until the next call to next().
  const RecordView* next();
  // Ok unless iteration stopped on an error (e.g. an index query failed).
  const Status& status() const;
  // Chunks skipped because they could not be read.
  uint64_t problems() const;
  // Chunks read from disk so far (shows that a query seeks instead of scanning).
  uint64_t chunks_loaded() const;

  struct Impl;

 private:
  friend class Recording;
  explicit Cursor(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

class Recording {
 public:
  // Opens read-only; see the top of this file for what happens after a crash.
  static Result<std::unique_ptr<Recording>> open(const std::string& dir,
                                                 RecordingOptions options = {});
  // Repairs an unclean recording in place: copies each torn segment tail (and each segment
  // without a valid header) to DIR/recovered/, truncates the tails, re-syncs the index and marks
  // the recording recovered. Does nothing to a clean or recovered one (idempotent). kBusy (and
  // nothing touched) while another process holds the recording's WriterLock.
  static Result<RecoveryReport> recover(const std::string& dir, ProblemCallback on_problem = {});
  // How the recording in `dir` was closed, from its index alone.
  static Result<CloseState> close_state(const std::string& dir);
  // Rebuilds index.sqlite3 from the segment files alone (atomically replaces the old one).
  // Corrupt chunks are reported and left out; torn tails are ignored (not cut). The close state
  // is the old index's; without a readable old index it is unclean when a tail is torn, else
  // recovered (nothing shows how the writer ended). kBusy (nothing touched) while another process
  // holds the recording's WriterLock.
  static Result<ReindexReport> reindex(const std::string& dir, ProblemCallback on_problem = {});
  // Classifies every damage of the recording in `dir`: truncated segments (counted exactly from
  // the index rows of the chunks cut), corrupt chunks, missing segment files, a missing or stale
  // index, an unclean close. With read_chunks every chunk is read and checked (verify, recover);
  // without, only file sizes and what follows the last indexed chunk of each segment (info). On a
  // live recording the growing tail is not damage. kNotFound when `dir` has neither an index nor
  // segment files.
  static Result<Diagnosis> diagnose(const std::string& dir, bool read_chunks);

  ~Recording();
  Recording(const Recording&) = delete;
  Recording& operator=(const Recording&) = delete;

  const RecoveryReport& recovery() const;
  CloseState close_state() const { return recovery().state; }
  // The writer lock as open() found it: `live` while a recorder (or recover/reindex) writes the
  // recording - its close state is then unclean and its tail still growing, not torn; `stale`
  // when the writer that left it unclean ended without closing it.
  const LockState& lock_state() const;
  bool live() const { return lock_state().live.has_value(); }
  Result<std::vector<TopicInfo>> topics();
  Result<std::vector<WriterInfo>> writers();
  Result<std::vector<SegmentInfo>> segments();
  Result<std::vector<Gap>> gaps();
  // Recorded type definitions, by name then source (none in recordings of format 1 and 2).
  Result<std::vector<TypeDef>> types();
  // Tags and pauses, in time order (none in recordings older than format 4).
  Result<std::vector<Mark>> marks();
  Result<Totals> totals();
  // Topic id by name; 0 when unknown.
  TopicId topic_id(const std::string& name);
  // Records matching `query`, in reception-time order.
  Result<Cursor> query(const Query& query = {});
  // Reads every chunk, checks checksums, decodes every record and compares the index with the
  // segments (counts, ranges, per-topic statistics, unindexed chunks, missing files).
  Result<VerifyReport> verify(const ProblemCallback& on_problem = {});

  struct Impl;

 private:
  Result<VerifyReport> verify_segments(const ProblemCallback& on_problem, bool read_chunks);
  // diagnose(); self_locked: the caller holds the writer lock (recover), so it is not live.
  static Result<Diagnosis> diagnose_impl(const std::string& dir, bool read_chunks,
                                         bool self_locked);
  explicit Recording(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace storage
