// pubsub-perftest: what both sides share (perftest_internal.hpp): the data topic, the
// participant, the QoS, the transport statistics line, and the endpoints that make ddsperf count
// us as a peer.
//
// Called from the main thread of either side (the subscriber's thread with -transport INTRA);
// DdsperfPeerEndpoints runs one thread of its own, which creates pong writers as ddsperf peers
// appear in discovery, until the main thread destroys it.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>

#include "perftest_internal.hpp"

#include <unistd.h>

namespace perftest::detail {

using namespace std::chrono_literals;

namespace {

const char* const kThroughputTopic = "PubsubPerftest_Data";

// ddsperf's participant GUID as the partition name of its pongs: 4 groups of 8 hex digits.
std::string ddsperf_guidstr(const pubsub::GuidPrefix& prefix) {
  const auto b = pubsub::Guid{prefix, pubsub::EntityId{0x000001c1}}.bytes();
  char s[40];
  std::snprintf(s, sizeof s, "%02x%02x%02x%02x_%02x%02x%02x%02x_%02x%02x%02x%02x_%02x%02x%02x%02x",
                b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12],
                b[13], b[14], b[15]);
  return s;
}

}  // namespace

pubsub::TopicDescription data_topic(const Options& o) {
  if (o.ddsperf_compat) {
    return {o.best_effort ? "DDSPerfUDataKS" : "DDSPerfRDataKS", "KeyedSeq", true};
  }
  return {o.topic.empty() ? kThroughputTopic : o.topic,
          o.keyed ? "pubsub::perftest::KeyedSample" : "pubsub::perftest::Sample", o.keyed};
}

pubsub::Result<std::unique_ptr<pubsub::Participant>> make_participant(const Options& o) {
  pubsub::ParticipantOptions po;
  po.domain_id = o.domain;
  po.interface = o.nic;
  po.intra_process = o.transport == TransportKind::kIntra;
  po.shared_memory = o.transport == TransportKind::kShm;
  // The transport asked for, or nothing: a subscriber must not fall back to UDP unnoticed.
  po.network_data = o.transport == TransportKind::kUdp;
  po.peers = o.peers;
  if (const char* spin = std::getenv("PUBSUB_RECEIVE_SPIN_US")) {  // experiment knob
    po.receive_spin = std::chrono::microseconds(std::atoi(spin));
  }
  po.max_message_size = o.max_message_size;
  if (o.ddsperf_compat) {
    // ddsperf only counts participants announcing "DDSPerf:<has data reader>:<pid>:<host>".
    char host[256] = "?";
    gethostname(host, sizeof host - 1);
    po.user_data =
        "DDSPerf:" + std::string(o.sub ? "1" : "0") + ":" + std::to_string(getpid()) + ":" + host;
  } else {
    po.user_data = o.pub ? "pubsub-perftest:pub" : "pubsub-perftest:sub";
  }
  return pubsub::Participant::create(po);
}

DdsperfPeerEndpoints::DdsperfPeerEndpoints(pubsub::Participant& p, const Options& o)
    : p_(p), o_(o) {
  const char rel = o.best_effort ? 'U' : 'R';
  ping_ = {std::string("DDSPerf") + rel + "PingKS", "KeyedSeq", true};
  pong_ = {std::string("DDSPerf") + rel + "PongKS", "KeyedSeq", true};
  rqos_.reliability =
      o.best_effort ? pubsub::ReliabilityKind::kBestEffort : pubsub::ReliabilityKind::kReliable;
  rqos_.history = {pubsub::HistoryKind::kKeepLast, 1};
  wqos_.reliability = rqos_.reliability;
  wqos_.history = {pubsub::HistoryKind::kKeepLast, 1};
  auto ping_reader = p.create_reader(ping_, rqos_, nullptr);
  auto ping_writer = p.create_writer(ping_, wqos_);
  auto pong_topic = pong_;
  pong_topic.partitions = {ddsperf_guidstr(p.guid().prefix)};
  auto pong_reader = p.create_reader(pong_topic, rqos_, nullptr);
  if (ping_reader) readers_.push_back(std::move(ping_reader).value());
  if (pong_reader) readers_.push_back(std::move(pong_reader).value());
  if (ping_writer) writers_.push_back(std::move(ping_writer).value());
  thread_ = std::thread([this] { watch(); });
}
DdsperfPeerEndpoints::~DdsperfPeerEndpoints() {
  stop_ = true;
  thread_.join();
}

void DdsperfPeerEndpoints::watch() {
  while (!stop_) {
    for (const auto& d : p_.discovered_participants()) {
      if (d.user_data.rfind("DDSPerf:", 0) != 0) continue;
      const std::string part = ddsperf_guidstr(d.guid_prefix);
      if (std::find(seen_.begin(), seen_.end(), part) != seen_.end()) continue;
      seen_.push_back(part);
      auto topic = pong_;
      topic.partitions = {part};
      if (auto w = p_.create_writer(topic, wqos_)) writers_.push_back(std::move(w).value());
    }
    std::this_thread::sleep_for(20ms);
  }
}

pubsub::WriterQos writer_qos(const Options& o, bool batching) {
  pubsub::WriterQos q;
  q.reliability =
      o.best_effort ? pubsub::ReliabilityKind::kBestEffort : pubsub::ReliabilityKind::kReliable;
  q.max_blocking_time = 1s;
  q.resource_limits.max_bytes = std::max<size_t>(64u << 20, size_t{o.datalen} * 4);
  if (o.history_depth > 0) q.history = {pubsub::HistoryKind::kKeepLast, o.history_depth};
  if (batching) {
    q.batching.enabled = true;
    q.batching.max_bytes = static_cast<size_t>(o.batch_size);
    q.batching.max_samples = 1u << 20;
    q.batching.max_flush_delay = 10ms;
  }
  return q;
}

pubsub::ReaderQos reader_qos(const Options& o) {
  pubsub::ReaderQos q;
  q.reliability =
      o.best_effort ? pubsub::ReliabilityKind::kBestEffort : pubsub::ReliabilityKind::kReliable;
  q.resource_limits.max_bytes = std::max<size_t>(64u << 20, size_t{o.datalen} * 4);
  return q;
}

void print_transport_stats(const pubsub::Participant& p) {
  const auto s = p.stats();
  std::fprintf(stderr,
               "pubsub-perftest: transport sent %" PRIu64 " datagrams (%" PRIu64
               " GSO messages), received %" PRIu64 " (%" PRIu64 " GRO messages), %" PRIu64
               " coalescing sleeps\n",
               s.datagrams_sent, s.gso_messages_sent, s.datagrams_received, s.gro_messages_received,
               s.coalescing_sleeps);
}

}  // namespace perftest::detail
