// RTI-Perftest-style command lines, shared by pubsub-perftest and the Fast DDS peer
// (perf/peers/fastdds_perftest): single-dash flags (a double dash is accepted), matched without
// regard to case, values in the next argument. FlagReader walks them; parse_common_flag() knows
// the flags both programs take, with the same names, ranges and messages.
//
//   FlagReader r(argc, argv);
//   std::string f;
//   while (r.next(f)) {
//     if (parse_common_flag(r, f, o)) continue;   // o derives from CommonOptions
//     if (r.failed()) return false;
//     if (f == "mine") { ... } else return r.unknown();
//   }
//   if (r.failed()) return false;
#pragma once

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace perftest {

// -payload: the bytes after each sample's header. kRandom: perftest::RandomPayload's, the same
// in both programs.
enum class Payload { kZero, kRandom };

// The options both perftest programs have.
struct CommonOptions {
  bool pub = false;
  bool sub = false;
  uint32_t datalen = 100;  // serialized sample size in bytes
  bool best_effort = false;
  double exec_seconds = 10;  // publisher: run time; subscriber: maximum wait
  bool latency_test = false;
  uint32_t num_subscribers = 1;
  uint32_t num_publishers = 1;
  uint32_t domain = 1;
  std::string nic;
  std::vector<std::string> peers;
  bool no_print = false;
  bool no_output_headers = false;
  double wait_seconds = 30;  // how long the publisher waits for subscribers
  int history_depth = 0;     // 0: KEEP_ALL; N: KEEP_LAST N (samples may then be skipped)
  std::string topic;         // data topic name (default PubsubPerftest_Data)
  std::string summary_json;  // write counts, loss and a payload checksum as JSON to this file
  Payload payload = Payload::kZero;
};

enum class TransportKind { kUdp, kShm, kIntra };

class FlagReader {
 public:
  FlagReader(int argc, char** argv) : argc_(argc), argv_(argv) {}

  // The next flag, lower-cased and without its dashes ("datalen"); false at the end, on a
  // non-flag argument (failed()) and for -help/-h (failed() with an empty error: print usage).
  bool next(std::string& f) {
    if (failed_ || ++i_ >= argc_) return false;
    flag_ = argv_[i_];
    if (flag_.rfind("--", 0) == 0) flag_.erase(0, 1);
    if (flag_.empty() || flag_[0] != '-') return fail("unexpected argument '" + flag_ + "'");
    f = flag_.substr(1);
    std::transform(f.begin(), f.end(), f.begin(), [](unsigned char c) { return std::tolower(c); });
    if (f == "help" || f == "h") return fail("");
    return true;
  }
  // The current flag's value; nullptr (failed) when it is the last argument.
  const char* value(const char* what) {
    if (i_ + 1 >= argc_) {
      fail(flag_ + " needs " + what);
      return nullptr;
    }
    return argv_[++i_];
  }
  bool string(const char* what, std::string& out) {
    const char* v = value(what);
    if (v) out = v;
    return v != nullptr;
  }
  // A number in [lo, hi]; `what` names it in the message ("a count (1..100)").
  bool number(const char* what, double lo, double hi, double& out) {
    const char* v = value(what);
    if (!v) return false;
    char* end = nullptr;
    const double d = std::strtod(v, &end);
    if (end == v || *end != '\0' || !(d >= lo && d <= hi))
      return fail(flag_ + ": '" + v + "' is not " + what);
    out = d;
    return true;
  }
  // -transport UDPv4|SHMEM|INTRA (also UDP, SHM; any case).
  bool transport(TransportKind& out) {
    const char* v = value("UDPv4, SHMEM or INTRA");
    if (!v) return false;
    std::string t = v;
    std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return std::tolower(c); });
    if (t == "udpv4" || t == "udp") {
      out = TransportKind::kUdp;
    } else if (t == "shmem" || t == "shm") {
      out = TransportKind::kShm;
    } else if (t == "intra") {
      out = TransportKind::kIntra;
    } else {
      return fail("-transport: '" + std::string(v) + "' is not UDPv4, SHMEM or INTRA");
    }
    return true;
  }
  bool unknown() { return fail("unknown option " + flag_); }
  bool fail(std::string message) {
    failed_ = true;
    error_ = std::move(message);
    return false;
  }
  bool failed() const { return failed_; }
  const std::string& error() const { return error_; }

 private:
  int argc_;
  char** argv_;
  int i_ = 0;
  std::string flag_;
  bool failed_ = false;
  std::string error_;
};

// Takes flag `f` when it is one of the common ones: true when taken (and its value valid).
inline bool parse_common_flag(FlagReader& r, const std::string& f, CommonOptions& o) {
  double d = 0;
  const auto count = [&](const char* what, double lo, double hi, auto& out) {
    if (!r.number(what, lo, hi, d)) return false;
    out = static_cast<std::remove_reference_t<decltype(out)>>(d);
    return true;
  };
  if (f == "pub") return o.pub = true;
  if (f == "sub") return o.sub = true;
  if (f == "best" || f == "besteffort") return o.best_effort = true;
  if (f == "latencytest") return o.latency_test = true;
  if (f == "noprint") return o.no_print = true;
  if (f == "nooutputheaders") return o.no_output_headers = true;
  if (f == "datalen") return count("a size in bytes (1..67108864)", 1, 64 << 20, o.datalen);
  if (f == "exec" || f == "executiontime")
    return count("seconds (0.1..86400)", 0.1, 86400, o.exec_seconds);
  if (f == "numsubscribers") return count("a count (1..100)", 1, 100, o.num_subscribers);
  if (f == "numpublishers") return count("a count (1..100)", 1, 100, o.num_publishers);
  if (f == "domain") return count("a domain id (0..232)", 0, 232, o.domain);
  if (f == "waitsubscribers") return count("seconds (0.1..3600)", 0.1, 3600, o.wait_seconds);
  if (f == "historydepth") return count("a depth (1..100000)", 1, 100000, o.history_depth);
  if (f == "nic") return r.string("an interface name or address", o.nic);
  if (f == "topic") return r.string("a topic name", o.topic);
  if (f == "summaryjson") return r.string("a file name", o.summary_json);
  if (f == "payload") {
    const char* v = r.value("zero or random");
    if (!v) return false;
    const std::string s = v;
    if (s != "zero" && s != "random") return r.fail("-payload: '" + s + "' is not zero or random");
    o.payload = s == "zero" ? Payload::kZero : Payload::kRandom;
    return true;
  }
  if (f == "peer") {
    std::string p;
    if (!r.string("an IPv4 address", p)) return false;
    o.peers.push_back(std::move(p));
    return true;
  }
  return false;
}

}  // namespace perftest
