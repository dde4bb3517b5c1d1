// Pacer: the token bucket and its loss-driven rate (rtps/pacer.hpp).
#include "rtps/pacer.hpp"

#include <catch2/catch.hpp>
#include <chrono>

using pubsub::rtps::Pacer;
using namespace std::chrono_literals;

namespace {
const Pacer::Clock::time_point t0{std::chrono::seconds(1000)};
}

TEST_CASE("Pacer: off until a loss, then half the recent sending rate") {
  Pacer p;
  CHECK_FALSE(p.active());
  CHECK(p.reserve(100 << 20, t0) == Pacer::Clock::duration::zero());
  CHECK(p.available(t0) == SIZE_MAX);
  // 200 MB sent back to back over 10 ms = 20 GB/s; the first loss paces at half of it.
  for (int i = 0; i < 10; ++i) p.note_sent(20'000'000, t0 + i * 1ms, t0 + (i + 1) * 1ms);
  p.on_loss(t0 + 10ms);
  REQUIRE(p.active());
  CHECK(p.rate() == Approx(10e9).epsilon(0.01));
}

TEST_CASE("Pacer: losses halve the rate at most once per spacing, down to the floor") {
  Pacer p;
  p.note_sent(2'000'000, t0, t0 + 10ms);  // 200 MB/s
  p.on_loss(t0 + 10ms);
  CHECK(p.rate() == Approx(100e6));
  p.on_loss(t0 + 15ms);  // within kLossSpacing: the same episode
  CHECK(p.rate() == Approx(100e6));
  p.on_loss(t0 + 40ms);
  CHECK(p.rate() == Approx(50e6));
  auto t = t0 + 40ms;
  for (int i = 0; i < 20; ++i) p.on_loss(t += 30ms);
  CHECK(p.rate() == Approx(Pacer::kMinRate));
}

TEST_CASE("Pacer: a burst leaves at once, the rest waits its turn at the rate") {
  Pacer p;
  p.note_sent(4'000'000, t0, t0 + 10ms);  // 400 MB/s sent
  const auto t = t0 + 10ms;
  p.on_loss(t);  // 200 MB/s
  REQUIRE(p.rate() == Approx(200e6));
  // Just after the loss there is no credit: 200 KB waits 1 ms.
  CHECK(p.reserve(200'000, t) == std::chrono::duration_cast<Pacer::Clock::duration>(1ms));
  // After an idle second the credit is one burst, not a second's worth.
  const auto later = t + 1s;
  CHECK(p.available(later) == Pacer::kBurst);
  CHECK(p.reserve(Pacer::kBurst, later) == Pacer::Clock::duration::zero());
  CHECK(p.available(later) == 0);
  const auto wait = p.reserve(2'000'000, later);  // 10 ms at 200 MB/s
  CHECK(std::chrono::duration<double>(wait).count() == Approx(0.010).epsilon(0.001));
}

TEST_CASE("Pacer: the starting rate is that of bursts, not an average over idle time") {
  Pacer p;
  p.note_sent(1'000'000, t0, t0 + 1ms);            // 1 GB/s
  p.note_sent(1'000'000, t0 + 500ms, t0 + 501ms);  // idle in between: a new window, 1 GB/s
  p.on_loss(t0 + 502ms);
  CHECK(p.rate() == Approx(500e6));
}

TEST_CASE("Pacer: acknowledged data raises the rate, and past the ceiling pacing is off") {
  Pacer p;
  p.note_sent(2'000'000, t0, t0 + 10ms);
  p.on_loss(t0 + 10ms);  // 100 MB/s
  p.on_acked(20'000'000, t0 + 11ms);
  CHECK(p.rate() == Approx(100e6 + Pacer::kGrowthPerByte * 20e6));
  while (p.active()) p.on_acked(1'000'000'000, t0 + 12ms);
  CHECK(p.reserve(1 << 30, t0 + 1s) == Pacer::Clock::duration::zero());
}

TEST_CASE("Pacer: a loss does not pace below 0.9 of what the readers were acknowledging") {
  Pacer p;
  p.note_sent(20'000'000, t0, t0 + 10ms);  // bursts at 2 GB/s
  // The readers acknowledge 1.2 GB/s: 60 MB over the 50 ms after the first acknowledgement.
  p.on_acked(5'000'000, t0 + 10ms);  // starts the interval; not counted
  p.on_acked(30'000'000, t0 + 35ms);
  p.on_acked(30'000'000, t0 + 60ms);
  REQUIRE(p.delivery_rate() == Approx(1.2e9));
  p.on_loss(t0 + 60ms);
  CHECK(p.rate() == Approx(1.08e9));  // not 1 GB/s (half of 2 GB/s)
  // A second loss: half of 1.08 GB/s is below the floor; never more than 0.9 of the rate before.
  p.on_loss(t0 + 100ms);
  CHECK(p.rate() == Approx(0.9 * 1.08e9));
}

TEST_CASE("Pacer: the floor is the best recent delivery, not the last interval's") {
  Pacer p;
  p.note_sent(20'000'000, t0, t0 + 10ms);  // bursts at 2 GB/s
  p.on_acked(5'000'000, t0 + 10ms);        // starts the interval; not counted
  p.on_acked(60'000'000, t0 + 60ms);       // 1.2 GB/s
  // Then a repair stall: 5 MB in the next 50 ms (100 MB/s).
  p.on_acked(5'000'000, t0 + 110ms);
  REQUIRE(p.delivery_rate() == Approx(100e6));
  REQUIRE(p.best_delivery_rate() == Approx(1.2e9));
  p.on_loss(t0 + 110ms);
  CHECK(p.rate() == Approx(1.08e9));
  // Eight intervals later the 1.2 GB/s has aged out: the floor is what the readers took since.
  auto t = t0 + 110ms;
  for (size_t i = 0; i < Pacer::kDeliveryHistory; ++i) p.on_acked(25'000'000, t += 50ms);
  REQUIRE(p.best_delivery_rate() == Approx(500e6));
  const double before = p.rate();
  p.on_loss(t + 1ms);
  CHECK(p.rate() == Approx(std::max(before / 2, 0.9 * 500e6)));
}
