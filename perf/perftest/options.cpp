// pubsub-perftest: its usage text and command line (perftest.hpp's usage() and parse_options()).
//
// Main thread, before anything else runs. The flags both perftest programs take are
// flags.hpp's parse_common_flag(); pubsub-perftest's own are parse_own_flag() here. After the
// flags, parse_options() checks how they combine and fills in the batching default.
#include <string>

#include "perftest.hpp"
#include "perftest_internal.hpp"

namespace perftest {

using detail::kCompatHeaderBytes;
using detail::kHeaderBytes;

std::string usage() {
  return "usage: pubsub-perftest -pub|-sub [options]\n"
         "  -datalen N            sample size in bytes (default 100; >= 20, >= 12 with "
         "-ddsperfCompat)\n"
         "  -batchSize BYTES      batch samples until they reach BYTES, within one datagram;\n"
         "                        0 = off (default 8192 in throughput mode when -datalen is\n"
         "                        below it)\n"
         "  -best                 best effort (default reliable)\n"
         "  -keyed                keyed topic; -instances N instances (default 1)\n"
         "  -exec SECONDS         publisher run time; subscriber maximum wait (default 10)\n"
         "  -latencyTest          ping-pong latency instead of throughput\n"
         "  -numSubscribers N     publisher waits for N subscribers (default 1)\n"
         "  -numPublishers N      subscriber waits for N publishers' end of run (default 1)\n"
         "  -domain D             DDS domain (default 1)\n"
         "  -nic IFACE|ADDR       network interface\n"
         "  -peer ADDR            unicast discovery peer (repeatable)\n"
         "  -maxMessageSize B     largest datagram, for every reader (default: MTU - 28,\n"
         "                        batches 14792 at MTU 1500, and\n"
         "                        64 KiB to Fast DDS readers)\n"
         "  -noPrint              no interval lines\n"
         "  -noOutputHeaders      no CSV header line\n"
         "  -payload zero|random  payload bytes (default zero)\n"
         "  -ddsperfCompat        Cyclone ddsperf's KeyedSeq on DDSPerf[RU]DataKS\n"
         "  -summaryJson FILE     write counts, loss and a payload checksum as JSON (INTRA: the\n"
         "                        publisher's to FILE.pub, the subscriber's to FILE.sub)\n"
         "  -waitSubscribers S    how long the publisher waits for subscribers (default 30)\n"
         "  -historyDepth N       publisher history KEEP_LAST N instead of KEEP_ALL\n"
         "  -topic NAME           data topic name (default PubsubPerftest_Data)\n"
         "  -pubRate N            publish N samples per second (default: as fast as possible)\n"
         "  -transport UDPv4|SHMEM|INTRA\n"
         "                        UDPv4 (default): the network, even on one host; SHMEM: shared\n"
         "                        memory between processes on one host; INTRA: publisher and\n"
         "                        subscriber in this process (no -pub/-sub)\n"
         "  -zeroCopy             the publisher fills loaned buffers in place (Writer::loan),\n"
         "                        the subscriber takes samples as loans (LoanedSample)\n";
}

namespace {

// pubsub-perftest's own flags; false when `f` is not one of them or its value is bad.
bool parse_own_flag(FlagReader& r, const std::string& f, Options& o) {
  double d = 0;
  if (f == "batchsize") {
    if (!r.number("a size in bytes (0..65000)", 0, 65000, d)) return false;
    o.batch_size = static_cast<long>(d);
  } else if (f == "keyed") {
    o.keyed = true;
  } else if (f == "instances") {
    if (!r.number("a count (1..1000000)", 1, 1e6, d)) return false;
    o.instances = static_cast<uint32_t>(d);
  } else if (f == "maxmessagesize") {
    if (!r.number("a datagram size (1024..65000)", 1024, 65000, d)) return false;
    o.max_message_size = static_cast<size_t>(d);
  } else if (f == "ddsperfcompat") {
    o.ddsperf_compat = true;
  } else if (f == "pubrate") {
    if (!r.number("samples per second (0.001..10000000)", 0.001, 1e7, d)) return false;
    o.pub_rate = d;
  } else if (f == "transport") {
    return r.transport(o.transport);
  } else if (f == "zerocopy") {
    o.zero_copy = true;
  } else {
    return r.unknown();
  }
  return true;
}

}  // namespace

bool parse_options(int argc, char** argv, Options& o, std::string& error) {
  FlagReader r(argc, argv);
  std::string f;
  while (r.next(f)) {
    if (!parse_common_flag(r, f, o) && !r.failed()) parse_own_flag(r, f, o);
  }
  if (r.failed()) {
    error = r.error();
    return false;
  }
  if (o.transport == TransportKind::kIntra) {
    if (o.pub || o.sub) {
      error = "-transport INTRA runs both sides: leave out -pub and -sub";
      return false;
    }
    if (o.ddsperf_compat) {
      error = "-transport INTRA and -ddsperfCompat exclude each other";
      return false;
    }
  } else if (o.pub == o.sub) {
    error = "give exactly one of -pub and -sub";
    return false;
  }
  const uint32_t min_len = o.ddsperf_compat ? kCompatHeaderBytes : kHeaderBytes;
  if (o.datalen < min_len) {
    error = "-datalen must be at least " + std::to_string(min_len) +
            (o.ddsperf_compat ? " with -ddsperfCompat" : "");
    return false;
  }
  if (o.ddsperf_compat) {
    o.keyed = true;
    if (o.latency_test) {
      error = "-latencyTest is not available with -ddsperfCompat (use ddsperf ping/pong)";
      return false;
    }
  }
  // Batching by default only when publishing flat out: a paced sample would wait for the flush.
  if (o.batch_size < 0) o.batch_size = o.latency_test || o.pub_rate > 0 ? 0 : 8192;
  return true;
}

}  // namespace perftest
