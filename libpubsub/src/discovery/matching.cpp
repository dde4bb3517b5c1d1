#include "discovery/matching.hpp"

#include "pubsub/glob.hpp"

#include <algorithm>

#include "wire/constants.hpp"

namespace pubsub::discovery {

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

bool partitions_match(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  static const std::vector<std::string> kDefault{""};
  const auto& x = a.empty() ? kDefault : a;
  const auto& y = b.empty() ? kDefault : b;
  for (const auto& p : x) {
    for (const auto& q : y) {
      if (p == q || glob_match(p, q) || glob_match(q, p)) return true;
    }
  }
  return false;
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

std::string glob_error(std::string_view p) {
  if (p.empty()) return "empty pattern";
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] == '[') {
      size_t q = i;
      bool m = false;
      if (!match_class(p, q, 'x', m)) {
        return "unterminated '[' at position " + std::to_string(i + 1);
      }
      i = q - 1;
    }
  }
  return {};
}

std::string match_failure(const wire::EndpointData& w, const wire::EndpointData& r) {
  if (w.topic_name != r.topic_name) return "different topic names";
  if (w.type_name != r.type_name) {
    return "type names differ ('" + w.type_name + "' vs '" + r.type_name + "')";
  }
  if (r.reliability == ReliabilityKind::kReliable && w.reliability != ReliabilityKind::kReliable) {
    return "reliable reader, best-effort writer";
  }
  if (r.durability == DurabilityKind::kTransientLocal &&
      w.durability != DurabilityKind::kTransientLocal) {
    return "transient-local reader, volatile writer";
  }
  if (!partitions_match(w.partitions, r.partitions)) return "no common partition";
  const int16_t offered = w.data_representation.empty() ? wire::kXcdr1 : w.data_representation[0];
  const auto& accepted = r.data_representation;
  if (accepted.empty() ? offered != wire::kXcdr1
                       : std::find(accepted.begin(), accepted.end(), offered) == accepted.end()) {
    return "data representation not accepted";
  }
  return {};
}

}  // namespace pubsub::discovery

namespace pubsub {
bool glob_match(std::string_view pattern, std::string_view name) {
  return discovery::glob_match(pattern, name);
}
std::string glob_error(std::string_view pattern) {
  return discovery::glob_error(pattern);
}
}  // namespace pubsub
