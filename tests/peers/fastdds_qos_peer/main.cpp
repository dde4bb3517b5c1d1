// fastdds_qos_peer: a Fast DDS 2.9 writer or reader whose QoS is set policy by policy from the
// command line, printing what happens as JSON lines: the Fast DDS twin of cyclone_qos_peer,
// both implementing the contract of tests/peers/README.md.
//
// Threads: main parses the command line (bad options: one line on stderr, exit 2), blocks
// SIGINT/SIGTERM for every thread it starts (Fast DDS's included), starts the signal thread and
// runs the role (pub.cpp or sub.cpp) to its end. The signal thread waits in sigwait() and wakes
// the main thread's waits (Waker::stop), so a signal ends the run cleanly ("done", exit 0).
// Fast DDS's own threads run the listeners, which print events (output.hpp serialises lines).
// Fast DDS's log goes to stderr, errors only; FASTDDS_QOS_PEER_WARNINGS=1 adds its warnings
// (among them its reasons for not matching).
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <thread>

#include <fastdds/dds/log/Log.hpp>

#include "options.hpp"
#include "output.hpp"
#include "roles.hpp"

namespace {

namespace dds = eprosima::fastdds::dds;

qos_peer::Waker waker;

// Blocks SIGINT and SIGTERM here (inherited by every later thread) and waits for them on a
// detached thread, which lives until the process exits.
void start_signal_thread() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread([set] {
    int sig = 0;
    if (sigwait(&set, &sig) == 0) waker.stop();
  }).detach();
}

// Fast DDS's log thread: one uncoloured line per entry on stderr (stdout is JSON only).
class StderrLog : public dds::LogConsumer {
 public:
  void Consume(const dds::Log::Entry& e) override {
    const char* kind = e.kind == dds::Log::Error     ? "error"
                       : e.kind == dds::Log::Warning ? "warning"
                                                     : "info";
    qos_peer::err(std::string("Fast DDS ") + kind + " [" +
                  (e.context.category ? e.context.category : "") + "]: " + e.message);
  }
};

void route_fastdds_log() {
  dds::Log::ClearConsumers();
  dds::Log::RegisterConsumer(std::make_unique<StderrLog>());
  const char* warnings = std::getenv("FASTDDS_QOS_PEER_WARNINGS");
  dds::Log::SetVerbosity(warnings && *warnings ? dds::Log::Warning : dds::Log::Error);
}

}  // namespace

int main(int argc, char** argv) {
  qos_peer::Options o;
  std::string error;
  bool help = false;
  if (!qos_peer::parse_options(argc, argv, o, error, help)) {
    if (help) {
      std::fputs(qos_peer::usage().c_str(), stdout);
      return 0;
    }
    qos_peer::err(error);
    return 2;
  }
  start_signal_thread();
  route_fastdds_log();
  const int status =
      o.role == qos_peer::Role::kPub ? qos_peer::run_pub(o, waker) : qos_peer::run_sub(o, waker);
  dds::Log::Flush();
  return status;
}
