// Discovery: SPDP (participants) and SEDP (endpoints) as builtin endpoints, the database of
// remote participants and endpoints, and leases.
//
// OVERVIEW
// - SPDP is a best-effort announcement of our ParticipantData every announce_period to the
//   SPDP destinations (multicast group and/or unicast peers), and directly to each participant
//   we discover, so a newcomer finds us at once rather than at the next period.
// - SEDP uses two reliable, transient-local builtin writers (publications, subscriptions) and
//   two builtin readers, built from the same StatefulWriter/StatefulReader as user endpoints.
//   Each discovered participant gets proxies on them (metatraffic unicast locators).
// - The XTypes TypeLookup client (type_lookup.hpp) is two more builtin endpoints, routed here.
// - The participant message writer (RTPS 8.4.13, "writer liveliness protocol") asserts the
//   liveliness of our MANUAL_BY_PARTICIPANT writers: assert_participant_liveliness() writes one
//   ParticipantMessageData of kind MANUAL_LIVELINESS_UPDATE to every participant that has a
//   participant message reader (a reliable, transient-local, KEEP_LAST 1 writer).
// - The receive thread feeds builtin traffic in through the on_* methods and renews leases with
//   renew_lease() on every datagram. The event thread calls on_timer(): announcements, lease
//   expiry, and the builtin endpoints' own timers.
// - Endpoint events go to the DiscoveryListener (the participant), which does the matching.
//   Locking: mu_ guards the database only; it is never held while calling the listener or the
//   builtin endpoints, so the listener may call back (announce()) freely.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "discovery/type_lookup.hpp"
#include "pubsub/participant.hpp"
#include "rtps/reader.hpp"
#include "rtps/writer.hpp"
#include "wire/discovery_data.hpp"

namespace pubsub::discovery {

struct RemoteEndpoint {
  wire::EndpointData data;
  std::vector<Locator> unicast;  // the endpoint's own locators, else its participant's
  std::vector<Locator> multicast;
  bool local = false;      // one of ours
  uint8_t vendor[2] = {};  // its participant's vendor id
};

class DiscoveryListener {
 public:
  virtual ~DiscoveryListener() = default;
  virtual void on_endpoint_discovered(const RemoteEndpoint& endpoint) = 0;
  virtual void on_endpoint_lost(const Guid& endpoint) = 0;
};

struct DiscoveryConfig {
  uint32_t domain_id = 0;
  Duration lease_duration = std::chrono::seconds(10);
  Duration announce_period = std::chrono::seconds(3);
  std::vector<uint8_t> user_data;
  size_t max_sample_size = 1u << 20;
  DiscoveryLimits limits;
  std::function<void(const std::string&)> log;  // the refusals' first lines
};

class Discovery {
 public:
  Discovery(const DiscoveryConfig& config, Transport& transport, const GuidPrefix& prefix,
            DiscoveryListener& listener);

  static bool is_builtin(EntityId id) { return (id.kind() & 0xc0) == 0xc0; }

  // Receive thread: builtin traffic.
  void on_data(const wire::ReceiveContext& ctx, const wire::DataSubmessage& m, Time reception);
  void on_data_frag(const wire::ReceiveContext& ctx, const wire::DataFragSubmessage& m,
                    Time reception);
  void on_heartbeat(const wire::ReceiveContext& ctx, const wire::HeartbeatSubmessage& m);
  void on_gap(const wire::ReceiveContext& ctx, const wire::GapSubmessage& m);
  void on_heartbeat_frag(const wire::ReceiveContext& ctx, const wire::HeartbeatFragSubmessage& m);
  void on_acknack(const wire::ReceiveContext& ctx, const wire::AckNackSubmessage& m);
  void on_nack_frag(const wire::ReceiveContext& ctx, const wire::NackFragSubmessage& m);
  void on_receive_batch_end();
  void renew_lease(unsigned worker, const GuidPrefix& prefix);

