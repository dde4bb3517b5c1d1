// pubsub_qos_peer: the JSON lines on stdout, messages on stderr, and what the main thread waits
// on.
//
// Lines come from the main thread, the status thread (status.hpp) and libpubsub's receive
// threads (the reader's callback) at once: emit() writes and flushes each line whole under one
// mutex. "ready" is the first line: a line emitted before emit_ready() (a sample delivered while
// create_reader() is still returning) is held back and printed right after "ready". "done" is
// the last: emit_last() drops every later line. err() writes one line on stderr under the same
// mutex. Waker is what the main thread sleeps on: the signal thread
// stops it (SIGINT/SIGTERM), the status thread and the reader's callback poke it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>

namespace pubsub_peer {

using Clock = std::chrono::steady_clock;

Clock::duration seconds(double s);
// A command-line number of seconds for a message: "2.5 s".
std::string seconds_text(double s);

// One JSON object, field by field: Line("sample").num("id", 3) -> {"event":"sample","id":3}.
// Text values are written as given: only hex, digits and fixed words go into them.
class Line {
 public:
  explicit Line(const char* event);
  Line& num(const char* key, int64_t v);
  Line& flag(const char* key, bool v);
  Line& text(const char* key, const std::string& v);
  const std::string& str() const { return text_; }

 private:
  std::string text_;
};

void emit(const Line& line);
// {"event":"ready"}, then the lines held back until now.
void emit_ready();
// No more lines after this one; later emit() calls print nothing.
void emit_last(const Line& line);
// One line on stderr: "pubsub_qos_peer: <message>".
void err(const std::string& message);

class Waker {
 public:
  void stop();
  void poke();
  bool stopped();
  // Sleeps until `until`, a stop, or done() (checked at every poke); true when done() holds.
  // done() runs under the Waker's lock: it may read atomics only.
  template <class F>
  bool wait_until(Clock::time_point until, F&& done) {
    std::unique_lock lk(mu_);
    while (!done()) {
      if (stopped_ || cv_.wait_until(lk, until) == std::cv_status::timeout) return done();
    }
    return true;
  }
  // Sleeps until `until` or a stop; false when stopped.
  bool sleep_until(Clock::time_point until);

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopped_ = false;
};

}  // namespace pubsub_peer
