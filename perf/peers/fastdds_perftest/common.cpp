// fastdds_perftest: what both sides use (fastdds_perftest.hpp): the hand-written type support,
// the participant with its transports and the writers' and readers' QoS, the sample writer, and
// the matched counts.
//
// Participant is created and destroyed by the main thread. SampleWriter::write runs on the main
// thread, and with -latencyTest also on Fast DDS's reception thread (pings sent from the echo
// listener). SampleType's serialize/deserialize run wherever Fast DDS writes or takes a sample;
// it has no state to lock.
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "fastdds_perftest.hpp"

#include <fastdds/rtps/common/SerializedPayload.h>
#include <fastdds/rtps/transport/UDPv4TransportDescriptor.h>
#include <fastdds/rtps/transport/shared_mem/SharedMemTransportDescriptor.h>
#include <fastrtps/attributes/LibrarySettingsAttributes.h>
#include <fastrtps/utils/IPLocator.h>
#include <fastrtps/xmlparser/XMLProfileManager.h>
#include <fastdds/dds/domain/DomainParticipantFactory.hpp>
#include <fastdds/dds/publisher/qos/DataWriterQos.hpp>
#include <fastdds/dds/subscriber/qos/DataReaderQos.hpp>
#include <fastdds/dds/topic/TopicDataType.hpp>
#include <fastdds/dds/topic/TypeSupport.hpp>
#include <fastdds/rtps/flowcontrol/FlowControllerDescriptor.hpp>

namespace fastdds_perftest {

using namespace std::chrono_literals;

void err(const char* fmt, ...) {
  std::fputs("fastdds_perftest: ", stderr);
  va_list ap;
  va_start(ap, fmt);
  std::vfprintf(stderr, fmt, ap);
  va_end(ap);
  std::fputc('\n', stderr);
}

namespace {

const char* const kDataTopic = "PubsubPerftest_Data";
const char* const kEchoTopic = "PubsubPerftest_Echo";
const char* const kTypeName = "pubsub::perftest::Sample";
const char* const kFlowController = "fastdds_perftest_async";

void put_u32(uint8_t* p, uint32_t v) {
  std::memcpy(p, &v, 4);
}

// Interface name or IPv4 address -> IPv4 address (empty if there is no such interface).
std::string interface_address(const std::string& nic) {
  in_addr a{};
  if (inet_pton(AF_INET, nic.c_str(), &a) == 1) return nic;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return {};
  std::string out;
  for (ifaddrs* i = list; i; i = i->ifa_next) {
    if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && nic == i->ifa_name) {
      char s[INET_ADDRSTRLEN];
      inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr, s, sizeof s);
      out = s;
      break;
    }
  }
  freeifaddrs(list);
  return out;
}

// ---- type support -----------------------------------------------------------------------------

// pubsub-perftest's sample as a Fast DDS type: `struct Sample { octet body[datalen]; }` with
// datalen fixed at startup. Bounded and plain (the body is its own CDR), which data sharing and
// loans need. In memory a sample is just the datalen bytes; serialized it is the CDR_LE
// encapsulation header, the bytes and padding to 4 (counted in the header's options, as XCDR).
class SampleType final : public dds::TopicDataType {
 public:
  explicit SampleType(uint32_t datalen) : datalen_(datalen), padded_((datalen + 3) & ~3u) {
    setName(kTypeName);
    m_typeSize = frtps::SerializedPayload_t::representation_header_size + padded_;
    m_isGetKeyDefined = false;
    auto_fill_type_object(false);
    auto_fill_type_information(false);
  }

  bool serialize(void* data, frtps::SerializedPayload_t* payload) override {
    if (payload->max_size < m_typeSize) return false;
    uint8_t* p = payload->data;
    p[0] = 0x00;
    p[1] = 0x01;  // CDR_LE
    p[2] = 0x00;
    p[3] = static_cast<uint8_t>(padded_ - datalen_);
    std::memcpy(p + 4, data, datalen_);
    std::memset(p + 4 + datalen_, 0, padded_ - datalen_);
    payload->length = m_typeSize;
    payload->encapsulation = CDR_LE;
    return true;
  }

