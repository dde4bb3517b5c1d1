// Recorder::Impl: the recorder's state, shared by the files that implement it (internal).
//
// OVERVIEW (service/include/service/recorder.hpp says what the recorder does; this is where)
// - recorder.cpp: create() and run() on the caller's thread; the sink (recording or snapshot
//   buffer), storage failures and the disk guard's events (storage's writer thread), the
//   statistics line (run()'s thread).
// - recorder_samples.cpp: the sample path, on the participant's delivering threads (receive
//   workers, shared-memory thread, event thread) under the writer's reader lock: the writer's
//   state (a per-thread cache, else the maps under maps_mu) and the append into the sink.
// - recorder_registrar.cpp: topics and writers defined in the recording. The registrar thread
//   prepares a matched writer off the receive threads (its topic, its type from types.idl or
//   asked of the writer's participant - TypeLookup, whose replies come on participant threads -
//   and its encoded QoS); writers the recorder cannot read (discovery thread).
// - recorder_control.cpp: the control socket, DDS control and metrics servers (each with its
//   own thread) and the commands they run: status, pause/resume, split, tag, snapshot.
//
// Locks: maps_mu guards the topic and writer maps (never held while taking another lock of
// this file except the sink's); reg_mu the registrar's queue; types_mu the TypeLookup requests
// in flight; mu the stop and failure state. A writer's WriterState is ordered by its reader's
// lock.
#pragma once

#include <spdlog/spdlog.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>
#include <vector>

#include "control_server.hpp"
#include "dds_control.hpp"
#include "discovery_hints.hpp"
#include "hook_runner.hpp"
#include "metrics_server.hpp"
#include "pubsub/participant.hpp"
#include "service/recorder.hpp"
#include "service/result.hpp"
#include "set_clock.hpp"
#include "sink.hpp"
#include "snapshot_sink.hpp"
#include "types/catalog.hpp"
#include "types/type_object.hpp"

namespace service {

using Clock = std::chrono::steady_clock;

// How long a writer's participant has to answer a TypeLookup request.
constexpr auto kTypeLookupTimeout = std::chrono::seconds(3);

// What the RawReader may hold back (refused or out-of-order samples) besides storage's queue.
constexpr size_t kHeldBackBytes = 16u << 20;
constexpr size_t kHeldBackSamples = 65536;

// Counters written by one thread at a time and read by the stats thread: a plain load and
// store, not a locked read-modify-write per sample (which waits for the record's stores into
// the chunk to drain).
inline void bump(std::atomic<uint64_t>& c, uint64_t n) {
  c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}

struct TopicState;

// One recorded writer. Its samples all come through one StatefulReader, whose lock is held
// while they are delivered: that lock orders every access to the fields below, whichever thread
// delivers (receive workers, shared-memory thread, event thread).
struct WriterState {
  storage::WriterId id = 0;
  TopicState* topic = nullptr;
  pubsub::SequenceNumber last = 0;
  // The latest reception time stored: a sample that waited behind a repaired one is stored as
  // received no earlier than it (replay orders by reception time and must keep each writer's
  // order).
  int64_t last_reception_ns = 0;
  // A reliable writer delivers in order; after it was lost (lease) and matched again, a durable
  // one sends its history again from the start: samples at or below `last` are already recorded.
  bool reliable = false;
  bool resent_logged = false;  // the first such resend is logged
  // topics.writers "local" and the writer's participant runs on another host: matched and
  // acknowledged, its samples dropped; no topic or writer is defined for it (id, topic unset).
  bool elsewhere = false;
  std::atomic<uint64_t> samples{0}, bytes{0}, lost{0}, refused{0};
  std::atomic<uint64_t> resent{0};  // samples received again and not stored twice
  // Gone (lease expired or deleted) with samples it sent or announced not recorded: their
  // sequence numbers, counted in `lost` at once and stored as a gap when the recording closes.
  // Matched again, it is cleared and un-counted: its later samples (or their sequence gap) tell
  // what is missing. 0 and 0: none. Under Impl::maps_mu (the sample path does not read them).
  // `lost` is then changed from two threads: every change to it is a locked add.
  pubsub::SequenceNumber departed_first = 0, departed_last = 0;
  std::atomic<uint64_t> skipped{0};  // received while the topic was paused
};

struct TopicState {
  storage::TopicId id = 0;
  std::string name;
  std::vector<WriterState*> writers;  // under Impl::maps_mu
  std::atomic<bool> paused{false};    // written under Impl::maps_mu
};

struct Recorder::Impl {
  config::RecorderConfig cfg;
  RecorderOptions opts;
  std::shared_ptr<spdlog::logger> log;
  // The recording (RecordingSink) or, in snapshot mode, the memory buffer and the snapshots
  // (SnapshotSink, also reachable as `snap`).
  std::unique_ptr<Sink> store;
  SnapshotSink* snap = nullptr;
  // Type names asked of a TypeLookup service and not answered yet, or answered. The replies
  // come on participant threads: declared before the participant, these outlive its threads.
  std::mutex types_mu;
  std::set<std::string> types_asked;
  std::unique_ptr<pubsub::Participant> participant;
  std::unique_ptr<pubsub::RawReader> reader;
  // `reader` for the delivering threads, which may run before create_raw_reader() returns (a
  // writer discovered earlier is matched inside it): null until then.
  std::atomic<const pubsub::RawReader*> reader_ready{nullptr};
  types::TypeCatalog idl_types;  // from types.idl; read-only after create()

