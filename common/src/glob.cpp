// Shell-style globs over topic names (common/glob.hpp): one pass with backtracking to the last '*'.
#include "common/glob.hpp"

namespace common {

namespace {

// Matches a [...] class at pattern[pi] against c; advances pi past it. False if malformed.
bool match_class(std::string_view p, size_t& pi, char c, bool& matched) {
  size_t i = pi + 1;
  bool negate = false;
  if (i < p.size() && (p[i] == '!' || p[i] == '^')) {
    negate = true;
    ++i;
  }
  bool any = false;
  bool first = true;
  while (i < p.size() && (p[i] != ']' || first)) {
    first = false;
    if (i + 2 < p.size() && p[i + 1] == '-' && p[i + 2] != ']') {
      any |= p[i] <= c && c <= p[i + 2];
      i += 3;
    } else {
      any |= p[i] == c;
      ++i;
    }
  }
  if (i >= p.size()) return false;
  pi = i + 1;
  matched = any != negate;
  return true;
}

}  // namespace

bool glob_match(std::string_view p, std::string_view s) {
  size_t pi = 0, si = 0, star_p = std::string_view::npos, star_s = 0;
  while (si < s.size()) {
    if (pi < p.size() && p[pi] == '*') {
      star_p = pi++;
      star_s = si;
      continue;
    }
    if (pi < p.size()) {
      bool ok = false;
      size_t next = pi + 1;
      if (p[pi] == '?') {
        ok = true;
      } else if (p[pi] == '[') {
        size_t q = pi;
        bool m = false;
        if (match_class(p, q, s[si], m)) {
          ok = m;
          next = q;
        } else {
          ok = p[pi] == s[si];  // a lone '[' matches itself
        }
      } else {
        ok = p[pi] == s[si];
      }
      if (ok) {
        pi = next;
        ++si;
        continue;
      }
    }
    if (star_p == std::string_view::npos) return false;
    pi = star_p + 1;
    si = ++star_s;
  }
  while (pi < p.size() && p[pi] == '*') ++pi;
  return pi == p.size();
}

Expected<void> check_glob(std::string_view p) {
  if (p.empty()) return Error{Errc::kInvalidArgument, "empty pattern"};
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] == '[') {
      size_t q = i;
      bool m = false;
      if (!match_class(p, q, 'x', m)) {
        return Error{Errc::kInvalidArgument,
                     "unterminated '[' at position " + std::to_string(i + 1)};
      }
      i = q - 1;
    }
  }
  return {};
}

}  // namespace common
