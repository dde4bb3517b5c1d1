// fastdds_qos_peer: JSON lines on stdout and messages on stderr (output.hpp).
//
// Any thread: the main thread, the signal thread, Fast DDS's listener threads.
#include "output.hpp"

#include <cstdio>

namespace qos_peer {
namespace {

std::mutex out_mu;
bool out_closed = false;

}  // namespace

void emit(const Json& line) {
  const std::string s = line.str() + "\n";
  std::lock_guard lk(out_mu);
  if (out_closed) return;
  std::fwrite(s.data(), 1, s.size(), stdout);
  std::fflush(stdout);
}

void close_output() {
  std::lock_guard lk(out_mu);
  out_closed = true;
}

void err(const std::string& message) {
  const std::string s = "fastdds_qos_peer: " + message + "\n";
  std::lock_guard lk(out_mu);
  std::fwrite(s.data(), 1, s.size(), stderr);
  std::fflush(stderr);
}

std::string policy_name(eprosima::fastdds::dds::QosPolicyId_t id) {
  namespace dds = eprosima::fastdds::dds;
  switch (id) {
    case dds::USERDATA_QOS_POLICY_ID:
      return "USER_DATA";
    case dds::DURABILITY_QOS_POLICY_ID:
      return "DURABILITY";
    case dds::PRESENTATION_QOS_POLICY_ID:
      return "PRESENTATION";
    case dds::DEADLINE_QOS_POLICY_ID:
      return "DEADLINE";
    case dds::LATENCYBUDGET_QOS_POLICY_ID:
      return "LATENCY_BUDGET";
    case dds::OWNERSHIP_QOS_POLICY_ID:
      return "OWNERSHIP";
    case dds::OWNERSHIPSTRENGTH_QOS_POLICY_ID:
      return "OWNERSHIP_STRENGTH";
    case dds::LIVELINESS_QOS_POLICY_ID:
      return "LIVELINESS";
    case dds::TIMEBASEDFILTER_QOS_POLICY_ID:
      return "TIME_BASED_FILTER";
    case dds::PARTITION_QOS_POLICY_ID:
      return "PARTITION";
    case dds::RELIABILITY_QOS_POLICY_ID:
      return "RELIABILITY";
    case dds::DESTINATIONORDER_QOS_POLICY_ID:
      return "DESTINATION_ORDER";
    case dds::HISTORY_QOS_POLICY_ID:
      return "HISTORY";
    case dds::RESOURCELIMITS_QOS_POLICY_ID:
      return "RESOURCE_LIMITS";
    case dds::ENTITYFACTORY_QOS_POLICY_ID:
      return "ENTITY_FACTORY";
    case dds::WRITERDATALIFECYCLE_QOS_POLICY_ID:
      return "WRITER_DATA_LIFECYCLE";
    case dds::READERDATALIFECYCLE_QOS_POLICY_ID:
      return "READER_DATA_LIFECYCLE";
    case dds::TOPICDATA_QOS_POLICY_ID:
      return "TOPIC_DATA";
    case dds::GROUPDATA_QOS_POLICY_ID:
      return "GROUP_DATA";
    case dds::TRANSPORTPRIORITY_QOS_POLICY_ID:
      return "TRANSPORT_PRIORITY";
    case dds::LIFESPAN_QOS_POLICY_ID:
      return "LIFESPAN";
    case dds::DURABILITYSERVICE_QOS_POLICY_ID:
      return "DURABILITY_SERVICE";
    case dds::DATAREPRESENTATION_QOS_POLICY_ID:
      return "DATA_REPRESENTATION";
    case dds::TYPECONSISTENCYENFORCEMENT_QOS_POLICY_ID:
      return "TYPE_CONSISTENCY_ENFORCEMENT";
    default:
      return "UNKNOWN_" + std::to_string(static_cast<int>(id));
  }
}

std::string guid_text(const eprosima::fastrtps::rtps::InstanceHandle_t& handle) {
  std::string s;
  for (size_t group = 0; group < 4; ++group) {
    uint32_t v = 0;
    for (size_t i = 0; i < 4; ++i) v = (v << 8) | handle.value[group * 4 + i];
    char buf[10];
    std::snprintf(buf, sizeof buf, "%s%x", group ? ":" : "", v);
    s += buf;
  }
  return s;
}

}  // namespace qos_peer
