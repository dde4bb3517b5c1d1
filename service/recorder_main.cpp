// pubsub-recorder: records every matching topic of a DDS domain into a recording directory.
//   pubsub-recorder [-c FILE] [-o DIR] [-d N] [-i IF] [TOPIC...] [flags] [--duration SECONDS]
//                   [--check-config]
//   pubsub-recorder ctl ... (service/ctl.hpp: the control client)
// The configuration is the file (optional) with the flags' keys over it (config::
// compose_recorder_config); with neither a file nor -o it records into rec-YYYYmmdd-HHMMSS.
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
#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string_view>
#include <thread>
#include <vector>

#include "common/thread_name.hpp"
#include "config/recorder_config.hpp"
#include "service/cli_text.hpp"
#include "service/ctl.hpp"
#include "service/recorder.hpp"

namespace {

// Exit statuses (README, "pubsub-recorder command line"); every return of main() is one of these.
constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;  // the recording failed (a file, the disk, the index) or the
                                // disk guard stopped it (kLowSpace)
constexpr int kExitUsage = 2;   // bad command line or configuration; nothing created

std::atomic<service::Recorder*> g_recorder{nullptr};

// Why the recorder could not start: the configuration's fault (a bad option, no such interface
// or directory, a directory that already holds a recording, a network it cannot join) or the
// system's (a log or index file that cannot be written, no space).
int start_failure_status(const service::Error& e) {
  switch (e.code) {
    case service::Errc::kInvalidArgument:
    case service::Errc::kNotFound:
    case service::Errc::kAlreadyExists:
    case service::Errc::kUnsupported:
    case service::Errc::kNetwork:
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

// The command line: every flag but --config, --duration and --check-config sets a configuration
// key (over the file's; --set reaches any key).
struct CommandLine {
  std::string config_file, output;
  double duration = 0;
  bool check_only = false;
  bool all = false;
  std::chrono::milliseconds::rep storage_delay_ms = 0;
  std::chrono::milliseconds::rep registrar_delay_ms = 0;
  std::vector<std::string> set_options;  // --set KEY=VALUE, applied last
};

// A flag that sets one configuration key; its value becomes JSON by `kind`.
struct KeyFlag {
  const char* names;
  const char* value;  // in --help
  const char* pointer;
  const char* help;
  enum Kind { kNumber, kString, kStrings, kBytes } kind;
};

constexpr KeyFlag kKeyFlags[] = {
    {"-d,--domain", "N", "/domain", "DDS domain id (domain; default 0)", KeyFlag::kNumber},
    {"-i,--interface", "NAME|IPV4", "/interface",
     "network interface name or IPv4 address (interface; default: the first up, "
     "multicast-capable one)",
     KeyFlag::kString},
    {"--peer", "IPV4", "/peers", "IPv4 address for unicast discovery, repeatable (peers)",
     KeyFlag::kStrings},
    {"TOPIC", "GLOB", "/topics/include",
     "topic names or globs (* ? [a-z]) to record (topics.include; default: every topic)",
     KeyFlag::kStrings},
    {"-x,--exclude", "GLOB", "/topics/exclude",
     "a topic glob not to record, repeatable (topics.exclude)", KeyFlag::kStrings},
    {"--regex", "REGEX", "/topics/regex",
     "record only topics whose whole name matches this ECMAScript regular expression "
     "(topics.regex)",
     KeyFlag::kString},
    {"--writers", "all|local", "/topics/writers",
     "record every writer, or only those on this host (topics.writers; default all)",
     KeyFlag::kString},
    {"--mode", "MODE", "/mode", "record or snapshot (mode)", KeyFlag::kString},
    {"--compression", "KIND", "/storage/compression", "lz4 or none (storage.compression)",
     KeyFlag::kString},
    {"--split-size", "BYTES", "/storage/segment_max_bytes",
     "a new segment file past BYTES: 512M, 1G (storage.segment_max_bytes)", KeyFlag::kBytes},
    {"--split-duration", "SECONDS", "/storage/segment_max_duration_s",
     "a new segment file every SECONDS (storage.segment_max_duration_s)", KeyFlag::kNumber},
    {"--max-bytes", "BYTES", "/storage/retention/max_bytes",
     "keep at most BYTES, removing the oldest segments (storage.retention.max_bytes)",
     KeyFlag::kBytes},
    {"--idl", "FILE", "/types/idl", "an IDL file of topic types, repeatable (types.idl)",
     KeyFlag::kStrings},
    {"--metrics", "IPV4:PORT", "/metrics/listen",
     "IPV4:PORT of a Prometheus endpoint (metrics.listen)", KeyFlag::kString},
    {"--log-level", "LEVEL", "/log/level", "trace, debug, info, warn, error or off (log.level)",
     KeyFlag::kString},
    {"--stats-interval", "SECONDS", "/stats_interval_s",
     "SECONDS between statistics lines (stats_interval_s)", KeyFlag::kNumber},
};

// "512M", "1G", "100000": bytes with an optional K, M, G or T (powers of 1024), as JSON; else the
// text as a JSON string (the configuration's check then names it).
nlohmann::json bytes_value(const std::string& v) {
  static const std::string kSuffixes = "KMGT";
  std::string digits = v;
  uint64_t mult = 1;
  if (!v.empty()) {
    if (const size_t at = kSuffixes.find(static_cast<char>(std::toupper(v.back())));
        at != std::string::npos) {
      mult = uint64_t{1} << (10 * (at + 1));
      digits.pop_back();
    }
  }
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos ||
      digits.size() > 15) {
    return v;
  }
  return std::stoull(digits) * mult;
}

nlohmann::json flag_value(KeyFlag::Kind kind, const std::vector<std::string>& values) {
  switch (kind) {
    case KeyFlag::kStrings:
      return values;
    case KeyFlag::kBytes:
      return bytes_value(values.back());
    case KeyFlag::kNumber: {
      const auto j = nlohmann::json::parse(values.back(), nullptr, false);
      return j.is_number() ? j : nlohmann::json(values.back());
    }
    case KeyFlag::kString:
      break;
  }
  return values.back();
}

// The flags' names without dashes for messages: "-d,--domain" -> "--domain".
std::string long_name(const char* names) {
  const std::string n = names;
  return n.substr(n.rfind(',') == std::string::npos ? 0 : n.rfind(',') + 1);
}

void define_flags(CLI::App& app, CommandLine& cl, std::vector<std::vector<std::string>>& keyed) {
  app.add_option("-c,--config", cl.config_file,
                 "JSON configuration file (optional: the flags override its keys)")
      ->type_name("FILE");
  app.add_option("-o,--output,--path", cl.output,
                 "recording directory (storage.path, taken as it is; without it or --config: "
                 "rec-YYYYmmdd-HHMMSS)")
      ->type_name("DIR");
  keyed.resize(std::size(kKeyFlags));
  for (size_t i = 0; i < std::size(kKeyFlags); ++i) {
    const KeyFlag& f = kKeyFlags[i];
    CLI::Option* o = app.add_option(f.names, keyed[i], f.help);
    if (*f.value) o->type_name(f.value);
    // One value per flag (repeat the flag for more): `-i veth1 'rt/*'` leaves the topic alone.
    if (f.pointer != std::string_view("/topics/include")) o->allow_extra_args(false);
  }
  app.add_flag("-a,--all", cl.all, "record every topic (the default: topics.include [\"*\"])");
  app.add_option("--set", cl.set_options,
                 "any configuration key, e.g. --set storage.fsync=none --set "
                 "snapshot.before_s=60 (VALUE is JSON, or else a string); applied last")
      ->type_name("KEY=VALUE");
  app.add_option("--duration", cl.duration, "stop after SECONDS (default: until SIGINT/SIGTERM)")
      ->check(CLI::Validator(
          [](std::string& s) {
            char* end = nullptr;
            const double d = std::strtod(s.c_str(), &end);
            return end != s.c_str() && *end == '\0' && d > 0
                       ? std::string()
                       : "must be a positive number of seconds";
          },
          "SECONDS"));
  app.add_flag("--check-config", cl.check_only,
               "check the configuration and what the start tries (interface, ports, paths, IDL "
               "files), create nothing, exit 0 or 2");
  app.add_option("--test-storage-delay-ms", cl.storage_delay_ms,
                 "testing only: slow the storage writer down by this much per chunk")
      ->group("");
  app.add_option("--test-registrar-delay-ms", cl.registrar_delay_ms,
                 "testing only: the registrar waits this long before preparing matched writers")
      ->group("");
  app.set_version_flag("--version", std::string("pubsub-recorder ") + PUBSUB_VERSION);
  app.footer(
      "Control a running recorder: pubsub-recorder ctl status|pause|resume|split|tag|snapshot|"
      "stop (see pubsub-recorder ctl --help).\n"
      "Exit status: 0 recorded and closed cleanly (or --check-config found nothing wrong), 1 the "
      "recording failed or the disk guard stopped it, 2 bad command line or configuration "
      "(nothing created).");
}

// The settings of the flags given, in table order, then --set's; an error line or "".
std::string settings_of(const CommandLine& cl, const std::vector<std::vector<std::string>>& keyed,
                        std::vector<config::Setting>& out) {
  if (!cl.output.empty()) {
    out.push_back({"/storage/path", nlohmann::json(cl.output).dump(), "--output " + cl.output});
  }
  for (size_t i = 0; i < std::size(kKeyFlags); ++i) {
    if (keyed[i].empty()) continue;
    const KeyFlag& f = kKeyFlags[i];
    std::string shown = long_name(f.names);
    if (f.kind != KeyFlag::kStrings) shown += " " + keyed[i].back();
    out.push_back({f.pointer, flag_value(f.kind, keyed[i]).dump(), shown});
  }
  if (cl.all) {
    for (size_t i = 0; i < std::size(kKeyFlags); ++i) {
      if (std::string_view(kKeyFlags[i].pointer) == "/topics/include" && !keyed[i].empty()) {
        return "--all records every topic: give no TOPIC with it";
      }
    }
    out.push_back({"/topics/include", R"(["*"])", "--all"});
  }
  for (const auto& text : cl.set_options) {
    auto s = config::parse_set_option(text);
    if (!s) return s.error().messages.front();
    out.push_back(std::move(s).value());
  }
  if (cl.config_file.empty() && cl.output.empty()) {
    bool has_path = false;
    for (const auto& s : out) {
      has_path = has_path || s.pointer == "/storage/path" || s.pointer == "/storage";
    }
    // The default directory, unless --set gave storage (storage.path, or an object with it).
    if (!has_path) out.insert(out.begin(), {"/storage/path", R"("rec-%Y%m%d-%H%M%S")", "default"});
  }
  return {};
}

// The configuration and its recording directory; false after printing every problem.
bool configure(const CommandLine& cl, const std::vector<config::Setting>& settings,
               config::RecorderConfig& cfg) {
  auto composed = config::compose_recorder_config(cl.config_file, settings);
  if (!composed) {
    std::cerr << composed.error().to_string();
    return false;
  }
  cfg = std::move(composed).value();
  bool ok = true;
  // --output as it is; storage.path (from the file, --set or the default) with its strftime
  // conversions expanded to the time of this start; then checked.
  if (cl.output.empty()) {
    if (auto r = config::expand_storage_path(cfg, std::chrono::system_clock::now()); !r) {
      std::cerr << r.error().to_string();
      return false;
    }
  }
  if (auto r = config::validate_storage_path(cfg); !r) {
    std::cerr << r.error().to_string();
    ok = false;
  }
  if (auto r = config::validate_log_file(cfg); !r) {
    std::cerr << r.error().to_string();
    ok = false;
  }
  if (auto r = service::load_idl_types(cfg); !r) {
    // Named with the key that lists the file (relative paths are the recorder's working
    // directory's).
    std::cerr << (cl.config_file.empty() ? "command line" : cl.config_file)
              << ": /types/idl: " << r.error().message << '\n';
    ok = false;
  }
  return ok;
}

// --check-config: also what the start tries; exit status.
int check_config(const CommandLine& cl, const config::RecorderConfig& cfg) {
  const std::string source = cl.config_file.empty() ? "command line" : cl.config_file;
  const auto problems = service::check_start(cfg);
  for (const auto& p : problems) std::cerr << source << ": " << p << '\n';
  if (!problems.empty()) return kExitUsage;
  std::printf("%s: configuration OK (recording would go to %s)\n", source.c_str(),
              cfg.storage.path.c_str());
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string_view(argv[1]) == "ctl") return service::run_ctl(argc - 1, argv + 1);
  keep_freed_memory();
  CLI::App app{
      "pubsub-recorder: records DDS (RTPS) traffic into a recording directory.\n"
      "  pubsub-recorder -o rec                   every topic of domain 0 into rec\n"
      "  pubsub-recorder -o rec -d 3 'rt/*'       the rt/ topics of domain 3\n"
      "  pubsub-recorder -c recorder.json -o rec  a configuration file, its storage.path "
      "replaced"};
  app.name("pubsub-recorder");
  CommandLine cl;
  std::vector<std::vector<std::string>> keyed;
  define_flags(app, cl, keyed);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return service::cli_exit(app, e, "pubsub-recorder", kExitUsage);
  }
  std::vector<config::Setting> settings;
  if (auto error = settings_of(cl, keyed, settings); !error.empty()) {
    std::cerr << "pubsub-recorder: " << error << '\n';
    return kExitUsage;
  }
  config::RecorderConfig cfg;
  if (!configure(cl, settings, cfg)) return kExitUsage;
  if (cl.check_only) return check_config(cl, cfg);
  const double duration = cl.duration;
  const auto storage_delay_ms = cl.storage_delay_ms;

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
  options.test_registrar_delay = std::chrono::milliseconds(cl.registrar_delay_ms);
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
  common::name_thread(signals, "rec-signals");
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
