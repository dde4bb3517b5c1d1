// store_floor: the least CPU that storing one sample can cost on this machine, per sample size -
// the floor under the recorder's cost beyond a subscriber's (perf/three_node.sh --recorder reports
// both per sample). Each figure is this thread's CPU time (user + system) per sample:
// - crc:   CRC-32C (storage::format::crc32c, ISA-L) of 64-KiB blocks in the cache, per byte times
//          the sample's size: a recording's chunks carry this checksum, and taken over large
//          blocks from the cache (as a chunk's running CRC can be) it costs least;
// - copy:  memcpy of the sample into consecutive places of a 64-MiB ring (memory out of the cache,
//          as a chunk buffer is when it is filled again), as perf/memcpy_bench measures it;
// - write: 4-MiB O_DIRECT pwrites from a huge-page buffer (as the recorder writes its chunks) into
// a
//          new file in --write-dir, then one fdatasync, per byte times the sample's size. The file
//          is unlinked as soon as it is open: nothing is left behind, even after a crash.
// A store that copies each sample once costs at least crc + copy + write; one that never copies
// (the kernel receiving into the chunk) at least crc + write.
//
// Usage: store_floor [--sizes 32,1024,63000] [--seconds S] [--write-dir DIR] [--write-mb N]
// Prints "size,crc_ns,copy_ns,write_ns" and one line per size (nanoseconds of CPU per sample).
// Exit 0; 1 when the write fails (e.g. DIR's filesystem refuses O_DIRECT: tmpfs); 2 bad usage.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <random>
#include <string>
#include <vector>

#include "storage/format.hpp"

namespace {

constexpr size_t kRing = size_t{64} << 20;
constexpr size_t kWriteBlock = size_t{4} << 20;
constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kCrcBlock = size_t{64} << 10;

[[noreturn]] void usage(const std::string& msg) {
  std::fprintf(stderr, "store_floor: %s\n", msg.c_str());
  std::fprintf(stderr,
               "usage: store_floor [--sizes 32,1024,63000] [--seconds S] [--write-dir DIR] "
               "[--write-mb N]\n");
  std::exit(2);
}

double thread_cpu_s() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

uint64_t parse_count(const std::string& s, const char* what) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || errno != 0 || v == 0 || s[0] == '-')
    usage(std::string(what) + " takes a positive whole number, not '" + s + "'");
  return v;
}

struct Options {
  std::vector<size_t> sizes{32, 1024, 63000};
  double seconds = 1.0;
  std::string write_dir = "/var/tmp";
  uint64_t write_mb = 1024;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) usage(a + " needs a value");
    const std::string v = argv[++i];
    if (a == "--sizes") {
      o.sizes.clear();
      size_t from = 0;
      for (;;) {
        const size_t comma = v.find(',', from);
        const uint64_t size = parse_count(v.substr(from, comma - from), "--sizes");
        if (size > kRing / 4) usage("--sizes: at most " + std::to_string(kRing / 4) + " bytes");
        o.sizes.push_back(size);
        if (comma == std::string::npos) break;
        from = comma + 1;
      }
    } else if (a == "--seconds") {
      char* end = nullptr;
      o.seconds = std::strtod(v.c_str(), &end);
      if (v.empty() || *end != '\0' || !(o.seconds > 0 && o.seconds <= 600))
        usage("--seconds takes a number of seconds in (0, 600], not '" + v + "'");
    } else if (a == "--write-dir") {
      o.write_dir = v;
    } else if (a == "--write-mb") {
      o.write_mb = parse_count(v, "--write-mb");
      if (o.write_mb % 4 != 0) usage("--write-mb: a multiple of 4 (4-MiB writes)");
    } else {
      usage("unknown option " + a);
    }
  }
  return o;
}

// Runs `step` (which does one sample's work) in rounds of 64 until `seconds` of this thread's CPU
// have passed; returns CPU nanoseconds per step.
template <typename Step>
double ns_per_step(double seconds, Step&& step) {
  const double start = thread_cpu_s();
  uint64_t steps = 0;
  double now = start;
  do {
    for (int i = 0; i < 64; ++i) step();
    steps += 64;
    now = thread_cpu_s();
  } while (now - start < seconds);
  return (now - start) * 1e9 / static_cast<double>(steps);
}