  bool deserialize(frtps::SerializedPayload_t* payload, void* data) override {
    if (payload->length < 4) return false;
    const uint32_t n = std::min(payload->length - 4, datalen_);
    std::memcpy(data, payload->data + 4, n);
    if (n < datalen_) std::memset(static_cast<uint8_t*>(data) + n, 0, datalen_ - n);
    return true;
  }

  std::function<uint32_t()> getSerializedSizeProvider(void*) override {
    return [size = m_typeSize] { return size; };
  }
  void* createData() override { return std::calloc(padded_, 1); }
  void deleteData(void* data) override { std::free(data); }
  bool getKey(void*, frtps::InstanceHandle_t*, bool) override { return false; }
  bool is_bounded() const override { return true; }
  bool is_plain() const override { return true; }

 private:
  uint32_t datalen_;
  uint32_t padded_;
};

// ---- entities ---------------------------------------------------------------------------------

// Samples the writer and reader histories hold (the reliable send window): 64 MiB worth like
// pubsub-perftest's resource limit, but 16 MiB over UDPv4, where more in flight than the socket
// buffers hold only makes the receiver drop datagrams for NACKFRAG repair; at least 16 (so large
// samples still pipeline) and at most 1000 (Fast DDS searches its histories linearly).
int32_t history_samples(const Options& o) {
  const uint64_t budget = (o.transport == Transport::kUdp ? uint64_t{16} : uint64_t{64}) << 20;
  const uint64_t n = budget / (uint64_t{o.datalen} + 64);
  return static_cast<int32_t>(std::clamp<uint64_t>(n, 16, 1000));
}

// The shared-memory transport drops a message when the receiving port's queue is full or the
// sender's segment has no room, and reliability then has to repair it: size both for a whole
// history of samples in flight (each fragment of a large sample is its own message).
uint32_t shm_port_queue(const Options& o) {
  const uint64_t fragments = (uint64_t{o.datalen} + 63999) / 64000;
  const uint64_t q = 2 * static_cast<uint64_t>(history_samples(o)) * fragments + 256;
  return static_cast<uint32_t>(std::clamp<uint64_t>(q, 512, 1u << 16));
}
uint32_t shm_segment_size(const Options& o) {
  const uint64_t s =
      2 * static_cast<uint64_t>(history_samples(o)) * (uint64_t{o.datalen} + 512) + (2u << 20);
  return static_cast<uint32_t>(std::min<uint64_t>(s, 1u << 30));
}

}  // namespace

Participant::~Participant() {
  if (!p_) return;
  p_->delete_contained_entities();
  dds::DomainParticipantFactory::get_instance()->delete_participant(p_);
}

