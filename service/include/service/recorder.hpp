// Recorder: the recording service behind pubsub-recorder. It joins a domain with a RawReader on
// every topic the configuration selects and appends every sample, with its metadata, to a
// storage::SegmentWriter.
//
// OVERVIEW
// - The participant's receive workers and its shared-memory thread run on_sample(), possibly at
//   the same time: it maps the sample's topic and writer to storage ids (a per-thread cache of
//   the last writer; on a miss the maps under maps_mu, defining them on first sight), and copies
//   the record into the open chunk with try_append. Only then does it return true, which lets
//   the reader acknowledge it. A writer's samples all come through one reader, whose lock
//   orders them (recorder_impl.hpp, WriterState). When every chunk buffer is in flight (storage is
//   behind), try_append says kFull, on_sample returns false, and the sample stays
//   unacknowledged: the reader stops advancing, writers' histories fill and their write()
//   blocks. The reader offers refused samples again every few milliseconds (and at once through
//   resume(), which run() calls on the caller's thread when new refusals appear).
// - A matched writer's topic is defined (index row, type rendering, TypeLookup request) by the
//   registrar thread, usually before its first sample arrives; a sample that arrives first
//   defines it on its delivering thread. The writer's own row is added at its first sample
//   (its data representation may be read from that sample's encapsulation).
// - Memory: chunk buffers are bounded by queue_max_bytes (storage); samples the reader holds
//   back are bounded by the RawReader's resource limits (kHeldBackBytes); nothing else grows
//   with the traffic.
// - The caller's thread runs run(): it waits for a stop signal or the duration, logs statistics
//   every stats_interval, then stops the reader, flushes and closes the recording.
// - Snapshot mode ("mode": "snapshot"): the same path ends in a SnapshotSink instead of the
//   SegmentWriter (snapshot_sink.hpp): samples are acknowledged once in its memory ring, and
//   snapshot() writes a recording per snapshot from its own thread.
// - Storage's writer thread compresses, writes, indexes and syncs (see storage/README.md). Its
//   failures (on_error) end run() at once, as does the disk guard (storage.min_free_bytes) under
//   "stop": run() then returns kLowSpace with "free space ... is below storage.min_free_bytes
//   ...: recording stopped" once the recording is closed cleanly. Under "rotate" the guard's
//   removals and refusals are logged as warnings.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/recorder_config.hpp"
#include "pubsub/basics.hpp"
#include "service/result.hpp"
#include "types/catalog.hpp"

