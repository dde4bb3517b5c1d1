// replay_bench: how faithfully and how fast pubsub-replay publishes (service::replay::play, the
// code behind bin/pubsub-replay).
//
// timing: a recording of one topic with evenly spaced reception times (HZ samples per second for
//   SECONDS) is replayed at --rate 1 over UDP into a reliable reader of a second participant in
//   this process; the reader notes each sample's arrival (steady clock, on its receive thread).
//   Inter-arrival error = (arrival[i] - arrival[i-1]) - 1/HZ, reported as |error| p50/p99/max, next
//   to the replay's own lateness (how late each sample went out against its due time).
// fast: a recording of N samples (recorded at 10 kHz) is read once with Recording::query (the
//   storage read rate, page cache warm) and replayed with --fast into the reader and without one.
// baseline: how late a plain clock_nanosleep loop at the same rates wakes up on this host (the
//   floor any pacing here starts from).
//
// Usage: replay_bench [--hz 1000,10000] [--seconds 10] [--size 64] [--fast-samples 1000000]
//                     [--nic lo] [--spin-us 50] [--spin-max-us 1000] [--realtime PRIO] [--no-fast]
//                     [--no-timing]
// Prints Markdown table rows.
#include <sys/prctl.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "pubsub/participant.hpp"
#include "service/recording_schema.hpp"
#include "service/replay.hpp"
#include "storage/recording.hpp"
#include "storage/segment_writer.hpp"

namespace {

using Clock = std::chrono::steady_clock;
constexpr int64_t kT0 = 1'795'304'280'000'000'000;  // 2026-11-21T23:38:00Z
const char* kTopic = "ReplayBench";
const char* kType = "bench::Tick";

struct Args {
  std::vector<int> hz{1000, 10000};
  double seconds = 10;
  size_t size = 64;
  uint64_t fast_samples = 1'000'000;
  std::string nic = "lo";
  int spin_us = 50;
  int spin_max_us = -1;
  int realtime = 0;
  bool fast = true;
  bool timing = true;
};

std::string make_dir(const std::string& tag) {
  std::string t =
      (std::filesystem::temp_directory_path() / ("replay-bench-" + tag + "-XXXXXX")).string();
  if (!::mkdtemp(t.data())) {
    std::perror("mkdtemp");
    std::exit(1);
  }
  return t;
}

// n samples of `size` bytes (CDR_LE header + seq + filler), reception every period_ns.
void write_recording(const std::string& dir, uint64_t n, int64_t period_ns, size_t size) {
  storage::SegmentWriterOptions opt;
  opt.fsync = storage::FsyncPolicy::kNone;
  auto w = storage::SegmentWriter::create(dir, opt);
  if (!w) {
    std::fprintf(stderr, "replay_bench: %s\n", w.error().to_string().c_str());
    std::exit(1);
  }
  pubsub::TopicInfo info;
  info.name = kTopic;
  info.type_name = kType;
  info.reliability = pubsub::ReliabilityKind::kReliable;
  info.data_representation = {0};
  const storage::TopicId t = *(*w)->add_topic(service::topic_def(info));
  storage::Guid g{};
  for (size_t i = 0; i < 16; ++i) g[i] = static_cast<uint8_t>(0xa0 + i);
  g[15] = 0x03;
  const storage::WriterId wid = *(*w)->add_writer({t, g});
  storage::Bytes payload(std::max<size_t>(size, 8), std::byte{0x5a});
  payload[0] = std::byte{0};
  payload[1] = std::byte{1};
  payload[2] = std::byte{0};
  payload[3] = std::byte{0};
  for (uint64_t i = 0; i < n; ++i) {
    storage::RecordMeta m;
    m.topic = t;
    m.writer = wid;
    m.sequence = static_cast<int64_t>(i + 1);
    m.reception_ns = kT0 + static_cast<int64_t>(i) * period_ns;
    m.source_ns = m.reception_ns;
    m.flags = service::kFlagHasSourceTimestamp;
    const uint32_t seq = static_cast<uint32_t>(i);
    std::memcpy(payload.data() + 4, &seq, 4);
    if (auto s = (*w)->append(m, payload); !s) {
      std::fprintf(stderr, "replay_bench: append: %s\n", s.error().to_string().c_str());
      std::exit(1);
    }
  }
  if (auto s = (*w)->close(); !s) {
    std::fprintf(stderr, "replay_bench: close: %s\n", s.error().to_string().c_str());
    std::exit(1);
  }
}

pubsub::ParticipantOptions udp_options(const Args& a) {
  pubsub::ParticipantOptions o;
  o.interface = a.nic;
  o.domain_id = 17;
  if (a.nic == "lo" || a.nic == "127.0.0.1") {
    o.multicast = false;
    o.peers = {"127.0.0.1"};
  }
  o.announce_period = std::chrono::milliseconds(200);
  return o;
}

// A reliable reader noting arrival times by the sequence number in the payload.
class Sink {
 public:
  Sink(const Args& a, uint64_t n) : arrival_(n, 0) {
    auto p = pubsub::Participant::create(udp_options(a));
    if (!p) {
      std::fprintf(stderr, "replay_bench: reader participant: %s\n", p.error().message.c_str());
      std::exit(1);
    }
    participant_ = std::move(p).value();
    pubsub::ReaderQos q;
    q.reliability = pubsub::ReliabilityKind::kReliable;
    q.resource_limits.max_samples = 1u << 20;
    auto r = participant_->create_reader(
        {kTopic, kType, false}, q, [this](const pubsub::SampleInfo&, pubsub::Bytes body) {
          const int64_t now = Clock::now().time_since_epoch().count();
          uint32_t seq = 0;
          if (body.size() >= 4) std::memcpy(&seq, body.data(), 4);
          if (seq < arrival_.size() && arrival_[seq] == 0) {
            arrival_[seq] = now;
            received_.fetch_add(1, std::memory_order_relaxed);
          }
        });
    if (!r) {
      std::fprintf(stderr, "replay_bench: reader: %s\n", r.error().message.c_str());
      std::exit(1);
    }
    reader_ = std::move(r).value();
  }
  bool wait_all(std::chrono::seconds timeout) {
    const auto end = Clock::now() + timeout;
    while (received_.load() < arrival_.size() && Clock::now() < end) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return received_.load() == arrival_.size();
  }
  uint64_t received() const { return received_.load(); }
  const std::vector<int64_t>& arrival() const { return arrival_; }

