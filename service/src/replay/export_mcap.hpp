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

}  // namespace service::replay::detail