// CPU nanoseconds per byte of CRC-32C over a 64-KiB block in the cache.
double crc_ns_per_byte(double seconds) {
  std::vector<uint8_t> block(kCrcBlock);
  std::mt19937_64 rng(3);
  for (auto& b : block) b = static_cast<uint8_t>(rng());
  uint32_t crc = 0;
  const double ns = ns_per_step(seconds, [&] {
    crc = storage::format::crc32c(block.data(), block.size(), crc);
    asm volatile("" : "+r"(crc));
  });
  return ns / static_cast<double>(kCrcBlock);
}

double copy_ns(const std::vector<uint8_t>& sample, uint8_t* ring, double seconds) {
  size_t at = 0;
  const size_t step = (sample.size() + 7) & ~size_t{7};
  return ns_per_step(seconds, [&] {
    if (at + sample.size() > kRing) at = 0;
    std::memcpy(ring + at, sample.data(), sample.size());
    asm volatile("" : : "r"(ring + at) : "memory");
    at += step;
  });
}

// CPU nanoseconds per byte of O_DIRECT writes; negative after an error (printed).
double write_ns_per_byte(const Options& o) {
  void* mem = ::mmap(nullptr, kWriteBlock + kHugePage, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) {
    std::fprintf(stderr, "store_floor: mmap: %s\n", std::strerror(errno));
    return -1;
  }
  auto* buf = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(mem) + kHugePage - 1) &
                                         ~(kHugePage - 1));
  ::madvise(buf, kWriteBlock, MADV_HUGEPAGE);
  std::mt19937_64 rng(1);
  for (size_t i = 0; i < kWriteBlock; i += 8) {
    const uint64_t r = rng();
    std::memcpy(buf + i, &r, 8);
  }
  std::string path = o.write_dir + "/store_floor.XXXXXX";
  const int fd = ::mkostemp(path.data(), O_DIRECT);
  double result = -1;
  if (fd < 0) {
    std::fprintf(stderr, "store_floor: cannot create a file in %s: %s\n", o.write_dir.c_str(),
                 std::strerror(errno));
  } else {
    ::unlink(path.c_str());
    const double start = thread_cpu_s();
    uint64_t off = 0;
    const uint64_t total = o.write_mb << 20;
    while (off < total) {
      const ssize_t n = ::pwrite(fd, buf, kWriteBlock, static_cast<off_t>(off));
      if (n != static_cast<ssize_t>(kWriteBlock)) {
        std::fprintf(stderr, "store_floor: O_DIRECT write into %s: %s\n", o.write_dir.c_str(),
                     n < 0 ? std::strerror(errno) : "short write");
        break;
      }
      off += kWriteBlock;
    }
    if (off == total && ::fdatasync(fd) == 0)
      result = (thread_cpu_s() - start) * 1e9 / static_cast<double>(total);
    else if (off == total)
      std::fprintf(stderr, "store_floor: fdatasync: %s\n", std::strerror(errno));
    ::close(fd);
  }
  ::munmap(mem, kWriteBlock + kHugePage);
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  const double write_ns = write_ns_per_byte(o);
  if (write_ns < 0) return 1;
  auto* ring = static_cast<uint8_t*>(std::malloc(kRing));
  if (!ring) {
    std::fprintf(stderr, "store_floor: out of memory for the ring\n");
    return 1;
  }
  // Pages touched, as a chunk buffer's are in steady state. Not with zeros: the compiler turns
  // malloc + memset(0) into calloc, which leaves fresh pages untouched, and the copy's first pass
  // over the ring then paid for their page faults (a 0.05-s run measured 3-8x the copy's cost).
  std::memset(ring, 0x5a, kRing);
  const double crc_ns = crc_ns_per_byte(o.seconds);
  std::printf("size,crc_ns,copy_ns,write_ns\n");
  std::mt19937_64 rng(2);
  for (const size_t size : o.sizes) {
    std::vector<uint8_t> sample(size);
    for (auto& b : sample) b = static_cast<uint8_t>(rng());
    const double copy = copy_ns(sample, ring, o.seconds);
    const auto bytes = static_cast<double>(size);
    std::printf("%zu,%.1f,%.1f,%.1f\n", size, crc_ns * bytes, copy, write_ns * bytes);
  }
  std::free(ring);
  return 0;
}
