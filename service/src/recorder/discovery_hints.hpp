// What the recorder saw on the domain but does not record, said in the log so that an empty
// recording explains itself: topics that topics.include/exclude leave out (at the first stats
// line, when new ones appear, and at the end), and no participant at all on the domain after a
// few seconds (a wrong domain, interface or network, or multicast blocked).
//
// Owned by the recorder; called only from the thread that runs Recorder::run() (the stats
// thread), with discovery's view of the moment. Pure text: unit-tested without a network.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "pubsub/participant.hpp"
#include "pubsub/reader.hpp"

namespace service {

// topics.regex as a raw reader's filter (ECMAScript, the whole name must match); empty for "".
// The regex must be valid (the configuration's parser checked it).
std::function<bool(const std::string& topic)> topic_regex_filter(const std::string& regex);

class DiscoveryHints {
 public:
  // `selection`: topics.include, topics.exclude and the topics.regex filter, as the raw reader
  // applies them (without the recorder's own control-topic exclusion). `regex`: topics.regex's
  // text ("" = none), for the lines. `where`: "interface veth1 (198.18.0.2)".
  DiscoveryHints(pubsub::RawReaderOptions selection, std::string regex, int domain,
                 std::string where);

  // Whether the filters keep `topic` (the recorder's control topics are never "left out").
  bool wanted(const std::string& topic) const;

  // About once a second: discovery's view now (remote topics, remote participants).
  void observe(const std::vector<pubsub::DiscoveredTopic>& topics, size_t participants);
  // At each stats line: the left-out topics observed and not named before ("" when none).
  std::string new_left_out();
  // `after_s` seconds in: the warning when no participant has been observed yet ("" else).
  std::string no_participant(double after_s) const;
  // At the end: every left-out topic observed, and the no-participant line if none ever was.
  std::vector<std::string> at_end(double after_s) const;

 private:
  std::string describe(const std::vector<const pubsub::DiscoveredTopic*>& left,
                       const char* what) const;

  pubsub::RawReaderOptions selection_;  // include, exclude and the regex's filter
  std::string regex_text_;
  int domain_;
  std::string where_;
  std::map<std::string, pubsub::DiscoveredTopic> left_out_;  // by name, the most writers seen
  std::set<std::string> named_;                              // of left_out_, already logged
  bool participant_seen_ = false;
};

}  // namespace service
