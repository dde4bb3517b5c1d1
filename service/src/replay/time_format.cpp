// Time arguments and ISO-8601 formatting, in integer nanoseconds throughout (no floating point,
// no time zone database, no locale): the proleptic Gregorian calendar of Howard Hinnant's
// days_from_civil / civil_from_days.
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "service/replay.hpp"

namespace service::replay {
namespace {

constexpr int64_t kNsPerSec = 1'000'000'000;

int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

void civil_from_days(int64_t z, int64_t& y, unsigned& m, unsigned& d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  d = doy - (153 * mp + 2) / 5 + 1;
  m = mp < 10 ? mp + 3 : mp - 9;
  y = static_cast<int64_t>(yoe) + era * 400 + (m <= 2);
}

bool is_leap(int64_t y) {
  return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}
unsigned days_in_month(int64_t y, unsigned m) {
  static const unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && is_leap(y) ? 29 : kDays[m - 1];
}

// Reads exactly n digits at s[pos]; advances pos.
bool digits(std::string_view s, size_t& pos, size_t n, int64_t& out) {
  if (pos + n > s.size()) return false;
  int64_t v = 0;
  for (size_t i = 0; i < n; ++i) {
    const char c = s[pos + i];
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  pos += n;
  out = v;
  return true;
}

// ".123456789" (1..9 digits used, more ignored) -> nanoseconds; pos at the '.'.
bool fraction(std::string_view s, size_t& pos, int64_t& ns) {
  if (pos >= s.size() || (s[pos] != '.' && s[pos] != ',')) return false;
  ++pos;
  const size_t begin = pos;
  int64_t v = 0;
  int n = 0;
  while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
    if (n < 9) {
      v = v * 10 + (s[pos] - '0');
      ++n;
    }
    ++pos;
  }
  if (pos == begin) return false;
  while (n++ < 9) v *= 10;
  ns = v;
  return true;
}

Error bad_time(std::string_view text, const std::string& why) {
  return Error{Errc::kInvalidArgument,
               "bad time '" + std::string(text) + "': " + why +
                   " (expected seconds from the start of the recording, e.g. 12.5, "
                   "an ISO-8601 time, e.g. 2026-11-21T23:38:00.5Z, or tag:NAME)"};
}

Result<TimeArg> parse_iso(std::string_view s, std::string_view text) {
  size_t pos = 0;
  int64_t year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, frac = 0;
  if (!digits(s, pos, 4, year) || pos >= s.size() || s[pos++] != '-' || !digits(s, pos, 2, month) ||
      pos >= s.size() || s[pos++] != '-' || !digits(s, pos, 2, day)) {
    return bad_time(text, "the date is not YYYY-MM-DD");
  }
  if (month < 1 || month > 12) return bad_time(text, "month out of range");
  if (day < 1 || day > days_in_month(year, static_cast<unsigned>(month))) {
    return bad_time(text, "day out of range");
  }
  if (pos < s.size()) {
    if (s[pos] != 'T' && s[pos] != 't' && s[pos] != ' ') {
      return bad_time(text, "expected 'T' after the date");
    }
    ++pos;
    if (!digits(s, pos, 2, hour) || pos >= s.size() || s[pos++] != ':' ||
        !digits(s, pos, 2, minute)) {
      return bad_time(text, "the time of day is not HH:MM[:SS[.fraction]]");
    }
    if (pos < s.size() && s[pos] == ':') {
      ++pos;
      if (!digits(s, pos, 2, second)) return bad_time(text, "seconds are not two digits");
      if (pos < s.size() && (s[pos] == '.' || s[pos] == ',') && !fraction(s, pos, frac)) {
        return bad_time(text, "empty fraction of a second");
      }
    }
    if (hour > 23 || minute > 59 || second > 59) return bad_time(text, "time of day out of range");
  }
  int64_t offset_s = 0;
  if (pos < s.size()) {
    const char c = s[pos];
    if (c == 'Z' || c == 'z') {
      ++pos;
    } else if (c == '+' || c == '-') {
      ++pos;
      int64_t oh = 0, om = 0;
      if (!digits(s, pos, 2, oh)) return bad_time(text, "bad UTC offset");
      if (pos < s.size() && s[pos] == ':') ++pos;
      if (pos < s.size() && !digits(s, pos, 2, om)) return bad_time(text, "bad UTC offset");
      if (oh > 23 || om > 59) return bad_time(text, "UTC offset out of range");
      offset_s = (oh * 3600 + om * 60) * (c == '+' ? 1 : -1);
    }
  }
  if (pos != s.size()) {
    return bad_time(text, "unexpected '" + std::string(s.substr(pos)) + "'");
  }
  if (year < 1678 || year > 2261) return bad_time(text, "year out of range");
  const int64_t days =
      days_from_civil(year, static_cast<unsigned>(month), static_cast<unsigned>(day));
  const int64_t secs = days * 86400 + hour * 3600 + minute * 60 + second - offset_s;
  return TimeArg{true, secs * kNsPerSec + frac};
}

}  // namespace

Result<TimeArg> parse_time_arg(std::string_view text) {
  std::string_view s = text;
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  if (s.empty()) return bad_time(text, "empty");
  if (s.substr(0, 4) == "tag:") {
    if (s.size() == 4) return bad_time(text, "no tag name after 'tag:'");
    TimeArg a;
    a.tag = std::string(s.substr(4));
    return a;
  }
  // An ISO date has a '-' after its first digits; an offset is [+]digits[.digits][s].
  if (s.size() >= 5 && s[4] == '-') return parse_iso(s, text);
  if (s.front() == '-') return bad_time(text, "a negative offset");
  if (s.front() == '+') s.remove_prefix(1);
  if (!s.empty() && s.back() == 's') s.remove_suffix(1);
  size_t pos = 0;
  int64_t whole = 0;
  size_t n = 0;
  while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
    if (whole > (INT64_MAX / kNsPerSec) / 10) return bad_time(text, "offset too large");
    whole = whole * 10 + (s[pos] - '0');
    ++pos;
    ++n;
  }
  int64_t frac = 0;
  if (pos < s.size() && s[pos] == '.') {
    const size_t dot = pos;
    if (!fraction(s, pos, frac) && n == 0) return bad_time(text, "not a number");
    if (pos == dot + 1) frac = 0;  // "12." is 12
  } else if (n == 0) {
    return bad_time(text, "not a number");
  }
  if (pos != s.size()) return bad_time(text, "not a number");
  return TimeArg{false, whole * kNsPerSec + frac};
}

