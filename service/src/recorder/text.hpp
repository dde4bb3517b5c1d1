// Text helpers shared by the recorder's log lines, control replies and snapshot names.
#pragma once

#include <cstdint>
#include <cstdio>
#include <ctime>
#include <string>

#include "pubsub/types.hpp"

namespace service {

// A GUID as `pubsub-replay info` prints it: 32 hex digits (prefix, then entity id).
inline std::string guid_hex(const pubsub::Guid& g) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s;
  for (const auto b : g.bytes()) {
    const auto v = static_cast<uint8_t>(b);
    s += kDigits[v >> 4];
    s += kDigits[v & 15];
  }
  return s;
}

// "12.3 MB" (10^6 bytes).
inline std::string mb(double bytes) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f MB", bytes / 1e6);
  return b;
}

// `ns` (since the UNIX epoch) in UTC: strftime's `format` down to the second, then ".mmm" and
// `suffix`. utc_millis(t, "%Y-%m-%dT%H:%M:%S", "Z") = "2026-11-26T16:05:01.123Z".
inline std::string utc_millis(int64_t ns, const char* format, const char* suffix = "") {
  const std::time_t s = static_cast<std::time_t>(ns / 1000000000);
  std::tm tm{};
  gmtime_r(&s, &tm);
  char b[96];
  const size_t n = std::strftime(b, sizeof b, format, &tm);
  std::snprintf(b + n, sizeof b - n, ".%03d%s", static_cast<int>(ns / 1000000 % 1000), suffix);
  return b;
}

}  // namespace service
