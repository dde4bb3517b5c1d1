// pubsub-perftest internals shared by its files (not part of perftest.hpp's interface): the
// payload layout, the participant and QoS both sides make, and the ddsperf peer endpoints.
//
// Files and threads:
//   options.cpp     usage() and the flags; main thread, before anything else runs
//   common.cpp      what is declared here; called from the main thread (DdsperfPeerEndpoints
//                   also runs a discovery-watching thread of its own)
//   subscriber.cpp  run_subscriber(): the main thread (INTRA: the subscriber's thread) waits, the
//                   participant's receive thread counts samples (and echoes pings), a printer
//                   thread prints the interval lines
//   publisher.cpp   run_publisher(): main thread writes (throughput) or watches pings while the
//                   receive thread sends the next one (latency); a printer thread as above
//   intra.cpp       run_intra(): both sides in one process, the subscriber on a thread of its own
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "perftest.hpp"
#include "pubsub/participant.hpp"

namespace perftest::detail {

using Clock = std::chrono::steady_clock;

// A counter that one thread increments and others only read (the receive thread's counts, the
// publisher's written count): a plain load and store rather than a locked read-modify-write.
// Returns the old value.
inline uint64_t bump(std::atomic<uint64_t>& c) {
  const uint64_t v = c.load(std::memory_order_relaxed);
  c.store(v + 1, std::memory_order_relaxed);
  return v;
}

constexpr uint32_t kKindData = 0;
constexpr uint32_t kKindEnd = 1;
constexpr uint32_t kKindPing = 2;
constexpr uint32_t kHeaderBytes = 20;        // seq, kind, timestamp, key
constexpr uint32_t kCompatHeaderBytes = 12;  // seq, keyval, baggage length

const char* const kEchoTopic = "PubsubPerftest_Echo";

inline uint32_t get_u32(const std::byte* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

pubsub::TopicDescription data_topic(const Options& o);
pubsub::Result<std::unique_ptr<pubsub::Participant>> make_participant(const Options& o);

pubsub::WriterQos writer_qos(const Options& o, bool batching);
pubsub::ReaderQos reader_qos(const Options& o);

// The participant's UDP traffic on stderr: datagrams, and how many left in GSO messages, arrived
// in GRO messages, and how often receive coalescing slept.
void print_transport_stats(const pubsub::Participant& p);

// The endpoints every ddsperf process has besides its data reader/writer, so that ddsperf counts
// us as a matched peer (-Qminmatch): ping reader and writer, a pong reader in the partition named
// after our GUID, and a pong writer in each ddsperf peer's partition. Pings are not answered.
// Made and destroyed by the main thread; a thread of its own watches discovery for ddsperf peers
// meanwhile.
class DdsperfPeerEndpoints {
 public:
  DdsperfPeerEndpoints(pubsub::Participant& p, const Options& o);
  ~DdsperfPeerEndpoints();

 private:
  void watch();

  pubsub::Participant& p_;
  const Options& o_;
  pubsub::TopicDescription ping_, pong_;
  pubsub::ReaderQos rqos_;
  pubsub::WriterQos wqos_;
  std::vector<std::unique_ptr<pubsub::Reader>> readers_;
  std::vector<std::unique_ptr<pubsub::Writer>> writers_;
  std::vector<std::string> seen_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace perftest::detail
