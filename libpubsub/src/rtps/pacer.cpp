#include "rtps/pacer.hpp"

#include <algorithm>
#include <cstdint>

namespace pubsub::rtps {

namespace {

Pacer::Clock::duration seconds_for(double bytes, double rate) {
  return std::chrono::duration_cast<Pacer::Clock::duration>(
      std::chrono::duration<double>(bytes / rate));
}

}  // namespace

// next_ is the virtual time up to which the booked bytes have (notionally) left; idle time earns
// at most one burst of credit, so next_ never lags `now` by more than the burst's duration.
Pacer::Clock::time_point Pacer::booked_until(Clock::time_point now) const {
  return std::max(next_, now - seconds_for(static_cast<double>(kBurst), rate_));
}

Pacer::Clock::duration Pacer::reserve(size_t bytes, Clock::time_point now) {
  if (!active()) return Clock::duration::zero();
  next_ = booked_until(now) + seconds_for(static_cast<double>(bytes), rate_);
  return next_ > now ? next_ - now : Clock::duration::zero();
}

size_t Pacer::available(Clock::time_point now) const {
  if (!active()) return SIZE_MAX;
  const double credit = std::chrono::duration<double>(now - booked_until(now)).count() * rate_;
  return credit <= 0 ? 0 : static_cast<size_t>(credit);
}

Pacer::Clock::duration Pacer::until_available(size_t bytes, Clock::time_point now) const {
  if (!active()) return Clock::duration::zero();
  const Clock::time_point at = booked_until(now) + seconds_for(static_cast<double>(bytes), rate_);
  return at > now ? at - now : Clock::duration::zero();
}

// The rate is measured over busy periods only: a send that begins more than 1 ms after the
// previous one ended starts a new window, so it is the rate bursts went out at, not an average
// that includes idle time.
void Pacer::note_sent(size_t bytes, Clock::time_point begin, Clock::time_point end) {
  if (window_start_ == Clock::time_point{} || begin - last_sent_ > std::chrono::milliseconds(1)) {
    window_start_ = begin;
    window_bytes_ = 0;
  }
  last_sent_ = end;
  window_bytes_ += bytes;
  const auto elapsed = std::max<Clock::duration>(end - window_start_, std::chrono::microseconds(1));
  recent_rate_ =
      static_cast<double>(window_bytes_) / std::chrono::duration<double>(elapsed).count();
}

void Pacer::on_loss(Clock::time_point now) {
  if (last_loss_ != Clock::time_point{} && now - last_loss_ < kLossSpacing) return;
  last_loss_ = now;
  const double from = active() ? rate_ : std::max(recent_rate_, kMinRate * 2);
  // Half, but no less than 0.9 of what the readers took in lately (nor more than 0.9 of `from`).
  const double floor = std::min(0.9 * best_delivery_rate(), 0.9 * from);
  rate_ = std::max({kMinRate, from / 2, floor});
  if (next_ < now) next_ = now;
}

double Pacer::best_delivery_rate() const {
  return *std::max_element(deliveries_.begin(), deliveries_.end());
}

void Pacer::on_acked(size_t bytes, Clock::time_point now) {
  // The interval starts at an acknowledgement: what it acknowledged was delivered before.
  if (acked_since_ == Clock::time_point{}) {
    acked_since_ = now;
  } else {
    acked_bytes_ += bytes;
    const auto elapsed = now - acked_since_;
    if (elapsed >= kDeliveryInterval) {
      deliveries_[next_delivery_++ % kDeliveryHistory] =
          static_cast<double>(acked_bytes_) / std::chrono::duration<double>(elapsed).count();
      acked_since_ = now;
      acked_bytes_ = 0;
    }
  }
  if (!active()) return;
  rate_ += kGrowthPerByte * static_cast<double>(bytes);
  if (rate_ > kMaxRate) rate_ = 0;  // keeps up: off again
}

}  // namespace pubsub::rtps
