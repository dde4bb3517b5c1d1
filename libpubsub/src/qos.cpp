// Names of the DDS QoS policies (pubsub/qos.hpp).
#include "pubsub/qos.hpp"

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

}  // namespace pubsub
