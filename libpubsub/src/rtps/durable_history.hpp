// DurableHistory: what a TRANSIENT_LOCAL (or more durable) writer keeps for readers that join
// later, per instance as DDS defines it.
//
// WriterHistory (history.hpp) is a ring of consecutive sequence numbers that frees samples
// oldest first, so it cannot keep "the last N samples of each instance" while newer samples of
// other instances arrive. This keeps copies of exactly those: per instance (the key hash; one
// instance for unkeyed topics) its last `depth` samples under KEEP_LAST, every sample under
// KEEP_ALL, within resource limits (max_samples and max_bytes over all instances; the oldest
// sample leaves first when they are reached). Dispose and unregister samples count as samples of
// their instance, so a late joiner learns the instance's state too.
//
// The writer adds each sample it commits (add()), and serves a sequence number the ring no
// longer holds from here (find(), data()) - to a durable reader that joined late, or a repair.
// Payload buffers of samples that leave are reused for the next ones, so a writer that keeps the
// same number of samples of similar sizes stops allocating for payloads once warm.
//
// Not thread-safe: the owning writer's mutex guards it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <unordered_map>
#include <vector>

#include "pubsub/qos.hpp"
#include "rtps/history.hpp"

namespace pubsub::rtps {

class DurableHistory {
 public:
  DurableHistory(HistoryQos history, size_t max_samples, size_t max_bytes);

  // Keeps a copy of sample `c` (payload: c.size bytes), dropping what it displaces.
  void add(const CacheChange& c, const uint8_t* payload);
  // The kept sample with this sequence number, or nullptr.
  const CacheChange* find(SequenceNumber sn) const;
  // The payload of a sample find() returned.
  const uint8_t* data(const CacheChange& c) const;
  // Whether `c` is one of the samples kept here (not the ring's).
  bool holds(const CacheChange& c) const;
  // The lowest sequence number kept, 0 when empty.
  SequenceNumber first_sn() const { return samples_.empty() ? 0 : samples_.begin()->first; }
  size_t size() const { return samples_.size(); }
  size_t bytes() const { return bytes_; }
  size_t instances() const { return instances_.size(); }

 private:
  struct Kept {
    CacheChange change;
    std::vector<uint8_t> payload;
  };
  struct KeyHashOf {
    size_t operator()(const KeyHash& k) const;
  };
  void drop(SequenceNumber sn);
  static KeyHash instance_of(const CacheChange& c) {
    return c.has_key_hash ? c.key_hash : KeyHash{};
  }

  HistoryQos history_;
  size_t max_samples_;
  size_t max_bytes_;
  std::map<SequenceNumber, Kept> samples_;
  std::unordered_map<KeyHash, std::deque<SequenceNumber>, KeyHashOf> instances_;
  size_t bytes_ = 0;
  std::vector<std::vector<uint8_t>> spare_;  // payload buffers of samples that left
};

}  // namespace pubsub::rtps