  // Our endpoints, published through SEDP.
  void announce(const wire::EndpointData& endpoint);
  // A ParticipantMessageData MANUAL_LIVELINESS_UPDATE: readers renew the liveliness of this
  // participant's MANUAL_BY_PARTICIPANT writers. Any thread.
  void assert_participant_liveliness();
  void withdraw(const wire::EndpointData& endpoint);
  // Sends our SPDP announcement now (start-up) / a dispose of it (shutdown).
  void announce_participant();
  void leave();

  rtps::SteadyTime on_timer(rtps::SteadyTime now);

  std::vector<DiscoveredParticipant> participants() const;
  // XTypes TypeLookup getTypes (Participant::request_types).
  void request_types(const GuidPrefix& participant, std::span<const wire::HashedTypeId> type_ids,
                     Duration timeout, TypeLookupCallback done);
  void add_type_objects(std::span<const TypeObjectEntry> types) { type_server_.add_types(types); }
  // Resolves an endpoint's locators against its participant's defaults.
  bool resolve(const wire::EndpointData& data, RemoteEndpoint& out) const;
  uint64_t malformed() const { return malformed_.load(std::memory_order_relaxed); }
  uint64_t participants_refused() const { return participants_refused_.load(); }
  uint64_t endpoints_refused() const { return endpoints_refused_.load(); }

 private:
  struct RemoteParticipant {
    wire::ParticipantData data;
    std::atomic<int64_t> last_seen_ns{0};
    std::vector<Guid> endpoints;
    rtps::SteadyTime discovered{};  // its first announcement
    uint32_t answered = 0;          // our announcements sent to it in answer (handle_spdp)
  };

  void handle_spdp(const wire::ReceiveContext& ctx, const wire::DataSubmessage& m);
  // mu_ held: why a new participant must be refused ("" = take it).
  std::string participant_over_limit(const wire::ParticipantData& p) const;
  // mu_ held: why a new endpoint of `owner` must be refused ("" = take it).
  std::string endpoint_over_limit(const RemoteParticipant& owner) const;
  // The first refusal of each kind is logged, with the limit; the rest only counted.
  void refused(bool participant, const std::string& what);
  bool handle_sedp(const rtps::ReceivedSample& s, bool publications);
  void add_builtin_proxies(const wire::ParticipantData& p, rtps::SteadyTime now);
  void remove_participant(const GuidPrefix& prefix);
  void send_spdp(std::span<const Locator> to, bool dispose);
  rtps::StatefulWriter* builtin_writer(EntityId id);
  rtps::StatefulReader* builtin_reader_for_writer(EntityId writer_id);

  DiscoveryConfig config_;
  Transport& transport_;
  GuidPrefix prefix_;
  DiscoveryListener& listener_;
  std::vector<uint8_t> spdp_payload_;
  SequenceNumber spdp_sn_ = 0;
  std::mutex spdp_mu_;

  std::unique_ptr<rtps::StatefulWriter> pub_writer_, sub_writer_;
  std::unique_ptr<rtps::StatefulWriter> pmd_writer_;  // participant messages (liveliness)
  std::unique_ptr<rtps::StatefulReader> pub_reader_, sub_reader_;
  TypeLookupClient type_lookup_;
  TypeLookupServer type_server_;

  mutable std::mutex mu_;
  std::unordered_map<GuidPrefix, std::shared_ptr<RemoteParticipant>, GuidHash> participants_;
  // renew_lease()'s cache, one per receive worker (each touched by its worker only).
  struct LeaseCache {
    GuidPrefix prefix{};
    std::shared_ptr<RemoteParticipant> participant;
  };
  LeaseCache lease_cache_[kMaxReceiveWorkers];

  rtps::SteadyTime next_announce_{};
  std::atomic<uint64_t> malformed_{0};
  size_t endpoint_count_ = 0;  // under mu_: the endpoints of all participants_
  std::atomic<uint64_t> participants_refused_{0}, endpoints_refused_{0};
};

}  // namespace pubsub::discovery
