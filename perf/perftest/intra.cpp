// pubsub-perftest -transport INTRA (perftest.hpp's run_intra()): publisher and subscriber in this
// one process, each with its own participant, delivering in-process.
//
// Threads: the subscriber runs run_subscriber() on a thread started here, the main thread runs
// run_publisher(), then joins the subscriber (its limit is -exec plus 30 s, so it sees the end
// marker). Each side has its participant's receive thread as usual; neither prints interval
// lines. -summaryJson goes to FILE.pub and FILE.sub.
#include <string>
#include <thread>

#include "perftest.hpp"

namespace perftest {

int run_intra(const Options& o) {
  Options sub = o, pub = o;
  sub.sub = true;
  pub.pub = true;
  sub.exec_seconds = o.exec_seconds + 30;  // the subscriber's limit: the whole run, and more
  if (!o.summary_json.empty()) {
    pub.summary_json = o.summary_json + ".pub";
    sub.summary_json = o.summary_json + ".sub";
  }
  sub.no_print = pub.no_print = true;
  int sub_rc = 0;
  std::thread subscriber([&] { sub_rc = run_subscriber(sub); });
  const int pub_rc = run_publisher(pub);
  subscriber.join();
  return pub_rc != 0 ? pub_rc : sub_rc;
}

}  // namespace perftest