bool Participant::create(const Options& o) {
  // Intra-process delivery is a library-wide setting, read whenever endpoints match.
  eprosima::fastrtps::LibrarySettingsAttributes ls;
  ls.intraprocess_delivery = o.transport == Transport::kIntra
                                 ? eprosima::fastrtps::INTRAPROCESS_FULL
                                 : eprosima::fastrtps::INTRAPROCESS_OFF;
  eprosima::fastrtps::xmlparser::XMLProfileManager::library_settings(ls);

  dds::DomainParticipantQos q = dds::PARTICIPANT_QOS_DEFAULT;
  q.name(o.pub ? "fastdds_perftest:pub" : o.sub ? "fastdds_perftest:sub" : "fastdds_perftest");
  q.transport().use_builtin_transports = false;
  if (o.transport == Transport::kUdp) {
    auto udp = std::make_shared<eprosima::fastdds::rtps::UDPv4TransportDescriptor>();
    udp->sendBufferSize = 4u << 20;
    udp->receiveBufferSize = 4u << 20;
    if (!o.nic.empty()) {
      const std::string addr = interface_address(o.nic);
      if (addr.empty()) {
        err("-nic %s: no such interface with an IPv4 address", o.nic.c_str());
        return false;
      }
      udp->interfaceWhiteList.push_back(addr);
    }
    q.transport().user_transports.push_back(udp);
    q.transport().send_socket_buffer_size = 4u << 20;
    q.transport().listen_socket_buffer_size = 4u << 20;
    for (const auto& peer : o.peers) {
      frtps::Locator_t loc;
      if (!frtps::IPLocator::setIPv4(loc, peer)) {
        err("-peer %s: not an IPv4 address", peer.c_str());
        return false;
      }
      q.wire_protocol().builtin.initialPeersList.push_back(loc);
    }
  } else {
    // SHMEM; also INTRA, where the transport only carries this participant's announcements.
    auto shm = std::make_shared<eprosima::fastdds::rtps::SharedMemTransportDescriptor>();
    if (o.transport == Transport::kShm) {
      shm->segment_size(shm_segment_size(o));
      shm->port_queue_capacity(shm_port_queue(o));
    }
    q.transport().user_transports.push_back(shm);
  }
  if (o.asynchronous) {
    auto fc = std::make_shared<eprosima::fastdds::rtps::FlowControllerDescriptor>();
    fc->name = kFlowController;  // no bandwidth limit: only moves sending to Fast DDS's thread
    q.flow_controllers().push_back(fc);
  }
  p_ = dds::DomainParticipantFactory::get_instance()->create_participant(o.domain, q);
  if (!p_) {
    err("could not create a Fast DDS participant on domain %u (%s)", o.domain,
        transport_name(o.transport));
    return false;
  }
  dds::TypeSupport type(new SampleType(o.datalen));
  if (!ok(type.register_type(p_))) {
    err("could not register type %s", kTypeName);
    return false;
  }
  data_topic_ =
      p_->create_topic(o.topic.empty() ? kDataTopic : o.topic, kTypeName, dds::TOPIC_QOS_DEFAULT);
  echo_topic_ = p_->create_topic(kEchoTopic, kTypeName, dds::TOPIC_QOS_DEFAULT);
  publisher_ = p_->create_publisher(dds::PUBLISHER_QOS_DEFAULT);
  subscriber_ = p_->create_subscriber(dds::SUBSCRIBER_QOS_DEFAULT);
  if (!data_topic_ || !echo_topic_ || !publisher_ || !subscriber_) {
    err("could not create topics, publisher or subscriber");
    return false;
  }
  return true;
}

dds::DataWriter* Participant::create_writer(const Options& o, dds::Topic* topic, bool echo) {
  dds::DataWriterQos q = dds::DATAWRITER_QOS_DEFAULT;
  const int32_t n = history_samples(o);
  q.reliability().kind =
      o.best_effort ? dds::BEST_EFFORT_RELIABILITY_QOS : dds::RELIABLE_RELIABILITY_QOS;
  q.reliability().max_blocking_time = eprosima::fastrtps::Duration_t(1, 0);
  q.durability().kind = dds::VOLATILE_DURABILITY_QOS;  // Fast DDS defaults to TRANSIENT_LOCAL
  if (o.history_depth > 0 && !echo) {
    q.history().kind = dds::KEEP_LAST_HISTORY_QOS;
    q.history().depth = o.history_depth;
  } else if (o.latency_test) {
    // Pings and echoes are written from Fast DDS's reception thread, which also receives the
    // acknowledgements: a KEEP_ALL history that filled up would block it until
    // max_blocking_time. With one sample in flight, KEEP_LAST over the same number of samples
    // never drops an unacknowledged one and never blocks.
    q.history().kind = dds::KEEP_LAST_HISTORY_QOS;
    q.history().depth = n;
  } else {
    q.history().kind = dds::KEEP_ALL_HISTORY_QOS;
  }
  q.resource_limits().max_instances = 1;
  q.resource_limits().max_samples = std::max(n, o.history_depth);
  q.resource_limits().max_samples_per_instance = q.resource_limits().max_samples;
  q.resource_limits().allocated_samples = std::min(q.resource_limits().max_samples, 64);
  // Data sharing: a sample leaves the writer's history once the readers acknowledge it, which
  // they do when it enters their history, not when it is taken; its pool slot must not be
  // reused before then, so the pool (history + extra samples) also covers a full reader history.
  q.resource_limits().extra_samples = o.data_sharing ? n + 2 : 1;
  q.endpoint().history_memory_policy = frtps::PREALLOCATED_WITH_REALLOC_MEMORY_MODE;
  q.publish_mode().kind =
      o.asynchronous ? dds::ASYNCHRONOUS_PUBLISH_MODE : dds::SYNCHRONOUS_PUBLISH_MODE;
  if (o.asynchronous) q.publish_mode().flow_controller_name = kFlowController;
  if (o.data_sharing) {
    q.data_sharing().automatic();
  } else {
    q.data_sharing().off();
  }
  // Heartbeats every 100 ms instead of every 3 s: a writer whose history is full waits for the
  // acknowledgements they ask for.
  q.reliable_writer_qos().times.heartbeatPeriod = eprosima::fastrtps::Duration_t(0, 100000000);
  q.reliable_writer_qos().times.nackResponseDelay = eprosima::fastrtps::Duration_t(0, 0);
  return publisher_->create_datawriter(topic, q);
}

