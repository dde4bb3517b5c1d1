// MD5 (RFC 1321) for the places the DDS specifications ask for it: RTPS key hashes of keys over
// 16 bytes, XTypes TypeObject and name hashes, shared-memory segment names. Boost's
// implementation (boost/uuid/detail/md5.hpp), its digest as the 16 bytes in order.
#pragma once

#include <array>
#include <cstdint>
#include <span>

namespace common {

std::array<uint8_t, 16> md5(std::span<const uint8_t> bytes);

}  // namespace common
