// pubsub-recorder ctl: the control client (README "Remote control").
//   pubsub-recorder ctl (--socket PATH | --path DIR | --config FILE) COMMAND
// Exit status: 0 done, 1 the recorder refused the command (the reason on stderr), 2 bad command
// line, or the recorder cannot be reached.
#pragma once

namespace service {

// argv[0] is "ctl".
int run_ctl(int argc, char** argv);

}  // namespace service
