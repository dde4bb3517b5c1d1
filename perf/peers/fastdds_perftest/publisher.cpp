// fastdds_perftest's publisher side (publisher.hpp): waiting for the subscribers, the warm-up
// sample, then the throughput run (samples flat out for -exec seconds, the end marker, the
// "wrote ..." line) or the latency run (LatencyPublisher: ping-pong, the latency CSV row).
//
// Threads: the main thread runs PublisherSide::run and writes; the IntervalPrinter's thread reads
// the written count once a second. Latency over a transport: Fast DDS's reception thread takes
// each echo and sends the next ping from there, the main thread only watches for a lost echo.
// With intra-process delivery the echo arrives inside write(), so the main thread sends every
// ping.
#include <atomic>
#include <cinttypes>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <vector>

#include "publisher.hpp"

#include "interval_printer.hpp"

namespace fastdds_perftest {

using namespace std::chrono_literals;

// Ping-pong. Over a transport the next ping leaves from the reception thread as soon as the echo
// of the last one arrives (as pubsub-perftest). With intra-process delivery, write() runs the
// whole ping -> echo chain in the calling thread, so the main thread sends every ping.
class LatencyPublisher : public dds::DataReaderListener {
 public:
  LatencyPublisher(const Options& o, dds::DataWriter* w)
      : o_(o),
        writer_(w, o),
        buf_(o.datalen + 4, 0),
        from_listener_(o.transport != Transport::kIntra) {
    lat_.reserve(1 << 20);
  }

  void on_data_available(dds::DataReader* r) override {
    take_all(r, o_.zero_copy, buf_.data(), [&](const uint8_t* body, const dds::SampleInfo&) {
      const auto now = Clock::now();
      std::lock_guard lk(mu_);
      if (finished_ || got_ || get_u32(body) != seq_) return;
      lat_.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(now - t0_).count() / 2);
      if (from_listener_ && now < end_) {
        send_ping_locked();
      } else {
        got_ = true;
        if (now >= end_) finished_ = true;
        cv_.notify_all();
      }
    });
  }

  int run(dds::DataReader* echo_reader) {
    if (!wait_until(o_.wait_seconds,
                    [&] { return matched_writers(echo_reader) >= o_.num_subscribers; })) {
      err("no echo writer from the subscriber");
      return 1;
    }
    std::unique_lock lk(mu_);
    end_ = Clock::now() + seconds_of(o_.exec_seconds);
    if (from_listener_) {
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
    } else {
      while (!finished_) {
        got_ = false;
        ++seq_;
        t0_ = Clock::now();
        const uint64_t ts = static_cast<uint64_t>(t0_.time_since_epoch().count());
        lk.unlock();  // the echo arrives inside write()
        writer_.write(seq_, kKindPing, ts, Clock::now() + 1s);
        lk.lock();
        if (!cv_.wait_for(lk, 1s, [&] { return got_; })) lost_++;
        if (Clock::now() >= end_) finished_ = true;
      }
    }
    const uint32_t last = seq_;
    lk.unlock();
    writer_.write(last + 1, kKindEnd, 0, Clock::now() + 2s);
    return 0;
  }

  int report() {
    std::lock_guard lk(mu_);
    if (lat_.empty()) {
      err("no echo received");
      return 1;
    }
    std::sort(lat_.begin(), lat_.end());
    double sum = 0, sq = 0;
    for (auto v : lat_) sum += static_cast<double>(v);
    const double mean = sum / static_cast<double>(lat_.size());
    for (auto v : lat_) sq += (static_cast<double>(v) - mean) * (static_cast<double>(v) - mean);
    const double sd = std::sqrt(sq / static_cast<double>(lat_.size()));
    auto pct = [&](double q) {
      const size_t i = std::min(lat_.size() - 1,
                                static_cast<size_t>(q / 100.0 * static_cast<double>(lat_.size())));
      return static_cast<double>(lat_[i]) / 1000.0;
    };
    if (!o_.no_output_headers) {
      std::printf(
          "Sample Size (Bytes),Avg (us),Std (us),Min (us),Max (us),50%% (us),90%% (us),99%% "
          "(us),99.99%% (us),99.9999%% (us),Samples\n");
    }
    std::printf("%u,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%zu\n", o_.datalen, mean / 1000,
                sd / 1000, static_cast<double>(lat_.front()) / 1000,
                static_cast<double>(lat_.back()) / 1000, pct(50), pct(90), pct(99), pct(99.99),
                pct(99.9999), lat_.size());
    std::fflush(stdout);
    if (lost_) err("%" PRIu64 " pings without an echo", lost_);
    return 0;
  }

