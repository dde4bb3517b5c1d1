// The subscriber's summary that pubsub-perftest and perf/peers/fastdds_perftest write with
// -summaryJson, read by tests/integration/lib/check_json.py: one format, written in one place.
#pragma once

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace perftest {

struct WriterSummary {
  std::string guid;
  uint64_t samples = 0, bytes = 0, lost = 0;
  uint64_t checksum = 0;  // sum of body_hash() over its samples
  uint32_t first_seq = 0, last_seq = 0, end_seq = 0;
};

// Totals over `writers`, then each writer. False when the file cannot be written.
inline bool write_summary_json(const std::string& path, bool completed, uint64_t duplicates,
                               const std::vector<WriterSummary>& writers) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return false;
  uint64_t samples = 0, bytes = 0, lost = 0, checksum = 0;
  for (const auto& w : writers) {
    samples += w.samples;
    bytes += w.bytes;
    lost += w.lost;
    checksum += w.checksum;
  }
  std::fprintf(f,
               "{\"completed\": %s, \"samples\": %" PRIu64 ", \"bytes\": %" PRIu64
               ", \"lost\": %" PRIu64 ", \"duplicates\": %" PRIu64 ", \"checksum\": \"%016" PRIx64
               "\", \"writers\": [",
               completed ? "true" : "false", samples, bytes, lost, duplicates, checksum);
  const char* sep = "";
  for (const auto& w : writers) {
    std::fprintf(f,
                 "%s{\"guid\": \"%s\", \"samples\": %" PRIu64 ", \"lost\": %" PRIu64
                 ", \"first_seq\": %u, \"last_seq\": %u, \"end_seq\": %u, \"checksum\": "
                 "\"%016" PRIx64 "\"}",
                 sep, w.guid.c_str(), w.samples, w.lost, w.first_seq, w.last_seq, w.end_seq,
                 w.checksum);
    sep = ", ";
  }
  std::fprintf(f, "]}\n");
  return std::fclose(f) == 0;
}

}  // namespace perftest