std::string format_iso(int64_t ns, int digits_wanted) {
  int64_t secs = ns / kNsPerSec;
  int64_t sub = ns % kNsPerSec;
  if (sub < 0) {
    sub += kNsPerSec;
    --secs;
  }
  int64_t days = secs / 86400;
  int64_t sod = secs % 86400;
  if (sod < 0) {
    sod += 86400;
    --days;
  }
  int64_t y = 0;
  unsigned m = 0, d = 0;
  civil_from_days(days, y, m, d);
  char buf[64];
  int n = std::snprintf(buf, sizeof buf, "%04lld-%02u-%02uT%02d:%02d:%02d",
                        static_cast<long long>(y), m, d, static_cast<int>(sod / 3600),
                        static_cast<int>(sod / 60 % 60), static_cast<int>(sod % 60));
  if (digits_wanted > 0) {
    if (digits_wanted > 9) digits_wanted = 9;
    int64_t f = sub;
    for (int i = digits_wanted; i < 9; ++i) f /= 10;
    n += std::snprintf(buf + n, sizeof buf - static_cast<size_t>(n), ".%0*lld", digits_wanted,
                       static_cast<long long>(f));
  }
  std::snprintf(buf + n, sizeof buf - static_cast<size_t>(n), "Z");
  return buf;
}

}  // namespace service::replay