namespace service {

struct RecorderOptions {
  // Stop after this long; none = until stop() (SIGINT/SIGTERM in the program).
  std::optional<std::chrono::duration<double>> duration;
  // Test hook: storage's writer thread sleeps this long per chunk (back-pressure tests).
  std::chrono::milliseconds test_storage_delay{0};
  // Test hook: the registrar thread waits this long before each batch of matched writers (so
  // that their first samples come before it has prepared them).
  std::chrono::milliseconds test_registrar_delay{0};
  // Hooks for a service manager (systemd: READY=1, STATUS=, WATCHDOG=1, STOPPING=1), all called
  // on run()'s thread. on_ready: once, when the recording is open and the participant is up.
  // on_stats: the statistics line, every stats interval. on_tick: at least every 50 ms while
  // run() is healthy. on_stopping: once, when run() stops recording (stop(), the duration or a
  // storage failure) and starts closing the recording.
  std::function<void()> on_ready;
  std::function<void(const std::string&)> on_stats;
  std::function<void()> on_tick;
  std::function<void()> on_stopping;
};

struct RecorderTotals {
  uint64_t samples = 0;
  uint64_t bytes = 0;
  uint64_t refused = 0;  // deliveries held back because storage was full
  uint64_t lost = 0;     // sequence gaps of best-effort writers (samples never received)
  uint64_t topics = 0;
  uint64_t writers = 0;
  uint64_t writers_not_matched = 0;  // writers the recorder could not read (stored, 0 samples)
  uint64_t writers_elsewhere = 0;    // topics.writers local: other hosts' writers, not recorded
  uint64_t samples_shm = 0;          // of samples: read from publishers' shared memory (same host)
  double seconds = 0;
};

// The recorder's state for the control commands (status) and the metrics.
struct TopicStatus {
  std::string name;
  uint64_t samples = 0, bytes = 0, lost = 0;
  uint64_t skipped = 0;  // samples received while the topic was paused (acknowledged, not stored)
  uint64_t writers = 0;
  bool paused = false;
};

// Snapshot mode ("mode": "snapshot"): what a snapshot trigger did.
struct SnapshotTrigger {
  std::filesystem::path path;  // the snapshot's recording
  bool extended = false;       // it fell in the window of the snapshot being made: extended
  int64_t trigger_ns = 0;
  int64_t from_ns = 0;  // the snapshot's window (reception times), as it stands now
  int64_t until_ns = 0;
};

// Snapshot mode: the memory buffer and the snapshots.
struct SnapshotStatus {
  uint64_t buffered_samples = 0;
  uint64_t buffered_bytes = 0;   // memory in use (compressed chunks + the open chunk)
  uint64_t max_bytes = 0;        // snapshot.max_bytes
  double buffered_seconds = 0;   // newest - oldest buffered entry
  uint64_t dropped_samples = 0;  // evicted for memory before before_s was up (counted loss)
  uint64_t snapshots = 0;        // finished
  bool writing = false;          // a snapshot is being made
  std::string last_path;         // the latest snapshot started
};

struct RecorderStatus {
  uint64_t samples = 0;    // recorded so far
  uint64_t bytes = 0;      // payload bytes recorded so far
  uint64_t lost = 0;       // sequence gaps of best-effort writers
  uint64_t held_back = 0;  // deliveries refused because storage was full (back-pressure)
  uint64_t skipped = 0;    // samples not recorded because their topic was paused
  uint64_t samples_shm = 0;
  uint64_t writers = 0;  // matched writers now
  // topics.writers "local": writers on other hosts matched so far (acknowledged, not recorded).
  uint64_t writers_elsewhere = 0;
  double queue_fill = 0;     // closed chunks waiting for the disk / queue_max_bytes, 0..1 (the
                             // chunk being filled is not counted; snapshot mode: the buffer)
  bool paused = false;       // every topic paused (pause without topics)
  bool armed = false;        // control.armed and not started yet: nothing is recorded
  std::string recording_id;  // the id the start command gave ("" none)
  double seconds = 0;        // since run() started
  std::string path;          // the recording directory (snapshot mode: their parent)
  uint64_t free_bytes = 0;   // available to unprivileged users on path's file system (df)
  std::vector<TopicStatus> topics;         // by name
  std::string mode = "record";             // "record" or "snapshot"
  std::optional<SnapshotStatus> snapshot;  // snapshot mode
  // Endpoint pairs that do not match because a requested/offered QoS rule fails, by policy name
  // ("DEADLINE"): the recorder's own endpoints (DDS control) against others, and writers the
  // recorder cannot read (a data representation other than XCDR1/XCDR2: "DATA_REPRESENTATION").
  // Otherwise its readers ask for what each writer offers, so every other writer matches.
  std::map<std::string, uint64_t> incompatible_qos;
  // DDS control (control.dds): requests refused so far, by reason ("unsigned", "bad_signature",
  // "stale", "replayed", "not_allowed"); empty without DDS control.
  std::map<std::string, uint64_t> control_refused;
  // Announcements refused by the discovery limits (config "discovery"): "participants" and
  // "endpoints", each counted every time it is announced again.
  std::map<std::string, uint64_t> discovery_refused;
  // The wall clock minus reception times (which follow the monotonic clock from the start), as
  // of the last look (once a second), and the steps of the wall clock seen since the start.
  double wall_clock_offset_s = 0;
  uint64_t clock_steps = 0;
  // storage.on_segment_closed's commands (only with one configured): finished, of them failed,
  // and queued or running.
  struct Hooks {
    uint64_t run = 0, failed = 0, pending = 0;
  };
  std::optional<Hooks> hooks;
};

// Where the control socket of a recorder with this configuration is: control.socket, relative to
// storage.path; empty = none.
std::filesystem::path control_socket_path(const config::RecorderConfig& config);

// Parses the configuration's types.idl files (in order). Errors (kInvalidArgument): the
// parser's "FILE:LINE:COLUMN: message", or the file's read error.
Result<types::TypeCatalog> load_idl_types(const config::RecorderConfig& config);

// What --check-config tries beyond the file (the start tries the same): the interface exists
// (the message lists those that do), metrics.listen can be bound, a control socket outside the
// recording can be listened on. Creates nothing that outlives the call. Each problem is one line
// "/json/path: reason"; empty = the start would get past them.
std::vector<std::string> check_start(const config::RecorderConfig& config);

class Recorder {
 public:
  // Creates the participant and the recording (the configuration must have been validated,
  // including validate_storage_path). Errors are one readable line.
  static Result<std::unique_ptr<Recorder>> create(const config::RecorderConfig& config,
                                                  const RecorderOptions& options);
  ~Recorder();

  // Records until stop() or the duration; returns the final totals, or the storage error that
  // ended the recording.
  Result<RecorderTotals> run();
  // Thread- and signal-safe request to end run().
  void stop();

  // Control commands; any thread, while run() runs. Refusals (kInvalidArgument) carry the
  // reason: "already paused", "not paused", "no topic \"x\" is recorded", ...
  RecorderStatus status();
  // Stops recording the topics (all, when empty; topics matched later too): their samples are
  // acknowledged and dropped, and the recording gets a pause mark, so the gap is no loss.
  Result<void> pause(const std::vector<std::string>& topics);
  Result<void> resume(const std::vector<std::string>& topics);
  // An armed recorder (control.armed) starts recording every topic: a start mark named
  // `recording_id` ("" or 1..128 of A-Z a-z 0-9 . _ : -) goes into the recording, and status
  // reports the id. Returns the start time. Refused when the recorder is not armed.
  Result<int64_t> start(const std::string& recording_id);
  // Ends the current segment; returns the number of the segment recording goes on in.
  Result<uint64_t> split();
  // Puts a tag named `name` (1..256 bytes) with the current time into the recording; returns
  // that time (nanoseconds since the UNIX epoch).
  Result<int64_t> tag(const std::string& name, const std::string& note);
  // Snapshot mode: starts a snapshot, or extends the one being made (see SnapshotTrigger). `tag`:
  // "" or 1..64 of [A-Za-z0-9._-], part of the directory name. Refused in record mode.
  Result<SnapshotTrigger> snapshot(const std::string& tag);

 private:
  struct Impl;  // recorder_impl.hpp

  explicit Recorder(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace service
