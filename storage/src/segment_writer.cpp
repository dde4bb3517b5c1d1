// SegmentWriter, the caller side: create, definitions (topics, writers, types, marks),
// appending records into the open chunk under `mu`, flush, split, close and statistics.
// segment_writer_impl.hpp has the overview (threads, ownership, locks) and names the files that
// hold the writer thread, the background sync and the disk guard.
#include "errno_error.hpp"
#include "segment_writer_impl.hpp"
#include "stream_copy.hpp"

#include <cassert>
#include <cerrno>
#include <random>

#include "common/hex.hpp"
#include "common/thread_name.hpp"

namespace storage {
namespace {

constexpr size_t kGapEntryMax = 1 + 5 + 10 + 10;

Status mkdirs(const std::string& path) {
  std::string cur;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    cur = path.substr(0, pos);
    if (cur.empty()) continue;
    if (::mkdir(cur.c_str(), 0755) != 0 && errno != EEXIST)
      return errno_error(errno, "mkdir " + cur);
  }
  return Status{};
}

// From this payload size on (detail::kStreamRecordFrom, shared with the snapshot ring), an
// appender copies the record into the chunk around the cache
// (detail::stream_copy; in the recorder at 63000-B random samples the ordinary copy into the cold
// chunk was 27 % of the CPU) and adds it to the chunk's running CRC-32C from the source, which is
// in the cache (three lanes of 8 KiB at once, format.cpp); the writer thread then does not read a
// chunk stored raw back from memory for its checksum (at 63000-B random samples that read was
// its only work beside the write itself, in series with it). Below it a single lane (bound by
// the instruction's latency) would cost more than the writer's three lanes over memory, so the
// first smaller record ends the chunk's running CRC.
constexpr size_t kRunningCrcFrom = detail::kStreamRecordFrom;

// Asks for the chunk's next kPrefetchAhead bytes in the cache, for writing, once each: records
// are copied into memory that is not in the cache, and the unlock after each append waits for
// those stores (11 % of the recorder at 1024 B in perf record, in pthread_mutex_unlock). In a
// single-threaded test program, 1-KiB records into 4-MiB huge-page buffers under a mutex took
// 92 ns each with this against 124 without; in the recorder's profile the unlock's share did not
// visibly change.
constexpr size_t kPrefetchAhead = 4096;
constexpr size_t kCacheLine = 64;
inline void prefetch_ahead(ChunkBuf& c) {
  // Half a window at a time: most small records find enough ahead already prefetched.
  if (c.prefetched >= c.cap || c.prefetched >= c.size + kPrefetchAhead / 2) return;
  const size_t until = std::min(c.cap, c.size + kPrefetchAhead);
  for (size_t o = std::max(c.prefetched, c.size); o < until; o += kCacheLine)
    __builtin_prefetch(c.data + o, 1, 3);
  c.prefetched = std::max(c.prefetched, until);
}

}  // namespace

SegmentWriter::SegmentWriter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

SegmentWriter::~SegmentWriter() {
  if (impl_) (void)close();
}

