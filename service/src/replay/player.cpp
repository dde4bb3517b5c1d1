// play: publishes a recording's samples with their original timing.
//
// OVERVIEW
// Two threads:
// - the read-ahead thread owns the storage::Recording once publishing starts. It walks the query
//   cursor (reception-time order, across topics), copies the records into batches and hands them
//   over through a queue bounded in bytes (PlayOptions::queue_max_bytes), once per loop. Chunk
//   loads (read, checksum, LZ4) thus happen off the pacing thread.
// - the calling thread paces: it takes batches, sleeps until each sample is due
//   (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME) until `spin` before, then spins; `spin`
//   follows the observed wake-up latency), publishes it
//   with Writer::write_serialized and measures how late it went out. It alone writes to `err`
//   (progress, warnings); problems the reader thread meets are queued for it to print.
// Due time of a sample = loop start + (reception - first reception of the loop) / rate. Loop k+1
// starts one mean recorded inter-sample interval (scaled) after the last sample of loop k.
// Writers are created (and, with wait_readers, matched) before the first sample is due, so
// discovery never counts as lateness.
#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <ostream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common.hpp"
#include "histogram.hpp"
#include "service/recording_schema.hpp"

namespace service::replay {
namespace {

using detail::report;
using detail::warn;

int64_t mono_ns() {
  timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

void sleep_until_mono(int64_t t) {
  timespec ts;
  ts.tv_sec = t / 1'000'000'000;
  ts.tv_nsec = t % 1'000'000'000;
  ::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr);  // EINTR: the caller re-checks
}

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

std::string us(int64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f us", static_cast<double>(ns) / 1e3);
  return buf;
}

std::string seconds(std::chrono::nanoseconds d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", std::chrono::duration<double>(d).count());
  return buf;
}

// ---- read-ahead -------------------------------------------------------------------------------

struct Batch {
  uint64_t loop = 0;
  std::vector<storage::RecordMeta> metas;
  std::vector<size_t> ends;  // payload i = data[ends[i-1] .. ends[i])
  std::vector<std::byte> data;
  size_t bytes() const { return data.size() + metas.size() * (sizeof(storage::RecordMeta) + 8); }
  storage::ByteSpan payload(size_t i) const {
    const size_t b = i ? ends[i - 1] : 0;
    return storage::ByteSpan(data.data() + b, ends[i] - b);
  }
};

class ReadAhead {
 public:
  ReadAhead(std::unique_ptr<storage::Recording> rec, storage::Query query, uint64_t loops,
            size_t max_bytes)
      : rec_(std::move(rec)), query_(std::move(query)), loops_(loops), max_bytes_(max_bytes) {}
  ~ReadAhead() {
    cancel();
    if (thread_.joinable()) thread_.join();
  }
  void start() {
    thread_ = std::thread([this] { run(); });
  }
  // Consumer: the next batch; false at the end (or when cancelled / failed: see error()).
  bool pop(Batch& out) {
    std::unique_lock lk(mu_);
    cv_.wait(lk, [&] { return !queue_.empty() || done_ || cancelled_; });
    if (queue_.empty()) return false;
    out = std::move(queue_.front());
    queue_.pop_front();
    queued_bytes_ -= out.bytes();
    cv_.notify_all();
    return true;
  }
  void cancel() {
    std::lock_guard lk(mu_);
    cancelled_ = true;
    cv_.notify_all();
  }
  std::string error() {
    std::lock_guard lk(mu_);
    return error_;
  }
  // Problems met so far (damaged chunks skipped); drained by the consumer.
  std::vector<std::string> take_problems() {
    std::lock_guard lk(mu_);
    return std::exchange(problems_, {});
  }
  uint64_t problem_count() {
    std::lock_guard lk(mu_);
    return problem_count_;
  }
  void note_problem(const storage::Problem& p) {
    std::lock_guard lk(mu_);
    ++problem_count_;
    problems_.push_back("skipping damaged data: " + detail::describe(p, {}));
  }

