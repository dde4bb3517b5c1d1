// Recorder: the recording service behind pubsub-recorder. It joins a domain with a RawReader on
// every topic the configuration selects and appends every sample, with its metadata, to a
// storage::SegmentWriter.
//
// OVERVIEW
// - The participant's receive workers and its shared-memory thread run on_sample(), possibly at
//   the same time (recorder.cpp serialises them with sample_mu): it maps the sample's topic and
//   writer to storage ids (defining them on first sight), and copies the record into the open
//   chunk with try_append. Only then does it return true, which lets the reader acknowledge it.
//   When every chunk buffer is in flight (storage is behind), try_append says kFull, on_sample
//   returns false, and the sample stays unacknowledged: the reader stops advancing, writers'
//   histories fill and their write() blocks. The reader offers refused samples again every few
//   milliseconds (and at once through resume(), which run() calls on the caller's thread when
//   new refusals appear).
// - Memory: chunk buffers are bounded by queue_max_bytes (storage); samples the reader holds
//   back are bounded by the RawReader's resource limits (kHeldBackBytes); nothing else grows
//   with the traffic.
// - The caller's thread runs run(): it waits for a stop signal or the duration, logs statistics
//   every stats_interval, then stops the reader, flushes and closes the recording.
// - Storage's writer thread compresses, writes, indexes and syncs (see storage/README.md). Its
//   failures (on_error) end run() at once, as does the disk guard (storage.min_free_bytes) under
//   "stop": run() then returns kLowSpace with "free space ... is below storage.min_free_bytes
//   ...: recording stopped" once the recording is closed cleanly. Under "rotate" the guard's
//   removals and refusals are logged as warnings.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "config/recorder_config.hpp"
#include "pubsub/types.hpp"
#include "types/catalog.hpp"

namespace service {

struct RecorderOptions {
  // Stop after this long; none = until stop() (SIGINT/SIGTERM in the program).
  std::optional<std::chrono::duration<double>> duration;
  // Test hook: storage's writer thread sleeps this long per chunk (back-pressure tests).
  std::chrono::milliseconds test_storage_delay{0};
  // Hooks for a service manager (systemd: READY=1, STATUS=, WATCHDOG=1), all called on run()'s
  // thread. on_ready: once, when the recording is open and the participant is up. on_stats: the
  // statistics line, every stats interval. on_tick: at least every 50 ms while run() is healthy.
  std::function<void()> on_ready;
  std::function<void(const std::string&)> on_stats;
  std::function<void()> on_tick;
};

struct RecorderTotals {
  uint64_t samples = 0;
  uint64_t bytes = 0;
  uint64_t refused = 0;  // deliveries held back because storage was full
  uint64_t lost = 0;     // sequence gaps of best-effort writers (samples never received)
  uint64_t topics = 0;
  uint64_t writers = 0;
  uint64_t samples_shm = 0;  // of samples: read from publishers' shared memory (same host)
  double seconds = 0;
};

// Parses the configuration's types.idl files (in order). Errors (kInvalidArgument): the
// parser's "FILE:LINE:COLUMN: message", or the file's read error.
pubsub::Result<types::TypeCatalog> load_idl_types(const config::RecorderConfig& config);

class Recorder {
 public:
  // Creates the participant and the recording (the configuration must have been validated,
  // including validate_storage_path). Errors are one readable line.
  static pubsub::Result<std::unique_ptr<Recorder>> create(const config::RecorderConfig& config,
                                                          const RecorderOptions& options);
  ~Recorder();

  // Records until stop() or the duration; returns the final totals, or the storage error that
  // ended the recording.
  pubsub::Result<RecorderTotals> run();
  // Thread- and signal-safe request to end run().
  void stop();

  struct Impl;

 private:
  explicit Recorder(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace service