  // Receive-path state. Callbacks of different readers run at once on the participant's
  // threads; each writer's state is ordered by its reader's lock (WriterState), and maps_mu
  // guards the maps, taken only when a thread meets a writer it has not cached (writer_for) and
  // by the stats. Map nodes never move, so the cached pointers stay valid.
  std::mutex maps_mu;
  std::unordered_map<const pubsub::TopicInfo*, std::unique_ptr<TopicState>> topics;
  std::unordered_map<pubsub::Guid, std::unique_ptr<WriterState>> writers;
  const uint64_t generation = next_generation();  // tells this recorder's cache entries apart

  // Writers prepared off the receive threads. A matched writer is queued here by
  // on_writer_matched; the registrar thread defines its topic (the index row, the type from
  // types.idl or a TypeLookup request) and encodes its QoS (`prepared`), so that its first sample
  // only appends the writer's definition (writer_for). A reliable writer's sample that comes
  // before the registrar is done is refused (offered again within milliseconds, see
  // RawReaderListener::on_sample); a best-effort one, which would be lost, prepares the writer
  // on its delivering thread (logged).
  struct Registration {
    const pubsub::TopicInfo* topic;                    // stable while the raw reader lives
    std::shared_ptr<const pubsub::WriterInfo> writer;  // as it announced itself
  };
  struct PreparedWriter {
    TopicState* topic = nullptr;  // null: queued, not prepared yet
    bool held_logged = false;     // a sample was refused while queued (logged once)
    bool reliable = false;
    storage::Bytes qos;  // encode_qos of what it offered
    // A writer that announces no data representation: its QoS with {XCDR2}, for samples whose
    // encapsulation is XCDR2 (infer_representation).
    storage::Bytes qos_xcdr2;
  };
  std::unordered_map<pubsub::Guid, PreparedWriter> prepared;  // under maps_mu
  std::mutex reg_mu;
  std::condition_variable reg_cv;
  std::vector<Registration> reg_queue;  // under reg_mu
  bool reg_stop = false;                // under reg_mu
  std::thread registrar;                // started by create(), ended by stop_registrar()

  bool armed = false;        // under maps_mu: control.armed, not started yet (pause_all too)
  std::string recording_id;  // under maps_mu: the start command's
  bool pause_all = false;    // under maps_mu: every topic paused, and topics matched later
  std::unique_ptr<ControlServer> control;  // its thread runs the control commands
  std::unique_ptr<MetricsServer> metrics;  // its thread renders the metrics
  std::atomic<Recorder*> owner{nullptr};   // set once create() is done: commands wait for it
  // control.dds: its worker thread runs the control commands.
  std::unique_ptr<DdsControl> dds_control;
  std::unique_ptr<SetClock> set_clock;  // control.set in record mode: offsets to the members
  std::shared_ptr<const RefusalCounts> control_refusals;  // set with dds_control, kept after it
  Clock::time_point started = Clock::now();

