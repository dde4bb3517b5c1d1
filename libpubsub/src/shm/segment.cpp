#include "shm/segment.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <new>

#include "common/hex.hpp"

namespace pubsub::shm {
namespace {

static_assert(std::atomic<int64_t>::is_always_lock_free &&
                  std::atomic<uint32_t>::is_always_lock_free,
              "shared-memory words must be lock-free (address-free)");
static_assert(std::is_trivially_copyable_v<rtps::CacheChange>);

size_t align64(size_t n) {
  return (n + 63) & ~size_t{63};
}

}  // namespace

Layout layout_for(size_t max_samples, size_t ring_bytes) {
  Layout l;
  l.slots_offset = align64(sizeof(SegmentHeader));
  l.changes_offset = align64(l.slots_offset + kMaxSlots * sizeof(ReaderSlot));
  l.ring_offset = align64(l.changes_offset + max_samples * sizeof(rtps::CacheChange));
  l.total_size = align64(l.ring_offset + ((ring_bytes + 7) & ~size_t{7}));
  return l;
}

namespace {

// The refusal of an untrusted header: kCorrupt with what is wrong.
Error corrupt(std::string what) {
  return make_error(ErrorCode::kCorrupt, std::move(what));
}

}  // namespace

Result<void> validate_segment(const uint8_t* data, size_t size) {
  if (size < sizeof(SegmentHeader)) return corrupt("segment smaller than its header");
  SegmentHeader h;
  std::memcpy(static_cast<void*>(&h), data, offsetof(SegmentHeader, last_sn));
  if (std::memcmp(h.magic, kSegmentMagic, 8) != 0) return corrupt("not a pubsub writer segment");
  if (h.version != kLayoutVersion)
    return corrupt("segment layout version " + std::to_string(h.version));
  if (h.header_size != sizeof(SegmentHeader) || h.slot_size != sizeof(ReaderSlot) ||
      h.change_size != sizeof(rtps::CacheChange)) {
    return corrupt("segment written by an incompatible build");
  }
  if (h.max_slots != kMaxSlots || h.max_samples == 0 || h.ring_bytes == 0 ||
      h.ring_bytes > (uint64_t{1} << 40) || h.max_samples > (1u << 28)) {
    return corrupt("segment sizes out of range");
  }
  const Layout l = layout_for(h.max_samples, h.ring_bytes);
  if (h.slots_offset != l.slots_offset || h.changes_offset != l.changes_offset ||
      h.ring_offset != l.ring_offset || h.total_size != l.total_size || h.total_size > size) {
    return corrupt("segment layout does not match its size");
  }
  return {};
}

Result<void> validate_doorbell(const uint8_t* data, size_t size) {
  if (size < sizeof(DoorbellHeader)) return corrupt("doorbell smaller than its header");
  if (std::memcmp(data, kDoorbellMagic, 8) != 0) return corrupt("not a pubsub doorbell");
  uint32_t version;
  std::memcpy(&version, data + 8, 4);
  if (version != kLayoutVersion)
    return corrupt("doorbell layout version " + std::to_string(version));
  return {};
}

// ---- WriterSegment ----------------------------------------------------------------------------

Result<std::unique_ptr<WriterSegment>> WriterSegment::create(const Guid& writer, size_t max_samples,
                                                             size_t ring_bytes) {
  const Layout l = layout_for(max_samples, ring_bytes);
  auto m = Mapping::create(segment_name(common::to_hex(writer.bytes())), l.total_size);
  if (!m) return m.error();
  auto s = std::unique_ptr<WriterSegment>(new WriterSegment());
  s->map_ = std::move(m).value();
  auto* h = new (s->map_.data()) SegmentHeader{};
  std::memcpy(h->magic, kSegmentMagic, 8);
  h->version = kLayoutVersion;
  h->header_size = sizeof(SegmentHeader);
  h->slot_size = sizeof(ReaderSlot);
  h->change_size = sizeof(rtps::CacheChange);
  h->max_slots = kMaxSlots;
  h->max_samples = static_cast<uint32_t>(max_samples);
  h->ring_bytes = ring_bytes;
  h->slots_offset = l.slots_offset;
  h->changes_offset = l.changes_offset;
  h->ring_offset = l.ring_offset;
  h->total_size = l.total_size;
  h->writer_pid = static_cast<int32_t>(::getpid());
  const auto g = writer.bytes();
  std::memcpy(h->writer_guid, g.data(), 16);
  h->last_sn.store(0);
  h->first_sn.store(1);
  for (size_t i = 0; i < kMaxSlots; ++i) {
    auto* slot = new (&s->slot(i)) ReaderSlot{};
    slot->hold.store(kNoHold);
  }
  return s;
}

int WriterSegment::find_slot(const Guid& reader) const {
  const auto g = reader.bytes();
  for (size_t i = 0; i < kMaxSlots; ++i) {
    ReaderSlot& s = slot(i);
    if (s.state.load(std::memory_order_acquire) == kSlotActive &&
        std::memcmp(s.guid, g.data(), 16) == 0) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

SequenceNumber WriterSegment::min_hold() {
  SequenceNumber m = kNoHold;
  for (size_t i = 0; i < kMaxSlots; ++i) {
    ReaderSlot& s = slot(i);
    if (s.state.load(std::memory_order_acquire) == kSlotFree) continue;
    m = std::min<SequenceNumber>(m, s.hold.load(std::memory_order_seq_cst));
  }
  return m;
}

// ---- SegmentView ------------------------------------------------------------------------------

Result<SegmentView> SegmentView::open(const std::string& name, const Guid& writer) {
  auto m = Mapping::open(name);
  if (!m) return m.error();
  if (auto ok = validate_segment(m->data(), m->size()); !ok) return ok.error().with_context(name);
  SegmentView v;
  v.map_ = std::move(m).value();
  const auto& h = v.header();
  v.max_samples_ = h.max_samples;
  v.ring_bytes_ = h.ring_bytes;
  v.changes_ = reinterpret_cast<rtps::CacheChange*>(v.map_.data() + h.changes_offset);
  v.ring_ = v.map_.data() + h.ring_offset;
  const auto g = writer.bytes();
  if (std::memcmp(v.header().writer_guid, g.data(), 16) != 0) {
    return make_error(ErrorCode::kCorrupt, name + ": segment of another writer");
  }
  return v;
}

SegmentView& SegmentView::operator=(SegmentView&& o) noexcept {
  if (this != &o) {
    release_slot();
    map_ = std::move(o.map_);
    slot_ = std::exchange(o.slot_, nullptr);
    max_samples_ = o.max_samples_;
    ring_bytes_ = o.ring_bytes_;
    changes_ = o.changes_;
    ring_ = o.ring_;
  }
  return *this;
}

SegmentView::~SegmentView() {
  release_slot();
}

Result<void> SegmentView::claim(const Guid& reader, SequenceNumber start) {
  const auto& h = header();
  auto* slots = reinterpret_cast<ReaderSlot*>(map_.data() + h.slots_offset);
  const auto g = reader.bytes();
  for (size_t i = 0; i < kMaxSlots; ++i) {
    uint32_t expected = kSlotFree;
    if (!slots[i].state.compare_exchange_strong(expected, kSlotClaimed)) continue;
    slots[i].pid = static_cast<int32_t>(::getpid());
    std::memcpy(slots[i].guid, g.data(), 16);
    slots[i].acked.store(start - 1, std::memory_order_relaxed);
    slots[i].hold.store(kNoHold, std::memory_order_relaxed);
    slots[i].state.store(kSlotActive, std::memory_order_release);
    slot_ = &slots[i];
    signal_progress(header());  // a writer waiting for its readers to attach looks again
    return {};
  }
  return make_error(ErrorCode::kResourceLimit,
                    "all " + std::to_string(kMaxSlots) + " reader slots of the segment are taken");
}

void SegmentView::release_slot() {
  if (!slot_) return;
  slot_->hold.store(kNoHold, std::memory_order_seq_cst);
  slot_->state.store(kSlotFree, std::memory_order_release);
  signal_progress(header());
  slot_ = nullptr;
}

const uint8_t* SegmentView::acquire(SequenceNumber sn, rtps::CacheChange& out) const {
  slot_->hold.store(sn, std::memory_order_seq_cst);
  rtps::CacheChange& c = changes_[static_cast<uint64_t>(sn - 1) % max_samples_];
  if (std::atomic_ref<SequenceNumber>(c.sn).load(std::memory_order_seq_cst) != sn) return nullptr;
  // Field by field: the writer may clear c.sn (atomically) at any time; the rest stays until
  // our hold is released.
  out.sn = sn;
  out.timestamp = c.timestamp;
  out.offset = c.offset;
  out.size = c.size;
  out.status_info = c.status_info;
  out.has_key_hash = c.has_key_hash;
  out.key_hash = c.key_hash;
  if (!payload_in_ring(out, ring_bytes_)) return nullptr;
  return ring_ + out.offset;
}

// ---- Doorbell ---------------------------------------------------------------------------------

Result<Doorbell> Doorbell::create(const std::string& name) {
  auto m = Mapping::create(name, 4096);
  if (!m) return m.error();
  Doorbell d;
  d.map_ = std::move(m).value();
  auto* h = new (d.map_.data()) DoorbellHeader{};
  std::memcpy(h->magic, kDoorbellMagic, 8);
  h->version = kLayoutVersion;
  h->pid = static_cast<int32_t>(::getpid());
  return d;
}

Result<Doorbell> Doorbell::open(const std::string& name) {
  auto m = Mapping::open(name);
  if (!m) return m.error();
  if (auto ok = validate_doorbell(m->data(), m->size()); !ok) return ok.error().with_context(name);
  Doorbell d;
  d.map_ = std::move(m).value();
  return d;
}

}  // namespace pubsub::shm
