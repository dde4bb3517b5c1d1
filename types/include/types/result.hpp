// The types module's error vocabulary: common::Error and common::Expected (common/expected.hpp),
// spelled Result<T> here as in every module (pubsub::Result, storage::Result, service::Result).
#pragma once

#include "common/expected.hpp"

namespace types {

using common::Errc;
using common::Error;
template <class T>
using Result = common::Expected<T>;

}  // namespace types
