// memcpy_bench: the copy a writer makes of each sample into its history - N-byte buffers copied
// into consecutive places of a 64 MiB ring, for S seconds - as the physical limit beside the
// same-host throughput figures. Prints "SIZE,copies/s,GB/s" (GB = 1e9 bytes).
// Usage: memcpy_bench SIZE [SECONDS]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: memcpy_bench SIZE [SECONDS]\n");
    return 2;
  }
  const size_t size = std::strtoull(argv[1], nullptr, 10);
  const double seconds = argc > 2 ? std::atof(argv[2]) : 1.0;
  const size_t ring = std::max<size_t>(64u << 20, 4 * size);
  if (size == 0 || seconds <= 0) {
    std::fprintf(stderr, "memcpy_bench: SIZE and SECONDS must be positive\n");
    return 2;
  }
  std::unique_ptr<char[]> src(new char[size]);
  std::unique_ptr<char[]> dst(new char[ring]);
  std::memset(src.get(), 1, size);
  std::memset(dst.get(), 0, ring);  // pages touched, as a writer's history is in steady state
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const auto end = start + std::chrono::duration<double>(seconds);
  size_t at = 0;
  unsigned long long copies = 0;
  while (Clock::now() < end) {
    for (int i = 0; i < 64; ++i) {
      if (at + size > ring) at = 0;
      std::memcpy(dst.get() + at, src.get(), size);
      at += (size + 7) & ~size_t{7};
      ++copies;
    }
    asm volatile("" : : "r"(dst.get()) : "memory");
  }
  const double s = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf("%zu,%.0f,%.2f\n", size, copies / s, copies * static_cast<double>(size) / s / 1e9);
  return 0;
}
