// export --format mcap (export_mcap.cpp), and what every export shares: the progress line and
// the end (export.cpp). Private to service/src/replay.
#pragma once

#include <chrono>
#include <cstdint>
#include <ostream>
#include <string>

#include "common.hpp"
#include "output_file.hpp"

namespace service::replay::detail {

// Writes the selection of `rec` to o.output as MCAP. `damaged` counts chunks the recording
// reported damaged while opening; more may be found while reading. Returns an exit status.
int export_mcap(const ExportOptions& o, storage::Recording& rec, const ResolvedSelection& sel,
                std::ostream& err, uint64_t& damaged);

// The progress line of an export (ExportOptions::progress*) and whether it was asked to stop.
class ExportProgress {
 public:
  ExportProgress(const ExportOptions& o, const ResolvedSelection& sel, std::ostream& err);
  // After each sample: true when the export is to stop (ExportOptions::stop). Prints the line
  // when it is due.
  bool tick(uint64_t samples, const OutputFile& out) {
    if (o_.stop && o_.stop->load(std::memory_order_relaxed) != 0) return true;
    print_if_due(samples, out);
    return false;
  }
  // Before a warning and at the end: the line being rewritten in place is cleared.
  void end_line();
  // "9839 samples" or "720 of 9839 samples" / "720 of about 9839 samples" (a time range).
  std::string count(uint64_t samples, bool of_total) const;
  double seconds() const;

 private:
  void print_if_due(uint64_t samples, const OutputFile& out);
  const ExportOptions& o_;
  std::ostream& err_;
  uint64_t total_;
  bool about_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point next_;
  bool in_place_ = false;  // a tty line is shown
};

// What an export found, for finish_export.
struct ExportTally {
  uint64_t samples = 0;
  uint64_t damaged = 0;          // damaged chunks skipped
  uint64_t decode_failures = 0;  // samples that did not decode
  uint64_t suspicious = 0;       // type mismatches and topics with unread trailing bytes
  std::string done_line;         // "exported N samples ... to FILE, SIZE" (without the time)
  std::vector<std::string> end_warnings;  // after the done line (trailing bytes per topic)
};

// The end of every export, in this order: interrupted (128 + the signal), a write error,
// reading stopped early (kExitProblems; for all three the temporary is removed and the message
// says what became of the output), committing the output (a failure is a write error), the done
// line with the time taken (unless !o.progress), end_warnings, then decoding failures, suspicious
// decoding and damaged chunks skipped (kExitProblems, the output kept), else kExitOk.
int finish_export(const ExportOptions& o, OutputFile& out, const storage::Cursor& cursor,
                  ExportProgress& progress, const ExportTally& tally, std::ostream& err);

}  // namespace service::replay::detail
