// The service's error vocabulary: common::Error and common::Expected (common/expected.hpp),
// spelled Result<T> and Status in the service as in every module (pubsub::Result,
// storage::Result, types::Result are the same types). Messages are one line; each program maps
// codes to exit statuses in one place (recorder_main.cpp, replay_main.cpp).
#pragma once

#include "common/expected.hpp"

namespace service {

using common::Errc;
using common::Error;
using common::make_error;
template <class T>
using Result = common::Expected<T>;
using Status = common::Expected<void>;

}  // namespace service
