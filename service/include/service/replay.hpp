// pubsub-replay: inspect, verify, export and replay recordings (the logic behind
// bin/pubsub-replay; replay_main.cpp only parses the command line).
//
// Each command takes an options struct and two streams: `out` for its result (the table, the
// JSON, the exported records, the verify listing) and `err` for progress, warnings and errors.
// Every error is one line "pubsub-replay: <message>" on `err`, and the command returns an exit
// code: kExitOk, kExitProblems (verify found damage, or a run failed), kExitUsage (bad
// arguments, a missing or unusable recording), kExitNotClosed (verify: the recording was not
// closed cleanly and only its tail is torn - run recover) or kExitLive (verify, recover,
// reindex: a recorder is still writing it). Nothing here throws on bad input.
//
// How replay publishes (see recording_schema.hpp):
// - One participant; one writer per recorded writer (storage::WriterDef) that has samples in the
//   selection, created with replay_topic()/replay_writer_qos() from the recorded topic: same topic
//   and type names, keyedness, partitions, data representation and reliability. Each replay
//   writer is new, so its sequence numbers start at 1 and readers see a writer that sends a
//   HEARTBEAT and waits for their ACKNACK before its data reaches them (libpubsub does that).
// - Samples go out with Writer::write_serialized: the recorded payload byte for byte (with its
//   encapsulation header), the recorded key hash when there is one, the recorded source
//   timestamp (else the reception time) and the recorded dispose/unregister status.
// - Pacing: one thread walks the records in reception-time order and publishes each at
//   start + (reception - first reception) / rate, sleeping with clock_nanosleep(TIMER_ABSTIME)
//   until shortly before and spinning the rest; a second thread reads and decompresses the
//   recording ahead into a bounded queue so chunk loads never delay a sample.
// - Readers: with wait_readers = N every writer first waits (up to wait_timeout) for N matched
//   readers that have acknowledged it; otherwise publishing starts at once and readers that are
//   discovered later miss what went out before (replay writers are volatile).
// - At the end every writer is flushed and given up to ack_timeout for its reliable readers to
//   acknowledge everything.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "common/expected.hpp"
#include "pubsub/participant.hpp"
#include "service/result.hpp"
#include "storage/recording.hpp"

