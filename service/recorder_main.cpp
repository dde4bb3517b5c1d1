// pubsub-recorder: records every matching topic of a DDS domain into a recording directory.
//   pubsub-recorder --config FILE [--path DIR] [--duration SECONDS] [--check-config]
//   pubsub-recorder ctl ... (service/ctl.hpp: the control client)
// Exit status: 0 recorded and closed cleanly (or --check-config found no problem), 1 the
// recording failed (e.g. disk full) or the disk guard stopped it (storage.on_low_space "stop":
// the recording is closed cleanly), 2 bad command line or configuration (nothing created).
// SIGINT and SIGTERM end the recording cleanly; SIGUSR1 triggers a snapshot (snapshot mode).
// Started by systemd (Type=notify, packaging/systemd/pubsub-recorder@.service.in) it reports
// READY=1, STATUS=, WATCHDOG=1 and STOPPING=1 through sd_notify(3).
#include <malloc.h>
#include <signal.h>
#include <systemd/sd-daemon.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string_view>
#include <thread>

#include "config/recorder_config.hpp"
#include "service/ctl.hpp"
#include "service/recorder.hpp"

namespace {

// Exit statuses (README "pubsub-recorder"); every return of main() is one of these.
constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;  // the recording failed (a file, the disk, the index) or the
                                // disk guard stopped it (kLowSpace)
constexpr int kExitUsage = 2;   // bad command line or configuration; nothing created

std::atomic<service::Recorder*> g_recorder{nullptr};

// Why the recorder could not start: the configuration's fault (a bad option, no such interface
// or directory, a directory that already holds a recording, a network it cannot join) or the
// system's (a log or index file that cannot be written, no space).
int start_failure_status(const common::Error& e) {
  switch (e.code) {
    case common::Errc::kInvalidArgument:
    case common::Errc::kNotFound:
    case common::Errc::kAlreadyExists:
    case common::Errc::kUnsupported:
    case common::Errc::kNetwork:
      return kExitUsage;
    default:
      return kExitFailed;
  }
}

// systemd's notifications (sd_notify(3)), from run()'s thread through RecorderOptions' hooks:
// READY=1 when recording, STATUS=<the statistics line>, WATCHDOG=1 every half of the watchdog
// interval (WatchdogSec=; on_tick comes every ~20 ms, so this rate-limits) and STOPPING=1 when
// the recording is being closed. Without NOTIFY_SOCKET in the environment (not started by
// systemd) sd_notify does nothing.
class ServiceNotifier {
 public:
  ServiceNotifier() {
    uint64_t usec = 0;
    // > 0: WATCHDOG_USEC is set, and WATCHDOG_PID is unset or this process.
    if (sd_watchdog_enabled(0, &usec) > 0 && usec > 0) {
      watchdog_period_ = std::chrono::microseconds(usec / 2);
    }
  }

  void hook_into(service::RecorderOptions& options) {
    options.on_ready = [this] { send("READY=1"); };
    options.on_stats = [this](const std::string& line) { send("STATUS=" + line); };
    options.on_tick = [this] { watchdog(); };
    options.on_stopping = [this] { send("STOPPING=1"); };
  }

 private:
  static void send(const std::string& message) { (void)sd_notify(0, message.c_str()); }

  void watchdog() {
    if (watchdog_period_.count() == 0) return;
    const auto now = std::chrono::steady_clock::now();
    if (now < next_watchdog_) return;
    send("WATCHDOG=1");
    next_watchdog_ = now + watchdog_period_;
  }

