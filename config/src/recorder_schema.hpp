// RecorderSchema (internal): the recorder's configuration schema (config/README.md) on top of
// SchemaReader, one reader per key, each checking type and range and writing its RecorderConfig
// field only when the value is good, so a document with several problems yields all of them.
// Single-threaded: one schema reads one document.
//
// Files: recorder_schema.hpp (this: the class and the enum name tables), recorder_schema.cpp
// (the document, topics, types, log, duration helpers), recorder_schema_network.cpp (interface,
// peers, transports, discovery limits, metrics, control and its allow list),
// recorder_schema_storage.cpp
// (storage, retention, snapshot). recorder_config.cpp parses a file with it.
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/recorder_config.hpp"
#include "json_reader.hpp"

namespace config::detail {

// Each enum's names, one table for reading (one_of) and writing (to_string).
template <class E>
using Names = std::pair<std::string_view, E>;
inline constexpr Names<Compression> kCompressionNames[] = {{"lz4", Compression::kLz4},
                                                           {"none", Compression::kNone}};
inline constexpr Names<FsyncPolicy> kFsyncNames[] = {{"none", FsyncPolicy::kNone},
                                                     {"chunk", FsyncPolicy::kChunk},
                                                     {"segment", FsyncPolicy::kSegment},
                                                     {"interval", FsyncPolicy::kInterval}};
inline constexpr Names<RecorderMode> kModeNames[] = {{"record", RecorderMode::kRecord},
                                                     {"snapshot", RecorderMode::kSnapshot}};
inline constexpr Names<LowSpacePolicy> kLowSpaceNames[] = {{"stop", LowSpacePolicy::kStop},
                                                           {"rotate", LowSpacePolicy::kRotate}};
inline constexpr Names<WritersScope> kWritersNames[] = {{"all", WritersScope::kAll},
                                                        {"local", WritersScope::kLocal}};
inline constexpr Names<LogLevel> kLogLevelNames[] = {
    {"trace", LogLevel::kTrace}, {"debug", LogLevel::kDebug}, {"info", LogLevel::kInfo},
    {"warn", LogLevel::kWarn},   {"error", LogLevel::kError}, {"off", LogLevel::kOff}};

template <class E, size_t N>
std::string_view name_of(const Names<E> (&names)[N], E value) {
  for (const auto& [name, v] : names)
    if (v == value) return name;
  return "?";
}

inline constexpr uint64_t kUnbounded = std::numeric_limits<uint64_t>::max();
// retention.max_age_s is turned into nanoseconds by storage; keep that within int64.
inline constexpr uint64_t kMaxAgeLimit =
    static_cast<uint64_t>(std::numeric_limits<int64_t>::max() / 1'000'000'000);
// Linux interface names are shorter than IFNAMSIZ (16).
inline constexpr size_t kMaxInterfaceName = 15;

class RecorderSchema {
 public:
  RecorderSchema(SchemaReader& reader, RecorderConfig& config) : r_(reader), c_(config) {}

  void read(const Json& document);

 private:
  void missing_path(const std::string& path);
  void armed_needs_control();

  void interface(const Json& v, const std::string& p);

  void peers(const Json& v, const std::string& p);

  void transports(const Json& v, const std::string& p);

  // A list of topic patterns, each checked with common::check_glob.
  void patterns(const Json& v, const std::string& p, std::vector<std::string>& target,
                bool non_empty);

  void topics(const Json& v, const std::string& p);

  void regex(const Json& v, const std::string& p);

  void storage(const Json& v, const std::string& p);

  void retention(const Json& v, const std::string& p);

  void stats_interval(const Json& v, const std::string& p);

  void types(const Json& v, const std::string& p);

  void snapshot(const Json& v, const std::string& p);

  void metrics(const Json& v, const std::string& p);
  void discovery(const Json& v, const std::string& p);

  // "" or IPV4:PORT with PORT in 0..65535.
  static bool is_listen_address(const std::string& s);

  void control(const Json& v, const std::string& p);

  void dds(const Json& v, const std::string& p);

  // DDS control is only as narrow as its allow list: an empty one is refused, not "everyone".
  void dds_needs_allow(const Json& v, const std::string& p);

  void allow(const Json& v, const std::string& p);

  void log(const Json& v, const std::string& p);

  void milliseconds(const Json& v, const std::string& p, std::chrono::milliseconds& out,
                    uint64_t min, uint64_t max);

  void seconds(const Json& v, const std::string& p, std::chrono::seconds& out, uint64_t min,
               uint64_t max);

  SchemaReader& r_;
  RecorderConfig& c_;
  // False when queue_max_bytes / chunk_max_bytes were given but rejected (their cross-check is
  // then skipped; the defaults take part in it).
  bool queue_ok_ = true;
  bool chunk_ok_ = true;
  // False when control.allow was given and is not an array of networks (its errors say so; the
  // check that control.dds has an allow list is then skipped).
  bool allow_ok_ = true;
};

}  // namespace config::detail
