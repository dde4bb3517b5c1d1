// fastdds_perftest: pubsub-perftest's throughput and latency tests, written against Fast DDS's
// public DDS API (eProsima Fast DDS 2.x), so that perf/bench can run both tools side by side.
//
// Same methods and output as pubsub-perftest (perf/perftest/):
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
//
// Threads: the main thread parses the flags, creates the participant and the sides and runs
// them (run() here); Fast DDS's threads deliver samples to the sides' listeners (the subscriber's
// counting, the echoes, the next ping); an IntervalPrinter thread prints the once-a-second lines.
// The files, and what runs where: fastdds_perftest.hpp.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "fastdds_perftest.hpp"
#include "publisher.hpp"
#include "subscriber.hpp"

#include <fastdds/dds/log/Log.hpp>
#include <fastdds/dds/log/StdoutErrConsumer.hpp>

namespace fastdds_perftest {
namespace {

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
}  // namespace fastdds_perftest

int main(int argc, char** argv) {
  fastdds_perftest::Options o;
  std::string error;
  if (!fastdds_perftest::parse_options(argc, argv, o, error)) {
    if (!error.empty()) fastdds_perftest::err("%s", error.c_str());
    std::fputs(fastdds_perftest::usage().c_str(), stderr);
    return 2;
  }
  return fastdds_perftest::run(o);
}
