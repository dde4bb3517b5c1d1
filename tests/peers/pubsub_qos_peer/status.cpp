// pubsub_qos_peer: the polled status lines (status.hpp). poll() runs on the poller's thread,
// and once more on the main thread in stop() after that thread has ended.
#include "status.hpp"

namespace pubsub_peer {
namespace {

constexpr auto kPeriod = std::chrono::milliseconds(50);

std::string policy_name(size_t id) {
  const char* name = pubsub::to_string(static_cast<pubsub::QosPolicyId>(id));
  const std::string s = name ? name : "";
  return s.empty() || s == "UNKNOWN" || s == "INVALID" ? "UNKNOWN_" + std::to_string(id) : s;
}

}  // namespace

StatusPoller::StatusPoller(const pubsub::Participant& participant, std::function<size_t()> matched,
                           std::function<void(size_t)> on_matched, Waker& waker)
    : participant_(participant),
      matched_fn_(std::move(matched)),
      on_matched_(std::move(on_matched)),
      waker_(waker) {}

StatusPoller::~StatusPoller() {
  stop();
}

void StatusPoller::start() {
  thread_ = std::jthread([this](std::stop_token st) { run(st); });
}

void StatusPoller::stop() {
  if (!thread_.joinable()) return;
  thread_.request_stop();
  thread_.join();
  poll();
}

void StatusPoller::run(std::stop_token stop) {
  while (!stop.stop_requested()) {
    poll();
    std::unique_lock lk(mu_);
    cv_.wait_for(lk, stop, kPeriod, [] { return false; });
  }
}

void StatusPoller::poll() {
  const size_t now = matched_fn_();
  const size_t before = current_;
  if (now != before) {
    if (now > before) matched_total_ += static_cast<int64_t>(now - before);
    current_ = now;
    emit(Line("matched").num("current", static_cast<int64_t>(now)).num("total", matched_total_));
    if (on_matched_) on_matched_(now);
    waker_.poke();
  }
  const pubsub::ParticipantStats s = participant_.stats();
  for (size_t id = 0; id < pubsub::kQosPolicyCount; ++id) {
    for (; seen_[id] < s.incompatible_by_policy[id]; ++seen_[id]) {
      emit(Line("incompatible_qos")
               .text("policy", policy_name(id))
               .num("total", ++incompatible_total_));
    }
  }
}

}  // namespace pubsub_peer
