// recording_summary DIR [--topic NAME] [--perftest] [--verify]: opens a recording (read-only)
// and prints one JSON object with what the tests compare against pubsub-perftest's summaries:
// samples, per writer the count, first and last sequence number and how often the sequence
// did not advance by exactly one, the gaps, and the perftest payload checksum of the CDR bodies.
// --perftest leaves out pubsub-perftest's end-of-run markers (kind 1), as its subscriber does.
// --verify also runs Recording::verify and adds "verify_problems" (and lists them on stderr).
// --recover first repairs the recording in place (Recording::recover: cuts a torn tail).
// Exit 2 if the recording cannot be opened or read (its records, verification or gaps).
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>

#include "body_hash.hpp"
#include "storage/recording.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: recording_summary DIR [--topic NAME]\n");
    return 2;
  }
  std::string topic;
  bool perftest_markers = false, verify = false, recover = false;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--topic" && i + 1 < argc) topic = argv[++i];
    if (a == "--perftest") perftest_markers = true;
    if (a == "--verify") verify = true;
    if (a == "--recover") recover = true;
  }
  if (recover) {
    auto r = storage::Recording::recover(argv[1]);
    if (!r) {
      std::fprintf(stderr, "recording_summary: recover: %s\n", r.error().message.c_str());
      return 2;
    }
  }
  auto rec = storage::Recording::open(argv[1]);
  if (!rec) {
    std::fprintf(stderr, "recording_summary: %s\n", rec.error().message.c_str());
    return 2;
  }
  struct W {
    uint64_t samples = 0, out_of_order = 0, checksum = 0;
    int64_t first = 0, last = 0;
  };
  std::map<uint32_t, W> writers;
  storage::Query q;
  if (!topic.empty()) q.topic_names = {topic};
  auto cursor_r = rec.value()->query(q);
  if (!cursor_r) {
    std::fprintf(stderr, "recording_summary: %s\n", cursor_r.error().message.c_str());
    return 2;
  }
  storage::Cursor cursor = std::move(cursor_r).value();
  uint64_t total = 0, checksum = 0, key_hashes = 0;
  while (const storage::RecordView* rv = cursor.next()) {
    const storage::RecordView& v = *rv;
    if (perftest_markers && v.payload.size() >= 4 + 20) {
      uint32_t kind;
      std::memcpy(&kind, v.payload.data() + 8, 4);  // body offset 4, after the encapsulation
      if (kind == 1) continue;
    }
    W& w = writers[v.meta.writer];
    if (w.samples == 0) w.first = v.meta.sequence;
    if (w.samples && v.meta.sequence != w.last + 1) w.out_of_order++;
    w.last = v.meta.sequence;
    w.samples++;
    total++;
    if (v.meta.has_key_hash) key_hashes++;
    const auto* p = reinterpret_cast<const uint8_t*>(v.payload.data());
    const size_t n = v.payload.size();
    if (n >= 4) {
      const size_t pad = p[3] & 3u;
      const uint64_t h = perftest::body_hash(p + 4, n - 4 >= pad ? n - 4 - pad : 0);
      w.checksum += h;
      checksum += h;
    }
  }
  if (!cursor.status()) {
    std::fprintf(stderr, "recording_summary: %s\n", cursor.status().error().message.c_str());
    return 2;
  }
  uint64_t verify_problems = 0;
  if (verify) {
    auto report = rec.value()->verify([&](const storage::Problem& p) {
      verify_problems++;
      std::fprintf(stderr, "verify: %s\n", p.message.c_str());
    });
    if (!report) {
      std::fprintf(stderr, "recording_summary: verify: %s\n", report.error().message.c_str());
      return 2;
    }
    verify_problems += report.value().chunks_bad;
  }
  auto gaps_r = rec.value()->gaps();
  if (!gaps_r) {
    std::fprintf(stderr, "recording_summary: gaps: %s\n", gaps_r.error().message.c_str());
    return 2;
  }
  const size_t gaps = gaps_r.value().size();
  std::printf("{\"samples\": %" PRIu64 ", \"checksum\": \"%016" PRIx64
              "\", \"key_hashes\": %" PRIu64 ", \"gaps\": %zu, \"verify_problems\": %" PRIu64
              ", \"writers\": [",
              total, checksum, key_hashes, gaps, verify_problems);
  bool first = true;
  for (const auto& [id, w] : writers) {
    std::printf("%s{\"id\": %u, \"samples\": %" PRIu64 ", \"first_seq\": %" PRId64
                ", \"last_seq\": %" PRId64 ", \"out_of_order\": %" PRIu64
                ", \"checksum\": \"%016" PRIx64 "\"}",
                first ? "" : ", ", id, w.samples, w.first, w.last, w.out_of_order, w.checksum);
    first = false;
  }
  std::printf("]}\n");
  return 0;
}
