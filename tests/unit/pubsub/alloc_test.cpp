// The steady-state hot paths allocate nothing: write (history, packing, send), receive (decode,
// dispatch, in-order delivery) and the reliability exchange (heartbeats, acknowledgements). This
// binary replaces the global operator new with a counting one and runs a writer and a reader in
// one process over real UDP sockets on loopback, then counts allocations while samples flow.
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <new>

#include "pubsub/participant.hpp"
#include "skip.hpp"
#include "test_util.hpp"

namespace {
std::atomic<uint64_t> g_allocations{0};
}

// Sanitizers bring their own allocator; the count is only taken in normal builds.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define PUBSUB_COUNT_ALLOCATIONS 0
#else
#define PUBSUB_COUNT_ALLOCATIONS 1
void* operator new(std::size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) {
  return operator new(n);
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  std::free(p);
}
#endif

using namespace pubsub;
using namespace std::chrono_literals;

namespace {

// Publishes `count` samples and waits until all are delivered; returns allocations meanwhile.
uint64_t allocations_while_publishing(Writer& w, std::atomic<uint64_t>& received, uint64_t count,
                                      size_t size) {
  std::vector<uint8_t> body(size, 0x5a);
  const uint64_t target = received.load() + count;
  const uint64_t before = g_allocations.load();
  for (uint64_t i = 0; i < count; ++i) {
    std::memcpy(body.data(), &i, sizeof i);
    auto r = w.write(test::as_bytes(body));
    if (!r.ok()) FAIL("write failed: " << r.error().message);
  }
  w.flush();
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (received.load() < target && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(1ms);
  }
  const uint64_t after = g_allocations.load();
  REQUIRE(received.load() >= target);
  return after - before;
}

enum class Path { kUdp, kShm, kIntra };

// `domain`: ctest runs the test cases of this file in parallel; each keeps to its own domain so
// that no discovery traffic of the other is counted.
void run(bool batching, size_t size, Path path = Path::kUdp, uint32_t domain = 7) {
  if (!PUBSUB_COUNT_ALLOCATIONS) PUBSUB_SKIP("allocation counting is off under sanitizers");
  ParticipantOptions po;
  po.intra_process = path == Path::kIntra;
  po.shared_memory = path == Path::kShm;
  po.interface = "lo";
  po.multicast = false;
  po.domain_id = domain;
  // Discovery stays quiet during the measurement (announcements allocate their messages).
  po.announce_period = std::chrono::seconds(20);
  po.lease_duration = std::chrono::seconds(60);
  auto pub = Participant::create(po);
  auto sub = Participant::create(po);
  REQUIRE(pub);
  REQUIRE(sub);
  std::atomic<uint64_t> received{0};
  auto reader = sub.value()->create_reader({"Alloc", "test::Blob"}, ReaderQos{},
                                           [&](const SampleInfo&, Bytes) { received++; });
  REQUIRE(reader);
  WriterQos wq;
  wq.batching.enabled = batching;
  wq.max_blocking_time = 5s;
  auto writer = pub.value()->create_writer({"Alloc", "test::Blob"}, wq);
  REQUIRE(writer);
  REQUIRE(writer.value()->wait_for_readers(1, 20s));
  // Warm up: buffers, hash maps, condition variables and the congestion window settle.
  allocations_while_publishing(*writer.value(), received, 20000, size);
  std::this_thread::sleep_for(300ms);
  // Steady state means no loss: a datagram the kernel drops (a loaded machine overflows the
  // socket buffer) starts repairs, which buffer samples out of order and may allocate. Such a
  // window is measured again, up to 5 times; a loss-free window must allocate nothing.
  uint64_t n = 0;
  int windows = 0;
  bool clean = false;
  while (!clean && windows < 5) {
    const auto s0 = reader.value()->stats();
    n = allocations_while_publishing(*writer.value(), received, 50000, size);
    const auto s1 = reader.value()->stats();
    clean = s1.out_of_order == s0.out_of_order && s1.nackfrags_sent == s0.nackfrags_sent &&
            s1.duplicates == s0.duplicates;
    ++windows;
    if (!clean) WARN("window " << windows << " had repairs (" << n << " allocations): again");
  }
  INFO("allocations during 50000 samples of " << size << " B, batching " << batching << ": " << n
                                              << " (window " << windows << ")");
  REQUIRE(clean);
  REQUIRE(n == 0);
  const auto rs = reader.value()->stats();
  REQUIRE(rs.samples_shm == (path == Path::kShm ? rs.samples_delivered : 0));
  REQUIRE(rs.samples_intra == (path == Path::kIntra ? rs.samples_delivered : 0));
}

}  // namespace

TEST_CASE("Publishing and receiving small samples allocates nothing in steady state") {
  SECTION("batched") {
    run(true, 32);
  }
  SECTION("one sample per datagram") {
    run(false, 200);
  }
  SECTION("shared memory") {
    run(false, 200, Path::kShm);
  }
  SECTION("intra-process") {
    run(false, 200, Path::kIntra);
  }
}

TEST_CASE("Publishing and receiving fragmented samples allocates nothing in steady state") {
  // 200000 B: DATA_FRAGs (loopback carries up to 64 KiB per datagram), reassembled in recycled
  // buffers.
  run(false, 200000, Path::kUdp, 9);
}