 private:
  std::vector<int64_t> arrival_;  // written by the receive thread, read after wait_all
  std::atomic<uint64_t> received_{0};
  std::unique_ptr<pubsub::Participant> participant_;
  std::unique_ptr<pubsub::Reader> reader_;
};

service::replay::PlayOptions play_options(const Args& a, const std::string& dir) {
  service::replay::PlayOptions o;
  o.dir = dir;
  o.participant = udp_options(a);
  o.wait_readers = 1;
  o.wait_timeout = std::chrono::seconds(20);
  o.progress = false;
  o.spin_min = std::chrono::microseconds(a.spin_us);
  if (a.spin_max_us >= 0) o.spin_max = std::chrono::microseconds(a.spin_max_us);
  o.realtime_priority = a.realtime;
  return o;
}

double pct(std::vector<int64_t> v, double q) {
  if (v.empty()) return 0;
  const size_t k = std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())));
  std::nth_element(v.begin(), v.begin() + static_cast<ptrdiff_t>(k), v.end());
  return static_cast<double>(v[k]);
}

void timing(const Args& a, int hz) {
  const uint64_t n = static_cast<uint64_t>(hz * a.seconds);
  const int64_t period = 1'000'000'000 / hz;
  const std::string dir = make_dir("timing");
  write_recording(dir + "/rec", n, period, a.size);
  Sink sink(a, n);
  std::ostringstream err;
  service::replay::PlayReport rep;
  const int rc = service::replay::play(play_options(a, dir + "/rec"), err, &rep);
  if (rc != 0) {
    std::fprintf(stderr, "replay_bench: play exit %d: %s", rc, err.str().c_str());
    std::exit(1);
  }
  sink.wait_all(std::chrono::seconds(10));
  std::vector<int64_t> errs;
  const auto& at = sink.arrival();
  for (size_t i = 1; i < at.size(); ++i) {
    if (at[i] && at[i - 1]) errs.push_back(std::llabs((at[i] - at[i - 1]) - period));
  }
  std::printf("| %d Hz, %zu B, %.0f s | %" PRIu64 "/%" PRIu64
              " | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.3f s |\n",
              hz, a.size, a.seconds, sink.received(), n, pct(errs, 0.5) / 1e3,
              pct(errs, 0.99) / 1e3, pct(errs, 1.0) / 1e3,
              static_cast<double>(rep.lateness.p50_ns) / 1e3,
              static_cast<double>(rep.lateness.p99_ns) / 1e3,
              static_cast<double>(rep.lateness.max_ns) / 1e3, rep.publish_seconds);
  std::fflush(stdout);
  std::filesystem::remove_all(dir);
}

// What the host gives without replay: a thread sleeping with clock_nanosleep(TIMER_ABSTIME) to
// evenly spaced deadlines (timer slack 1 us, no spinning); how late it wakes up.
void baseline(const Args& a, int hz) {
  ::prctl(PR_SET_TIMERSLACK, 1000, 0, 0, 0);
  const uint64_t n = static_cast<uint64_t>(hz * a.seconds);
  const int64_t period = 1'000'000'000 / hz;
  auto now = [] {
    timespec ts;
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
  };
  std::vector<int64_t> late;
  late.reserve(n);
  const int64_t start = now() + 1'000'000;
  for (uint64_t i = 0; i < n; ++i) {
    const int64_t due = start + static_cast<int64_t>(i) * period;
    timespec ts{static_cast<time_t>(due / 1'000'000'000), static_cast<long>(due % 1'000'000'000)};
    ::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr);
    late.push_back(now() - due);
  }
  std::printf("| %d Hz, %.0f s | %.1f | %.1f | %.1f |\n", hz, a.seconds, pct(late, 0.5) / 1e3,
              pct(late, 0.99) / 1e3, pct(late, 1.0) / 1e3);
  std::fflush(stdout);
}

