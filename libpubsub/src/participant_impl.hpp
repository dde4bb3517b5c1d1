// ParticipantImpl: the runtime behind pubsub::Participant.
//
// OVERVIEW
// - Owns the transport, the Discovery agent, the local endpoints and an Asio io_context run by
//   one event thread (timers of discovery, writers and readers).
// - Receive path (the transport's receive workers, each with its own ReceiveWorker state):
//   on_datagram() renews the sender's lease, decodes the message, and routes each submessage:
//   builtin entity ids to Discovery, DATA/DATA_FRAG/HEARTBEAT/GAP/HEARTBEAT_FRAG by remote
//   writer GUID to the local readers matched with it, ACKNACK/NACK_FRAG by writer entity id to
//   the local writer. Routes are an immutable snapshot (Routes) swapped atomically on every
//   matching change, so the receive thread reads them without a lock. Readers that owe an
//   ACKNACK are collected and answered at on_receive_batch_end().
// - Matching runs on whichever thread learns something (receive thread for SEDP, the caller for
//   new local endpoints, the event thread for lease expiry) under entities_mu_.
//
// FILES (one class, five files; each starts with its own overview)
// - participant_impl.cpp: create()/start()/close(), creating and removing local endpoints
//   (create_writer, create_reader, create_raw_reader, remove_*), stats() and the raw_* queries.
// - participant_routing.cpp: the receive path (on_datagram, ReceiveWorker) and
//   publish_routes_locked(), which builds the Routes it reads.
// - participant_matching.cpp: the DiscoveryListener callbacks, matching remote endpoints with
//   local ones, the delivery path of each pair (intra-process, shared memory, network),
//   raw-reader subscriptions, and the process-wide LocalEndpoints registry.
// - participant_timers.cpp: the event thread's timer (schedule_timer, wake_at, on_timer).
// - participant.cpp: the public classes (pubsub::Participant, Writer, Reader, RawReader,
//   Loan, LoanedSample) and the handles' data path (WriterImpl::write, ReaderImpl::deliver).
//
// OWNERSHIP
// - The participant owns transport_, discovery_, shm_ (the ShmReceiver: our doorbell and the
//   shared-memory thread; null when shared memory is off), io_, timer_ and event_thread_, and
//   one ReceiveWorker per transport worker.
// - Under entities_mu_: writers_ (the WriterImpls), readers_ (a LocalReader per StatefulReader -
//   each ReaderImpl's and each raw-reader subscription's - with the writers it is connected
//   to), raw_readers_ and their subscriptions, remote_ (every endpoint Discovery reported, ours
//   included), doorbells_ (weak: the writers' reader proxies hold the doorbells they ring) and
//   next_entity_key_.
// - The public Writer/Reader/RawReader hold a WriterImpl/ReaderImpl/RawReaderImpl, which holds
//   the participant (shared_ptr). The participant holds the WriterImpls and RawReaderImpls back
//   (writers_, raw_readers_) and every reader's StatefulReader (readers_). close() clears the
//   lists to break those cycles; a WriterImpl that outlives it returns kClosed.
// - routes_ is rebuilt from the lists by publish_routes_locked() after every change - except
//   while a receive worker decodes a datagram: discovery's SEDP samples arrive there, dozens in
//   one datagram, and the changes they make are published once, when the datagram is done
//   (publish_deferred_routes()). A rebuild costs O(endpoints), so one per SEDP sample made a
//   flood of announcements quadratic. A receive worker (from handle() to batch_end()) or
//   on_timer() keeps the snapshot it loaded, and the endpoints in it alive, while it works.
//
// THREADS
// - Receive workers (the transport's: with UDP, worker 0 on the metatraffic and multicast
//   sockets and worker 1 on user unicast; a FakeNetwork's delivery thread is worker 0):
//   on_datagram()/on_receive_batch_end(), each through its own ReceiveWorker. They run the
//   writers' and readers' message handlers and the listeners of network samples, and, through
//   Discovery's SEDP readers, on_endpoint_discovered()/on_endpoint_lost().
// - Event thread (io_.run(), started by start(), joined by close()): on_timer() - Discovery's
//   timer (announcements, lease expiry, which calls on_endpoint_lost()), then every writer's and
//   reader's. timer_ is used only on this thread (start() arms it before the thread starts);
//   other threads go through wake_at() or post to io_.
// - Shared-memory thread (inside shm_): reads matched same-host writers' segments and delivers
//   through StatefulReader::deliver_local(), so it runs those readers' listeners. Matching
//   attaches writers to it and detaches them under entities_mu_.
// - Application threads: create_*/remove_*, stats(), the raw_* queries and close(); and
//   WriterImpl::write/loan, which take only the writer's own lock and deliver to in-process
//   readers on the writing thread (their listeners included).
// - Raw-reader listeners on_writer_matched/on_writer_lost run on the thread that matched, after
//   entities_mu_ is released (Deferred); for SEDP still inside the SEDP reader's callback.
//
// LOCKS
// Lock order: SEDP reader -> entities_mu_ -> endpoint (writer/reader) locks -> transport.
// Nothing holding an endpoint lock takes entities_mu_.
// - SEDP reader: Discovery's builtin readers deliver with their lock held (reader.hpp) and their
//   callback calls on_endpoint_discovered()/on_endpoint_lost(). They are the only endpoints
//   whose lock is held when entities_mu_ is taken.
// - entities_mu_ guards the members listed under OWNERSHIP; methods ending in _locked expect it
//   held. Under it, matching and endpoint removal take writers' locks (add_reader,
//   remove_reader), readers' locks (add_writer, remove_writer, add_local_writer,
//   remove_local_writer, detach, stats) and two leaf locks that take nothing else:
//   LocalEndpoints::mu and the ShmReceiver's (attach, detach).
// - Endpoint locks: a writer delivering to an in-process reader holds its own lock while the
//   reader takes its own (writer.hpp); every listener runs under its reader's lock. So a
//   listener may write to other writers, but not back to the writer delivering to it
//   (docs/SAME_HOST.md, "Threads and rules").
// - Discovery's mutex is never held while it calls out (discovery.hpp), and entities_mu_ is
//   never held while calling Discovery: announce(), withdraw(), resolve() and the matching of
//   our own new endpoints come after it is released.
// - routes_ is a RoutesCell: its own small lock, taken by a receive worker only when the snapshot
//   changed since its last datagram (and once per batch). A ReceiveWorker belongs to one thread.
#pragma once