Result<std::unique_ptr<SegmentWriter>> SegmentWriter::create(const std::string& dir,
                                                             SegmentWriterOptions options) {
  if (options.chunk_max_bytes < 1024 || options.chunk_max_bytes > (1u << 30))
    return Error{ErrorCode::kInvalidArgument, "chunk_max_bytes must be in [1 KiB, 1 GiB]"};
  if (options.max_record_bytes > (1u << 30) - 4096)
    return Error{ErrorCode::kInvalidArgument, "max_record_bytes must be at most 1 GiB - 4 KiB"};
  if (options.queue_max_bytes < options.chunk_max_bytes)
    return Error{ErrorCode::kInvalidArgument, "queue_max_bytes must hold at least one chunk"};
  if (options.lz4_acceleration < 1) options.lz4_acceleration = 1;
  auto holds_recording = [&dir]() -> Status {
    struct stat st {};
    if (::stat(detail::index_path(dir).c_str(), &st) == 0)
      return Error{ErrorCode::kAlreadyExists, dir + " already holds a recording"};
    if (!detail::list_segment_files(dir).empty())
      return Error{ErrorCode::kAlreadyExists, dir + "/segments is not empty"};
    return Status{};
  };
  if (auto s = mkdirs(detail::segments_dir(dir)); !s) return s.error();
  if (auto s = holds_recording(); !s) return s.error();
  auto lock = WriterLock::acquire(dir, program_invocation_short_name);
  if (!lock) return lock.error();
  if (auto s = holds_recording(); !s) return s.error();  // another writer was quicker

  auto impl = std::make_unique<Impl>();
  impl->lock = std::move(*lock);
  impl->dir = dir;
  impl->opt = std::move(options);
  impl->stats.queue_max_bytes = impl->opt.queue_max_bytes;
  impl->raw_expected = impl->opt.compression == Compression::kNone;
  impl->guard_active = impl->opt.min_free_bytes > 0;
  impl->next_guard = Clock::now();  // the writer thread checks once when it starts
  std::random_device rd;
  for (auto& b : impl->recording_id) b = static_cast<uint8_t>(rd());
  auto index = detail::Index::open(detail::index_path(dir), detail::Index::Mode::kCreate);
  if (!index) return index.error();
  impl->index = std::move(*index);
  auto& idx = *impl->index;
  if (auto s = idx.begin(); !s) return s.error();
  Status s = idx.set_meta("format_version", std::to_string(format::kFormatVersion));
  if (s) s = idx.set_meta("recording_id", common::to_hex(impl->recording_id));
  if (s) s = idx.set_meta("clean", "0");
  if (s) s = idx.commit();
  if (!s) return s.error();
  Impl* raw = impl.get();
  if (impl->opt.fsync == FsyncPolicy::kChunk) {
    impl->syncer = std::thread([raw] { raw->sync_loop(); });
    common::name_thread(impl->syncer, "storage-sync");
  }
  impl->thread = std::thread([raw] { raw->run(); });
  common::name_thread(impl->thread, "storage-writer");
  return std::unique_ptr<SegmentWriter>(new SegmentWriter(std::move(impl)));
}

Result<TopicId> SegmentWriter::add_topic(const TopicDef& def) {
  Impl& m = *impl_;
  std::unique_lock lk(m.mu);
  if (!m.failure.ok()) return m.failure.error();
  if (m.closed) return Error{ErrorCode::kClosed, "writer closed"};
  const auto id = static_cast<TopicId>(m.topics.size());
  Bytes entry;
  format::append_topic_entry(entry, id, def);
  if (entry.size() > m.opt.max_record_bytes + format::kMaxRecordOverhead)
    return Error{ErrorCode::kInvalidArgument, "topic definition too large"};
  if (auto s = m.put_entry_locked(entry, lk); !s) return s.error();
  m.topics.push_back(def);
  m.topic_slot.push_back(-1);
  m.open->row.topic_defs.emplace_back(id, def);
  m.defs_blob.insert(m.defs_blob.end(), entry.begin(), entry.end());
  ++m.defs_count;
  return id;
}

Result<WriterId> SegmentWriter::add_writer(const WriterDef& def) {
  Impl& m = *impl_;
  std::unique_lock lk(m.mu);
  if (!m.failure.ok()) return m.failure.error();
  if (m.closed) return Error{ErrorCode::kClosed, "writer closed"};
  if (def.topic == 0 || def.topic >= m.topics.size())
    return Error{ErrorCode::kInvalidArgument, "add_writer: unknown topic id"};
  const auto id = static_cast<WriterId>(m.writers.size());
  Bytes entry;
  format::append_writer_entry(entry, id, def);
  if (auto s = m.put_entry_locked(entry, lk); !s) return s.error();
  m.writers.push_back(def);
  m.writer_slot.push_back(-1);
  m.last_seq.push_back(kNoSeq);
  m.open->row.writer_defs.emplace_back(id, def);
  m.defs_blob.insert(m.defs_blob.end(), entry.begin(), entry.end());
  ++m.defs_count;
  return id;
}

