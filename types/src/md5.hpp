// MD5 for the types module (TypeObject hashes, key hashes), from Boost's implementation.
#pragma once

#include <array>
#include <cstdint>
#include <span>

namespace types {

std::array<uint8_t, 16> md5(std::span<const uint8_t> bytes);

}  // namespace types
