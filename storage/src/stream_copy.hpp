// stream_copy: a memcpy whose stores go around the cache (non-temporal stores), for copying a
// large record into a chunk buffer that is not in the cache.
//
// An ordinary copy into such memory first reads every destination line in (read for ownership)
// and then evicts what the receive thread is working on. In the recorder at 63000-B random
// samples that copy was 27 % of all its CPU (perf record), against 10 % for the reassembly copy
// of the same bytes into memory in the cache. On this project's VM (a scratch program: 63000-B
// records from a buffer in the cache into sixteen 4-MiB huge-page buffers in turn) memcpy took
// 5.8-5.9 us per record and this 3.0-3.6 us; with the CRC-32C of the record, taken from the
// destination after memcpy and from the source after this, 7.8-8.2 us against 5.4-6.3 us. The
// bytes written this way are not in the cache afterwards: a caller that still needs them (a
// checksum) reads the source instead.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace storage::detail {

// Below this a copy goes through the cache as usual (a partial line of streaming stores costs
// more than it saves).
inline constexpr size_t kStreamCopyFrom = 4096;

// From this payload size on, a record bound for a chunk stored raw is copied into it with
// stream_copy: by the segment writer (which then also takes the record's CRC from the source:
// segment_writer.cpp says why both start at this size) and by the snapshot ring.
inline constexpr size_t kStreamRecordFrom = 24 * 1024;

// Copies n bytes from src to dst (not overlapping). From kStreamCopyFrom bytes on, the whole
// 16-byte-aligned middle of dst is written with streaming stores and fenced (sfence) before
// returning, so the bytes are visible to other threads as after a memcpy.
inline void stream_copy(void* dst, const void* src, size_t n) {
#if defined(__SSE2__)
  if (n < kStreamCopyFrom) {
    std::memcpy(dst, src, n);
    return;
  }
  auto* d = static_cast<uint8_t*>(dst);
  const auto* s = static_cast<const uint8_t*>(src);
  const size_t head = (16 - (reinterpret_cast<uintptr_t>(d) & 15)) & 15;
  std::memcpy(d, s, head);
  d += head;
  s += head;
  n -= head;
  size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 16));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 32));
    const __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 48), e);
  }
  for (; i + 16 <= n; i += 16)
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i),
                     _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i)));
  std::memcpy(d + i, s + i, n - i);
  _mm_sfence();
#else
  std::memcpy(dst, src, n);
#endif
}

}  // namespace storage::detail