  std::unique_ptr<DiscoveryHints> hints;  // run()'s thread only
  // storage.on_segment_closed (null without it): fed by storage's threads and run().
  std::unique_ptr<HookRunner> hooks;
  // The wall clock's distance from reception times (ReceptionClock::wall_offset) when last
  // looked, and its steps since the start (watch_clock; run()'s thread writes, status reads).
  std::atomic<int64_t> wall_offset_ns{0};
  std::atomic<uint64_t> clock_steps{0};
  std::atomic<uint64_t> writer_count{0};
  std::atomic<uint64_t> refused_writers{0};    // writers the raw reader cannot read (stored)
  std::atomic<uint64_t> elsewhere_writers{0};  // topics.writers local: other hosts' writers
  std::atomic<bool> refused_flag{false};       // a sample was refused since run() last looked
  std::string io_logged;                       // stats thread: the storage description last logged
  std::mutex mu;
  std::condition_variable cv;
  bool stop_requested = false;
  std::atomic<bool> stop_flag{false};
  std::atomic<bool> failed{false};
  Error failure;  // the first storage error (set once, with `failed`)
  // The disk guard's stop, in the configuration's terms (under mu; set before storage fails).
  std::string low_space_line;

  // Storage's writer thread calls back into this Impl (on_error, on_disk_guard): it must be
  // gone before the members those use. The reader first (nothing more is delivered), then the
  // participant (its TypeLookup replies use the store), then the store.
  ~Impl();

  static uint64_t next_generation() {
    static std::atomic<uint64_t> g{0};
    return ++g;
  }

  struct Sums {
    uint64_t samples = 0, bytes = 0, lost = 0, refused = 0;
  };

  // recorder.cpp: the sink, the reader, failures, statistics.

  // The recording, or in snapshot mode the buffer (each snapshot's recording gets `wo`).
  Result<void> open_sink(storage::SegmentWriterOptions wo);
  // DDS control's handler: a request naming another recording set (control.set) gets no reply;
  // a member's replies name it ("member": set, host, address, path).
  nlohmann::json handle_dds_request(const nlohmann::json& request);
  nlohmann::json member_json() const;
  // storage.on_segment_closed: creates `hooks` and sets wo.on_segment_finished (no-op without).
  void start_hooks(storage::SegmentWriterOptions& wo);
  // At the end of run(): the finished recording's hook (when it closed cleanly), then waits
  // for every queued command.
  void finish_hooks(bool recording_complete);

  // The counters of every writer (stats thread; a writer's counters may be a sample behind).
  Sums sums();

  // Any thread: the first storage failure ends run() (logged once).
  void fail(const Error& e);

  // Storage's writer thread: what the disk guard did, logged with the configuration's names.
  void on_disk_guard(const storage::DiskGuardEvent& e);

  // run()'s thread: the statistics line since `prev` (then prev = now).
  void log_stats(double interval_s, Sums& prev);

  // run()'s thread, once a second: a step of the wall clock since the last look is logged and
  // marked in the recording (reception times follow the monotonic clock and do not jump).
  void watch_clock();
  // Now on the reception times' clock: marks and tags go on the same timeline as the samples.
  int64_t reception_now() const { return participant->reception_clock().now().ns; }

  // The raw reader on the configuration's topics (create()), and the discovery hints.
  Result<void> open_reader();

  // run()'s end: stops receiving, closes the recording and returns the totals or the failure.
  Result<RecorderTotals> finish(Clock::time_point start);

  // recorder_control.cpp: the command servers.

  Result<void> start_control(const std::filesystem::path& path);

  Result<void> start_dds_control();
  // control.set, record mode: the clock offsets to the other members, logged and marked.
  Result<void> start_set_clock();

  Result<void> start_metrics(const std::string& listen);

  // Pauses (on = true) or resumes the topics, or all of them; writes the marks (name "" = all).
  Result<void> set_paused(const std::vector<std::string>& names, bool on);

  // recorder_registrar.cpp: topics, types and writers defined in the recording.

  // maps_mu held.
  TopicState* topic_locked(const pubsub::TopicInfo* info, const pubsub::GuidPrefix& from);

