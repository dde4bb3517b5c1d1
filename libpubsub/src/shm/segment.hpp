// The shared-memory layouts: a writer's segment (its history, readable by readers on the same
// host) and a participant's doorbell (the word its shared-memory receive thread sleeps on).
//
// Writer segment, one per writer, created and owned by the writer's process:
//   SegmentHeader | ReaderSlot[max_slots] | CacheChange[max_samples] | payload ring
// The CacheChange array and the payload ring ARE the writer's history (rtps::WriterHistory
// built over this memory): a sample is written once, by the writer, and read in place.
//
// Protocol (every cross-process word is a lock-free std::atomic, so address-free):
// - Publication: the writer fills a sample's CacheChange and payload, then stores last_sn
//   (release). Readers read samples up to last_sn (acquire). Sample sn is CacheChange
//   [(sn - 1) % max_samples]; its `sn` field, read atomically, says whether it is still there.
// - Reader slots: a reader claims a free slot (CAS), writes its GUID and pid, and publishes
//   `acked` (every sn <= acked is done with: reliable writers release history by it) and
//   `hold` (the lowest sn it is reading now or has on loan; kNoHold when none).
// - Reclaiming: before the writer reuses a sample's space it clears the CacheChange's sn
//   (seq_cst) and then reads every slot's hold (seq_cst); it frees only samples below the
//   lowest hold. A reader sets hold = sn (seq_cst) and then re-reads the sn field (seq_cst)
//   before touching the payload: one of the two always sees the other, so a reader never reads
//   reused memory and a writer never blocks on a reader that is not reading.
// - Wake-ups: readers bump `progress` after acknowledging or releasing and wake the writer
//   (futex) when `writer_waiting` is set; writers bump the reader participant's doorbell `seq`
//   after publishing and wake it when its `waiters` is set.
// - Nothing is a lock: a process killed at any point leaves words that others only read. Its
//   slot (or segment) is found dead by its pid and freed.
// Every value read from a segment is untrusted (another process wrote it): validate() checks
// the header against the mapping's size, and readers bound every offset before using it.
#pragma once

#include <atomic>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "pubsub/basics.hpp"
#include "rtps/history.hpp"
#include "shm/platform.hpp"

namespace pubsub::shm {

inline constexpr uint32_t kLayoutVersion = 1;
inline constexpr uint32_t kMaxSlots = 32;
inline constexpr SequenceNumber kNoHold = INT64_MAX;
inline constexpr char kSegmentMagic[8] = {'P', 'S', 'U', 'B', 'S', 'E', 'G', '1'};
inline constexpr char kDoorbellMagic[8] = {'P', 'S', 'U', 'B', 'B', 'E', 'L', '1'};

enum SlotState : uint32_t { kSlotFree = 0, kSlotClaimed = 1, kSlotActive = 2 };

struct alignas(64) ReaderSlot {
  std::atomic<uint32_t> state;
  int32_t pid;
  uint8_t guid[16];
  std::atomic<int64_t> acked;
  std::atomic<int64_t> hold;
};

struct SegmentHeader {
  char magic[8];
  uint32_t version;
  uint32_t header_size;
  uint32_t slot_size;
  uint32_t change_size;
  uint32_t max_slots;
  uint32_t max_samples;
  uint64_t ring_bytes;
  uint64_t slots_offset;
  uint64_t changes_offset;
  uint64_t ring_offset;
  uint64_t total_size;
  int32_t writer_pid;
  uint32_t reserved;
  uint8_t writer_guid[16];
  alignas(64) std::atomic<int64_t> last_sn;    // published samples: everything <= last_sn
  std::atomic<int64_t> first_sn;               // oldest sample kept (durable readers start here)
  alignas(64) std::atomic<uint32_t> progress;  // readers bump it; the writer sleeps on it
  std::atomic<uint32_t> writer_waiting;
};

struct DoorbellHeader {
  char magic[8];
  uint32_t version;
  int32_t pid;
  alignas(64) std::atomic<uint32_t> seq;  // writers bump it; the receive thread sleeps on it
  std::atomic<uint32_t> waiters;
};

struct Layout {
  size_t slots_offset = 0;
  size_t changes_offset = 0;
  size_t ring_offset = 0;
  size_t total_size = 0;
};
Layout layout_for(size_t max_samples, size_t ring_bytes);

// Success when data[0, size) holds a segment (doorbell) header this build can read, else
// kCorrupt with the reason ("segment layout version 7").
Result<void> validate_segment(const uint8_t* data, size_t size);
Result<void> validate_doorbell(const uint8_t* data, size_t size);

// Whether a descriptor's payload lies inside a ring of ring_bytes (descriptors are untrusted).
inline bool payload_in_ring(const rtps::CacheChange& c, uint64_t ring_bytes) {
  return c.offset <= ring_bytes && c.size <= ring_bytes - c.offset;
}

// Bumps a doorbell and wakes its thread if it sleeps.
inline void ring(DoorbellHeader& bell) {
  bell.seq.fetch_add(1, std::memory_order_seq_cst);
  if (bell.waiters.load(std::memory_order_seq_cst)) futex_wake_all(bell.seq);
}

// Reader side: tells the writer it may have room now.
inline void signal_progress(SegmentHeader& h) {
  h.progress.fetch_add(1, std::memory_order_seq_cst);
  if (h.writer_waiting.load(std::memory_order_seq_cst)) futex_wake_all(h.progress);
}

// ---- writer side ------------------------------------------------------------------------------

class WriterSegment {
 public:
  static Result<std::unique_ptr<WriterSegment>> create(const Guid& writer, size_t max_samples,
                                                       size_t ring_bytes);
  const std::string& name() const { return map_.name(); }
  SegmentHeader& header() const { return *reinterpret_cast<SegmentHeader*>(map_.data()); }
  rtps::CacheChange* changes() const {
    return reinterpret_cast<rtps::CacheChange*>(map_.data() + header().changes_offset);
  }
  uint8_t* ring() const { return map_.data() + header().ring_offset; }
  ReaderSlot& slot(size_t i) const {
    return reinterpret_cast<ReaderSlot*>(map_.data() + header().slots_offset)[i];
  }

