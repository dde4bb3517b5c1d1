/* cyclone_qos_peer: a Cyclone DDS writer or reader of QosTest::Sample whose QoS comes from the
 * command line, printing what happens as JSON lines (../README.md; the Fast DDS twin is
 * fastdds_qos_peer).
 *
 * Threads: the main thread parses the options, then runs pub.c or sub.c (entity creation,
 * writing or taking, waiting on a waitset) and prints "done" last; a signal thread (stop.c)
 * turns SIGINT/SIGTERM into a stop; Cyclone's own threads call the status listeners
 * (events.c). output.c serialises the lines all of them print.
 */
#include "peer.h"

int main(int argc, char** argv) {
  struct peer_options o;
  int rc = peer_parse_options(argc, argv, &o);
  if (rc != 0) return rc < 0 ? 0 : rc;
  stop_init();
  struct peer_result r = o.role == PEER_PUB ? run_pub(&o) : run_sub(&o);
  out_done(r.samples, r.ok);
  return r.exit_code;
}
