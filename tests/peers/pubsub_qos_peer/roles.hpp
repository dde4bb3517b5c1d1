// pubsub_qos_peer: the two roles. Each runs on the main thread, prints its JSON lines ("ready"
// first once its entities exist, "done" last) and returns the exit status (0 ok, 1 timeout or
// failure); `waker` ends its waits early on SIGINT/SIGTERM, which still ends with "done", 0.
#pragma once

#include "options.hpp"
#include "output.hpp"

namespace pubsub_peer {

int run_pub(const Options& o, Waker& waker);  // pub.cpp
int run_sub(const Options& o, Waker& waker);  // sub.cpp

}  // namespace pubsub_peer
