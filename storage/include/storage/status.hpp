// The storage library's names for the common error vocabulary (common/expected.hpp): every
// fallible call returns a Status (success or an Error) or a Result<T>, marked [[nodiscard]];
// nothing throws.
#pragma once

#include "common/expected.hpp"

namespace storage {

using ErrorCode = common::Errc;
using common::Error;
using common::make_error;
template <class T>
using Result = common::Expected<T>;
using Status = common::Expected<void>;

}  // namespace storage
