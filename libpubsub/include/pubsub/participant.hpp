// Participant: the entry point of libpubsub. One participant joins one DDS domain on one network
// interface, discovers others (SPDP/SEDP) and creates writers and readers.
//
//   auto p = pubsub::Participant::create({.domain_id = 0, .interface = "eth0"});
//   auto w = p.value()->create_writer({"Temperature", "sensors::Reading"});
//   w.value()->write(cdr_bytes);
//
// Threads: a participant runs two receive threads (the transport's workers: the data socket,
// and discovery/multicast) and one event thread (timers: heartbeats, acknowledgement retries,
// announcements, leases), and with shared memory on a shared-memory receive thread. Writers
// publish on the caller's thread. Listeners run on the thread that delivered the sample: a UDP
// receive thread, the shared-memory thread, or - for an intra-process writer - the writing thread
// (with that writer's lock held). They must not block for long, nor call back into the
// participant (create_*/remove_*, RawReader::stats()/topics()): they hold their reader's lock,
// which ranks below the participant's. One reader's listener calls never overlap.
// Destroy writers and readers before their participant (the participant's destructor closes
// them if they are still alive, after which their calls return kClosed).
#pragma once

#include <array>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "pubsub/basics.hpp"
#include "pubsub/qos.hpp"
#include "pubsub/reader.hpp"
#include "pubsub/stats.hpp"
#include "pubsub/transport.hpp"
#include "pubsub/writer.hpp"

namespace pubsub {

namespace detail {
class ParticipantImpl;
}

// How much remote participants may make discovery remember, so that a participant that
// announces 100 000 endpoints, or 100 000 participants announced from one address, cannot grow
// this one without bound. The defaults are above what real systems reach (ROS 2 processes have
// hundreds of endpoints; a domain a few hundred participants). A participant over a limit is
// ignored (no proxies, no answer); an endpoint over one is acknowledged and forgotten, as if
// never announced. Either frees up when others leave (lease expiry or dispose).
struct DiscoveryLimits {
  size_t max_participants = 4096;  // remote participants remembered at once
  // Of them, announcing the same IPv4 address (their first metatraffic, else default unicast
  // locator; those announcing none count as one address).
  size_t max_participants_per_address = 1024;
  size_t max_endpoints_per_participant = 10000;  // readers and writers of one participant
  size_t max_endpoints = 100000;                 // readers and writers of all of them
};

struct ParticipantOptions {
  uint32_t domain_id = 0;
  // Interface name ("eth0") or IPv4 address; empty: the first up, multicast-capable interface.
  std::string interface;
  // Multicast for discovery and data where the interface supports it.
  bool multicast = true;
  // Participant index for unicast ports (7410 + 250*domain + 2*id); -1 takes the first free.
  int participant_id = -1;
  // Unicast discovery peers (IPv4 addresses) in addition to multicast.
  std::vector<std::string> peers;
  // How long others keep us without hearing from us; we announce every announce_period.
  Duration lease_duration = std::chrono::seconds(10);
  Duration announce_period = std::chrono::seconds(3);
  // Largest datagram (Cyclone's MaxMessageSize); samples above it are fragmented (DATA_FRAG),
  // smaller ones batched up to it. 0: fragments fit the interface MTU (MTU - 28, at most
  // 65000), so IP never fragments them, while batches fill default_batch_message_size() of the
  // MTU (MTU - 28 on a jumbo-frame link, ten full packets at MTU 1500: 14792 B, which IP
  // fragments) - and Fast DDS readers, which keep up only with the 64-KiB datagrams of their
  // own writers, get datagrams of up to 65000 bytes when only such readers are matched. A value
  // set here holds for every reader. Repairs of whole samples stay within one packet.
  size_t max_message_size = 0;
  // Socket receive buffer requested (forced beyond net.core.rmem_max when running as root).
  size_t socket_receive_buffer = 8u << 20;
  // Largest sample a reader reassembles; bigger ones are dropped and counted.
  size_t max_sample_size = 256u << 20;
  // Flow-control window of reliable writers: unacknowledged bytes before write() waits.
  size_t max_unacked_bytes = 4u << 20;
  // UDP receive thread: keep polling this long after traffic before sleeping (see
  // UdpTransportOptions::receive_spin).
  Duration receive_spin = std::chrono::microseconds(0);
  // UDP segmentation offload (UdpTransportOptions::segmentation_offload): a large sample's
  // fragments leave in one system call message and arrive in one (GSO/GRO). The environment
  // variable PUBSUB_UDP_GSO=off also turns it off.
  bool udp_segmentation_offload = true;
  // UDP receive coalescing under load (UdpTransportOptions::receive_coalesce); 0: off. The
  // environment variable PUBSUB_RECEIVE_COALESCE_US overrides it.
  Duration receive_coalesce = std::chrono::microseconds(100);
  // Discovery's bounds (DiscoveryLimits): what remote participants may make this participant
  // remember. Beyond them, announcements are refused, counted (ParticipantStats) and logged once.
  DiscoveryLimits discovery_limits;
  // Reception timestamps (SampleInfo, RawSample) from a ReceptionClock: false, the wall clock
  // (DDS's choice); true, the wall clock at the participant's creation plus the monotonic time
  // since, so that a step of the wall clock (an operator, NTP at boot) neither reorders nor
  // spaces out what is received. Participant::reception_clock() tells how far the wall clock
  // has stepped since. Samples from writers in the same process carry their source timestamp.
  bool steady_reception_clock = false;
  // Participant user data (PID_USER_DATA), e.g. an application name.
  std::string user_data;
  // Same-host delivery (docs/SAME_HOST.md). Intra-process: a writer hands samples
  // to matched readers of participants in the same process directly. Shared memory: writers
  // keep their history in a shared segment that readers on the same host (same boot, network
  // and IPC namespace) read in place. The environment variable PUBSUB_SHM=off also turns
  // shared memory off. Everything else, and whatever cannot use these, goes over UDP.
  bool intra_process = true;
  bool shared_memory = true;
  // Readers take samples over the network too; false: only from writers reached through shared
  // memory or in-process (the recorder's "transports": ["shm"]).
  bool network_data = true;
  // Shared-memory receive thread: keep polling this long after the last sample before sleeping
  // on the doorbell (latency against CPU).
  Duration shm_receive_spin = std::chrono::microseconds(50);
  // Where libpubsub reports what it decided on its own (one line each: why shared memory is
  // not used, a dead peer's segment removed...). Default: stderr, prefixed "pubsub: ".
  std::function<void(const std::string&)> log;
  // Builds the participant's transport instead of UDP sockets (argument: max_message_size); the
  // tests' FakeNetwork (pubsub/testing/fake_network.hpp) is one.
  std::function<std::unique_ptr<Transport>(size_t)> transport_factory;
};

struct TopicDescription {
  std::string name;
  std::string type_name;
  bool keyed = false;
  std::vector<std::string> partitions;       // empty: the default partition
  std::vector<uint8_t> type_information;     // PID_TYPE_INFORMATION blob to announce, if any
  std::vector<int16_t> data_representation;  // announced; empty: XCDR1 (readers: XCDR1+2)
};

// One answer to request_types(), or the end of the wait for one.
struct TypeLookupReply {
  enum class Kind {
    kReply,        // a participant answered (see `types`)
    kTimeout,      // no answer ended the request within its timeout
    kUnsupported,  // the participant does not offer the TypeLookup service, or is unknown
  };
  Kind kind = Kind::kReply;
  GuidPrefix from{};
  // kReply: the TypeLookup_getTypes_Out as sent (XCDR2, from its DHEADER); empty when the
  // participant answered with an exception or an error code (`error`).
  std::vector<uint8_t> types;
  bool little_endian = true;
  int32_t error = 0;
};
// Returns true when the request is done (no later reply or timeout is reported).
using TypeLookupCallback = std::function<bool(const TypeLookupReply&)>;

// A TypeObject this participant's TypeLookup service hands out: its hashed TypeIdentifier
// (equivalence kind 0xf1/0xf2 + 14-byte hash) and its XCDR2 bytes (little endian, DHEADER first).
struct TypeObjectEntry {
  std::array<uint8_t, 15> id{};
  std::vector<uint8_t> type_object;
};

struct DiscoveredParticipant {
  GuidPrefix guid_prefix{};
  uint8_t vendor[2] = {};
  std::string user_data;
  std::vector<Locator> unicast;
  Duration lease_duration{};
};

// A topic other participants announce endpoints on (remote ones only), as discovery knows it now.
struct DiscoveredTopic {
  std::string name;
  std::string type_name;  // of its first writer (else reader) discovered
  size_t writers = 0;
  size_t readers = 0;
};

class Participant {
 public:
  static Result<std::unique_ptr<Participant>> create(const ParticipantOptions& options);
  ~Participant();
  Participant(const Participant&) = delete;
  Participant& operator=(const Participant&) = delete;

