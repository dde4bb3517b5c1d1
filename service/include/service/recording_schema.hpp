// How pubsub-recorder lays DDS traffic into the storage module, and how pubsub-replay reads it
// back. The store itself is opaque about these fields; this header is the contract.
//
// - One storage topic per discovered (topic name, type name, keyedness, reliability, partitions)
//   combination, i.e. per pubsub::TopicInfo a RawReader reports. TopicDef::qos holds the QoS
//   below as compact JSON; TopicDef::type_info holds PID_TYPE_INFORMATION as announced, byte for
//   byte (empty when the writer sent none).
// - One storage writer per remote writer GUID (WriterDef::guid = the 16-byte RTPS GUID).
// - One record per sample: sequence = the RTPS sequence number, source_ns = INFO_TS (0 if the
//   writer sent none), reception_ns = when the recorder received it, the RTPS key hash when the
//   writer sent one, payload = the serialized payload exactly as on the wire (encapsulation
//   header included), flags as below.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "pubsub/participant.hpp"
#include "pubsub/reader.hpp"
#include "storage/types.hpp"

namespace service {

// storage::RecordMeta::flags
inline constexpr uint32_t kFlagHasSourceTimestamp = 1u << 0;
inline constexpr uint32_t kFlagKeyOnly = 1u << 1;       // payload is a serialized key
inline constexpr uint32_t kFlagDisposed = 1u << 2;      // PID_STATUS_INFO disposed
inline constexpr uint32_t kFlagUnregistered = 1u << 3;  // PID_STATUS_INFO unregistered

// The QoS a recorded writer offered, enough to recreate it on replay.
struct RecordedQos {
  pubsub::ReliabilityKind reliability = pubsub::ReliabilityKind::kReliable;
  pubsub::DurabilityKind durability = pubsub::DurabilityKind::kVolatile;
  pubsub::HistoryQos history;
  pubsub::Duration max_blocking_time = std::chrono::milliseconds(100);
  std::vector<std::string> partitions;
  std::vector<int16_t> data_representation;
};

// {"reliability":"reliable","durability":"volatile","history":{"kind":"keep_all","depth":1},
//  "max_blocking_time_ns":100000000,"partitions":[],"data_representation":[0]}
storage::Bytes encode_qos(const RecordedQos& qos);
// False (with a reason) for bytes that are not such an object; unknown members are ignored.
bool decode_qos(storage::ByteSpan bytes, RecordedQos& out, std::string* error = nullptr);

RecordedQos recorded_qos(const pubsub::TopicInfo& topic);
storage::TopicDef topic_def(const pubsub::TopicInfo& topic);

// The description and writer QoS that replay publishes a recorded topic with.
pubsub::TopicDescription replay_topic(const storage::TopicDef& def, const RecordedQos& qos);
pubsub::WriterQos replay_writer_qos(const RecordedQos& qos);

uint32_t record_flags(const pubsub::RawSample& sample);

}  // namespace service
