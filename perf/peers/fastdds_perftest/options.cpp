// fastdds_perftest: its usage text and command line (fastdds_perftest.hpp's Options).
//
// Main thread, before anything else runs. The flags both perftest programs take are
// perf/perftest/flags.hpp's parse_common_flag(); this peer's own (-transport, -dataSharing,
// -zeroCopy, -asynchronous) are parse_own_flag() here. parse_options() then checks how they
// combine.
#include <string>

#include "fastdds_perftest.hpp"

namespace fastdds_perftest {

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
         "  -payload zero|random  publisher: payload bytes (default zero); random: the bytes\n"
         "                        pubsub-perftest -payload random sends\n"
         "  -transport UDPv4|SHMEM|INTRA\n"
         "                        UDPv4 (default): only Fast DDS's UDPv4 transport; SHMEM: only\n"
         "                        its shared-memory transport; INTRA: publisher and subscriber\n"
         "                        in this process, intra-process delivery (no -pub/-sub)\n"
         "  -dataSharing          data-sharing delivery (UDPv4 or SHMEM, one host)\n"
         "  -zeroCopy             data sharing, writer loans (loan_sample) and reader loans\n"
         "  -asynchronous         ASYNCHRONOUS publish mode, unlimited flow controller\n"
         "                        (default SYNCHRONOUS)\n";
}

namespace {

// This peer's own flags; false when `f` is not one of them or its value is bad.
bool parse_own_flag(perftest::FlagReader& r, const std::string& f, Options& o) {
  if (f == "transport") return r.transport(o.transport);
  if (f == "datasharing") return o.data_sharing = true;
  if (f == "zerocopy") return o.zero_copy = o.data_sharing = true;
  if (f == "asynchronous") return o.asynchronous = true;
  return r.unknown();
}

}  // namespace

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

}  // namespace fastdds_perftest
