// pubsub-recorder ctl: the control client (README "Remote control").
//   pubsub-recorder ctl (--socket PATH | --path DIR | --config FILE) COMMAND
//   pubsub-recorder ctl --dds [--domain N] [--interface IF] COMMAND   (control.dds)
// Exit status: 0 done, 1 the recorder refused the command (the reason on stderr; over DDS also
// "participant ... is not in control.allow"), 2 bad command line, or the recorder cannot be
// reached (no recorder answers on the domain within --timeout).
#pragma once

namespace service {

// argv[0] is "ctl".
int run_ctl(int argc, char** argv);

}  // namespace service
