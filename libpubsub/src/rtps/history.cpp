#include "rtps/history.hpp"

#include <atomic>
#include <cstdint>

namespace pubsub::rtps {

WriterHistory::WriterHistory(size_t max_samples, size_t max_bytes)
    : own_ring_(new CacheChange[max_samples == 0 ? 1 : max_samples]()),
      ring_(own_ring_.get()),
      ring_size_(max_samples == 0 ? 1 : max_samples),
      max_bytes_(max_bytes),
      own_bytes_(new uint8_t[capacity_for(max_bytes)]),
      bytes_(own_bytes_.get()),
      capacity_(capacity_for(max_bytes)) {}

WriterHistory::WriterHistory(size_t max_samples, size_t max_bytes, CacheChange* changes,
                             uint8_t* bytes)
    : ring_(changes),
      ring_size_(max_samples == 0 ? 1 : max_samples),
      max_bytes_(max_bytes),
      bytes_(bytes),
      capacity_(capacity_for(max_bytes)) {}

// Where a payload of `need` bytes would go, or SIZE_MAX when it does not fit; wrap_ahead as in
// WriterHistory::set_wrap_ahead.
static size_t place(size_t need, size_t count, size_t tail, size_t head, size_t capacity,
                    size_t wrap_ahead) {
  if (count == 0) return need <= capacity ? 0 : SIZE_MAX;
  if (head > tail) {  // used region [tail, head): free at the end, then at the start
    if (wrap_ahead > 0 && tail >= (head - tail) + wrap_ahead + need) return 0;
    if (need <= capacity - head) return head;
    if (need <= tail) return 0;
    return SIZE_MAX;
  }
  // wrapped: used [tail, capacity) + [0, head); free [head, tail)
  return need <= tail - head ? head : SIZE_MAX;
}

bool WriterHistory::can_append(size_t size) const {
  return reserve(size) != SIZE_MAX;
}

CacheChange* WriterHistory::try_append(size_t size) {
  const size_t at = reserve(size);
  return at == SIZE_MAX ? nullptr : append_at(at, size);
}

size_t WriterHistory::reserve(size_t size) const {
  if (count_ == ring_size_ || size > max_bytes_) return SIZE_MAX;
  return place(round(size), count_, count_ ? oldest().offset : 0, head_, capacity_, wrap_ahead_);
}

CacheChange* WriterHistory::append_at(size_t at, size_t size) {
  const size_t need = round(size);
  head_ = at + need;
  used_ += need;
  CacheChange& c = ring_[slot(count_)];
  ++count_;
  // Field by field, sn atomically: a shared-memory reader may be looking at this descriptor
  // (and find that it no longer holds the sample it wanted).
  c.timestamp = Time{};
  c.offset = at;
  c.size = static_cast<uint32_t>(size);
  c.status_info = 0;
  c.has_key_hash = false;
  c.key_hash = KeyHash{};
  std::atomic_ref<SequenceNumber>(c.sn).store(++last_sn_, std::memory_order_release);
  return &c;
}

const CacheChange* WriterHistory::find(SequenceNumber sn) const {
  if (count_ == 0 || sn < first_sn() || sn > last_sn_) return nullptr;
  const CacheChange& c = ring_[slot(static_cast<size_t>(sn - first_sn()))];
  return c.sn == sn ? &c : nullptr;  // 0 once invalidated
}

void WriterHistory::invalidate_through(SequenceNumber sn) {
  for (SequenceNumber s = first_sn(); count_ > 0 && s <= sn && s <= last_sn_; ++s) {
    CacheChange& c = ring_[slot(static_cast<size_t>(s - first_sn()))];
    std::atomic_ref<SequenceNumber>(c.sn).store(0, std::memory_order_seq_cst);
  }
}

void WriterHistory::remove_oldest() {
  if (count_ == 0) return;
  used_ -= round(oldest().size);
  tail_idx_ = slot(1);
  if (--count_ == 0) {
    head_ = 0;
    used_ = 0;
  }
}

void WriterHistory::remove_through(SequenceNumber sn) {
  while (count_ > 0 && first_sn() <= sn) remove_oldest();
}

}  // namespace pubsub::rtps
