// fastdds_qos_peer: entities and the command line's QoS mapped onto Fast DDS 2.9's (entities.hpp).
//
// Main thread only. Each QoS option sets its one policy on the peer's own writer or reader
// (partition, presentation and group data on its publisher or subscriber, topic data on the
// topic); everything else keeps Fast DDS's default, but for reliability (reliable) and history
// (keep_all). Where Fast DDS 2.9 needs it, a policy gets a second field set too (README.md,
// "Fast DDS defaults and adjustments"): unlimited resource limits as 0, an announcement period
// under a finite lease, no autodispose on unregister, preallocation within max_samples.
// Transport: only UDPv4 (no shared memory, no data sharing), so that peers in different network
// namespaces of one host talk over the network as on different hosts.
#include "entities.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include <algorithm>
#include <memory>

#include <fastdds/rtps/transport/UDPv4TransportDescriptor.h>
#include <fastdds/dds/domain/DomainParticipantFactory.hpp>
#include <fastdds/dds/log/Log.hpp>
#include <fastdds/dds/publisher/Publisher.hpp>
#include <fastdds/dds/subscriber/Subscriber.hpp>
#include <fastdds/dds/topic/Topic.hpp>
#include <fastdds/dds/topic/TypeSupport.hpp>

#include "output.hpp"
#include "sample_type.hpp"

namespace qos_peer {
namespace {

using eprosima::fastrtps::Duration_t;
using eprosima::fastrtps::types::ReturnCode_t;

Duration_t ms_duration(int64_t ms) {
  return Duration_t(static_cast<int32_t>(ms / 1000), static_cast<uint32_t>(ms % 1000) * 1000000u);
}

std::vector<eprosima::fastrtps::rtps::octet> bytes_of(const std::string& s) {
  return {s.begin(), s.end()};
}

// Interface name or IPv4 address -> IPv4 address; empty if there is no such interface.
std::string interface_address(const std::string& nic) {
  in_addr a{};
  if (inet_pton(AF_INET, nic.c_str(), &a) == 1) return nic;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return {};
  std::string out;
  for (ifaddrs* i = list; i && out.empty(); i = i->ifa_next) {
    if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || nic != i->ifa_name) continue;
    char s[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr, s, sizeof s);
    out = s;
  }
  freeifaddrs(list);
  return out;
}

// Policies that DataWriterQos and DataReaderQos both have, under the same names.
template <class Q>
void apply_endpoint_qos(const QosOptions& o, Q& q) {
  q.reliability().kind = o.reliability;
  if (o.max_blocking_ms) q.reliability().max_blocking_time = ms_duration(*o.max_blocking_ms);
  if (o.durability) q.durability().kind = *o.durability;
  q.history().kind = o.keep_last > 0 ? dds::KEEP_LAST_HISTORY_QOS : dds::KEEP_ALL_HISTORY_QOS;
  if (o.keep_last > 0) q.history().depth = o.keep_last;
  if (o.resource_limits) {
    // Fast DDS 2.9's histories spell "unlimited" 0, not the DDS LENGTH_UNLIMITED (-1): with -1
    // its writer history never admits an instance (every write times out).
    auto limit = [](int32_t v) { return v < 0 ? 0 : v; };
    auto& rl = q.resource_limits();
    rl.max_samples = limit(o.resource_limits->max_samples);
    rl.max_instances = limit(o.resource_limits->max_instances);
    rl.max_samples_per_instance = limit(o.resource_limits->max_samples_per_instance);
    // Fast DDS's own field of this policy: what it preallocates, at most max_samples.
    if (rl.max_samples > 0) rl.allocated_samples = std::min(rl.allocated_samples, rl.max_samples);
  }
  if (o.ownership) q.ownership().kind = *o.ownership;
  if (o.deadline_ms) q.deadline().period = ms_duration(*o.deadline_ms);
  if (o.latency_budget_ms) q.latency_budget().duration = ms_duration(*o.latency_budget_ms);
  if (o.liveliness) q.liveliness().kind = *o.liveliness;
  if (o.lease_ms) q.liveliness().lease_duration = ms_duration(*o.lease_ms);
  if (o.lifespan_ms) q.lifespan().duration = ms_duration(*o.lifespan_ms);
  if (o.destination_order) q.destination_order().kind = *o.destination_order;
  if (o.user_data) q.user_data().setValue(bytes_of(*o.user_data));
  q.data_sharing().off();
}

dds::DataWriterQos writer_qos(const QosOptions& o) {
  dds::DataWriterQos q = dds::DATAWRITER_QOS_DEFAULT;
  apply_endpoint_qos(o, q);
  if (o.ownership_strength)
    q.ownership_strength().value = static_cast<uint32_t>(*o.ownership_strength);
  if (o.representation) q.representation().m_value = {*o.representation};
  // --unregister-rest unregisters "every instance not disposed": an unregister, told apart from
  // --dispose. With Fast DDS's default (autodispose, as the DDS spec's) it would dispose too.
  // Only unregister_instance() reads this; deleting a writer unregisters nothing in Fast DDS 2.9.
  q.writer_data_lifecycle().autodispose_unregistered_instances = false;
  // Fast DDS refuses a finite lease without an announcement period below it (AUTOMATIC and
  // MANUAL_BY_PARTICIPANT); its default is infinite. Announce at half the lease.
  if (o.lease_ms && q.liveliness().kind != dds::MANUAL_BY_TOPIC_LIVELINESS_QOS) {
    q.liveliness().announcement_period = ms_duration(*o.lease_ms / 2);
  }
  return q;
}

dds::DataReaderQos reader_qos(const QosOptions& o) {
  dds::DataReaderQos q = dds::DATAREADER_QOS_DEFAULT;
  apply_endpoint_qos(o, q);
  if (o.time_based_filter_ms) {
    q.time_based_filter().minimum_separation = ms_duration(*o.time_based_filter_ms);
  }
  if (o.representation) q.type_consistency().representation.m_value = {*o.representation};
  return q;
}

// Publisher and subscriber QoS: partition, presentation, group data; no auto-enable.
template <class Q>
Q group_qos(const QosOptions& o, Q q) {
  for (const auto& name : o.partitions) q.partition().push_back(name.c_str());
  if (o.presentation) {
    q.presentation().access_scope = o.presentation->scope;
    q.presentation().coherent_access = o.presentation->coherent;
    q.presentation().ordered_access = o.presentation->ordered;
  }
  if (o.group_data) q.group_data().setValue(bytes_of(*o.group_data));
  q.entity_factory().autoenable_created_entities = false;
  return q;
}

}  // namespace

