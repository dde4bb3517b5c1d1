// MD5 (RFC 1321), used only for the RTPS key hash of keys longer than 16 bytes.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace pubsub::wire {

std::array<uint8_t, 16> md5(const uint8_t* data, size_t size);

}  // namespace pubsub::wire
