// Helpers shared by the libpubsub unit tests.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstring>
#include <span>
#include <thread>
#include <vector>

#include "pubsub/participant.hpp"
#include "pubsub/testing/fake_network.hpp"

namespace pubsub::test {

// The one datagram a Transport::send call gathers from its parts (for test transports that keep
// or decode what is sent).
inline std::vector<uint8_t> gather(std::span<const ConstBuffer> parts) {
  std::vector<uint8_t> d;
  for (const auto& p : parts) {
    const auto* b = static_cast<const uint8_t*>(p.data);
    d.insert(d.end(), b, b + p.size);
  }
  return d;
}

// Polls pred every millisecond until it holds or the timeout passes.
template <class Pred>
bool eventually(Pred pred, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return pred();
}

// Participants on a FakeNetwork stand for separate hosts: everything goes over the network
// (the same-host tests turn intra_process or shared_memory on themselves).
inline ParticipantOptions fake_options(std::shared_ptr<FakeNetwork> net) {
  ParticipantOptions o;
  use_fake_network(o, std::move(net));
  o.intra_process = false;
  o.shared_memory = false;
  o.announce_period = std::chrono::milliseconds(200);
  o.lease_duration = std::chrono::seconds(2);
  return o;
}

// A payload whose bytes derive from (writer index, sequence), so any corruption shows.
inline std::vector<uint8_t> pattern(uint32_t seq, size_t size) {
  std::vector<uint8_t> v(size);
  uint32_t x = seq * 2654435761u + 12345;
  for (size_t i = 0; i < size; ++i) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    v[i] = static_cast<uint8_t>(x);
  }
  if (size >= 4) std::memcpy(v.data(), &seq, 4);
  return v;
}

inline Bytes as_bytes(const std::vector<uint8_t>& v) {
  return Bytes(reinterpret_cast<const std::byte*>(v.data()), v.size());
}

}  // namespace pubsub::test