#include <utility>  // before asio: Boost 1.74's awaitable.hpp uses std::exchange

#include <atomic>
#include <boost/asio.hpp>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>
#include <vector>

#include "discovery/discovery.hpp"
#include "discovery/matching.hpp"
#include "pubsub/participant.hpp"
#include "rtps/reader.hpp"
#include "rtps/writer.hpp"
#include "shm/receiver.hpp"
#include "wire/message.hpp"

namespace pubsub::detail {

class ParticipantImpl;

class WriterImpl {
 public:
  std::shared_ptr<ParticipantImpl> participant;
  TopicDescription topic;
  wire::EndpointData endpoint;
  std::shared_ptr<rtps::StatefulWriter> rtps;
  std::atomic<bool> closed{false};

  Result<void> write(Bytes data, const WriteOptions& options, bool serialized);
  Result<uint8_t*> loan(size_t body_size);
  Result<void> write_loan(size_t body_size, const WriteOptions& options);
};

class ReaderImpl {
 public:
  std::shared_ptr<ParticipantImpl> participant;
  wire::EndpointData endpoint;
  std::shared_ptr<rtps::StatefulReader> rtps;
  SampleCallback callback;
  LoanCallback loan_callback;  // instead of callback, for a loaning reader
  bool deliver(const rtps::ReceivedSample& s);
};

class RawReaderImpl {
 public:
  // One RTPS reader per class of writer: distinct (topic, type, keyed, reliability, partitions,
  // ownership kind, durable or not), each requesting what every writer of its class accepts
  // (subscription_for_locked()).
  struct Subscription {
    TopicInfo info;
    wire::EndpointData endpoint;
    std::shared_ptr<rtps::StatefulReader> rtps;
    std::vector<Guid> writers;
  };
  std::shared_ptr<ParticipantImpl> participant;
  RawReaderOptions options;
  RawReaderListener listener;
  std::vector<std::unique_ptr<Subscription>> subscriptions;  // guarded by entities_mu_
  // Each matched writer's announcement, set under entities_mu_ before the writer is connected.
  // writers_mu is a leaf lock: the listener may read it from inside delivery.
  mutable std::mutex writers_mu;
  std::unordered_map<Guid, std::shared_ptr<const WriterInfo>> writer_infos;
  bool wants(const std::string& topic) const;
};

// What the receive thread routes by: an immutable snapshot.
struct Routes {
  std::unordered_map<Guid, std::vector<std::shared_ptr<rtps::StatefulReader>>> readers_by_writer;
  std::unordered_map<uint32_t, std::shared_ptr<rtps::StatefulWriter>> writers;  // by entity id
  std::vector<std::shared_ptr<rtps::StatefulReader>> readers;
  Duration min_flush_delay = Duration::max();  // of batching writers
  // The shortest finite lease of our MANUAL_BY_PARTICIPANT writers (max: none): the event
  // thread asserts the participant's liveliness each third of it.
  Duration manual_participant_lease = Duration::max();
};

// The current Routes, published by publish_routes_locked() and read by every receive worker and
// the event thread. A mutex guards the pointer (std::atomic<shared_ptr> in libstdc++ 12 is a
// lock bit too, one ThreadSanitizer cannot see); the version lets a receive worker see at the
// cost of one atomic load per datagram whether it must take the mutex to load a newer snapshot.
class RoutesCell {
 public:
  void publish(std::shared_ptr<const Routes> routes) {
    {
      std::lock_guard lk(mu_);
      routes_.swap(routes);
      version_.fetch_add(1, std::memory_order_release);
    }
    // `routes` (the old snapshot) is released here, outside the lock.
  }
  // The snapshot and, in `version`, its version (never 0).
  std::shared_ptr<const Routes> load(uint64_t& version) const {
    std::lock_guard lk(mu_);
    version = version_.load(std::memory_order_relaxed);
    return routes_;
  }
  std::shared_ptr<const Routes> load() const {
    uint64_t v;
    return load(v);
  }
  // False while `version` names the newest snapshot.
  bool changed_since(uint64_t version) const {
    return version_.load(std::memory_order_acquire) != version;
  }

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const Routes> routes_;
  std::atomic<uint64_t> version_{0};  // bumped by every publish(); 0 before the first
};

// The endpoints of every participant in this process that allows intra-process delivery: a
// writer and a reader both listed here are connected directly. A leaf lock (taken under
// entities_mu_, never the other way round). One per process (participant_matching.cpp).
struct LocalEndpoints {
  std::mutex mu;
  std::unordered_map<Guid, std::weak_ptr<rtps::StatefulReader>> readers;
  std::unordered_map<Guid, bool> writers;
};
LocalEndpoints& local_endpoints();

class ParticipantImpl final : public TransportReceiver,
                              public discovery::DiscoveryListener,
                              public std::enable_shared_from_this<ParticipantImpl> {
 public:
  // participant_impl.cpp
  static Result<std::shared_ptr<ParticipantImpl>> create(const ParticipantOptions& options);
  ~ParticipantImpl() override;
  void close();

  Result<std::shared_ptr<WriterImpl>> create_writer(const TopicDescription& topic,
                                                    const WriterQos& qos);
  Result<std::shared_ptr<ReaderImpl>> create_reader(const TopicDescription& topic,
                                                    const ReaderQos& qos, SampleCallback cb,
                                                    LoanCallback loan_cb = nullptr);
  Result<std::shared_ptr<RawReaderImpl>> create_raw_reader(const RawReaderOptions& options,
                                                           RawReaderListener listener);
  void remove_writer(WriterImpl& w);
  void remove_reader(ReaderImpl& r);
  void remove_raw_reader(RawReaderImpl& r);

  const ParticipantOptions& options() const { return options_; }
  const ReceptionClock& reception_clock() const { return reception_clock_; }
  Guid guid() const { return Guid{prefix_, EntityId{wire::kEntityIdParticipant}}; }
  Transport& transport() { return *transport_; }
  bool closed() const { return closed_.load(); }
  std::vector<DiscoveredParticipant> discovered_participants() const;
  std::vector<DiscoveredTopic> discovered_topics() const;
  void request_types(const GuidPrefix& participant, std::span<const wire::HashedTypeId> type_ids,
                     Duration timeout, TypeLookupCallback done) {
    discovery_->request_types(participant, type_ids, timeout, std::move(done));
  }
  void add_type_objects(std::span<const TypeObjectEntry> types) {
    discovery_->add_type_objects(types);
  }
  ParticipantStats stats() const;
  std::vector<TopicInfo> raw_topics(const RawReaderImpl& r) const;
  size_t raw_matched(const RawReaderImpl& r) const;
  ReaderStats raw_stats(const RawReaderImpl& r) const;
  void raw_resume(const RawReaderImpl& r);

  // TransportReceiver (receive workers): participant_routing.cpp
  void on_datagram(unsigned worker, const uint8_t* data, size_t size) override;
  void on_receive_batch_end(unsigned worker) override;

  // discovery::DiscoveryListener: participant_matching.cpp
  void on_endpoint_discovered(const discovery::RemoteEndpoint& e) override;
  void on_endpoint_lost(const Guid& g) override;

 private:
  struct LocalReader {
    wire::EndpointData endpoint;
    std::shared_ptr<rtps::StatefulReader> rtps;
    std::vector<Guid> matched;        // writers reached over the network (routed)
    std::vector<Guid> local_writers;  // writers reached through shared memory or in-process
    bool raw = false;
  };
  using Deferred = std::vector<std::function<void()>>;

  // participant_impl.cpp
  explicit ParticipantImpl(const ParticipantOptions& options);
  Result<void> start();
  void start_shared_memory();
  EntityId next_entity_id(uint8_t kind);  // under entities_mu_
  void log(const std::string& message) const;

  // participant_matching.cpp (under entities_mu_)
  void match_remote_writer_locked(const discovery::RemoteEndpoint& e, Deferred& deferred,
                                  std::vector<wire::EndpointData>& announce);
  void match_remote_reader_locked(const discovery::RemoteEndpoint& e);
  // Connects a local reader to a matched writer by the best path; false if none is allowed.
  bool connect_writer_locked(LocalReader& lr, const discovery::RemoteEndpoint& e);
  // Returns the writer's samples the reader will never get (remove_writer's).
  UndeliveredSamples disconnect_writer_locked(LocalReader& lr, const Guid& writer);
  // A lost writer's undelivered samples in reader `r` go to a raw reader's on_writer_lost (which
  // reports them) rather than to the log.
  bool told_to_listener_locked(const rtps::StatefulReader* r) const;
  void log_undelivered(const Guid& writer, const std::string& topic, const UndeliveredSamples& u);
  // Adds a matched reader to a local writer by the best path (see reader_path_locked).
  void connect_reader_locked(WriterImpl& w, const discovery::RemoteEndpoint& e);
  rtps::RemoteReaderInfo reader_path_locked(const WriterImpl& w,
                                            const discovery::RemoteEndpoint& e);
  std::shared_ptr<shm::Doorbell> doorbell_locked(const std::string& name);
  // Whether writer `w` and reader `r` match (discovery::match); an incompatible pair is counted,
  // and logged once, as DDS's OFFERED/REQUESTED_INCOMPATIBLE_QOS with the policy named.
  // `newly`: set true when this pair is reported now for the first time.
  bool matches_locked(const wire::EndpointData& w, const wire::EndpointData& r, bool local_writer,
                      discovery::MatchResult* result = nullptr, bool* newly = nullptr);
  std::shared_ptr<const WriterInfo> writer_info_locked(const discovery::RemoteEndpoint& e) const;
  LocalReader* find_local_reader_locked(const std::shared_ptr<rtps::StatefulReader>& r);
  RawReaderImpl::Subscription* subscription_for_locked(RawReaderImpl& raw,
                                                       const wire::EndpointData& writer,
                                                       std::vector<wire::EndpointData>& announce);
  // After matching, with entities_mu_ released: announces the raw readers' new subscriptions
  // (matching them against our own writers too), then runs the deferred listener calls.
  void finish_matching(const std::vector<wire::EndpointData>& announce, Deferred& deferred);

  // participant_routing.cpp
  void publish_routes_locked();
  // After a receive worker's datagram: the routes publish_routes_locked() deferred, if any.
  void publish_deferred_routes();
  std::atomic<bool> routes_deferred_{false};
  bool for_us(const wire::ReceiveContext& ctx) const;

  // participant_timers.cpp
  void schedule_timer(rtps::SteadyTime at);
  // From any thread: makes the timer run on_timer() no later than `at`.
  void wake_at(rtps::SteadyTime at);
  void on_timer();

  // The receive path of one transport worker: its own route snapshot, lookup cache and list of
  // readers owing an ACKNACK, so that workers never share mutable state (participant_routing.cpp).
  class ReceiveWorker final : public wire::Visitor {
   public:
    ParticipantImpl* p = nullptr;
    unsigned index = 0;
    void handle(const uint8_t* data, size_t size);
    void batch_end();

    void on_data(const wire::ReceiveContext&, const wire::DataSubmessage&) override;
    void on_data_frag(const wire::ReceiveContext&, const wire::DataFragSubmessage&) override;
    void on_heartbeat(const wire::ReceiveContext&, const wire::HeartbeatSubmessage&) override;
    void on_acknack(const wire::ReceiveContext&, const wire::AckNackSubmessage&) override;
    void on_gap(const wire::ReceiveContext&, const wire::GapSubmessage&) override;
    void on_nack_frag(const wire::ReceiveContext&, const wire::NackFragSubmessage&) override;
    void on_heartbeat_frag(const wire::ReceiveContext&,
                           const wire::HeartbeatFragSubmessage&) override;

   private:
    template <class M, class Builtin, class Local>
    void route(const wire::ReceiveContext& ctx, const M& m, Builtin&& builtin, Local&& local);
    const std::vector<std::shared_ptr<rtps::StatefulReader>>* readers_of(const Guid& writer);
    void mark_dirty(const std::shared_ptr<rtps::StatefulReader>& r);
    void end_run();

    std::shared_ptr<const Routes> routes_;  // null between batches
    uint64_t routes_version_ = 0;           // of routes_; 0 when it is null
    Time reception_time_;
    Guid cached_writer_;
    const std::vector<std::shared_ptr<rtps::StatefulReader>>* cached_readers_ = nullptr;
    std::vector<std::shared_ptr<rtps::StatefulReader>> dirty_;
    // The reader whose lock this worker holds for a run of DATA submessages (on_data()), or
    // null; held by routes_ for the datagram, released by end_run() before it ends.
    rtps::StatefulReader* run_reader_ = nullptr;
  };

  ParticipantOptions options_;
  ReceptionClock reception_clock_;  // made from options_ (declared after it)
  GuidPrefix prefix_{};
  std::unique_ptr<Transport> transport_;
  std::unique_ptr<discovery::Discovery> discovery_;
  wire::DecodeLimits limits_;
  std::atomic<bool> closed_{false};

  // Guards the five members below, doorbells_ and every RawReaderImpl's subscriptions.
  mutable std::mutex entities_mu_;
  std::vector<std::shared_ptr<WriterImpl>> writers_;
  std::vector<LocalReader> readers_;
  std::vector<std::shared_ptr<RawReaderImpl>> raw_readers_;
  std::unordered_map<Guid, discovery::RemoteEndpoint> remote_;
  // Incompatible (local, remote) pairs already reported, and the count per policy.
  std::set<std::pair<Guid, Guid>> incompatible_seen_;
  uint64_t incompatible_by_policy_[kQosPolicyCount] = {};
  uint32_t next_entity_key_ = 1;

  RoutesCell routes_;

  // Shared memory (null when off): our doorbell and reading thread, and the doorbells of
  // same-host reader participants our writers ring (under entities_mu_).
  std::unique_ptr<shm::ShmReceiver> shm_;
  std::unordered_map<std::string, std::weak_ptr<shm::Doorbell>> doorbells_;

  ReceiveWorker workers_[kMaxReceiveWorkers];
  std::atomic<uint64_t> malformed_{0};
  std::atomic<uint64_t> malformed_by_reason_[16] = {};

  boost::asio::io_context io_;
  boost::asio::steady_timer timer_{io_};
  rtps::SteadyTime next_participant_assertion_{};  // event thread only
  std::thread event_thread_;
};

}  // namespace pubsub::detail
