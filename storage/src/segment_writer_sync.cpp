// SegmentWriter, the background fdatasync (FsyncPolicy::kChunk): a second thread syncs what the
// writer thread has written while it writes on, one sync in flight; the rows of the chunks a sync
// covers are indexed once it has ended. segment_writer_impl.hpp has the overview.
#include "segment_writer_impl.hpp"

namespace storage {

void SegmentWriter::Impl::sync_loop() {
  std::unique_lock lk(mu);
  Clock::time_point last_start{};
  for (;;) {
    syncer_cv.wait(lk, [&] { return sync_sink != nullptr || syncer_stop; });
    if (!sync_sink) return;
    // Paced (opt.min_sync_spacing): what the writer thread writes meanwhile waits in
    // unsynced_rows for the next sync. Not when the writer thread waits for this one.
    syncer_cv.wait_until(lk, last_start + opt.min_sync_spacing,
                         [&] { return sync_hurry || syncer_stop; });
    last_start = Clock::now();
    FileSink* sink = sync_sink;
    lk.unlock();
    if (opt.test_delay_per_sync.count() > 0) std::this_thread::sleep_for(opt.test_delay_per_sync);
    Status st = sync_file(*sink);  // fdatasync only: safe beside the writer thread's pwritev
    lk.lock();
    sync_sink = nullptr;
    sync_hurry = false;
    sync_status = std::move(st);
    sync_finished = true;
    work_cv.notify_one();
  }
}

// Writer thread, kChunk: hands what was written since the last sync to the syncer thread.
void SegmentWriter::Impl::start_background_sync() {
  if (sync_busy || unsynced_rows.empty() || !seg) return;
  sync_rows.swap(unsynced_rows);
  sync_busy = true;
  sync_end = seg->size();
  unsynced = false;
  std::lock_guard lk(mu);
  sync_sink = seg.get();
  syncer_cv.notify_one();
}

// Writer thread, kChunk: when the background sync has ended (or after waiting for it, with
// `block`), indexes the rows it covered (in the open index transaction).
Status SegmentWriter::Impl::finish_background_sync(bool block) {
  if (!sync_busy) return Status{};
  Status st;
  {
    std::unique_lock lk(mu);
    if (!sync_finished && !block) return Status{};
    if (!sync_finished) {
      sync_hurry = true;  // a flush, roll or close waits: no pacing
      syncer_cv.notify_one();
    }
    work_cv.wait(lk, [&] { return sync_finished; });
    sync_finished = false;
    st = std::move(sync_status);
  }
  sync_busy = false;
  if (!st) return st;
  synced_to(sync_end);
  for (auto& row : sync_rows)
    if (auto s = index->put_chunk(row); !s) return s;
  sync_rows.clear();
  return Status{};
}

// Writer thread: everything written is on disk and (kChunk) indexed in the open transaction.
Status SegmentWriter::Impl::sync_all() {
  if (auto s = finish_background_sync(true); !s) return s;
  if (auto s = sync_now(); !s) return s;
  for (auto& row : unsynced_rows)
    if (auto s = index->put_chunk(row); !s) return s;
  unsynced_rows.clear();
  return Status{};
}

Status SegmentWriter::Impl::sync_all_indexed() {
  if (auto s = index->begin(); !s) return s;
  Status st = sync_all();
  if (auto s = index->commit(); !s) {
    index->rollback();
    if (st) st = s;
  }
  return st;
}

// Ends the syncer thread once its fdatasync (if one is running) has returned.
void SegmentWriter::Impl::stop_syncer() {
  {
    std::lock_guard lk(mu);
    syncer_stop = true;
    syncer_cv.notify_one();
  }
  if (syncer.joinable()) syncer.join();
}

}  // namespace storage