 private:
  // Reader thread.
  void run() {
    for (uint64_t loop = 0; loops_ == 0 || loop < loops_; ++loop) {
      auto cursor = rec_->query(query_);
      if (!cursor) {
        fail("cannot query the recording: " + cursor.status().message());
        return;
      }
      Batch b;
      b.loop = loop;
      uint64_t n = 0;
      while (const storage::RecordView* r = cursor->next()) {
        b.metas.push_back(r->meta);
        b.data.insert(b.data.end(), r->payload.begin(), r->payload.end());
        b.ends.push_back(b.data.size());
        ++n;
        if (b.metas.size() >= 1024 || b.data.size() >= (1u << 20)) {
          if (!push(std::move(b))) return;
          b = Batch{};
          b.loop = loop;
        }
      }
      if (!b.metas.empty() && !push(std::move(b))) return;
      if (!cursor->status().is_ok()) {
        fail("reading the recording failed: " + cursor->status().message());
        return;
      }
      if (n == 0) break;  // nothing selected: looping would spin
    }
    std::lock_guard lk(mu_);
    done_ = true;
    cv_.notify_all();
  }
  bool push(Batch&& b) {
    std::unique_lock lk(mu_);
    const size_t bytes = b.bytes();
    cv_.wait(lk,
             [&] { return cancelled_ || queue_.empty() || queued_bytes_ + bytes <= max_bytes_; });
    if (cancelled_) return false;
    queued_bytes_ += bytes;
    queue_.push_back(std::move(b));
    cv_.notify_all();
    return true;
  }
  void fail(const std::string& message) {
    std::lock_guard lk(mu_);
    error_ = message;
    done_ = true;
    cv_.notify_all();
  }

  std::unique_ptr<storage::Recording> rec_;  // used by the reader thread only once started
  const storage::Query query_;
  const uint64_t loops_;
  const size_t max_bytes_;
  std::thread thread_;
  std::mutex mu_;  // guards everything below
  std::condition_variable cv_;
  std::deque<Batch> queue_;
  size_t queued_bytes_ = 0;
  bool done_ = false;
  bool cancelled_ = false;
  std::string error_;
  std::vector<std::string> problems_;
  uint64_t problem_count_ = 0;
};

// ---- writers ----------------------------------------------------------------------------------

struct ReplayWriter {
  std::unique_ptr<pubsub::Writer> writer;
  PlayedWriter info;
  bool warned = false;
  bool dirty = false;  // written since the last flush
};

bool stopped(const PlayOptions& o) {
  return o.stop && o.stop->load(std::memory_order_relaxed);
}

// SCHED_FIFO for the pacing thread while the run lasts (when asked and allowed).
class RealtimeScope {
 public:
  RealtimeScope(int priority, std::ostream& err) {
    if (priority <= 0) return;
    if (::pthread_getschedparam(::pthread_self(), &old_policy_, &old_param_) != 0) return;
    sched_param p{};
    p.sched_priority = std::clamp(priority, sched_get_priority_min(SCHED_FIFO),
                                  sched_get_priority_max(SCHED_FIFO));
    if (const int e = ::pthread_setschedparam(::pthread_self(), SCHED_FIFO, &p); e != 0) {
      warn(err, std::string("--realtime: cannot use SCHED_FIFO (") + std::strerror(e) +
                    "); pacing with normal scheduling");
      return;
    }
    active_ = true;
  }
  ~RealtimeScope() {
    if (active_) ::pthread_setschedparam(::pthread_self(), old_policy_, &old_param_);
  }
  bool active() const { return active_; }

 private:
  bool active_ = false;
  int old_policy_ = SCHED_OTHER;
  sched_param old_param_{};
};

// Restores the thread's timer slack when the run ends.
class TimerSlack {
 public:
  TimerSlack() : old_(::prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0)) {
    ::prctl(PR_SET_TIMERSLACK, 1000, 0, 0, 0);  // 1 us instead of the default 50 us
  }
  ~TimerSlack() {
    if (old_ > 0) ::prctl(PR_SET_TIMERSLACK, old_, 0, 0, 0);
  }

