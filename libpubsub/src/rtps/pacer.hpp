// Pacer: spreads a writer's fragmented data over time once a reader has shown it cannot take
// a burst (issue 15: a 2-MB sample sent as 228 back-to-back datagrams overflows the 1-MB socket
// buffer of a Cyclone reader, and such a reader asks for the lost fragments only every 100 ms).
//
// A virtual-clock token bucket: each reserve() books its bytes at the pacing rate after the
// previous booking and tells the caller how long to wait until its turn; up to burst() bytes may
// go at once. The rate is off (no waiting) until the first loss; a loss halves the rate the data
// was going out at (at most once per kLossSpacing) - though not below 0.9 of the highest rate the
// readers acknowledged data at over the last kDeliveryHistory intervals (about 0.4 s), which they
// demonstrably take in; a repair stall after a loss, when they acknowledge little, does not
// count against it - and every acknowledged
// byte adds a fraction of itself back (additive increase, as the congestion window does for whole
// samples). Above kMaxRate pacing turns itself off again, so a reader that keeps up costs
// nothing.
// Owned by a StatefulWriter and used under its lock; no thread of its own, no allocation.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>

namespace pubsub::rtps {

class Pacer {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr double kMinRate = 4e6;      // bytes/s: the floor after repeated losses
  static constexpr double kMaxRate = 8e9;      // bytes/s: pacing turns off above this
  static constexpr size_t kBurst = 256 << 10;  // bytes that may leave back to back
  static constexpr auto kLossSpacing = std::chrono::milliseconds(20);
  // Rate gained per acknowledged byte, per second: while the readers take in all that is sent,
  // the rate doubles about every 0.35 s (e^2 per second). Slower growth (0.5) left a Cyclone
  // reader at a quarter of what it takes for seconds after each loss (issue 15).
  static constexpr double kGrowthPerByte = 2.0;
  // The acknowledged (delivery) rate is measured over intervals of at least this long.
  static constexpr auto kDeliveryInterval = std::chrono::milliseconds(50);
  // The loss floor is 0.9 of the best of this many intervals.
  static constexpr size_t kDeliveryHistory = 8;

  bool active() const { return rate_ > 0; }
  double rate() const { return rate_; }  // bytes/s, 0 = not pacing

  // Books `bytes` for sending; returns how long to wait before sending them (zero when not
  // pacing or within the burst allowance).
  Clock::duration reserve(size_t bytes, Clock::time_point now);

  // How long until `bytes` may leave without waiting (zero when not pacing).
  Clock::duration until_available(size_t bytes, Clock::time_point now) const;

  // Bytes that leave now without waiting (the burst allowance; SIZE_MAX when not pacing).
  size_t available(Clock::time_point now) const;

  // Data went out (paced or not) between begin and end: measures the rate of recent bursts, which
  // a first loss starts from.
  void note_sent(size_t bytes, Clock::time_point begin, Clock::time_point end);

  // A reader lost data we sent: halve the rate (at most once per kLossSpacing; the writer calls it
  // once per loss episode, for data sent after the previous decrease).
  void on_loss(Clock::time_point now);

  // Readers acknowledged `bytes`: additive increase, and the delivery rate's measurement.
  void on_acked(size_t bytes, Clock::time_point now);
  // bytes/s over the last interval, 0 = not measured yet
  double delivery_rate() const {
    return deliveries_[(next_delivery_ + kDeliveryHistory - 1) % kDeliveryHistory];
  }
  double best_delivery_rate() const;  // over kDeliveryHistory intervals

 private:
  // The virtual time booking starts from: next_, but idle time earns at most one burst.
  Clock::time_point booked_until(Clock::time_point now) const;

  double rate_ = 0;           // bytes/s, 0 = off
  Clock::time_point next_{};  // virtual time the next booked byte may leave
  Clock::time_point last_loss_{};
  // Sending-rate measurement over the current busy period.
  Clock::time_point window_start_{};
  Clock::time_point last_sent_{};
  size_t window_bytes_ = 0;
  double recent_rate_ = 0;
  // Delivery-rate measurement: bytes acknowledged since acked_since_.
  Clock::time_point acked_since_{};
  size_t acked_bytes_ = 0;
  std::array<double, kDeliveryHistory> deliveries_{};  // the last intervals' rates, a ring
  size_t next_delivery_ = 0;
};

}  // namespace pubsub::rtps