 private:
  void send_ping_locked() {
    ++seq_;
    t0_ = Clock::now();
    // A failure shows up as a lost echo.
    writer_.write(seq_, kKindPing, static_cast<uint64_t>(t0_.time_since_epoch().count()), t0_ + 1s);
  }

  const Options& o_;
  SampleWriter writer_;
  std::vector<uint8_t> buf_;
  const bool from_listener_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<int64_t> lat_;
  uint32_t seq_ = 0;
  Clock::time_point t0_, end_;
  uint64_t lost_ = 0;
  bool finished_ = false;
  bool got_ = false;
};

PublisherSide::PublisherSide(const Options& o) : o_(o) {}

PublisherSide::~PublisherSide() = default;

bool PublisherSide::create(Participant& p) {
  writer_ = p.create_writer(o_, p.data_topic(), false);
  if (!writer_) {
    err("could not create the data writer (%s%s%s)", transport_name(o_.transport),
        o_.data_sharing ? ", data sharing" : "", o_.zero_copy ? ", loans" : "");
    return false;
  }
  if (o_.latency_test) {
    latency_ = std::make_unique<LatencyPublisher>(o_, writer_);
    echo_reader_ = p.create_reader(o_, p.echo_topic(), latency_.get());
    if (!echo_reader_) {
      err("could not create the echo reader");
      return false;
    }
  }
  return true;
}

int PublisherSide::run() {
  std::fprintf(stderr,
               "fastdds_perftest: publisher, %s%s%s, %s, %u bytes, waiting for %u "
               "subscriber(s)\n",
               transport_name(o_.transport), o_.data_sharing ? " + data sharing" : "",
               o_.zero_copy ? " + loans" : "", o_.best_effort ? "best effort" : "reliable",
               o_.datalen, o_.num_subscribers);
  if (!wait_until(o_.wait_seconds,
                  [&] { return matched_readers(writer_) >= o_.num_subscribers; })) {
    err("%zu of %u subscribers after %.0f s", matched_readers(writer_), o_.num_subscribers,
        o_.wait_seconds);
    return 1;
  }
  // A Fast DDS writer matches a reader before that reader has matched the writer, and a
  // VOLATILE data-sharing reader then starts after whatever was written meanwhile. Reliable:
  // one warm-up sample, acknowledged, shows that every reader has matched us.
  if (!o_.best_effort) {
    SampleWriter warmup(writer_, o_);
    if (!warmup.write(0, kKindWarmup, 0, Clock::now() + seconds_of(o_.wait_seconds)) ||
        !ok(writer_->wait_for_acknowledgments(
            eprosima::fastrtps::Duration_t(static_cast<int32_t>(o_.wait_seconds), 0)))) {
      err("the subscribers did not acknowledge the warm-up sample");
      return 1;
    }
  }
  if (o_.latency_test) {
    const int rc = latency_->run(echo_reader_);
    writer_->wait_for_acknowledgments(eprosima::fastrtps::Duration_t(2, 0));
    return rc ? rc : latency_->report();
  }

  SampleWriter sw(writer_, o_);
  std::atomic<uint64_t> written{0};
  const auto start = Clock::now();
  const auto end = start + seconds_of(o_.exec_seconds);
  uint32_t seq = 1;
  {
    perftest::IntervalPrinter printer(!o_.no_print, [&] {
      return std::pair{written.load(), uint64_t{0}};
    });
    for (;;) {
      if (((seq & 63) == 0 || o_.datalen >= 4096) && Clock::now() >= end) break;
      if (!sw.write(seq, kKindData, 0, end + 10s)) {
        err("wrote %" PRIu64 " samples before the failure", written.load());
        return 1;
      }
      written.fetch_add(1, std::memory_order_relaxed);
      ++seq;
    }
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const bool acked = ok(writer_->wait_for_acknowledgments(eprosima::fastrtps::Duration_t(10, 0)));
  // End of run: the marker carries the last sequence number written.
  const int copies = o_.best_effort ? 10 : 1;
  for (int i = 0; i < copies; ++i) {
    (void)sw.write(seq - 1, kKindEnd, 0, Clock::now() + 2s);
    if (o_.best_effort) std::this_thread::sleep_for(10ms);
  }
  writer_->wait_for_acknowledgments(eprosima::fastrtps::Duration_t(5, 0));
  std::fprintf(stderr,
               "fastdds_perftest: wrote %" PRIu64 " samples in %.2f s (%.0f/s), %" PRIu64
               " blocked writes\n",
               written.load(), seconds, static_cast<double>(written.load()) / seconds,
               sw.blocked());
  if (!acked && !o_.best_effort) err("not every sample was acknowledged within 10 s");
  // Linger briefly so late repairs and the end marker get through before we leave.
  std::this_thread::sleep_for(200ms);
  return acked || o_.best_effort ? 0 : 1;
}

}  // namespace fastdds_perftest
