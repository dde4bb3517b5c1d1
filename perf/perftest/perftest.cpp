// pubsub-perftest implementation. Threads: main (publisher loop, or subscriber wait), the
// participant's receive thread (subscriber counting, latency echoes), and a printer thread for
// the once-a-second interval lines (stderr, unless -noPrint).
#include "perftest.hpp"
#include "perftest_types.hpp"

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <random>
#include <thread>
#include <unordered_map>

#include "body_hash.hpp"
#include "interval_printer.hpp"
#include "pubsub/participant.hpp"
#include "summary_json.hpp"

#include <unistd.h>

namespace perftest {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// A counter that one thread increments and others only read (the receive thread's counts, the
// publisher's written count): a plain load and store rather than a locked read-modify-write.
// Returns the old value.
uint64_t bump(std::atomic<uint64_t>& c) {
  const uint64_t v = c.load(std::memory_order_relaxed);
  c.store(v + 1, std::memory_order_relaxed);
  return v;
}

constexpr uint32_t kKindData = 0;
constexpr uint32_t kKindEnd = 1;
constexpr uint32_t kKindPing = 2;
constexpr uint32_t kHeaderBytes = 20;        // seq, kind, timestamp, key
constexpr uint32_t kCompatHeaderBytes = 12;  // seq, keyval, baggage length

const char* const kThroughputTopic = "PubsubPerftest_Data";
const char* const kEchoTopic = "PubsubPerftest_Echo";

// ---- helpers ----------------------------------------------------------------------------------

uint32_t get_u32(const std::byte* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
void put_u32(uint8_t* p, uint32_t v) {
  std::memcpy(p, &v, 4);
}

pubsub::KeyHash key_hash_of(uint32_t key) {
  const uint8_t be[4] = {static_cast<uint8_t>(key >> 24), static_cast<uint8_t>(key >> 16),
                         static_cast<uint8_t>(key >> 8), static_cast<uint8_t>(key)};
  return pubsub::KeyHash::from_key_cdr_be(pubsub::Bytes(reinterpret_cast<const std::byte*>(be), 4));
}

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

// ddsperf's participant GUID as the partition name of its pongs: 4 groups of 8 hex digits.
std::string ddsperf_guidstr(const pubsub::GuidPrefix& prefix) {
  const auto b = pubsub::Guid{prefix, pubsub::EntityId{0x000001c1}}.bytes();
  char s[40];
  std::snprintf(s, sizeof s, "%02x%02x%02x%02x_%02x%02x%02x%02x_%02x%02x%02x%02x_%02x%02x%02x%02x",
                b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12],
                b[13], b[14], b[15]);
  return s;
}

// The endpoints every ddsperf process has besides its data reader/writer, so that ddsperf counts
// us as a matched peer (-Qminmatch): ping reader and writer, a pong reader in the partition named
// after our GUID, and a pong writer in each ddsperf peer's partition. Pings are not answered.
class DdsperfPeerEndpoints {
 public:
  DdsperfPeerEndpoints(pubsub::Participant& p, const Options& o) : p_(p), o_(o) {
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
  ~DdsperfPeerEndpoints() {
    stop_ = true;
    thread_.join();
  }

 private:
  void watch() {
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

bool batching_on(const Options& o) {
  return !o.latency_test && o.batch_size > 0 && o.datalen < static_cast<uint32_t>(o.batch_size);
}

Clock::duration seconds_of(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

std::string fmt_hex(uint64_t v) {
  char b[20];
  std::snprintf(b, sizeof b, "%016" PRIx64, v);
  return b;
}

}  // namespace

// ---- options ----------------------------------------------------------------------------------

std::string usage() {
  return "usage: pubsub-perftest -pub|-sub [options]\n"
         "  -datalen N            sample size in bytes (default 100; >= 20, >= 12 with "
         "-ddsperfCompat)\n"
         "  -batchSize BYTES      batch samples until they reach BYTES, within one datagram;\n"
         "                        0 = off (default 8192 in throughput mode when -datalen is\n"
         "                        below it)\n"
         "  -best                 best effort (default reliable)\n"
         "  -keyed                keyed topic; -instances N instances (default 1)\n"
         "  -exec SECONDS         publisher run time; subscriber maximum wait (default 10)\n"
         "  -latencyTest          ping-pong latency instead of throughput\n"
         "  -numSubscribers N     publisher waits for N subscribers (default 1)\n"
         "  -numPublishers N      subscriber waits for N publishers' end of run (default 1)\n"
         "  -domain D             DDS domain (default 1)\n"
         "  -nic IFACE|ADDR       network interface\n"
         "  -peer ADDR            unicast discovery peer (repeatable)\n"
         "  -maxMessageSize B     largest datagram, for every reader (default: MTU - 28,\n"
         "                        batches 14792 at MTU 1500, and\n"
         "                        64 KiB to Fast DDS readers)\n"
         "  -noPrint              no interval lines\n"
         "  -noOutputHeaders      no CSV header line\n"
         "  -payload zero|random  payload bytes (default zero)\n"
         "  -ddsperfCompat        Cyclone ddsperf's KeyedSeq on DDSPerf[RU]DataKS\n"
         "  -summaryJson FILE     write counts, loss and a payload checksum as JSON (INTRA: the\n"
         "                        publisher's to FILE.pub, the subscriber's to FILE.sub)\n"
         "  -waitSubscribers S    how long the publisher waits for subscribers (default 30)\n"
         "  -historyDepth N       publisher history KEEP_LAST N instead of KEEP_ALL\n"
         "  -topic NAME           data topic name (default PubsubPerftest_Data)\n"
         "  -pubRate N            publish N samples per second (default: as fast as possible)\n"
         "  -transport UDPv4|SHMEM|INTRA\n"
         "                        UDPv4 (default): the network, even on one host; SHMEM: shared\n"
         "                        memory between processes on one host; INTRA: publisher and\n"
         "                        subscriber in this process (no -pub/-sub)\n"
         "  -zeroCopy             the publisher fills loaned buffers in place (Writer::loan),\n"
         "                        the subscriber takes samples as loans (LoanedSample)\n";
}

namespace {

// pubsub-perftest's own flags; false when `f` is not one of them or its value is bad.
bool parse_own_flag(FlagReader& r, const std::string& f, Options& o) {
  double d = 0;
  if (f == "batchsize") {
    if (!r.number("a size in bytes (0..65000)", 0, 65000, d)) return false;
    o.batch_size = static_cast<long>(d);
  } else if (f == "keyed") {
    o.keyed = true;
  } else if (f == "instances") {
    if (!r.number("a count (1..1000000)", 1, 1e6, d)) return false;
    o.instances = static_cast<uint32_t>(d);
  } else if (f == "maxmessagesize") {
    if (!r.number("a datagram size (1024..65000)", 1024, 65000, d)) return false;
    o.max_message_size = static_cast<size_t>(d);
  } else if (f == "payload") {
    const char* v = r.value("zero or random");
    if (!v) return false;
    if (std::string(v) == "zero") {
      o.payload = Payload::kZero;
    } else if (std::string(v) == "random") {
      o.payload = Payload::kRandom;
    } else {
      return r.fail("-payload: '" + std::string(v) + "' is not zero or random");
    }
  } else if (f == "ddsperfcompat") {
    o.ddsperf_compat = true;
  } else if (f == "pubrate") {
    if (!r.number("samples per second (0.001..10000000)", 0.001, 1e7, d)) return false;
    o.pub_rate = d;
  } else if (f == "transport") {
    return r.transport(o.transport);
  } else if (f == "zerocopy") {
    o.zero_copy = true;
  } else {
    return r.unknown();
  }
  return true;
}

}  // namespace

bool parse_options(int argc, char** argv, Options& o, std::string& error) {
  FlagReader r(argc, argv);
  std::string f;
  while (r.next(f)) {
    if (!parse_common_flag(r, f, o) && !r.failed()) parse_own_flag(r, f, o);
  }
  if (r.failed()) {
    error = r.error();
    return false;
  }
  if (o.transport == TransportKind::kIntra) {
    if (o.pub || o.sub) {
      error = "-transport INTRA runs both sides: leave out -pub and -sub";
      return false;
    }
    if (o.ddsperf_compat) {
      error = "-transport INTRA and -ddsperfCompat exclude each other";
      return false;
    }
  } else if (o.pub == o.sub) {
    error = "give exactly one of -pub and -sub";
    return false;
  }
  const uint32_t min_len = o.ddsperf_compat ? kCompatHeaderBytes : kHeaderBytes;
  if (o.datalen < min_len) {
    error = "-datalen must be at least " + std::to_string(min_len) +
            (o.ddsperf_compat ? " with -ddsperfCompat" : "");
    return false;
  }
  if (o.ddsperf_compat) {
    o.keyed = true;
    if (o.latency_test) {
      error = "-latencyTest is not available with -ddsperfCompat (use ddsperf ping/pong)";
      return false;
    }
  }
  // Batching by default only when publishing flat out: a paced sample would wait for the flush.
  if (o.batch_size < 0) o.batch_size = o.latency_test || o.pub_rate > 0 ? 0 : 8192;
  return true;
}

// ---- subscriber -------------------------------------------------------------------------------

namespace {

struct WriterCount {
  uint64_t samples = 0;
  uint64_t bytes = 0;
  uint64_t lost = 0;
  uint64_t checksum = 0;
  uint32_t next_seq = 1;       // our payloads
  std::vector<uint32_t> eseq;  // ddsperf payloads: expected seq per key
  bool ended = false;
  uint32_t end_seq = 0;
  uint32_t first_seq = 0, last_seq = 0;
};

class SubscriberState {
 public:
  explicit SubscriberState(const Options& o) : o_(o) {}

  // Receive thread.
  void on_sample(const pubsub::SampleInfo& info, pubsub::Bytes body) {
    // The clock is read for the first sample and every 64th (and at the end of the run, see
    // count_ours): at millions of samples per second reading it for each costs more than
    // delivering them. With -ddsperfCompat (no end marker) every sample is timed.
    const auto now =
        o_.ddsperf_compat || (bump(total_seen_) & 63) == 0 ? Clock::now() : Clock::time_point{};
    if (o_.ddsperf_compat) {
      std::lock_guard lk(mu_);
      count_compat(writer(info.writer), body, now);
      return;
    }
    // One data reader, whose callbacks libpubsub never runs at the same time: the counts need
    // no lock. It is taken for what other threads look at: the writers' table (a new writer)
    // and the end of a run (count_ours), after which this writer's counts no longer change.
    WriterCount* w = cached_;
    if (!w || cached_guid_ != info.writer) {
      std::lock_guard lk(mu_);
      w = &writer(info.writer);
    }
    count_ours(*w, body, now);
  }

  WriterCount& writer(const pubsub::Guid& g) {
    if (!cached_ || cached_guid_ != g) {
      cached_ = &writers_[g];
      cached_guid_ = g;
    }
    return *cached_;
  }

  void count_ours(WriterCount& w, pubsub::Bytes body, Clock::time_point now) {
    if (body.size() < kHeaderBytes) {
      malformed_++;
      return;
    }
    const uint32_t seq = get_u32(body.data());
    const uint32_t kind = get_u32(body.data() + 4);
    if (kind == kKindEnd) {
      std::lock_guard lk(mu_);
      if (!w.ended && total_ > 0) last_ = Clock::now();  // the run's last sample came just before
      if (!w.ended) {
        w.ended = true;
        w.end_seq = seq;
        if (seq >= w.next_seq) w.lost += seq - w.next_seq + 1;  // the tail never arrived
        ended_writers_++;
        cv_.notify_all();
      }
      return;
    }
    if (kind != kKindData || w.ended) return;
    note_sample(w, body, now);
    if (seq < w.next_seq) {
      duplicates_++;
      return;
    }
    if (seq != w.next_seq) {
      w.lost += seq - w.next_seq;
      lost_total_.fetch_add(seq - w.next_seq, std::memory_order_relaxed);
    }
    w.next_seq = seq + 1;
    w.last_seq = seq;
    if (!w.first_seq) w.first_seq = seq;
  }

  void count_compat(WriterCount& w, pubsub::Bytes body, Clock::time_point now) {
    if (body.size() < kCompatHeaderBytes) {
      malformed_++;
      return;
    }
    const uint32_t seq = get_u32(body.data());
    const uint32_t key = get_u32(body.data() + 4);
    if (key >= o_.instances) {
      bad_keys_++;
      return;
    }
    note_sample(w, body, now);
    const uint32_t n = o_.instances;
    if (w.eseq.empty()) {
      // As ddsperf: the first sample of a publication sets every key's expectation.
      w.eseq.resize(n);
      for (uint32_t i = 0; i < n; ++i) w.eseq[i] = seq + (i - key) + (i <= key ? n : 0);
      w.first_seq = seq;
    } else {
      w.lost += seq - w.eseq[key];
      lost_total_.fetch_add(seq - w.eseq[key], std::memory_order_relaxed);
      w.eseq[key] = seq + n;
    }
    w.last_seq = seq;
  }

  void note_sample(WriterCount& w, pubsub::Bytes body, Clock::time_point now) {
    if (total_ == 0) first_ = now == Clock::time_point{} ? Clock::now() : now;
    if (now != Clock::time_point{}) last_ = now;
    bump(total_);
    w.samples++;
    w.bytes += body.size();
    if (!o_.summary_json.empty()) {
      w.checksum += body_hash(reinterpret_cast<const uint8_t*>(body.data()), body.size());
    }
  }

  // Main thread: waits for every publisher's end of run (or, with ddsperf, for its writers to
  // leave), up to -exec seconds.
  bool wait(const pubsub::Reader& reader) {
    const auto deadline = Clock::now() + std::chrono::duration<double>(o_.exec_seconds);
    bool had_writers = false;
    while (Clock::now() < deadline) {
      // matched_writers() takes the reader's lock, which the receive thread holds while it
      // calls on_sample(): never ask for it while holding mu_.
      const size_t matched = o_.ddsperf_compat ? reader.matched_writers() : 0;
      std::unique_lock lk(mu_);
      if (!o_.ddsperf_compat && ended_writers_ >= o_.num_publishers) return true;
      if (o_.ddsperf_compat) {
        if (matched > 0) had_writers = true;
        if (had_writers && matched == 0 && total_ > 0) return true;
      }
      cv_.wait_for(lk, 50ms);
    }
    return false;
  }

  struct Totals {
    uint64_t samples, bytes, lost, checksum;
    double seconds;
  };
  Totals totals() {
    std::lock_guard lk(mu_);
    Totals t{0, 0, 0, 0, std::chrono::duration<double>(last_ - first_).count()};
    for (auto& [g, w] : writers_) {
      t.samples += w.samples;
      t.bytes += w.bytes;
      t.lost += w.lost;
      t.checksum += w.checksum;
    }
    return t;
  }

  void write_json(const std::string& path, bool completed) {
    std::lock_guard lk(mu_);
    std::vector<WriterSummary> ws;
    for (auto& [g, w] : writers_) {
      ws.push_back({g.to_string(), w.samples, w.bytes, w.lost, w.checksum, w.first_seq, w.last_seq,
                    w.end_seq});
    }
    RunSummary run{completed, duplicates_, std::chrono::duration<double>(last_ - first_).count()};
    if (o_.zero_copy) run.zero_copy_samples = static_cast<int64_t>(zero_copy_.load());
    (void)write_summary_json(path, run, ws);
  }

  // Receive thread, -zeroCopy: a sample taken in the writer's own memory (LoanedSample).
  void note_zero_copy() { zero_copy_.fetch_add(1, std::memory_order_relaxed); }

  // The printer thread's view, while samples arrive.
  uint64_t total_samples() const { return total_.load(std::memory_order_relaxed); }
  uint64_t total_lost() const { return lost_total_.load(std::memory_order_relaxed); }
  uint64_t problems() const { return malformed_ + bad_keys_; }

 private:
  const Options& o_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::unordered_map<pubsub::Guid, WriterCount> writers_;
  WriterCount* cached_ = nullptr;
  pubsub::Guid cached_guid_;
  std::atomic<uint64_t> total_{0};
  std::atomic<uint64_t> lost_total_{0};
  std::atomic<uint64_t> total_seen_{0};  // samples offered, for the clock's sampling
  std::atomic<uint64_t> zero_copy_{0};   // -zeroCopy: samples (end markers too) not copied
  uint64_t duplicates_ = 0;
  uint64_t malformed_ = 0, bad_keys_ = 0;
  uint32_t ended_writers_ = 0;
  Clock::time_point first_{}, last_{};
};

// The participant's UDP traffic: datagrams, and how many left in GSO messages, arrived in GRO
// messages, and how often receive coalescing slept.
void print_transport_stats(const pubsub::Participant& p) {
  const auto s = p.stats();
  std::fprintf(stderr,
               "pubsub-perftest: transport sent %" PRIu64 " datagrams (%" PRIu64
               " GSO messages), received %" PRIu64 " (%" PRIu64 " GRO messages), %" PRIu64
               " coalescing sleeps\n",
               s.datagrams_sent, s.gso_messages_sent, s.datagrams_received, s.gro_messages_received,
               s.coalescing_sleeps);
}

void print_reader_stats(const pubsub::Reader& reader) {
  const auto rs = reader.stats();
  std::fprintf(stderr,
               "pubsub-perftest: reader delivered %" PRIu64 " duplicates %" PRIu64
               " out-of-order %" PRIu64 " lost %" PRIu64 " gapped %" PRIu64 " buffer-full %" PRIu64
               " too-large %" PRIu64 " acknacks %" PRIu64 " nackfrags %" PRIu64
               " fragments %" PRIu64 " via-shm %" PRIu64 " via-intra %" PRIu64 "\n",
               rs.samples_delivered, rs.duplicates, rs.out_of_order, rs.lost, rs.gapped,
               rs.buffer_full_drops, rs.too_large_drops, rs.acknacks_sent, rs.nackfrags_sent,
               rs.fragments_received, rs.samples_shm, rs.samples_intra);
}

// The throughput CSV line (and its header), -summaryJson, and the exit status: 1 for a run that
// did not complete, malformed samples, or loss on a reliable topic.
int report_subscriber(const Options& o, SubscriberState& state, bool completed) {
  const auto t = state.totals();
  print_throughput_row(o.datalen, t.samples, t.lost, t.seconds, o.no_output_headers);
  if (!o.summary_json.empty()) state.write_json(o.summary_json, completed);
  if (!completed) {
    std::fprintf(stderr, "pubsub-perftest: run incomplete after %.1f s (%" PRIu64 " samples)\n",
                 o.exec_seconds, t.samples);
    return 1;
  }
  if (state.problems()) {
    std::fprintf(stderr, "pubsub-perftest: %" PRIu64 " malformed samples\n", state.problems());
    return 1;
  }
  if (!o.best_effort && t.lost > 0) {
    std::fprintf(stderr, "pubsub-perftest: %" PRIu64 " samples lost on a reliable topic\n", t.lost);
    return 1;
  }
  return 0;
}

}  // namespace

int run_subscriber(const Options& o) {
  auto participant = make_participant(o);
  if (!participant) {
    std::fprintf(stderr, "pubsub-perftest: %s\n", participant.error().message.c_str());
    return 2;
  }
  auto& p = *participant.value();
  std::unique_ptr<DdsperfPeerEndpoints> ddsperf_peer;
  if (o.ddsperf_compat) ddsperf_peer = std::make_unique<DdsperfPeerEndpoints>(p, o);
  SubscriberState state(o);
  std::unique_ptr<pubsub::Writer> echo;
  if (o.latency_test) {
    auto w = p.create_writer({kEchoTopic, "pubsub::perftest::Sample", false}, writer_qos(o, false));
    if (!w) {
      std::fprintf(stderr, "pubsub-perftest: %s\n", w.error().message.c_str());
      return 2;
    }
    echo = std::move(w).value();
  }
  std::atomic<bool> latency_ended{false};
  pubsub::Writer* echo_writer = echo.get();
  auto handle = [&](const pubsub::SampleInfo& info, pubsub::Bytes body) {
    if (echo_writer && body.size() >= kHeaderBytes) {
      const uint32_t kind = get_u32(body.data() + 4);
      if (kind == kKindPing) {
        if (o.zero_copy) {  // echoed through a loan: the header, as the ping was made
          if (auto loan = echo_writer->loan(body.size())) {
            std::memcpy(loan->data().data(), body.data(), kHeaderBytes);
            (void)echo_writer->write(std::move(loan).value());
          }
        } else {
          (void)echo_writer->write(body);
        }
        return;
      }
      if (kind == kKindEnd) latency_ended = true;
    }
    state.on_sample(info, body);
  };
  // -zeroCopy: the listener takes each sample as a loan (in place in the writer's memory on
  // one host) and returns it when done with it.
  auto reader = o.zero_copy ? p.create_loaning_reader(data_topic(o), reader_qos(o),
                                                      [&](pubsub::LoanedSample s) {
                                                        if (s.zero_copy()) state.note_zero_copy();
                                                        handle(s.info(), s.body());
                                                      })
                            : p.create_reader(data_topic(o), reader_qos(o), handle);
  if (!reader) {
    std::fprintf(stderr, "pubsub-perftest: %s\n", reader.error().message.c_str());
    return 2;
  }
  std::fprintf(stderr, "pubsub-perftest: subscriber on %s, topic %s, %s\n",
               p.unicast_locator().to_string().c_str(), data_topic(o).name.c_str(),
               o.best_effort ? "best effort" : "reliable");
  bool completed;
  {
    IntervalPrinter printer(!o.no_print && !o.latency_test, [&] {
      return std::pair{state.total_samples(), state.total_lost()};
    });
    completed = state.wait(*reader.value());
  }
  print_reader_stats(*reader.value());
  print_transport_stats(p);
  if (o.latency_test) {
    if (!o.summary_json.empty()) state.write_json(o.summary_json, completed);
    return completed ? 0 : 1;
  }
  return report_subscriber(o, state, completed);
}

// ---- publisher --------------------------------------------------------------------------------

namespace {

class SampleMaker {
 public:
  explicit SampleMaker(const Options& o) : o_(o), body_(o.datalen, 0) {
    if (o.payload == Payload::kRandom) {
      pool_.resize(std::max<size_t>(8u << 20, size_t{o.datalen} * 2));
      std::mt19937_64 rng(0xfeed);
      for (size_t i = 0; i + 8 <= pool_.size(); i += 8) {
        const uint64_t r = rng();
        std::memcpy(pool_.data() + i, &r, 8);
      }
    }
    keys_.reserve(o.instances);
    for (uint32_t k = 0; k < o.instances; ++k) keys_.push_back(key_hash_of(k));
    if (o.ddsperf_compat) {
      put_u32(body_.data() + 8, o.datalen - kCompatHeaderBytes);
      std::fill(body_.begin() + kCompatHeaderBytes, body_.end(),
                o.payload == Payload::kZero ? 0xee : 0);
    }
  }

  // Fills the body for sample `seq`; returns its key index.
  uint32_t make(uint32_t seq, uint32_t kind, uint64_t timestamp) {
    return make_into(body_.data(), seq, kind, timestamp);
  }
  // The same into a loaned buffer of datalen bytes. A zero payload is left as it is there
  // (an application producing its data in place pays for the data itself, not for a copy).
  uint32_t make_into(uint8_t* body, uint32_t seq, uint32_t kind, uint64_t timestamp) {
    const uint32_t n = o_.instances;  // one instance: no division per sample
    const uint32_t key = n == 1 ? 0 : o_.ddsperf_compat ? seq % n : (seq - 1) % n;
    const size_t header = o_.ddsperf_compat ? kCompatHeaderBytes : kHeaderBytes;
    if (!pool_.empty()) {
      const size_t span = pool_.size() - o_.datalen;
      // Consecutive samples start at least a sample apart in the pool, so they share no bytes
      // (nothing for a compressor to find across samples either).
      const size_t step = ((size_t{o_.datalen} + 7) & ~size_t{7}) + 8 * 4099;
      const size_t off = (size_t{seq} * step) % span;
      std::memcpy(body + header, pool_.data() + off, o_.datalen - header);
    }
    put_u32(body, seq);
    if (o_.ddsperf_compat) {
      put_u32(body + 4, key);
      if (body != body_.data()) put_u32(body + 8, o_.datalen - kCompatHeaderBytes);
    } else {
      put_u32(body + 4, kind);
      std::memcpy(body + 8, &timestamp, 8);
      put_u32(body + 16, key);
    }
    return key;
  }
  pubsub::Bytes body() const {
    return pubsub::Bytes(reinterpret_cast<const std::byte*>(body_.data()), body_.size());
  }
  const pubsub::KeyHash* key(uint32_t k) const { return &keys_[k]; }
  size_t datalen() const { return o_.datalen; }

 private:
  const Options& o_;
  std::vector<uint8_t> body_;
  std::vector<uint8_t> pool_;
  std::vector<pubsub::KeyHash> keys_;
};

// -zeroCopy: the sample is made in a buffer the writer lends, and written without a copy.
// Retries on kTimeout as write_retrying does.
bool write_loaned(pubsub::Writer& w, SampleMaker& maker, uint32_t seq, pubsub::WriteOptions& wo,
                  bool keyed, uint64_t* checksum, uint64_t& timeouts, Clock::time_point give_up) {
  for (;;) {
    auto loan = w.loan(maker.datalen());
    if (loan.ok()) {
      auto* body = reinterpret_cast<uint8_t*>(loan->data().data());
      const uint32_t k = maker.make_into(body, seq, kKindData, 0);
      wo.key_hash = keyed ? maker.key(k) : nullptr;
      if (checksum) *checksum += body_hash(body, maker.datalen());
      auto r = w.write(std::move(loan).value(), wo);
      if (r.ok()) return true;
      std::fprintf(stderr, "pubsub-perftest: write failed: %s\n", r.error().message.c_str());
      return false;
    }
    if (loan.error().code != pubsub::ErrorCode::kTimeout || Clock::now() > give_up) {
      std::fprintf(stderr, "pubsub-perftest: loan failed: %s\n", loan.error().message.c_str());
      return false;
    }
    timeouts++;
  }
}

// Writes, retrying on kTimeout (reliable back-pressure). False when the run must stop.
bool write_retrying(pubsub::Writer& w, pubsub::Bytes body, const pubsub::WriteOptions& wo,
                    uint64_t& timeouts, Clock::time_point give_up) {
  for (;;) {
    auto r = w.write(body, wo);
    if (r.ok()) return true;
    if (r.error().code != pubsub::ErrorCode::kTimeout || Clock::now() > give_up) {
      std::fprintf(stderr, "pubsub-perftest: write failed: %s\n", r.error().message.c_str());
      return false;
    }
    timeouts++;
  }
}

// Ping-pong: the next ping leaves from the receive thread as soon as the echo of the last one
// arrives (no hand-over to another thread, as ddsperf does it); the main thread only watches
// for a lost echo and then sends a fresh ping.
class LatencyPinger {
 public:
  LatencyPinger(const Options& o, pubsub::Writer& writer)
      : o_(o), writer_(writer), maker_(o), intra_(o.transport == TransportKind::kIntra) {
    lat_.reserve(1 << 20);
  }

  // The echo reader's listener (receive thread).
  void on_echo(pubsub::Bytes body) {
    const auto now = Clock::now();
    if (body.size() < kHeaderBytes) return;
    if (intra_) {
      lat_.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(now - t0_).count() / 2);
      echoed_.store(get_u32(body.data()), std::memory_order_release);
      return;
    }
    std::lock_guard lk(mu_);
    if (finished_ || get_u32(body.data()) != seq_) return;
    lat_.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(now - t0_).count() / 2);
    if (now < end_) {
      send_ping_locked();
    } else {
      finished_ = true;
      cv_.notify_all();
    }
  }

  // Main thread: pings for -exec seconds, then sends the end marker.
  void run() {
    if (intra_) {
      ping_in_process();
    } else {
      ping_over_network();
    }
    maker_.make(seq_ + 1, kKindEnd, 0);
    pubsub::WriteOptions wo;
    if (o_.keyed) wo.key_hash = maker_.key(0);
    (void)writer_.write(maker_.body(), wo);
    writer_.flush();
    writer_.wait_for_acknowledgments(2s);
  }

  std::vector<int64_t>& latencies() { return lat_; }
  uint64_t lost() const { return lost_; }

 private:
  void send_ping_locked() {
    ++seq_;
    t0_ = Clock::now();
    const auto stamp = static_cast<uint64_t>(t0_.time_since_epoch().count());
    pubsub::WriteOptions wo;
    // A failure shows up as a lost echo.
    if (o_.zero_copy) {  // the ping made in a loaned buffer (its header; see SampleMaker)
      if (auto loan = writer_.loan(o_.datalen)) {
        const uint32_t k = maker_.make_into(reinterpret_cast<uint8_t*>(loan->data().data()), seq_,
                                            kKindPing, stamp);
        if (o_.keyed) wo.key_hash = maker_.key(k);
        (void)writer_.write(std::move(loan).value(), wo);
      }
      return;
    }
    const uint32_t k = maker_.make(seq_, kKindPing, stamp);
    if (o_.keyed) wo.key_hash = maker_.key(k);
    (void)writer_.write(maker_.body(), wo);
  }

  // In-process delivery is synchronous: the echo arrives inside write(). The main thread then
  // sends every ping itself (a ping sent from the echo callback would re-enter the writers).
  void ping_in_process() {
    if (!warm_up_in_process()) return;
    end_ = Clock::now() + seconds_of(o_.exec_seconds);
    while (Clock::now() < end_) {
      send_ping_locked();
      const auto give_up = Clock::now() + 1s;
      while (echoed_.load(std::memory_order_acquire) != seq_ && Clock::now() < give_up) {
      }
      if (echoed_.load(std::memory_order_acquire) != seq_) lost_++;
    }
  }

  // The subscriber's echo writer may match our echo reader only after our echo reader matched
  // it: a ping echoed before then is lost. Ping until one comes back (not measured, not counted
  // lost), for at most the wait time; false if none did.
  bool warm_up_in_process() {
    const auto give_up = Clock::now() + seconds_of(o_.wait_seconds);
    while (Clock::now() < give_up) {
      send_ping_locked();
      const auto next = Clock::now() + 10ms;
      while (echoed_.load(std::memory_order_acquire) != seq_ && Clock::now() < next) {
      }
      if (echoed_.load(std::memory_order_acquire) == seq_) {
        lat_.clear();
        return true;
      }
    }
    return false;
  }

  void ping_over_network() {
    std::unique_lock lk(mu_);
    end_ = Clock::now() + seconds_of(o_.exec_seconds);
    send_ping_locked();
    uint32_t watched = seq_;
    while (!finished_) {
      if (cv_.wait_for(lk, 1s, [&] { return finished_; })) break;
      if (Clock::now() >= end_) {
        finished_ = true;
        break;
      }
      if (seq_ == watched) {  // no echo for a second: count it lost, start again
        lost_++;
        send_ping_locked();
      }
      watched = seq_;
    }
  }

  const Options& o_;
  pubsub::Writer& writer_;
  std::mutex mu_;
  std::condition_variable cv_;
  SampleMaker maker_;
  std::vector<int64_t> lat_;
  uint32_t seq_ = 0;
  Clock::time_point t0_;
  uint64_t lost_ = 0;
  bool finished_ = false;
  Clock::time_point end_;
  const bool intra_;
  std::atomic<uint32_t> echoed_{0};
};

// The latency CSV line (and its header) from the half round trips in `lat` (sorted here).
int print_latencies(const Options& o, std::vector<int64_t>& lat, uint64_t lost) {
  if (lat.empty()) {
    std::fprintf(stderr, "pubsub-perftest: no echo received\n");
    return 1;
  }
  std::sort(lat.begin(), lat.end());
  double sum = 0, sq = 0;
  for (auto v : lat) sum += static_cast<double>(v);
  const double mean = sum / static_cast<double>(lat.size());
  for (auto v : lat) sq += (static_cast<double>(v) - mean) * (static_cast<double>(v) - mean);
  const double sd = std::sqrt(sq / static_cast<double>(lat.size()));
  auto pct = [&](double q) {
    const size_t i =
        std::min(lat.size() - 1, static_cast<size_t>(q / 100.0 * static_cast<double>(lat.size())));
    return static_cast<double>(lat[i]) / 1000.0;
  };
  if (!o.no_output_headers) {
    std::printf(
        "Sample Size (Bytes),Avg (us),Std (us),Min (us),Max (us),50%% (us),90%% (us),99%% "
        "(us),99.99%% (us),99.9999%% (us),Samples\n");
  }
  std::printf("%u,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%zu\n", o.datalen, mean / 1000,
              sd / 1000, static_cast<double>(lat.front()) / 1000,
              static_cast<double>(lat.back()) / 1000, pct(50), pct(90), pct(99), pct(99.99),
              pct(99.9999), lat.size());
  std::fflush(stdout);
  if (lost) std::fprintf(stderr, "pubsub-perftest: %" PRIu64 " pings without an echo\n", lost);
  return 0;
}

int run_latency_publisher(const Options& o, pubsub::Participant& p, pubsub::Writer& writer) {
  LatencyPinger pinger(o, writer);
  auto echo = p.create_reader(
      {kEchoTopic, "pubsub::perftest::Sample", false}, reader_qos(o),
      [&pinger](const pubsub::SampleInfo&, pubsub::Bytes body) { pinger.on_echo(body); });
  if (!echo) {
    std::fprintf(stderr, "pubsub-perftest: %s\n", echo.error().message.c_str());
    return 2;
  }
  if (!echo.value()->wait_for_writers(o.num_subscribers,
                                      std::chrono::duration_cast<pubsub::Duration>(
                                          std::chrono::duration<double>(o.wait_seconds)))) {
    std::fprintf(stderr, "pubsub-perftest: no echo writer from the subscriber\n");
    return 1;
  }
  pinger.run();
  return print_latencies(o, pinger.latencies(), pinger.lost());
}

// What the throughput loop leaves for the end of the run.
struct ThroughputRun {
  Clock::time_point start;
  uint32_t seq = 0;  // the sequence number after the last one written
  std::atomic<uint64_t> written{0};
  uint64_t timeouts = 0, checksum = 0;
  uint64_t loaned = 0;  // -zeroCopy: data samples written from a loan (Writer::loan)
};

void print_write_failure(const pubsub::Writer& writer) {
  const auto ws = writer.stats();
  std::fprintf(stderr,
               "pubsub-perftest: writer %" PRIu64 " written, %" PRIu64 " acknacks, %" PRIu64
               " retransmitted, %" PRIu64 " fragments retransmitted, %" PRIu64
               " gaps, history %zu samples\n",
               ws.samples_written, ws.acknacks_received, ws.samples_retransmitted,
               ws.fragments_retransmitted, ws.gaps_sent, ws.history_samples);
}

// Writes samples flat out (or at -pubRate) for -exec seconds, with the interval lines, and
// flushes. False when a write failed.
bool write_samples(const Options& o, pubsub::Writer& writer, SampleMaker& maker,
                   ThroughputRun& run) {
  uint64_t& timeouts = run.timeouts;
  uint64_t& checksum = run.checksum;
  std::atomic<uint64_t>& written = run.written;
  const bool want_checksum = !o.summary_json.empty();
  const auto start = Clock::now();
  run.start = start;
  const auto end = start + seconds_of(o.exec_seconds);
  uint32_t seq = o.ddsperf_compat ? 0 : 1;
  IntervalPrinter printer(!o.no_print, [&] { return std::pair{written.load(), uint64_t{0}}; });
  const auto period = o.pub_rate > 0 ? seconds_of(1.0 / o.pub_rate) : Clock::duration::zero();
  auto next_send = start;
  for (;;) {
    // Large or paced samples: the clock is worth reading every time.
    if (((seq & 63) == 0 || o.datalen >= 4096 || o.pub_rate > 0) && Clock::now() >= end) break;
    if (o.pub_rate > 0) {
      std::this_thread::sleep_until(next_send);
      next_send += period;
    }
    pubsub::WriteOptions wo;
    if (o.ddsperf_compat) {
      // ddsperf reads the timestamp's lowest bit as "please answer"; keep it clear.
      wo.timestamp = pubsub::Time{pubsub::Time::now().ns & ~int64_t{1}};
    }
    bool ok;
    if (o.zero_copy) {
      ok = write_loaned(writer, maker, seq, wo, o.keyed, want_checksum ? &checksum : nullptr,
                        timeouts, end + 10s);
      run.loaned += ok;
    } else {
      const uint32_t k = maker.make(seq, kKindData, 0);
      wo.key_hash = o.keyed ? maker.key(k) : nullptr;
      ok = write_retrying(writer, maker.body(), wo, timeouts, end + 10s);
      if (ok && want_checksum) {
        const auto b = maker.body();
        checksum += body_hash(reinterpret_cast<const uint8_t*>(b.data()), b.size());
      }
    }
    if (!ok) {
      print_write_failure(writer);
      return false;
    }
    bump(written);
    ++seq;
  }
  writer.flush();
  run.seq = seq;
  return true;
}

// End of run: the marker carries the last sequence number written (ddsperf has none).
void write_end_marker(const Options& o, pubsub::Writer& writer, SampleMaker& maker, uint32_t seq) {
  maker.make(seq - 1, kKindEnd, 0);
  pubsub::WriteOptions wo;
  wo.key_hash = o.keyed ? maker.key(0) : nullptr;
  const int copies = o.best_effort ? 10 : 1;
  for (int i = 0; i < copies; ++i) {
    (void)writer.write(maker.body(), wo);
    writer.flush();
    if (o.best_effort) std::this_thread::sleep_for(10ms);
  }
  writer.wait_for_acknowledgments(5s);
}

// The "wrote ..." line on stderr and -summaryJson.
void report_publisher(const Options& o, const pubsub::Writer& writer, const ThroughputRun& run,
                      double seconds, bool acked) {
  const auto ws = writer.stats();
  std::fprintf(stderr,
               "pubsub-perftest: wrote %" PRIu64 " samples in %.2f s (%.0f/s), %" PRIu64
               " blocked writes, %" PRIu64 " datagrams, %" PRIu64 " retransmitted (+%" PRIu64
               " fragments), %" PRIu64 " heartbeats (%" PRIu64
               " probes); window %zu KiB of %zu, slowest acknowledgement %" PRIu64
               " us; pacing %.0f MB/s after %" PRIu64 " cuts; %" PRIu64
               " fallbacks from big datagrams (%" PRIu64 " repairs held back); %" PRIu64
               " write timeouts (retried)\n",
               run.written.load(), seconds, static_cast<double>(run.written.load()) / seconds,
               ws.write_blocked, ws.datagrams_sent, ws.samples_retransmitted,
               ws.fragments_retransmitted, ws.heartbeats_sent, ws.heartbeat_probes,
               ws.window_bytes >> 10, ws.window_cap_bytes >> 10, ws.ack_delay_us,
               static_cast<double>(ws.pacing_rate) / 1e6, ws.pacing_cuts, ws.datagram_fallbacks,
               ws.repairs_held_back, run.timeouts);
  if (!o.summary_json.empty()) {
    std::ofstream f(o.summary_json);
    f << "{\"written\": " << run.written.load() << ", \"checksum\": \"" << fmt_hex(run.checksum)
      << "\", \"acknowledged\": " << (acked ? "true" : "false") << ", \"guid\": \""
      << writer.guid().to_string() << "\", \"datagrams_sent\": " << ws.datagrams_sent
      << ", \"write_timeouts\": " << run.timeouts << ", \"loaned_writes\": " << run.loaned << "}\n";
  }
}

}  // namespace

int run_publisher(const Options& o) {
  auto participant = make_participant(o);
  if (!participant) {
    std::fprintf(stderr, "pubsub-perftest: %s\n", participant.error().message.c_str());
    return 2;
  }
  auto& p = *participant.value();
  std::unique_ptr<DdsperfPeerEndpoints> ddsperf_peer;
  if (o.ddsperf_compat) ddsperf_peer = std::make_unique<DdsperfPeerEndpoints>(p, o);
  auto w = p.create_writer(describe_type(p, data_topic(o), o), writer_qos(o, batching_on(o)));
  if (!w) {
    std::fprintf(stderr, "pubsub-perftest: %s\n", w.error().message.c_str());
    return 2;
  }
  pubsub::Writer& writer = *w.value();
  std::fprintf(
      stderr,
      "pubsub-perftest: publisher on %s, topic %s, %s, batch %ld, waiting for %u subscriber(s)\n",
      p.unicast_locator().to_string().c_str(), data_topic(o).name.c_str(),
      o.best_effort ? "best effort" : "reliable", batching_on(o) ? o.batch_size : 0L,
      o.num_subscribers);
  if (!writer.wait_for_readers(o.num_subscribers,
                               std::chrono::duration_cast<pubsub::Duration>(
                                   std::chrono::duration<double>(o.wait_seconds)))) {
    std::fprintf(stderr, "pubsub-perftest: %zu of %u subscribers after %.0f s\n",
                 writer.matched_readers(), o.num_subscribers, o.wait_seconds);
    return 1;
  }
  if (o.latency_test) return run_latency_publisher(o, p, writer);

  SampleMaker maker(o);
  ThroughputRun run;
  if (!write_samples(o, writer, maker, run)) return 1;
  const double seconds = std::chrono::duration<double>(Clock::now() - run.start).count();
  const bool acked = writer.wait_for_acknowledgments(10s);
  if (!o.ddsperf_compat) write_end_marker(o, writer, maker, run.seq);
  report_publisher(o, writer, run, seconds, acked);
  print_transport_stats(p);
  // Linger briefly so late repairs and the end marker get through before we leave.
  std::this_thread::sleep_for(200ms);
  return acked || o.best_effort ? 0 : 1;
}

}  // namespace perftest

namespace perftest {

int run_intra(const Options& o) {
  Options sub = o, pub = o;
  sub.sub = true;
  pub.pub = true;
  sub.exec_seconds = o.exec_seconds + 30;  // the subscriber's limit: the whole run, and more
  if (!o.summary_json.empty()) {
    pub.summary_json = o.summary_json + ".pub";
    sub.summary_json = o.summary_json + ".sub";
  }
  sub.no_print = pub.no_print = true;
  int sub_rc = 0;
  std::thread subscriber([&] { sub_rc = run_subscriber(sub); });
  const int pub_rc = run_publisher(pub);
  subscriber.join();
  return pub_rc != 0 ? pub_rc : sub_rc;
}

}  // namespace perftest
