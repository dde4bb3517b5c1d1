// Switches read from the environment (experiments and operators' overrides of
// ParticipantOptions): PUBSUB_SHM, PUBSUB_UDP_GSO.
#pragma once

#include <cstdlib>
#include <string_view>

namespace pubsub {

// True when the variable says off: "off", "OFF", "0", "false" or "no".
inline bool environment_says_off(const char* variable) {
  const char* v = std::getenv(variable);
  if (!v) return false;
  const std::string_view s(v);
  return s == "off" || s == "0" || s == "false" || s == "no" || s == "OFF";
}

}  // namespace pubsub
