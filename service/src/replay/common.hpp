// Helpers shared by the pubsub-replay commands (private to service/src/replay).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "service/replay.hpp"
#include "storage/recording.hpp"

namespace service::replay::detail {

// Print "pubsub-replay: <message>" and return `status` (one of the kExit* of service/replay.hpp).
int report(std::ostream& err, int status, const std::string& message);
int report(std::ostream& err, int status, const Error& e);
void warn(std::ostream& err, const std::string& message);

// Opens DIR read-only, with a clear message for everything that is not a usable recording
// (missing directory, no index, an index that does not open).
Result<std::unique_ptr<storage::Recording>> open_recording(
    const std::string& dir, storage::ProblemCallback on_problem = {});
// Number of segment files in DIR/segments (0 when there is no such directory).
size_t count_segment_files(const std::string& dir);
// The bytes of DIR/segments/*.seg on disk (their sizes; 0 when there are none).
uint64_t segment_file_bytes(const std::string& dir);

struct ResolvedSelection {
  storage::Query query;
  std::vector<storage::TopicInfo> topics;          // the selected topics
  std::map<storage::TopicId, size_t> topic_index;  // topic id -> index in `topics`
  int64_t recording_first_ns = 0;  // first reception of the whole recording (time offsets)
  int64_t recording_last_ns = 0;
  int64_t first_ns = 0;  // estimated reception span of the selection (from the index)
  int64_t last_ns = 0;
  uint64_t estimated_samples = 0;                // exact without a time range
  std::vector<storage::TypeDef> recorded_types;  // the recording's type definitions
};
// The recorded definition to use for a type name: the IDL one before the looked-up one.
const storage::TypeDef* recorded_type(const std::vector<storage::TypeDef>& types,
                                      const std::string& type_name);
// "idl", "lookup" (the TypeDef's source) or "" for none.
const char* type_source_name(const storage::TypeDef* def);
// Matches the topic globs (each must match some topic), resolves start/end against the
// recording and checks that they describe a range that overlaps it.
Result<ResolvedSelection> resolve_selection(storage::Recording& rec, const Selection& sel);

std::string base64(storage::ByteSpan bytes);
// Appends s as a JSON string literal (quotes included).
void append_json_string(std::string& out, std::string_view s);
// Appends s as one CSV field (quoted when it contains a comma, quote or line break).
void append_csv_field(std::string& out, std::string_view s);

// "corrupt chunk in segments/00000001.seg at offset 4160 (chunk 3): topics A, B; reception
// 2026-...Z .. 2026-...Z; 120 records: <message>"
std::string describe(const storage::Problem& p,
                     const std::map<storage::TopicId, std::string>& topic_names);

// The directory a command writes a new recording into (merge, import). claim() refuses one that
// exists and is not empty ("OUT exists and is not empty: COMMAND writes a new recording");
// remove() takes away what the command wrote after a failure: the directory itself when the
// command made it, only its contents when it was there (empty) before.
struct NewRecordingDir {
  std::string path;
  bool existed = false;
  static Result<NewRecordingDir> claim(const std::string& path, std::string_view command);
  void remove() const;
};

// "512 B", "12.3 MB": SI units (10^3, 10^6, ...), as pubsub-recorder prints sizes.
std::string human_bytes(uint64_t bytes);
// "1 segment", "3 segments".
std::string plural(uint64_t n, std::string_view noun);
// Rows of columns padded to their widest cell: text left-aligned, `right` columns right-aligned.
void print_table(std::ostream& out, const std::vector<std::vector<std::string>>& rows,
                 const std::vector<bool>& right);

// Topic names by id (empty when the index cannot be read).
std::map<storage::TopicId, std::string> topic_names(storage::Recording& rec);
// One damage in the words info, verify and recover share, e.g. "truncated segment:
// segments/00000001.seg ends 120000 bytes short; 2 chunks cut, 203 samples lost (topics Square)".
std::string describe_damage(const storage::Damage& d,
                            const std::map<storage::TopicId, std::string>& topic_names);
// "damage: <description>" then "  repair: pubsub-replay <command> DIR", per damage.
void print_damages(std::ostream& out, const std::vector<storage::Damage>& damages,
                   const std::map<storage::TopicId, std::string>& topic_names,
                   const std::string& dir);

}  // namespace service::replay::detail
