// The deterministic record stream written by storage_crash_child and checked by
// storage_crash_test: record i is fully determined by i.
#pragma once

#include <cstdint>
#include <cstring>

#include "storage/records.hpp"

namespace crash {

inline constexpr uint32_t kTopics = 4;
inline constexpr uint32_t kWriters = 6;
inline constexpr int64_t kBaseNs = 1'700'000'000'000'000'000;

inline uint64_t mix(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

inline storage::TopicId topic_of_writer(storage::WriterId w) {
  return 1 + (w - 1) % kTopics;
}

inline storage::RecordMeta meta(uint64_t i) {
  storage::RecordMeta m;
  m.writer = static_cast<storage::WriterId>(1 + i % kWriters);
  m.topic = topic_of_writer(m.writer);
  m.sequence = static_cast<int64_t>(i / kWriters + 1);
  m.reception_ns = kBaseNs + static_cast<int64_t>(i) * 1000;
  m.source_ns = m.reception_ns - static_cast<int64_t>(mix(i) % 1000);
  m.flags = static_cast<uint32_t>(i & 3);
  m.has_key_hash = i % 5 == 0;
  if (m.has_key_hash) std::memcpy(m.key_hash.data(), &i, sizeof i);
  return m;
}

inline size_t payload_size(uint64_t i) {
  const uint64_t r = mix(i ^ 0xabcdef);
  if (r % 200 == 0) return 100000 + r % 150000;  // an occasional big one
  return r % 3000;
}

inline void fill_payload(uint64_t i, storage::Bytes& out) {
  out.resize(payload_size(i));
  uint64_t s = mix(i);
  // Half compressible, half random.
  for (size_t k = 0; k < out.size(); ++k) {
    if (k % 8 == 0) s = mix(s);
    out[k] = (i & 1) ? static_cast<std::byte>(s >> (8 * (k % 8))) : std::byte{0};
  }
}

}  // namespace crash