dds::DataReader* Participant::create_reader(const Options& o, dds::Topic* topic,
                                            dds::DataReaderListener* listener) {
  dds::DataReaderQos q = dds::DATAREADER_QOS_DEFAULT;
  const int32_t n = history_samples(o);
  q.reliability().kind =
      o.best_effort ? dds::BEST_EFFORT_RELIABILITY_QOS : dds::RELIABLE_RELIABILITY_QOS;
  q.durability().kind = dds::VOLATILE_DURABILITY_QOS;
  q.history().kind = dds::KEEP_ALL_HISTORY_QOS;
  q.resource_limits().max_instances = 1;
  q.resource_limits().max_samples = n;
  q.resource_limits().max_samples_per_instance = n;
  q.resource_limits().allocated_samples = std::min(n, 64);
  q.endpoint().history_memory_policy = frtps::PREALLOCATED_WITH_REALLOC_MEMORY_MODE;
  if (o.data_sharing) {
    q.data_sharing().automatic();
  } else {
    q.data_sharing().off();
  }
  return subscriber_->create_datareader(topic, q, listener, dds::StatusMask::data_available());
}

std::atomic<uint64_t> overwritten_loans{0};

bool SampleWriter::write(uint32_t seq, uint32_t kind, uint64_t timestamp,
                         Clock::time_point give_up) {
  void* sample = buf_.data();
  if (loans_) {
    for (;;) {
      sample = nullptr;
      const ReturnCode_t rc = w_->loan_sample(sample);
      if (ok(rc)) break;
      if (rc != ReturnCode_t::RETCODE_OUT_OF_RESOURCES || Clock::now() > give_up) {
        err("loan_sample failed (return code %d)", static_cast<int>(rc()));
        return false;
      }
      blocked_++;  // every loan is in the history, waiting for acknowledgements
      std::this_thread::sleep_for(20us);
    }
  }
  auto* p = static_cast<uint8_t*>(sample);
  put_u32(p, seq);
  put_u32(p + 4, kind);
  std::memcpy(p + 8, &timestamp, 8);
  put_u32(p + 16, 0);  // key
  if (random_) random_->fill(p + kHeaderBytes, buf_.size() - kHeaderBytes, seq);
  for (;;) {
    const ReturnCode_t rc = w_->write(sample, frtps::c_InstanceHandle_Unknown);
    if (ok(rc)) return true;
    if (rc != ReturnCode_t::RETCODE_TIMEOUT || Clock::now() > give_up) {
      if (loans_) w_->discard_loan(sample);
      err("write failed (return code %d)", static_cast<int>(rc()));
      return false;
    }
    blocked_++;
  }
}

size_t matched_readers(dds::DataWriter* w) {
  dds::PublicationMatchedStatus st;
  w->get_publication_matched_status(st);
  return static_cast<size_t>(std::max(0, st.current_count));
}
size_t matched_writers(dds::DataReader* r) {
  dds::SubscriptionMatchedStatus st;
  r->get_subscription_matched_status(st);
  return static_cast<size_t>(std::max(0, st.current_count));
}

}  // namespace fastdds_perftest
