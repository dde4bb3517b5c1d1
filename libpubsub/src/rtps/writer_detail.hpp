// StatefulWriter: the constants more than one of its files uses (writer.hpp lists the files).
// Private to writer*.cpp.
#pragma once

#include <cstddef>

#include "pubsub/basics.hpp"
#include "wire/constants.hpp"

namespace pubsub::rtps {

inline constexpr EntityId kUnknownReader{wire::kEntityIdUnknown};
// Worst-case bytes around a payload in one datagram: RTPS header, INFO_DST, INFO_TS, DATA or
// DATA_FRAG header with inline QoS, padding, and a piggybacked HEARTBEAT + HEARTBEAT_FRAG.
inline constexpr size_t kDatagramOverhead = 20 + 16 + 12 + 36 + 32 + 4 + 32 + 28;

}  // namespace pubsub::rtps
