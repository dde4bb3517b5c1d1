// pubsub-perftest's subscriber (perftest.hpp's run_subscriber()): counts samples, bytes and loss
// per writer from the sequence number in the payload, echoes latency pings, and prints the
// throughput CSV row, the reader's and transport's statistics and -summaryJson.
//
// Threads: the main thread (or, with -transport INTRA, the subscriber's thread) creates the
// entities, waits for the publishers' end of run (SubscriberState::wait) and reports. The
// participant's receive thread runs the reader's listener: SubscriberState::on_sample, and with
// -latencyTest the echo written back from that same thread. The IntervalPrinter's thread reads
// the running counts once a second.
#include <atomic>
#include <cinttypes>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "body_hash.hpp"
#include "interval_printer.hpp"
#include "perftest_internal.hpp"
#include "summary_json.hpp"

namespace perftest {

using namespace detail;  // NOLINT(google-build-using-namespace): the shared helpers
using namespace std::chrono_literals;

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

}  // namespace perftest
