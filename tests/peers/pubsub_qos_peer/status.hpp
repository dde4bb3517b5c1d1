// pubsub_qos_peer: the status lines libpubsub has no listener for, found by polling.
//
// A thread of its own wakes every 50 ms and compares: the number of matched readers (pub) or
// writers (sub) -> a "matched" line when it changed (total = how many times it went up, summed
// over the increases seen); the participant's incompatible-QoS counters per policy
// (ParticipantStats::incompatible_by_policy, one per incompatible pair of a local and a remote
// endpoint) -> one "incompatible_qos" line per new pair, with the policy's name and, as DDS's
// total_count, the number of incompatible pairs so far (all policies). A match and unmatch
// within one period goes unseen. The peer has one endpoint, so the participant's counters are
// its endpoint's. Deadline and liveliness are not monitored by libpubsub: no such lines.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

#include "output.hpp"
#include "pubsub/participant.hpp"

namespace pubsub_peer {

class StatusPoller {
 public:
  // matched: the endpoint's matched count (Writer::matched_readers, Reader::matched_writers);
  // on_matched: called on the poller's thread after each "matched" line, with the new count.
  StatusPoller(const pubsub::Participant& participant, std::function<size_t()> matched,
               std::function<void(size_t)> on_matched, Waker& waker);
  ~StatusPoller();  // stop()

  // Polls once at once, then every 50 ms on the thread until stop().
  void start();
  // Polls a last time and ends the thread; no status line after it returns.
  void stop();
  size_t matched() const { return current_; }

 private:
  void run(std::stop_token stop);
  void poll();

  const pubsub::Participant& participant_;
  std::function<size_t()> matched_fn_;
  std::function<void(size_t)> on_matched_;
  Waker& waker_;
  std::atomic<size_t> current_{0};
  int64_t matched_total_ = 0;
  uint64_t seen_[pubsub::kQosPolicyCount] = {};
  int64_t incompatible_total_ = 0;
  std::mutex mu_;  // for the 50-ms sleep, which stop() cuts short
  std::condition_variable_any cv_;
  std::jthread thread_;
};

}  // namespace pubsub_peer