  void publish(SequenceNumber last, SequenceNumber first) {
    header().first_sn.store(first, std::memory_order_release);
    header().last_sn.store(last, std::memory_order_release);
  }
  // The active slot of this reader, or -1.
  int find_slot(const Guid& reader) const;
  // The lowest sn a live reader holds (kNoHold if none). Frees the slots of dead processes.
  SequenceNumber min_hold();

 private:
  Mapping map_;
};

// ---- reader side ------------------------------------------------------------------------------

// A writer's segment mapped by a reader, with the slot it claimed.
class SegmentView {
 public:
  // Opens and validates the segment and checks it belongs to `writer`.
  static Result<SegmentView> open(const std::string& name, const Guid& writer);
  SegmentView() = default;
  SegmentView(SegmentView&& o) noexcept { *this = std::move(o); }
  SegmentView& operator=(SegmentView&& o) noexcept;
  ~SegmentView();

  // Claims a slot for `reader`, acknowledging everything below `start`.
  Result<void> claim(const Guid& reader, SequenceNumber start);
  void release_slot();

  SegmentHeader& header() const { return *reinterpret_cast<SegmentHeader*>(map_.data()); }
  ReaderSlot* slot() const { return slot_; }
  const std::string& name() const { return map_.name(); }
  // The descriptor of sample sn, copied, if it is still there and in bounds; nullptr if it is
  // gone (reclaimed). Sets the hold to sn first (see the protocol above).
  const uint8_t* acquire(SequenceNumber sn, rtps::CacheChange& out) const;
  bool writer_alive() const { return process_alive(header().writer_pid); }

 private:
  Mapping map_;
  ReaderSlot* slot_ = nullptr;
  // Validated at open: never re-read from the (writable by others) header.
  uint64_t max_samples_ = 0;
  uint64_t ring_bytes_ = 0;
  rtps::CacheChange* changes_ = nullptr;
  const uint8_t* ring_ = nullptr;
};

// ---- doorbell -----------------------------------------------------------------------------------

class Doorbell {
 public:
  static Result<Doorbell> create(const std::string& name);
  static Result<Doorbell> open(const std::string& name);
  DoorbellHeader& header() const { return *reinterpret_cast<DoorbellHeader*>(map_.data()); }
  const std::string& name() const { return map_.name(); }

 private:
  Mapping map_;
};

}  // namespace pubsub::shm
