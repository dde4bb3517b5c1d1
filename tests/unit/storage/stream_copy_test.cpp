// detail::stream_copy (storage/src/stream_copy.hpp): the chunk copy of large records with
// streaming stores must write exactly the source's bytes, at every alignment of source and
// destination and every length around its thresholds, and nothing outside [dst, dst + n).
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "stream_copy.hpp"

using storage::detail::kStreamCopyFrom;
using storage::detail::stream_copy;

TEST_CASE("stream_copy writes exactly the source's bytes at every alignment and length") {
  const size_t n =
      GENERATE(size_t{0}, size_t{1}, size_t{15}, size_t{17}, kStreamCopyFrom - 1, kStreamCopyFrom,
               kStreamCopyFrom + 1, kStreamCopyFrom + 63, size_t{63000}, size_t{65536 + 13});
  constexpr size_t kGuard = 64;
  std::vector<uint8_t> src(n + 16);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i * 131 + (i >> 8) + 7);
  for (size_t d_off = 0; d_off < 17; ++d_off) {
    for (size_t s_off = 0; s_off < 4; ++s_off) {
      std::vector<uint8_t> dst(n + 2 * kGuard + 32, 0xA5);
      stream_copy(dst.data() + kGuard + d_off, src.data() + s_off, n);
      INFO("n " << n << ", destination offset " << d_off << ", source offset " << s_off);
      size_t wrong = 0, guard_touched = 0;
      for (size_t i = 0; i < n; ++i) wrong += dst[kGuard + d_off + i] != src[s_off + i];
      for (size_t i = 0; i < kGuard + d_off; ++i) guard_touched += dst[i] != 0xA5;
      for (size_t i = kGuard + d_off + n; i < dst.size(); ++i) guard_touched += dst[i] != 0xA5;
      REQUIRE(wrong == 0);
      REQUIRE(guard_touched == 0);
    }
  }
}
