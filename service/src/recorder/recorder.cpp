#include "service/recorder.hpp"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>
#include <vector>

#include "control_commands.hpp"
#include "control_server.hpp"
#include "dds_control.hpp"
#include "discovery_hints.hpp"
#include "metrics_server.hpp"
#include "pubsub/participant.hpp"
#include "service/recording_schema.hpp"
#include "snapshot_sink.hpp"
#include "storage/segment_writer.hpp"
#include "text.hpp"
#include "types/catalog.hpp"
#include "types/idl_writer.hpp"
#include "types/type_object.hpp"

namespace service {
namespace {

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
  std::atomic<uint64_t> samples{0}, bytes{0}, lost{0}, refused{0};
  std::atomic<uint64_t> skipped{0};  // received while the topic was paused
};

struct TopicState {
  storage::TopicId id = 0;
  std::string name;
  std::vector<WriterState*> writers;  // under Impl::maps_mu
  std::atomic<bool> paused{false};    // written under Impl::maps_mu
};

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

pubsub::Result<types::TypeCatalog> load_idl_types(const config::RecorderConfig& c) {
  auto catalog = types::TypeCatalog::from_idl_files(c.types.idl);
  if (!catalog) return common::Error{common::Errc::kInvalidArgument, catalog.error().message};
  return catalog;
}

namespace {}  // namespace

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

  // Topics defined off the receive threads. A matched writer's topic (its index row, the type
  // from types.idl or a TypeLookup request) is queued here by on_writer_matched and defined by
  // the registrar thread, usually before the writer's first sample arrives; a sample that comes
  // first defines it on its delivering thread (topic_locked under maps_mu, whichever is first).
  struct TopicToDefine {
    const pubsub::TopicInfo* topic;  // stable while the raw reader lives
    pubsub::GuidPrefix from;         // the writer's participant (TypeLookup)
  };
  std::mutex reg_mu;
  std::condition_variable reg_cv;
  std::vector<TopicToDefine> reg_queue;  // under reg_mu
  bool reg_stop = false;                 // under reg_mu
  std::thread registrar;                 // started by create(), ended by stop_registrar()

  bool pause_all = false;  // under maps_mu: every topic paused, and topics matched later
  std::unique_ptr<ControlServer> control;  // its thread runs the control commands
  std::unique_ptr<MetricsServer> metrics;  // its thread renders the metrics
  std::atomic<Recorder*> owner{nullptr};   // set once create() is done: commands wait for it
  // control.dds: its worker thread runs the control commands.
  std::unique_ptr<DdsControl> dds_control;
  Clock::time_point started = Clock::now();

  std::unique_ptr<DiscoveryHints> hints;  // run()'s thread only
  std::atomic<uint64_t> writer_count{0};
  std::atomic<uint64_t> refused_writers{0};  // writers the raw reader cannot read (stored)
  std::atomic<bool> refused_flag{false};     // a sample was refused since run() last looked
  std::string io_logged;                     // stats thread: the storage description last logged
  std::mutex mu;
  std::condition_variable cv;
  bool stop_requested = false;
  std::atomic<bool> stop_flag{false};
  std::atomic<bool> failed{false};
  common::Error failure;  // the first storage error (set once, with `failed`)
  // The disk guard's stop, in the configuration's terms (under mu; set before storage fails).
  std::string low_space_line;

  // Storage's writer thread calls back into this Impl (on_error, on_disk_guard): it must be
  // gone before the members those use. The reader first (nothing more is delivered), then the
  // participant (its TypeLookup replies use the store), then the store.
  ~Impl() {
    // The command servers first: their threads run commands on this Impl (run() resets them
    // too; a Recorder destroyed without run() gets here with them still up). The registrar
    // writes to the store and asks the participant.
    stop_registrar();
    dds_control.reset();
    control.reset();
    metrics.reset();
    reader.reset();
    participant.reset();
    store.reset();
  }

  static uint64_t next_generation() {
    static std::atomic<uint64_t> g{0};
    return ++g;
  }

