// WriterHistory: the two fixed rings (descriptors and payload bytes). Deterministic cases for
// append/find/remove and both rings filling up, then a long randomized run against a simple
// model that checks every stored payload after every step.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <deque>
#include <random>
#include <vector>

#include "rtps/history.hpp"

using pubsub::SequenceNumber;
using pubsub::rtps::CacheChange;
using pubsub::rtps::WriterHistory;

namespace {

size_t rounded(size_t n) {
  return n == 0 ? 8 : (n + 7) & ~size_t{7};
}

CacheChange* append(WriterHistory& h, size_t size, uint8_t fill) {
  CacheChange* c = h.try_append(size);
  if (c) std::memset(h.data(*c), fill, size);
  return c;
}

}  // namespace

TEST_CASE("WriterHistory appends with consecutive sequence numbers and finds them") {
  WriterHistory h(4, 64);
  REQUIRE(h.empty());
  REQUIRE(h.size() == 0);
  REQUIRE(h.last_sn() == 0);
  REQUIRE(h.first_sn() == 1);
  REQUIRE(h.max_samples() == 4);
  REQUIRE(h.max_bytes() == 64);
  REQUIRE(h.find(0) == nullptr);
  REQUIRE(h.find(1) == nullptr);

  CacheChange* a = append(h, 10, 0xa1);
  REQUIRE(a != nullptr);
  REQUIRE(a->sn == 1);
  REQUIRE(a->offset == 0);
  REQUIRE(a->size == 10);
  CacheChange* b = append(h, 20, 0xb2);
  REQUIRE(b->sn == 2);
  REQUIRE(b->offset == 16);  // payloads start on 8-byte boundaries
  CacheChange* c = append(h, 0, 0);
  REQUIRE(c->sn == 3);
  REQUIRE(c->offset == 40);
  REQUIRE(c->size == 0);

  REQUIRE(h.size() == 3);
  REQUIRE(h.first_sn() == 1);
  REQUIRE(h.last_sn() == 3);
  REQUIRE(h.bytes_used() == 16 + 24 + 8);  // an empty sample still takes 8 bytes
  REQUIRE(h.find(1) == a);
  REQUIRE(h.find(2) == b);
  REQUIRE(h.find(3) == c);
  REQUIRE(h.find(4) == nullptr);
  REQUIRE(h.find(-1) == nullptr);
  REQUIRE(h.data(*h.find(2))[19] == 0xb2);

  h.remove_through(2);
  REQUIRE(h.size() == 1);
  REQUIRE(h.first_sn() == 3);
  REQUIRE(h.find(2) == nullptr);
  REQUIRE(h.find(3)->sn == 3);
  REQUIRE(h.bytes_used() == 8);

  h.remove_through(2);  // nothing at or below 2 any more
  REQUIRE(h.size() == 1);
  h.remove_through(100);
  REQUIRE(h.empty());
  REQUIRE(h.bytes_used() == 0);
  REQUIRE(h.last_sn() == 3);
  REQUIRE(h.first_sn() == 4);
  // Numbering continues; an emptied history starts its bytes over at offset 0.
  CacheChange* d = append(h, 64, 0xd4);
  REQUIRE(d->sn == 4);
  REQUIRE(d->offset == 0);
  h.remove_oldest();
  REQUIRE(h.empty());
  h.remove_oldest();  // no-op on an empty history
  REQUIRE(h.empty());
  REQUIRE(h.last_sn() == 4);
}

TEST_CASE("WriterHistory refuses a sample when the descriptor ring is full") {
  WriterHistory h(3, 1024);
  for (int i = 0; i < 3; ++i) REQUIRE(append(h, 8, 1) != nullptr);
  REQUIRE_FALSE(h.can_append(0));
  REQUIRE(h.try_append(0) == nullptr);
  REQUIRE(h.last_sn() == 3);  // a refusal consumes no sequence number
  REQUIRE(h.size() == 3);
  h.remove_oldest();
  REQUIRE(h.can_append(8));
  REQUIRE(append(h, 8, 2)->sn == 4);
  REQUIRE(h.try_append(8) == nullptr);
}

