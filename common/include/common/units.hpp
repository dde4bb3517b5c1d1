// Sizes in log lines and messages, written the same way by every module.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace common {

// "12.3 MB" (decimal megabytes, 10^6 bytes).
inline std::string mb(double bytes) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f MB", bytes / 1e6);
  return b;
}

inline std::string mb(uint64_t bytes) {
  return mb(static_cast<double>(bytes));
}

}  // namespace common
