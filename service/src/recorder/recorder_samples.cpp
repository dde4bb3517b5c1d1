// The recorder's sample path (Recorder::Impl, recorder_impl.hpp): runs on the participant's
// delivering threads, several at once, each under the delivering reader's lock. A sample is
// appended to the sink and acknowledged only once appended (back-pressure: see recorder.hpp).

#include <optional>

#include "recorder_impl.hpp"
#include "service/recording_schema.hpp"

namespace service {
namespace {

// This thread's batch of appends: the sink's append lock (the storage writer's in record mode,
// the snapshot ring's in snapshot mode), taken at the batch's first sample and released by the
// reader's on_batch_end (one lock per datagram's samples, not per sample). Released before this
// thread takes maps_mu or calls the sink otherwise.
struct ThreadBatch {
  Sink* sink = nullptr;  // whose lock is held (null: none); one of these two is set
  storage::SegmentWriter* writer = nullptr;
  SnapshotSink* snapshot = nullptr;
  std::optional<storage::SegmentWriter::AppendLock> lock;
  std::optional<storage::SnapshotRing::AppendLock> ring_lock;
};
thread_local ThreadBatch t_batch;

// This thread's last writer (runs of samples come from one writer); `generation` tells the
// recorders of one process apart.
struct WriterCache {
  uint64_t generation = 0;
  pubsub::Guid guid;
  WriterState* state = nullptr;
};
thread_local WriterCache t_writer;

}  // namespace

Status Recorder::Impl::append(const storage::RecordMeta& m, storage::ByteSpan payload) {
  if (t_batch.sink != store.get()) {  // the batch's first sample: take the sink's lock
    end_batch();
    if ((t_batch.writer = store->batch_writer())) {
      t_batch.lock.emplace(t_batch.writer->lock_appends());
    } else if ((t_batch.snapshot = store->batch_snapshot())) {
      t_batch.ring_lock.emplace(t_batch.snapshot->lock_appends());
    } else {
      return store->try_append(m, payload);  // a sink that locks per record
    }
    t_batch.sink = store.get();
  }
  return t_batch.writer ? t_batch.writer->try_append(*t_batch.lock, m, payload)
                        : t_batch.snapshot->try_append(*t_batch.ring_lock, m, payload);
}

void Recorder::Impl::end_batch() {
  t_batch = ThreadBatch{};  // releases the lock it holds
}

WriterState* Recorder::Impl::writer_for(const pubsub::RawSample& s) {
  end_batch();  // the registrar may hold maps_mu and wait for the storage lock
  std::lock_guard lk(maps_mu);
  WriterState* w = nullptr;
  if (auto it = writers.find(s.writer); it != writers.end()) {
    w = it->second.get();
  } else if (auto p = prepared.find(s.writer); p != prepared.end() && p->second.topic) {
    w = define_locked(s.writer, p->second, s.serialized);
  } else {
    w = unprepared_locked(s, p != prepared.end());
  }
  if (w) t_writer = {generation, s.writer, w};
  return w;
}

WriterState* Recorder::Impl::unprepared_locked(const pubsub::RawSample& s, bool queued) {
  // The writer's own QoS, from its announcement (known before its first sample); without it,
  // refused for now: offered again in a few milliseconds.
  const pubsub::RawReader* r = reader_ready.load(std::memory_order_acquire);
  auto offer = r ? r->writer_info(s.writer) : nullptr;
  if (!offer) return nullptr;
  if (is_elsewhere(*offer)) return elsewhere_locked(*offer);
  if (offer->topic.reliability == pubsub::ReliabilityKind::kReliable) {
    // Refused for now, while the registrar prepares it. on_writer_matched queues a writer after
    // its reader is connected, so its first sample may come first: queued here then.
    PreparedWriter& p = prepared[s.writer];
    if (!queued) {
      std::lock_guard q(reg_mu);
      reg_queue.push_back({s.topic, std::move(offer)});
      reg_cv.notify_one();
    }
    if (!p.held_logged) {
      p.held_logged = true;
      log->info(
          "writer {} on {}: its first sample came before the registrar had prepared it; "
          "held back until it has",
          guid_hex(s.writer), s.topic->name);
    }
    return nullptr;
  }
  // Best effort: a refused sample would be lost.
  PreparedWriter* p = prepare_locked(s.topic, *offer);
  if (!p) return nullptr;
  log->info(
      "writer {} on {}: its first sample came before the registrar had prepared it (best "
      "effort: prepared on the receive thread)",
      guid_hex(s.writer), s.topic->name);
  return define_locked(s.writer, *p, s.serialized);
}

WriterState* Recorder::Impl::define_locked(const pubsub::Guid& g, PreparedWriter& p,
                                           storage::ByteSpan first) {
  // infer_representation's rule: a writer that announced none offers what its first sample is.
  const bool xcdr2 = !p.qos_xcdr2.empty() && xcdr2_encapsulation(first);
  auto id =
      store->add_writer(storage::WriterDef{p.topic->id, g.bytes(), xcdr2 ? p.qos_xcdr2 : p.qos});
  if (!id) {
    fail(id.error());
    return nullptr;
  }
  auto w = std::make_unique<WriterState>();
  w->id = id.value();
  w->topic = p.topic;
  w->reliable = p.reliable;
  WriterState* state = w.get();
  p.topic->writers.push_back(state);
  writers.emplace(g, std::move(w));
  prepared.erase(g);  // `p` goes with it
  writer_count++;
  return state;
}

bool Recorder::Impl::on_sample(const pubsub::RawSample& s) {
  if (failed.load(std::memory_order_relaxed)) return false;
  WriterState* w = t_writer.generation == generation && t_writer.guid == s.writer ? t_writer.state
                                                                                  : writer_for(s);
  if (!w) return false;
  if (w->elsewhere) [[unlikely]]
    return true;  // acknowledged, as every reader of the writer does; recorded by its host
  if (w->reliable && w->last && s.sequence_number <= w->last) [[unlikely]]
    return already_recorded(*w, s);
  if (w->topic->paused.load(std::memory_order_relaxed)) return skip(*w, s);
  storage::RecordMeta m;
  m.topic = w->topic->id;
  m.writer = w->id;
  m.sequence = s.sequence_number;
  m.source_ns = s.has_source_timestamp ? s.source_timestamp.ns : 0;
  m.reception_ns = std::max<int64_t>(s.reception_timestamp.ns, w->last_reception_ns);
  m.flags = record_flags(s);
  if (s.key_hash) {
    m.has_key_hash = true;
    m.key_hash = s.key_hash->value;
  }
  const auto st = append(m, s.serialized);
  if (!st) {
    if (st.error().code == Errc::kFull) {
      bump(w->refused, 1);
      refused_flag.store(true, std::memory_order_relaxed);
    } else {
      fail(st.error());
    }
    return false;
  }
  if (w->last && s.sequence_number > w->last + 1) [[unlikely]] {
    // A locked add, not bump(): on_writer_matched may take a departure off `lost` meanwhile.
    w->lost.fetch_add(static_cast<uint64_t>(s.sequence_number - w->last - 1),
                      std::memory_order_relaxed);
  }
  w->last = std::max(w->last, s.sequence_number);
  w->last_reception_ns = m.reception_ns;
  bump(w->samples, 1);
  bump(w->bytes, s.serialized.size());
  return true;
}

bool Recorder::Impl::already_recorded(WriterState& w, const pubsub::RawSample& s) {
  bump(w.resent, 1);
  if (!w.resent_logged) {
    w.resent_logged = true;
    log->info(
        "writer {} on {} sends samples from {} again (matched again after it was gone): "
        "those up to {} are recorded already and not stored twice",
        s.writer.to_string(), w.topic->name, s.sequence_number, w.last);
  }
  return true;  // taken: acknowledged, as the first copy was
}

bool Recorder::Impl::skip(WriterState& w, const pubsub::RawSample& s) {
  end_batch();  // skip_to takes the storage lock
  if (auto st = store->skip_to(w.id, s.sequence_number); !st) {
    fail(st.error());
    return false;
  }
  w.last = std::max(w.last, s.sequence_number);
  bump(w.skipped, 1);
  return true;
}

}  // namespace service
