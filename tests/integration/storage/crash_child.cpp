// Child of storage_crash_test: writes the deterministic record stream of crash_common.hpp into
// a new recording until it is killed. After every flush() (written, fdatasync'ed and indexed)
// it prints "durable N" on stdout. Bounded: stops by itself after 60 s or 3 M records (then it
// exits without close(), like a crash).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "crash_common.hpp"
#include "storage/segment_writer.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: storage_crash_child DIR\n");
    return 2;
  }
  storage::SegmentWriterOptions o;
  o.chunk_max_bytes = 64 << 10;
  o.chunk_max_age = std::chrono::milliseconds(5);
  o.segment_max_bytes = 2 << 20;
  o.fsync = storage::FsyncPolicy::kChunk;
  o.queue_max_bytes = 1 << 20;
  auto w = storage::SegmentWriter::create(argv[1], o);
  if (!w) {
    std::fprintf(stderr, "create: %s\n", w.error().to_string().c_str());
    return 1;
  }
  storage::SegmentWriter& wr = **w;
  for (uint32_t t = 1; t <= crash::kTopics; ++t)
    if (!wr.add_topic({"crash/" + std::to_string(t), "Crash", t % 2 == 0, {}, {}})) return 1;
  for (uint32_t i = 1; i <= crash::kWriters; ++i)
    if (!wr.add_writer({crash::topic_of_writer(i), storage::Guid{static_cast<uint8_t>(i)}}))
      return 1;
  storage::Bytes payload;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (uint64_t i = 0; i < 3'000'000 && std::chrono::steady_clock::now() < deadline; ++i) {
    crash::fill_payload(i, payload);
    if (auto s = wr.append(crash::meta(i), payload); !s) {
      std::fprintf(stderr, "append: %s\n", s.error().to_string().c_str());
      return 1;
    }
    if (i % 300 == 299) {
      if (auto s = wr.flush(); !s) {
        std::fprintf(stderr, "flush: %s\n", s.error().to_string().c_str());
        return 1;
      }
      std::printf("durable %llu\n", static_cast<unsigned long long>(i + 1));
      std::fflush(stdout);
    }
  }
  _exit(0);  // no close(): the recording is left as a crash leaves it
}
