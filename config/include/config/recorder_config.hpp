// Configuration of pubsub-recorder: the JSON schema of config/README.md as plain structs whose
// member initializers are the documented defaults, a parser that reports every problem it finds
// (each naming its JSON path, what was expected and what was found), and the checks of the paths
// the recorder will write to.
//
//   auto loaded = config::load_recorder_config("recorder.json");
//   if (!loaded) {                                   // print every message, exit 2
//     std::cerr << loaded.error().to_string();
//     return 2;
//   }
//   config::RecorderConfig cfg = std::move(loaded).value();
//   if (cli_path) {
//     cfg.storage.path = *cli_path;                  // --path DIR overrides storage.path
//   } else if (auto expanded = config::expand_storage_path(cfg, now); !expanded) {
//     ... exit 2 ...                                 // "rec-%Y%m%d" -> "rec-20240302"
//   }
//   if (auto checked = config::validate_storage_path(cfg); !checked) { ... exit 2 ... }
//
// Parsing is separate from the path checks because the command line may replace storage.path
// after the file has been read, and the time conversions in it take the time of the start. Nothing
// in this library throws, and nothing creates files (validate_storage_path creates and at once
// removes one probe directory, see there).
//
// Mapping onto the other modules (done by the recorder; this header depends on neither, the
// library privately on pubsub::common for check_glob and on storage for a recording's close
// state):
//   storage.*, queue_max_bytes, max_sample_bytes -> storage::SegmentWriterOptions
//   domain, interface, peers, max_sample_bytes   -> pubsub::ParticipantOptions
//   topics.include / topics.exclude              -> pubsub::RawReaderOptions topic patterns
//   control.*                                    -> the control socket and DDS control
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "common/expected.hpp"

namespace config {

// ---- the configuration ------------------------------------------------------------------------

enum class Compression {
  kLz4,   // "lz4"  -> storage::Compression::kLz4
  kNone,  // "none" -> storage::Compression::kNone
};

enum class FsyncPolicy {
  kNone,      // "none"     -> storage::FsyncPolicy::kNone
  kChunk,     // "chunk"    -> storage::FsyncPolicy::kChunk
  kSegment,   // "segment"  -> storage::FsyncPolicy::kSegment
  kInterval,  // "interval" -> storage::FsyncPolicy::kInterval
};

enum class LowSpacePolicy {
  kStop,    // "stop"   -> storage::LowSpacePolicy::kStop
  kRotate,  // "rotate" -> storage::LowSpacePolicy::kRotate
};

// In spdlog's order; to_string() gives the JSON spelling, which spdlog::level::from_str accepts.
enum class LogLevel { kTrace, kDebug, kInfo, kWarn, kError, kOff };

// "topics.writers": whose writers a recorder takes. One recorder per host with kLocal records
// each sample of a system of many hosts once, without listing topics (pubsub::WriterInfo::
// same_host says which writers are local).
enum class WritersScope {
  kAll,    // "all": every matching writer
  kLocal,  // "local": only writers whose participant runs on this host
};

// "topics": which topics the recorder subscribes to (glob patterns, see common/glob.hpp).
struct TopicsConfig {
  // "include": a topic is recorded when its name matches one of these. Never empty. Default ["*"].
  std::vector<std::string> include{"*"};
  // "exclude": ... and none of these. Default [].
  std::vector<std::string> exclude;
  // "regex": ... and, when not empty, matches this ECMAScript regular expression as a whole
  // (std::regex_match), as rosbag2's --regex. Default "".
  std::string regex;
  // "writers": whose writers are recorded. Default all.
  WritersScope writers = WritersScope::kAll;

  friend bool operator==(const TopicsConfig&, const TopicsConfig&) = default;
};

// "storage.retention": whole segments are removed, oldest first, while over either limit.
struct RetentionConfig {
  // "max_bytes" -> SegmentWriterOptions::retention_max_bytes. 0 = unlimited. Default 0.
  uint64_t max_bytes = 0;
  // "max_age_s" -> SegmentWriterOptions::retention_max_age. 0 = unlimited. Default 0.
  std::chrono::seconds max_age{0};

