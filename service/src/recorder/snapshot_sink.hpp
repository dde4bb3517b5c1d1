// SnapshotSink: the recorder's "mode": "snapshot". Samples go into a storage::SnapshotRing (the
// last snapshot.before_s seconds, compressed, at most snapshot.max_bytes) and are acknowledged
// as soon as they are there. trigger() (ctl snapshot, SIGUSR1) starts a snapshot: a new
// recording DIR/snapshot-YYYYMMDD-HHMMSS.mmm[-TAG] (UTC trigger time) holding the ring's records
// from trigger - before_s on and everything until trigger + after_s; a trigger inside that window
// moves its end to the new trigger + after_s (one recording, no duplicate data). A later
// snapshot starts after the previous one's end at the earliest, so two snapshots never hold the
// same record. Every trigger puts a tag into the snapshot (its TAG, or "snapshot").
// Latched state: for each durable (TRANSIENT_LOCAL or more) writer the sink also keeps its last
// records per instance (key hash; up to its history depth), however old, and a snapshot starts
// with those received before its window - what a late joiner of the original would have got -
// so that replaying any snapshot gives durable readers their state (the skips in between are
// no loss).
//
// OVERVIEW
// - Receive threads: add_topic/add_writer/add_type (definitions, kept here for every snapshot
//   under defs_mu_), try_append/add_mark/skip_to (into the ring, which has its own lock; a batch
//   of appends may hold it across the batch and takes latched_mu_ inside it. Lock order: jobs_mu_
//   before the ring's lock (trigger()) before latched_mu_; nothing takes the ring's lock while
//   holding latched_mu_ or defs_mu_).
// - Control threads: trigger() creates the snapshot's SegmentWriter (so a failure is the
//   trigger's answer), defines the topics, writers and types known so far in it, and queues the
//   job (jobs_mu_).
// - The snapshot thread (one, started by create()) polls the ring every 20 ms (sealing and
//   evicting chunks) and copies the chunks of each queued job into its recording: records and
//   marks whose time is inside the job's window, and skips. Once the window's end is 200 ms past
//   it seals the ring's open chunk, copies the rest and closes the recording. Only this thread
//   touches a job's writer after trigger().
// - close() ends the thread; a snapshot still in its after window is finished with what was
//   received by then.
#pragma once

#include <spdlog/logger.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "service/recorder.hpp"
#include "service/result.hpp"
#include "sink.hpp"
#include "storage/snapshot_ring.hpp"

namespace service {

struct SnapshotSinkOptions {
  std::filesystem::path dir;  // storage.path: the snapshots' recordings are made in it
  std::chrono::nanoseconds before{std::chrono::seconds(30)};
  std::chrono::nanoseconds after{std::chrono::seconds(10)};
  uint64_t max_bytes = 256ull << 20;
  std::chrono::milliseconds chunk_max_age{100};
  // For each snapshot's recording (its on_error: a failed snapshot ends the recorder too).
  storage::SegmentWriterOptions writer;
  // After a snapshot's recording is complete (closed cleanly), with its directory; from the
  // thread that finished it. Default none.
  std::function<void(const std::filesystem::path&)> on_recording_finished;
};

class SnapshotSink final : public Sink {
 public:
  static Result<std::unique_ptr<SnapshotSink>> create(SnapshotSinkOptions options,
                                                      std::shared_ptr<spdlog::logger> log);
  ~SnapshotSink() override;

  Result<storage::TopicId> add_topic(const storage::TopicDef& def) override;
  Result<storage::WriterId> add_writer(const storage::WriterDef& def) override;
  Status add_type(const storage::TypeDef& def) override;
  Status add_mark(const storage::Mark& mark) override;
  Status skip_to(storage::WriterId writer, int64_t sequence) override;
  // Not kept: a ring stores a gap as a skip (snapshot_ring.hpp), and the loss is in the
  // recorder's counts and log.
  Status add_gap(storage::WriterId, int64_t, int64_t) override { return Status{}; }
  Status try_append(const storage::RecordMeta& meta, storage::ByteSpan payload) override;
  // Appends of one batch (a datagram's samples) under one lock of the ring
  // (storage::SnapshotRing::AppendLock): the recorder's receive threads.
  SnapshotSink* batch_snapshot() override { return this; }
  storage::SnapshotRing::AppendLock lock_appends() { return ring_.lock_appends(); }
  Status try_append(storage::SnapshotRing::AppendLock& lock, const storage::RecordMeta& meta,
                    storage::ByteSpan payload);
  // Refused: a snapshot's recording is split by its own size and duration limits.
  Result<uint64_t> split() override;
  SinkFill fill() const override;
  std::string io_description() const override;
  Status close() override;

  // Starts (or extends) a snapshot. `tag`: "" or 1..64 of [A-Za-z0-9._-]. Refused
  // (kInvalidArgument) for a bad tag, kAlreadyExists when the directory exists, else the
  // SegmentWriter's error.
  Result<SnapshotTrigger> trigger(const std::string& tag);
  SnapshotStatus status() const;

  struct Job;

 private:
  SnapshotSink(SnapshotSinkOptions options, std::shared_ptr<spdlog::logger> log);
  void run();
  // Now on the reception times' clock (opt_.writer.now_ns, else the wall clock).
  int64_t now_ns() const;
  // The snapshot thread: copies what is new in the ring into the job; true when it is done.
  bool advance(Job& job, int64_t until_ns, bool finish);
  void define_new(Job& job);
  Status copy_chunk(Job& job, const storage::SnapshotChunk& chunk, int64_t until_ns);
  void finish(Job& job, int64_t until_ns);

  // The latched state: durable writers' last records per instance, whatever their age.
  struct Latched {
    storage::RecordMeta meta;
    storage::Bytes payload;
  };
  struct LatchedWriter {
    size_t depth = 1;
    std::map<storage::KeyHash, std::deque<Latched>> instances;  // no key hash: one instance
  };
  void keep_latched(const storage::RecordMeta& meta, storage::ByteSpan payload);
  // The latched records received before `before_ns`, in reception order.
  std::vector<Latched> latched_before(int64_t before_ns);
  Status write_latched(Job& job);

  const SnapshotSinkOptions opt_;
  std::shared_ptr<spdlog::logger> log_;
  storage::SnapshotRing ring_;
  std::atomic<size_t> durable_writers_{0};  // so that other writers' appends skip latched_mu_
  std::mutex latched_mu_;
  std::map<storage::WriterId, LatchedWriter> latched_;

  mutable std::mutex defs_mu_;
  std::vector<storage::TopicDef> topics_;
  std::vector<storage::WriterDef> writers_;
  std::vector<storage::TypeDef> types_;

  mutable std::mutex jobs_mu_;
  std::condition_variable jobs_cv_;
  std::deque<std::unique_ptr<Job>> jobs_;  // oldest first; only the thread removes
  int64_t last_until_ns_ = 0;              // the end of the latest snapshot's window
  uint64_t finished_ = 0;
  std::string last_path_;
  bool stopping_ = false;
  Status first_error_;
  std::thread thread_;
};

}  // namespace service
