// The interval lines that pubsub-perftest and perf/peers/fastdds_perftest print while they run
// ("Samples: ... Samples/s: ... Lost: ..." once a second on stderr), from a thread of its own.
// One format, written in one place (like summary_json.hpp).
#pragma once

#include <chrono>
#include <cinttypes>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <thread>

namespace perftest {

// Calls `sample()` (returning {samples so far, lost so far}) once a second and prints its line,
// until destroyed; does nothing when `enabled` is false.
class IntervalPrinter {
 public:
  template <class F>
  IntervalPrinter(bool enabled, F sample) {
    if (!enabled) return;
    thread_ = std::thread([this, sample] {
      uint64_t before = 0;
      std::unique_lock lk(mu_);
      while (!cv_.wait_for(lk, std::chrono::seconds(1), [&] { return stop_; })) {
        const auto [count, lost] = sample();
        std::fprintf(stderr,
                     "Samples: %10" PRIu64 "  Samples/s: %10" PRIu64 "  Lost: %" PRIu64 "\n", count,
                     count - before, lost);
        before = count;
      }
    });
  }
  IntervalPrinter(const IntervalPrinter&) = delete;
  IntervalPrinter& operator=(const IntervalPrinter&) = delete;
  ~IntervalPrinter() {
    {
      std::lock_guard lk(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace perftest
