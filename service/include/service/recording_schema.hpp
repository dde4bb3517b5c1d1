// How pubsub-recorder lays DDS traffic into the storage module, and how pubsub-replay reads it
// back. The store itself is opaque about these fields; this header is the contract.
//
// - One storage topic per class of writer a RawReader reads (topic name, type name, keyedness,
//   reliability, partitions, ownership kind, durable or not), i.e. per pubsub::TopicInfo it
//   reports. TopicDef::qos holds the QoS of the first writer of the class as compact JSON
//   (RecordedQos below; qos_json.cpp has the form); TopicDef::type_info holds
//   PID_TYPE_INFORMATION as announced, byte for byte (empty when the writer sent none).
// - One storage writer per remote writer GUID (WriterDef::guid = the 16-byte RTPS GUID), whose
//   WriterDef::qos is that writer's own RecordedQos with its participant (format 5 and later;
//   empty in older recordings, whose writers replay with their topic's QoS).
// - One record per sample: sequence = the RTPS sequence number, source_ns = INFO_TS (0 if the
//   writer sent none), reception_ns = when the recorder received it, the RTPS key hash when the
//   writer sent one, payload = the serialized payload exactly as on the wire (encapsulation
//   header included), flags as below.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pubsub/participant.hpp"
#include "pubsub/reader.hpp"
#include "service/result.hpp"
#include "storage/records.hpp"

namespace service {

// storage::RecordMeta::flags
inline constexpr uint32_t kFlagHasSourceTimestamp = 1u << 0;
inline constexpr uint32_t kFlagKeyOnly = 1u << 1;       // payload is a serialized key
inline constexpr uint32_t kFlagDisposed = 1u << 2;      // PID_STATUS_INFO disposed
inline constexpr uint32_t kFlagUnregistered = 1u << 3;  // PID_STATUS_INFO unregistered

// The participant of a recorded writer, as it announced itself.
struct RecordedParticipant {
  uint16_t vendor_id = 0;  // big-endian RTPS vendor id: 0x0110 Cyclone, 0x010f Fast DDS
  std::string user_data;
  pubsub::Duration lease_duration{};
  bool operator==(const RecordedParticipant&) const = default;
};

// Every policy a recorded writer offered, enough to recreate it on replay.
struct RecordedQos {
  pubsub::ReliabilityKind reliability = pubsub::ReliabilityKind::kReliable;
  pubsub::DurabilityKind durability = pubsub::DurabilityKind::kVolatile;
  pubsub::HistoryQos history;
  pubsub::Duration max_blocking_time = std::chrono::milliseconds(100);
  std::vector<std::string> partitions;
  std::vector<int16_t> data_representation;
  pubsub::Policies policies;
  std::optional<RecordedParticipant> participant;  // writers' QoS only
  // Writers' QoS only: why the recorder could not read this writer ("DATA_REPRESENTATION: ...",
  // the policy as DDS names it, then the reason); empty for a writer whose samples are recorded.
  std::string not_matched;
  bool operator==(const RecordedQos&) const = default;
};

// {"reliability":"reliable","durability":"transient_local","history":{"kind":"keep_last",
//  "depth":5},"max_blocking_time_ns":100000000,"partitions":[],"data_representation":[0],
//  "deadline_ns":-1,"ownership":"exclusive","ownership_strength":7,...} - every policy by its
// DDS name, durations in nanoseconds (-1: infinite), octets in hex (qos_json.cpp).
storage::Bytes encode_qos(const RecordedQos& qos);
std::string qos_json_text(const RecordedQos& qos);
// One line a person reads: reliability, durability and history always, then every policy off
// DDS's default ("reliable, transient_local keep_last 5, exclusive (strength 7), deadline 2 s").
std::string qos_summary(const RecordedQos& qos);
// kCorrupt (with the reason) for bytes that are not such an object; unknown members are ignored
// (a newer recorder's), missing ones keep their defaults (an older recorder's).
Result<RecordedQos> decode_qos(storage::ByteSpan bytes);
// `qos` with the members of a JSON object applied over it (play --qos): the same members,
// durations also as text ("2 s", "250 ms", "infinite"). kInvalidArgument with "/path: reason"
// for an unknown member, a wrong type or value.
Result<RecordedQos> apply_qos_overrides(std::string_view json_object, RecordedQos qos);

RecordedQos recorded_qos(const pubsub::TopicInfo& topic);
RecordedQos recorded_qos(const pubsub::WriterInfo& writer);
// A writer that announces no data representation offers XCDR1 - unless its samples are XCDR2
// (Fast DDS 2.9 sends XCDR2 without saying so): then {XCDR2}, from the encapsulation of
// `first_sample` (the serialized payload, header included).
void infer_representation(RecordedQos& qos, storage::ByteSpan first_sample);
// Whether a serialized sample's encapsulation header says XCDR2 (the rule of
// infer_representation).
bool xcdr2_encapsulation(storage::ByteSpan sample);
storage::TopicDef topic_def(const pubsub::TopicInfo& topic);

// The description and writer QoS that replay publishes a recorded topic with.
pubsub::TopicDescription replay_topic(const storage::TopicDef& def, const RecordedQos& qos);
pubsub::WriterQos replay_writer_qos(const RecordedQos& qos);

// The record flags of a received sample (inline: the recorder calls it per sample).
inline uint32_t record_flags(const pubsub::RawSample& s) {
  uint32_t f = 0;
  if (s.has_source_timestamp) f |= kFlagHasSourceTimestamp;
  if (s.key_only) f |= kFlagKeyOnly;
  if (s.status_info & 1u) f |= kFlagDisposed;
  if (s.status_info & 2u) f |= kFlagUnregistered;
  return f;
}

// A GUID as `pubsub-replay info` and the recorder's log print it (32 lower-case hex digits:
// prefix, then entity id).
std::string guid_hex(const pubsub::Guid& g);

// A clock offset measured through one request and its reply (a recording set's members, ctl
// --set): the other clock minus ours, and the bound on its error (half the round trip without
// the other side's time between the request's arrival and the reply's departure).
struct ClockOffset {
  int64_t offset_ns = 0;
  int64_t error_ns = 0;
  friend bool operator==(const ClockOffset&, const ClockOffset&) = default;
};
// A clock_offset mark's note (storage::MarkKind::kClockOffset), "+0.001234567 s, error
// 0.000210000 s", and back (none: not exactly that form).
std::string clock_note(const ClockOffset& c);
std::optional<ClockOffset> parse_clock_note(const std::string& note);
// Recording b's clock minus recording a's, from either one's clock_offset marks naming the other
// (a's member named by b's set_member note `b_member`, and the reverse), the measurement with
// the smallest error bound; none when neither measured the other or a member is unnamed.
std::optional<ClockOffset> measured_offset(const std::vector<storage::Mark>& a_marks,
                                           const std::string& a_member,
                                           const std::vector<storage::Mark>& b_marks,
                                           const std::string& b_member);

}  // namespace service
