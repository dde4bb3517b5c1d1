// WriterHistory: the samples a writer keeps until every reliable reader has acknowledged them.
//
// Two fixed rings allocated once: a ring of CacheChange descriptors (max_samples) and a ring of
// payload bytes (max_bytes). Samples enter at the head with consecutive sequence numbers and
// leave from the tail, oldest first, so lookup by sequence number is an index computation
// (sample sn is descriptor (sn - 1) % max_samples) and nothing is allocated after construction.
// The rings are the history's own memory, or memory it is given: a writer's shared-memory
// segment, where readers of other processes read them (shm/segment.hpp). For them a
// descriptor's sn is written atomically, last, and cleared (invalidate_through) before its
// space may be reused. Not thread-safe: the owning writer's mutex guards it.
//
// Early wrap (set_wrap_ahead): the byte ring's pages are faulted in on first use, which costs
// about 15-20 us each on this project's VM (inferred from the latency tail). A writer whose history
// stays small (acknowledged as it goes) would walk once through all of max_bytes (64 MiB in
// pubsub-perftest), one fault per 4 KiB written: every fourth 1024-B sample of a latency test. With
// wrap_ahead W > 0, the head goes back to offset 0 as soon as the free room before the oldest
// sample holds what is held now plus W plus the new sample, so the ring keeps to the pages it has
// touched. The owner sets W only where it bounds how much more the history takes before the oldest
// samples leave (a writer's flow-control window); 0 (the default) wraps only at the end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "pubsub/basics.hpp"

namespace pubsub::rtps {

struct CacheChange {
  SequenceNumber sn = 0;
  Time timestamp;
  size_t offset = 0;         // of the serialized payload in the byte ring
  uint32_t size = 0;         // serialized payload bytes (encapsulation header included)
  uint32_t status_info = 0;  // dispose/unregister: the payload is then the serialized key
  bool has_key_hash = false;
  KeyHash key_hash;
  // Largest payload one datagram carries for this sample, fixed when it is written (from the
  // readers then matched): above it the sample travels as DATA_FRAGs, and its fragments keep
  // one size through every repair. Last, in what was padding: shared-memory readers
  // (segment.hpp) see the fields above where they always were.
  uint32_t max_payload = 0;
};
// Shared memory holds CacheChanges: a different size is a new shm::kLayoutVersion.
static_assert(sizeof(CacheChange) == 56);

class WriterHistory {
 public:
  WriterHistory(size_t max_samples, size_t max_bytes);
  // Over memory the caller provides: `changes` holds max_samples descriptors, `bytes`
  // capacity_for(max_bytes) bytes.
  WriterHistory(size_t max_samples, size_t max_bytes, CacheChange* changes, uint8_t* bytes);
  static size_t capacity_for(size_t max_bytes) { return max_bytes == 0 ? 8 : round(max_bytes); }

  // Space for a sample with the next sequence number (last_sn() + 1), or nullptr when either
  // ring is full. The caller copies the payload into data(*change).
  CacheChange* try_append(size_t size);
  // Loans: where a sample of `size` would go (SIZE_MAX if it does not fit now), and the append
  // of that sample at that offset later. Between the two nothing else may be appended (the
  // writer lends one buffer at a time); removals at the tail only make more room.
  size_t reserve(size_t size) const;
  CacheChange* append_at(size_t offset, size_t size);
  uint8_t* bytes_at(size_t offset) { return bytes_ + offset; }
  bool can_append(size_t size) const;
  void set_wrap_ahead(size_t bytes) { wrap_ahead_ = bytes; }
  uint8_t* data(const CacheChange& c) { return bytes_ + c.offset; }
  const uint8_t* data(const CacheChange& c) const { return bytes_ + c.offset; }

  const CacheChange* find(SequenceNumber sn) const;
  void remove_through(SequenceNumber sn);  // drops every sample with sequence number <= sn
  void remove_oldest();
  // Marks the samples <= sn as gone for shared-memory readers, before they are removed.
  void invalidate_through(SequenceNumber sn);

  bool empty() const { return count_ == 0; }
  size_t size() const { return count_; }
  SequenceNumber first_sn() const { return last_sn_ - static_cast<SequenceNumber>(count_) + 1; }
  SequenceNumber last_sn() const { return last_sn_; }
  size_t bytes_used() const { return used_; }
  size_t max_samples() const { return ring_size_; }
  size_t max_bytes() const { return max_bytes_; }
  // Whether a sample of this size can ever fit.
  bool fits(size_t size) const { return size <= max_bytes_ && round(size) <= capacity_; }

 private:
  static size_t round(size_t n) { return n == 0 ? 8 : (n + 7) & ~size_t{7}; }
  const CacheChange& oldest() const { return ring_[tail_idx_]; }
  // The ring index `k` places after the oldest, k <= ring_size_ (no division on the write path).
  size_t slot(size_t k) const {
    const size_t i = tail_idx_ + k;
    return i >= ring_size_ ? i - ring_size_ : i;
  }

  std::unique_ptr<CacheChange[]> own_ring_;
  CacheChange* ring_;
  size_t ring_size_;
  size_t tail_idx_ = 0;  // oldest sample
  size_t count_ = 0;
  SequenceNumber last_sn_ = 0;

  size_t max_bytes_;                      // as configured
  std::unique_ptr<uint8_t[]> own_bytes_;  // not value-initialised: pages are touched when used
  uint8_t* bytes_;
  size_t capacity_;
  size_t head_ = 0;  // where the next payload goes
  size_t used_ = 0;  // payload bytes held (rounded)
  size_t wrap_ahead_ = 0;
};

}  // namespace pubsub::rtps
