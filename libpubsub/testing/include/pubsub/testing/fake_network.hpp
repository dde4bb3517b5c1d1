// FakeNetwork (tests only; target pubsub_testing, not part of the installed library): an
// in-process network that drops, duplicates, reorders and delays datagrams with a seeded
// generator, so protocol tests can inject faults deterministically. Participants join it
// through ParticipantOptions::transport_factory (use_fake_network()).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "pubsub/participant.hpp"
#include "pubsub/transport.hpp"

namespace pubsub {

struct FaultOptions {
  double drop = 0.0;       // probability a datagram is lost (per destination)
  double duplicate = 0.0;  // probability it is delivered twice
  double reorder = 0.0;    // probability it is held back by up to max_reorder_delay
  Duration max_reorder_delay = std::chrono::milliseconds(2);
  Duration latency = std::chrono::microseconds(0);  // added to every datagram
  uint64_t seed = 1;
  // A slow receiver with a bounded socket buffer (as a Cyclone DDS reader's 1 MB): each
  // participant takes in receive_rate bytes/s; what arrives while receive_buffer_bytes are
  // already waiting is dropped. 0: unlimited.
  double receive_rate = 0;
  size_t receive_buffer_bytes = 0;
  // What the transports report as unfragmented_message_size() (as an MTU's payload); 0: their
  // max_message_size.
  size_t unfragmented_message_size = 0;
  // Called with every datagram sent, once per destination, before its fate is decided (on the
  // sending thread, under the network's lock: it must not call back into the network).
  std::function<void(const uint8_t* data, size_t size)> tap;
};

struct FakeNetworkStats {
  uint64_t delivered = 0, dropped = 0, duplicated = 0, reordered = 0;
  uint64_t overflowed = 0;  // dropped because the receiver's buffer was full (receive_rate)
  uint64_t duplicated_user_data = 0;  // duplicated datagrams with a user writer's DATA(_FRAG)
};

// An in-process network: transports created from it reach each other by locator (multicast
// locators reach every member). One delivery thread runs the receivers, so each receiver sees
// its datagrams one at a time, as from a socket.
class FakeNetwork {
 public:
  static std::shared_ptr<FakeNetwork> create(FaultOptions faults = {});
  virtual ~FakeNetwork() = default;
  // Transport for one participant; max_message_size as in UdpTransportOptions (0: 8972, as
  // on a jumbo-frame link).
  virtual std::unique_ptr<Transport> make_transport(size_t max_message_size = 0) = 0;
  virtual void set_faults(const FaultOptions& faults) = 0;
  virtual FakeNetworkStats stats() const = 0;
};

// Makes `options` run over `net` instead of UDP sockets.
inline void use_fake_network(ParticipantOptions& options, std::shared_ptr<FakeNetwork> net) {
  options.transport_factory = [net = std::move(net)](size_t max_message_size) {
    return net->make_transport(max_message_size);
  };
}

}  // namespace pubsub