  friend bool operator==(const RetentionConfig&, const RetentionConfig&) = default;
};

// "storage": the recording directory and the SegmentWriterOptions of the same names.
struct StorageConfig {
  // "path" (required): the recording directory; must not exist yet or be an empty directory
  // (validate_storage_path). Relative paths are relative to the recorder's working directory.
  std::filesystem::path path;
  // "chunk_max_bytes": soft ceiling of a chunk's raw size. Default 4 MiB.
  uint32_t chunk_max_bytes = 4u << 20;
  // "chunk_max_age_ms": a chunk holding records closes when this old. Default 100 ms.
  std::chrono::milliseconds chunk_max_age{100};
  // "segment_max_bytes": a segment file rolls before it would grow over this. Default 256 MiB.
  uint64_t segment_max_bytes = 256ull << 20;
  // "segment_max_duration_s": a segment rolls when open this long; 0 = no limit. Default 600 s.
  std::chrono::seconds segment_max_duration{600};
  // "compression". Default lz4.
  Compression compression = Compression::kLz4;
  // "lz4_acceleration": LZ4's speed against its ratio, 1 (LZ4's default) .. 65537
  // -> SegmentWriterOptions::lz4_acceleration. Default 16 (storage's
  // format::kDefaultLz4Acceleration, written out: config's public headers do not include storage).
  uint32_t lz4_acceleration = 16;
  // "fsync". Default chunk.
  FsyncPolicy fsync = FsyncPolicy::kChunk;
  // "fsync_interval_ms": the period of FsyncPolicy::kInterval. Default 1000 ms.
  std::chrono::milliseconds fsync_interval{1000};
  // "page_cache": "drop" (true): synced data leaves the page cache; "keep" (false). Default drop.
  bool drop_page_cache = true;
  // "direct_io": "auto" (true): chunks of 256 KiB and more are written with O_DIRECT where the
  // filesystem allows it; "off" (false): everything through the page cache. Default auto.
  bool direct_io = true;
  // "retention".
  RetentionConfig retention;
  // "min_free_bytes": the disk guard keeps at least this much free space on the recording's
  // filesystem -> SegmentWriterOptions::min_free_bytes. 0 = off. Default 1 GiB.
  uint64_t min_free_bytes = 1ull << 30;
  // "on_low_space": what the disk guard does below min_free_bytes: "stop" ends the recording
  // (cleanly; the recorder exits 1), "rotate" removes the oldest segments
  // -> SegmentWriterOptions::on_low_space. Default stop.
  LowSpacePolicy on_low_space = LowSpacePolicy::kStop;
  // "on_segment_closed": a shell command (/bin/sh -c) run for each finished segment file and
  // for the finished recording, one at a time in that order, with the path as $1 and in
  // PUBSUB_PATH, PUBSUB_EVENT "segment" or "recording", PUBSUB_RECORDING the recording
  // directory (service/src/recorder/hook_runner.hpp). "" = none. Default "".
  std::string on_segment_closed;

  friend bool operator==(const StorageConfig&, const StorageConfig&) = default;
};

// "log".
struct LogConfig {
  // "level". Default info.
  LogLevel level = LogLevel::kInfo;
  // "file": also log to this file (appended); empty = stderr only. Default "".
  std::filesystem::path file;

  friend bool operator==(const LogConfig&, const LogConfig&) = default;
};

// "types".
struct TypesConfig {
  // "idl": IDL files defining topic data types (relative paths: to the recorder's working
  // directory). A topic whose type name one of them defines gets that type stored in the
  // recording (source "idl"; the first file defining the name wins, and IDL wins over types
  // looked up from the writers). Default [].
  std::vector<std::filesystem::path> idl;

