#include "service/recording_schema.hpp"

#include <cstring>
#include <nlohmann/json.hpp>

namespace service {

storage::Bytes encode_qos(const RecordedQos& q) {
  nlohmann::json j;
  j["reliability"] =
      q.reliability == pubsub::ReliabilityKind::kReliable ? "reliable" : "best_effort";
  j["durability"] =
      q.durability == pubsub::DurabilityKind::kTransientLocal ? "transient_local" : "volatile";
  j["history"] = {
      {"kind", q.history.kind == pubsub::HistoryKind::kKeepAll ? "keep_all" : "keep_last"},
      {"depth", q.history.depth}};
  j["max_blocking_time_ns"] =
      q.max_blocking_time == pubsub::Duration::max() ? -1 : q.max_blocking_time.count();
  j["partitions"] = q.partitions;
  j["data_representation"] = q.data_representation;
  const std::string s = j.dump();
  storage::Bytes out(s.size());
  std::memcpy(out.data(), s.data(), s.size());
  return out;
}

bool decode_qos(storage::ByteSpan bytes, RecordedQos& out, std::string* error) {
  const auto j = nlohmann::json::parse(reinterpret_cast<const char*>(bytes.data()),
                                       reinterpret_cast<const char*>(bytes.data()) + bytes.size(),
                                       nullptr, false);
  auto fail = [&](const char* why) {
    if (error) *error = why;
    return false;
  };
  if (!j.is_object()) return fail("QoS is not a JSON object");
  RecordedQos q;
  try {
    if (j.contains("reliability")) {
      q.reliability = j.at("reliability").get<std::string>() == "best_effort"
                          ? pubsub::ReliabilityKind::kBestEffort
                          : pubsub::ReliabilityKind::kReliable;
    }
    if (j.contains("durability")) {
      q.durability = j.at("durability").get<std::string>() == "transient_local"
                         ? pubsub::DurabilityKind::kTransientLocal
                         : pubsub::DurabilityKind::kVolatile;
    }
    if (j.contains("history")) {
      const auto& h = j.at("history");
      q.history.kind = h.value("kind", "keep_all") == "keep_last" ? pubsub::HistoryKind::kKeepLast
                                                                  : pubsub::HistoryKind::kKeepAll;
      q.history.depth = h.value("depth", 1);
    }
    if (j.contains("max_blocking_time_ns")) {
      const int64_t ns = j.at("max_blocking_time_ns").get<int64_t>();
      q.max_blocking_time = ns < 0 ? pubsub::Duration::max() : pubsub::Duration(ns);
    }
    if (j.contains("partitions")) q.partitions = j.at("partitions").get<std::vector<std::string>>();
    if (j.contains("data_representation")) {
      q.data_representation = j.at("data_representation").get<std::vector<int16_t>>();
    }
  } catch (const nlohmann::json::exception&) {
    return fail("QoS member of the wrong type");
  }
  out = std::move(q);
  return true;
}

RecordedQos recorded_qos(const pubsub::TopicInfo& t) {
  RecordedQos q;
  q.reliability = t.reliability;
  q.durability = t.durability;
  q.history = t.history;
  q.max_blocking_time = t.max_blocking_time;
  q.partitions = t.partitions;
  q.data_representation = t.data_representation;
  return q;
}

storage::TopicDef topic_def(const pubsub::TopicInfo& t) {
  storage::TopicDef d;
  d.name = t.name;
  d.type_name = t.type_name;
  d.keyed = t.keyed;
  d.qos = encode_qos(recorded_qos(t));
  d.type_info.resize(t.type_information.size());
  if (!t.type_information.empty()) {
    std::memcpy(d.type_info.data(), t.type_information.data(), t.type_information.size());
  }
  return d;
}

pubsub::TopicDescription replay_topic(const storage::TopicDef& def, const RecordedQos& qos) {
  pubsub::TopicDescription t;
  t.name = def.name;
  t.type_name = def.type_name;
  t.keyed = def.keyed;
  t.partitions = qos.partitions;
  t.data_representation = qos.data_representation;
  t.type_information.resize(def.type_info.size());
  if (!def.type_info.empty()) {
    std::memcpy(t.type_information.data(), def.type_info.data(), def.type_info.size());
  }
  return t;
}

pubsub::WriterQos replay_writer_qos(const RecordedQos& qos) {
  pubsub::WriterQos w;
  w.reliability = qos.reliability;
  // Replay is volatile: the recorded samples are re-published live, in order, from SN 1.
  w.durability = pubsub::DurabilityKind::kVolatile;
  w.history = {pubsub::HistoryKind::kKeepAll, 1};
  w.max_blocking_time = std::chrono::seconds(1);
  return w;
}

uint32_t record_flags(const pubsub::RawSample& s) {
  uint32_t f = 0;
  if (s.has_source_timestamp) f |= kFlagHasSourceTimestamp;
  if (s.key_only) f |= kFlagKeyOnly;
  if (s.status_info & 1u) f |= kFlagDisposed;
  if (s.status_info & 2u) f |= kFlagUnregistered;
  return f;
}

}  // namespace service
