// The payload checksum pubsub-perftest reports (-summaryJson): a 64-bit hash of each sample's
// CDR body (after the 4-byte encapsulation header, without padding), summed over samples so the
// total does not depend on order. Tests recompute it from recordings to compare contents.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace perftest {

inline uint64_t body_hash(const uint8_t* p, size_t n) {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = (h ^ (w * 0xff51afd7ed558ccdull)) * 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 29;
  }
  uint64_t tail = 0;
  std::memcpy(&tail, p + i, n - i);
  h = (h ^ (tail * 0xff51afd7ed558ccdull)) * 0xc4ceb9fe1a85ec53ull;
  return h ^ (h >> 32);
}

}  // namespace perftest
