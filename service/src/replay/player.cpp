// play: publishes a recording's samples with their original timing.
//
// OVERVIEW
// Two threads: the read-ahead thread and the calling thread, which paces and publishes and alone
// writes to `err` (progress, warnings, summary). play() runs the stages below; each has its
// section in this file, in this order.
// - read-ahead (Batch, ReadAhead; its own thread): owns the storage::Recording once publishing
//   starts. It walks the query cursor (reception-time order, across topics), copies the records
//   into batches and hands them over through a queue bounded in bytes
//   (PlayOptions::queue_max_bytes), once per loop. Chunk loads (read, checksum, LZ4) thus happen
//   off the pacing thread. Problems it meets are queued for the calling thread to print.
// - selection (ProblemSink, Source, select_source; calling thread): opens the recording,
//   resolves the topics and the time range, picks the recorded writers with samples in it.
//   ProblemSink routes the damage the recording reports: collected (and printed) while opening,
//   handed to the ReadAhead once it runs.
// - loop control (stopped, RunEnd, LoopClock; calling thread): --loop N is the ReadAhead walking
//   the selection N times (0: until stopped), tagging each batch with its loop. LoopClock places
//   each loop on the monotonic clock and counts the loops completed. The stop flag
//   (PlayOptions::stop, set by the SIGINT handler) is polled while pacing, while a write is
//   blocked and while waiting for readers or acknowledgements; the sample loop ends done,
//   stopped or failed (RunEnd).
// - progress line (Progress; calling thread): every progress_interval, after the problems the
//   ReadAhead queued.
// - publishing (ReplayWriter, Publisher, wait_for_readers, write_sample, publish_sample,
//   await_acknowledgments; calling thread): one participant, one writer per recorded writer,
//   created (and, with wait_readers, matched) before the first sample is due, so discovery never
//   counts as lateness; Writer::write_serialized per sample; at the end a flush of every writer
//   and the wait for acknowledgements. Publisher owns the participant and the writers.
// - pacing (RealtimeScope, TimerSlack, Pacer; calling thread): sleeps until each sample is due
//   (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME) until `spin` before, then spins; `spin`
//   follows the observed wake-up latency), flushing partial batches before it sleeps, and
//   measures how late each sample went out. Lowers the thread's timer slack and, when asked, runs
//   it SCHED_FIFO for as long as the run lasts.
// - summary (print_summary; calling thread): the last line on `err`.
// - Run: the sample loop on the calling thread, from the ReadAhead through LoopClock, Pacer and
//   publish_sample; owns the Pacer, the LoopClock and the Progress.
// play() owns the ProblemSink, the ReadAhead (declared before the Publisher, so its thread is
// joined after the writers are gone), the Source, the Publisher and the Run.
// Due time of a sample = loop start + (reception - first reception of the loop) / rate. Loop k+1
// starts one mean recorded inter-sample interval (scaled) after the last sample of loop k.
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
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common.hpp"
#include "common/thread_name.hpp"
#include "decode.hpp"
#include "histogram.hpp"
#include "replay_qos.hpp"
#include "service/recording_schema.hpp"
#include "types/key_hash.hpp"
#include "types/type_object.hpp"
#include "types/type_object_writer.hpp"

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
    common::name_thread(thread_, "replay-read");
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
  void note_problem(const storage::Problem& p,
                    const std::map<storage::TopicId, std::string>& topic_names) {
    std::lock_guard lk(mu_);
    ++problem_count_;
    problems_.push_back("skipping damaged data: " + detail::describe(p, topic_names));
  }

 private:
  // Reader thread.
  void run() {
    for (uint64_t loop = 0; loops_ == 0 || loop < loops_; ++loop) {
      auto cursor = rec_->query(query_);
      if (!cursor) {
        fail("cannot query the recording: " + cursor.error().message);
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
      if (!cursor->status().ok()) {
        fail("reading the recording failed: " + cursor->status().error().message);
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

// ---- selection ----------------------------------------------------------------------------------

// Where the recording reports damage it skips. Problems met while opening (calling thread) are
// collected here; once a ReadAhead is attached they are met on its thread and go through it.
// Must outlive the ReadAhead, which joins its thread when destroyed, so the callback never sees
// a dead pointer.
class ProblemSink {
 public:
  void note(const storage::Problem& p) {
    if (reader_) {
      reader_->note_problem(p, names_);
    } else {
      open_problems_.push_back(p);
    }
  }
  // Once the recording is open: problems name their topics.
  void set_names(std::map<storage::TopicId, std::string> names) { names_ = std::move(names); }
  // Before the ReadAhead's thread starts.
  void attach(ReadAhead* reader) { reader_ = reader; }
  std::vector<std::string> open_problems() const {
    std::vector<std::string> v;
    for (const auto& p : open_problems_)
      v.push_back("skipping damaged data: " + detail::describe(p, names_));
    return v;
  }

 private:
  ReadAhead* reader_ = nullptr;
  std::vector<storage::Problem> open_problems_;
  std::map<storage::TopicId, std::string> names_;
};

// The recording, the selection and the recorded writers with samples in it (none: nothing to
// play).
struct Source {
  std::unique_ptr<storage::Recording> rec;
  detail::ResolvedSelection sel;
  std::vector<storage::WriterInfo> writers;
};

// Whether recorded writer `w` is durable (TRANSIENT_LOCAL or more) as it will be replayed.
bool durable_writer(const storage::WriterInfo& w, const storage::TopicInfo& t,
                    const detail::QosOverrides& overrides) {
  const RecordedQos q = detail::apply_overrides(
      overrides, t.def.name, detail::recorded_writer_qos(w, t.def).value_or(RecordedQos{}));
  return q.durability >= pubsub::DurabilityKind::kTransientLocal;
}

// The recorder's wall clock steps within the selection (clock_step marks), each said on a line:
// play paces by reception times, which the recorder takes from its monotonic clock, so a step is
// played neither as a pause nor as a burst.
void say_clock_steps(storage::Recording& rec, const detail::ResolvedSelection& sel,
                     std::ostream& err) {
  auto marks = rec.marks();
  if (!marks) return;  // the tags were read already by resolve_selection: nothing new to say
  for (const storage::Mark& m : *marks) {
    if (m.kind != storage::MarkKind::kClockStep) continue;
    if (m.time_ns < sel.query.start_ns || m.time_ns >= sel.query.end_ns) continue;
    char at[48];
    std::snprintf(at, sizeof at, "%.1f",
                  static_cast<double>(m.time_ns - sel.recording_first_ns) / 1e9);
    err << "pubsub-replay: the recorder's wall clock stepped " << m.note.substr(0, m.note.find(';'))
        << " at " << at
        << " s of the recording; its reception times, which play paces by, went on from its "
           "monotonic clock: played as recorded, without a pause or a burst\n";
  }
}

// Opens the recording (printing the damage met on the way), resolves the selection and picks the
// writers: those with samples in it, and with a start time the durable ones with samples before
// it (their latched state).
Result<Source> select_source(const PlayOptions& o, const detail::QosOverrides& overrides,
                             ProblemSink& problems, std::ostream& err) {
  auto rec =
      detail::open_recording(o.dir, [&problems](const storage::Problem& p) { problems.note(p); });
  if (!rec) return rec.error();
  problems.set_names(detail::topic_names(**rec));
  if (const auto& live = (*rec)->lock_state().live) {
    // Its growing tail is no damage: say once what is played.
    warn(err,
         o.dir + " is being written by " + live->describe() + "; playing what is written so far");
  } else {
    for (const auto& p : problems.open_problems()) warn(err, p);
    if ((*rec)->close_state() == storage::CloseState::kUnclean) {
      warn(err, o.dir + " was not closed cleanly; playing it up to its last good chunk");
    }
  }
  auto sel = detail::resolve_selection(**rec, o.selection);
  if (!sel) return sel.error();
  auto all_writers = (*rec)->writers();
  if (!all_writers) {
    return all_writers.error().with_context(o.dir + ": cannot read the writers");
  }
  Source src{std::move(*rec), std::move(*sel), {}};
  say_clock_steps(*src.rec, src.sel, err);
  for (const auto& w : *all_writers) {
    if (!src.sel.topic_index.count(w.def.topic) || w.count == 0) continue;
    if (w.first_recv_ns >= src.sel.query.end_ns) continue;
    if (w.last_recv_ns < src.sel.query.start_ns) {
      const auto& t = src.sel.topics[src.sel.topic_index.at(w.def.topic)];
      if (!o.latched || !durable_writer(w, t, overrides)) continue;
    }
    src.writers.push_back(w);
  }
  return src;
}

// ---- loop control -------------------------------------------------------------------------------

// The stop flag (PlayOptions::stop), set e.g. by a SIGINT handler.
bool stopped(const PlayOptions& o) {
  return o.stop && o.stop->load(std::memory_order_relaxed);
}

// How the sample loop ended: the ReadAhead had no more (all loops, or a read error), the stop
// flag was set, or publishing failed.
enum class RunEnd { kDone, kStopped, kFailed };

// Where each loop lies on the monotonic clock (pacing thread). The first loop starts at its
// first sample; loop k+1 one mean recorded inter-sample interval of the first loop (1 s with
// fewer than two samples), scaled by the rate, after the last sample of loop k.
class LoopClock {
 public:
  explicit LoopClock(double rate) : inv_rate_(1.0 / rate) {}

  // Every sample, in order, before it is paced; counts the loops left behind.
  void on_sample(uint64_t loop, int64_t reception_ns, uint64_t& loops_completed) {
    if (loop != cur_loop_) {
      // A new loop: the first loop starts now; later ones one mean interval after the last.
      if (cur_loop_ == UINT64_MAX) {
        loop_base_ = mono_ns();
        first_due_ = loop_base_;
      } else {
        loops_completed++;
        int64_t gap = 1'000'000'000;
        if (first_loop_samples_ > 1) {
          gap = (first_loop_last_ - first_loop_first_) /
                static_cast<int64_t>(first_loop_samples_ - 1);
        }
        loop_base_ = last_due_ + static_cast<int64_t>(static_cast<double>(gap) * inv_rate_);
      }
      cur_loop_ = loop;
      loop_origin_ = reception_ns;
    }
    if (cur_loop_ == 0) {
      if (first_loop_samples_++ == 0) first_loop_first_ = reception_ns;
      first_loop_last_ = reception_ns;
    }
  }
  // When a sample of the current loop is due.
  int64_t due(int64_t reception_ns) const {
    return loop_base_ +
           static_cast<int64_t>(static_cast<double>(reception_ns - loop_origin_) * inv_rate_);
  }
  // The due time (paced) or the time (fast) of the sample just let out.
  void went_out(int64_t t) { last_due_ = t; }
  // Reception offset of a sample in the current loop.
  int64_t position(int64_t reception_ns) const { return reception_ns - loop_origin_; }
  bool started() const { return cur_loop_ != UINT64_MAX; }
  uint64_t current_loop() const { return cur_loop_; }  // UINT64_MAX before the first sample
  int64_t first_due() const { return first_due_; }

 private:
  const double inv_rate_;
  int64_t loop_base_ = 0, loop_origin_ = 0, last_due_ = 0, first_due_ = 0;
  uint64_t cur_loop_ = UINT64_MAX;
  uint64_t first_loop_samples_ = 0;
  int64_t first_loop_first_ = 0, first_loop_last_ = 0;
};

// ---- progress line ------------------------------------------------------------------------------

// The progress line on `err` every progress_interval (pacing thread): position in the loop, the
// samples published, samples/s and late p99 since the last line, the loop; first the problems the
// ReadAhead queued. With progress_tty the line is rewritten in place (\r).
class Progress {
 public:
  Progress(const PlayOptions& o, std::ostream& err, ReadAhead& reader, const PlayReport& rep,
           const LoopClock& clock, int64_t total_span)
      : o_(o),
        err_(err),
        reader_(reader),
        rep_(rep),
        clock_(clock),
        total_span_(total_span),
        next_(mono_ns() + o.progress_interval.count()),
        window_start_(mono_ns()) {}

  // When the next line is due.
  int64_t next() const { return next_; }
  // Prints the line when it is due.
  void tick(int64_t now) {
    if (now >= next_) {
      print(now);
      next_ = now + o_.progress_interval.count();
    }
  }
  void late(int64_t ns) { window_late_.record(ns); }
  // A sample went out at `position_ns` (reception offset in its loop).
  void published(int64_t position_ns) {
    window_samples_++;
    position_ns_ = position_ns;
  }
  // Before a warning: ends the line being rewritten in place.
  void end_line() {
    if (printed_ && o_.progress_tty) err_ << '\n';
  }
  // A line of its own now (a warning, or news such as a reader that came back).
  void say(const std::string& line, bool warning) {
    end_line();
    if (warning) {
      warn(err_, line);
    } else {
      err_ << "pubsub-replay: " << line << '\n';
    }
    err_.flush();
  }
  // Where the play is: the reception offset of the last sample written, in its loop, in s.
  double position_s() const { return static_cast<double>(position_ns_) / 1e9; }

 private:
  void print(int64_t now) {
    for (const auto& p : reader_.take_problems()) {
      end_line();
      warn(err_, p);
    }
    if (!o_.progress) return;
    char line[256];
    const double secs = static_cast<double>(now - window_start_) / 1e9;
    int n = std::snprintf(line, sizeof line, "%.1f/%.1f s  %llu samples  %.0f samples/s",
                          static_cast<double>(position_ns_) / 1e9,
                          static_cast<double>(total_span_) / 1e9,
                          static_cast<unsigned long long>(rep_.samples),
                          secs > 0 ? static_cast<double>(window_samples_) / secs : 0.0);
    if (!o_.fast && window_late_.count()) {
      n += std::snprintf(line + n, sizeof line - static_cast<size_t>(n), "  late p99 %s",
                         us(window_late_.percentile(0.99)).c_str());
    }
    if (o_.loops != 1) {
      const uint64_t loop = clock_.current_loop();
      std::snprintf(line + n, sizeof line - static_cast<size_t>(n), "  loop %llu%s",
                    static_cast<unsigned long long>(loop == UINT64_MAX ? 1 : loop + 1),
                    o_.loops ? ("/" + std::to_string(o_.loops)).c_str() : "");
    }
    if (o_.progress_tty) {
      err_ << "\r" << line << "\033[K";
    } else {
      err_ << "pubsub-replay: " << line << '\n';
    }
    err_.flush();
    printed_ = true;
    window_late_.reset();
    window_samples_ = 0;
    window_start_ = now;
  }

  const PlayOptions& o_;
  std::ostream& err_;
  ReadAhead& reader_;
  const PlayReport& rep_;
  const LoopClock& clock_;
  const int64_t total_span_;  // reception span of the selection
  int64_t next_;
  int64_t window_start_;
  uint64_t window_samples_ = 0;
  detail::Histogram window_late_;
  int64_t position_ns_ = 0;  // reception offset of the last sample written, in its loop
  bool printed_ = false;
};

// ---- publishing ---------------------------------------------------------------------------------

struct ReplayWriter {
  std::unique_ptr<pubsub::Writer> writer;
  PlayedWriter info;
  RecordedQos qos;             // as offered (recorded, then --qos)
  bool now_timestamp = false;  // a finite lifespan: source timestamps are the replayed times
  // Keyed topics with a recorded type: key hashes for the samples recorded without one
  // (instance_key()).
  std::optional<types::KeyHasher> hasher;
  bool warned = false;
  bool dirty = false;                 // written since the last flush
  std::vector<pubsub::Guid> readers;  // matched when last looked (note_readers)
  std::set<pubsub::Guid> seen;        // every reader ever matched
};

// The shortest finite lease of the writers that will replay with AUTOMATIC liveliness (infinite
// when none).
pubsub::Duration shortest_automatic_lease(const Source& src,
                                          const detail::QosOverrides& overrides) {
  pubsub::Duration shortest = pubsub::kInfinite;
  for (const storage::WriterInfo& w : src.writers) {
    const storage::TopicInfo& t = src.sel.topics[src.sel.topic_index.at(w.def.topic)];
    const RecordedQos q = detail::apply_overrides(
        overrides, t.def.name, detail::recorded_writer_qos(w, t.def).value_or(RecordedQos{}));
    if (q.policies.liveliness.kind == pubsub::LivelinessKind::kAutomatic) {
      shortest = std::min(shortest, q.policies.liveliness.lease_duration);
    }
  }
  return shortest;
}

// Batching: samples recorded together (a burst, one datagram of the original writer) go out
// packed together; before the pacing thread sleeps it flushes, so a sample that is due alone is
// sent at once.
pubsub::WriterQos batched_writer_qos(const RecordedQos& qos) {
  pubsub::WriterQos wq = replay_writer_qos(qos);
  wq.batching.enabled = true;
  wq.batching.max_bytes = 65000;  // the most allowed; the transport's datagram size caps it
  wq.batching.max_samples = 4096;
  wq.batching.max_flush_delay = std::chrono::milliseconds(1);
  return wq;
}

// One participant and one writer per played recorded writer, and which of them hold a partial
// batch (calling thread).
class Publisher {
 public:
  // Joins the domain and creates the writers of `src`.
  std::optional<Error> open(const PlayOptions& o, const Source& src,
                            const detail::QosOverrides& overrides,
                            const std::map<std::string, std::string>& remap, std::ostream& err) {
    pubsub::ParticipantOptions po = o.participant;
    if (po.user_data.empty()) po.user_data = "pubsub-replay";
    // Readers renew an AUTOMATIC writer's liveliness from its participant's announcements: make
    // them come at least twice per the shortest such lease, or the writers would lapse between
    // announcements (every 3 s) when their lease is shorter.
    if (const auto lease = shortest_automatic_lease(src, overrides);
        lease < po.announce_period * 2) {
      po.announce_period = std::max<pubsub::Duration>(lease / 2, std::chrono::milliseconds(50));
    }
    auto participant = pubsub::Participant::create(po);
    if (!participant) {
      return participant.error().with_context("cannot join domain " + std::to_string(po.domain_id));
    }
    participant_ = std::move(participant).value();
    serve_recorded_types(src.sel.recorded_types);
    std::vector<std::string> missing, warnings;  // topics without a type simply get no hasher
    if (auto d = detail::SampleDecoder::create({}, src.sel, missing, warnings, false)) {
      decoder_ = std::move(*d);
    }
    serve_described_types(src.sel.topics);
    for (const storage::WriterInfo& w : src.writers) {
      const storage::TopicInfo& t = src.sel.topics[src.sel.topic_index.at(w.def.topic)];
      if (auto e = add_writer(w, t, overrides, remap, err)) return e;
    }
    return std::nullopt;
  }

  std::vector<ReplayWriter>& writers() { return writers_; }
  // The writer replaying recorded writer `id`: its slot, -1 when it is not played.
  int slot_of(storage::WriterId id) const { return id < slots_.size() ? slots_[id] : -1; }
  ReplayWriter& at(size_t slot) { return writers_[slot]; }
  // A sample went out on `slot`: flush it before the next sleep.
  void mark_dirty(size_t slot) {
    if (!writers_[slot].dirty) {
      writers_[slot].dirty = true;
      dirty_.push_back(slot);
    }
  }
  bool has_dirty() const { return !dirty_.empty(); }
  void flush_dirty() {
    for (size_t i : dirty_) {
      writers_[i].writer->flush();
      writers_[i].dirty = false;
    }
    dirty_.clear();
  }
  // At most every 100 ms: the most readers each writer has had matched at once, and the readers
  // that went away (deleted, or their participant's lease expired: a host gone from the network)
  // or came back since the last look, each said on a line of its own.
  void note_readers(int64_t now, Progress& progress) {
    if (now < next_note_ns_) return;
    next_note_ns_ = now + 100'000'000;
    for (auto& w : writers_) {
      std::vector<pubsub::Guid> now_matched = w.writer->matched_reader_guids();
      std::sort(now_matched.begin(), now_matched.end());
      w.info.peak_readers = std::max(w.info.peak_readers, now_matched.size());
      if (now_matched != w.readers) report_reader_changes(w, now_matched, progress);
      w.readers = std::move(now_matched);
    }
  }

  // The writers, as the report shows them.
  void report_to(PlayReport& rep) const {
    rep.writers.clear();
    for (const auto& w : writers_) rep.writers.push_back(w.info);
  }

 private:
  int64_t next_note_ns_ = 0;
  // Says which of `w`'s readers went away and which came back (both sorted).
  static void report_reader_changes(ReplayWriter& w, const std::vector<pubsub::Guid>& now_matched,
                                    Progress& progress) {
    char at[64];
    std::snprintf(at, sizeof at, " at %.1f s of the recording", progress.position_s());
    const std::string of = " of topic " + w.info.topic;
    for (const pubsub::Guid& g : w.readers) {
      if (std::binary_search(now_matched.begin(), now_matched.end(), g)) continue;
      w.info.readers_gone++;
      progress.say("reader " + g.to_string() + of + " went away" + at +
                       " (deleted, or its participant's lease expired); it misses what is "
                       "published until it is matched again",
                   true);
    }
    for (const pubsub::Guid& g : now_matched) {
      if (std::binary_search(w.readers.begin(), w.readers.end(), g)) continue;
      if (!w.seen.insert(g).second) {
        w.info.readers_back++;
        progress.say("reader " + g.to_string() + of + " matched again" + at, false);
      }
    }
  }
  // The TypeObjects the recorder looked up, handed out again by this participant's TypeLookup
  // service: the replayed writers announce the recorded TypeInformation, so a reader that asks
  // for the types (Cyclone DDS does when it does not know them) gets them from us.
  void serve_recorded_types(const std::vector<storage::TypeDef>& recorded) {
    std::vector<pubsub::TypeObjectEntry> entries;
    for (const storage::TypeDef& t : recorded) {
      if (t.source != storage::TypeSource::kLookup || t.type_object.empty()) continue;
      auto set = types::parse_get_types_out(std::span<const uint8_t>(
          reinterpret_cast<const uint8_t*>(t.type_object.data()), t.type_object.size()));
      if (!set) continue;  // as stored; the recorder only stores replies that decoded
      for (const auto& pair : set->pairs)
        entries.push_back(
            {types::hashed_type_id(pair.equivalence_kind, pair.hash), pair.type_object});
    }
    if (!entries.empty()) participant_->add_type_objects(entries);
  }

  // Topics whose TypeInformation was made from their stored IDL (an imported MCAP file's
  // schemas) have no looked-up TypeObjects: this participant's TypeLookup service answers with
  // the ones encoded from that IDL - the TypeInformation's own source, so the hashes agree.
  void serve_described_types(const std::vector<storage::TopicInfo>& topics) {
    std::vector<pubsub::TypeObjectEntry> entries;
    for (const storage::TopicInfo& t : topics) {
      const auto* tt = t.def.type_info.empty() ? nullptr : decoder_.type_of(t.id);
      if (!tt || std::string_view(tt->source) != "idl") continue;
      auto enc = types::encode_type_objects(*tt->lib, tt->id);
      if (!enc) continue;
      for (auto& pair : enc->pairs())
        entries.push_back(
            {types::hashed_type_id(pair.equivalence_kind, pair.hash), std::move(pair.type_object)});
    }
    if (!entries.empty()) participant_->add_type_objects(entries);
  }

  // One replay writer for recorded writer `w`: its recorded QoS (its own, else its topic's),
  // the overrides, the remapped name.
  std::optional<Error> add_writer(const storage::WriterInfo& w, const storage::TopicInfo& t,
                                  const detail::QosOverrides& overrides,
                                  const std::map<std::string, std::string>& remap,
                                  std::ostream& err) {
    auto recorded = detail::recorded_writer_qos(w, t.def);
    if (!recorded) {
      warn(err, "topic " + t.def.name + ": recorded QoS unreadable (" + recorded.error().message +
                    "); replaying it reliable with default QoS");
    }
    RecordedQos qos = std::move(recorded).value_or(RecordedQos{});
    qos = detail::apply_overrides(overrides, t.def.name, std::move(qos));
    storage::TopicDef def = t.def;
    if (auto r = remap.find(t.def.name); r != remap.end()) def.name = r->second;
    const pubsub::WriterQos wq = batched_writer_qos(qos);
    auto created = participant_->create_writer(replay_topic(def, qos), wq);
    if (!created) {
      return created.error().with_context("cannot create a writer on topic " + def.name +
                                          " (type " + def.type_name + ")");
    }
    ReplayWriter rw;
    rw.writer = std::move(created).value();
    if (const auto* tt = t.def.keyed ? decoder_.type_of(t.id) : nullptr) {
      if (auto h = types::KeyHasher::create(*tt->lib, tt->id)) rw.hasher = std::move(*h);
    }
    rw.qos = qos;
    rw.now_timestamp = qos.policies.lifespan != pubsub::kInfinite;
    rw.info.topic = def.name;
    rw.info.recorded_id = w.id;
    rw.info.recorded_guid = w.def.guid;
    rw.info.replay_guid = rw.writer->guid();
    rw.info.reliable = qos.reliability == pubsub::ReliabilityKind::kReliable;
    if (slots_.size() <= w.id) slots_.resize(w.id + 1, -1);
    slots_[w.id] = static_cast<int>(writers_.size());
    writers_.push_back(std::move(rw));
    return std::nullopt;
  }

  detail::SampleDecoder decoder_;  // the recorded types (KeyHasher points into them)
  std::unique_ptr<pubsub::Participant> participant_;
  std::vector<ReplayWriter> writers_;
  std::vector<int> slots_;     // storage WriterId -> index in writers_, -1 when not played
  std::vector<size_t> dirty_;  // writers with a partial batch
};

// "A (0 matched), B (1 matched)": the topics of the writers not ready, with their fewest matched
// readers.
std::string unready_topics(const std::vector<ReplayWriter>& writers,
                           const std::vector<bool>& ready) {
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
  return list;
}

// With wait_readers: waits until every writer has that many matched readers that acknowledged
// it. An exit code when play() ends here (stopped, or not enough readers in time).
std::optional<int> wait_for_readers(std::vector<ReplayWriter>& writers, const PlayOptions& o,
                                    std::ostream& err, PlayReport& rep) {
  if (o.wait_readers == 0) return std::nullopt;
  const int64_t deadline = mono_ns() + o.wait_timeout.count();
  std::vector<bool> ready(writers.size(), false);
  for (;;) {
    size_t missing = 0;
    for (size_t i = 0; i < writers.size(); ++i) {
      if (!ready[i]) ready[i] = writers[i].writer->wait_for_readers(o.wait_readers, {});
      missing += !ready[i];
    }
    if (missing == 0) return std::nullopt;
    if (stopped(o)) {
      rep.interrupted = true;
      err << "pubsub-replay: interrupted while waiting for readers; nothing was published\n";
      return kExitOk;
    }
    if (mono_ns() >= deadline) {
      return report(err, kExitProblems,
                    "no readers: after " + seconds(o.wait_timeout) +
                        " s these topics still have fewer than " + std::to_string(o.wait_readers) +
                        " acknowledged reader(s): " + unready_topics(writers, ready));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

// Publishes one recorded sample as recorded: payload, key hash, source timestamp (else the
// reception time), dispose/unregister status. Reliable readers that have not acknowledged enough
// block the write: it is retried (they may be slow), printing progress meanwhile, until the stop
// flag is set or block_timeout has passed.
// The key hash of a recorded sample: as recorded, else computed from the recorded type - for a
// dispose or unregister (Fast DDS readers take the instance from the key hash only) and for every
// sample of a durable writer (its history keeps the last samples of each instance). Others go
// without, as recorded: readers find the key in the payload.
std::optional<storage::KeyHash> instance_key(const ReplayWriter& w, const storage::RecordMeta& m,
                                             storage::ByteSpan payload) {
  if (m.has_key_hash) return m.key_hash;
  const bool durable = w.qos.durability >= pubsub::DurabilityKind::kTransientLocal;
  const bool instance_change = (m.flags & (kFlagDisposed | kFlagUnregistered)) != 0;
  if (!w.hasher || !(durable || instance_change) || payload.empty()) return std::nullopt;
  const std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(payload.data()),
                                       payload.size());
  auto k = (m.flags & kFlagKeyOnly) ? w.hasher->of_key_payload(bytes) : w.hasher->of_sample(bytes);
  if (!k) return std::nullopt;
  return *k;
}

// `blocked()` runs while a write waits (the progress line).
template <class OnBlocked>
Result<void> write_sample(ReplayWriter& w, const storage::RecordMeta& m, storage::ByteSpan payload,
                          const PlayOptions& o, OnBlocked&& blocked) {
  pubsub::Writer& writer = *w.writer;
  const bool now_timestamp = w.now_timestamp;
  pubsub::WriteOptions wo;
  pubsub::KeyHash kh;
  if (const auto key = instance_key(w, m, payload)) {
    kh.value = *key;
    wo.key_hash = &kh;
    // A dispose or unregister whose key hash is the key itself (not an MD5) goes as the key
    // hash alone, as Fast DDS sends them: every vendor's reader takes that.
    if ((m.flags & (kFlagDisposed | kFlagUnregistered)) && (m.flags & kFlagKeyOnly) && w.hasher &&
        w.hasher->key_fits_hash()) {
      payload = {};
    }
  }
  // A writer with a finite lifespan stamps the replayed time: readers expire a sample its
  // lifespan after its source timestamp, and a recorded one would have expired long ago.
  if (!now_timestamp) {
    wo.timestamp = pubsub::Time{(m.flags & kFlagHasSourceTimestamp) ? m.source_ns : m.reception_ns};
  }
  wo.status_info =
      ((m.flags & kFlagDisposed) ? 1u : 0u) | ((m.flags & kFlagUnregistered) ? 2u : 0u);
  const int64_t write_start = mono_ns();
  auto res = writer.write_serialized(pubsub::Bytes(payload.data(), payload.size()), wo);
  while (!res && res.error().code == Errc::kTimeout) {
    if (stopped(o)) break;
    if (mono_ns() - write_start > o.block_timeout.count()) break;
    blocked();
    res = writer.write_serialized(pubsub::Bytes(payload.data(), payload.size()), wo);
  }
  return res;
}

// What became of one sample handed to a writer.
enum class Sent { kOk, kSkipped, kStopped, kFailed };

// write_sample, and what its result means for the run: a sample the writer cannot take is
// skipped (the first one of each writer with a warning); a write blocked when the stop flag is
// set stops the run; anything else fails it, with `failure` saying why. While the write is
// blocked, progress lines go on and readers that go away are said.
Sent publish_sample(Publisher& pub, ReplayWriter& w, const storage::RecordMeta& m,
                    storage::ByteSpan payload, const PlayOptions& o, std::ostream& err,
                    Progress& progress, Error& failure) {
  const auto res = write_sample(w, m, payload, o, [&progress, &pub] {
    const int64_t now = mono_ns();
    progress.tick(now);
    pub.note_readers(now, progress);
  });
  if (res) return Sent::kOk;
  const Error& e = res.error();
  if (e.code == Errc::kTimeout && stopped(o)) return Sent::kStopped;
  if (e.code == Errc::kInvalidArgument || e.code == Errc::kResourceLimit) {
    // This one sample cannot be published (e.g. larger than the writer's history); the rest can.
    if (!w.warned) {
      progress.end_line();
      warn(err, "topic " + w.info.topic + ": sample seq " + std::to_string(m.sequence) +
                    " not published: " + e.message + " (further ones not reported)");
      w.warned = true;
    }
    return Sent::kSkipped;
  }
  failure = Error{
      e.code, "publishing on topic " + w.info.topic + " failed: " + e.message +
                  (e.code == Errc::kTimeout
                       ? " (readers stopped acknowledging for " +
                             std::to_string(
                                 std::chrono::duration_cast<std::chrono::seconds>(o.block_timeout)
                                     .count()) +
                             " s)"
                       : "")};
  return Sent::kFailed;
}

// At the end: everything out, and acknowledged by the reliable readers within ack_timeout
// (2 s at most when interrupted); warns about the writers whose readers did not.
void await_acknowledgments(std::vector<ReplayWriter>& writers, const PlayOptions& o,
                           std::ostream& err, PlayReport& rep) {
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
    w.info.peak_readers = std::max(w.info.peak_readers, w.info.matched_readers);
    if (!acked) {
      warn(err, "topic " + w.info.topic + ": not every reader acknowledged everything within " +
                    seconds(ack_budget) + " s (" + std::to_string(w.info.matched_readers) +
                    " matched)");
    }
  }
}

// ---- pacing -------------------------------------------------------------------------------------

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

// Waits for due times on the pacing thread: sleeps until `spin` before, then spins. Lowers the
// thread's timer slack and, with realtime_priority, runs it SCHED_FIFO while it exists.
// Lets each sample out when it is due (pacing thread): sleeps until `spin` before, then spins,
// and measures how late it went out. Lowers the thread's timer slack and, with
// realtime_priority, runs it SCHED_FIFO for as long as it exists.
class Pacer {
 public:
  // Under SCHED_FIFO wake-ups are prompt, and a thread that never sleeps would run into the
  // kernel's real-time throttling (stalls of ~50 ms): keep the spin window at its minimum.
  Pacer(const PlayOptions& o, std::ostream& err)
      : o_(o),
        realtime_(o.realtime_priority, err),
        spin_min_(o.spin_min.count()),
        spin_max_(realtime_.active() ? spin_min_
                                     : std::max<int64_t>(o.spin_max.count(), spin_min_)),
        spin_ns_(spin_min_) {}

  // Waits until `m` is due (not at all with --fast), flushing partial batches before it sleeps.
  // False when stopped.
  bool release(const storage::RecordMeta& m, LoopClock& clock, Publisher& pub, Progress& progress) {
    if (o_.fast) {
      if (stopped(o_)) return false;
      const int64_t now = mono_ns();
      progress.tick(now);
      pub.note_readers(now, progress);
      clock.went_out(now);
      return true;
    }
    const int64_t due = clock.due(m.reception_ns);
    if (pub.has_dirty() && mono_ns() < due) pub.flush_dirty();
    if (!wait_until(due, progress, pub)) return false;
    const int64_t now = mono_ns();
    pub.note_readers(now, progress);
    const int64_t late = now - due;
    total_late_.record(late);
    progress.late(late);
    clock.went_out(due);
    return true;
  }
  // How late the samples went out (paced runs only).
  LatenessStats lateness() const {
    return {total_late_.count(), total_late_.percentile(0.5), total_late_.percentile(0.99),
            total_late_.max()};
  }

 private:
  // Sleeps until `due` (monotonic), printing progress and watching the readers on the way. False
  // when stopped.
  bool wait_until(int64_t due, Progress& progress, Publisher& pub) {
    for (;;) {
      int64_t now = mono_ns();
      progress.tick(now);
      pub.note_readers(now, progress);
      if (stopped(o_)) return false;
      if (now >= due) return true;
      const int64_t remaining = due - now;
      if (remaining > spin_ns_) {
        int64_t target = due - spin_ns_;
        target = std::min({target, now + 50'000'000, progress.next()});
        sleep_until_mono(target);
        // Follow the wake-up latency: move a quarter of the way up towards a late wake-up
        // (plus a quarter of margin), relax by 1/64 towards earlier ones; a lone long stall
        // (preemption) moves it little and is forgotten within a few hundred sleeps.
        const int64_t over = mono_ns() - target;
        if (over > 0) {
          const int64_t want = over + over / 4;
          spin_ns_ += want > spin_ns_ ? (want - spin_ns_) / 4 : -((spin_ns_ - want) / 64);
          spin_ns_ = std::clamp(spin_ns_, spin_min_, spin_max_);
        }
      } else {
        while (mono_ns() < due) cpu_relax();
        return !stopped(o_);
      }
    }
  }

  const PlayOptions& o_;
  TimerSlack slack_;
  RealtimeScope realtime_;
  const int64_t spin_min_;
  const int64_t spin_max_;
  int64_t spin_ns_;
  detail::Histogram total_late_;
};

// ---- summary ------------------------------------------------------------------------------------

// "pubsub-replay: played N samples (B bytes) on T topics from W writers in S s (recorded R s,
// rate X, L loops); late p50 .., p99 .., max .."
// After the run: the topics no reader matched while they were played, warned; exit 1 ("no
// readers", as documented) when that is every topic - nothing was delivered.
std::optional<int> unread_topics(const PlayReport& rep, std::ostream& err) {
  std::set<std::string> all, read;
  for (const auto& w : rep.writers) {
    all.insert(w.topic);
    if (w.peak_readers > 0) read.insert(w.topic);
  }
  if (rep.interrupted || rep.samples == 0 || read.size() == all.size()) return std::nullopt;
  if (read.empty()) {
    return report(err, kExitProblems,
                  "no readers: no reader matched any of the " +
                      detail::plural(all.size(), "topic") +
                      " played, so nothing was delivered (start the readers first, or give "
                      "--wait-readers N)");
  }
  std::string list;
  for (const auto& t : all) {
    if (!read.count(t)) list += (list.empty() ? "" : ", ") + t;
  }
  warn(err, "no reader matched these topics while they were played: " + list);
  return std::nullopt;
}

void print_summary(const PlayOptions& o, const PlayReport& rep, std::ostream& err) {
  char line[512];
  std::set<std::string> topic_names;
  for (const auto& w : rep.writers) topic_names.insert(w.topic);
  const size_t writers = rep.writers.size();
  int n = std::snprintf(
      line, sizeof line,
      "pubsub-replay: %s %llu samples (%llu bytes) on %zu topic%s from %zu writer%s in %.3f s "
      "(recorded %.3f s",
      rep.interrupted ? "interrupted after" : "played",
      static_cast<unsigned long long>(rep.samples), static_cast<unsigned long long>(rep.bytes),
      topic_names.size(), topic_names.size() == 1 ? "" : "s", writers, writers == 1 ? "" : "s",
      rep.publish_seconds, rep.recorded_seconds);
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
    n += std::snprintf(line + n, sizeof line - static_cast<size_t>(n),
                       "; late p50 %s, p99 %s, max %s", us(rep.lateness.p50_ns).c_str(),
                       us(rep.lateness.p99_ns).c_str(), us(rep.lateness.max_ns).c_str());
  }
  uint64_t gone = 0, back = 0;
  for (const auto& w : rep.writers) gone += w.readers_gone, back += w.readers_back;
  if (gone) {
    std::snprintf(line + n, sizeof line - static_cast<size_t>(n),
                  "; %llu reader%s went away while playing (%llu matched again)",
                  static_cast<unsigned long long>(gone), gone == 1 ? "" : "s",
                  static_cast<unsigned long long>(back));
  }
  err << line << '\n';
  err.flush();
}

// ---- the run ------------------------------------------------------------------------------------

// The pacing thread's work: takes the ReadAhead's batches, places each sample in its loop, lets
// it out when it is due and publishes it.
class Run {
 public:
  Run(const PlayOptions& o, std::ostream& err, PlayReport& rep, Publisher& pub, ReadAhead& reader,
      int64_t total_span)
      : o_(o),
        err_(err),
        rep_(rep),
        pub_(pub),
        reader_(reader),
        pacer_(o, err),
        clock_(o.rate),
        progress_(o, err, reader, rep, clock_, total_span) {}

  // Every sample of every batch until the ReadAhead has no more, the stop flag is set or
  // publishing fails.
  RunEnd run() {
    Batch batch;
    while (reader_.pop(batch)) {
      for (size_t i = 0; i < batch.metas.size(); ++i) {
        const storage::RecordMeta& m = batch.metas[i];
        clock_.on_sample(batch.loop, m.reception_ns, rep_.loops);
        const int slot = pub_.slot_of(m.writer);
        if (slot < 0) continue;  // not selected (cannot happen with the query's topic filter)
        if (!pacer_.release(m, clock_, pub_, progress_)) return RunEnd::kStopped;
        switch (publish(static_cast<size_t>(slot), m, batch.payload(i))) {
          case Sent::kOk:
          case Sent::kSkipped:
            break;
          case Sent::kStopped:
            return RunEnd::kStopped;
          case Sent::kFailed:
            return RunEnd::kFailed;
        }
      }
    }
    return RunEnd::kDone;
  }

  // After run(): stops the ReadAhead, prints what it still has to say and fills in the report's
  // loops, problems, publishing time and lateness. Returns the ReadAhead's error, if any.
  std::string finish(RunEnd end) {
    reader_.cancel();
    std::string read_error = reader_.error();
    if (end == RunEnd::kStopped) {
      rep_.interrupted = true;
    } else if (end == RunEnd::kDone && read_error.empty() && clock_.started()) {
      rep_.loops++;
    }
    progress_.end_line();
    for (const auto& p : reader_.take_problems()) warn(err_, p);
    rep_.problems = reader_.problem_count();
    if (last_write_done_) {
      rep_.publish_seconds = static_cast<double>(last_write_done_ - clock_.first_due()) / 1e9;
    }
    rep_.lateness = pacer_.lateness();
    return read_error;
  }

  // Why run() returned kFailed.
  const Error& failure() const { return failure_; }

 private:
  Sent publish(size_t slot, const storage::RecordMeta& m, storage::ByteSpan payload) {
    ReplayWriter& w = pub_.at(slot);
    const Sent sent = publish_sample(pub_, w, m, payload, o_, err_, progress_, failure_);
    if (sent != Sent::kOk) return sent;
    last_write_done_ = mono_ns();
    pub_.mark_dirty(slot);
    w.info.samples++;
    rep_.samples++;
    rep_.bytes += payload.size();
    progress_.published(clock_.position(m.reception_ns));
    return Sent::kOk;
  }

  const PlayOptions& o_;
  std::ostream& err_;
  PlayReport& rep_;
  Publisher& pub_;
  ReadAhead& reader_;
  Pacer pacer_;
  LoopClock clock_;
  Progress progress_;
  Error failure_;
  int64_t last_write_done_ = 0;  // when the last write returned
};

// --remap OLD=NEW needs OLD among the selected topics.
std::optional<Error> check_remaps(const std::map<std::string, std::string>& remap,
                                  const detail::ResolvedSelection& sel) {
  for (const auto& [from, to] : remap) {
    bool found = false;
    for (const auto& t : sel.topics) found = found || t.def.name == from;
    if (!found) {
      std::string names;
      for (const auto& t : sel.topics) names += (names.empty() ? "" : ", ") + t.def.name;
      return Error{Errc::kInvalidArgument, "--remap " + from + "=" + to + ": no topic " + from +
                                               " is played (" + names + ")"};
    }
  }
  return std::nullopt;
}

// With a start time: the latched state (replay_qos.hpp), published at once, in reception order,
// before readers are waited for - so it reaches the durable readers that join, as the
// original's history would have, and not the volatile ones. The number published, or an error.
Result<size_t> publish_latched(const PlayOptions& o, Source& src, Publisher& pub, std::ostream& err,
                               PlayReport& rep) {
  if (!o.latched || src.sel.query.start_ns <= src.sel.recording_first_ns) return size_t{0};
  std::map<storage::WriterId, pubsub::HistoryQos> durable;
  std::vector<storage::TopicId> topics;
  for (const auto& w : src.writers) {
    const int slot = pub.slot_of(w.id);
    if (slot < 0) continue;
    const RecordedQos& q = pub.at(static_cast<size_t>(slot)).qos;
    if (q.durability < pubsub::DurabilityKind::kTransientLocal) continue;
    durable[w.id] = q.history;
    topics.push_back(w.def.topic);
  }
  if (durable.empty()) return size_t{0};
  auto key_of = [&pub](const storage::RecordView& r) {
    const ReplayWriter& w = pub.at(static_cast<size_t>(pub.slot_of(r.meta.writer)));
    return instance_key(w, r.meta, r.payload);
  };
  auto samples = detail::latched_samples(*src.rec, durable, topics, src.sel.query.start_ns, key_of);
  if (!samples) return samples.error();
  for (const auto& s : *samples) {
    ReplayWriter& w = pub.at(static_cast<size_t>(pub.slot_of(s.writer)));
    auto res = write_sample(w, s.meta, s.payload, o, [] {});
    if (!res) {
      if (res.error().code == Errc::kInvalidArgument || res.error().code == Errc::kResourceLimit)
        continue;  // the paced run reports such a sample
      return res.error().with_context("publishing the latched state on topic " + w.info.topic +
                                      " failed");
    }
    w.info.samples++;
    rep.latched_samples++;
    rep.samples++;
    rep.bytes += s.payload.size();
  }
  for (auto& w : pub.writers()) w.writer->flush();
  (void)err;
  return samples->size();
}

}  // namespace

int play(const PlayOptions& o, std::ostream& err, PlayReport* report_out) {
  PlayReport local_report;
  PlayReport& rep = report_out ? *report_out : local_report;
  rep = PlayReport{};
  if (!(o.rate > 0) || !std::isfinite(o.rate)) {
    return report(err, kExitUsage, "--rate must be a positive number");
  }

  // Selection. `problems` and `reader` come first: the ReadAhead's thread reports into
  // `problems` and is joined when `reader` is destroyed, after the writers.
  ProblemSink problems;
  std::unique_ptr<ReadAhead> reader;
  detail::QosOverrides overrides;
  if (!o.qos_file.empty()) {
    auto loaded = detail::load_qos_overrides(o.qos_file);
    if (!loaded) return report(err, kExitUsage, loaded.error());
    overrides = std::move(*loaded);
  }
  auto remap = detail::parse_remaps(o.remap);
  if (!remap) return report(err, kExitUsage, remap.error());
  auto src = select_source(o, overrides, problems, err);
  if (!src) return report(err, kExitUsage, src.error());
  if (auto e = check_remaps(*remap, src->sel)) return report(err, kExitUsage, *e);
  rep.recorded_seconds = static_cast<double>(src->sel.last_ns - src->sel.first_ns) / 1e9;
  if (src->writers.empty()) {
    err << "pubsub-replay: nothing to play: the selection holds no samples\n";
    return kExitOk;
  }

  // Writers, and readers first when asked: all before the first sample is due.
  Publisher pub;
  if (auto e = pub.open(o, *src, overrides, *remap, err)) {
    // No such interface or a bad option is the command line's fault; anything else a failure.
    const bool usage = e->code == Errc::kNotFound || e->code == Errc::kInvalidArgument;
    return report(err, usage ? kExitUsage : kExitProblems, *e);
  }
  if (auto latched = publish_latched(o, *src, pub, err, rep); !latched) {
    return report(err, kExitProblems, latched.error());
  } else if (*latched > 0) {
    err << "pubsub-replay: published the latched state at the start: " << *latched
        << " samples of durable writers before it\n";
  }
  pub.report_to(rep);
  if (auto code = wait_for_readers(pub.writers(), o, err, rep)) return *code;

  // Publishing: the ReadAhead reads on its thread, this thread paces and publishes.
  reader =
      std::make_unique<ReadAhead>(std::move(src->rec), src->sel.query, o.loops, o.queue_max_bytes);
  problems.attach(reader.get());
  reader->start();
  Run run(o, err, rep, pub, *reader, src->sel.last_ns - src->sel.first_ns);
  const RunEnd end = run.run();
  const std::string read_error = run.finish(end);
  await_acknowledgments(pub.writers(), o, err, rep);
  pub.report_to(rep);

  print_summary(o, rep, err);
  if (end == RunEnd::kFailed) return report(err, kExitProblems, run.failure());
  if (auto no_readers = unread_topics(rep, err)) return *no_readers;
  if (!read_error.empty()) return report(err, kExitProblems, read_error);
  if (rep.problems || !problems.open_problems().empty()) {
    return report(err, kExitProblems,
                  "damaged chunks were skipped; not everything was played "
                  "(see 'pubsub-replay verify " +
                      o.dir + "')");
  }
  return kExitOk;
}

}  // namespace service::replay
