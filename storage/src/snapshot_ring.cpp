#include "storage/snapshot_ring.hpp"

#include <lz4.h>

#include <algorithm>
#include <cassert>
#include <cstring>

#include "stream_copy.hpp"

namespace storage {

SnapshotRing::SnapshotRing(SnapshotRingOptions options) : opt_(options) {
  open_.reserve(opt_.chunk_max_bytes);
}

void SnapshotRing::note_entry_locked(int64_t time_ns, bool record) {
  if (open_entries_ == 0) {
    open_first_ns_ = open_last_ns_ = time_ns;
    open_since_ = std::chrono::steady_clock::now();
  }
  open_first_ns_ = std::min(open_first_ns_, time_ns);
  open_last_ns_ = std::max(open_last_ns_, time_ns);
  ++open_entries_;
  if (record) ++open_records_;
}

// The open buffer grows (its new part zero-filled) by this much at a time, not before every
// record; a recycled buffer has its size already, and after LZ4 open_ keeps its own. Not all at
// once: a chunk that poll() seals young (a slow topic) touches only the pages it used.
constexpr size_t kOpenGrowStep = 64 * 1024;

uint8_t* SnapshotRing::room_locked(size_t need) {
  if (open_.size() < open_size_ + need) {
    const size_t step = std::min<size_t>(open_.size() + kOpenGrowStep, opt_.chunk_max_bytes);
    open_.resize(std::max(open_size_ + need, step));
    evict_for_memory_locked();  // the open buffer may have grown
  }
  return reinterpret_cast<uint8_t*>(open_.data()) + open_size_;
}

void SnapshotRing::put_entry_locked(const Bytes& entry) {
  std::memcpy(room_locked(entry.size()), entry.data(), entry.size());
  open_size_ += entry.size();
}

Status SnapshotRing::append(const RecordMeta& meta, ByteSpan payload) {
  std::lock_guard lk(mu_);
  return append_locked(meta, payload);
}

SnapshotRing::AppendLock SnapshotRing::lock_appends() {
  return AppendLock(std::unique_lock(mu_));
}

Status SnapshotRing::append(AppendLock& lock, const RecordMeta& meta, ByteSpan payload) {
  assert(lock.lk_.mutex() == &mu_ && lock.lk_.owns_lock());
  (void)lock;
  return append_locked(meta, payload);
}

Status SnapshotRing::append_locked(const RecordMeta& meta, ByteSpan payload) {
  if (meta.reception_ns == 0)
    return Error{ErrorCode::kInvalidArgument, "snapshot ring: a record needs its reception time"};
  const size_t need = format::kMaxRecordOverhead + payload.size();
  if (open_entries_ > 0 && open_size_ + need > opt_.chunk_max_bytes) seal_locked();
  uint8_t* p = room_locked(need);
  uint8_t* end = nullptr;
  if (payload.size() >= detail::kStreamRecordFrom && (!opt_.compress || lz4_backoff_.skipping())) {
    // A large record into a chunk that will be kept raw (LZ4 off, or in its backoff after chunks
    // that did not compress): nothing reads it again unless a snapshot takes it, so it is copied
    // around the cache (an ordinary copy reads each line of the ring's cold memory before writing
    // it). A chunk that LZ4 will read right after is filled through the cache.
    end = format::encode_data_header(p, meta, payload.size(), delta_);
    detail::stream_copy(end, payload.data(), payload.size());
    end += payload.size();
  } else {
    end = format::encode_data_record(p, meta, payload, delta_);
  }
  open_size_ += static_cast<size_t>(end - p);
  note_entry_locked(meta.reception_ns, true);
  return {};
}

void SnapshotRing::add_mark(const Mark& mark) {
  Bytes entry;
  format::append_mark_entry(entry, mark);
  std::lock_guard lk(mu_);
  put_entry_locked(entry);
  note_entry_locked(mark.time_ns, false);
}

void SnapshotRing::add_skip(WriterId writer, int64_t sequence, int64_t time_ns) {
  Bytes entry;
  format::append_gap_entry(entry, Gap{writer, sequence, sequence});
  std::lock_guard lk(mu_);
  put_entry_locked(entry);
  note_entry_locked(time_ns, false);
}

void SnapshotRing::seal() {
  std::lock_guard lk(mu_);
  seal_locked();
}

// Tries LZ4 into lz4_buf_; true (and `out` filled, exactly sized) when it saves >= 2%.
bool SnapshotRing::compress_locked(Bytes& out) {
  if (!opt_.compress || open_size_ < 64) return false;
  if (!lz4_backoff_.try_next()) return false;
  const int src = static_cast<int>(open_size_);
  lz4_buf_.resize(static_cast<size_t>(LZ4_compressBound(src)));
  const int n = LZ4_compress_fast(reinterpret_cast<const char*>(open_.data()),
                                  reinterpret_cast<char*>(lz4_buf_.data()), src,
                                  static_cast<int>(lz4_buf_.size()), opt_.lz4_acceleration);
  if (n <= 0 || static_cast<size_t>(n) * 50 > open_size_ * 49) {
    lz4_backoff_.failed();  // incompressible (random payloads)
    return false;
  }
  lz4_backoff_.succeeded();
  out.assign(lz4_buf_.begin(), lz4_buf_.begin() + n);
  return true;
}

void SnapshotRing::seal_locked() {
  if (open_entries_ == 0) return;
  auto c = std::make_shared<SnapshotChunk>();
  c->index = next_index_++;
  c->first_ns = open_first_ns_;
  c->last_ns = open_last_ns_;
  c->records = open_records_;
  c->entries = open_entries_;
  c->raw_size = static_cast<uint32_t>(open_size_);
  c->lz4 = compress_locked(c->stored);
  if (!c->lz4) {
    // The open buffer becomes the chunk (cut to its entries; no bytes move); the next one is a
    // recycled buffer (no fresh pages). After LZ4 the open buffer is reused as it is.
    open_.resize(open_size_);
    c->stored = std::move(open_);
    open_ = spare_.empty() ? Bytes() : std::move(spare_.back());
    if (!spare_.empty()) spare_.pop_back();
    open_.reserve(opt_.chunk_max_bytes);
  }
  open_size_ = 0;
  stored_bytes_ += c->stored.capacity();
  ring_raw_bytes_ += c->raw_size;
  ring_records_ += c->records;
  ring_.push_back(std::move(c));
  delta_ = {};
  open_entries_ = open_records_ = 0;
  open_first_ns_ = open_last_ns_ = 0;
  evict_for_memory_locked();
}

void SnapshotRing::drop_front_locked(uint64_t& chunks, uint64_t& records) {
  std::shared_ptr<SnapshotChunk>& c = ring_.front();
  stored_bytes_ -= c->stored.capacity();
  ring_raw_bytes_ -= c->raw_size;
  ring_records_ -= c->records;
  ++chunks;
  records += c->records;
  // Nobody else holds it (a snapshot may): keep a chunk-sized buffer for the next open chunk.
  if (c.use_count() == 1 && !c->lz4 && spare_.size() < 2 &&
      c->stored.capacity() >= opt_.chunk_max_bytes)
    spare_.push_back(std::move(c->stored));
  ring_.pop_front();
}

void SnapshotRing::evict_for_memory_locked() {
  while (ring_.size() > 1 && memory_locked() > opt_.max_bytes)
    drop_front_locked(evicted_.evicted_for_memory_chunks, evicted_.evicted_for_memory_records);
}

void SnapshotRing::poll(int64_t now_ns) {
  std::lock_guard lk(mu_);
  if (open_entries_ > 0 && std::chrono::steady_clock::now() - open_since_ >= opt_.chunk_max_age)
    seal_locked();
  const int64_t oldest_kept = now_ns - static_cast<int64_t>(opt_.keep.count());
  while (!ring_.empty() && ring_.front()->last_ns < oldest_kept)
    drop_front_locked(evicted_.evicted_for_age_chunks, evicted_.evicted_for_age_records);
  evict_for_memory_locked();
}

std::vector<std::shared_ptr<const SnapshotChunk>> SnapshotRing::chunks_from(
    uint64_t index, uint64_t* missed) const {
  std::lock_guard lk(mu_);
  std::vector<std::shared_ptr<const SnapshotChunk>> out;
  if (missed) {
    const uint64_t oldest = ring_.empty() ? next_index_ : ring_.front()->index;
    *missed = oldest > index ? oldest - index : 0;
  }
  // Indexes are consecutive in the ring: the first wanted one is at a known position.
  size_t first = ring_.size();
  if (!ring_.empty()) {
    const uint64_t front = ring_.front()->index;
    first =
        index <= front ? 0 : static_cast<size_t>(std::min<uint64_t>(index - front, ring_.size()));
  }
  out.assign(ring_.begin() + static_cast<std::ptrdiff_t>(first), ring_.end());
  return out;
}

uint64_t SnapshotRing::next_index() const {
  std::lock_guard lk(mu_);
  return next_index_;
}

SnapshotRingStats SnapshotRing::stats() const {
  std::lock_guard lk(mu_);
  SnapshotRingStats s = evicted_;
  s.chunks = ring_.size();
  s.records = ring_records_ + open_records_;
  s.memory_bytes = memory_locked();
  s.raw_bytes = ring_raw_bytes_ + open_size_;
  const bool open = open_entries_ > 0;
  if (!ring_.empty()) {
    s.oldest_ns = ring_.front()->first_ns;
    s.newest_ns = ring_.back()->last_ns;
    for (const auto& c : ring_) s.oldest_ns = std::min(s.oldest_ns, c->first_ns);
  }
  if (open) {
    s.oldest_ns = ring_.empty() ? open_first_ns_ : std::min(s.oldest_ns, open_first_ns_);
    s.newest_ns = std::max(s.newest_ns, open_last_ns_);
  }
  return s;
}

Status SnapshotRing::for_each_entry(const SnapshotChunk& chunk, Bytes& scratch,
                                    const std::function<Status(const format::Entry&)>& each) {
  ByteSpan raw = chunk.stored;
  if (chunk.lz4) {
    scratch.resize(chunk.raw_size);
    const int n = LZ4_decompress_safe(
        reinterpret_cast<const char*>(chunk.stored.data()), reinterpret_cast<char*>(scratch.data()),
        static_cast<int>(chunk.stored.size()), static_cast<int>(chunk.raw_size));
    if (n < 0 || static_cast<uint32_t>(n) != chunk.raw_size)
      return Error{ErrorCode::kCorrupt, "snapshot ring: a chunk does not decode"};
    raw = ByteSpan(scratch.data(), chunk.raw_size);
  }
  format::EntryDecoder dec(raw);
  format::Entry e;
  for (;;) {
    auto more = dec.next(e);
    if (!more) return more.error();
    if (!*more) return {};
    if (auto s = each(e); !s) return s;
  }
}

}  // namespace storage