  // Discovery thread: a writer matched; queued for the registrar (`prepared`), unless
  // topics.writers is "local" and the writer is on another host.
  void on_writer_matched(const pubsub::TopicInfo& t, const pubsub::WriterInfo& w);
  // Discovery thread: a writer lost before its first sample, with nothing undelivered, is
  // forgotten. One gone with samples not delivered (`undelivered`, e.g. held back by
  // back-pressure) is defined if it was not yet, and those samples are counted lost
  // (WriterState::departed_first).
  void on_writer_lost(const pubsub::TopicInfo& t, const pubsub::Guid& g,
                      const pubsub::UndeliveredSamples& undelivered);
  // maps_mu held: the state of a writer that went away, defined now if no sample of it was
  // recorded (so that its loss is a gap of a writer in the recording); null if it cannot be.
  WriterState* departed_writer_locked(const pubsub::TopicInfo& t, const pubsub::Guid& g);
  // run()'s end, after the reader is gone: the departed writers' losses stored as gaps.
  void store_departures();

  // maps_mu held: writer `w`'s topic defined and its QoS encoded (registrar, or the delivering
  // thread for a best-effort writer the registrar has not reached). Null if the topic failed.
  PreparedWriter* prepare_locked(const pubsub::TopicInfo* topic, const pubsub::WriterInfo& w);
  // maps_mu held, delivering thread: the writer's definition appended (its QoS as `first`, the
  // first sample, shows the representation), its state created; `p` is gone after.
  WriterState* define_locked(const pubsub::Guid& g, PreparedWriter& p, storage::ByteSpan first);
  // maps_mu held, delivering thread: a writer not prepared yet (`queued`: on_writer_matched has
  // queued it). Null (refused) for a reliable writer; a best-effort one is prepared here.
  WriterState* unprepared_locked(const pubsub::RawSample& s, bool queued);

  // Whether topics.writers "local" leaves writer `w` out.
  bool is_elsewhere(const pubsub::WriterInfo& w) const;

  // maps_mu held: the state of writer `w`, on another host (is_elsewhere), logged and counted the
  // first time.
  WriterState* elsewhere_locked(const pubsub::WriterInfo& w);

  // The registrar thread: prepares the queued writers (prepare_locked).
  void registrar_loop();

  void stop_registrar();

  // maps_mu held. Stores the type of a new topic when types.idl defines it (a failure is logged:
  // the samples are recorded all the same).
  bool store_idl_type(const std::string& type_name);

  // Asks the writer's participant for the topic's type (XTypes TypeLookup getTypes) when the
  // writer announced TypeInformation: the complete type and the dependencies it listed. One
  // request per type name at a time; a participant that does not answer is logged, and a later
  // writer of the type may ask again.
  void look_up_type(const pubsub::TopicInfo& info, const pubsub::GuidPrefix& from);

  // A participant thread: one reply (or the end of the wait) for type `name`. True: done.
  bool on_type_reply(const std::string& name, const types::EquivalenceHash& top,
                     const pubsub::TypeLookupReply& r);

  // Discovery thread: a writer the raw reader cannot read (e.g. an XML data representation). It
  // is stored with its QoS and the reason, so `pubsub-replay info` says why it has no samples.
  void on_writer_refused(const pubsub::TopicInfo& t, const pubsub::Guid& g,
                         pubsub::QosPolicyId policy, const std::string& reason);

  // recorder_samples.cpp: the sample path.

  // Appends under this thread's batch lock (the recording's SegmentWriter), or per record
  // (snapshot mode). Delivering thread, under the reader's lock.
  // Inlined into on_sample: per sample, a call and its Status cost as much as the check itself.
  [[gnu::always_inline]] inline Status append(const storage::RecordMeta& m,
                                              storage::ByteSpan payload);

  // The reader's on_batch_end, and before this thread takes another lock: releases its batch.
  static void end_batch();

  // The writer's state, from this thread's cache of the last writer it delivered for (runs of
  // samples come from one writer: checked inline in on_sample), else from the map by
  // writer_for, which defines a prepared writer at its first sample and refills the cache.
  // Null: refused for now (not prepared yet, or storage failed).
  WriterState* writer_for(const pubsub::RawSample& s);

  // Delivering thread, under the writer's reader lock. True = stored in a chunk buffer, so the
  // sample may be acknowledged.
  bool on_sample(const pubsub::RawSample& s);

  // A sample of a paused topic: acknowledged and dropped; storage learns it is no gap.
  bool skip(WriterState& w, const pubsub::RawSample& s);
  // A reliable writer's sample at or below the last recorded one: counted, not stored.
  bool already_recorded(WriterState& w, const pubsub::RawSample& s);
};

}  // namespace service
