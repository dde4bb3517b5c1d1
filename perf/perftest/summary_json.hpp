// The subscriber's reports that pubsub-perftest and perf/peers/fastdds_perftest write: the
// throughput CSV row (RTI Perftest's columns) and the -summaryJson file read by
// tests/integration/lib/check_json.py. One format each, written in one place.
#pragma once

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace perftest {

// The throughput CSV line, after its header unless `no_header`, to stdout.
inline void print_throughput_row(uint32_t datalen, uint64_t samples, uint64_t lost, double seconds,
                                 bool no_header) {
  const double rate = seconds > 0 ? static_cast<double>(samples) / seconds : 0;
  if (!no_header) {
    std::printf(
        "Sample Size (Bytes),Total Samples,Avg Samples/s,Avg Mbps,Lost Samples,Lost "
        "Samples (%%)\n");
  }
  const double lost_pct =
      samples + lost ? 100.0 * static_cast<double>(lost) / static_cast<double>(samples + lost) : 0;
  std::printf("%u,%" PRIu64 ",%.0f,%.1f,%" PRIu64 ",%.2f\n", datalen, samples, rate,
              rate * datalen * 8 / 1e6, lost, lost_pct);
  std::fflush(stdout);
}

struct WriterSummary {
  std::string guid;
  uint64_t samples = 0, bytes = 0, lost = 0;
  uint64_t checksum = 0;  // sum of body_hash() over its samples
  uint32_t first_seq = 0, last_seq = 0, end_seq = 0;
};

// What a subscriber reports beside its writers.
struct RunSummary {
  bool completed = false;
  uint64_t duplicates = 0;
  double seconds = 0;              // from the first sample received to the last (or end marker)
  int64_t zero_copy_samples = -1;  // -zeroCopy: samples taken in the writer's memory; -1: omitted
};

// Totals over `writers`, then each writer. False when the file cannot be written.
inline bool write_summary_json(const std::string& path, const RunSummary& run,
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
               "\", \"seconds\": %.6f, ",
               run.completed ? "true" : "false", samples, bytes, lost, run.duplicates, checksum,
               run.seconds);
  if (run.zero_copy_samples >= 0) {
    std::fprintf(f, "\"zero_copy_samples\": %" PRId64 ", ", run.zero_copy_samples);
  }
  std::fprintf(f, "\"writers\": [");
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
