// A recording with several topics and writers, known exactly: the fixture of the info, export,
// verify and selection tests.
#pragma once

#include "test_util.hpp"

namespace replay_test {

// Topics (in definition order):
//   Square      ShapeType  keyed    reliable     writers 0, 1: 100 Hz for 3 s, keys 0..3; writer 1
//                                                 skips seq 101..104 (a gap of 4)
//   Circle      ShapeType  keyed    best effort  writer 2: 50 Hz, 150 samples, no key hash sent
//   rt/chatter  String     keyless  reliable     writer 3: 10 Hz, 30 samples, no source time
//   Empty       Nothing    keyless  reliable     writer 4: no samples
inline Model make_shapes(size_t extra = 24) {
  Model m;
  const size_t square = m.add_topic({"Square", "ShapeType", true});
  const size_t circle =
      m.add_topic({"Circle", "ShapeType", true, pubsub::ReliabilityKind::kBestEffort});
  const size_t chatter = m.add_topic({"rt/chatter", "std_msgs::msg::dds_::String_", false});
  const size_t empty = m.add_topic({"Empty", "Nothing", false});
  const size_t w0 = m.add_writer(square), w1 = m.add_writer(square);
  const size_t w2 = m.add_writer(circle), w3 = m.add_writer(chatter);
  m.add_writer(empty);
  constexpr int64_t ms = 1'000'000;
  for (uint32_t i = 0; i < 300; ++i) {
    const uint32_t key = i % 4;
    add_record(m, w0, i + 1, i * 10 * ms + 1 * ms, make_payload(square, w0, i + 1, key, extra),
               true, key_hash_of(key));
    if (i + 1 >= 101 && i + 1 <= 104) continue;
    add_record(m, w1, i + 1, i * 10 * ms + 3 * ms, make_payload(square, w1, i + 1, key + 10, extra),
               true, key_hash_of(key + 10));
  }
  for (uint32_t i = 0; i < 150; ++i) {
    add_record(m, w2, i + 1, i * 20 * ms + 5 * ms, make_payload(circle, w2, i + 1, i % 2, extra));
  }
  for (uint32_t i = 0; i < 30; ++i) {
    add_record(m, w3, i + 1, i * 100 * ms + 7 * ms, make_payload(chatter, w3, i + 1, 0, extra),
               false);
  }
  // Storage keeps reception order per chunk; append in reception order as a recorder would.
  std::stable_sort(m.records.begin(), m.records.end(),
                   [](const RecordSpec& a, const RecordSpec& b) {
                     return a.meta.reception_ns < b.meta.reception_ns;
                   });
  return m;
}

}  // namespace replay_test
