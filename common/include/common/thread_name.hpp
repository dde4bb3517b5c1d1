// name_thread: a thread's name as top -H, ps -L, perf, gdb and /proc/PID/task/*/comm show it, so
// that a user can tell which of a recorder's threads takes the CPU. Called by the thread's creator
// right after starting it, so the name is there once the creating call returns. Linux keeps 15
// characters; a longer name is cut there. Naming is best effort: a failure changes nothing else.
#pragma once

#include <pthread.h>

#include <cstring>
#include <thread>

namespace common {

inline void name_thread(std::thread& thread, const char* name) noexcept {
  char buf[16];
  std::strncpy(buf, name, sizeof buf - 1);
  buf[sizeof buf - 1] = '\0';
  ::pthread_setname_np(thread.native_handle(), buf);
}

}  // namespace common
