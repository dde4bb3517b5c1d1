// The recorder's life (Recorder::Impl, recorder_impl.hpp, says which file holds what):
// create() builds the participant, the command servers, the sink and the reader in the order
// that fails before anything is created; run() waits on the caller's thread, logs statistics and
// discovery hints, and closes the recording (finish()); storage failures and the disk guard's
// events arrive from storage's writer thread (fail, on_disk_guard).

#include "service/recorder.hpp"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>

#include <algorithm>

#include "common/thread_name.hpp"
#include "recorder_impl.hpp"
#include "service/recording_schema.hpp"
#include "text.hpp"

namespace service {

namespace {

storage::SegmentWriterOptions writer_options(const config::RecorderConfig& c,
                                             const RecorderOptions& o) {
  storage::SegmentWriterOptions w;
  w.chunk_max_bytes = c.storage.chunk_max_bytes;
  w.chunk_max_age = c.storage.chunk_max_age;
  w.segment_max_bytes = c.storage.segment_max_bytes;
  w.segment_max_duration =
      std::chrono::duration_cast<std::chrono::milliseconds>(c.storage.segment_max_duration);
  w.compression = c.storage.compression == config::Compression::kLz4 ? storage::Compression::kLz4
                                                                     : storage::Compression::kNone;
  w.lz4_acceleration = static_cast<int>(c.storage.lz4_acceleration);
  switch (c.storage.fsync) {
    case config::FsyncPolicy::kNone:
      w.fsync = storage::FsyncPolicy::kNone;
      break;
    case config::FsyncPolicy::kChunk:
      w.fsync = storage::FsyncPolicy::kChunk;
      break;
    case config::FsyncPolicy::kSegment:
      w.fsync = storage::FsyncPolicy::kSegment;
      break;
    case config::FsyncPolicy::kInterval:
      w.fsync = storage::FsyncPolicy::kInterval;
      break;
  }
  w.fsync_interval = c.storage.fsync_interval;
  w.drop_synced_pages = c.storage.drop_page_cache;
  w.direct_io = c.storage.direct_io;
  w.queue_max_bytes = c.queue_max_bytes;
  w.max_record_bytes = c.max_sample_bytes;
  w.retention_max_bytes = c.storage.retention.max_bytes;
  w.retention_max_age = c.storage.retention.max_age;
  w.min_free_bytes = c.storage.min_free_bytes;
  w.on_low_space = c.storage.on_low_space == config::LowSpacePolicy::kRotate
                       ? storage::LowSpacePolicy::kRotate
                       : storage::LowSpacePolicy::kStop;
  w.test_delay_per_chunk = o.test_storage_delay;
  return w;
}

std::shared_ptr<spdlog::logger> make_logger(const config::LogConfig& c) {
  std::vector<spdlog::sink_ptr> sinks;
  sinks.push_back(std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
  if (!c.file.empty()) {
    sinks.push_back(std::make_shared<spdlog::sinks::basic_file_sink_mt>(c.file.string(), false));
  }
  auto log = std::make_shared<spdlog::logger>("recorder", sinks.begin(), sinks.end());
  log->set_level(spdlog::level::from_str(std::string(config::to_string(c.level))));
  log->set_pattern("%Y-%m-%d %H:%M:%S.%e %^%l%$ %v");
  log->flush_on(spdlog::level::info);
  return log;
}

}  // namespace

std::filesystem::path control_socket_path(const config::RecorderConfig& c) {
  if (c.control.socket.empty() || c.control.socket.is_absolute()) return c.control.socket;
  return c.storage.path / c.control.socket;
}

Recorder::Impl::~Impl() {
  // The command servers first: their threads run commands on this Impl (run() resets them
  // too; a Recorder destroyed without run() gets here with them still up). The registrar
  // writes to the store and asks the participant.
  stop_registrar();
  set_clock.reset();
  dds_control.reset();
  control.reset();
  metrics.reset();
  reader.reset();
  participant.reset();
  store.reset();
  hooks.reset();  // after the store: its threads post to it; runs what is queued first
}

void Recorder::Impl::finish_hooks(bool recording_complete) {
  if (!hooks) return;
  const std::string dir = cfg.storage.path.string();
  if (recording_complete) hooks->post({"recording", dir, dir});
  if (const auto c = hooks->counts(); c.pending > 0) {
    log->info("waiting for {} storage.on_segment_closed commands", c.pending);
  }
  hooks->drain();
  const auto c = hooks->counts();
  log->log(c.failed ? spdlog::level::warn : spdlog::level::info,
           "storage.on_segment_closed: {} commands run, {} failed", c.run, c.failed);
}

void Recorder::Impl::start_hooks(storage::SegmentWriterOptions& wo) {
  const std::string& command = cfg.storage.on_segment_closed;
  if (command.empty()) return;
  hooks = std::make_unique<HookRunner>(command, [l = log](bool warning, const std::string& s) {
    l->log(warning ? spdlog::level::warn : spdlog::level::info, "{}", s);
  });
  log->info("storage.on_segment_closed: `{}` for each finished segment and the recording", command);
  // The segment's recording: storage.path, or in snapshot mode the snapshot's directory.
  wo.on_segment_finished = [h = hooks.get()](const std::string& path) {
    const std::string rec = std::filesystem::path(path).parent_path().parent_path().string();
    h->post({"segment", path, rec});
  };
}

Result<void> Recorder::Impl::open_sink(storage::SegmentWriterOptions wo) {
  if (cfg.mode == config::RecorderMode::kSnapshot) {
    SnapshotSinkOptions so;
    so.dir = cfg.storage.path;
    so.before = std::chrono::duration_cast<std::chrono::nanoseconds>(cfg.snapshot.before);
    so.after = std::chrono::duration_cast<std::chrono::nanoseconds>(cfg.snapshot.after);
    so.max_bytes = cfg.snapshot.max_bytes;
    so.chunk_max_age = cfg.storage.chunk_max_age;
    so.writer = std::move(wo);
    if (hooks) {
      so.on_recording_finished = [self = this](const std::filesystem::path& p) {
        self->hooks->post({"recording", p.string(), p.string()});
      };
    }
    auto sink = SnapshotSink::create(std::move(so), log);
    if (!sink) return sink.error();
    snap = sink.value().get();
    store = std::move(sink).value();
    log->info(
        "snapshot mode: keeping the last {:.1f} s in memory (at most {}); a snapshot "
        "(pubsub-recorder ctl snapshot, SIGUSR1) writes them and the next {:.1f} s to "
        "{}/snapshot-<UTC time>[-TAG]",
        cfg.snapshot.before.count(), mb(static_cast<double>(cfg.snapshot.max_bytes)),
        cfg.snapshot.after.count(), cfg.storage.path.string());
    return {};
  }
  auto w = storage::SegmentWriter::create(cfg.storage.path.string(), std::move(wo));
  if (!w) {
    return w.error().with_context("cannot create recording " + cfg.storage.path.string());
  }
  store = std::make_unique<RecordingSink>(std::move(w).value());
  return {};
}

Recorder::Impl::Sums Recorder::Impl::sums() {
  Sums t;
  std::lock_guard lk(maps_mu);
  for (const auto& [g, w] : writers) {
    t.samples += w->samples.load(std::memory_order_relaxed);
    t.bytes += w->bytes.load(std::memory_order_relaxed);
    t.lost += w->lost.load(std::memory_order_relaxed);
    t.refused += w->refused.load(std::memory_order_relaxed);
  }
  return t;
}

void Recorder::Impl::fail(const Error& e) {
  if (failed.exchange(true)) return;
  std::string line;
  {
    std::lock_guard lk(mu);
    failure = e;
    if (e.code == Errc::kLowSpace && !low_space_line.empty()) {
      failure.message = low_space_line;
      line = low_space_line;
    } else {
      line = "storage failed: " + e.message;
    }
    stop_requested = true;
  }
  log->error("{}", line);
  cv.notify_all();
}

void Recorder::Impl::on_disk_guard(const storage::DiskGuardEvent& e) {
  const std::string dir = cfg.storage.path.string();
  const std::string limit = "storage.min_free_bytes " + mb(static_cast<double>(e.min_free_bytes));
  char seg[32];
  std::snprintf(seg, sizeof seg, "%08llu.seg", static_cast<unsigned long long>(e.segment));
  switch (e.kind) {
    case storage::DiskGuardEvent::Kind::kStopped: {
      // Logged by fail(), which storage's on_error calls next.
      std::lock_guard lk(mu);
      low_space_line = fmt::format("free space {} on {} is below {}: recording stopped",
                                   mb(static_cast<double>(e.free_bytes)), dir, limit);
      break;
    }
    case storage::DiskGuardEvent::Kind::kRemoved:
      log->warn("disk guard: removed segment {} ({}) of {}: free space now {} ({})", seg,
                mb(static_cast<double>(e.segment_bytes)), dir,
                mb(static_cast<double>(e.free_bytes)), limit);
      break;
    case storage::DiskGuardEvent::Kind::kRefused:
      log->warn(
          "disk guard: free space {} on {} is below {} and {}: recording goes on (checked "
          "again at every roll and every 2 s; a full disk ends the recording)",
          mb(static_cast<double>(e.free_bytes)), dir, limit,
          e.segment == 0 ? std::string("there is no segment to remove")
                         : "only segment " + std::string(seg) +
                               ", the one being written, is left: it is not removed");
      break;
  }
}

// A change of the wall clock's distance from reception times of this much between two looks (a
// second apart) is a step: NTP's slewing moves the wall and the monotonic clock alike.
constexpr int64_t kClockStepNs = 100'000'000;

void Recorder::Impl::watch_clock() {
  const int64_t offset = participant->reception_clock().wall_offset().count();
  const int64_t step = offset - wall_offset_ns.load(std::memory_order_relaxed);
  if (step > -kClockStepNs && step < kClockStepNs) return;
  wall_offset_ns.store(offset, std::memory_order_relaxed);
  clock_steps.fetch_add(1, std::memory_order_relaxed);
  const double step_s = static_cast<double>(step) / 1e9;
  const double offset_s = static_cast<double>(offset) / 1e9;
  char note[96];
  std::snprintf(note, sizeof note, "%+.3f s; wall - reception %+.3f s", step_s, offset_s);
  log->warn(
      "the wall clock stepped {:+.3f} s: reception times go on from the monotonic clock, in order "
      "and without a jump, and are now {:.3f} s {} the wall clock (a clock_step mark in the "
      "recording says so)",
      step_s, std::abs(offset_s), offset >= 0 ? "behind" : "ahead of");
  if (auto s =
          store->add_mark({storage::MarkKind::kClockStep, reception_now(), "wall_clock", note});
      !s) {
    log->warn("the clock_step mark could not be stored: {}", s.error().message);
  }
}

void Recorder::Impl::log_stats(double interval_s, Sums& prev) {
  const Sums now = sums();
  const SinkFill ws = store->fill();
  const double fill = ws.max_bytes ? 100.0 * static_cast<double>(ws.in_use_bytes) /
                                         static_cast<double>(ws.max_bytes)
                                   : 0;
  std::string line = fmt::format(
      "{:.0f} samples/s, {}/s, queue {:.0f}% of {} (open chunk {}), {} samples total ({} "
      "over shared memory), {} lost, {} held back, {} writers matched",
      static_cast<double>(now.samples - prev.samples) / interval_s,
      mb(static_cast<double>(now.bytes - prev.bytes) / interval_s), fill,
      mb(static_cast<double>(ws.max_bytes)), mb(static_cast<double>(ws.open_bytes)), now.samples,
      reader->stats().samples_shm, now.lost, now.refused - prev.refused, reader->matched_writers());
  if (const uint64_t n = participant->stats().incompatible_qos; n > 0) {
    line += fmt::format(", {} endpoint pairs with incompatible QoS", n);
  }
  log->info("{}", line);
  if (opts.on_stats) opts.on_stats(line);
  // The kPerTopicShown topics with the most samples: a system of thousands of topics (or a
  // flood of announced ones) must not make every stats line megabytes long.
  constexpr size_t kPerTopicShown = 20;
  std::vector<std::pair<uint64_t, std::string>> counts;
  {
    std::lock_guard lk(maps_mu);
    counts.reserve(topics.size());
    for (const auto& [info, t] : topics) {
      uint64_t n = 0;
      for (const WriterState* w : t->writers) n += w->samples.load(std::memory_order_relaxed);
      counts.emplace_back(n, t->name);
    }
  }
  const size_t shown = std::min(counts.size(), kPerTopicShown);
  std::partial_sort(counts.begin(), counts.begin() + static_cast<std::ptrdiff_t>(shown),
                    counts.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string per_topic;
  for (size_t i = 0; i < shown; ++i)
    per_topic += (i ? ", " : "") + counts[i].second + " " + std::to_string(counts[i].first);
  if (counts.size() > shown)
    per_topic += fmt::format(" (and {} more topics)", counts.size() - shown);
  if (!per_topic.empty()) log->info("per topic: {}", per_topic);
  if (std::string io = store->io_description(); io != io_logged) {
    log->info("storage: {}", io);
    io_logged = std::move(io);
  }
  prev = now;
}

Recorder::Recorder(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Recorder::~Recorder() = default;

Result<std::unique_ptr<Recorder>> Recorder::create(const config::RecorderConfig& c,
                                                   const RecorderOptions& o) {
  auto impl = std::make_unique<Impl>();
  impl->cfg = c;
  impl->opts = o;
  // The IDL first: a file that does not parse must fail before anything is created.
  auto idl = load_idl_types(c);
  if (!idl) return idl.error();
  impl->idl_types = std::move(idl).value();
  try {
    impl->log = make_logger(c.log);
  } catch (const spdlog::spdlog_ex& e) {
    return make_error(Errc::kIo, std::string("log: ") + e.what());
  }
  // The participant first: a bad interface must fail before the recording directory exists.
  pubsub::ParticipantOptions po;
  po.domain_id = c.domain;
  po.interface = c.interface;
  po.peers = c.peers;
  po.max_sample_size = c.max_sample_bytes;
  po.user_data = recorder_user_data(c.control.set);
  po.shared_memory = c.transport_shm;
  po.network_data = c.transport_udp;
  po.discovery_limits.max_participants = c.discovery.max_participants;
  po.discovery_limits.max_participants_per_address = c.discovery.max_participants_per_address;
  po.discovery_limits.max_endpoints_per_participant = c.discovery.max_endpoints_per_participant;
  po.discovery_limits.max_endpoints = c.discovery.max_endpoints;
  // Reception times from the monotonic clock (anchored to the wall clock at the start): a step
  // of the wall clock neither reorders nor spaces out the recording (watch_clock marks it).
  po.steady_reception_clock = true;
  // libpubsub's own decisions (why shared memory is not used, ...) go to the recorder's log.
  po.log = [log = impl->log](const std::string& m) { log->info("{}", m); };
  auto participant = pubsub::Participant::create(po);
  if (!participant) return participant.error();
  impl->participant = std::move(participant).value();
  // A control socket outside the recording directory first: one another recorder listens on
  // must fail before the recording exists.
  const auto socket = control_socket_path(c);
  const bool socket_in_recording = !c.control.socket.empty() && c.control.socket.is_relative();
  if (!socket.empty() && !socket_in_recording) {
    if (auto s = impl->start_control(socket); !s) return s.error();
  }
  if (!c.metrics.listen.empty()) {
    if (auto s = impl->start_metrics(c.metrics.listen); !s) return s.error();
  }
  if (c.control.dds) {
    if (auto s = impl->start_dds_control(); !s) return s.error();
  }

  if (c.storage.min_free_bytes > 0) {
    impl->log->info("disk guard: keeping {} free on {} (storage.min_free_bytes); below it: {}",
                    mb(static_cast<double>(c.storage.min_free_bytes)), c.storage.path.string(),
                    c.storage.on_low_space == config::LowSpacePolicy::kRotate
                        ? "remove the oldest segments (rotate)"
                        : "stop the recording (stop)");
  } else {
    impl->log->info("disk guard: off (storage.min_free_bytes 0)");
  }
  storage::SegmentWriterOptions wo = writer_options(c, o);
  // Retention ages (and snapshot windows) on the reception times' clock; a copy, as storage's
  // thread may outlive the participant.
  wo.now_ns = [clock = impl->participant->reception_clock()] { return clock.now().ns; };
  Impl* self = impl.get();
  // A storage failure ends run() at once, traffic or not (on_sample also sees it).
  wo.on_error = [self](const Status& s) { self->fail(s.error()); };
  wo.on_disk_guard = [self](const storage::DiskGuardEvent& e) { self->on_disk_guard(e); };
  impl->start_hooks(wo);
  if (auto s = impl->open_sink(std::move(wo)); !s) return s.error();
  if (socket_in_recording) {
    if (auto s = impl->start_control(socket); !s) return s.error();
  }

  if (!c.control.set.empty() && c.mode == config::RecorderMode::kRecord) {
    // The recording says whose it is: which set, which host (info lists it with the marks).
    // Named as its replies name it (member_note): the other members' clock_offset marks match.
    const std::string note = member_note({{"member", impl->member_json()}});
    if (auto s = impl->store->add_mark(
            {storage::MarkKind::kSetMember, impl->reception_now(), c.control.set, note});
        !s)
      return s.error();
    if (auto s = impl->start_set_clock(); !s) return s.error();
  }
  if (c.control.armed) {
    // Before the reader: every topic it matches starts paused until start().
    std::lock_guard lk(impl->maps_mu);
    impl->armed = impl->pause_all = true;
    impl->log->info("armed: matching writers, recording nothing until a start command");
  }
  if (auto s = impl->open_reader(); !s) return s.error();
  impl->log->info(
      "recording domain {} on {} into {} (topics {}{})", c.domain,
      impl->participant->unicast_locator().to_string(), c.storage.path.string(),
      [&] {
        std::string s;
        for (const auto& p : c.topics.include) s += (s.empty() ? "" : " ") + p;
        return s;
      }(),
      c.topics.exclude.empty() && c.topics.regex.empty() ? "" : ", excluding some");
  std::unique_ptr<Recorder> recorder(new Recorder(std::move(impl)));
  recorder->impl_->owner = recorder.get();
  return recorder;
}

Result<void> Recorder::Impl::open_reader() {
  Impl* self = this;
  pubsub::RawReaderOptions ro;
  ro.include = cfg.topics.include;
  ro.exclude = cfg.topics.exclude;
  ro.filter = topic_regex_filter(cfg.topics.regex);  // checked by the configuration's parser
  const pubsub::RawReaderOptions selection = ro;     // what DiscoveryHints explains
  ro.exclude.push_back(kControlTopicsPattern);       // ours and other recorders' (DdsControl)
  ro.qos.reliability = pubsub::ReliabilityKind::kReliable;
  ro.qos.history.kind = pubsub::HistoryKind::kKeepAll;
  ro.qos.resource_limits.max_bytes = kHeldBackBytes;
  ro.qos.resource_limits.max_samples = kHeldBackSamples;
  pubsub::RawReaderListener l;
  l.on_sample = [self](const pubsub::RawSample& s) { return self->on_sample(s); };
  l.on_batch_end = [] { end_batch(); };
  l.on_writer_matched = [self](const pubsub::TopicInfo& t, const pubsub::WriterInfo& w) {
    self->on_writer_matched(t, w);
  };
  l.on_writer_incompatible = [self](const pubsub::TopicInfo& t, const pubsub::Guid& g,
                                    pubsub::QosPolicyId policy, const std::string& reason) {
    self->on_writer_refused(t, g, policy, reason);
  };
  l.on_writer_lost = [self](const pubsub::TopicInfo& t, const pubsub::Guid& g,
                            const pubsub::UndeliveredSamples& undelivered) {
    self->on_writer_lost(t, g, undelivered);
  };
  // Started before the reader: writers already discovered are matched inside
  // create_raw_reader(). It uses the store and the participant, both there by now.
  registrar = std::thread([self] { self->registrar_loop(); });
  common::name_thread(registrar, "rec-registrar");
  auto made = participant->create_raw_reader(ro, l);
  if (!made) return made.error();
  reader = std::move(made).value();
  reader_ready.store(reader.get(), std::memory_order_release);
  {
    const std::string addr = participant->unicast_locator().to_string();
    const std::string ip = addr.substr(0, addr.rfind(':'));
    hints = std::make_unique<DiscoveryHints>(
        selection, cfg.topics.regex, static_cast<int>(cfg.domain),
        cfg.interface.empty() ? "the default interface (" + ip + ")"
                              : "interface " + cfg.interface + " (" + ip + ")");
  }
  return {};
}

void Recorder::stop() {
  impl_->stop_flag.store(true);
  // Not from a signal handler: callers there set the flag only (see recorder_main.cpp).
  std::lock_guard lk(impl_->mu);
  impl_->stop_requested = true;
  impl_->cv.notify_all();
}

Result<RecorderTotals> Recorder::run() {
  Impl& m = *impl_;
  const auto start = Clock::now();
  const auto interval = std::chrono::duration_cast<Clock::duration>(m.cfg.stats_interval);
  auto next_stats = start + interval;
  const auto deadline = m.opts.duration
                            ? start + std::chrono::duration_cast<Clock::duration>(*m.opts.duration)
                            : Clock::time_point::max();
  Impl::Sums prev;
  // Discovery's view is looked at each second; "no participant" is said once, 3 s in.
  auto next_look = start;
  auto participant_check = start + std::chrono::seconds(3);
  if (m.opts.on_ready) m.opts.on_ready();
  for (;;) {
    if (m.opts.on_tick) m.opts.on_tick();
    {
      std::unique_lock lk(m.mu);
      const auto wake =
          std::min({next_stats, deadline, Clock::now() + std::chrono::milliseconds(20)});
      m.cv.wait_until(lk, wake, [&] { return m.stop_requested; });
      if (m.stop_requested) break;
    }
    if (m.stop_flag.load()) break;
    const auto now = Clock::now();
    if (now >= deadline) break;
    // Storage may have room again: offer held-back samples now rather than at the reader's
    // next retry.
    if (m.refused_flag.exchange(false, std::memory_order_relaxed)) m.reader->resume();
    if (now >= next_look) {
      m.hints->observe(m.participant->discovered_topics(),
                       m.participant->discovered_participants().size());
      m.watch_clock();
      next_look = now + std::chrono::seconds(1);
    }
    if (now >= participant_check) {
      const auto line = m.hints->no_participant(std::chrono::duration<double>(now - start).count());
      if (!line.empty()) m.log->warn("{}", line);
      participant_check = Clock::time_point::max();
    }
    if (now >= next_stats) {
      m.log_stats(std::chrono::duration<double>(interval).count(), prev);
      if (const auto line = m.hints->new_left_out(); !line.empty()) m.log->info("{}", line);
      next_stats += interval;
    }
  }
  return m.finish(start);
}

Result<RecorderTotals> Recorder::Impl::finish(Clock::time_point start) {
  hints->observe(participant->discovered_topics(), participant->discovered_participants().size());
  // Stop receiving first (nothing new is acknowledged), then finish the recording.
  log->info("stopping: closing the recording");
  if (opts.on_stopping) opts.on_stopping();
  control.reset();    // no command runs from here on
  set_clock.reset();  // it marks the store
  dds_control.reset();
  metrics.reset();
  stop_registrar();  // it writes to the store
  const uint64_t shm_samples = reader->stats().samples_shm;
  reader.reset();
  store_departures();
  const auto closed = store->close();
  RecorderTotals t;
  const Sums total = sums();
  t.samples = total.samples;
  t.bytes = total.bytes;
  t.refused = total.refused;
  t.lost = total.lost;
  t.writers = writer_count.load();
  t.writers_not_matched = refused_writers.load();
  t.writers_elsewhere = elsewhere_writers.load();
  t.samples_shm = shm_samples;
  {
    std::lock_guard lk(maps_mu);
    t.topics = topics.size();
  }
  t.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  log->info(
      "recorded {} samples ({}) from {} writers on {} topics in {:.1f} s, {} lost, {} "
      "deliveries held back by back-pressure; {} samples over shared memory, {} over UDP",
      t.samples, mb(static_cast<double>(t.bytes)), t.writers, t.topics, t.seconds, t.lost,
      t.refused, t.samples_shm, t.samples - std::min(t.samples, t.samples_shm));
  if (const storage::SegmentWriter* w = store->batch_writer()) {  // not in snapshot mode
    const storage::WriterStats ws = w->stats();
    log->info(
        "storage: wrote {} chunks ({} with O_DIRECT) into {} segment files, {} bytes; {} "
        "fdatasyncs",
        ws.chunks_written, ws.direct_chunks, ws.segments_created, ws.file_bytes, ws.syncs);
  }
  for (const auto& line : hints->at_end(t.seconds)) log->warn("{}", line);
  if (t.writers_elsewhere > 0) {
    log->log(t.samples == 0 ? spdlog::level::warn : spdlog::level::info,
             "{} writers on other hosts not recorded here (topics.writers local)",
             t.writers_elsewhere);
  }
  const bool complete = closed || closed.error().code == Errc::kLowSpace;
  finish_hooks(complete && !snap);  // a snapshot's recording had its own when it was finished
  if (t.writers_not_matched > 0) {
    log->warn(
        "{} writers not recorded: they offer QoS the recorder cannot read (pubsub-replay "
        "info lists them with the reason)",
        t.writers_not_matched);
  }
  participant.reset();
  if (failed) {
    // After the disk guard's stop, close() says whether the recording was still finished
    // cleanly (kLowSpace again) or writing out what had been accepted failed (that error).
    if (failure.code == Errc::kLowSpace && !closed && closed.error().code != Errc::kLowSpace)
      return closed.error();
    return failure;
  }
  if (!closed) return closed.error();
  return t;
}

}  // namespace service
