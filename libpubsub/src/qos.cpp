// Names of the DDS QoS policies (pubsub/qos.hpp).
#include "pubsub/qos.hpp"

#include <cstdio>

namespace pubsub {

const char* to_string(QosPolicyId id) {
  static const char* const kNames[] = {
      "INVALID",
      "USER_DATA",
      "DURABILITY",
      "PRESENTATION",
      "DEADLINE",
      "LATENCY_BUDGET",
      "OWNERSHIP",
      "OWNERSHIP_STRENGTH",
      "LIVELINESS",
      "TIME_BASED_FILTER",
      "PARTITION",
      "RELIABILITY",
      "DESTINATION_ORDER",
      "HISTORY",
      "RESOURCE_LIMITS",
      "ENTITY_FACTORY",
      "WRITER_DATA_LIFECYCLE",
      "READER_DATA_LIFECYCLE",
      "TOPIC_DATA",
      "GROUP_DATA",
      "TRANSPORT_PRIORITY",
      "LIFESPAN",
      "DURABILITY_SERVICE",
      "DATA_REPRESENTATION",
      "TYPE_CONSISTENCY_ENFORCEMENT",
  };
  const auto i = static_cast<size_t>(id);
  return i < sizeof kNames / sizeof kNames[0] ? kNames[i] : "UNKNOWN";
}

std::string duration_text(Duration d) {
  if (d >= std::chrono::seconds(0x7fffffff)) return "infinite";
  char buf[48];
  const double ns = static_cast<double>(d.count());
  if (d.count() == 0) return "0 s";
  if (d.count() % 1'000'000'000 == 0 || d >= std::chrono::seconds(10)) {
    std::snprintf(buf, sizeof buf, "%g s", ns / 1e9);
  } else if (d.count() % 1'000'000 == 0 || d >= std::chrono::milliseconds(10)) {
    std::snprintf(buf, sizeof buf, "%g ms", ns / 1e6);
  } else {
    std::snprintf(buf, sizeof buf, "%g us", ns / 1e3);
  }
  return buf;
}

}  // namespace pubsub
