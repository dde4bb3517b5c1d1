// fastdds_perftest: pubsub-perftest's throughput and latency tests, written against Fast DDS's
// public DDS API (eProsima Fast DDS 2.x), so that perf/bench can run both tools side by side.
//
// Same methods and output as perf/perftest/perftest.cpp:
//  - throughput: the publisher writes -datalen byte samples as fast as reliable flow control
//    allows for -exec seconds, then an end-of-run marker; the subscriber counts samples and loss
//    (from a sequence number carried in the payload) and prints one CSV row.
//  - latency (-latencyTest): one ping at a time on the data topic, the subscriber echoes it on
//    the echo topic, the publisher records round trip / 2.
// The sample is pubsub-perftest's: an opaque body of -datalen bytes (seq u32, kind u32,
// timestamp u64, key u32, then zeros) after the 4-byte CDR_LE encapsulation header, on the same
// topics and type name, so the bytes on the wire are the same as pubsub-perftest's.
//
// Fast DDS specific: -transport UDPv4|SHMEM|INTRA, -dataSharing, -zeroCopy (see usage()).
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <condition_variable>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "body_hash.hpp"
#include "flags.hpp"
#include "interval_printer.hpp"
#include "summary_json.hpp"

#include <fastdds/rtps/common/SerializedPayload.h>
#include <fastdds/rtps/transport/UDPv4TransportDescriptor.h>
#include <fastdds/rtps/transport/shared_mem/SharedMemTransportDescriptor.h>
#include <fastrtps/attributes/LibrarySettingsAttributes.h>
#include <fastrtps/utils/IPLocator.h>
#include <fastrtps/xmlparser/XMLProfileManager.h>
#include <fastdds/dds/core/LoanableSequence.hpp>
#include <fastdds/dds/domain/DomainParticipant.hpp>
#include <fastdds/dds/domain/DomainParticipantFactory.hpp>
#include <fastdds/dds/log/Log.hpp>
#include <fastdds/dds/log/StdoutErrConsumer.hpp>
#include <fastdds/dds/publisher/DataWriter.hpp>
#include <fastdds/dds/publisher/Publisher.hpp>
#include <fastdds/dds/publisher/qos/DataWriterQos.hpp>
#include <fastdds/dds/subscriber/DataReader.hpp>
#include <fastdds/dds/subscriber/DataReaderListener.hpp>
#include <fastdds/dds/subscriber/SampleInfo.hpp>
#include <fastdds/dds/subscriber/Subscriber.hpp>
#include <fastdds/dds/subscriber/qos/DataReaderQos.hpp>
#include <fastdds/dds/topic/Topic.hpp>
#include <fastdds/dds/topic/TopicDataType.hpp>
#include <fastdds/dds/topic/TypeSupport.hpp>
#include <fastdds/rtps/flowcontrol/FlowControllerDescriptor.hpp>

