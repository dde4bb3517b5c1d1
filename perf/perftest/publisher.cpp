// pubsub-perftest's publisher (perftest.hpp's run_publisher()): the data writer, then either the
// throughput run (samples flat out or at -pubRate for -exec seconds, an end-of-run marker, the
// "wrote ..." line and -summaryJson) or the latency run (ping-pong, the latency CSV row).
//
// Threads: the main thread (the only one with -transport INTRA, the subscriber having its own)
// creates the entities, waits for subscribers and writes; the IntervalPrinter's thread reads the
// written count once a second. Latency: the participant's receive thread takes each echo and
// sends the next ping from there (LatencyPinger::on_echo); the main thread only watches for a
// lost echo. In-process (INTRA) the echo arrives inside write(), and the main thread sends
// every ping.
#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <optional>
#include <thread>

#include "body_hash.hpp"
#include "interval_printer.hpp"
#include "perftest_internal.hpp"
#include "perftest_types.hpp"
#include "random_payload.hpp"

namespace perftest {

using namespace detail;  // NOLINT(google-build-using-namespace): the shared helpers
using namespace std::chrono_literals;

namespace {

void put_u32(uint8_t* p, uint32_t v) {
  std::memcpy(p, &v, 4);
}

pubsub::KeyHash key_hash_of(uint32_t key) {
  const uint8_t be[4] = {static_cast<uint8_t>(key >> 24), static_cast<uint8_t>(key >> 16),
                         static_cast<uint8_t>(key >> 8), static_cast<uint8_t>(key)};
  return pubsub::KeyHash::from_key_cdr_be(pubsub::Bytes(reinterpret_cast<const std::byte*>(be), 4));
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

class SampleMaker {
 public:
  explicit SampleMaker(const Options& o) : o_(o), body_(o.datalen, 0) {
    if (o.payload == Payload::kRandom) random_.emplace(o.datalen);
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
    if (random_) random_->fill(body + header, o_.datalen - header, seq);
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
  std::optional<RandomPayload> random_;
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
void report_publisher(const Options& o, const pubsub::Participant& p, const pubsub::Writer& writer,
                      const ThroughputRun& run, double seconds, bool acked) {
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
      << ", \"write_timeouts\": " << run.timeouts << ", \"loaned_writes\": " << run.loaned
      << ", \"malformed_received\": " << p.stats().malformed_messages << "}\n";
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
  report_publisher(o, p, writer, run, seconds, acked);
  print_transport_stats(p);
  // Linger briefly so late repairs and the end marker get through before we leave.
  std::this_thread::sleep_for(200ms);
  return acked || o.best_effort ? 0 : 1;
}

}  // namespace perftest
