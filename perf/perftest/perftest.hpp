// pubsub-perftest: an RTI-Perftest-style throughput and latency tool over libpubsub.
//
// Throughput: the publisher writes -datalen byte samples as fast as reliability allows for
// -exec seconds, then an end-of-run marker; the subscriber counts samples, bytes and loss (from
// a sequence number carried in the payload, independent of the library) and prints one CSV row.
// Latency (-latencyTest): the publisher sends one ping at a time on the data topic, the
// subscriber echoes it on the echo topic, and the publisher records round trip / 2.
// -ddsperfCompat speaks Cyclone DDS ddsperf's KeyedSeq type on its topics so either tool can
// take either side.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace perftest {

enum class Payload { kZero, kRandom };
// -transport: UDPv4 (the network even on one host), SHMEM (shared memory between processes on
// one host; the subscriber takes nothing else), INTRA (publisher and subscriber in one process).
enum class TransportKind { kUdp, kShm, kIntra };

struct Options {
  bool pub = false;
  bool sub = false;
  uint32_t datalen = 100;  // serialized sample size in bytes (body; whole sample in compat)
  long batch_size = -1;    // -1: default (8192 in throughput mode when datalen is below it)
  bool best_effort = false;
  bool keyed = false;
  uint32_t instances = 1;
  double exec_seconds = 10;  // publisher: run time; subscriber: maximum wait
  bool latency_test = false;
  uint32_t num_subscribers = 1;
  uint32_t num_publishers = 1;
  uint32_t domain = 1;
  std::string nic;
  std::vector<std::string> peers;
  size_t max_message_size = 0;  // ParticipantOptions::max_message_size (0: automatic)
  bool no_print = false;
  bool no_output_headers = false;
  Payload payload = Payload::kZero;
  bool ddsperf_compat = false;
  std::string summary_json;  // write a JSON summary (counts, loss, checksum) to this file
  double wait_seconds = 30;  // how long the publisher waits for subscribers
  int history_depth = 0;     // 0: KEEP_ALL; N: KEEP_LAST N (samples may then be skipped by GAPs)
  std::string topic;         // data topic name (default PubsubPerftest_Data)
  double pub_rate = 0;       // samples per second; 0 = as fast as possible
  TransportKind transport = TransportKind::kUdp;
  bool zero_copy = false;  // writer loans (Writer::loan) and in-place reading
};

// Parses RTI-style flags (single dash; double dash accepted). On error, returns false with a
// message naming the flag.
bool parse_options(int argc, char** argv, Options& out, std::string& error);
std::string usage();

int run_publisher(const Options& o);
int run_subscriber(const Options& o);
// -transport INTRA: both sides in this process; prints the subscriber's (throughput) or the
// publisher's (latency) CSV row.
int run_intra(const Options& o);

}  // namespace perftest