  friend bool operator==(const TypesConfig&, const TypesConfig&) = default;
};

// An IPv4 network in CIDR notation, as control.allow lists them: "198.18.0.0/15"; a bare
// address ("127.0.0.1") is a /32.
struct Ipv4Network {
  uint32_t address = 0;  // host byte order, as written (bits past the prefix are ignored)
  uint8_t prefix_length = 32;

  bool contains(uint32_t ipv4_host_order) const;
  std::string to_string() const;  // "198.18.0.0/15"
  friend bool operator==(const Ipv4Network&, const Ipv4Network&) = default;
};

// "control".
struct ControlConfig {
  // "socket": the Unix domain socket of the control commands (pubsub-recorder ctl), mode 0600.
  // A relative path is relative to the recording directory; "" = no control socket. At most 107
  // bytes. Default "control.sock".
  std::filesystem::path socket = "control.sock";
  // "dds": also take the control commands as DDS requests on the recorder's domain (topics
  // "pubsub_recorder/control/request" and "pubsub_recorder/control/reply"; pubsub-recorder
  // ctl --dds). Default false.
  bool dds = false;
  // "allow": the IPv4 networks whose participants may send DDS control requests: a request is
  // carried out when one of the unicast addresses its participant announced in discovery (SPDP)
  // is in one of them. Not authentication: anyone on the network can announce any address.
  // Required (non-empty) when dds is true. Default [].
  std::vector<Ipv4Network> allow;
  // "key_file": a file holding the key DDS control requests must be signed with (HMAC-SHA256;
  // pubsub-recorder ctl --dds --key-file): 16 to 4096 bytes, trailing whitespace not counted,
  // readable and writable by its owner only (mode 600), or the recorder does not start. Relative
  // to the recorder's working directory. "" (the default) = requests are not signed.
  std::filesystem::path key_file;
  // "max_clock_skew_s": how far a signed request's time may be from the recorder's clock, in
  // seconds (1 to 3600); a request is carried out once within it. Default 30.
  double max_clock_skew_s = 30;
  // "set": the recording set this recorder is a member of (1 to 64 of A-Z a-z 0-9 . _ -; needs
  // dds): `pubsub-recorder ctl --dds --set NAME` reaches every member at once, and a request
  // for another set is ignored (no reply). "" = none. Default "".
  std::string set;
  // "armed": start idle - join the domain, match every writer, record nothing - until a `start`
  // command (pubsub-recorder ctl start, or ctl --dds --set NAME start for a whole set). Needs a
  // control path (socket or dds) and mode "record". Default false.
  bool armed = false;

  friend bool operator==(const ControlConfig&, const ControlConfig&) = default;
};

// "mode": what the recorder does with the samples.
enum class RecorderMode {
  kRecord,    // "record": everything into the recording at storage.path
  kSnapshot,  // "snapshot": the last snapshot.before_s in memory; a snapshot trigger writes them
              // and the next snapshot.after_s into a new recording under storage.path
};

// "snapshot" (used with "mode": "snapshot").
struct SnapshotConfig {
  // "before_s": seconds kept in memory before a trigger, (0, 3600]. Default 30.
  std::chrono::duration<double> before{30.0};
  // "after_s": seconds recorded after the (latest) trigger, [0, 3600]. Default 10.
  std::chrono::duration<double> after{10.0};
  // "max_bytes": memory bound of the buffered chunks (compressed), 1 MiB .. 64 GiB; past it the
  // oldest go first, counted. Default 256 MiB.
  uint64_t max_bytes = 256ull << 20;

  friend bool operator==(const SnapshotConfig&, const SnapshotConfig&) = default;
};

// "metrics".
struct MetricsConfig {
  // "listen": "IPV4:PORT" of the Prometheus endpoint (GET /metrics), e.g. "127.0.0.1:9464";
  // "" = none. Default "".
  std::string listen;