Status SegmentWriter::add_type(const TypeDef& def) {
  Impl& m = *impl_;
  std::unique_lock lk(m.mu);
  if (!m.failure.ok()) return m.failure;
  if (m.closed) return Error{ErrorCode::kClosed, "writer closed"};
  if (def.type_name.empty()) return Error{ErrorCode::kInvalidArgument, "add_type: no type name"};
  auto same = [&](const TypeDef& t) {
    return t.type_name == def.type_name && t.source == def.source;
  };
  auto it = std::find_if(m.types.begin(), m.types.end(), same);
  if (it != m.types.end() && it->idl == def.idl && it->type_object == def.type_object)
    return Status{};
  Bytes entry;
  format::append_type_entry(entry, def);
  if (entry.size() > m.opt.max_record_bytes + format::kMaxRecordOverhead)
    return Error{ErrorCode::kInvalidArgument, "type definition too large"};
  if (auto s = m.put_entry_locked(entry, lk); !s) return s;
  if (it != m.types.end())
    *it = def;
  else
    m.types.push_back(def);
  m.open->row.type_defs.push_back(def);
  m.defs_blob.insert(m.defs_blob.end(), entry.begin(), entry.end());
  ++m.defs_count;
  return Status{};
}

Status SegmentWriter::add_mark(const Mark& mark) {
  Impl& m = *impl_;
  std::unique_lock lk(m.mu);
  if (!m.failure.ok()) return m.failure;
  if (m.closed) return Error{ErrorCode::kClosed, "writer closed"};
  Bytes entry;
  format::append_mark_entry(entry, mark);
  if (entry.size() > m.opt.max_record_bytes + format::kMaxRecordOverhead)
    return Error{ErrorCode::kInvalidArgument, "mark too large"};
  if (auto s = m.put_entry_locked(entry, lk); !s) return s;
  m.open->row.marks.push_back(mark);
  return Status{};
}

Status SegmentWriter::skip_to(WriterId writer, int64_t sequence) {
  Impl& m = *impl_;
  std::lock_guard lk(m.mu);
  if (!m.failure.ok()) return m.failure;
  if (m.closed) return Error{ErrorCode::kClosed, "writer closed"};
  if (writer == 0 || writer >= m.writers.size())
    return Error{ErrorCode::kInvalidArgument, "skip_to: unknown writer id"};
  int64_t& last = m.last_seq[writer];
  last = std::max(last, sequence);
  return Status{};
}

Status SegmentWriter::add_gap(WriterId writer, int64_t first, int64_t last) {
  Impl& m = *impl_;
  std::unique_lock lk(m.mu);
  if (!m.failure.ok()) return m.failure;
  if (m.closed) return Error{ErrorCode::kClosed, "writer closed"};
  if (writer == 0 || writer >= m.writers.size())
    return Error{ErrorCode::kInvalidArgument, "add_gap: unknown writer id"};
  if (first < 1 || last < first)
    return Error{ErrorCode::kInvalidArgument, "add_gap: not a range of sequence numbers"};
  const Gap gap{writer, first, last};
  Bytes entry;
  format::append_gap_entry(entry, gap);
  if (auto s = m.put_entry_locked(entry, lk); !s) return s;
  m.index_gap(gap);
  int64_t& seq = m.last_seq[writer];
  seq = std::max(seq, last);
  return Status{};
}

Status SegmentWriter::try_append(const RecordMeta& meta, ByteSpan payload) {
  return append_impl(meta, std::span<const ByteSpan>(&payload, 1), false);
}
Status SegmentWriter::append(const RecordMeta& meta, ByteSpan payload) {
  return append_impl(meta, std::span<const ByteSpan>(&payload, 1), true);
}
Status SegmentWriter::try_append_parts(const RecordMeta& meta, std::span<const ByteSpan> parts) {
  return append_impl(meta, parts, false);
}
Status SegmentWriter::append_parts(const RecordMeta& meta, std::span<const ByteSpan> parts) {
  return append_impl(meta, parts, true);
}