 private:
  int old_;
};

}  // namespace

int play(const PlayOptions& o, std::ostream& err, PlayReport* report_out) {
  PlayReport local_report;
  PlayReport& rep = report_out ? *report_out : local_report;
  rep = PlayReport{};
  if (!(o.rate > 0) || !std::isfinite(o.rate)) {
    return report(err, {kExitUsage, "--rate must be a positive number"});
  }

  // The recording, the selection and the writers it needs.
  // Problems met while opening (main thread) are printed at once; those met while reading
  // (reader thread) go through the ReadAhead. Declared before the ReadAhead, which joins its
  // thread when destroyed, so the callback never sees a dead pointer.
  std::vector<std::string> open_problems;
  ReadAhead* reader_ptr = nullptr;
  std::unique_ptr<ReadAhead> reader_holder;
  auto rec =
      detail::open_recording(o.dir, [&reader_ptr, &open_problems](const storage::Problem& p) {
        if (reader_ptr) {
          reader_ptr->note_problem(p);
        } else {
          open_problems.push_back("skipping damaged data: " + detail::describe(p, {}));
        }
      });
  if (!rec) return report(err, rec.error());
  for (const auto& p : open_problems) warn(err, p);
  if ((*rec)->close_state() == storage::CloseState::kUnclean) {
    warn(err, o.dir + " was not closed cleanly; playing it up to its last good chunk");
  }
  auto sel = detail::resolve_selection(**rec, o.selection);
  if (!sel) return report(err, sel.error());
  auto all_writers = (*rec)->writers();
  if (!all_writers) {
    return report(
        err, {kExitUsage, o.dir + ": cannot read the writers: " + all_writers.status().message()});
  }
  rep.recorded_seconds = static_cast<double>(sel->last_ns - sel->first_ns) / 1e9;
  std::vector<const storage::WriterInfo*> chosen;
  for (const auto& w : *all_writers) {
    if (!sel->topic_index.count(w.def.topic) || w.count == 0) continue;
    if (w.last_recv_ns < sel->query.start_ns || w.first_recv_ns >= sel->query.end_ns) continue;
    chosen.push_back(&w);
  }
  if (chosen.empty()) {
    err << "pubsub-replay: nothing to play: the selection holds no samples\n";
    return kExitOk;
  }

  // One participant, one writer per recorded writer.
  pubsub::ParticipantOptions po = o.participant;
  if (po.user_data.empty()) po.user_data = "pubsub-replay";
  auto participant = pubsub::Participant::create(po);
  if (!participant) {
    const auto code = participant.error().code;
    return report(
        err, {code == pubsub::ErrorCode::kNotFound || code == pubsub::ErrorCode::kInvalidArgument
                  ? kExitUsage
                  : kExitProblems,
              "cannot join domain " + std::to_string(po.domain_id) + ": " +
                  participant.error().message});
  }
  std::vector<ReplayWriter> writers;
  std::vector<int> writer_slot;  // storage WriterId -> index in writers, -1 when not played
  for (const storage::WriterInfo* w : chosen) {
    const storage::TopicInfo& t = sel->topics[sel->topic_index.at(w->def.topic)];
    RecordedQos qos;
    std::string why;
    if (!t.def.qos.empty() && !decode_qos(t.def.qos, qos, &why)) {
      warn(err, "topic " + t.def.name + ": recorded QoS unreadable (" + why +
                    "); replaying it reliable with default QoS");
      qos = RecordedQos{};
    }
    // Batching: samples recorded together (a burst, one datagram of the original writer) go out
    // packed together; before the pacing thread sleeps it flushes, so a sample that is due alone
    // is sent at once.
    pubsub::WriterQos wq = replay_writer_qos(qos);
    wq.batching.enabled = true;
    wq.batching.max_bytes = 65000;  // the most allowed; the transport's datagram size caps it
    wq.batching.max_samples = 4096;
    wq.batching.max_flush_delay = std::chrono::milliseconds(1);
    auto created = (*participant)->create_writer(replay_topic(t.def, qos), wq);
    if (!created) {
      return report(err,
                    {kExitProblems, "cannot create a writer on topic " + t.def.name + " (type " +
                                        t.def.type_name + "): " + created.error().message});
    }
    ReplayWriter rw;
    rw.writer = std::move(created).value();
    rw.info.topic = t.def.name;
    rw.info.recorded_id = w->id;
    rw.info.recorded_guid = w->def.guid;
    rw.info.replay_guid = rw.writer->guid();
    rw.info.reliable = qos.reliability == pubsub::ReliabilityKind::kReliable;
    if (writer_slot.size() <= w->id) writer_slot.resize(w->id + 1, -1);
    writer_slot[w->id] = static_cast<int>(writers.size());
    writers.push_back(std::move(rw));
  }
  auto sync_report = [&] {
    rep.writers.clear();
    for (const auto& w : writers) rep.writers.push_back(w.info);
  };
  sync_report();

  // Readers first, when asked.
  if (o.wait_readers > 0) {
    const int64_t deadline = mono_ns() + o.wait_timeout.count();
    std::vector<bool> ready(writers.size(), false);
    for (;;) {
      size_t missing = 0;
      for (size_t i = 0; i < writers.size(); ++i) {
        if (!ready[i]) ready[i] = writers[i].writer->wait_for_readers(o.wait_readers, {});
        missing += !ready[i];
      }
      if (missing == 0) break;
      if (stopped(o)) {
        rep.interrupted = true;
        err << "pubsub-replay: interrupted while waiting for readers; nothing was published\n";
        return kExitOk;
      }
      if (mono_ns() >= deadline) {
        std::map<std::string, size_t> topics;  // topic -> fewest matched readers
        for (size_t i = 0; i < writers.size(); ++i) {
          if (ready[i]) continue;
          const size_t m = writers[i].writer->matched_readers();
          auto [it, fresh] = topics.emplace(writers[i].info.topic, m);
          if (!fresh) it->second = std::min(it->second, m);
        }
        std::string list;
        for (const auto& [name, m] : topics) {
          list += (list.empty() ? "" : ", ") + name + " (" + std::to_string(m) + " matched)";
        }
        return report(err, {kExitProblems, "no readers: after " + seconds(o.wait_timeout) +
                                               " s these topics still have fewer than " +
                                               std::to_string(o.wait_readers) +
                                               " acknowledged reader(s): " + list});
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

  // Publishing.
  reader_holder =
      std::make_unique<ReadAhead>(std::move(*rec), sel->query, o.loops, o.queue_max_bytes);
  reader_ptr = reader_holder.get();
  ReadAhead& reader = *reader_holder;
  reader.start();

  TimerSlack slack;
  RealtimeScope realtime(o.realtime_priority, err);
  detail::Histogram total_late, window_late;
  const double inv_rate = 1.0 / o.rate;
  const int64_t total_span = sel->last_ns - sel->first_ns;
  int64_t loop_base = 0, loop_origin = 0, last_due = 0, first_due = 0;
  uint64_t cur_loop = UINT64_MAX;
  uint64_t first_loop_samples = 0;
  int64_t first_loop_first = 0, first_loop_last = 0;
  int64_t position_ns = 0;  // reception offset of the last sample written, in its loop
  int64_t next_progress = mono_ns() + o.progress_interval.count();
  int64_t window_start = mono_ns();
  uint64_t window_samples = 0;
  bool progress_printed = false;
  Error failure;
  bool failed = false;
  int64_t last_write_done = 0;

  auto print_progress = [&](int64_t now) {
    for (const auto& p : reader.take_problems()) {
      if (progress_printed && o.progress_tty) err << '\n';
      warn(err, p);
    }
    if (!o.progress) return;
    char line[256];
    const double secs = static_cast<double>(now - window_start) / 1e9;
    int n =
        std::snprintf(line, sizeof line, "%.1f/%.1f s  %llu samples  %.0f samples/s",
                      static_cast<double>(position_ns) / 1e9, static_cast<double>(total_span) / 1e9,
                      static_cast<unsigned long long>(rep.samples),
                      secs > 0 ? static_cast<double>(window_samples) / secs : 0.0);
    if (!o.fast && window_late.count()) {
      n += std::snprintf(line + n, sizeof line - static_cast<size_t>(n), "  late p99 %s",
                         us(window_late.percentile(0.99)).c_str());
    }
    if (o.loops != 1) {
      std::snprintf(line + n, sizeof line - static_cast<size_t>(n), "  loop %llu%s",
                    static_cast<unsigned long long>(cur_loop == UINT64_MAX ? 1 : cur_loop + 1),
                    o.loops ? ("/" + std::to_string(o.loops)).c_str() : "");
    }
    if (o.progress_tty) {
      err << "\r" << line << "\033[K";
    } else {
      err << "pubsub-replay: " << line << '\n';
    }
    err.flush();
    progress_printed = true;
    window_late.reset();
    window_samples = 0;
    window_start = now;
  };

  // Under SCHED_FIFO wake-ups are prompt, and a thread that never sleeps would run into the
  // kernel's real-time throttling (stalls of ~50 ms): keep the spin window at its minimum.
  const int64_t spin_min = o.spin_min.count();
  const int64_t spin_max =
      realtime.active() ? spin_min : std::max<int64_t>(o.spin_max.count(), spin_min);
  int64_t spin_ns = spin_min;
  std::vector<size_t> dirty;  // writers with a partial batch
  auto flush_dirty = [&] {
    for (size_t i : dirty) {
      writers[i].writer->flush();
      writers[i].dirty = false;
    }
    dirty.clear();
  };
  // Sleeps until `due` (monotonic), flushing partial batches first and printing progress on the
  // way. False when stopped.
  auto wait_until = [&](int64_t due) {
    if (!dirty.empty() && mono_ns() < due) flush_dirty();
    for (;;) {
      int64_t now = mono_ns();
      if (now >= next_progress) {
        print_progress(now);
        next_progress = now + o.progress_interval.count();
      }
      if (stopped(o)) return false;
      if (now >= due) return true;
      const int64_t remaining = due - now;
      if (remaining > spin_ns) {
        int64_t target = due - spin_ns;
        target = std::min({target, now + 50'000'000, next_progress});
        sleep_until_mono(target);
        // Follow the wake-up latency: move a quarter of the way up towards a late wake-up
        // (plus a quarter of margin), relax by 1/64 towards earlier ones; a lone long stall
        // (preemption) moves it little and is forgotten within a few hundred sleeps.
        const int64_t over = mono_ns() - target;
        if (over > 0) {
          const int64_t want = over + over / 4;
          spin_ns += want > spin_ns ? (want - spin_ns) / 4 : -((spin_ns - want) / 64);
          spin_ns = std::clamp(spin_ns, spin_min, spin_max);
        }
      } else {
        while (mono_ns() < due) cpu_relax();
        return !stopped(o);
      }
    }
  };

  Batch batch;
  bool running = true;
  while (running && reader.pop(batch)) {
    for (size_t i = 0; i < batch.metas.size(); ++i) {
      const storage::RecordMeta& m = batch.metas[i];
      if (batch.loop != cur_loop) {
        // A new loop: the first loop starts now; later ones one mean interval after the last.
        if (cur_loop == UINT64_MAX) {
          loop_base = mono_ns();
          first_due = loop_base;
        } else {
          rep.loops++;
          int64_t gap = 1'000'000'000;
          if (first_loop_samples > 1) {
            gap =
                (first_loop_last - first_loop_first) / static_cast<int64_t>(first_loop_samples - 1);
          }
          loop_base = last_due + static_cast<int64_t>(static_cast<double>(gap) * inv_rate);
        }
        cur_loop = batch.loop;
        loop_origin = m.reception_ns;
      }
      if (cur_loop == 0) {
        if (first_loop_samples++ == 0) first_loop_first = m.reception_ns;
        first_loop_last = m.reception_ns;
      }

      const int slot = m.writer < writer_slot.size() ? writer_slot[m.writer] : -1;
      if (slot < 0) continue;  // not selected (cannot happen with the query's topic filter)
      ReplayWriter& w = writers[static_cast<size_t>(slot)];

      if (o.fast) {
        if (stopped(o)) {
          running = false;
          break;
        }
        const int64_t now = mono_ns();
        if (now >= next_progress) {
          print_progress(now);
          next_progress = now + o.progress_interval.count();
        }
        last_due = now;
      } else {
        const int64_t due =
            loop_base +
            static_cast<int64_t>(static_cast<double>(m.reception_ns - loop_origin) * inv_rate);
        if (!wait_until(due)) {
          running = false;
          break;
        }
        const int64_t late = mono_ns() - due;
        total_late.record(late);
        window_late.record(late);
        last_due = due;
      }

      pubsub::WriteOptions wo;
      pubsub::KeyHash kh;
      if (m.has_key_hash) {
        kh.value = m.key_hash;
        wo.key_hash = &kh;
      }
      wo.timestamp =
          pubsub::Time{(m.flags & kFlagHasSourceTimestamp) ? m.source_ns : m.reception_ns};
      wo.status_info =
          ((m.flags & kFlagDisposed) ? 1u : 0u) | ((m.flags & kFlagUnregistered) ? 2u : 0u);
      const storage::ByteSpan payload = batch.payload(i);
      const int64_t write_start = mono_ns();
      auto res = w.writer->write_serialized(pubsub::Bytes(payload.data(), payload.size()), wo);
      while (!res && res.error().code == pubsub::ErrorCode::kTimeout) {
        // Reliable readers have not acknowledged enough: keep trying (they may be slow), but
        // not forever.
        if (stopped(o)) break;
        if (mono_ns() - write_start > o.block_timeout.count()) break;
        const int64_t now = mono_ns();
        if (now >= next_progress) {
          print_progress(now);
          next_progress = now + o.progress_interval.count();
        }
        res = w.writer->write_serialized(pubsub::Bytes(payload.data(), payload.size()), wo);
      }
      if (!res) {
        if (res.error().code == pubsub::ErrorCode::kTimeout && stopped(o)) {
          running = false;
          break;
        }
        if (res.error().code == pubsub::ErrorCode::kInvalidArgument ||
            res.error().code == pubsub::ErrorCode::kResourceLimit) {
          // This one sample cannot be published (e.g. larger than the writer's history); the
          // rest can.
          if (!w.warned) {
            if (progress_printed && o.progress_tty) err << '\n';
            warn(err, "topic " + w.info.topic + ": sample seq " + std::to_string(m.sequence) +
                          " not published: " + res.error().message +
                          " (further ones not reported)");
            w.warned = true;
          }
          continue;
        }
        failure = {kExitProblems,
                   "publishing on topic " + w.info.topic + " failed: " + res.error().message +
                       (res.error().code == pubsub::ErrorCode::kTimeout
                            ? " (readers stopped acknowledging for " +
                                  std::to_string(std::chrono::duration_cast<std::chrono::seconds>(
                                                     o.block_timeout)
                                                     .count()) +
                                  " s)"
                            : "")};
        failed = true;
        running = false;
        break;
      }
      last_write_done = mono_ns();
      if (!w.dirty) {
        w.dirty = true;
        dirty.push_back(static_cast<size_t>(slot));
      }
      w.info.samples++;
      rep.samples++;
      rep.bytes += payload.size();
      window_samples++;
      position_ns = m.reception_ns - loop_origin;
    }
  }
  reader.cancel();
  const std::string read_error = reader.error();
  if (!failed && !running) {
    rep.interrupted = true;
  } else if (!failed && read_error.empty() && cur_loop != UINT64_MAX) {
    rep.loops++;
  }
  if (progress_printed && o.progress_tty) err << '\n';
  for (const auto& p : reader.take_problems()) warn(err, p);
  rep.problems = reader.problem_count();
  if (last_write_done) rep.publish_seconds = static_cast<double>(last_write_done - first_due) / 1e9;
  rep.lateness = {total_late.count(), total_late.percentile(0.5), total_late.percentile(0.99),
                  total_late.max()};

  // Everything out, and acknowledged by the reliable readers (briefly when interrupted).
  for (auto& w : writers) w.writer->flush();
  const auto ack_budget =
      rep.interrupted ? std::min<std::chrono::nanoseconds>(o.ack_timeout, std::chrono::seconds(2))
                      : o.ack_timeout;
  const int64_t ack_deadline = mono_ns() + ack_budget.count();
  for (auto& w : writers) {
    bool acked = false;
    for (;;) {
      const int64_t left = ack_deadline - mono_ns();
      acked = w.writer->wait_for_acknowledgments(
          std::chrono::nanoseconds(std::clamp<int64_t>(left, 0, 100'000'000)));
      if (acked || left <= 0) break;
      if (!rep.interrupted && stopped(o)) {
        rep.interrupted = true;
        break;
      }
    }
    w.info.acknowledged = acked;
    w.info.matched_readers = w.writer->matched_readers();
    if (!acked) {
      warn(err, "topic " + w.info.topic + ": not every reader acknowledged everything within " +
                    seconds(ack_budget) + " s (" + std::to_string(w.info.matched_readers) +
                    " matched)");
    }
  }
  sync_report();

  // Summary.
  char line[512];
  std::set<std::string> topic_names;
  for (const auto& w : writers) topic_names.insert(w.info.topic);
  int n = std::snprintf(
      line, sizeof line,
      "pubsub-replay: %s %llu samples (%llu bytes) on %zu topic%s from %zu writer%s in %.3f s "
      "(recorded %.3f s",
      rep.interrupted ? "interrupted after" : "played",
      static_cast<unsigned long long>(rep.samples), static_cast<unsigned long long>(rep.bytes),
      topic_names.size(), topic_names.size() == 1 ? "" : "s", writers.size(),
      writers.size() == 1 ? "" : "s", rep.publish_seconds, rep.recorded_seconds);
  if (o.fast) {
    n += std::snprintf(line + n, sizeof line - static_cast<size_t>(n), ", fast");
  } else {
    n += std::snprintf(line + n, sizeof line - static_cast<size_t>(n), ", rate %g", o.rate);
  }
  if (o.loops != 1) {
    n += std::snprintf(line + n, sizeof line - static_cast<size_t>(n), ", %llu loop%s",
                       static_cast<unsigned long long>(rep.loops), rep.loops == 1 ? "" : "s");
  }
  n += std::snprintf(line + n, sizeof line - static_cast<size_t>(n), ")");
  if (!o.fast && rep.lateness.count) {
    std::snprintf(line + n, sizeof line - static_cast<size_t>(n), "; late p50 %s, p99 %s, max %s",
                  us(rep.lateness.p50_ns).c_str(), us(rep.lateness.p99_ns).c_str(),
                  us(rep.lateness.max_ns).c_str());
  }
  err << line << '\n';
  err.flush();
  if (failed) return report(err, failure);
  if (!read_error.empty()) return report(err, {kExitProblems, read_error});
  if (rep.problems || !open_problems.empty()) {
    return report(err, {kExitProblems,
                        "damaged chunks were skipped; not everything was played "
                        "(see 'pubsub-replay verify " +
                            o.dir + "')"});
  }
  return kExitOk;
}

}  // namespace service::replay