  Result<std::unique_ptr<Writer>> create_writer(const TopicDescription& topic,
                                                const WriterQos& qos = {});
  Result<std::unique_ptr<Reader>> create_reader(const TopicDescription& topic, const ReaderQos& qos,
                                                SampleCallback on_sample);
  // A reader whose listener gets LoanedSamples it may keep (zero copy from writers on this
  // host; see LoanedSample for the rules).
  Result<std::unique_ptr<Reader>> create_loaning_reader(const TopicDescription& topic,
                                                        const ReaderQos& qos,
                                                        LoanCallback on_sample);
  Result<std::unique_ptr<RawReader>> create_raw_reader(const RawReaderOptions& options,
                                                       RawReaderListener listener);

  // XTypes TypeLookup getTypes (DDS-XTypes 1.3, 7.6.3.3): asks for the TypeObjects of
  // `type_ids` (hashed TypeIdentifiers: equivalence kind 0xf1/0xf2 and the 14-byte hash),
  // through the builtin TypeLookup endpoints. The request reaches every participant offering
  // the service; `participant` must be one of them. `done` runs on a participant thread for
  // each reply to it until it returns true, or once with kTimeout after `timeout`, or at once
  // (on the caller's thread) with kUnsupported. It must not call into the participant.
  void request_types(const GuidPrefix& participant,
                     std::span<const std::array<uint8_t, 15>> type_ids, Duration timeout,
                     TypeLookupCallback done);
  // Adds TypeObjects to what this participant's TypeLookup service answers getTypes requests
  // with (the types of the TypeInformation its writers announce: TopicDescription).
  void add_type_objects(std::span<const TypeObjectEntry> types);

  Guid guid() const;
  const ParticipantOptions& options() const;
  // The clock this participant's reception timestamps come from (steady_reception_clock).
  const ReceptionClock& reception_clock() const;
  std::vector<DiscoveredParticipant> discovered_participants() const;
  // Every topic remote participants have writers or readers on, by name.
  std::vector<DiscoveredTopic> discovered_topics() const;
  ParticipantStats stats() const;
  // Unicast locator of this participant's user traffic (its address and port).
  Locator unicast_locator() const;

 private:
  explicit Participant(std::shared_ptr<detail::ParticipantImpl> impl);
  std::shared_ptr<detail::ParticipantImpl> impl_;
};

}  // namespace pubsub