void fast(const Args& a) {
  const uint64_t n = a.fast_samples;
  const int64_t period = 100'000;  // recorded at 10 kHz
  const std::string dir = make_dir("fast");
  write_recording(dir + "/rec", n, period, a.size);
  // Storage read rate: one full pass (the second, page cache warm).
  double read_rate = 0;
  for (int pass = 0; pass < 2; ++pass) {
    auto rec = storage::Recording::open(dir + "/rec");
    auto cur = (*rec)->query();
    const auto t0 = Clock::now();
    uint64_t k = 0, bytes = 0;
    while (const storage::RecordView* r = cur->next()) {
      ++k;
      bytes += r->payload.size();
    }
    read_rate = static_cast<double>(k) / std::chrono::duration<double>(Clock::now() - t0).count();
    if (k != n) std::fprintf(stderr, "replay_bench: read %" PRIu64 " of %" PRIu64 "\n", k, n);
  }
  // --fast into a reliable reader, and with no reader at all.
  double with_reader = 0, without = 0;
  uint64_t got = 0;
  {
    Sink sink(a, n);
    std::ostringstream err;
    service::replay::PlayReport rep;
    auto o = play_options(a, dir + "/rec");
    o.fast = true;
    if (service::replay::play(o, err, &rep) != 0) {
      std::fprintf(stderr, "replay_bench: play --fast: %s", err.str().c_str());
      std::exit(1);
    }
    sink.wait_all(std::chrono::seconds(10));
    got = sink.received();
    with_reader = static_cast<double>(rep.samples) / rep.publish_seconds;
  }
  {
    std::ostringstream err;
    service::replay::PlayReport rep;
    auto o = play_options(a, dir + "/rec");
    o.fast = true;
    o.wait_readers = 0;
    o.ack_timeout = std::chrono::seconds(0);
    if (service::replay::play(o, err, &rep) != 0) {
      std::fprintf(stderr, "replay_bench: play --fast: %s", err.str().c_str());
      std::exit(1);
    }
    without = static_cast<double>(rep.samples) / rep.publish_seconds;
  }
  std::printf("| %" PRIu64 " x %zu B | 10000 | %.0f | %.0f (%" PRIu64
              " received) | %.0f | %.1fx | %.2f |\n",
              n, a.size, read_rate, with_reader, got, without, with_reader / 10000.0,
              with_reader / read_rate);
  std::fflush(stdout);
  std::filesystem::remove_all(dir);
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string f = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "replay_bench: %s needs a value\n", f.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (f == "--hz") {
      a.hz.clear();
      std::stringstream ss(next());
      for (std::string x; std::getline(ss, x, ',');) a.hz.push_back(std::stoi(x));
    } else if (f == "--seconds") {
      a.seconds = std::stod(next());
    } else if (f == "--size") {
      a.size = std::stoul(next());
    } else if (f == "--fast-samples") {
      a.fast_samples = std::stoull(next());
    } else if (f == "--nic") {
      a.nic = next();
    } else if (f == "--spin-us") {
      a.spin_us = std::stoi(next());
    } else if (f == "--spin-max-us") {
      a.spin_max_us = std::stoi(next());
    } else if (f == "--realtime") {
      a.realtime = std::stoi(next());
    } else if (f == "--no-fast") {
      a.fast = false;
    } else if (f == "--no-timing") {
      a.timing = false;
    } else {
      std::fprintf(stderr,
                   "usage: replay_bench [--hz 1000,10000] [--seconds S] [--size B] "
                   "[--fast-samples N] [--nic IF] [--spin-us U] [--spin-max-us U] [--realtime "
                   "PRIO] [--no-fast] "
                   "[--no-timing]\n");
      return 2;
    }
  }
  if (a.timing) {
    std::printf(
        "| recording | received | inter-arrival error p50 (us) | p99 (us) | max (us) | "
        "replay lateness p50 (us) | p99 (us) | max (us) | replay time |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|\n");
    for (int hz : a.hz) timing(a, hz);
  }
  if (a.timing) {
    std::printf(
        "\n| host baseline: clock_nanosleep wake-up | lateness p50 (us) | p99 (us) | "
        "max (us) |\n");
    std::printf("|---|---|---|---|\n");
    for (int hz : a.hz) baseline(a, hz);
  }
  if (a.fast) {
    std::printf(
        "\n| --fast recording | recorded rate (samples/s) | storage read (samples/s) | "
        "--fast into a reliable reader (samples/s) | --fast, no reader (samples/s) | "
        "vs recorded | vs storage read |\n");
    std::printf("|---|---|---|---|---|---|---|\n");
    fast(a);
  }
  return 0;
}