TEST_CASE("WriterHistory refuses a sample when the byte ring is full") {
  WriterHistory h(100, 64);
  for (int i = 0; i < 8; ++i) REQUIRE(append(h, 5, static_cast<uint8_t>(i)) != nullptr);
  REQUIRE(h.bytes_used() == 64);
  REQUIRE_FALSE(h.can_append(1));
  REQUIRE(h.try_append(1) == nullptr);
  REQUIRE(h.try_append(0) == nullptr);
  REQUIRE(h.last_sn() == 8);
  h.remove_through(2);  // frees [0, 16) at the start
  REQUIRE(h.can_append(16));
  REQUIRE_FALSE(h.can_append(17));
  CacheChange* c = append(h, 16, 0xee);
  REQUIRE(c->offset == 0);
  REQUIRE(c->sn == 9);
  REQUIRE_FALSE(h.can_append(1));
}

TEST_CASE("WriterHistory never fits a sample larger than max_bytes") {
  WriterHistory h(16, 64);
  REQUIRE(h.fits(64));
  REQUIRE_FALSE(h.fits(65));
  REQUIRE_FALSE(h.fits(size_t{1} << 40));
  REQUIRE_FALSE(h.can_append(65));
  REQUIRE(h.try_append(65) == nullptr);
  REQUIRE(h.try_append(size_t{1} << 40) == nullptr);
  REQUIRE(h.empty());
  REQUIRE(h.last_sn() == 0);
  // Exactly max_bytes fits an empty history, and only an empty one.
  REQUIRE(append(h, 64, 1) != nullptr);
  REQUIRE_FALSE(h.can_append(1));
  h.remove_oldest();
  REQUIRE(append(h, 8, 2) != nullptr);
  REQUIRE_FALSE(h.can_append(64));
  REQUIRE(h.try_append(64) == nullptr);
}

TEST_CASE("WriterHistory wraps the byte ring and keeps payloads contiguous") {
  WriterHistory h(16, 64);
  CacheChange* a = append(h, 24, 0xa);
  CacheChange* b = append(h, 24, 0xb);
  REQUIRE(a->offset == 0);
  REQUIRE(b->offset == 24);
  h.remove_oldest();  // free: [0, 24) and [48, 64)
  // 24 bytes do not fit in the 16 at the end: the sample goes to the start, whole.
  CacheChange* c = append(h, 24, 0xc);
  REQUIRE(c->offset == 0);
  REQUIRE(c->sn == 3);
  // Now [24, 48) is B and [0, 24) is C; the tail end [48, 64) lies behind the head and
  // is unusable until B leaves.
  REQUIRE_FALSE(h.can_append(8));
  REQUIRE(h.try_append(8) == nullptr);
  h.remove_through(2);
  CacheChange* d = append(h, 40, 0xd);
  REQUIRE(d->offset == 24);
  REQUIRE(h.data(*h.find(3))[23] == 0xc);
  REQUIRE(h.data(*h.find(4))[39] == 0xd);
  REQUIRE(h.bytes_used() == 64);
}

TEST_CASE("WriterHistory with wrap_ahead keeps to the pages it has touched") {
  // A writer acknowledged every 10 samples (all but the newest): 100-B samples take 104 bytes.
  // With wrap_ahead 2048 the head returns to 0 once the room before the oldest sample (tail)
  // holds what is held (104) + 2048 + the new sample (104): at the first acknowledgement with
  // tail >= 2256, which is after sn 30 (tail 29 * 104 = 3016), so nothing lies past 30 * 104.
  // Without it the head walks through the whole 64 KiB: 630 samples fit, the last ends at 65520.
  for (const auto& [wrap_ahead, extent_expected] :
       {std::pair<size_t, size_t>{0, 65520}, {2048, 3120}}) {
    INFO("wrap_ahead " << wrap_ahead);
    WriterHistory h(4096, 1 << 16);
    h.set_wrap_ahead(wrap_ahead);
    size_t extent = 0;
    for (int i = 0; i < 5000; ++i) {
      CacheChange* c = append(h, 100, static_cast<uint8_t>(i));
      REQUIRE(c != nullptr);
      extent = std::max(extent, c->offset + rounded(100));
      if (i % 10 == 9) {
        h.remove_through(c->sn - 1);
        REQUIRE(h.size() == 1);
        REQUIRE(h.data(*h.find(c->sn))[99] == static_cast<uint8_t>(i));
      }
    }
    REQUIRE(extent == extent_expected);
  }
}

