// Readers. Reader receives the samples of one topic and hands the CDR body to a callback.
// RawReader receives every topic matching glob patterns, discovered as writers appear, and
// hands out the serialized payload with its metadata without deserializing (the recorder).
// Callbacks run on the participant's receive threads, in each writer's sequence order. One
// reader's callbacks never overlap; callbacks of different readers may run at the same time.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pubsub/qos.hpp"
#include "pubsub/stats.hpp"
#include "pubsub/types.hpp"

namespace pubsub {

namespace detail {
class ReaderImpl;
class RawReaderImpl;
}  // namespace detail

struct SampleInfo {
  Guid writer;
  SequenceNumber sequence_number = 0;
  Time source_timestamp;  // from INFO_TS, or zero when the writer sent none
  Time reception_timestamp;
  std::optional<KeyHash> key_hash;
  uint32_t status_info = 0;    // 1 disposed, 2 unregistered (then the body is the key)
  uint16_t encapsulation = 0;  // 0x0001 CDR_LE, ...
};

// body: the serialized data after the 4-byte encapsulation header, padding removed.
using SampleCallback = std::function<void(const SampleInfo& info, Bytes body)>;

class Reader {
 public:
  ~Reader();
  size_t matched_writers() const;
  bool wait_for_writers(size_t n, Duration timeout);
  const Guid& guid() const;
  ReaderStats stats() const;

 private:
  friend class Participant;
  explicit Reader(std::shared_ptr<detail::ReaderImpl> impl);
  std::shared_ptr<detail::ReaderImpl> impl_;
};

// ---- raw reader -----------------------------------------------------------------------------

// A discovered topic as one remote writer offers it (what replay needs to recreate the writer).
struct TopicInfo {
  std::string name;
  std::string type_name;
  bool keyed = false;
  ReliabilityKind reliability = ReliabilityKind::kReliable;
  DurabilityKind durability = DurabilityKind::kVolatile;
  HistoryQos history;
  Duration max_blocking_time{};
  std::vector<std::string> partitions;
  std::vector<int16_t> data_representation;
  std::vector<uint8_t> type_information;  // as the writer announced it, byte for byte
};

struct RawSample {
  const TopicInfo* topic = nullptr;  // stable while the raw reader lives
  Guid writer;
  SequenceNumber sequence_number = 0;
  bool has_source_timestamp = false;
  Time source_timestamp;
  Time reception_timestamp;
  std::optional<KeyHash> key_hash;
  uint32_t status_info = 0;
  bool key_only = false;
  Bytes serialized;  // encapsulation header included, as on the wire
};

struct RawReaderOptions {
  std::vector<std::string> include{"*"};  // glob patterns over topic names (*, ?, [a-z])
  std::vector<std::string> exclude;
  // QoS of the readers created for reliable writers (best-effort writers get best-effort
  // readers with the same limits).
  ReaderQos qos;
};

struct RawReaderListener {
  // A sample, in each writer's order. Return false to refuse it for now (back-pressure): it
  // stays unacknowledged and is offered again after resume() or within a few milliseconds.
  std::function<bool(const RawSample&)> on_sample;
  // A remote writer was matched / lost (lease expired or it was deleted).
  std::function<void(const TopicInfo&, const Guid& writer)> on_writer_matched;
  std::function<void(const TopicInfo&, const Guid& writer)> on_writer_lost;
};

class RawReader {
 public:
  ~RawReader();
  // Offers refused samples again now.
  void resume();
  size_t matched_writers() const;
  std::vector<TopicInfo> topics() const;
  ReaderStats stats() const;

 private:
  friend class Participant;
  explicit RawReader(std::shared_ptr<detail::RawReaderImpl> impl);
  std::shared_ptr<detail::RawReaderImpl> impl_;
};

}  // namespace pubsub