SegmentWriter::AppendLock SegmentWriter::lock_appends() {
  return AppendLock(std::unique_lock(impl_->mu));
}
Status SegmentWriter::try_append(AppendLock& lock, const RecordMeta& meta, ByteSpan payload) {
  assert(lock.lk_.mutex() == &impl_->mu && lock.lk_.owns_lock());
  return append_locked(meta, std::span<const ByteSpan>(&payload, 1), false, lock.lk_);
}

Status SegmentWriter::append_impl(const RecordMeta& meta, std::span<const ByteSpan> parts,
                                  bool block) {
  std::unique_lock lk(impl_->mu);
  return append_locked(meta, parts, block, lk);
}

Status SegmentWriter::append_locked(const RecordMeta& meta, std::span<const ByteSpan> parts,
                                    bool block, std::unique_lock<std::mutex>& lk) {
  size_t payload_size = 0;
  for (const ByteSpan& part : parts) payload_size += part.size();
  Impl& m = *impl_;
  if (!m.failure.ok()) [[unlikely]]
    return m.failure;
  if (m.closed) [[unlikely]]
    return Error{ErrorCode::kClosed, "writer closed"};
  if (meta.writer == 0 || meta.writer >= m.writers.size() ||
      m.writers[meta.writer].topic != meta.topic) [[unlikely]]
    return Error{ErrorCode::kInvalidArgument,
                 "append: unknown writer id or writer of another topic"};
  if (payload_size > m.opt.max_record_bytes) [[unlikely]]
    return Error{ErrorCode::kInvalidArgument, "append: payload of " + std::to_string(payload_size) +
                                                  " bytes over max_record_bytes"};
  const size_t need = format::kMaxRecordOverhead + kGapEntryMax + payload_size;
  if (!m.open || m.open->size + need > m.open->cap) {
    if (auto s = m.ensure_room(need, block, lk); !s) return s;
  }
  ChunkBuf& c = *m.open;
  uint8_t* const start = c.data + c.size;
  uint8_t* p = start;
  int64_t& last = m.last_seq[meta.writer];
  if (last != kNoSeq && meta.sequence > last + 1) [[unlikely]]
    p = m.put_gap(p, Gap{meta.writer, last + 1, meta.sequence - 1});
  if (meta.sequence > last) last = meta.sequence;
  const int64_t t = meta.reception_ns;
  if (t < c.delta.prev_recv) c.sorted = false;  // before the header moves prev_recv to t
  p = format::encode_data_header(p, meta, payload_size, c.delta);
  if (payload_size >= kRunningCrcFrom) {
    // A large record: copied around the cache (detail::stream_copy), its CRC taken from the
    // source, which is in the cache.
    if (c.crc_running) c.crc = format::crc32c(start, static_cast<size_t>(p - start), c.crc);
    for (const ByteSpan& part : parts) {
      if (part.empty()) continue;
      detail::stream_copy(p, part.data(), part.size());
      if (c.crc_running) c.crc = format::crc32c(part.data(), part.size(), c.crc);
      p += part.size();
    }
  } else {
    c.crc_running = false;
    for (const ByteSpan& part : parts) {
      if (part.empty()) continue;
      std::memcpy(p, part.data(), part.size());
      p += part.size();
    }
  }
  const size_t written = static_cast<size_t>(p - start);
  c.size += written;
  prefetch_ahead(c);
  m.stats.queued_bytes += written;
  ++m.stats.records_appended;
  m.stats.bytes_appended += payload_size;
  if (c.entries == 0) m.work_cv.notify_one();  // the writer thread now watches its age
  ++c.records;
  ++c.entries;
  // Only the writer's running statistics: the chunk's and its topics' follow from them when the
  // chunk closes (Impl::summarize_locked).
  int32_t& ws = m.writer_slot[meta.writer];
  if (ws < 0) {
    ws = static_cast<int32_t>(c.row.writers.size());
    c.row.writers.push_back({meta.writer, 0, 0, t, t, meta.sequence, meta.sequence});
  }
  ChunkWriterStat& wst = c.row.writers[static_cast<size_t>(ws)];
  ++wst.count;
  wst.bytes += payload_size;
  wst.first_recv_ns = std::min(wst.first_recv_ns, t);
  wst.last_recv_ns = std::max(wst.last_recv_ns, t);
  wst.min_seq = std::min(wst.min_seq, meta.sequence);
  wst.max_seq = std::max(wst.max_seq, meta.sequence);
  if (c.size >= m.opt.chunk_max_bytes) m.close_open_locked();
  return Status{};
}