  // The recording, or in snapshot mode the buffer (each snapshot's recording gets `wo`).
  pubsub::Result<void> open_sink(storage::SegmentWriterOptions wo) {
    if (cfg.mode == config::RecorderMode::kSnapshot) {
      SnapshotSinkOptions so;
      so.dir = cfg.storage.path;
      so.before = std::chrono::duration_cast<std::chrono::nanoseconds>(cfg.snapshot.before);
      so.after = std::chrono::duration_cast<std::chrono::nanoseconds>(cfg.snapshot.after);
      so.max_bytes = cfg.snapshot.max_bytes;
      so.chunk_max_age = cfg.storage.chunk_max_age;
      so.writer = std::move(wo);
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

  pubsub::Result<void> start_control(const std::filesystem::path& path) {
    auto server = ControlServer::start(path, [this](const nlohmann::json& request) {
      Recorder* r = owner.load();
      if (!r) return nlohmann::json{{"ok", false}, {"error", "the recorder is starting"}};
      return handle_control(*r, request);
    });
    if (!server) return server.error();
    control = std::move(server).value();
    log->info("control socket {}", path.string());
    return {};
  }

  pubsub::Result<void> start_dds_control() {
    auto dds = DdsControl::start(
        *participant, cfg.control.allow,
        [this](const nlohmann::json& request) {
          Recorder* r = owner.load();
          if (!r) return nlohmann::json{{"ok", false}, {"error", "the recorder is starting"}};
          return handle_control(*r, request);
        },
        [l = log](const std::string& line) { l->warn("{}", line); });
    if (!dds) return dds.error();
    dds_control = std::move(dds).value();
    std::string allow;
    for (const auto& n : cfg.control.allow) allow += (allow.empty() ? "" : ", ") + n.to_string();
    log->info("DDS control on domain {} (allow {})", cfg.domain, allow);
    return {};
  }

  pubsub::Result<void> start_metrics(const std::string& listen) {
    auto server = MetricsServer::start(listen, [this] {
      Recorder* r = owner.load();
      return r ? prometheus_text(r->status()) : std::string();
    });
    if (!server) return server.error();
    metrics = std::move(server).value();
    log->info("metrics on http://{}:{}/metrics", listen.substr(0, listen.rfind(':')),
              metrics->port());
    return {};
  }

  // maps_mu held.
  TopicState* topic_locked(const pubsub::TopicInfo* info, const pubsub::GuidPrefix& from) {
    auto it = topics.find(info);
    if (it != topics.end()) return it->second.get();
    auto id = store->add_topic(topic_def(*info));
    if (!id) {
      fail(id.error());
      return nullptr;
    }
    auto t = std::make_unique<TopicState>();
    t->id = id.value();
    t->name = info->name;
    t->paused.store(pause_all, std::memory_order_relaxed);
    if (!store_idl_type(info->type_name)) look_up_type(*info, from);
    log->info("topic {} ({}, {}{}{})", info->name, info->type_name,
              info->reliability == pubsub::ReliabilityKind::kReliable ? "reliable" : "best effort",
              info->keyed ? ", keyed" : "",
              info->type_information.empty() ? "" : ", with type information");
    return topics.emplace(info, std::move(t)).first->second.get();
  }

  // Discovery thread (on_writer_matched): the writer's topic, for the registrar.
  void queue_topic(const pubsub::TopicInfo& t, const pubsub::GuidPrefix& from) {
    {
      std::lock_guard lk(reg_mu);
      reg_queue.push_back({&t, from});
    }
    reg_cv.notify_one();
  }

  // The registrar thread: defines the queued topics not defined yet.
  void registrar_loop() {
    std::unique_lock lk(reg_mu);
    for (;;) {
      reg_cv.wait(lk, [&] { return reg_stop || !reg_queue.empty(); });
      if (reg_stop) return;
      std::vector<TopicToDefine> batch;
      batch.swap(reg_queue);
      lk.unlock();
      for (const auto& t : batch) {
        std::lock_guard maps(maps_mu);
        (void)topic_locked(t.topic, t.from);
      }
      lk.lock();
    }
  }

  void stop_registrar() {
    {
      std::lock_guard lk(reg_mu);
      reg_stop = true;
    }
    reg_cv.notify_one();
    if (registrar.joinable()) registrar.join();
  }

  // maps_mu held. Stores the type of a new topic when types.idl defines it (a failure is logged:
  // the samples are recorded all the same).
  bool store_idl_type(const std::string& type_name) {
    auto found = idl_types.find(type_name);
    if (!found) return false;
    storage::TypeDef def{
        type_name, storage::TypeSource::kIdl, types::to_idl(*found->lib, found->id), {}};
    if (auto s = store->add_type(def); !s) {
      log->warn("type {} from {} not stored: {}", type_name, *found->origin, s.error().message);
      return true;
    }
    log->info("type {} from {}", type_name, *found->origin);
    return true;
  }

  // Asks the writer's participant for the topic's type (XTypes TypeLookup getTypes) when the
  // writer announced TypeInformation: the complete type and the dependencies it listed. One
  // request per type name at a time; a participant that does not answer is logged, and a later
  // writer of the type may ask again.
  void look_up_type(const pubsub::TopicInfo& info, const pubsub::GuidPrefix& from) {
    if (info.type_information.empty()) return;
    auto ti = types::decode_type_information(info.type_information);
    if (!ti) {
      log->warn("type {}: TypeInformation not understood ({}); recorded without its type",
                info.type_name, ti.error().message);
      return;
    }
    {
      std::lock_guard lk(types_mu);
      if (!types_asked.insert(info.type_name).second) return;
    }
    std::vector<types::HashedTypeId> ids{
        types::hashed_type_id(types::kEkComplete, ti->complete.hash)};
    for (const auto& d : ti->complete_dependencies)
      ids.push_back(types::hashed_type_id(types::kEkComplete, d.hash));
    log->info("type {}: asking participant {} for {} TypeObject(s)", info.type_name,
              pubsub::Guid{from, {}}.to_string(), ids.size());
    participant->request_types(
        from, ids, kTypeLookupTimeout,
        [this, name = info.type_name, top = ti->complete.hash](const pubsub::TypeLookupReply& r) {
          return on_type_reply(name, top, r);
        });
  }

  // A participant thread: one reply (or the end of the wait) for type `name`. True: done.
  bool on_type_reply(const std::string& name, const types::EquivalenceHash& top,
                     const pubsub::TypeLookupReply& r) {
    const std::string from = pubsub::Guid{r.from, {}}.to_string();
    if (r.kind != pubsub::TypeLookupReply::Kind::kReply) {
      log->warn(
          "type {}: {}; recorded without its type", name,
          r.kind == pubsub::TypeLookupReply::Kind::kTimeout
              ? "no TypeLookup reply within " + std::to_string(kTypeLookupTimeout.count()) + " s"
              : "participant " + from + " offers no TypeLookup service");
      std::lock_guard lk(types_mu);
      types_asked.erase(name);
      return true;
    }
    if (r.types.empty()) return false;  // an error or empty answer: another may still come
    const auto order = r.little_endian ? types::ByteOrder::kLittle : types::ByteOrder::kBig;
    auto set = types::parse_get_types_out(r.types, order);
    if (!set) return false;
    auto decoded = types::decode_type_objects(set->pairs, top);
    if (!decoded) {
      log->debug("type {}: reply from {} does not give it: {}", name, from,
                 decoded.error().message);
      return false;
    }
    storage::TypeDef def{
        name, storage::TypeSource::kLookup, types::to_idl(decoded->library, decoded->top),
        storage::Bytes(reinterpret_cast<const std::byte*>(r.types.data()),
                       reinterpret_cast<const std::byte*>(r.types.data()) + r.types.size())};
    if (auto s = store->add_type(def); !s) {
      log->warn("type {} (looked up) not stored: {}", name, s.error().message);
    } else {
      log->info("type {}: looked up from participant {} ({} TypeObjects)", name, from,
                set->pairs.size());
    }
    return true;
  }

  // The writer's state, from this thread's cache of the last writer it delivered for (runs of
  // samples come from one writer), else from the map (created on first sight, with its topic).
  WriterState* writer_for(const pubsub::RawSample& s) {
    struct Cache {
      uint64_t generation = 0;
      pubsub::Guid guid;
      WriterState* state = nullptr;
    };
    thread_local Cache cache;
    if (cache.generation == generation && cache.guid == s.writer) return cache.state;
    std::lock_guard lk(maps_mu);
    auto it = writers.find(s.writer);
    if (it == writers.end()) {
      // The writer's own QoS, from its announcement (known before its first sample).
      const pubsub::RawReader* r = reader_ready.load(std::memory_order_acquire);
      auto offer = r ? r->writer_info(s.writer) : nullptr;
      if (!offer) return nullptr;  // refused for now: offered again in a few milliseconds
      TopicState* t = topic_locked(s.topic, s.writer.prefix);
      if (!t) return nullptr;
      RecordedQos qos = recorded_qos(*offer);
      infer_representation(qos, s.serialized);
      auto id = store->add_writer(storage::WriterDef{t->id, s.writer.bytes(), encode_qos(qos)});
      if (!id) {
        fail(id.error());
        return nullptr;
      }
      auto w = std::make_unique<WriterState>();
      w->id = id.value();
      w->topic = t;
      t->writers.push_back(w.get());
      it = writers.emplace(s.writer, std::move(w)).first;
      writer_count++;
    }
    cache = {generation, s.writer, it->second.get()};
    return cache.state;
  }

  // Discovery thread: a writer the raw reader cannot read (e.g. an XML data representation). It
  // is stored with its QoS and the reason, so `pubsub-replay info` says why it has no samples.
  void on_writer_refused(const pubsub::TopicInfo& t, const pubsub::Guid& g,
                         pubsub::QosPolicyId policy, const std::string& reason) {
    (void)policy;  // named at the start of `reason` ("DATA_REPRESENTATION: requested ...")
    const std::string& why = reason;
    log->warn("writer {} on {} not recorded: {}", guid_hex(g), t.name, why);
    std::lock_guard lk(maps_mu);
    if (writers.count(g)) return;
    const pubsub::RawReader* r = reader_ready.load(std::memory_order_acquire);
    auto offer = r ? r->writer_info(g) : nullptr;
    TopicState* ts = topic_locked(&t, g.prefix);
    if (!ts) return;
    RecordedQos qos = offer ? recorded_qos(*offer) : recorded_qos(t);
    qos.not_matched = why;
    if (auto id = store->add_writer(storage::WriterDef{ts->id, g.bytes(), encode_qos(qos)}); !id) {
      fail(id.error());
      return;
    }
    refused_writers.fetch_add(1, std::memory_order_relaxed);
  }

  // Delivering thread, under the writer's reader lock. True = stored in a chunk buffer, so the
  // sample may be acknowledged.
  bool on_sample(const pubsub::RawSample& s) {
    if (failed.load(std::memory_order_relaxed)) return false;
    WriterState* w = writer_for(s);
    if (!w) return false;
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
    const auto st = store->try_append(m, s.serialized);
    if (!st) {
      if (st.error().code == storage::ErrorCode::kFull) {
        bump(w->refused, 1);
        refused_flag.store(true, std::memory_order_relaxed);
      } else {
        fail(st.error());
      }
      return false;
    }
    if (w->last && s.sequence_number > w->last + 1) {
      bump(w->lost, static_cast<uint64_t>(s.sequence_number - w->last - 1));
    }
    w->last = std::max(w->last, s.sequence_number);
    w->last_reception_ns = m.reception_ns;
    bump(w->samples, 1);
    bump(w->bytes, s.serialized.size());
    return true;
  }

  // A sample of a paused topic: acknowledged and dropped; storage learns it is no gap.
  bool skip(WriterState& w, const pubsub::RawSample& s) {
    if (auto st = store->skip_to(w.id, s.sequence_number); !st) {
      fail(st.error());
      return false;
    }
    w.last = std::max(w.last, s.sequence_number);
    bump(w.skipped, 1);
    return true;
  }

  struct Sums {
    uint64_t samples = 0, bytes = 0, lost = 0, refused = 0;
  };
  // The counters of every writer (stats thread; a writer's counters may be a sample behind).
  Sums sums() {
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

  void fail(const common::Error& e) {
    if (failed.exchange(true)) return;
    std::string line;
    {
      std::lock_guard lk(mu);
      failure = e;
      if (e.code == common::Errc::kLowSpace && !low_space_line.empty()) {
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

  // Storage's writer thread: what the disk guard did, logged with the configuration's names.
  void on_disk_guard(const storage::DiskGuardEvent& e) {
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

  void log_stats(double interval_s, Sums& prev) {
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
        reader->stats().samples_shm, now.lost, now.refused - prev.refused,
        reader->matched_writers());
    if (const uint64_t n = participant->stats().incompatible_qos; n > 0) {
      line += fmt::format(", {} endpoint pairs with incompatible QoS", n);
    }
    log->info("{}", line);
    if (opts.on_stats) opts.on_stats(line);
    std::string per_topic;
    {
      std::lock_guard lk(maps_mu);
      for (const auto& [info, t] : topics) {
        uint64_t n = 0;
        for (const WriterState* w : t->writers) n += w->samples.load(std::memory_order_relaxed);
        per_topic += (per_topic.empty() ? "" : ", ") + t->name + " " + std::to_string(n);
      }
    }
    if (!per_topic.empty()) log->info("per topic: {}", per_topic);
    if (std::string io = store->io_description(); io != io_logged) {
      log->info("storage: {}", io);
      io_logged = std::move(io);
    }
    prev = now;
  }
};

Recorder::Recorder(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Recorder::~Recorder() = default;

pubsub::Result<std::unique_ptr<Recorder>> Recorder::create(const config::RecorderConfig& c,
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
    return pubsub::make_error(pubsub::ErrorCode::kIo, std::string("log: ") + e.what());
  }
  // The participant first: a bad interface must fail before the recording directory exists.
  pubsub::ParticipantOptions po;
  po.domain_id = c.domain;
  po.interface = c.interface;
  po.peers = c.peers;
  po.max_sample_size = c.max_sample_bytes;
  po.user_data = "pubsub-recorder";
  po.shared_memory = c.transport_shm;
  po.network_data = c.transport_udp;
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
  Impl* self = impl.get();
  // A storage failure ends run() at once, traffic or not (on_sample also sees it).
  wo.on_error = [self](const storage::Status& s) { self->fail(s.error()); };
  wo.on_disk_guard = [self](const storage::DiskGuardEvent& e) { self->on_disk_guard(e); };
  if (auto s = impl->open_sink(std::move(wo)); !s) return s.error();
  if (socket_in_recording) {
    if (auto s = impl->start_control(socket); !s) return s.error();
  }

  pubsub::RawReaderOptions ro;
  ro.include = c.topics.include;
  ro.exclude = c.topics.exclude;
  ro.filter = topic_regex_filter(c.topics.regex);  // checked by the configuration's parser
  const pubsub::RawReaderOptions selection = ro;   // what DiscoveryHints explains
  ro.exclude.push_back(kControlTopicsPattern);     // ours and other recorders' (DdsControl)
  ro.qos.reliability = pubsub::ReliabilityKind::kReliable;
  ro.qos.history.kind = pubsub::HistoryKind::kKeepAll;
  ro.qos.resource_limits.max_bytes = kHeldBackBytes;
  ro.qos.resource_limits.max_samples = kHeldBackSamples;
  pubsub::RawReaderListener l;
  l.on_sample = [self](const pubsub::RawSample& s) { return self->on_sample(s); };
  l.on_writer_matched = [self](const pubsub::TopicInfo& t, const pubsub::Guid& g) {
    self->log->info("writer {} on {} matched", guid_hex(g), t.name);
    self->queue_topic(t, g.prefix);
  };
  l.on_writer_incompatible = [self](const pubsub::TopicInfo& t, const pubsub::Guid& g,
                                    pubsub::QosPolicyId policy, const std::string& reason) {
    self->on_writer_refused(t, g, policy, reason);
  };
  l.on_writer_lost = [self](const pubsub::TopicInfo& t, const pubsub::Guid& g) {
    self->log->info("writer {} on {} gone", guid_hex(g), t.name);
  };
  // Started before the reader: writers already discovered are matched inside
  // create_raw_reader(). It uses the store and the participant, both there by now.
  impl->registrar = std::thread([self] { self->registrar_loop(); });
  auto reader = impl->participant->create_raw_reader(ro, l);
  if (!reader) return reader.error();
  impl->reader = std::move(reader).value();
  impl->reader_ready.store(impl->reader.get(), std::memory_order_release);
  {
    const std::string addr = impl->participant->unicast_locator().to_string();
    const std::string ip = addr.substr(0, addr.rfind(':'));
    impl->hints = std::make_unique<DiscoveryHints>(
        selection, c.topics.regex, static_cast<int>(c.domain),
        c.interface.empty() ? "the default interface (" + ip + ")"
                            : "interface " + c.interface + " (" + ip + ")");
  }
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

namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

common::Error refused(std::string why) {
  return common::Error{common::Errc::kInvalidArgument, std::move(why)};
}

// maps_mu held: the recorded topics named `names`, or the refusal naming the first unknown one.
template <typename Topics>
pubsub::Result<std::vector<TopicState*>> find_topics(Topics& topics,
                                                     const std::vector<std::string>& names) {
  std::vector<TopicState*> out;
  for (const auto& n : names) {
    auto it = std::find_if(topics.begin(), topics.end(),
                           [&](const auto& e) { return e.second->name == n; });
    if (it == topics.end()) return refused("no topic \"" + n + "\" is recorded");
    out.push_back(it->second.get());
  }
  return out;
}

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

// Pauses (on = true) or resumes the topics, or all of them; writes the marks (name "" = all).
pubsub::Result<void> set_paused(Recorder::Impl& m, const std::vector<std::string>& names, bool on);

}  // namespace

RecorderStatus Recorder::status() {
  Impl& m = *impl_;
  RecorderStatus st;
  const SinkFill ws = m.store->fill();
  st.queue_fill =
      ws.max_bytes ? static_cast<double>(ws.in_use_bytes) / static_cast<double>(ws.max_bytes) : 0;
  if (m.snap) {
    st.mode = "snapshot";
    st.snapshot = m.snap->status();
  }
  st.samples_shm = m.reader->stats().samples_shm;
  st.writers = m.reader->matched_writers();
  const pubsub::ParticipantStats ps = m.participant->stats();
  for (size_t i = 0; i < pubsub::kQosPolicyCount; ++i) {
    if (ps.incompatible_by_policy[i] == 0) continue;
    st.incompatible_qos[pubsub::to_string(static_cast<pubsub::QosPolicyId>(i))] =
        ps.incompatible_by_policy[i];
  }
  st.seconds = std::chrono::duration<double>(Clock::now() - m.started).count();
  st.path = m.cfg.storage.path.string();
  std::lock_guard lk(m.maps_mu);
  st.paused = m.pause_all;
  for (const auto& [info, t] : m.topics) {
    TopicStatus ts;
    ts.name = t->name;
    ts.paused = t->paused.load(std::memory_order_relaxed);
    ts.writers = t->writers.size();
    for (const WriterState* w : t->writers) {
      ts.samples += w->samples.load(std::memory_order_relaxed);
      ts.bytes += w->bytes.load(std::memory_order_relaxed);
      ts.lost += w->lost.load(std::memory_order_relaxed);
      ts.skipped += w->skipped.load(std::memory_order_relaxed);
      st.held_back += w->refused.load(std::memory_order_relaxed);
    }
    st.samples += ts.samples;
    st.bytes += ts.bytes;
    st.lost += ts.lost;
    st.skipped += ts.skipped;
    st.topics.push_back(std::move(ts));
  }
  std::sort(st.topics.begin(), st.topics.end(),
            [](const TopicStatus& a, const TopicStatus& b) { return a.name < b.name; });
  return st;
}

namespace {

pubsub::Result<void> set_paused(Recorder::Impl& m, const std::vector<std::string>& names, bool on) {
  std::lock_guard lk(m.maps_mu);
  std::vector<storage::Mark> marks;
  const auto kind = on ? storage::MarkKind::kPause : storage::MarkKind::kResume;
  const int64_t t = now_ns();
  if (names.empty()) {
    bool any = m.pause_all;
    for (const auto& [info, ts] : m.topics) any = any || ts->paused.load();
    if (on && m.pause_all) return refused("already paused");
    if (!on && !any) return refused("not paused");
    m.pause_all = on;
    for (const auto& [info, ts] : m.topics) ts->paused.store(on);
    marks.push_back({kind, t, "", ""});
  } else {
    auto found = find_topics(m.topics, names);
    if (!found) return found.error();
    for (TopicState* ts : *found) {
      if (ts->paused.load() == on)
        return refused("topic \"" + ts->name + "\" is " + (on ? "already paused" : "not paused"));
    }
    for (TopicState* ts : *found) {
      ts->paused.store(on);
      marks.push_back({kind, t, ts->name, ""});
    }
  }
  for (const auto& mk : marks) {
    if (auto s = m.store->add_mark(mk); !s) return s.error();
  }
  m.log->info("{} {}", on ? "paused" : "resumed",
              names.empty() ? std::string("every topic") : "topics " + joined(names));
  return {};
}

}  // namespace

pubsub::Result<void> Recorder::pause(const std::vector<std::string>& topics) {
  return set_paused(*impl_, topics, true);
}

pubsub::Result<void> Recorder::resume(const std::vector<std::string>& topics) {
  return set_paused(*impl_, topics, false);
}

pubsub::Result<uint64_t> Recorder::split() {
  auto next = impl_->store->split();
  if (!next) return next.error();
  impl_->log->info("split: recording goes on in segment {}", *next);
  return *next;
}

pubsub::Result<int64_t> Recorder::tag(const std::string& name, const std::string& note) {
  if (name.empty() || name.size() > 256) return refused("a tag name has 1 to 256 bytes");
  if (note.size() > 4096) return refused("a tag note has at most 4096 bytes");
  const int64_t t = now_ns();
  if (auto s = impl_->store->add_mark({storage::MarkKind::kTag, t, name, note}); !s)
    return s.error();
  impl_->log->info("tag \"{}\"{}{}", name, note.empty() ? "" : ": ", note);
  return t;
}

pubsub::Result<SnapshotTrigger> Recorder::snapshot(const std::string& tag) {
  if (!impl_->snap)
    return refused("this recorder is not in snapshot mode (\"mode\": \"snapshot\")");
  return impl_->snap->trigger(tag);
}

void Recorder::stop() {
  impl_->stop_flag.store(true);
  // Not from a signal handler: callers there set the flag only (see recorder_main.cpp).
  std::lock_guard lk(impl_->mu);
  impl_->stop_requested = true;
  impl_->cv.notify_all();
}

pubsub::Result<RecorderTotals> Recorder::run() {
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
  m.hints->observe(m.participant->discovered_topics(),
                   m.participant->discovered_participants().size());
  // Stop receiving first (nothing new is acknowledged), then finish the recording.
  m.log->info("stopping: closing the recording");
  if (m.opts.on_stopping) m.opts.on_stopping();
  m.control.reset();  // no command runs from here on
  m.dds_control.reset();
  m.metrics.reset();
  m.stop_registrar();  // it writes to the store
  const uint64_t shm_samples = m.reader->stats().samples_shm;
  m.reader.reset();
  const auto closed = m.store->close();
  RecorderTotals t;
  const Impl::Sums sums = m.sums();
  t.samples = sums.samples;
  t.bytes = sums.bytes;
  t.refused = sums.refused;
  t.lost = sums.lost;
  t.writers = m.writer_count.load();
  t.writers_not_matched = m.refused_writers.load();
  t.samples_shm = shm_samples;
  {
    std::lock_guard lk(m.maps_mu);
    t.topics = m.topics.size();
  }
  t.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  m.log->info(
      "recorded {} samples ({}) from {} writers on {} topics in {:.1f} s, {} lost, {} "
      "deliveries held back by back-pressure; {} samples over shared memory, {} over UDP",
      t.samples, mb(static_cast<double>(t.bytes)), t.writers, t.topics, t.seconds, t.lost,
      t.refused, t.samples_shm, t.samples - std::min(t.samples, t.samples_shm));
  for (const auto& line : m.hints->at_end(t.seconds)) m.log->warn("{}", line);
  if (t.writers_not_matched > 0) {
    m.log->warn(
        "{} writers not recorded: they offer QoS the recorder cannot read (pubsub-replay "
        "info lists them with the reason)",
        t.writers_not_matched);
  }
  m.participant.reset();
  if (m.failed) {
    // After the disk guard's stop, close() says whether the recording was still finished
    // cleanly (kLowSpace again) or writing out what had been accepted failed (that error).
    if (m.failure.code == common::Errc::kLowSpace && !closed &&
        closed.error().code != common::Errc::kLowSpace)
      return closed.error();
    return m.failure;
  }
  if (!closed) return closed.error();
  return t;
}

}  // namespace service
