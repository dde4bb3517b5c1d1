// pubsub_qos_peer: a libpubsub writer or reader of QosTest::Sample whose QoS is set policy by
// policy from the command line, printing what happens as JSON lines: the libpubsub twin of
// cyclone_qos_peer and fastdds_qos_peer, all three implementing tests/peers/README.md.
//
// Files: options (command line), sample (the type's serialization), entities (options ->
// libpubsub QoS, the participant), status (matched / incompatible_qos lines, polled), output
// (JSON lines, stderr, the main thread's waits), pub and sub (the two roles).
//
// Threads: main parses the command line (bad options: one line on stderr, exit 2, nothing on
// stdout), blocks SIGINT/SIGTERM for every thread it starts (libpubsub's included), starts the
// signal thread and runs the role to its end. The signal thread waits in sigwait() and wakes
// the main thread's waits (Waker::stop), so a signal ends the run cleanly ("done", exit 0).
// libpubsub's receive threads run the reader's callback; the status poller has its own thread.
#include <csignal>
#include <cstdio>
#include <thread>

#include "options.hpp"
#include "output.hpp"
#include "roles.hpp"

namespace {

pubsub_peer::Waker waker;

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

}  // namespace

int main(int argc, char** argv) {
  pubsub_peer::Options o;
  std::string error;
  switch (pubsub_peer::parse_options(argc, argv, o, error)) {
    case pubsub_peer::Parsed::kHelp:
      std::fputs(pubsub_peer::usage().c_str(), stdout);
      return 0;
    case pubsub_peer::Parsed::kBad:
      pubsub_peer::err(error);
      return 2;
    case pubsub_peer::Parsed::kRun:
      break;
  }
  start_signal_thread();
  return o.role == pubsub_peer::Role::kPub ? pubsub_peer::run_pub(o, waker)
                                           : pubsub_peer::run_sub(o, waker);
}