  std::chrono::microseconds watchdog_period_{0};  // 0: no watchdog configured
  std::chrono::steady_clock::time_point next_watchdog_{};
};

// The recorder allocates and frees samples of tens of KiB at full rate (reassembled fragments,
// samples held back while storage is full). glibc gives memory freed at the top of its heap
// back to the kernel (above 128 KiB) and maps big blocks of their own, so every new sample
// faulted its pages in again: 14 % of the recorder's CPU at 63000-B samples (perf record,
// perf/bench/recorder_alone.sh). Keep freed memory for reuse instead.
void keep_freed_memory() {
  (void)mallopt(M_TRIM_THRESHOLD, 256 << 20);
  (void)mallopt(M_MMAP_THRESHOLD, 32 << 20);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string_view(argv[1]) == "ctl") return service::run_ctl(argc - 1, argv + 1);
  keep_freed_memory();
  CLI::App app{"pubsub-recorder: records DDS (RTPS) traffic into a recording directory"};
  std::string config_file, path;
  double duration = 0;
  bool check_only = false;
  std::chrono::milliseconds::rep storage_delay_ms = 0;
  app.add_option("--config", config_file, "JSON configuration file")->required();
  app.add_option("--path", path, "recording directory (overrides storage.path)");
  app.add_option("--duration", duration, "stop after SECONDS (default: until SIGINT/SIGTERM)")
      ->check(CLI::Validator(
          [](std::string& s) {
            char* end = nullptr;
            const double d = std::strtod(s.c_str(), &end);
            return end != s.c_str() && *end == '\0' && d > 0
                       ? std::string()
                       : "must be a positive number of seconds";
          },
          "SECONDS"));
  app.add_flag("--check-config", check_only, "validate the configuration and exit (0 or 2)");
  app.add_option("--test-storage-delay-ms", storage_delay_ms,
                 "testing only: slow the storage writer down by this much per chunk")
      ->group("");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  }

  auto loaded = config::load_recorder_config(config_file);
  if (!loaded) {
    std::cerr << loaded.error().to_string();
    return kExitUsage;
  }
  config::RecorderConfig cfg = std::move(loaded).value();
  // The recording directory: --path as it is, or storage.path with its strftime conversions
  // expanded to the time of this start; then checked.
  auto check_storage_path = [&]() -> config::ConfigResult<void> {
    if (!path.empty()) {
      cfg.storage.path = path;
    } else if (auto r = config::expand_storage_path(cfg, std::chrono::system_clock::now()); !r) {
      return r;
    }
    return config::validate_storage_path(cfg);
  };
  bool ok = true;
  if (auto r = check_storage_path(); !r) {
    std::cerr << r.error().to_string();
    ok = false;
  }
  if (auto r = config::validate_log_file(cfg); !r) {
    std::cerr << r.error().to_string();
    ok = false;
  }
  if (auto r = service::load_idl_types(cfg); !r) {
    std::cerr << r.error().message << '\n';
    ok = false;
  }
  if (!ok) return kExitUsage;
  if (check_only) {
    std::printf("%s: configuration OK (recording would go to %s)\n", config_file.c_str(),
                cfg.storage.path.c_str());
    return kExitOk;
  }

  // SIGINT/SIGTERM/SIGUSR1 go to a dedicated thread (blocked everywhere else, before any thread
  // starts).
  // Reset their dispositions first: a background job of a non-interactive shell starts with
  // SIGINT ignored, and an ignored signal is discarded before sigwait() could take it.
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGUSR1);  // snapshot mode: a snapshot
  sigaddset(&set, SIGUSR2);  // ends the signal thread (sent by main)
  pthread_sigmask(SIG_BLOCK, &set, nullptr);

  service::RecorderOptions options;
  if (duration > 0) options.duration = std::chrono::duration<double>(duration);
  options.test_storage_delay = std::chrono::milliseconds(storage_delay_ms);
  ServiceNotifier notifier;
  notifier.hook_into(options);
  auto recorder = service::Recorder::create(cfg, options);
  if (!recorder) {
    std::fprintf(stderr, "pubsub-recorder: %s\n", recorder.error().message.c_str());
    return start_failure_status(recorder.error());
  }
  g_recorder = recorder.value().get();
  std::thread signals([set] {
    for (;;) {
      int sig = 0;
      sigwait(&set, &sig);
      auto* r = g_recorder.load();
      if (sig == SIGUSR2 || !r) return;
      if (sig != SIGUSR1) {
        r->stop();
      } else if (auto t = r->snapshot(""); !t) {
        std::fprintf(stderr, "pubsub-recorder: SIGUSR1: %s\n", t.error().message.c_str());
      }
    }
  });
  auto totals = recorder.value()->run();
  g_recorder = nullptr;
  pthread_kill(signals.native_handle(), SIGUSR2);
  signals.join();
  if (!totals) {
    std::fprintf(stderr, "pubsub-recorder: %s\n", totals.error().message.c_str());
    return kExitFailed;
  }
  return kExitOk;
}
