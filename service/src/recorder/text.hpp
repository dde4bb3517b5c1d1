// Text helpers shared by the recorder's log lines, control replies and snapshot names.
#pragma once

#include <cstdint>
#include <cstdio>
#include <ctime>
#include <string>

#include "common/units.hpp"

namespace service {

using common::mb;  // "12.3 MB"

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