Status SegmentWriter::flush() {
  Impl& m = *impl_;
  std::unique_lock lk(m.mu);
  if (!m.failure.ok()) return m.failure;
  if (m.closed) return Error{ErrorCode::kClosed, "writer closed"};
  m.close_open_locked();
  const uint64_t target = m.closed_chunks;
  const uint64_t gen = ++m.sync_req_gen;
  m.work_cv.notify_one();
  m.space_cv.wait(
      lk, [&] { return (m.done_chunks >= target && m.sync_done_gen >= gen) || !m.failure.ok(); });
  return m.failure;
}

Result<uint64_t> SegmentWriter::split() {
  Impl& m = *impl_;
  std::unique_lock lk(m.mu);
  if (!m.failure.ok()) return m.failure.error();
  if (m.closed) return Error{ErrorCode::kClosed, "writer closed"};
  m.close_open_locked();
  const uint64_t gen = ++m.split_req_gen;
  m.work_cv.notify_one();
  m.space_cv.wait(lk, [&] { return m.split_done_gen >= gen || !m.failure.ok(); });
  if (!m.failure.ok()) return m.failure.error();
  return m.split_next;
}

Status SegmentWriter::close() {
  Impl& m = *impl_;
  {
    std::unique_lock lk(m.mu);
    if (m.closed)
      return m.failure.ok() ? Status{Error{ErrorCode::kClosed, "writer closed"}} : m.failure;
    m.close_open_locked();
    m.closed = true;
    m.stop = true;
    m.work_cv.notify_one();
    m.space_cv.notify_all();
  }
  if (m.thread.joinable()) m.thread.join();
  // The writer thread is gone; its state is this thread's now (mu only for what appenders see).
  // After the disk guard's stop it has written everything accepted: finish the recording.
  bool failed;
  {
    std::lock_guard lk(m.mu);
    failed = !m.failure.ok() && !m.stopping;
  }
  Status s;
  if (!failed) {
    s = m.index->begin();
    if (s) s = m.finish_segment();  // waits for a background sync still running
    if (s) s = m.index->set_meta("clean", "1");
    if (s) s = m.index->commit();
    // At rest the index is a plain rollback-journal database: read-only opens then create no
    // -wal/-shm files (a writer or recover() switches back to WAL).
    if (s) s = m.index->exec("PRAGMA journal_mode=DELETE");
  }
  m.stop_syncer();  // no fdatasync runs on the segment after this
  std::lock_guard lk(m.mu);
  if (failed) {
    m.index.reset();
    m.seg.reset();
    m.lock.release();
    return m.failure;  // left unclean: a reader checks the tail
  }
  if (!s) {
    m.failure = s;
    m.stopping = false;
  }
  m.index.reset();
  m.lock.release();          // last: the files are complete
  return s ? m.failure : s;  // kLowSpace after the disk guard's stop
}

WriterStats SegmentWriter::stats() const {
  std::lock_guard lk(impl_->mu);
  WriterStats s = impl_->stats;
  s.queue_in_use_bytes = impl_->in_use_cap;
  if (const ChunkBuf* open = impl_->open) {
    s.open_chunk_bytes = open->size;
    s.open_chunk_capacity = open->cap;
  }
  return s;
}

std::string SegmentWriter::io_description() const {
  std::lock_guard lk(impl_->mu);
  return impl_->io_note;
}

Status SegmentWriter::error() const {
  std::lock_guard lk(impl_->mu);
  return impl_->failure;
}

const std::string& SegmentWriter::directory() const {
  return impl_->dir;
}

}  // namespace storage
