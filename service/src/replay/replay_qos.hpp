// What play publishes besides the samples in its time range, and how it offers them:
// - the QoS of each replayed writer: the recorded offer (the writer's own, else its topic's),
//   then the user's overrides (`play --qos FILE`: topic globs to QoS members, later entries
//   winning), and the topic name (`--remap OLD=NEW`);
// - the latched state at the start (`play --start T`): for each durable (TRANSIENT_LOCAL or more)
//   writer, the last samples of each instance, up to its history depth, received before T -
//   what a reader that joined the original system at T would have got. play publishes them
//   before the first paced sample, so late joiners of the replay get them from the writer's
//   history too.
// Calling thread only; no state beyond what the functions return.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "service/recording_schema.hpp"
#include "service/replay.hpp"
#include "storage/recording.hpp"

namespace service::replay::detail {

// `play --qos FILE`: a JSON object mapping topic globs to objects of QoS members (the form
// `info --json` shows under "qos"; durations also as "2 s"/"infinite"). Errors name the file,
// the glob and the member; every entry is checked when loaded.
struct QosOverrides {
  std::vector<std::pair<std::string, std::string>> entries;  // glob, JSON object text
};
Result<QosOverrides> load_qos_overrides(const std::string& path);
// Applies the entries whose glob matches `topic`, in file order. Loaded entries always apply.
RecordedQos apply_overrides(const QosOverrides& o, const std::string& topic, RecordedQos qos);

// `--remap OLD=NEW` (repeatable): topic OLD is published as NEW. kInvalidArgument for a
// malformed argument or a topic named twice.
Result<std::map<std::string, std::string>> parse_remaps(const std::vector<std::string>& args);

// A writer's recorded QoS: its own (format 5), else its topic's, else the defaults (reliable,
// volatile); kCorrupt when the recorded bytes do not decode.
Result<RecordedQos> recorded_writer_qos(const storage::WriterInfo& w, const storage::TopicDef& t);

// One sample of the latched state.
struct LatchedSample {
  storage::WriterId writer = 0;
  storage::RecordMeta meta;
  storage::Bytes payload;
};
// A record's instance: its key hash, recorded or computed (nullopt: the writer's one instance).
using InstanceKeyFn = std::function<std::optional<storage::KeyHash>(const storage::RecordView&)>;
// For each writer in `durable` (recorded id -> its history), the last samples per instance
// (key_of) received before `start_ns`, up to the history depth (KEEP_ALL: every one, at most
// 65536 per writer): in reception order.
Result<std::vector<LatchedSample>> latched_samples(
    storage::Recording& rec, const std::map<storage::WriterId, pubsub::HistoryQos>& durable,
    const std::vector<storage::TopicId>& topics, int64_t start_ns, const InstanceKeyFn& key_of);

}  // namespace service::replay::detail
