// Readers. Reader receives the samples of one topic and hands the CDR body to a callback.
// RawReader receives every topic matching glob patterns, discovered as writers appear, and
// hands out the serialized payload with its metadata without deserializing (the recorder).
// Callbacks run on the thread that delivered the sample (a receive thread, the shared-memory
// thread or an intra-process writer's thread; see participant.hpp), in each writer's sequence
// order. One reader's callbacks never overlap; callbacks of different readers may run at the
// same time.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pubsub/basics.hpp"
#include "pubsub/qos.hpp"
#include "pubsub/stats.hpp"

namespace pubsub {

namespace detail {
class ReaderImpl;
class RawReaderImpl;
class LoanRegistry;
struct LoanedSampleAccess;
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

// A sample a listener may keep after its call returns (Participant::create_loaning_reader).
// From a writer on this host its body points into the writer's shared-memory segment or, in the
// same process, its history: nothing was copied. From the network it owns a copy. Rules:
// - valid until released (release() or the destructor); release() a second time is rejected;
// - while held, the sample is not acknowledged and its memory not reused: a reliable writer
//   blocks once its history is full of samples held (as a slow reader makes it), a KEEP_LAST
//   writer too - it never overwrites what a reader holds; at most 4096 per writer are handed
//   out before delivery waits for releases.
class LoanedSample {
 public:
  LoanedSample() = default;
  LoanedSample(LoanedSample&& o) noexcept { *this = std::move(o); }
  LoanedSample& operator=(LoanedSample&& o) noexcept;
  ~LoanedSample();
  LoanedSample(const LoanedSample&) = delete;
  LoanedSample& operator=(const LoanedSample&) = delete;

  const SampleInfo& info() const { return info_; }
  Bytes body() const { return body_; }  // as SampleCallback's body
  bool valid() const { return valid_; }
  // True when the body is the writer's own memory (shared memory or in-process).
  bool zero_copy() const { return registry_ != nullptr; }
  Result<void> release();

 private:
  friend struct detail::LoanedSampleAccess;
  SampleInfo info_;
  Bytes body_;
  bool valid_ = false;
  std::shared_ptr<detail::LoanRegistry> registry_;
  std::shared_ptr<const void> anchor_;  // keeps the memory body_ points into
  std::unique_ptr<std::byte[]> copy_;   // network samples
};

using LoanCallback = std::function<void(LoanedSample sample)>;

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
  Policies policies;                      // every other policy it offers
};

// One remote writer as it announced itself, and its participant (SPDP).
struct WriterInfo {
  Guid guid;
  TopicInfo topic;  // this writer's own offer
  uint8_t vendor[2] = {};
  std::string participant_user_data;
  Duration participant_lease{};
  // Its participant's default unicast locators (and the writer's own, when it announced any).
  std::vector<Locator> unicast;
  // Whether its participant runs on this host, as far as its announcement tells: a shared-memory
  // locator naming this host (ours), or a unicast IPv4 address that one of this host's
  // interfaces has. Loopback addresses count only when it announces no other (every host has
  // 127.0.0.1). A network namespace is a host of its own.
  bool same_host = false;
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
  // And, when set, a topic the patterns select is read only if this returns true for its name
  // (pubsub-recorder's topics.regex). Called on discovery threads.
  std::function<bool(const std::string& topic)> filter;
  // QoS of the readers created for reliable writers (best-effort writers get best-effort
  // readers with the same limits).
  ReaderQos qos;
};

// Whether a raw reader with `options` reads `topic`: it matches an include pattern, no exclude
// pattern, and the filter (when set). The rule create_raw_reader applies, for callers that
// explain the choice (pubsub-recorder's "left out" lines).
bool raw_reader_wants(const RawReaderOptions& options, const std::string& topic);

struct RawReaderListener {
  // A sample, in each writer's order. Return false to refuse it for now (back-pressure): it
  // stays unacknowledged and is offered again after resume() or within a few milliseconds.
  std::function<bool(const RawSample&)> on_sample;
  // After one or more on_sample calls on a thread, before that thread leaves the reader: the end
  // of a batch (the samples of one datagram, or of one delivery from shared memory, another
  // process-local writer or the event thread's retries). A listener may hold a lock of its own
  // across a batch's on_sample calls and release it here; it must not take other locks in
  // between that a thread outside the batch holds while waiting for it.
  std::function<void()> on_batch_end;
  // A remote writer was matched / lost (lease expired or it was deleted). `TopicInfo` is the
  // subscription's: the object RawSample::topic points to (stable while the raw reader lives).
  // `writer` is how it announced itself (as RawReader::writer_info(), which create_raw_reader's
  // caller cannot reach yet for the writers matched inside it). `undelivered`: the lost writer's
  // samples this reader will now never get (held back by on_sample's refusals, or sent or announced
  // and never received); they are in no later sequence gap unless the writer is matched again.
  // With on_writer_lost set the participant does not log such a loss itself (it does for readers
  // whose loss no listener is told): reporting it is the listener's.
  std::function<void(const TopicInfo&, const WriterInfo& writer)> on_writer_matched;
  std::function<void(const TopicInfo&, const Guid& writer, const UndeliveredSamples& undelivered)>
      on_writer_lost;
  // A writer on a wanted topic that the raw reader cannot read (it offers a data representation
  // other than XCDR1 and XCDR2): not matched, reported once with the policy and both values.
  // `TopicInfo` is the subscription's (stable while the raw reader lives, as RawSample::topic);
  // writer_info() has the writer's offer.
  std::function<void(const TopicInfo&, const Guid& writer, QosPolicyId policy,
                     const std::string& reason)>
      on_writer_incompatible;
};

class RawReader {
 public:
  ~RawReader();
  // Offers refused samples again now.
  void resume();
  size_t matched_writers() const;
  std::vector<TopicInfo> topics() const;
  ReaderStats stats() const;
  // How a matched writer announced itself (null for a writer never matched). Known before its
  // first sample is delivered; callable from the listener (it takes only a leaf lock).
  std::shared_ptr<const WriterInfo> writer_info(const Guid& writer) const;

 private:
  friend class Participant;
  explicit RawReader(std::shared_ptr<detail::RawReaderImpl> impl);
  std::shared_ptr<detail::RawReaderImpl> impl_;
};

}  // namespace pubsub
