// The bytes of -payload random, the same in pubsub-perftest and fastdds_perftest: each sample's
// payload is a slice of one pool of pseudo-random bytes (std::mt19937_64, a fixed seed), at an
// offset derived from its sequence number. Consecutive samples start at least a sample apart in
// the pool, so they share no bytes (nothing for a compressor to find across samples either), and
// sample `seq` has the same bytes in every run and in either program.
//
// Built once per publisher before the run (the pool is 8 MiB or twice the sample); fill() is a
// memcpy, const, and safe from any thread.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

namespace perftest {

class RandomPayload {
 public:
  explicit RandomPayload(uint32_t datalen)
      : datalen_(datalen), pool_(std::max<size_t>(8u << 20, size_t{datalen} * 2)) {
    std::mt19937_64 rng(0xfeed);
    for (size_t i = 0; i + 8 <= pool_.size(); i += 8) {
      const uint64_t r = rng();
      std::memcpy(pool_.data() + i, &r, 8);
    }
  }

  // Copies sample `seq`'s first `n` payload bytes (n <= datalen) to `dst`.
  void fill(uint8_t* dst, size_t n, uint32_t seq) const {
    const size_t span = pool_.size() - datalen_;
    const size_t step = ((size_t{datalen_} + 7) & ~size_t{7}) + 8 * 4099;
    const size_t off = (size_t{seq} * step) % span;
    std::memcpy(dst, pool_.data() + off, n);
  }

 private:
  uint32_t datalen_;
  std::vector<uint8_t> pool_;
};

}  // namespace perftest