Participant::~Participant() {
  if (!participant_) return;
  participant_->delete_contained_entities();
  dds::DomainParticipantFactory::get_instance()->delete_participant(participant_);
}

bool Participant::create(const Options& o) {
  dds::DomainParticipantQos q = dds::PARTICIPANT_QOS_DEFAULT;
  q.name(o.role == Role::kPub ? "fastdds_qos_peer:pub" : "fastdds_qos_peer:sub");
  q.transport().use_builtin_transports = false;  // no shared memory between namespaces
  auto udp = std::make_shared<eprosima::fastdds::rtps::UDPv4TransportDescriptor>();
  if (!o.nic.empty()) {
    const std::string addr = interface_address(o.nic);
    if (addr.empty()) {
      err("--nic " + o.nic + ": no such interface with an IPv4 address");
      return false;
    }
    udp->interfaceWhiteList.push_back(addr);
  }
  q.transport().user_transports.push_back(udp);
  participant_ = dds::DomainParticipantFactory::get_instance()->create_participant(
      static_cast<dds::DomainId_t>(o.domain), q);
  if (!participant_) {
    err("could not create a participant on domain " + std::to_string(o.domain));
    return false;
  }
  const auto encoding =
      o.qos.representation == dds::XCDR2_DATA_REPRESENTATION ? Encoding::kXcdr2 : Encoding::kXcdr1;
  dds::TypeSupport type(new SampleType(encoding));
  if (type.register_type(participant_) != ReturnCode_t::RETCODE_OK) {
    err(std::string("could not register type ") + kTypeName);
    return false;
  }
  dds::TopicQos tq = dds::TOPIC_QOS_DEFAULT;
  if (o.qos.topic_data) tq.topic_data().setValue(bytes_of(*o.qos.topic_data));
  topic_ = participant_->create_topic(o.topic, kTypeName, tq);
  if (!topic_) err("could not create topic " + o.topic);
  return topic_ != nullptr;
}

dds::DataWriter* Participant::create_writer(const Options& o, dds::DataWriterListener* listener) {
  dds::Publisher* pub = participant_->create_publisher(
      group_qos(o.qos, dds::PublisherQos(dds::PUBLISHER_QOS_DEFAULT)));
  if (!pub) {
    err("Fast DDS refused the publisher QoS");
    return nullptr;
  }
  dds::DataWriter* w = pub->create_datawriter(topic_, writer_qos(o.qos), listener);
  if (!w) {
    dds::Log::Flush();  // its reason first
    err("Fast DDS refused the writer QoS");
  }
  return w;
}

dds::DataReader* Participant::create_reader(const Options& o, dds::DataReaderListener* listener) {
  dds::Subscriber* sub = participant_->create_subscriber(
      group_qos(o.qos, dds::SubscriberQos(dds::SUBSCRIBER_QOS_DEFAULT)));
  if (!sub) {
    err("Fast DDS refused the subscriber QoS");
    return nullptr;
  }
  dds::DataReader* r = sub->create_datareader(topic_, reader_qos(o.qos), listener);
  if (!r) {
    dds::Log::Flush();  // its reason first
    err("Fast DDS refused the reader QoS");
  }
  return r;
}

}  // namespace qos_peer
