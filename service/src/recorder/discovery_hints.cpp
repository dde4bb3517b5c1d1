#include "discovery_hints.hpp"

#include <cstdio>
#include <regex>

#include "common/glob.hpp"
#include "dds_control.hpp"

namespace service {
namespace {

constexpr size_t kListed = 10;  // topics named in one line; the rest counted

std::string quoted_list(const std::vector<std::string>& v) {
  std::string s = "[";
  for (const auto& e : v) s += (s.size() > 1 ? ", \"" : "\"") + e + "\"";
  return s + "]";
}

}  // namespace

std::function<bool(const std::string&)> topic_regex_filter(const std::string& regex) {
  if (regex.empty()) return {};
  return [re = std::regex(regex, std::regex::ECMAScript)](const std::string& t) {
    return std::regex_match(t, re);
  };
}

DiscoveryHints::DiscoveryHints(pubsub::RawReaderOptions selection, std::string regex, int domain,
                               std::string where)
    : selection_(std::move(selection)),
      regex_text_(std::move(regex)),
      domain_(domain),
      where_(std::move(where)) {}

bool DiscoveryHints::wanted(const std::string& topic) const {
  return common::glob_match(kControlTopicsPattern, topic) ||
         pubsub::raw_reader_wants(selection_, topic);
}

void DiscoveryHints::observe(const std::vector<pubsub::DiscoveredTopic>& topics,
                             size_t participants) {
  if (participants > 0) participant_seen_ = true;
  for (const auto& t : topics) {
    if (t.writers == 0 || wanted(t.name)) continue;
    auto [it, fresh] = left_out_.emplace(t.name, t);
    if (!fresh && t.writers > it->second.writers) it->second.writers = t.writers;
  }
}

// "2 topics discovered and not recorded, left out by ...: A (T, 1 writer), B (U, 3 writers)".
std::string DiscoveryHints::describe(const std::vector<const pubsub::DiscoveredTopic*>& left,
                                     const char* what) const {
  std::string s =
      std::to_string(left.size()) + (left.size() == 1 ? " topic " : " topics ") + what +
      ", left out by topics.include " + quoted_list(selection_.include) +
      (selection_.exclude.empty() ? "" : " and topics.exclude " + quoted_list(selection_.exclude)) +
      (regex_text_.empty() ? "" : " and topics.regex \"" + regex_text_ + "\"") + ": ";
  for (size_t i = 0; i < left.size() && i < kListed; ++i) {
    const auto& t = *left[i];
    s += (i ? ", " : "") + t.name + " (" + t.type_name + ", " + std::to_string(t.writers) +
         (t.writers == 1 ? " writer)" : " writers)");
  }
  if (left.size() > kListed) s += " and " + std::to_string(left.size() - kListed) + " more";
  return s;
}

std::string DiscoveryHints::new_left_out() {
  std::vector<const pubsub::DiscoveredTopic*> fresh;
  for (const auto& [name, t] : left_out_) {
    if (named_.insert(name).second) fresh.push_back(&t);
  }
  return fresh.empty() ? std::string() : describe(fresh, "discovered and not recorded");
}

std::string DiscoveryHints::no_participant(double after_s) const {
  if (participant_seen_) return {};
  char secs[32];
  std::snprintf(secs, sizeof secs, "%.0f s", after_s);
  return "no participant seen on domain " + std::to_string(domain_) + " on " + where_ + " in " +
         secs +
         ": are the publishers on this domain, reachable through this interface, and is "
         "multicast allowed? (README: Troubleshooting)";
}

std::vector<std::string> DiscoveryHints::at_end(double after_s) const {
  std::vector<std::string> lines;
  if (!left_out_.empty()) {
    std::vector<const pubsub::DiscoveredTopic*> all;
    for (const auto& [name, t] : left_out_) all.push_back(&t);
    lines.push_back(describe(all, "seen and not recorded"));
  }
  if (auto l = no_participant(after_s); !l.empty()) lines.push_back(std::move(l));
  return lines;
}

}  // namespace service
