#include "snapshot_sink.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>

#include "common/thread_name.hpp"
#include "service/recording_schema.hpp"
#include "text.hpp"

namespace service {
namespace {

// A window's end is this far past before its snapshot is finished: samples received just before
// it are still on their way into the ring.
constexpr int64_t kFinishGraceNs = 200'000'000;
constexpr auto kPollPeriod = std::chrono::milliseconds(20);
// Latched records kept per instance of a KEEP_ALL durable writer.
constexpr size_t kLatchedKeepAll = 1024;

// "snapshot-20261126-231953.123" (UTC)
std::string directory_name(int64_t ns, const std::string& tag) {
  return utc_millis(ns, "snapshot-%Y%m%d-%H%M%S") + (tag.empty() ? "" : "-" + tag);
}

bool valid_tag(const std::string& tag) {
  if (tag.size() > 64) return false;
  return std::all_of(tag.begin(), tag.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
  });
}

}  // namespace

struct SnapshotSink::Job {
  std::filesystem::path path;
  std::unique_ptr<storage::SegmentWriter> w;
  int64_t trigger_ns = 0;
  int64_t from_ns = 0;
  // The ring's chunks of the window at the trigger, held here (the ring may drop them any time).
  std::vector<std::shared_ptr<const storage::SnapshotChunk>> held;
  uint64_t next_chunk = 0;  // the ring's next chunk to copy, sealed after the trigger
  size_t topics = 0, writers = 0, types = 0;  // definitions written so far
  uint64_t samples = 0, bytes = 0, missed_chunks = 0;
  int64_t first_ns = 0, last_ns = 0;  // of the records written
  bool failed = false;
  // The latched state older than the window, written first; then, per writer, the last
  // sequence number written, so the jump to its first record of the window is a skip, not loss.
  std::vector<Latched> latched;
  std::map<storage::WriterId, int64_t> latched_seq;
  uint64_t latched_samples = 0;
};

SnapshotSink::SnapshotSink(SnapshotSinkOptions options, std::shared_ptr<spdlog::logger> log)
    : opt_(std::move(options)), log_(std::move(log)), ring_([&] {
        storage::SnapshotRingOptions r;
        r.keep = opt_.before;
        r.max_bytes = opt_.max_bytes;
        r.chunk_max_bytes = static_cast<uint32_t>(std::min<uint64_t>(1u << 20, opt_.max_bytes / 8));
        r.chunk_max_age = opt_.chunk_max_age;
        r.lz4_acceleration = opt_.writer.lz4_acceleration;
        return r;
      }()) {}

Result<std::unique_ptr<SnapshotSink>> SnapshotSink::create(SnapshotSinkOptions options,
                                                           std::shared_ptr<spdlog::logger> log) {
  std::error_code ec;
  std::filesystem::create_directories(options.dir, ec);
  if (ec) return Error{Errc::kIo, "cannot create " + options.dir.string() + ": " + ec.message()};
  std::unique_ptr<SnapshotSink> s(new SnapshotSink(std::move(options), std::move(log)));
  s->thread_ = std::thread([p = s.get()] { p->run(); });
  common::name_thread(s->thread_, "rec-snapshot");
  return s;
}