  friend bool operator==(const MetricsConfig&, const MetricsConfig&) = default;
};

// "discovery": how much remote participants may make the recorder remember
// -> ParticipantOptions::discovery_limits. Beyond a limit, announcements are refused, counted
// (status "discovery_refused") and logged once.
struct DiscoveryConfig {
  // "max_participants": remote participants at once, 1..1000000. Default 4096.
  uint64_t max_participants = 4096;
  // "max_participants_per_address": of them, announcing the same IPv4 address. Default 1024.
  uint64_t max_participants_per_address = 1024;
  // "max_endpoints_per_participant": readers and writers of one participant. Default 10000.
  uint64_t max_endpoints_per_participant = 10000;
  // "max_endpoints": readers and writers of all participants, 1..10000000. Default 100000.
  uint64_t max_endpoints = 100000;

  friend bool operator==(const DiscoveryConfig&, const DiscoveryConfig&) = default;
};

struct RecorderConfig {
  // "domain": the DDS domain id, 0..232 -> ParticipantOptions::domain_id. Default 0.
  uint32_t domain = 0;
  // "interface": interface name ("eth0") or IPv4 address; empty = the first up, multicast-capable
  // interface -> ParticipantOptions::interface. Default "".
  std::string interface;
  // "peers": IPv4 addresses for unicast discovery, in addition to multicast
  // -> ParticipantOptions::peers. Default [].
  std::vector<std::string> peers;
  // "transports": how samples may arrive, a non-empty array of "shm" (shared memory with
  // publishers on the same host) and "udp" (the network) -> ParticipantOptions::shared_memory
  // and network_data. Discovery always uses UDP. Default ["shm", "udp"].
  bool transport_shm = true;
  bool transport_udp = true;
  DiscoveryConfig discovery;
  TopicsConfig topics;
  // "mode": "record" or "snapshot". Default "record".
  RecorderMode mode = RecorderMode::kRecord;
  SnapshotConfig snapshot;
  StorageConfig storage;
  // "queue_max_bytes": capacity of the chunk buffers between the network and the disk; when they
  // are all in flight the recorder stops acknowledging (back-pressure)
  // -> SegmentWriterOptions::queue_max_bytes. At least storage.chunk_max_bytes. Default 64 MiB.
  uint64_t queue_max_bytes = 64ull << 20;
  // "max_sample_bytes": largest sample recorded -> SegmentWriterOptions::max_record_bytes and
  // ParticipantOptions::max_sample_size (reassembly limit). At most kMaxSampleBytesLimit.
  // Default 64 MiB.
  uint32_t max_sample_bytes = 64u << 20;
  // "stats_interval_s": period of the statistics log line, fractions allowed. Default 5 s.
  std::chrono::duration<double> stats_interval{5.0};
  LogConfig log;
  TypesConfig types;
  ControlConfig control;
  MetricsConfig metrics;

  friend bool operator==(const RecorderConfig&, const RecorderConfig&) = default;
};

// The largest max_sample_bytes: storage accepts records up to 1 GiB - 4 KiB
// (SegmentWriter::create rejects a larger max_record_bytes).
inline constexpr uint32_t kMaxSampleBytesLimit = (1u << 30) - 4096;

// The JSON spellings ("lz4", "interval", "warn", ...).
std::string_view to_string(Compression compression);
std::string_view to_string(FsyncPolicy policy);
std::string_view to_string(LowSpacePolicy policy);
std::string_view to_string(RecorderMode mode);
std::string_view to_string(WritersScope scope);
std::string_view to_string(LogLevel level);

// ---- results ----------------------------------------------------------------------------------

// Everything wrong with a configuration, one complete line per problem, in the order found
// (document order). Messages look like
//   recorder.json: /storage/fsync: expected one of "none", "chunk", "segment", "interval", got "x"
//   recorder.json:3:17: invalid JSON: syntax error while parsing object - unexpected '}'; ...
//   storage path "rec/a": parent directory "rec" does not exist
struct ConfigErrors {
  std::vector<std::string> messages;

