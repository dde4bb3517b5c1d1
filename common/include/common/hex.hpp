// Lower-case hexadecimal of bytes ("0a1b...") and back: GUIDs, recording ids, QoS blobs and type
// hashes in names, logs, JSON and messages, written the same way by every module.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace common {

inline std::string to_hex(std::span<const uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s(2 * bytes.size(), '0');
  for (size_t i = 0; i < bytes.size(); ++i) {
    s[2 * i] = kDigits[bytes[i] >> 4];
    s[2 * i + 1] = kDigits[bytes[i] & 15];
  }
  return s;
}

// One byte: "0a".
inline std::string to_hex(uint8_t byte) {
  return to_hex(std::span<const uint8_t>(&byte, 1));
}

// The bytes of exactly 2 x out.size() lower-case hex digits, as to_hex writes them, into `out`;
// false (out unspecified) for any other text.
inline bool from_hex(std::string_view hex, std::span<uint8_t> out) {
  auto digit = [](char c) -> int {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
  };
  if (hex.size() != 2 * out.size()) return false;
  for (size_t i = 0; i < out.size(); ++i) {
    const int hi = digit(hex[2 * i]), lo = digit(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    out[i] = static_cast<uint8_t>(hi * 16 + lo);
  }
  return true;
}

}  // namespace common
