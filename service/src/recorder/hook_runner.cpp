// HookRunner (hook_runner.hpp): storage.on_segment_closed's queue and the thread that runs it.
#include "hook_runner.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "common/thread_name.hpp"

extern char** environ;

namespace service {
namespace {

// "exit 3", "signal 9 (Killed)".
std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exit " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return "signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
  }
  return "status " + std::to_string(status);
}

}  // namespace

HookRunner::HookRunner(std::string command,
                       std::function<void(bool warning, const std::string&)> log_line)
    : command_(std::move(command)), log_(std::move(log_line)) {
  thread_ = std::thread([this] { loop(); });
  common::name_thread(thread_, "rec-hooks");
}

HookRunner::~HookRunner() {
  drain();
  {
    std::lock_guard lk(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void HookRunner::post(HookEvent e) {
  {
    std::lock_guard lk(mu_);
    queue_.push_back(std::move(e));
    ++counts_.pending;
  }
  cv_.notify_one();
}

void HookRunner::drain() {
  std::unique_lock lk(mu_);
  idle_cv_.wait(lk, [&] { return queue_.empty() && !running_one_; });
}

HookCounts HookRunner::counts() const {
  std::lock_guard lk(mu_);
  return counts_;
}

void HookRunner::loop() {
  std::unique_lock lk(mu_);
  for (;;) {
    cv_.wait(lk, [&] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stop_, and everything has run
    HookEvent e = std::move(queue_.front());
    queue_.pop_front();
    running_one_ = true;
    lk.unlock();
    std::string error;
    const int status = run_one(e, error);
    const bool ok = status == 0;
    if (status < 0) {
      log_(true, "storage.on_segment_closed for " + e.path + " could not start: " + error);
    } else if (!ok) {
      log_(true, "storage.on_segment_closed for " + e.path + " failed: " + describe_status(status));
    } else {
      log_(false, "storage.on_segment_closed for " + e.path + ": exit 0");
    }
    lk.lock();
    running_one_ = false;
    ++counts_.run;
    --counts_.pending;
    if (!ok) ++counts_.failed;
    if (queue_.empty()) idle_cv_.notify_all();
  }
}

int HookRunner::run_one(const HookEvent& e, std::string& error) const {
  std::vector<std::string> env_text = {"PUBSUB_EVENT=" + e.event, "PUBSUB_PATH=" + e.path,
                                       "PUBSUB_RECORDING=" + e.recording};
  std::vector<char*> envp;
  for (char** v = environ; v && *v; ++v) {
    if (std::strncmp(*v, "PUBSUB_EVENT=", 13) == 0 || std::strncmp(*v, "PUBSUB_PATH=", 12) == 0 ||
        std::strncmp(*v, "PUBSUB_RECORDING=", 17) == 0)
      continue;
    envp.push_back(*v);
  }
  for (auto& s : env_text) envp.push_back(s.data());
  envp.push_back(nullptr);
  const char* argv[] = {"/bin/sh", "-c", command_.c_str(), "sh", e.path.c_str(), nullptr};
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  // Not the recorder's sockets, segment files or control socket.
  posix_spawn_file_actions_addclosefrom_np(&fa, STDERR_FILENO + 1);
  pid_t pid = 0;
  const int rc =
      posix_spawn(&pid, "/bin/sh", &fa, nullptr, const_cast<char* const*>(argv), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    error = std::strerror(rc);
    return -1;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      error = std::string("waitpid: ") + std::strerror(errno);
      return -1;
    }
  }
  return status;
}

}  // namespace service
