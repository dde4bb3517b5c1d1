// Lower-case hexadecimal of bytes ("0a1b..."): GUIDs, recording ids, QoS blobs and type hashes
// in names, logs, JSON and messages, written the same way by every module.
#pragma once

#include <cstdint>
#include <span>
#include <string>

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

}  // namespace common
