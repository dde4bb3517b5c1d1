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

#include "flags.hpp"

namespace perftest {

// -transport (TransportKind, flags.hpp): UDPv4 (the network even on one host), SHMEM (shared
// memory between processes on one host; the subscriber takes nothing else), INTRA (publisher and
// subscriber in one process).

// The common flags (flags.hpp) and pubsub-perftest's own.
struct Options : CommonOptions {
  long batch_size = -1;  // -1: default (8192 in throughput mode when datalen is below it)
  bool keyed = false;
  uint32_t instances = 1;
  size_t max_message_size = 0;  // ParticipantOptions::max_message_size (0: automatic)
  bool ddsperf_compat = false;  // datalen is then the whole sample
  double pub_rate = 0;          // samples per second; 0 = as fast as possible
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
