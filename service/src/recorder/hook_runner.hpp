// storage.on_segment_closed: a user's shell command run for each finished segment file and for
// the finished recording, so that recordings leave the host with the tools the user already has
// (rclone, an S3 client, rsync).
//
// Who calls what: storage's writer thread (SegmentWriterOptions::on_segment_finished), a snapshot
// job's thread and Recorder::run() post events (post() only queues: it never waits for a
// command); the runner's own thread runs them one at a time, in the order posted, as
//   /bin/sh -c COMMAND sh PATH      with PUBSUB_EVENT, PUBSUB_PATH, PUBSUB_RECORDING set,
// stdin from /dev/null, stdout and stderr the recorder's, no other descriptor. A command that exits
// non-zero or is killed by a signal is logged with the status and counted; nothing is retried.
// drain() waits until everything posted has run (the recorder calls it before it exits).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace service {

struct HookEvent {
  std::string event;      // "segment" or "recording"
  std::string path;       // the segment file, or the recording directory
  std::string recording;  // the recording directory
};

struct HookCounts {
  uint64_t run = 0;      // commands finished (successfully or not)
  uint64_t failed = 0;   // of them, exit status not 0 or killed by a signal
  uint64_t pending = 0;  // posted and not finished (the one running included)
};

class HookRunner {
 public:
  // `log_line(level_is_warning, text)`: the runner's log lines ("storage.on_segment_closed ...").
  HookRunner(std::string command, std::function<void(bool warning, const std::string&)> log_line);
  ~HookRunner();  // drain(), then the thread ends
  HookRunner(const HookRunner&) = delete;
  HookRunner& operator=(const HookRunner&) = delete;

  void post(HookEvent e);
  void drain();
  HookCounts counts() const;

 private:
  void loop();
  // Runs one command and waits for it: its exit status as a wait status, or -1 when it could
  // not be started (errno in `error`).
  int run_one(const HookEvent& e, std::string& error) const;

  const std::string command_;
  std::function<void(bool, const std::string&)> log_;
  mutable std::mutex mu_;
  std::condition_variable cv_;       // the queue got an event, or stop_
  std::condition_variable idle_cv_;  // the queue ran empty with nothing running
  std::deque<HookEvent> queue_;
  bool running_one_ = false;
  bool stop_ = false;
  HookCounts counts_;
  std::thread thread_;
};

}  // namespace service
