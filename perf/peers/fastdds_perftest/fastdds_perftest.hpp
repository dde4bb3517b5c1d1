// fastdds_perftest internals shared by its files: the payload layout, the options, the Fast DDS
// entities with their QoS, and the sample writer and waits both sides use.
//
// Files and threads:
//   main.cpp              main(), run(): Fast DDS's log, the participant, then the sides; main
//                         thread
//   options.cpp           usage() and the flags; main thread, before anything else runs
//   common.cpp            what is declared here: type support, Participant and QoS,
//                         SampleWriter, take_all()'s counter, matched counts; the main thread,
//                         and Fast DDS's reception threads where a listener takes samples or
//                         writes (pings, echoes)
//   subscriber.{hpp,cpp}  SubscriberSide: the data reader (and echo writer); Fast DDS's
//                         reception thread counts, the main thread waits and prints the row
//   publisher.{hpp,cpp}   PublisherSide: the data writer (and echo reader); the main thread
//                         writes, Fast DDS's reception thread takes echoes, sends the next ping
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "flags.hpp"
#include "random_payload.hpp"

#include <fastdds/dds/core/LoanableSequence.hpp>
#include <fastdds/dds/domain/DomainParticipant.hpp>
#include <fastdds/dds/publisher/DataWriter.hpp>
#include <fastdds/dds/publisher/Publisher.hpp>
#include <fastdds/dds/subscriber/DataReader.hpp>
#include <fastdds/dds/subscriber/DataReaderListener.hpp>
#include <fastdds/dds/subscriber/SampleInfo.hpp>
#include <fastdds/dds/subscriber/Subscriber.hpp>
#include <fastdds/dds/topic/Topic.hpp>

namespace fastdds_perftest {

namespace dds = eprosima::fastdds::dds;
namespace frtps = eprosima::fastrtps::rtps;
using eprosima::fastrtps::types::ReturnCode_t;
using Clock = std::chrono::steady_clock;

constexpr uint32_t kKindData = 0;
constexpr uint32_t kKindEnd = 1;
constexpr uint32_t kKindPing = 2;
constexpr uint32_t kKindWarmup = 3;    // ignored by subscribers (pubsub-perftest's too)
constexpr uint32_t kHeaderBytes = 20;  // seq, kind, timestamp, key

// A message on stderr, prefixed "fastdds_perftest: " and ended with a newline.
void err(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

inline uint32_t get_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

inline Clock::duration seconds_of(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

inline bool ok(const ReturnCode_t& rc) {
  return rc == ReturnCode_t::RETCODE_OK;
}

// ---- options (options.cpp) --------------------------------------------------------------------

using Transport = perftest::TransportKind;

const char* transport_name(Transport t);

// The common flags (perf/perftest/flags.hpp) and this peer's own.
struct Options : perftest::CommonOptions {
  Transport transport = Transport::kUdp;
  bool data_sharing = false;
  bool zero_copy = false;  // implies data_sharing
  bool asynchronous = false;
};

std::string usage();
// False with `error` set on a bad command line; with `error` empty for -help.
bool parse_options(int argc, char** argv, Options& o, std::string& error);

// ---- entities (common.cpp) --------------------------------------------------------------------

// The participant with the type registered, both topics, a publisher and a subscriber. Created
// and destroyed by the main thread; destroying it deletes every entity, after which no listener
// runs any more.
class Participant {
 public:
  ~Participant();

  // False (with a message) when Fast DDS refuses the configuration.
  bool create(const Options& o);

  dds::DataWriter* create_writer(const Options& o, dds::Topic* topic, bool echo);
  dds::DataReader* create_reader(const Options& o, dds::Topic* topic,
                                 dds::DataReaderListener* listener);

  dds::Topic* data_topic() const { return data_topic_; }
  dds::Topic* echo_topic() const { return echo_topic_; }

 private:
  dds::DomainParticipant* p_ = nullptr;
  dds::Topic* data_topic_ = nullptr;
  dds::Topic* echo_topic_ = nullptr;
  dds::Publisher* publisher_ = nullptr;
  dds::Subscriber* subscriber_ = nullptr;
};

// Loaned samples the writer reused before take_all() could read them (-zeroCopy).
extern std::atomic<uint64_t> overwritten_loans;

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

// Writes pubsub-perftest samples: a loaned sample (-zeroCopy) or a copy from `buf_`, retrying
// while reliable flow control blocks. The header is filled in, and with -payload random the
// payload too (the bytes pubsub-perftest sends for the same sequence number).
class SampleWriter {
 public:
  SampleWriter(dds::DataWriter* w, const Options& o)
      : w_(w), loans_(o.zero_copy), buf_(o.datalen, 0) {
    if (o.payload == perftest::Payload::kRandom && o.datalen > kHeaderBytes)
      random_.emplace(o.datalen);
  }

  // False (with a message) when the sample could not be written by `give_up`.
  bool write(uint32_t seq, uint32_t kind, uint64_t timestamp, Clock::time_point give_up);
  uint64_t blocked() const { return blocked_; }

 private:
  dds::DataWriter* w_;
  bool loans_;
  std::vector<uint8_t> buf_;
  std::optional<perftest::RandomPayload> random_;
  uint64_t blocked_ = 0;
};

size_t matched_readers(dds::DataWriter* w);
size_t matched_writers(dds::DataReader* r);

// Polls done() every 10 ms for up to `seconds`; false when it never became true.
template <class F>
bool wait_until(double seconds, F&& done) {
  const auto deadline = Clock::now() + seconds_of(seconds);
  while (!done()) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

}  // namespace fastdds_perftest
