// pubsub-recorder: records every matching topic of a DDS domain into a recording directory.
//   pubsub-recorder --config FILE [--path DIR] [--duration SECONDS] [--check-config]
// Exit status: 0 recorded and closed cleanly (or --check-config found no problem), 1 the
// recording failed (e.g. disk full), 2 bad command line or configuration (nothing created).
// SIGINT and SIGTERM end the recording cleanly.
#include <signal.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <thread>

#include "config/recorder_config.hpp"
#include "service/recorder.hpp"

namespace {

std::atomic<service::Recorder*> g_recorder{nullptr};

}  // namespace

int main(int argc, char** argv) {
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
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }

  auto loaded = config::load_recorder_config(config_file);
  if (!loaded) {
    std::cerr << loaded.error().to_string();
    return 2;
  }
  config::RecorderConfig cfg = std::move(loaded).value();
  if (!path.empty()) cfg.storage.path = path;
  bool ok = true;
  if (auto r = config::validate_storage_path(cfg); !r) {
    std::cerr << r.error().to_string();
    ok = false;
  }
  if (auto r = config::validate_log_file(cfg); !r) {
    std::cerr << r.error().to_string();
    ok = false;
  }
  if (!ok) return 2;
  if (check_only) {
    std::printf("%s: configuration OK (recording would go to %s)\n", config_file.c_str(),
                cfg.storage.path.c_str());
    return 0;
  }

  // SIGINT/SIGTERM go to a dedicated thread (blocked everywhere else, before any thread starts).
  // Reset their dispositions first: a background job of a non-interactive shell starts with
  // SIGINT ignored, and an ignored signal is discarded before sigwait() could take it.
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGUSR1);  // ends the signal thread
  pthread_sigmask(SIG_BLOCK, &set, nullptr);

  service::RecorderOptions options;
  if (duration > 0) options.duration = std::chrono::duration<double>(duration);
  options.test_storage_delay = std::chrono::milliseconds(storage_delay_ms);
  auto recorder = service::Recorder::create(cfg, options);
  if (!recorder) {
    std::fprintf(stderr, "pubsub-recorder: %s\n", recorder.error().message.c_str());
    return recorder.error().code == pubsub::ErrorCode::kIo ? 1 : 2;
  }
  g_recorder = recorder.value().get();
  std::thread signals([set] {
    int sig = 0;
    sigwait(&set, &sig);
    if (sig == SIGUSR1) return;
    if (auto* r = g_recorder.load()) r->stop();
  });
  auto totals = recorder.value()->run();
  g_recorder = nullptr;
  pthread_kill(signals.native_handle(), SIGUSR1);  // no-op if it already took SIGINT/SIGTERM
  signals.join();
  if (!totals) {
    std::fprintf(stderr, "pubsub-recorder: %s\n", totals.error().message.c_str());
    return 1;
  }
  return 0;
}
