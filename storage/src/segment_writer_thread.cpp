// SegmentWriter, the writer thread (run): takes closed chunks from the queue, compresses (LZ4,
// with backoff) and checksums them, writes them into the current segment (O_DIRECT for large
// chunks), indexes them one SQLite transaction per batch, rolls segments by size and age, and
// hands the buffers back to the pool. segment_writer_impl.hpp has the overview (threads, locks).
#include "segment_writer_impl.hpp"

#include <lz4.h>

namespace storage {
namespace {

uint64_t align_up(uint64_t v) {
  const uint64_t a = format::kDirectAlignment;
  return (v + a - 1) / a * a;
}

}  // namespace

Status SegmentWriter::Impl::open_segment(uint64_t number) {
  auto sink = FileSink::open(detail::segment_path(dir, number), true, opt.direct_io);
  if (!sink) return sink.error();
  seg = std::move(*sink);
  std::string note =
      !opt.direct_io ? "page cache (direct I/O off)"
      : seg->direct_fd() < 0
          ? "page cache (the filesystem refuses O_DIRECT: " + seg->direct_error() + ")"
          : "O_DIRECT for chunks of " + std::to_string(opt.direct_io_min_bytes) +
                " bytes and more, page cache below";
  format::SegmentHeader h;
  h.recording_id = recording_id;
  h.segment_number = number;
  h.created_ns = wall_ns();
  uint8_t hb[format::kSegmentHeaderSize];
  format::encode_segment_header(h, hb);
  const ByteSpan parts[] = {ByteSpan(reinterpret_cast<std::byte*>(hb), sizeof hb)};
  if (auto s = seg->write(parts); !s) {
    // Leave no headerless segment behind (e.g. disk full right at a roll).
    const std::string path = seg->path();
    seg.reset();
    ::unlink(path.c_str());
    return s;
  }
  unsynced = true;
  dropped_to = 0;
  seg_opened = Clock::now();
  segs.push_back({number, seg->size(), 0});
  {
    std::lock_guard lk(mu);
    ++stats.segments_created;
    stats.file_bytes += sizeof hb;
    io_note = std::move(note);
  }
  if (auto s = index->put_segment(number, h.created_ns); !s) return s;
  // Repeat every definition known so far so this segment decodes on its own.
  Bytes defs;
  uint32_t count;
  std::vector<std::pair<TopicId, TopicDef>> tdefs;
  std::vector<std::pair<WriterId, WriterDef>> wdefs;
  detail::ChunkRow row;
  {
    std::lock_guard lk(mu);
    defs = defs_blob;
    count = defs_count;
    for (TopicId i = 1; i < topics.size(); ++i) tdefs.emplace_back(i, topics[i]);
    for (WriterId i = 1; i < writers.size(); ++i) wdefs.emplace_back(i, writers[i]);
    row.type_defs = types;
  }
  if (count == 0) return Status{};
  format::ChunkHeader ch;
  ch.raw_size = ch.stored_size = static_cast<uint32_t>(defs.size());
  ch.entry_count = count;
  ch.codec = format::Codec::kRaw;
  ch.flags = format::kChunkFlagRecvSorted;
  row.topic_defs = std::move(tdefs);
  row.writer_defs = std::move(wdefs);
  return write_chunk(ch, defs, nullptr, true, false, row);  // aligned: data may go direct
}

Status SegmentWriter::Impl::finish_segment() {
  if (!seg) return Status{};
  if (opt.fsync != FsyncPolicy::kNone) {
    if (auto s = sync_all(); !s) return s;
  }
  if (auto s = index->set_segment_closed(segs.back().number, true); !s) return s;
  const std::string path = seg->path();
  seg.reset();
  if (opt.on_segment_finished) opt.on_segment_finished(path);
  return Status{};
}

Status SegmentWriter::Impl::maybe_roll(size_t next_chunk_bytes) {
  if (seg) {
    const bool has_data = seg->size() > format::kSegmentHeaderSize;
    const bool too_big =
        seg->size() + next_chunk_bytes + format::kDirectAlignment > opt.segment_max_bytes;
    const bool too_old = opt.segment_max_duration.count() > 0 &&
                         Clock::now() - seg_opened >= opt.segment_max_duration;
    if (!has_data || (!too_big && !too_old)) return Status{};
    if (auto s = finish_segment(); !s) return s;
  }
  const uint64_t next = segs.empty() ? 1 : segs.back().number + 1;
  if (auto s = open_segment(next); !s) return s;
  if (!guard_active) return Status{};
  // The disk guard at every roll, before data goes into the new segment. It works outside
  // write_batch's index transaction (a removed segment's rows are committed before its file
  // goes): what that transaction holds so far is committed first, as at the end of a batch.
  if (auto s = index->commit(); !s) return s;
  Status g = guard_check();
  Status b = index->begin();
  return g ? b : g;
}

// Writes header + body (+ padding) at the end of the current segment and fills the row's
// location.
Status SegmentWriter::Impl::write_chunk(const format::ChunkHeader& h0, ByteSpan body,
                                        std::byte* block, bool align, bool crc_known,
                                        detail::ChunkRow& row) {
  format::ChunkHeader h = h0;
  h.sequence = next_chunk_seq;
  h.stored_size = static_cast<uint32_t>(body.size());
  if (!crc_known) h.body_crc = format::crc32c(body.data(), body.size());
  const uint64_t offset = seg->size();
  const bool big = body.size() >= opt.direct_io_min_bytes;
  const bool go_direct = block && big && direct_ready() && offset % format::kDirectAlignment == 0;
  if (direct_ready() && (big || align))
    h.padding = static_cast<uint16_t>(align_up(offset + format::kChunkHeaderSize + body.size()) -
                                      (offset + format::kChunkHeaderSize + body.size()));
  uint8_t hb[format::kChunkHeaderSize];
  format::encode_chunk_header(h, hb);
  Status st;
  if (go_direct) {
    // Header into the block's room before the body, zeros into the padding after it.
    std::memcpy(block, hb, sizeof hb);
    std::memset(block + sizeof hb + body.size(), 0, h.padding);
    st = seg->write_direct(block, sizeof hb + body.size() + h.padding);
  } else {
    static const std::byte kZeros[format::kDirectAlignment] = {};
    const ByteSpan parts[] = {ByteSpan(reinterpret_cast<std::byte*>(hb), sizeof hb), body,
                              ByteSpan(kZeros, h.padding)};
    st = seg->write(parts);
  }
  if (!st) {
    (void)seg->truncate(offset);  // never leave a torn chunk behind when we can help it
    return st;
  }
  ++next_chunk_seq;
  unsynced = true;
  // A large chunk through the page cache starts its writeback now, so the fdatasync of the batch
  // overlaps with writing the next chunks; a small one waits for that fdatasync (starting it
  // costs a system call and, on a VM, an exit to the host per chunk).
  if (opt.fsync != FsyncPolicy::kNone && !go_direct && big)
    seg->start_writeback(offset, seg->size() - offset);
  SegState& ss = segs.back();
  ss.size = seg->size();
  if (h.record_count > 0) ss.last_recv = std::max(ss.last_recv, h.last_recv_ns);
  ChunkInfo& c = row.info;
  c.sequence = h.sequence;
  c.segment = ss.number;
  c.offset = offset;
  c.stored_size = h.stored_size;
  c.raw_size = h.raw_size;
  c.codec = static_cast<uint8_t>(h.codec);
  c.record_count = h.record_count;
  c.entry_count = h.entry_count;
  c.first_recv_ns = h.first_recv_ns;
  c.last_recv_ns = h.last_recv_ns;
  if (auto s = index_after_sync(row); !s) return s;
  std::lock_guard lk(mu);
  ++stats.chunks_written;
  stats.file_bytes += format::chunk_span(h);
  if (go_direct) ++stats.direct_chunks;
  stats.padding_bytes += h.padding;
  return Status{};
}

// LZ4 of a chunk, when compression is on, not backing off, and it saves enough: then the
// compressed body (in a compression buffer, whose block replaces `block`) and h.codec kLz4;
// otherwise the raw body.
ByteSpan SegmentWriter::Impl::compress(const ChunkBuf& c, format::ChunkHeader& h,
                                       std::byte*& block) {
  const ByteSpan raw(reinterpret_cast<const std::byte*>(c.data), c.size);
  bool try_lz4 = opt.compression == Compression::kLz4 && c.size >= 64;
  if (try_lz4 && !lz4_backoff.try_next()) try_lz4 = false;
  if (!try_lz4) return raw;
  const int bound = LZ4_compressBound(static_cast<int>(c.size));
  const size_t need =
      format::kChunkHeaderSize + static_cast<size_t>(bound) + format::kDirectAlignment;
  if (cbuf.size() < need) cbuf = detail::AlignedBuffer::allocate(need);
  if (!cbuf) return raw;  // no memory for it: stored raw
  char* dst = reinterpret_cast<char*>(cbuf.get()) + format::kChunkHeaderSize;
  const int n = LZ4_compress_fast(reinterpret_cast<const char*>(c.data), dst,
                                  static_cast<int>(c.size), bound, opt.lz4_acceleration);
  if (n <= 0 ||
      static_cast<double>(n) > static_cast<double>(c.size) * (1.0 - opt.min_compression_saving)) {
    lz4_backoff.failed();
    return raw;
  }
  lz4_backoff.succeeded();
  h.codec = format::Codec::kLz4;
  block = cbuf.get();
  return ByteSpan(reinterpret_cast<const std::byte*>(dst), static_cast<size_t>(n));
}

Status SegmentWriter::Impl::write_batch(std::vector<ChunkBuf*>& batch) {
  if (auto s = index->begin(); !s) return s;
  Status st = finish_background_sync(false);
  for (ChunkBuf* c : batch) {
    if (!st) break;
    if (opt.test_delay_per_chunk.count() > 0) std::this_thread::sleep_for(opt.test_delay_per_chunk);
    format::ChunkHeader h;
    h.raw_size = static_cast<uint32_t>(c->size);
    h.record_count = c->records;
    h.entry_count = c->entries;
    h.first_recv_ns = c->first_recv;
    h.last_recv_ns = c->last_recv;
    h.flags = c->sorted ? format::kChunkFlagRecvSorted : 0;
    h.codec = format::Codec::kRaw;
    c->row.info.min_seq = c->records ? c->min_seq : 0;
    c->row.info.max_seq = c->records ? c->max_seq : 0;
    std::byte* block = c->block.get();
    const ByteSpan body = compress(*c, h, block);
    raw_expected.store(opt.compression == Compression::kNone || lz4_backoff.skipping(),
                       std::memory_order_relaxed);
    const bool crc_known = h.codec == format::Codec::kRaw && c->crc_running;
    if (crc_known) h.body_crc = c->crc;
    st = maybe_roll(format::kChunkHeaderSize + body.size());
    if (st) st = write_chunk(h, body, block, false, crc_known, c->row);
    if (!st) break;
    std::lock_guard lk(mu);
    if (crc_known) ++stats.appender_crc_chunks;
    stats.records_written += c->records;
    stats.bytes_written += c->payload_bytes;
  }
  // Durability before the index rows become visible (kChunk), so the index never points at
  // data a power loss could take away: the rows wait for the background sync.
  if (st && opt.fsync == FsyncPolicy::kChunk) start_background_sync();
  if (st && opt.fsync == FsyncPolicy::kInterval && Clock::now() - last_sync >= opt.fsync_interval)
    st = sync_now();
  std::vector<uint64_t> removed;
  if (st) st = apply_retention(removed);
  // Commit what was written even after a failure: those chunks are complete on disk.
  if (auto s = index->commit(); !s) {
    index->rollback();
    if (st) st = s;
  }
  for (uint64_t n : removed) {
    if (::unlink(detail::segment_path(dir, n).c_str()) == 0) {
      std::lock_guard lk(mu);
      ++stats.segments_removed;
    }
  }
  return st;
}

void SegmentWriter::Impl::run() {
  std::vector<ChunkBuf*> batch;
  for (;;) {
    uint64_t gen = 0, split_gen = 0;
    {
      std::unique_lock lk(mu);
      for (;;) {
        const bool healthy = failure.ok() || stopping;
        if (!queue.empty() || stop) break;
        if (sync_req_gen > sync_done_gen && healthy) break;
        if (split_req_gen > split_done_gen && healthy) break;
        if (sync_busy && sync_finished && healthy) break;  // index what it covered
        if (guard_active && Clock::now() >= next_guard) break;
        const auto guard_at = guard_active ? next_guard : Clock::time_point::max();
        if (open && open->entries > 0) {
          const auto deadline = open->opened + opt.chunk_max_age;
          if (Clock::now() >= deadline) {
            close_open_locked();
            continue;
          }
          work_cv.wait_until(lk, std::min(deadline, guard_at));
        } else if (opt.fsync == FsyncPolicy::kInterval && unsynced) {
          work_cv.wait_until(lk, std::min(last_sync + opt.fsync_interval, guard_at));
          if (Clock::now() >= last_sync + opt.fsync_interval) break;
        } else if (guard_active) {
          work_cv.wait_until(lk, guard_at);
        } else {
          work_cv.wait(lk);
        }
      }
      if (queue.empty() && stop) break;
      batch.swap(queue);
      gen = sync_req_gen;
      split_gen = split_req_gen;
    }
    bool report = false;
    Status st = blocking_failure();
    if (st.ok() && (!batch.empty() || sync_busy)) st = write_batch(batch);
    // Explicit flush requests and the kInterval timer end here with an fdatasync.
    if (st.ok() && opt.fsync != FsyncPolicy::kNone &&
        (gen > 0 ||
         (opt.fsync == FsyncPolicy::kInterval && Clock::now() - last_sync >= opt.fsync_interval)))
      st = sync_all_indexed();
    uint64_t next_segment = 0;
    if (st.ok() && split_gen > split_done_gen) {  // only this thread advances split_done_gen
      const bool has_data = seg && seg->size() > format::kSegmentHeaderSize;
      if (has_data) st = finish_segment();
      next_segment = seg ? segs.back().number : segs.empty() ? 1 : segs.back().number + 1;
    }
    if (st.ok() && guard_active && Clock::now() >= next_guard) st = guard_check();
    {
      std::lock_guard lk(mu);
      for (ChunkBuf* c : batch) release_locked(c);
      done_chunks += batch.size();
      sync_done_gen = std::max(sync_done_gen, gen);
      if (split_gen > split_done_gen) {
        split_done_gen = split_gen;
        split_next = next_segment;
      }
      // A failure while the guard's stop drains replaces it: the recording is not clean then.
      if (!st.ok() && (failure.ok() || stopping)) {
        failure = st;
        stopping = false;
        report = true;
      }
      if (!failure.ok()) guard_active = false;  // nothing left to guard
    }
    batch.clear();
    space_cv.notify_all();
    if (report && opt.on_error) opt.on_error(st);
  }
}

}  // namespace storage