TEST_CASE("WriterHistory matches a simple model over thousands of random steps") {
  struct Held {
    SequenceNumber sn;
    size_t size;
    uint32_t seed;
  };
  auto fill = [](uint8_t* p, size_t n, uint32_t seed) {
    for (size_t i = 0; i < n; ++i) {
      seed = seed * 1664525u + 1013904223u;
      p[i] = static_cast<uint8_t>(seed >> 24);
    }
  };
  auto intact = [](const uint8_t* p, size_t n, uint32_t seed) {
    for (size_t i = 0; i < n; ++i) {
      seed = seed * 1664525u + 1013904223u;
      if (p[i] != static_cast<uint8_t>(seed >> 24)) return false;
    }
    return true;
  };

  const auto wrap_ahead = GENERATE(size_t{0}, size_t{1});
  for (const auto& [max_samples, max_bytes] :
       {std::pair<size_t, size_t>{8, 256}, {32, 1000}, {64, 4096}, {6, 20000}}) {
    INFO("max_samples " << max_samples << " max_bytes " << max_bytes << " wrap_ahead "
                        << wrap_ahead);
    WriterHistory h(max_samples, max_bytes);
    // Early wrapping (set_wrap_ahead) at an eighth of the ring, or none.
    h.set_wrap_ahead(wrap_ahead * h.max_bytes() / 8);
    const size_t capacity = h.max_bytes();
    std::deque<Held> model;
    SequenceNumber last = 0;
    std::mt19937 rng(static_cast<uint32_t>(max_samples * 7919 + max_bytes));
    size_t appended = 0, refused = 0, wrapped = 0, early = 0;
    size_t prev_offset = 0, prev_end = 0;
    for (int step = 0; step < 6000; ++step) {
      const uint32_t op = rng() % 10;
      if (op < 6) {
        // Mixed sizes: mostly small, sometimes a large share of the ring, rarely too big.
        size_t size;
        const uint32_t kind = rng() % 20;
        if (kind < 12) {
          size = rng() % 40;
        } else if (kind < 18) {
          size = rng() % (capacity / 2 + 1);
        } else if (kind < 19) {
          size = capacity - rng() % 16;
        } else {
          size = capacity + 1 + rng() % 100;
        }
        const bool can = h.can_append(size);
        CacheChange* c = h.try_append(size);
        REQUIRE(can == (c != nullptr));
        if (size > capacity) REQUIRE(c == nullptr);
        if (model.empty() && size <= capacity) REQUIRE(c != nullptr);
        if (model.size() == max_samples) REQUIRE(c == nullptr);
        if (c) {
          REQUIRE(c->sn == last + 1);
          REQUIRE(c->size == size);
          REQUIRE(c->offset % 8 == 0);
          REQUIRE(c->offset + rounded(size) <= capacity);
          if (!model.empty() && c->offset < prev_offset) ++wrapped;
          // Back to the start although it fitted at the end: an early wrap.
          if (!model.empty() && c->offset == 0 && prev_end + rounded(size) <= capacity) ++early;
          prev_offset = c->offset;
          prev_end = c->offset + rounded(size);
          last = c->sn;
          const uint32_t seed = static_cast<uint32_t>(rng());
          fill(h.data(*c), size, seed);
          model.push_back({c->sn, size, seed});
          ++appended;
        } else {
          ++refused;
          REQUIRE(h.last_sn() == last);
        }
      } else if (op < 8) {
        if (!model.empty()) {
          const SequenceNumber through =
              model.front().sn + static_cast<SequenceNumber>(rng() % (model.size() + 1)) - 1;
          h.remove_through(through);
          while (!model.empty() && model.front().sn <= through) model.pop_front();
        }
      } else {
        h.remove_oldest();
        if (!model.empty()) model.pop_front();
      }

      // The whole state agrees with the model, and every payload reads back intact.
      REQUIRE(h.size() == model.size());
      REQUIRE(h.last_sn() == last);
      REQUIRE(h.first_sn() == (model.empty() ? last + 1 : model.front().sn));
      size_t used = 0;
      for (const Held& m : model) {
        const CacheChange* c = h.find(m.sn);
        REQUIRE(c != nullptr);
        REQUIRE(c->sn == m.sn);
        REQUIRE(c->size == m.size);
        if (!intact(h.data(*c), m.size, m.seed)) FAIL("payload of sn " << m.sn << " corrupted");
        used += rounded(m.size);
      }
      REQUIRE(h.bytes_used() == used);
      REQUIRE(used <= capacity);
      REQUIRE(h.find(last + 1) == nullptr);
      if (!model.empty()) REQUIRE(h.find(model.front().sn - 1) == nullptr);
    }
    // The run really exercised wrap-around and both kinds of refusal.
    REQUIRE(appended > 1000);
    REQUIRE(refused > 100);
    REQUIRE(wrapped > 10);
    if (wrap_ahead) {
      REQUIRE(early > 10);
    } else {
      REQUIRE(early == 0);
    }
  }
}