namespace service::replay {

// Exit statuses of every command. A command decides which applies when it reports an error:
// kExitUsage for anything found before work begins (bad arguments, a missing or unusable
// recording: nothing was played, written or changed), kExitProblems for what goes wrong after.
inline constexpr int kExitOk = 0;
inline constexpr int kExitProblems = 1;   // verify found damage; play, export or recover failed
inline constexpr int kExitUsage = 2;      // bad arguments; missing or unusable recording
inline constexpr int kExitNotClosed = 3;  // verify: not closed cleanly, only a torn tail found
// verify, recover, reindex: the recording is being written (live) by another process; verify
// found no damage in what is written so far, recover and reindex changed nothing.
inline constexpr int kExitLive = 4;

// Errors: the service's Result (service/result.hpp); messages are one line, without the
// "pubsub-replay: " prefix.

// ---- time -----------------------------------------------------------------------------------

// A time argument: seconds from the recording's first reception time ("12.5"), an ISO-8601
// time ("2026-11-21T23:38:00Z", "2026-11-21T23:38:00.250+01:00"; without a zone: UTC), or the
// time of a tag put into the recording ("tag:NAME"; the first tag of that name).
struct TimeArg {
  bool absolute = false;
  int64_t ns = 0;   // offset from the first reception (>= 0), or nanoseconds since the epoch
  std::string tag;  // "tag:NAME": NAME (then absolute and ns are unused)
};
Result<TimeArg> parse_time_arg(std::string_view text);
// Nanoseconds since the epoch -> "2026-11-21T23:38:00.123Z" (digits = 3) or ".123456789Z" (9).
std::string format_iso(int64_t ns, int digits = 3);

// ---- selection ------------------------------------------------------------------------------

// What play and export read: topics by glob (empty: all) and a reception-time range
// [start, end).
struct Selection {
  std::vector<std::string> topics;
  std::optional<TimeArg> start;
  std::optional<TimeArg> end;
};

// ---- commands -------------------------------------------------------------------------------

struct InfoOptions {
  std::string dir;
  bool json = false;
};
// Topics with type, keyedness, samples, bytes, first/last time, rate, writers and loss; a
// table, or with json one object:
// {"samples","bytes","lost","start","end","topics":[{"name","type","keyed","samples","bytes",
//  "lost","writers","start","end","rate",...}],...} (times ISO-8601 UTC with milliseconds,
// null for an empty recording or topic; rate = (samples - 1) / (end - start) in samples/s).
int info(const InfoOptions& options, std::ostream& out, std::ostream& err);

struct InfoSetOptions {
  std::vector<std::string> dirs;  // two or more
  bool json = false;
};
// info over several recordings (a recording set's members): a row per recording (its set_member
// note, samples, writers, loss, first and last reception), the total with each writer counted
// once, and coverage gaps (a member that started more than 1 s after the first or ended more than
// 1 s before the last, or recorded nothing); with json one object: {"members":[{"dir","member",
// "set","recording_id","samples","bytes","writers","lost","start","end"}],"samples","lost",
// "writers","writers_in_several","start","end","coverage_gaps":[{"dir","from","to"}]}.
// kExitOk, or kExitUsage when a directory is not a readable recording.
int info_set(const InfoSetOptions& options, std::ostream& out, std::ostream& err);
// The writers of several recordings and who recorded each: GUID (32 hex digits) -> the
// recording's set_member note ("host H, address A"), else its directory; a writer several
// recordings hold names them all, "; " between.
Result<std::map<std::string, std::string>> writer_members(const std::vector<std::string>& dirs);

struct TypesOptions {
  std::string dir;
  std::string topic;  // only this topic's type; empty: every recorded type
};
// The IDL of the recorded types (the IDL-sourced definition where a name has both), each after
// a line "// type NAME, from idl|lookup[ (also lookup, not used)]; topics: T1 T2". kExitOk;
// kExitProblems when nothing is recorded, or the topic has no type; kExitUsage when DIR is not
// a recording or has no such topic. Types of no selected topic without a definition are warned
// about on `err`.
int types(const TypesOptions& options, std::ostream& out, std::ostream& err);

enum class ExportFormat { kJsonl, kCsv, kMcap };
struct ExportOptions {
  std::string dir;
  ExportFormat format = ExportFormat::kJsonl;
  Selection selection;
  std::string output;  // file; empty: `out`
  // Decoding (types/cdr.hpp): the `value` of each sample from the type of its topic, found by
  // name in the IDL files (first file that defines it wins).
  bool decode = false;
  std::vector<std::string> idl_files;
  // Progress on `err` every progress_interval once the export has run that long (progress_tty:
  // one line rewritten in place), and the statistics line at the end. false: warnings and
  // errors only.
  bool progress = true;
  bool progress_tty = false;
  std::chrono::nanoseconds progress_interval = std::chrono::seconds(1);
  // Set (e.g. by a SIGINT/SIGTERM handler) to the signal number to stop: the export ends, its
  // temporary file removed, and returns 128 + that number.
  const std::atomic<int>* stop = nullptr;
  // Writer GUID (32 hex digits) -> the member that recorded it: an export of several recordings
  // (writer_members) names it in "member" (JSON lines), a member column after writer (CSV), or
  // a channel per topic and member with metadata "member" (MCAP); empty: none of these.
  std::map<std::string, std::string> writer_members;
  // MCAP only: "" (DDS names, omgidl schemas) or "ros2" (what rosbag2 writes: ROS names,
  // ros2msg schemas, offered_qos_profiles, the rosbag2 metadata record; other topics left out).
  std::string mcap_profile;
};
// One record per line in reception-time order: topic, type, writer (GUID, 32 hex digits), seq,
// source_time, reception_time (ISO-8601, nanoseconds), source_ns, reception_ns, flags, key_hash
// (32 hex digits or null/empty), payload_base64 (the serialized payload with its encapsulation).
// CSV: a header line and the same columns.
// With decode: JSON lines carry "value" (the decoded sample) instead of payload_base64; a
// sample that does not decode gets "value":null, "decode_error" and payload_base64, is reported
// on `err` (topic, seq, reason) and makes the export end with kExitProblems; topics whose type
// is not in the IDL (and key-only samples) keep payload_base64 with "value":null. CSV with
// decode: topic,writer,seq,source_time,reception_time, one column per leaf of the type under
// "value" (struct members flattened to "value.pose.position.x"; sequences, arrays and unions as
// JSON text), decode_error; all selected topics must have one type. IDL errors and a missing
// type for every selected topic are kExitUsage (nothing written). An idl_files type that
// differs from the recording's definition of it (a warning per topic first) and samples that
// decode with unread trailing bytes (a warning per topic at the end) make it kExitProblems.
// Output to a file goes through a temporary renamed at the end: a write error, reading stopped
// early (kExitProblems) and `stop` (128 + the signal) leave no file (an existing one as it was).
// MCAP (needs `output`): Header (profile ""), a Schema per type found in idl_files (encoding
// "omgidl", IDL text), a Channel per selected topic (message_encoding "cdr", schema 0 when its
// type is not in the IDL), Messages (log_time = reception, publish_time = source time),
// chunks (LZ4, or uncompressed where LZ4 saves < 2 %) with message indexes, and the summary section
// (Schema, Channel, Statistics, ChunkIndex, SummaryOffset), DataEnd and Footer. decode is refused
// with mcap.
int export_records(const ExportOptions& options, std::ostream& out, std::ostream& err);
// For a SIGINT/SIGTERM handler that is about to _exit() while an export runs: removes the
// export's temporary file, if there is one, and says so on stderr. Async-signal-safe.
void abandon_export_from_signal_handler() noexcept;

// Checksums of every chunk, index against segments, damage found while opening (torn tails);
// recorded loss (gaps) is listed as information. kExitOk clean or recovered and no damage,
// kExitNotClosed not closed cleanly with nothing worse than a torn tail (recover() fixes it),
// kExitLive being written, no damage in what is written so far (the growing tail is not
// damage), kExitProblems damage found, kExitUsage not a recording.
int verify(const std::string& dir, std::ostream& out, std::ostream& err);
// Finishes a recording that was not closed cleanly (storage::Recording::recover): cuts torn
// tails after copying them to DIR/recovered/, brings the index in line, marks it recovered and
// lists what was cut. kExitOk when the recording is usable afterwards (also when there was
// nothing to do), kExitProblems when it could not be repaired, kExitUsage not a recording,
// kExitLive (nothing changed) while a recorder writes it.
int recover(const std::string& dir, std::ostream& out, std::ostream& err);
// Rebuilds index.sqlite3 from the segment files. kExitOk, kExitProblems when corrupt chunks had
// to be left out (listed), kExitUsage when DIR holds no segment files, kExitLive (nothing
// changed) while a recorder writes it.
int reindex(const std::string& dir, std::ostream& out, std::ostream& err);

// pubsub-replay merge DIR... -o OUT (service/src/replay/merge.cpp): writes the recordings as one
// new recording OUT, records in reception-time order, a sample held by several (same writer GUID
// and sequence number) once, marks at their times. kExitOk; kExitUsage fewer than two inputs, an
// input that is not a recording or OUT not new (nothing created); kExitLive an input is being
// written (nothing created); kExitProblems reading or writing failed (OUT removed).
struct MergeOptions {
  std::vector<std::string> dirs;
  std::string out;
  bool quiet = false;  // no progress lines
  // Move each input's times onto the first input's clock by the measured offset (clock_offset
  // marks); false: as recorded.
  bool correct_clocks = true;
};
int merge(const MergeOptions& o, std::ostream& out, std::ostream& err);

// pubsub-replay import FILE.mcap -o DIR: an MCAP file with CDR messages (rosbag2 bags, eProsima
// DDS Record & Replay files, our own exports) written as a new recording - topics and types
// under their DDS names, QoS from the file, original times (import_mcap.cpp's header has the
// rules). Prints the closing line on `out`, warnings on `err`. kExitUsage (nothing written):
// not an MCAP file, a chunk compression other than lz4/zstd/none, DIR not empty, no channel
// with CDR messages; kExitProblems: damaged chunks skipped or a file cut short (the rest
// imported), or a write error (DIR removed).
struct ImportOptions {
  std::string file;
  std::string out;
  bool quiet = false;
};
int import_mcap(const ImportOptions& o, std::ostream& out, std::ostream& err);

struct PlayOptions {
  std::string dir;
  double rate = 1.0;  // > 0; 2 = twice as fast
  bool fast = false;  // no pacing at all: as fast as the writers and readers allow
  Selection selection;
  uint64_t loops = 1;  // 0: until stopped
  // Domain, interface, peers; tests set a transport_factory and short announce periods here.
  pubsub::ParticipantOptions participant;
  // Before publishing, wait until every writer has this many matched readers that acknowledged
  // it (0: publish at once).
  size_t wait_readers = 0;
  std::chrono::nanoseconds wait_timeout = std::chrono::seconds(30);
  // At the end: how long reliable readers get to acknowledge everything.
  std::chrono::nanoseconds ack_timeout = std::chrono::seconds(10);
  // How long a reliable write may stay blocked by readers that do not acknowledge before the
  // run fails: twice the kernel's IP reassembly timeout (net.ipv4.ipfrag_time, 30 s), for which a
  // reader on a lossy path whose reassembly memory filled up with big datagrams' fragments gets
  // none of them (StatefulWriter's big datagrams).
  std::chrono::nanoseconds block_timeout = std::chrono::seconds(60);
  // The pacing thread sleeps until `spin` before a sample is due, then spins. `spin` follows how
  // late its sleeps wake up (the recent overshoot plus a quarter), between spin_min and spin_max
  // (spin_min only, with realtime_priority). Defaults 50 us and 250 us.
  std::chrono::nanoseconds spin_min = std::chrono::microseconds(50);
  std::chrono::nanoseconds spin_max = std::chrono::microseconds(250);
  // Run the pacing thread SCHED_FIFO at this priority (1..99; needs CAP_SYS_NICE, else a
  // warning). 0: normal scheduling. Default 0.
  int realtime_priority = 0;
  // Read-ahead between the storage reader thread and the pacing thread.
  size_t queue_max_bytes = 64u << 20;
  // Progress line on `err` every progress_interval; progress_tty: rewrite it in place (\r).
  bool progress = true;
  bool progress_tty = false;
  std::chrono::nanoseconds progress_interval = std::chrono::seconds(1);
  // Set (e.g. by a SIGINT handler) to stop: the run ends cleanly, flushes and reports.
  const std::atomic<bool>* stop = nullptr;
  // QoS overrides: a JSON file mapping topic globs to QoS members ("" none), applied over each
  // writer's recorded QoS (see README, "Replaying with other QoS").
  std::string qos_file;
  // "OLD=NEW": publish recorded topic OLD as NEW.
  std::vector<std::string> remap;
  // With a start time: first publish the latched state - each durable writer's last samples per
  // instance before it (true by default).
  bool latched = true;
};

struct LatenessStats {
  uint64_t count = 0;
  int64_t p50_ns = 0;
  int64_t p99_ns = 0;
  int64_t max_ns = 0;
};

struct PlayedWriter {
  std::string topic;
  storage::WriterId recorded_id = 0;
  storage::Guid recorded_guid{};
  pubsub::Guid replay_guid;
  bool reliable = true;
  uint64_t samples = 0;
  size_t matched_readers = 0;  // at the end
  size_t peak_readers = 0;     // the most matched at once while playing (looked at every 100 ms)
  uint64_t readers_gone = 0;   // readers that went away while playing (deleted or lease expired)
  uint64_t readers_back = 0;   // ... and were matched again
  bool acknowledged = true;    // every reliable reader acknowledged everything at the end
};

struct PlayReport {
  uint64_t samples = 0;  // samples published (the latched state included)
  uint64_t bytes = 0;
  uint64_t latched_samples = 0;  // published first: the latched state at --start
  uint64_t loops = 0;            // loops completed
  uint64_t problems = 0;         // corrupt chunks skipped while reading
  bool interrupted = false;      // stopped through PlayOptions::stop
  // Wall time from the first sample's due time to the last write (pacing and publishing only;
  // excludes discovery, waiting for readers and for acknowledgements).
  double publish_seconds = 0;
  double recorded_seconds = 0;  // reception-time span of the selection (one loop)
  LatenessStats lateness;       // how late samples went out (paced runs only)
  std::vector<PlayedWriter> writers;
};

// Replays the selection. Progress, warnings and the final summary go to `err`. `report`, when
// given, receives what was published (also when the run fails after it started).
int play(const PlayOptions& options, std::ostream& err, PlayReport* report = nullptr);

}  // namespace service::replay
