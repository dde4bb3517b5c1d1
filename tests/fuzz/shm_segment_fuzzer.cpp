// Fuzz target: a writer's shared-memory segment as a reader maps it - bytes another process
// wrote. validate_segment() must accept only headers whose layout fits the mapping, and every
// descriptor of an accepted segment is followed only when payload_in_ring() holds (ASan checks
// the reads stay inside the image).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "shm/segment.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace pubsub;
  // An aligned copy, as a mapping would be.
  std::vector<uint64_t> aligned((size + 7) / 8 + 1);
  auto* img = reinterpret_cast<uint8_t*>(aligned.data());
  if (size) std::memcpy(img, data, size);
  if (!shm::validate_segment(img, size)) return 0;
  shm::SegmentHeader h;
  std::memcpy(static_cast<void*>(&h), img, offsetof(shm::SegmentHeader, last_sn));
  const auto* changes = reinterpret_cast<const rtps::CacheChange*>(img + h.changes_offset);
  const uint8_t* ring = img + h.ring_offset;
  unsigned sum = 0;
  for (uint32_t i = 0; i < h.max_samples && i < 4096; ++i) {
    rtps::CacheChange c;
    std::memcpy(static_cast<void*>(&c), &changes[i], sizeof c);
    if (!shm::payload_in_ring(c, h.ring_bytes)) continue;
    for (size_t k = 0; k < c.size; k += 61) sum += ring[c.offset + k];
    if (c.size) sum += ring[c.offset + c.size - 1];
  }
  return static_cast<int>(sum & 0);
}
