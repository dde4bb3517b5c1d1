// fastdds_qos_peer: the two roles. Each runs on the main thread, prints its JSON lines (the last
// one "done") and returns the exit status; `waker` ends waits early on SIGINT/SIGTERM.
#pragma once

#include "options.hpp"
#include "output.hpp"

namespace qos_peer {

int run_pub(const Options& o, Waker& waker);  // pub.cpp
int run_sub(const Options& o, Waker& waker);  // sub.cpp

}  // namespace qos_peer