int64_t SnapshotSink::now_ns() const {
  if (opt_.writer.now_ns) return opt_.writer.now_ns();
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

SnapshotSink::~SnapshotSink() {
  (void)close();
}

Result<storage::TopicId> SnapshotSink::add_topic(const storage::TopicDef& def) {
  std::lock_guard lk(defs_mu_);
  topics_.push_back(def);
  return static_cast<storage::TopicId>(topics_.size());
}

Result<storage::WriterId> SnapshotSink::add_writer(const storage::WriterDef& def) {
  std::lock_guard lk(defs_mu_);
  if (def.topic == 0 || def.topic > topics_.size())
    return Error{Errc::kInvalidArgument, "add_writer: unknown topic id"};
  writers_.push_back(def);
  const auto id = static_cast<storage::WriterId>(writers_.size());
  if (def.qos.empty()) return id;  // no recorded QoS: volatile, nothing latched
  const auto q = decode_qos(def.qos);
  if (q && q->durability >= pubsub::DurabilityKind::kTransientLocal) {
    std::lock_guard ll(latched_mu_);
    latched_[id].depth = q->history.kind == pubsub::HistoryKind::kKeepLast
                             ? static_cast<size_t>(std::max(q->history.depth, 1))
                             : kLatchedKeepAll;
    durable_writers_.fetch_add(1, std::memory_order_release);
  }
  return id;
}

void SnapshotSink::keep_latched(const storage::RecordMeta& meta, storage::ByteSpan payload) {
  std::lock_guard lk(latched_mu_);
  auto w = latched_.find(meta.writer);
  if (w == latched_.end()) return;
  auto& dq = w->second.instances[meta.has_key_hash ? meta.key_hash : storage::KeyHash{}];
  dq.push_back({meta, storage::Bytes(payload.begin(), payload.end())});
  if (dq.size() > w->second.depth) dq.pop_front();
}

std::vector<SnapshotSink::Latched> SnapshotSink::latched_before(int64_t before_ns) {
  std::vector<Latched> out;
  std::lock_guard lk(latched_mu_);
  for (const auto& [id, w] : latched_) {
    for (const auto& [key, dq] : w.instances) {
      for (const auto& l : dq) {
        if (l.meta.reception_ns < before_ns) out.push_back(l);
      }
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const Latched& a, const Latched& b) {
    return a.meta.reception_ns < b.meta.reception_ns;
  });
  return out;
}

// Writes the job's latched state, each writer's records as a run of skips and records: the
// sequence numbers between them were not lost, only superseded.
Status SnapshotSink::write_latched(Job& job) {
  for (const Latched& l : job.latched) {
    auto last = job.latched_seq.find(l.meta.writer);
    if (last != job.latched_seq.end() && l.meta.sequence > last->second + 1) {
      if (auto s = job.w->skip_to(l.meta.writer, l.meta.sequence - 1); !s) return s;
    }
    if (auto s = job.w->append(l.meta, l.payload); !s) return s;
    job.latched_seq[l.meta.writer] = l.meta.sequence;
    ++job.latched_samples;
  }
  job.latched.clear();
  return {};
}

Status SnapshotSink::add_type(const storage::TypeDef& def) {
  std::lock_guard lk(defs_mu_);
  types_.push_back(def);
  return {};
}

Status SnapshotSink::add_mark(const storage::Mark& mark) {
  ring_.add_mark(mark);
  return {};
}

Status SnapshotSink::skip_to(storage::WriterId writer, int64_t sequence) {
  ring_.add_skip(writer, sequence, now_ns());
  return {};
}

Status SnapshotSink::try_append(const storage::RecordMeta& meta, storage::ByteSpan payload) {
  auto lock = lock_appends();
  return try_append(lock, meta, payload);
}

Status SnapshotSink::try_append(storage::SnapshotRing::AppendLock& lock,
                                const storage::RecordMeta& meta, storage::ByteSpan payload) {
  auto s = ring_.append(lock, meta, payload);
  if (s && durable_writers_.load(std::memory_order_acquire) > 0) keep_latched(meta, payload);
  return s;
}

Result<uint64_t> SnapshotSink::split() {
  return Error{Errc::kInvalidArgument,
               "split: in snapshot mode there is no recording to split (each snapshot is one)"};
}

SinkFill SnapshotSink::fill() const {
  return {ring_.stats().memory_bytes, opt_.max_bytes};
}

std::string SnapshotSink::io_description() const {
  return "snapshot mode: the last " +
         std::to_string(std::chrono::duration<double>(opt_.before).count()) +
         " s in memory (at most " + mb(static_cast<double>(opt_.max_bytes)) + "), snapshots in " +
         opt_.dir.string();
}

SnapshotStatus SnapshotSink::status() const {
  const auto r = ring_.stats();
  SnapshotStatus s;
  s.buffered_samples = r.records;
  s.buffered_bytes = r.memory_bytes;
  s.max_bytes = opt_.max_bytes;
  s.buffered_seconds =
      r.newest_ns > r.oldest_ns ? static_cast<double>(r.newest_ns - r.oldest_ns) / 1e9 : 0;
  s.dropped_samples = r.evicted_for_memory_records;
  std::lock_guard lk(jobs_mu_);
  s.snapshots = finished_;
  s.writing = !jobs_.empty();
  s.last_path = last_path_;
  return s;
}

Result<SnapshotTrigger> SnapshotSink::trigger(const std::string& tag) {
  if (!valid_tag(tag))
    return Error{Errc::kInvalidArgument,
                 "a snapshot tag has at most 64 characters of A-Z a-z 0-9 . _ -"};
  const int64_t now = now_ns();
  const int64_t after = static_cast<int64_t>(opt_.after.count());
  const storage::Mark mark{storage::MarkKind::kTag, now, tag.empty() ? "snapshot" : tag,
                           "snapshot trigger"};
  std::lock_guard lk(jobs_mu_);
  if (stopping_) return Error{Errc::kClosed, "the recorder is stopping"};
  SnapshotTrigger t;
  t.trigger_ns = now;
  if (!jobs_.empty() && now <= last_until_ns_) {
    // Inside the window of the snapshot being made: one recording, a later end.
    Job& j = *jobs_.back();
    last_until_ns_ = std::max(last_until_ns_, now + after);
    ring_.add_mark(mark);
    t.path = j.path;
    t.extended = true;
    t.from_ns = j.from_ns;
    t.until_ns = last_until_ns_;
    log_->info("snapshot {} extended to {:.1f} s after this trigger{}", j.path.string(),
               static_cast<double>(after) / 1e9, tag.empty() ? "" : " (" + tag + ")");
    return t;
  }
  auto job = std::make_unique<Job>();
  job->path = opt_.dir / directory_name(now, tag);
  if (std::filesystem::exists(job->path))
    return Error{Errc::kAlreadyExists, job->path.string() + " exists already"};
  auto w = storage::SegmentWriter::create(job->path.string(), opt_.writer);
  if (!w) return w.error().with_context("cannot create " + job->path.string());
  job->w = std::move(w).value();
  job->trigger_ns = now;
  job->from_ns = std::max(now - static_cast<int64_t>(opt_.before.count()), last_until_ns_ + 1);
  job->next_chunk = ring_.next_index();
  for (auto& c : ring_.chunks_from(0)) {
    if (c->last_ns >= job->from_ns) job->held.push_back(std::move(c));
  }
  job->latched = latched_before(job->from_ns);
  ring_.add_mark(mark);
  last_until_ns_ = now + after;
  last_path_ = job->path.string();
  t.path = job->path;
  t.from_ns = job->from_ns;
  t.until_ns = last_until_ns_;
  log_->info("snapshot {}: {:.1f} s before and {:.1f} s after the trigger", job->path.string(),
             static_cast<double>(now - job->from_ns) / 1e9, static_cast<double>(after) / 1e9);
  jobs_.push_back(std::move(job));
  jobs_cv_.notify_all();
  return t;
}

void SnapshotSink::run() {
  for (;;) {
    Job* job = nullptr;
    int64_t until = 0;
    bool stopping = false;
    {
      std::unique_lock lk(jobs_mu_);
      jobs_cv_.wait_for(lk, kPollPeriod);
      stopping = stopping_;
      if (!jobs_.empty()) {
        job = jobs_.front().get();
        // The front job's window ends where the next one's starts (or at the latest end).
        until = jobs_.size() > 1 ? jobs_[1]->from_ns - 1 : last_until_ns_;
      }
    }
    ring_.poll(now_ns());
    if (job) {
      const bool finish_now = stopping || now_ns() > until + kFinishGraceNs;
      if (advance(*job, until, finish_now)) {
        std::lock_guard lk(jobs_mu_);
        jobs_.pop_front();
        continue;  // the next job at once
      }
    } else if (stopping) {
      return;
    }
  }
}

void SnapshotSink::define_new(Job& job) {
  std::lock_guard lk(defs_mu_);
  for (; job.topics < topics_.size(); ++job.topics) {
    if (auto id = job.w->add_topic(topics_[job.topics]); !id) job.failed = true;
  }
  for (; job.writers < writers_.size(); ++job.writers) {
    if (auto id = job.w->add_writer(writers_[job.writers]); !id) job.failed = true;
  }
  for (; job.types < types_.size(); ++job.types) {
    if (auto s = job.w->add_type(types_[job.types]); !s) job.failed = true;
  }
}

Status SnapshotSink::copy_chunk(Job& job, const storage::SnapshotChunk& chunk, int64_t until_ns) {
  if (chunk.last_ns < job.from_ns || chunk.first_ns > until_ns) return {};
  thread_local storage::Bytes scratch;
  return storage::SnapshotRing::for_each_entry(
      chunk, scratch, [&](const storage::format::Entry& e) -> Status {
        using storage::format::EntryKind;
        if (e.kind == EntryKind::kData) {
          const auto& m = e.record.meta;
          if (m.reception_ns < job.from_ns || m.reception_ns > until_ns) return {};
          if (auto l = job.latched_seq.find(m.writer); l != job.latched_seq.end()) {
            // The first record of the window after a writer's latched state.
            if (m.sequence > l->second + 1) {
              if (auto s = job.w->skip_to(m.writer, m.sequence - 1); !s) return s;
            }
            job.latched_seq.erase(l);
          }
          if (auto s = job.w->append(m, e.record.payload); !s) return s;
          if (job.samples++ == 0) job.first_ns = m.reception_ns;
          job.first_ns = std::min(job.first_ns, m.reception_ns);
          job.last_ns = std::max(job.last_ns, m.reception_ns);
          job.bytes += e.record.payload.size();
        } else if (e.kind == EntryKind::kMark) {
          if (e.mark.time_ns < job.from_ns || e.mark.time_ns > until_ns) return {};
          return job.w->add_mark(e.mark);
        } else if (e.kind == EntryKind::kGap) {
          return job.w->skip_to(e.gap.writer, e.gap.last_missing);
        }
        return {};
      });
}

bool SnapshotSink::advance(Job& job, int64_t until_ns, bool finish_now) {
  if (finish_now) ring_.seal();
  uint64_t missed = 0;
  auto chunks = ring_.chunks_from(job.next_chunk, &missed);
  job.missed_chunks += missed;
  job.next_chunk = chunks.empty() ? job.next_chunk + missed : chunks.back()->index + 1;
  if (!job.held.empty()) {
    chunks.insert(chunks.begin(), job.held.begin(), job.held.end());
    job.held.clear();
  }
  define_new(job);
  if (!job.latched.empty() && !job.failed) {
    if (auto s = write_latched(job); !s) {
      log_->error("snapshot {}: {}", job.path.string(), s.error().message);
      job.failed = true;
    }
  }
  for (const auto& c : chunks) {
    if (job.failed) break;
    if (auto s = copy_chunk(job, *c, until_ns); !s) {
      log_->error("snapshot {}: {}", job.path.string(), s.error().message);
      job.failed = true;
    }
  }
  if (!finish_now && !job.failed) return false;
  finish(job, until_ns);
  return true;
}

void SnapshotSink::finish(Job& job, int64_t until_ns) {
  const auto closed = job.w->close();
  {
    std::lock_guard lk(jobs_mu_);
    ++finished_;
    if (!closed && first_error_.ok()) first_error_ = closed.error();
  }
  if (!closed) {
    log_->error("snapshot {} failed: {}", job.path.string(), closed.error().message);
    return;
  }
  if (opt_.on_recording_finished) opt_.on_recording_finished(job.path);
  log_->info(
      "snapshot {} written: {} samples ({}) received from {:.3f} s before to {:.3f} s after the "
      "trigger (window {:.1f} s before, until {:.1f} s after){}",
      job.path.string(), job.samples, mb(static_cast<double>(job.bytes)),
      job.samples ? static_cast<double>(job.trigger_ns - job.first_ns) / 1e9 : 0.0,
      job.samples ? static_cast<double>(job.last_ns - job.trigger_ns) / 1e9 : 0.0,
      static_cast<double>(job.trigger_ns - job.from_ns) / 1e9,
      static_cast<double>(until_ns - job.trigger_ns) / 1e9,
      (job.missed_chunks ? "; " + std::to_string(job.missed_chunks) +
                               " chunk(s) of it had left memory first (snapshot.max_bytes)"
                         : std::string()) +
          (job.latched_samples
               ? "; and first the latched state: " + std::to_string(job.latched_samples) +
                     " earlier samples of durable writers"
               : std::string()));
}

Status SnapshotSink::close() {
  {
    std::lock_guard lk(jobs_mu_);
    if (!thread_.joinable()) return first_error_;
    stopping_ = true;
    jobs_cv_.notify_all();
  }
  thread_.join();
  std::lock_guard lk(jobs_mu_);
  return first_error_;
}

}  // namespace service
