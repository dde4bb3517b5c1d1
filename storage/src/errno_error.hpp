// errno as the storage module's Error (internal; defined in io.cpp).
#pragma once

#include <string>

#include "storage/status.hpp"

namespace storage {

// Maps errno to an Error: ENOSPC/EDQUOT -> kNoSpace, ENOENT -> kNotFound, else kIo. The message
// is "<what>: <strerror text>", e.g. "write /x/segments/00000001.seg: No space left on device".
Error errno_error(int err, const std::string& what);

}  // namespace storage