  // The messages, each followed by '\n' (ready for stderr).
  std::string to_string() const;
};

// A value or ConfigErrors with at least one message: the common Expected (common/expected.hpp)
// with every problem of a file instead of the first one.
template <typename T>
using ConfigResult = common::Expected<T, ConfigErrors>;

// ---- parsing and checks -----------------------------------------------------------------------

// Reads and parses a configuration file. Errors are prefixed with the file name as given:
// "cannot read FILE: No such file or directory", "FILE:LINE:COLUMN: invalid JSON: ...",
// "FILE: /json/path: ...".
ConfigResult<RecorderConfig> load_recorder_config(const std::filesystem::path& file);

// The text of a configuration file, read as load_recorder_config reads it (same errors).
ConfigResult<std::string> read_config_file(const std::filesystem::path& file);

// One key set on the command line (pubsub-recorder --domain 3, --set storage.fsync=none): the
// key's JSON pointer ("/storage/fsync"), its value as JSON text, and the flag as the user wrote
// it (for messages).
struct Setting {
  std::string pointer;
  std::string json;
  std::string flag;
};

// "--set KEY=VALUE": KEY dotted ("storage.fsync") or a JSON pointer ("/storage/fsync"); VALUE
// JSON ("5", "true", "[\"a\"]", "\"x\"") or else taken as a string ("none"). Errors: no "=",
// an empty key.
ConfigResult<Setting> parse_set_option(std::string_view text);

// The configuration of `file` (empty: none, as "{}") with `settings` applied over it, later ones
// winning; then validated as one document. Errors of the file alone come first, prefixed with
// its name, except those about keys a setting replaces (a file without storage.path is
// complete with -o DIR); errors of the composed document are prefixed "command line: ". With no
// settings this is load_recorder_config(file).
ConfigResult<RecorderConfig> compose_recorder_config(const std::filesystem::path& file,
                                                     const std::vector<Setting>& settings);

// Parses and validates configuration text (strict JSON: no comments, no trailing commas; every
// key may appear once per object). Messages are prefixed with "source_name: " (or
// "source_name:LINE:COLUMN: " for syntax errors; columns count bytes), or nothing when
// source_name is empty. Does not look at the file system.
ConfigResult<RecorderConfig> parse_recorder_config(std::string_view json_text,
                                                   std::string_view source_name);

// The strftime(3) conversions storage.path may contain: numeric fields and the time zone, the
// same in every locale. "%%" stands for a "%".
inline constexpr std::string_view kStoragePathConversions = "YymdjHMSFTszZ";

// Replaces the strftime conversions in config.storage.path ("recordings/%Y%m%d-%H%M%S") with
// `now` in local time (the TZ environment variable, else /etc/localtime), so every start of the
// recorder gets a directory of its own. A path without "%" is left as it is. Errors (config
// unchanged): a conversion not in kStoragePathConversions (each named), a "%" at the end, a
// path that expands to nothing.
ConfigResult<void> expand_storage_path(RecorderConfig& config,
                                       std::chrono::system_clock::time_point now);

// Checks that config.storage.path can become a new recording: it does not exist and its parent is
// a writable directory, or it is an empty writable directory. Creates nothing: write access is
// tested with access(2) and then by creating and at once removing a uniquely named probe
// directory (".pubsub-recorder-probe-*"), because access(2) does not see everything that refuses
// a write (e.g. root on root-squashed NFS, security modules).
ConfigResult<void> validate_storage_path(const RecorderConfig& config);

// Checks that config.log.file, when set, can be opened for appending: an existing regular file
// the process may write, or a new name in a writable directory. Creates nothing.
ConfigResult<void> validate_log_file(const RecorderConfig& config);

}  // namespace config
