// Transports move RTPS datagrams. A participant owns one; it sends from the caller's thread and
// receives on the transport's own receive threads (workers), which lend each datagram to a
// TransportReceiver for the duration of one call.
//
// UDP (unicast + multicast through Boost.Asio sockets, received with recvmmsg) is the one
// implementation here; ParticipantOptions::transport_factory takes another, as the tests'
// in-process FakeNetwork (libpubsub/testing, target pubsub_testing, not installed).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "pubsub/basics.hpp"

namespace pubsub {

struct ConstBuffer {
  const void* data;
  size_t size;
};

// Where a participant can be reached (advertised in SPDP) and where it sends SPDP.
struct TransportLocators {
  Locator meta_unicast;
  Locator user_unicast;
  std::optional<Locator> meta_multicast;   // SPDP group, when multicast is usable
  std::optional<Locator> user_multicast;   // default data multicast locator
  std::vector<Locator> spdp_destinations;  // group and/or unicast peers for SPDP announcements
};

// Datagrams arrive on up to kMaxReceiveWorkers threads at once; each call names its worker
// (0 .. kMaxReceiveWorkers-1), and one worker's calls never overlap, so a receiver can keep
// per-worker state without locking.
inline constexpr unsigned kMaxReceiveWorkers = 2;

class TransportReceiver {
 public:
  virtual ~TransportReceiver() = default;
  virtual void on_datagram(unsigned worker, const uint8_t* data, size_t size) = 0;
  // After a burst of datagrams: the moment to send acknowledgements gathered over the burst.
  virtual void on_receive_batch_end(unsigned worker) = 0;
};

struct TransportStats {
  uint64_t datagrams_sent = 0;
  uint64_t bytes_sent = 0;
  uint64_t send_errors = 0;
  uint64_t datagrams_received = 0;
  uint64_t bytes_received = 0;
  // Segmentation offload (UdpTransportOptions::segmentation_offload): messages sent with
  // UDP_SEGMENT, each carrying several datagrams, and messages received holding several
  // datagrams (UDP_GRO). The datagram counts above count each datagram of them.
  uint64_t gso_messages_sent = 0;
  uint64_t gro_messages_received = 0;
  // Sleeps of receive coalescing (UdpTransportOptions::receive_coalesce).
  uint64_t coalescing_sleeps = 0;
};

class Transport {
 public:
  virtual ~Transport() = default;
  // Starts the receive thread(s); the receiver must outlive stop().
  virtual Result<void> start(TransportReceiver& receiver) = 0;
  virtual void stop() = 0;
  // Sends one datagram, gathered from parts, to every locator. Thread-safe.
  virtual void send(std::span<const Locator> to, std::span<const ConstBuffer> parts) = 0;
  // Sends several datagrams (each gathered from its parts) to every locator; UDP does it with
  // one sendmmsg per locator. The default sends them one by one.
  virtual void send_many(std::span<const Locator> to,
                         std::span<const std::span<const ConstBuffer>> datagrams) {
    for (const auto& d : datagrams) send(to, d);
  }
  virtual const TransportLocators& locators() const = 0;
  // Largest datagram this transport sends in one piece.
  virtual size_t max_message_size() const = 0;
  // Largest datagram the network carries without IP fragmentation (the MTU's payload): repairs
  // are kept within it, so one lost fragment never makes a writer resend a 64-KiB datagram.
  virtual size_t unfragmented_message_size() const { return max_message_size(); }
  // Largest datagram a writer's batch fills (at least max_message_size()).
  virtual size_t batch_message_size() const { return max_message_size(); }
  // True on a thread that delivers datagrams (which must never block waiting for a datagram).
  virtual bool on_receive_thread() const = 0;
  virtual TransportStats stats() const = 0;
};

struct UdpTransportOptions {
  uint32_t domain_id = 0;
  // Interface name ("eth0") or IPv4 address. Empty: the first interface that is up, has an
  // IPv4 address and supports multicast (else loopback).
  std::string interface;
  // Use multicast for SPDP and data when the interface supports it.
  bool multicast = true;
  // Participant index for the unicast port mapping; -1 takes the first free one.
  int participant_id = -1;
  // Extra unicast addresses (host order IPv4) to send SPDP to, ports of participant ids 0..9.
  std::vector<uint32_t> peers;
  // Socket buffer sizes requested (as root beyond net.core.[rw]mem_max).
  size_t receive_buffer_bytes = 8u << 20;
  size_t send_buffer_bytes = 4u << 20;
  // Largest datagram sent; bigger samples go as DATA_FRAG, smaller ones are batched up to it.
  // 0: samples above the interface MTU minus the IPv4 and UDP headers (at most 65000) are
  // fragmented, so IP never fragments a DATA_FRAG, while batches fill
  // default_batch_message_size() of the MTU.
  size_t max_message_size = 0;
  int multicast_ttl = 1;
  // After receiving, keep polling (without sleeping) this long for the next datagram before
  // blocking: saves the sender a wake-up per datagram under load, at the cost of CPU.
  Duration receive_spin = std::chrono::microseconds(0);
  // Once datagrams queue up (two receives in a row find two or more, or one finds four), sleep
  // this long after each receive that emptied the socket so that they keep queueing instead of
  // waking the receive thread one by one (the sender pays for each wake-up); back to waiting as
  // soon as fewer than two queued. Costs a queued datagram up to this much delay; a ping-pong never
  // queues. 0: off.
  Duration receive_coalesce = std::chrono::microseconds(100);
  // UDP segmentation offload: runs of one-packet datagrams of one size (a large sample's
  // fragments) leave in one sendmmsg message with UDP_SEGMENT (GSO), and receive sockets take
  // such runs in one piece (UDP_GRO). Off: one datagram per message, as on kernels without it
  // (the transport turns it off by itself when the kernel or interface refuses it).
  bool segmentation_offload = true;
};

Result<std::unique_ptr<Transport>> make_udp_transport(const UdpTransportOptions& options);

// The datagram batches fill by default for an interface MTU: the largest that IP splits into
// full packets while staying near Cyclone DDS's MaxMessageSize (14720 B) - one packet
// (MTU - 28) on a jumbo-frame link (9000 -> 8972), ten at MTU 1500 (14792), at most 65000.
// Chosen by measurement (perf/RESULTS.md, "Batches and datagrams at MTU 1500 and 9000"): at
// MTU 1500, one-packet batches ran at 0.27x (2048 B) and 0.40x (4096 B) of ddsperf's rate.
// Fragments stay within one packet: in 14792-B fragments a 63000-B sample through 5 % packet
// loss hardly ever arrived (each fragment lost with 40 %). Repairs of whole samples stay
// within one packet too (Transport::unfragmented_message_size).
size_t default_batch_message_size(int mtu);

}  // namespace pubsub
