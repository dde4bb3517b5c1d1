// pubsub-recorder ctl --dds --set NAME: what a recording set's members answered, for a person
// (a status table, a line per member for the other commands) or, for status --json, one JSON
// object; and the exit status. Pure text from the replies (dds_set_request): unit-tested.
#pragma once

#include <string>
#include <vector>

#include "dds_control.hpp"

namespace service {

inline constexpr int kExitSetMissing = 3;  // a member did not answer within --timeout

struct SetOutput {
  std::string out;  // standard output
  std::string err;  // standard error: refusals, members that did not answer
  int exit = 0;     // 0 all answered ok; 1 a member refused; 3 a member did not answer
};

// `cmd`: the command sent; `json`: status --json.
SetOutput set_output(const std::string& set, const std::string& cmd,
                     const std::vector<SetMember>& members, bool json);

}  // namespace service
