// export --format mcap (export_mcap.cpp). Private to service/src/replay.
#pragma once

#include <cstdint>
#include <ostream>

#include "common.hpp"

namespace service::replay::detail {

// Writes the selection of `rec` to o.output as MCAP. `damaged` counts chunks the recording
// reported damaged while opening; more may be found while reading. Returns an exit status.
int export_mcap(const ExportOptions& o, storage::Recording& rec, const ResolvedSelection& sel,
                std::ostream& err, uint64_t& damaged);

// The end of every export: the first of a write error (`write_error`: "FILE: reason"), reading
// stopped early, then `done_line` (when not empty), decoding failures, damaged chunks skipped
// (kExitProblems), else kExitOk. Defined in export.cpp.
int export_end(const ExportOptions& o, const std::string& write_error,
               const storage::Cursor& cursor, uint64_t n, uint64_t damaged,
               uint64_t decode_failures, const std::string& done_line, std::ostream& err);

}  // namespace service::replay::detail
