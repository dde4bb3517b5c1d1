// ParticipantImpl: the runtime behind pubsub::Participant.
//
// OVERVIEW
// - Owns the transport, the Discovery agent, the local endpoints and an Asio io_context run by
//   one event thread (timers of discovery, writers and readers).
// - Receive path (the transport's receive workers, each with its own ReceiveWorker state):
//   on_datagram() renews the sender's lease, decodes the message, and routes each submessage:
//   builtin entity ids
//   to Discovery, DATA/DATA_FRAG/HEARTBEAT/GAP/HEARTBEAT_FRAG by remote writer GUID to the local
//   readers matched with it, ACKNACK/NACK_FRAG by writer entity id to the local writer. Routes
//   are an immutable snapshot (Routes) swapped atomically on every matching change, so the
//   receive thread reads them without a lock. Readers that owe an ACKNACK are collected and
//   answered at on_receive_batch_end().
// - Matching runs on whichever thread learns something (receive thread for SEDP, the caller for
//   new local endpoints, the event thread for lease expiry) under entities_mu_.
// Lock order: SEDP reader -> entities_mu_ -> endpoint (writer/reader) locks -> transport.
// Nothing holding an endpoint lock takes entities_mu_.
#pragma once

#include <utility>  // before asio: Boost 1.74's awaitable.hpp uses std::exchange

#include <atomic>
#include <boost/asio.hpp>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "discovery/discovery.hpp"
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
  // One RTPS reader per distinct (topic, type, keyed, reliability, partitions) offered.
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
  bool wants(const std::string& topic) const;
};

// What the receive thread routes by: an immutable snapshot.
struct Routes {
  std::unordered_map<Guid, std::vector<std::shared_ptr<rtps::StatefulReader>>> readers_by_writer;
  std::unordered_map<uint32_t, std::shared_ptr<rtps::StatefulWriter>> writers;  // by entity id
  std::vector<std::shared_ptr<rtps::StatefulReader>> readers;
  Duration min_flush_delay = Duration::max();  // of batching writers
};

class ParticipantImpl final : public TransportReceiver,
                              public discovery::DiscoveryListener,
                              public std::enable_shared_from_this<ParticipantImpl> {
 public:
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
  Guid guid() const { return Guid{prefix_, EntityId{wire::kEntityIdParticipant}}; }
  Transport& transport() { return *transport_; }
  bool closed() const { return closed_.load(); }
  std::vector<DiscoveredParticipant> discovered_participants() const;
  ParticipantStats stats() const;
  std::vector<TopicInfo> raw_topics(const RawReaderImpl& r) const;
  size_t raw_matched(const RawReaderImpl& r) const;
  ReaderStats raw_stats(const RawReaderImpl& r) const;
  void raw_resume(const RawReaderImpl& r);

  // TransportReceiver (receive workers)
  void on_datagram(unsigned worker, const uint8_t* data, size_t size) override;
  void on_receive_batch_end(unsigned worker) override;

  // discovery::DiscoveryListener
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

  explicit ParticipantImpl(const ParticipantOptions& options);
  Result<void> start();
  EntityId next_entity_id(uint8_t kind);
  void match_remote_writer_locked(const discovery::RemoteEndpoint& e, Deferred& deferred,
                                  std::vector<wire::EndpointData>& announce);
  void match_remote_reader_locked(const discovery::RemoteEndpoint& e);
  // Connects a local reader to a matched writer by the best path; false if none is allowed.
  bool connect_writer_locked(LocalReader& lr, const discovery::RemoteEndpoint& e);
  void disconnect_writer_locked(LocalReader& lr, const Guid& writer);
  // Adds a matched reader to a local writer by the best path (see reader_path_locked).
  void connect_reader_locked(WriterImpl& w, const discovery::RemoteEndpoint& e);
  rtps::RemoteReaderInfo reader_path_locked(const WriterImpl& w,
                                            const discovery::RemoteEndpoint& e);
  std::shared_ptr<shm::Doorbell> doorbell_locked(const std::string& name);
  LocalReader* find_local_reader_locked(const std::shared_ptr<rtps::StatefulReader>& r);
  void log(const std::string& message) const;
  void start_shared_memory();
  RawReaderImpl::Subscription* subscription_for_locked(RawReaderImpl& raw,
                                                       const wire::EndpointData& writer,
                                                       std::vector<wire::EndpointData>& announce);
  void publish_routes_locked();
  void schedule_timer(rtps::SteadyTime at);
  // From any thread: makes the timer run on_timer() no later than `at`.
  void wake_at(rtps::SteadyTime at);
  void on_timer();
  bool for_us(const wire::ReceiveContext& ctx) const;

  // The receive path of one transport worker: its own route snapshot, lookup cache and list of
  // readers owing an ACKNACK, so that workers never share mutable state.
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
    void mark_dirty(rtps::StatefulReader* r);

    std::shared_ptr<const Routes> routes_;
    Time reception_time_;
    Guid cached_writer_;
    const std::vector<std::shared_ptr<rtps::StatefulReader>>* cached_readers_ = nullptr;
    std::vector<rtps::StatefulReader*> dirty_;
  };

  ParticipantOptions options_;
  GuidPrefix prefix_{};
  std::unique_ptr<Transport> transport_;
  std::unique_ptr<discovery::Discovery> discovery_;
  wire::DecodeLimits limits_;
  std::atomic<bool> closed_{false};

  mutable std::mutex entities_mu_;
  std::vector<std::shared_ptr<WriterImpl>> writers_;
  std::vector<LocalReader> readers_;
  std::vector<std::shared_ptr<RawReaderImpl>> raw_readers_;
  std::unordered_map<Guid, discovery::RemoteEndpoint> remote_;
  uint32_t next_entity_key_ = 1;

  std::atomic<std::shared_ptr<const Routes>> routes_;

  // Shared memory (null when off): our doorbell and reading thread, and the doorbells of
  // same-host reader participants our writers ring.
  std::unique_ptr<shm::ShmReceiver> shm_;
  std::unordered_map<std::string, std::weak_ptr<shm::Doorbell>> doorbells_;

  ReceiveWorker workers_[kMaxReceiveWorkers];
  std::atomic<uint64_t> malformed_{0};
  std::atomic<uint64_t> malformed_by_reason_[16] = {};

  boost::asio::io_context io_;
  boost::asio::steady_timer timer_{io_};
  std::thread event_thread_;
};

}  // namespace pubsub::detail
