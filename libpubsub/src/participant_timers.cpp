// ParticipantImpl, timers: the periodic work of the event thread.
// participant_impl.hpp has the overview of the whole class (what lives in which file, who owns
// what, which thread runs what, the lock order).
//
// One steady_timer (timer_) on io_, run by event_thread_ (started by start(), joined by close()).
// on_timer() runs Discovery's timer (SPDP announcements, lease expiry, the SEDP endpoints'
// timers), then the timer of every writer and reader in the current Routes snapshot (HEARTBEATs,
// batch flushes, paced repairs, pre-emptive and held-back ACKNACKs, retried deliveries), asserts
// the participant's liveliness for its MANUAL_BY_PARTICIPANT writers, and
// re-arms for the earliest deadline they return: at least 50 us ahead, and no later than the
// shortest flush delay of a batching writer. timer_ is touched only on the event thread (start()
// arms it before the thread exists); other threads call wake_at(), which posts to io_ and can
// only bring the timer forward (matching also posts a whole on_timer() for a new in-process
// reader). on_timer() takes no participant lock itself: the endpoints take their own, and a lease
// expiry reaches entities_mu_ through on_endpoint_lost().
#include "participant_impl.hpp"

#include <algorithm>

namespace pubsub::detail {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

// ---- timers ---------------------------------------------------------------------------------

void ParticipantImpl::schedule_timer(rtps::SteadyTime at) {
  timer_.expires_at(at);
  timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) on_timer();
  });
}

void ParticipantImpl::wake_at(rtps::SteadyTime at) {
  boost::asio::post(io_, [this, at] {
    if (at < timer_.expiry()) schedule_timer(at);
  });
}

void ParticipantImpl::on_timer() {
  const auto now = Clock::now();
  auto routes = routes_.load();
  rtps::SteadyTime next = discovery_->on_timer(now);
  for (const auto& [id, w] : routes->writers) next = std::min(next, w->on_timer(now));
  for (const auto& r : routes->readers) next = std::min(next, r->on_timer(now));
  // MANUAL_BY_PARTICIPANT writers: the participant asserts its liveliness each third of their
  // shortest lease (writes do not reach readers of other participants' liveliness).
  if (routes->manual_participant_lease < std::chrono::seconds(0x7fffffff)) {
    if (now >= next_participant_assertion_) {
      discovery_->assert_participant_liveliness();
      next_participant_assertion_ =
          now + std::chrono::duration_cast<Clock::duration>(routes->manual_participant_lease / 3);
    }
    next = std::min(next, next_participant_assertion_);
  }
  // Batches open between ticks: come back within the shortest flush delay.
  if (routes->min_flush_delay != Duration::max()) {
    next = std::min(
        next, now + std::max<Duration>(routes->min_flush_delay, std::chrono::microseconds(100)));
  }
  schedule_timer(std::max(next, now + std::chrono::microseconds(50)));
}

}  // namespace pubsub::detail