namespace {

namespace dds = eprosima::fastdds::dds;
namespace frtps = eprosima::fastrtps::rtps;
using eprosima::fastrtps::types::ReturnCode_t;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr uint32_t kKindData = 0;
constexpr uint32_t kKindEnd = 1;
constexpr uint32_t kKindPing = 2;
constexpr uint32_t kKindWarmup = 3;    // ignored by subscribers (pubsub-perftest's too)
constexpr uint32_t kHeaderBytes = 20;  // seq, kind, timestamp, key

const char* const kDataTopic = "PubsubPerftest_Data";
const char* const kEchoTopic = "PubsubPerftest_Echo";
const char* const kTypeName = "pubsub::perftest::Sample";
const char* const kFlowController = "fastdds_perftest_async";

void err(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void err(const char* fmt, ...) {
  std::fputs("fastdds_perftest: ", stderr);
  va_list ap;
  va_start(ap, fmt);
  std::vfprintf(stderr, fmt, ap);
  va_end(ap);
  std::fputc('\n', stderr);
}

uint32_t get_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
void put_u32(uint8_t* p, uint32_t v) {
  std::memcpy(p, &v, 4);
}

Clock::duration seconds_of(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

bool ok(const ReturnCode_t& rc) {
  return rc == ReturnCode_t::RETCODE_OK;
}

// ---- options ----------------------------------------------------------------------------------

using Transport = perftest::TransportKind;

const char* transport_name(Transport t) {
  switch (t) {
    case Transport::kUdp:
      return "UDPv4";
    case Transport::kShm:
      return "SHMEM";
    case Transport::kIntra:
      return "INTRA";
  }
  return "?";
}

// The common flags (perf/perftest/flags.hpp) and this peer's own.
struct Options : perftest::CommonOptions {
  Transport transport = Transport::kUdp;
  bool data_sharing = false;
  bool zero_copy = false;  // implies data_sharing
  bool asynchronous = false;
};

std::string usage() {
  return "usage: fastdds_perftest -pub|-sub [options]\n"
         "       fastdds_perftest -transport INTRA [options]\n"
         "  -datalen N            sample size in bytes (default 100; >= 20)\n"
         "  -best                 best effort (default reliable)\n"
         "  -exec SECONDS         publisher run time; subscriber maximum wait (default 10)\n"
         "  -latencyTest          ping-pong latency instead of throughput\n"
         "  -numSubscribers N     publisher waits for N subscribers (default 1)\n"
         "  -numPublishers N      subscriber waits for N publishers' end of run (default 1)\n"
         "  -domain D             DDS domain (default 1)\n"
         "  -nic IFACE|ADDR       UDPv4: only this interface (interface whitelist)\n"
         "  -peer ADDR            UDPv4: unicast discovery peer (repeatable)\n"
         "  -noPrint              no interval lines\n"
         "  -noOutputHeaders      no CSV header line\n"
         "  -waitSubscribers S    how long the publisher waits for subscribers (default 30)\n"
         "  -historyDepth N       publisher history KEEP_LAST N instead of KEEP_ALL\n"
         "  -topic NAME           data topic name (default PubsubPerftest_Data)\n"
         "  -summaryJson FILE     subscriber: counts, loss and a payload checksum as JSON, as\n"
         "                        pubsub-perftest writes it\n"
         "  -transport UDPv4|SHMEM|INTRA\n"
         "                        UDPv4 (default): only Fast DDS's UDPv4 transport; SHMEM: only\n"
         "                        its shared-memory transport; INTRA: publisher and subscriber\n"
         "                        in this process, intra-process delivery (no -pub/-sub)\n"
         "  -dataSharing          data-sharing delivery (UDPv4 or SHMEM, one host)\n"
         "  -zeroCopy             data sharing, writer loans (loan_sample) and reader loans\n"
         "  -asynchronous         ASYNCHRONOUS publish mode, unlimited flow controller\n"
         "                        (default SYNCHRONOUS)\n";
}

// This peer's own flags; false when `f` is not one of them or its value is bad.
bool parse_own_flag(perftest::FlagReader& r, const std::string& f, Options& o) {
  if (f == "transport") return r.transport(o.transport);
  if (f == "datasharing") return o.data_sharing = true;
  if (f == "zerocopy") return o.zero_copy = o.data_sharing = true;
  if (f == "asynchronous") return o.asynchronous = true;
  return r.unknown();
}

bool parse_options(int argc, char** argv, Options& o, std::string& error) {
  perftest::FlagReader r(argc, argv);
  std::string f;
  while (r.next(f)) {
    if (!perftest::parse_common_flag(r, f, o) && !r.failed()) parse_own_flag(r, f, o);
  }
  if (r.failed()) {
    error = r.error();
    return false;
  }
  if (o.transport == Transport::kIntra) {
    if (o.data_sharing) {
      error =
          "-dataSharing and -zeroCopy apply to -transport UDPv4 or SHMEM (INTRA delivers "
          "in-process)";
      return false;
    }
    if (!o.peers.empty() || !o.nic.empty()) {
      error = "-nic and -peer apply to -transport UDPv4";
      return false;
    }
    if (o.pub || o.sub) {
      error = "-transport INTRA runs both sides: leave out -pub and -sub";
      return false;
    }
  } else if (o.pub == o.sub) {
    error = "give exactly one of -pub and -sub";
    return false;
  }
  if (o.transport == Transport::kShm && (!o.peers.empty() || !o.nic.empty())) {
    error = "-nic and -peer apply to -transport UDPv4";
    return false;
  }
  if (o.datalen < kHeaderBytes) {
    error = "-datalen must be at least " + std::to_string(kHeaderBytes);
    return false;
  }
  return true;
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

class Participant {
 public:
  ~Participant() {
    if (!p_) return;
    p_->delete_contained_entities();
    dds::DomainParticipantFactory::get_instance()->delete_participant(p_);
  }

  // False (with a message) when Fast DDS refuses the configuration.
  bool create(const Options& o) {
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

  dds::DataWriter* create_writer(const Options& o, dds::Topic* topic, bool echo) {
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

  dds::DataReader* create_reader(const Options& o, dds::Topic* topic,
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

  dds::Topic* data_topic() const { return data_topic_; }
  dds::Topic* echo_topic() const { return echo_topic_; }

 private:
  dds::DomainParticipant* p_ = nullptr;
  dds::Topic* data_topic_ = nullptr;
  dds::Topic* echo_topic_ = nullptr;
  dds::Publisher* publisher_ = nullptr;
  dds::Subscriber* subscriber_ = nullptr;
};

std::atomic<uint64_t> overwritten_loans{0};

// Takes every available sample, by loan (-zeroCopy) or copied into `buf`, and hands each valid
// one to fn(body, info).
template <class F>
void take_all(dds::DataReader* r, bool loans, uint8_t* buf, F&& fn) {
  if (loans) {
    struct Body {
      uint8_t first;
    };
    dds::LoanableSequence<Body> data;
    dds::SampleInfoSeq infos;
    while (ok(r->take(data, infos))) {
      for (dds::LoanableCollection::size_type i = 0; i < infos.length(); ++i) {
        if (!infos[i].valid_data) continue;
        // A data-sharing loan points into the writer's pool: read the header, then make sure
        // the writer has not reused the slot meanwhile.
        uint8_t header[kHeaderBytes];
        std::memcpy(header, &data[i], kHeaderBytes);
        if (!r->is_sample_valid(&data[i], &infos[i])) {
          overwritten_loans.fetch_add(1, std::memory_order_relaxed);
          continue;
        }
        fn(reinterpret_cast<const uint8_t*>(&data[i]), infos[i]);
      }
      r->return_loan(data, infos);
    }
    return;
  }
  dds::SampleInfo info;
  while (ok(r->take_next_sample(buf, &info))) {
    if (info.valid_data) fn(buf, info);
  }
}

// Writes pubsub-perftest samples: a loaned sample (-zeroCopy, only the header is filled in) or
// a copy from `buf_`, retrying while reliable flow control blocks.
class SampleWriter {
 public:
  SampleWriter(dds::DataWriter* w, const Options& o)
      : w_(w), loans_(o.zero_copy), buf_(o.datalen, 0) {}

  // False (with a message) when the sample could not be written by `give_up`.
  bool write(uint32_t seq, uint32_t kind, uint64_t timestamp, Clock::time_point give_up) {
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
  uint64_t blocked() const { return blocked_; }

 private:
  dds::DataWriter* w_;
  bool loans_;
  std::vector<uint8_t> buf_;
  uint64_t blocked_ = 0;
};

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
template <class F>
bool wait_until(double seconds, F&& done) {
  const auto deadline = Clock::now() + seconds_of(seconds);
  while (!done()) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

// ---- subscriber -------------------------------------------------------------------------------

std::string handle_hex(const frtps::InstanceHandle_t& h) {
  std::string s;
  char b[3];
  for (size_t i = 0; i < 16; ++i) {
    std::snprintf(b, sizeof b, "%02x", static_cast<unsigned>(h.value[i]));
    s += b;
  }
  return s;
}

struct WriterCount {
  uint64_t samples = 0;
  uint64_t bytes = 0;
  uint64_t lost = 0;
  uint32_t next_seq = 1;
  uint32_t first_seq = 0;
  uint32_t end_seq = 0;   // the end-of-run marker's: the last sequence number written
  uint64_t checksum = 0;  // sum of body_hash() over the samples (-summaryJson)
  bool ended = false;
};

class SubscriberState {
 public:
  SubscriberState(const Options& o) : o_(o) {}

  void on_sample(const frtps::InstanceHandle_t& writer, const uint8_t* body,
                 Clock::time_point now) {
    std::lock_guard lk(mu_);
    WriterCount& w = writers_[writer];
    const uint32_t seq = get_u32(body);
    const uint32_t kind = get_u32(body + 4);
    if (kind == kKindEnd) {
      if (!w.ended) {
        w.ended = true;
        if (seq >= w.next_seq) w.lost += seq - w.next_seq + 1;  // the tail never arrived
        w.end_seq = seq;
        ended_writers_++;
        cv_.notify_all();
      }
      return;
    }
    if (kind != kKindData || w.ended) return;
    if (total_ == 0) first_ = now;
    last_ = now;
    total_++;
    w.samples++;
    w.bytes += o_.datalen;
    if (!o_.summary_json.empty()) w.checksum += perftest::body_hash(body, o_.datalen);
    if (seq < w.next_seq) {
      duplicates_++;
      return;
    }
    if (!w.first_seq) w.first_seq = seq;
    w.lost += seq - w.next_seq;
    w.next_seq = seq + 1;
  }

  // Waits for every publisher's end of run, up to -exec seconds.
  bool wait() {
    const auto deadline = Clock::now() + seconds_of(o_.exec_seconds);
    std::unique_lock lk(mu_);
    return cv_.wait_until(lk, deadline, [&] { return ended_writers_ >= o_.num_publishers; });
  }

  struct Totals {
    uint64_t samples, bytes, lost;
    double seconds;
    uint32_t first_seq;  // the first sequence number received (of the last writer)
  };
  Totals totals() {
    std::lock_guard lk(mu_);
    Totals t{0, 0, 0, std::chrono::duration<double>(last_ - first_).count(), 0};
    for (auto& [g, w] : writers_) {
      t.samples += w.samples;
      t.bytes += w.bytes;
      t.lost += w.lost;
      t.first_seq = w.first_seq;
    }
    return t;
  }
  uint64_t total_samples() {
    std::lock_guard lk(mu_);
    return total_;
  }

  // pubsub-perftest's -summaryJson (tests/integration/lib/check_json.py reads both).
  bool write_json(const std::string& path, bool completed) {
    std::lock_guard lk(mu_);
    std::vector<perftest::WriterSummary> ws;
    for (auto& [g, w] : writers_) {
      ws.push_back({handle_hex(g), w.samples, w.bytes, w.lost, w.checksum, w.first_seq,
                    w.next_seq - 1, w.end_seq});
    }
    return perftest::write_summary_json(
        path, {completed, duplicates_, std::chrono::duration<double>(last_ - first_).count()}, ws);
  }
  uint64_t total_lost() {
    std::lock_guard lk(mu_);
    uint64_t l = 0;
    for (auto& [g, w] : writers_) l += w.lost;
    return l;
  }

 private:
  const Options& o_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<frtps::InstanceHandle_t, WriterCount> writers_;
  uint64_t total_ = 0;
  uint64_t duplicates_ = 0;
  uint32_t ended_writers_ = 0;
  Clock::time_point first_{}, last_{};
};

// The subscriber side: the data reader, and with -latencyTest the echo writer.
class SubscriberSide : public dds::DataReaderListener {
 public:
  SubscriberSide(const Options& o) : o_(o), state_(o), buf_(o.datalen + 4, 0) {}

  bool create(Participant& p) {
    if (o_.latency_test) {
      echo_ = p.create_writer(o_, p.echo_topic(), true);
      if (!echo_) {
        err("could not create the echo writer (%s%s)", transport_name(o_.transport),
            o_.data_sharing ? ", data sharing" : "");
        return false;
      }
    }
    reader_ = p.create_reader(o_, p.data_topic(), this);
    if (!reader_) {
      err("could not create the data reader (%s%s)", transport_name(o_.transport),
          o_.data_sharing ? ", data sharing" : "");
      return false;
    }
    return true;
  }

  // Reception thread (Fast DDS's: transport, data-sharing listener, or the writer's own thread
  // with intra-process delivery).
  void on_data_available(dds::DataReader* r) override {
    take_all(r, o_.zero_copy, buf_.data(), [&](const uint8_t* body, const dds::SampleInfo& info) {
      const auto now = Clock::now();
      if (echo_ && get_u32(body + 4) == kKindPing) {
        echo_->write(const_cast<uint8_t*>(body), frtps::c_InstanceHandle_Unknown);
        return;
      }
      state_.on_sample(info.publication_handle, body, now);
    });
  }

  // Waits for the end of run and prints the CSV row (throughput). Returns the exit status.
  int finish() {
    bool completed;
    {
      perftest::IntervalPrinter printer(!o_.no_print && !o_.latency_test, [&] {
        return std::pair{state_.total_samples(), state_.total_lost()};
      });
      completed = state_.wait();
    }
    if (o_.latency_test) return completed ? 0 : 1;
    if (!o_.summary_json.empty() && !state_.write_json(o_.summary_json, completed)) {
      err("cannot write %s: %s", o_.summary_json.c_str(), std::strerror(errno));
      return 1;
    }
    const auto t = state_.totals();
    perftest::print_throughput_row(o_.datalen, t.samples, t.lost, t.seconds, o_.no_output_headers);
    if (const uint64_t n = overwritten_loans.load()) {
      err("%" PRIu64 " loaned samples were overwritten by the writer before they were read", n);
    }
    if (!completed) {
      err("run incomplete after %.1f s (%" PRIu64 " samples)", o_.exec_seconds, t.samples);
      return 1;
    }
    if (t.samples == 0) {
      err("no samples received");
      return 1;
    }
    if (!o_.best_effort && t.lost > 0) {
      err("%" PRIu64 " samples lost on a reliable topic (the first one received: %u)", t.lost,
          t.first_seq);
      return 1;
    }
    return 0;
  }

 private:
  const Options& o_;
  SubscriberState state_;
  std::vector<uint8_t> buf_;
  dds::DataWriter* echo_ = nullptr;
  dds::DataReader* reader_ = nullptr;
};

// ---- publisher --------------------------------------------------------------------------------

// Ping-pong. Over a transport the next ping leaves from the reception thread as soon as the echo
// of the last one arrives (as pubsub-perftest). With intra-process delivery, write() runs the
// whole ping -> echo chain in the calling thread, so the main thread sends every ping.
class LatencyPublisher : public dds::DataReaderListener {
 public:
  LatencyPublisher(const Options& o, dds::DataWriter* w)
      : o_(o),
        writer_(w, o),
        buf_(o.datalen + 4, 0),
        from_listener_(o.transport != Transport::kIntra) {
    lat_.reserve(1 << 20);
  }

  void on_data_available(dds::DataReader* r) override {
    take_all(r, o_.zero_copy, buf_.data(), [&](const uint8_t* body, const dds::SampleInfo&) {
      const auto now = Clock::now();
      std::lock_guard lk(mu_);
      if (finished_ || got_ || get_u32(body) != seq_) return;
      lat_.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(now - t0_).count() / 2);
      if (from_listener_ && now < end_) {
        send_ping_locked();
      } else {
        got_ = true;
        if (now >= end_) finished_ = true;
        cv_.notify_all();
      }
    });
  }

  int run(dds::DataReader* echo_reader) {
    if (!wait_until(o_.wait_seconds,
                    [&] { return matched_writers(echo_reader) >= o_.num_subscribers; })) {
      err("no echo writer from the subscriber");
      return 1;
    }
    std::unique_lock lk(mu_);
    end_ = Clock::now() + seconds_of(o_.exec_seconds);
    if (from_listener_) {
      send_ping_locked();
      uint32_t watched = seq_;
      while (!finished_) {
        if (cv_.wait_for(lk, 1s, [&] { return finished_; })) break;
        if (Clock::now() >= end_) {
          finished_ = true;
          break;
        }
        if (seq_ == watched) {  // no echo for a second: count it lost, start again
          lost_++;
          send_ping_locked();
        }
        watched = seq_;
      }
    } else {
      while (!finished_) {
        got_ = false;
        ++seq_;
        t0_ = Clock::now();
        const uint64_t ts = static_cast<uint64_t>(t0_.time_since_epoch().count());
        lk.unlock();  // the echo arrives inside write()
        writer_.write(seq_, kKindPing, ts, Clock::now() + 1s);
        lk.lock();
        if (!cv_.wait_for(lk, 1s, [&] { return got_; })) lost_++;
        if (Clock::now() >= end_) finished_ = true;
      }
    }
    const uint32_t last = seq_;
    lk.unlock();
    writer_.write(last + 1, kKindEnd, 0, Clock::now() + 2s);
    return 0;
  }

  int report() {
    std::lock_guard lk(mu_);
    if (lat_.empty()) {
      err("no echo received");
      return 1;
    }
    std::sort(lat_.begin(), lat_.end());
    double sum = 0, sq = 0;
    for (auto v : lat_) sum += static_cast<double>(v);
    const double mean = sum / static_cast<double>(lat_.size());
    for (auto v : lat_) sq += (static_cast<double>(v) - mean) * (static_cast<double>(v) - mean);
    const double sd = std::sqrt(sq / static_cast<double>(lat_.size()));
    auto pct = [&](double q) {
      const size_t i = std::min(lat_.size() - 1,
                                static_cast<size_t>(q / 100.0 * static_cast<double>(lat_.size())));
      return static_cast<double>(lat_[i]) / 1000.0;
    };
    if (!o_.no_output_headers) {
      std::printf(
          "Sample Size (Bytes),Avg (us),Std (us),Min (us),Max (us),50%% (us),90%% (us),99%% "
          "(us),99.99%% (us),99.9999%% (us),Samples\n");
    }
    std::printf("%u,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%zu\n", o_.datalen, mean / 1000,
                sd / 1000, static_cast<double>(lat_.front()) / 1000,
                static_cast<double>(lat_.back()) / 1000, pct(50), pct(90), pct(99), pct(99.99),
                pct(99.9999), lat_.size());
    std::fflush(stdout);
    if (lost_) err("%" PRIu64 " pings without an echo", lost_);
    return 0;
  }

 private:
  void send_ping_locked() {
    ++seq_;
    t0_ = Clock::now();
    // A failure shows up as a lost echo.
    writer_.write(seq_, kKindPing, static_cast<uint64_t>(t0_.time_since_epoch().count()), t0_ + 1s);
  }

  const Options& o_;
  SampleWriter writer_;
  std::vector<uint8_t> buf_;
  const bool from_listener_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<int64_t> lat_;
  uint32_t seq_ = 0;
  Clock::time_point t0_, end_;
  uint64_t lost_ = 0;
  bool finished_ = false;
  bool got_ = false;
};

class PublisherSide {
 public:
  explicit PublisherSide(const Options& o) : o_(o) {}

  bool create(Participant& p) {
    writer_ = p.create_writer(o_, p.data_topic(), false);
    if (!writer_) {
      err("could not create the data writer (%s%s%s)", transport_name(o_.transport),
          o_.data_sharing ? ", data sharing" : "", o_.zero_copy ? ", loans" : "");
      return false;
    }
    if (o_.latency_test) {
      latency_ = std::make_unique<LatencyPublisher>(o_, writer_);
      echo_reader_ = p.create_reader(o_, p.echo_topic(), latency_.get());
      if (!echo_reader_) {
        err("could not create the echo reader");
        return false;
      }
    }
    return true;
  }

  int run() {
    std::fprintf(stderr,
                 "fastdds_perftest: publisher, %s%s%s, %s, %u bytes, waiting for %u "
                 "subscriber(s)\n",
                 transport_name(o_.transport), o_.data_sharing ? " + data sharing" : "",
                 o_.zero_copy ? " + loans" : "", o_.best_effort ? "best effort" : "reliable",
                 o_.datalen, o_.num_subscribers);
    if (!wait_until(o_.wait_seconds,
                    [&] { return matched_readers(writer_) >= o_.num_subscribers; })) {
      err("%zu of %u subscribers after %.0f s", matched_readers(writer_), o_.num_subscribers,
          o_.wait_seconds);
      return 1;
    }
    // A Fast DDS writer matches a reader before that reader has matched the writer, and a
    // VOLATILE data-sharing reader then starts after whatever was written meanwhile. Reliable:
    // one warm-up sample, acknowledged, shows that every reader has matched us.
    if (!o_.best_effort) {
      SampleWriter warmup(writer_, o_);
      if (!warmup.write(0, kKindWarmup, 0, Clock::now() + seconds_of(o_.wait_seconds)) ||
          !ok(writer_->wait_for_acknowledgments(
              eprosima::fastrtps::Duration_t(static_cast<int32_t>(o_.wait_seconds), 0)))) {
        err("the subscribers did not acknowledge the warm-up sample");
        return 1;
      }
    }
    if (o_.latency_test) {
      const int rc = latency_->run(echo_reader_);
      writer_->wait_for_acknowledgments(eprosima::fastrtps::Duration_t(2, 0));
      return rc ? rc : latency_->report();
    }

    SampleWriter sw(writer_, o_);
    std::atomic<uint64_t> written{0};
    const auto start = Clock::now();
    const auto end = start + seconds_of(o_.exec_seconds);
    uint32_t seq = 1;
    {
      perftest::IntervalPrinter printer(!o_.no_print, [&] {
        return std::pair{written.load(), uint64_t{0}};
      });
      for (;;) {
        if (((seq & 63) == 0 || o_.datalen >= 4096) && Clock::now() >= end) break;
        if (!sw.write(seq, kKindData, 0, end + 10s)) {
          err("wrote %" PRIu64 " samples before the failure", written.load());
          return 1;
        }
        written.fetch_add(1, std::memory_order_relaxed);
        ++seq;
      }
    }
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    const bool acked = ok(writer_->wait_for_acknowledgments(eprosima::fastrtps::Duration_t(10, 0)));
    // End of run: the marker carries the last sequence number written.
    const int copies = o_.best_effort ? 10 : 1;
    for (int i = 0; i < copies; ++i) {
      (void)sw.write(seq - 1, kKindEnd, 0, Clock::now() + 2s);
      if (o_.best_effort) std::this_thread::sleep_for(10ms);
    }
    writer_->wait_for_acknowledgments(eprosima::fastrtps::Duration_t(5, 0));
    std::fprintf(stderr,
                 "fastdds_perftest: wrote %" PRIu64 " samples in %.2f s (%.0f/s), %" PRIu64
                 " blocked writes\n",
                 written.load(), seconds, static_cast<double>(written.load()) / seconds,
                 sw.blocked());
    if (!acked && !o_.best_effort) err("not every sample was acknowledged within 10 s");
    // Linger briefly so late repairs and the end marker get through before we leave.
    std::this_thread::sleep_for(200ms);
    return acked || o_.best_effort ? 0 : 1;
  }

 private:
  const Options& o_;
  dds::DataWriter* writer_ = nullptr;
  dds::DataReader* echo_reader_ = nullptr;
  std::unique_ptr<LatencyPublisher> latency_;
};

int run(const Options& o) {
  // Fast DDS logs its errors to stderr, never into the CSV on stdout. Its warnings are left out:
  // "history full" at every blocked write, and a spurious one of the SHM transport (#6206).
  dds::Log::ClearConsumers();
  dds::Log::RegisterConsumer(std::make_unique<dds::StdoutErrConsumer>());
  const char* verbose = std::getenv("FASTDDS_PERFTEST_WARNINGS");  // any value: show warnings
  dds::Log::SetVerbosity(verbose && *verbose ? dds::Log::Warning : dds::Log::Error);

  // Destroyed in reverse order: the participant (and with it every reader, so no callback runs
  // any more) before the sides whose listeners the readers call.
  std::unique_ptr<SubscriberSide> sub;
  std::unique_ptr<PublisherSide> pub;
  int status = 0;
  {
    Participant participant;
    if (!participant.create(o)) return 1;
    if (o.sub || o.transport == Transport::kIntra) {
      sub = std::make_unique<SubscriberSide>(o);
      if (!sub->create(participant)) return 1;
      if (o.sub) {
        std::fprintf(stderr, "fastdds_perftest: subscriber, %s%s%s, %s, %u bytes\n",
                     transport_name(o.transport), o.data_sharing ? " + data sharing" : "",
                     o.zero_copy ? " + loans" : "", o.best_effort ? "best effort" : "reliable",
                     o.datalen);
      }
    }
    if (o.pub || o.transport == Transport::kIntra) {
      pub = std::make_unique<PublisherSide>(o);
      if (!pub->create(participant)) return 1;
      status = pub->run();
    }
    if (sub) {
      // INTRA: the publisher has finished; the subscriber's row follows (throughput), the
      // latency row came from the publisher.
      const int s = (o.transport == Transport::kIntra && status != 0) ? 1 : sub->finish();
      status = std::max(status, s);
    }
  }
  dds::Log::Flush();
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  std::string error;
  if (!parse_options(argc, argv, o, error)) {
    if (!error.empty()) err("%s", error.c_str());
    std::fputs(usage().c_str(), stderr);
    return 2;
  }
  return run(o);
}
