// pubsub-replay: the command line over service/replay.hpp. Parses arguments with CLI11, turns
// every parse problem into one "pubsub-replay: ..." line and exit code 2, and installs the
// SIGINT/SIGTERM handler that stops a replay cleanly.
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <new>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "service/cli_text.hpp"
#include "service/replay.hpp"
#include "storage/format.hpp"

namespace {

namespace replay = service::replay;

std::atomic<bool> g_stop{false};
std::atomic<int> g_signal{0};  // the first SIGINT/SIGTERM (export: stop, exit 128 + it)
std::atomic<std::int64_t> g_first_signal_ns{0};

std::int64_t monotonic_ns() {  // async-signal-safe
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// The first SIGINT/SIGTERM stops the replay or the export cleanly; a second one at least a
// second later (a user's impatient second ^C) leaves at once with 130, after removing an
// export's temporary file. A repeat within that second is the same interrupt delivered twice -
// GNU timeout, for one, signals the child and then its process group.
extern "C" void on_signal(int sig) {
  const std::int64_t now = monotonic_ns();
  if (!g_stop.exchange(true)) {
    g_first_signal_ns.store(now);
    g_signal.store(sig);
    return;
  }
  if (now - g_first_signal_ns.load() >= 1'000'000'000) {
    replay::abandon_export_from_signal_handler();
    _exit(130);
  }
}

void install_signal_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: interrupt the pacing thread's sleep
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

int usage_error(const std::string& message, const std::string& sub) {
  std::cerr << "pubsub-replay: " << message << " (see 'pubsub-replay "
            << (sub.empty() ? "" : sub + " ") << "--help')\n";
  return replay::kExitUsage;
}

std::optional<replay::TimeArg> time_option(const std::string& text, const char* name,
                                           std::string& error) {
  auto t = replay::parse_time_arg(text);
  if (!t) {
    error = std::string(name) + ": " + t.error().message;
    return std::nullopt;
  }
  return t.value();
}

struct Args {
  std::string dir;
  std::vector<std::string> dirs;  // merge
  bool json = false;
  double rate = 1.0;
  bool fast = false;
  std::vector<std::string> topics;
  std::string start, end;
  std::string loop;
  uint32_t domain = 0;
  std::string nic;
  std::vector<std::string> peers;
  size_t wait_readers = 0;
  double wait_timeout = 30;
  double ack_timeout = 10;
  bool quiet = false;
  bool no_clock_correction = false;                   // merge
  std::map<std::string, std::string> writer_members;  // export of several recordings
  int realtime = 0;
  size_t max_message_size = 0;
  std::string format = "jsonl";
  std::string profile;
  std::string output;
  bool decode = false;
  std::vector<std::string> idl;
  std::string topic;
  std::string qos_file;
  std::vector<std::string> remap;
  bool no_latched = false;
};

// The play options whose presence matters beyond their value.
struct PlayFlags {
  CLI::Option* rate = nullptr;
  CLI::Option* loop = nullptr;
  CLI::Option* wait = nullptr;
};

void define_play(CLI::App& app, Args& a, PlayFlags& f) {
  auto* play = app.add_subcommand("play", "Publish the recording with its original timing");
  play->add_option("DIR", a.dirs,
                   "Recording directory; several: merged into a temporary recording first")
      ->required();
  f.rate = play->add_option("--rate", a.rate, "Speed factor (2 = twice as fast); default 1");
  auto* fast = play->add_flag("--fast", a.fast, "No pacing: publish as fast as readers allow");
  f.rate->excludes(fast);
  play->add_option("--topics", a.topics, "Only topics matching these globs (*, ?, [a-z])");
  play->add_option(
      "--start", a.start,
      "Start at T: seconds from the start of the recording (12.5), ISO-8601 time or tag:NAME");
  play->add_option("--end", a.end, "Stop before T (same forms as --start)");
  f.loop =
      play->add_option("--loop", a.loop, "Play N times (no N: until interrupted)")->expected(0, 1);
  play->add_option("--domain", a.domain, "DDS domain id (default 0)")->check(CLI::Range(0, 232));
  play->add_option("--nic", a.nic, "Network interface name or IPv4 address (default: automatic)");
  play->add_option("--peer", a.peers, "Unicast discovery peer (IPv4 address); repeatable")
      ->allow_extra_args(false);
  f.wait = play->add_option("--wait-readers", a.wait_readers,
                            "Before publishing, wait for N acknowledged readers per writer");
  play->add_option("--wait-timeout", a.wait_timeout,
                   "Seconds to wait for --wait-readers (default 30); then exit 1")
      ->needs(f.wait);
  play->add_option("--ack-timeout", a.ack_timeout,
                   "Seconds readers get at the end to acknowledge everything (default 10)");
  play->add_flag("-q,--quiet", a.quiet, "No progress line");
  play->add_option("--realtime", a.realtime,
                   "Pace from a SCHED_FIFO thread of this priority (1..99; needs CAP_SYS_NICE)")
      ->check(CLI::Range(1, 99));
  play->add_option(
      "--qos", a.qos_file,
      "JSON file of QoS overrides: {\"TOPIC_GLOB\": {\"durability\": \"volatile\", ...}}");
  play->add_option("--remap", a.remap, "Publish topic OLD as NEW (OLD=NEW); repeatable")
      ->allow_extra_args(false);
  play->add_flag("--no-latched", a.no_latched,
                 "With --start: do not publish durable writers' last samples before it first");
  play->add_option("--max-message-size", a.max_message_size,
                   "Largest datagram, for every reader (1024..65000; default: MTU - 28, batches "
                   "14792 at MTU 1500, 64 KiB to Fast DDS readers)")
      ->check(CLI::Range(1024, 65000));
  play->footer(
      "One writer per recorded writer, with the recorded topic and type names, keyedness and "
      "every QoS policy the original writer offered, and new sequence numbers from 1; payloads, "
      "key hashes and source timestamps as recorded (a writer with a finite lifespan stamps the "
      "replayed time). With --start, durable writers first publish their last samples per "
      "instance before it. Without --wait-readers publishing starts at once, and volatile "
      "readers discovered later miss what went out before them; topics no reader matched while "
      "they were played are named. ^C stops cleanly (exit 0).\n"
      "Exit status: 0 ok, 1 run failed (no readers: --wait-readers timed out, or no reader "
      "matched any topic while it was played; a write failed; damaged chunks skipped), 2 bad "
      "arguments or unusable recording.");
}

constexpr const char* kExitFooter =
    "Exit status: 0 ok, 1 problems found, 2 bad arguments or unusable recording.";

void define_info(CLI::App& app, Args& a) {
  auto* info =
      app.add_subcommand("info", "Topics, types, sample counts, times, rates, writers, loss");
  info->add_option("DIR", a.dirs, "Recording directory (several: side by side, with the total)")
      ->required();
  info->add_flag("--json", a.json, "One JSON object instead of a table");
  info->footer(kExitFooter);
  auto* types = app.add_subcommand("types", "The IDL of the recorded topic types");
  types->add_option("DIR", a.dirs, "Recording directory (several: each in turn)")->required();
  types->add_option("--topic", a.topic, "Only this topic's type");
  types->footer(
      "Exit status: 0 printed, 1 no type recorded (for the topic), 2 bad arguments, unusable "
      "recording or no such topic.");
}

// export, verify, reindex, recover.
void define_other_commands(CLI::App& app, Args& a) {
  auto* exp = app.add_subcommand(
      "export", "Write records as JSON lines or CSV (payload in base64, or decoded with --decode)");
  exp->add_option("DIR", a.dirs,
                  "Recording directory; several: merged into a temporary recording first")
      ->required();
  exp->add_option("--format", a.format, "jsonl (default), csv or mcap (needs -o)");
  exp->add_option("--profile", a.profile,
                  "MCAP profile: ros2 (what rosbag2 writes: ROS names, ros2msg schemas; other "
                  "topics left out)");
  exp->add_option("--topics", a.topics, "Only topics matching these globs");
  exp->add_option("--start", a.start, "From T (seconds from the start, ISO-8601 or tag:NAME)");
  exp->add_option("--end", a.end, "Up to T, exclusive");
  exp->add_option("-o,--output", a.output,
                  "Output file, replaced only when the export succeeds (default: standard "
                  "output, which cannot be)");
  exp->add_flag("-q,--quiet", a.quiet, "No progress line and no statistics line at the end");
  exp->add_flag("--decode", a.decode,
                "Decode each sample into \"value\" (CSV: one column per field) using --idl");
  exp->add_option(
      "--idl", a.idl,
      "IDL file with the topics' types (repeatable): for --decode, and the MCAP schemas");

  auto* ver = app.add_subcommand("verify", "Check checksums, the index against the segments, gaps");
  ver->add_option("DIR", a.dirs, "Recording directory (several: each in turn)")->required();
  auto* rei = app.add_subcommand("reindex", "Rebuild index.sqlite3 from the segment files");
  rei->add_option("DIR", a.dirs, "Recording directory (several: each in turn)")->required();
  auto* rec =
      app.add_subcommand("recover",
                         "Finish a recording that was not closed cleanly: cut torn tails (kept in "
                         "DIR/recovered/), bring the index in line");
  rec->add_option("DIR", a.dirs, "Recording directory (several: each in turn)")->required();
  auto* imp = app.add_subcommand(
      "import", "Write an MCAP file (rosbag2, DDS Record & Replay, our export) as a recording");
  imp->add_option("FILE", a.dirs, "The MCAP file")->required()->expected(1);
  imp->add_option("-o,--output", a.output, "The new recording (must not exist, or be empty)")
      ->required();
  imp->add_flag("-q,--quiet", a.quiet, "No progress lines");
  auto* mrg = app.add_subcommand(
      "merge", "Write several recordings (a recording set's members) as one new recording");
  mrg->add_option("DIR", a.dirs, "Recording directories, two or more")->required();
  mrg->add_option("-o,--output", a.output, "The new recording (must not exist, or be empty)")
      ->required();
  mrg->add_flag("-q,--quiet", a.quiet, "No progress lines");
  mrg->add_flag("--no-clock-correction", a.no_clock_correction,
                "Keep every input's reception times as recorded (default: onto the first "
                "input's clock by the offsets its members measured)");
  mrg->footer(
      "Records in reception-time order; a sample several inputs hold (same writer GUID and "
      "sequence number) is written once; tags and other marks at their times. Members of a "
      "recording set measured their clock offsets to each other: each input's times are moved "
      "onto the first input's clock.\n"
      "Exit status: 0 ok; 1 reading or writing failed (the output removed); 2 bad arguments, an "
      "input that is not a recording, or an output that exists (nothing created); 4 an input "
      "is being written by a recorder (nothing created).");

  exp->footer(
      "-o FILE is written as .FILE.partial-PID in the same directory and renamed onto FILE at "
      "the end; a failed or interrupted export removes it (FILE, if it existed, is left as it "
      "was). Standard output (and a device or FIFO) is written directly: an export there that "
      "fails or is interrupted leaves what it wrote. Progress on stderr every second after the "
      "first (rewritten in place on a terminal), and a statistics line at the end (-q: neither).\n"
      "CSV with --decode: the type's members are the columns value.MEMBER (value.pose.x), after "
      "topic,writer,seq,source_time,reception_time; decode_error last.\n"
      "Exit status: 0 ok; 1 problems: no output written (a write error, reading failed) or "
      "written but incomplete or suspect (samples that did not decode, unread trailing bytes "
      "after a sample, an --idl type that differs from the recorded one, damaged chunks "
      "skipped; each said on stderr); 2 bad arguments or unusable recording (nothing written); "
      "130 interrupted by SIGINT, 143 by SIGTERM (no output written).");
  rei->footer(
      "Exit status: 0 ok, 1 damaged chunks left out of the index, 2 bad arguments or no segment "
      "files, 4 the recording is being written (nothing changed).");
  ver->footer(
      "Exit status: 0 clean (or recovered) and no damage, 1 damage found, 2 bad arguments or "
      "unusable recording, 3 not closed cleanly with nothing worse than a torn tail (run "
      "'pubsub-replay recover DIR'), 4 being written by a recorder and no damage so far.");
  rec->footer(
      "Idempotent: a clean or recovered recording is left as it is.\n"
      "Exit status: 0 the recording is usable (recovered, or nothing to do), 1 it could not be "
      "repaired, 2 bad arguments or not a recording, 4 the recording is being written (nothing "
      "changed).");
}

// One "pubsub-replay: ..." line for a command line CLI11 refused (exit 2), or --help (exit 0).
int parse_error(CLI::App& app, const CLI::ParseError& e, int argc, char** argv) {
  if (e.get_exit_code() == 0) return app.exit(e);  // --help
  std::string sub;
  for (auto* s : app.get_subcommands()) sub = s->get_name();
  if (sub.empty() && argc > 1 && argv[1][0] != '-') {
    return usage_error(
        std::string("unknown command '") + argv[1] +
            "' (commands: info, types, play, export, verify, recover, reindex, merge, import)",
        sub);
  }
  if (sub.empty() && argc == 1) {
    return usage_error(
        "a command is needed: info, types, play, export, verify, recover, reindex, merge or import",
        sub);
  }
  if (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr &&
      std::string(e.what()).find("DIR") != std::string::npos) {
    return usage_error("the recording directory DIR is missing (write it right after '" + sub +
                           "', before options that take several values)",
                       sub);
  }
  return usage_error(service::cli_error_text(e), sub);
}

// A directory that is not a recording but holds recordings (a recording set's members copied
// into one place) stands for them, in name order; anything else is kept as given.
std::vector<std::string> expand_sets(const std::vector<std::string>& dirs) {
  namespace fs = std::filesystem;
  auto is_recording = [](const fs::path& d) {
    std::error_code ec;
    return fs::exists(d / "index.sqlite3", ec) || fs::is_directory(d / "segments", ec);
  };
  std::vector<std::string> out;
  for (const auto& d : dirs) {
    std::error_code ec;
    std::vector<std::string> members;
    if (!is_recording(d) && fs::is_directory(d, ec)) {
      for (const auto& e : fs::directory_iterator(d, ec)) {
        if (e.is_directory(ec) && is_recording(e.path())) members.push_back(e.path().string());
      }
    }
    std::sort(members.begin(), members.end());
    if (members.empty()) {
      out.push_back(d);
    } else {
      out.insert(out.end(), members.begin(), members.end());
    }
  }
  return out;
}

int run_export(const Args& a, const replay::Selection& sel);
int run_play(const Args& a, const PlayFlags& f, const replay::Selection& sel);
int run_selected(const Args& a, const PlayFlags& f, const std::string& name);

// A new directory $TMPDIR/pubsub-replay-WHAT-XXXXXX (mkdtemp); "" with errno set when it fails.
std::string temporary_dir(const std::string& what) {
  std::string tmpl =
      (std::filesystem::temp_directory_path() / ("pubsub-replay-" + what + "-XXXXXX")).string();
  return ::mkdtemp(tmpl.data()) == nullptr ? std::string() : tmpl;
}

// A command over several recordings: info side by side; verify, types, reindex and recover on
// each in turn ("== DIR" before each, the highest exit status); export and play of a merged
// temporary recording (removed after).
int run_several(Args a, const PlayFlags& f, const std::string& name) {
  if (name == "info") return replay::info_set({a.dirs, a.json}, std::cout, std::cerr);
  if (name != "export" && name != "play") {
    int worst = replay::kExitOk;
    for (const auto& dir : a.dirs) {
      std::cout << "== " << dir << '\n';
      std::cout.flush();
      const int rc = name == "verify"    ? replay::verify(dir, std::cout, std::cerr)
                     : name == "types"   ? replay::types({dir, a.topic}, std::cout, std::cerr)
                     : name == "reindex" ? replay::reindex(dir, std::cout, std::cerr)
                                         : replay::recover(dir, std::cout, std::cerr);
      std::cout.flush();
      worst = std::max(worst, rc);
    }
    return worst;
  }
  const std::string tmp = temporary_dir("merged");
  if (tmp.empty())
    return usage_error(
        "cannot make a temporary directory for the merge: " + std::string(std::strerror(errno)),
        name);
  std::cerr << "pubsub-replay: " << name << ": merging " << a.dirs.size() << " recordings into "
            << tmp << " first (removed afterwards)\n";
  std::ostringstream merged;
  int rc = replay::merge({a.dirs, tmp + "/rec", true, true}, merged, std::cerr);
  if (rc == replay::kExitOk && name == "export") {
    auto members = replay::writer_members(a.dirs);
    if (members) {
      a.writer_members = std::move(*members);
    } else {
      rc = usage_error(members.error().message, name);
    }
  }
  if (rc == replay::kExitOk) {
    std::cerr << merged.str();
    a.dir = tmp + "/rec";
    rc = run_selected(a, f, name);
  }
  std::error_code ec;
  std::filesystem::remove_all(tmp, ec);
  return rc;
}

// A regular file that starts with MCAP's magic.
bool is_mcap_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return false;
  std::ifstream in(path, std::ios::binary);
  char magic[8] = {};
  in.read(magic, sizeof magic);
  return in.gcount() == 8 && std::memcmp(magic, "\x89MCAP0\r\n", 8) == 0;
}

// info, types, export or play of an MCAP file: imported into a temporary recording (removed
// after), then the command on it.
int run_mcap(Args a, const PlayFlags& f, const std::string& name) {
  if (name != "info" && name != "types" && name != "export" && name != "play")
    return usage_error(a.dirs.front() + " is an MCAP file: " + name +
                           " takes recordings ('pubsub-replay import' makes one of it)",
                       name);
  const std::string tmp = temporary_dir("mcap");
  if (tmp.empty())
    return usage_error(
        "cannot make a temporary directory for the import: " + std::string(std::strerror(errno)),
        name);
  std::ostringstream imported;
  int rc = replay::import_mcap({a.dirs.front(), tmp + "/rec", true}, imported, std::cerr);
  if (rc != replay::kExitUsage) {
    if (name != "info" && name != "types") std::cerr << "pubsub-replay: " << imported.str();
    a.dir = tmp + "/rec";
    const int ran = name == "info"    ? replay::info({a.dir, a.json}, std::cout, std::cerr)
                    : name == "types" ? replay::types({a.dir, a.topic}, std::cout, std::cerr)
                                      : run_selected(a, f, name);
    rc = std::max(rc, ran);
  }
  std::error_code ec;
  std::filesystem::remove_all(tmp, ec);
  return rc;
}

int run_export(const Args& a, const replay::Selection& sel) {
  replay::ExportOptions o;
  o.dir = a.dir;
  if (a.format == "jsonl" || a.format == "json") {
    o.format = replay::ExportFormat::kJsonl;
  } else if (a.format == "csv") {
    o.format = replay::ExportFormat::kCsv;
  } else if (a.format == "mcap") {
    o.format = replay::ExportFormat::kMcap;
  } else {
    return usage_error("--format must be jsonl, csv or mcap, not '" + a.format + "'", "export");
  }
  if (!a.profile.empty() && a.profile != "ros2")
    return usage_error("--profile must be ros2, not '" + a.profile + "'", "export");
  if (!a.profile.empty() && o.format != replay::ExportFormat::kMcap)
    return usage_error("--profile applies to --format mcap only", "export");
  o.mcap_profile = a.profile;
  o.selection = sel;
  o.output = a.output;
  o.decode = a.decode;
  o.idl_files = a.idl;
  o.progress = !a.quiet;
  o.progress_tty = ::isatty(STDERR_FILENO) != 0;
  o.stop = &g_signal;
  o.writer_members = a.writer_members;
  install_signal_handlers();
  return replay::export_records(o, std::cout, std::cerr);
}

int run_play(const Args& a, const PlayFlags& f, const replay::Selection& sel) {
  const std::string name = "play";
  replay::PlayOptions o;
  o.dir = a.dir;
  if (!(a.rate > 0) || !std::isfinite(a.rate)) {
    return usage_error("--rate must be a positive number, not " + f.rate->as<std::string>(), name);
  }
  o.rate = a.rate;
  o.fast = a.fast;
  o.selection = sel;
  if (f.loop->count() > 0) {
    if (a.loop.empty()) {
      o.loops = 0;
    } else {
      uint64_t n = 0;
      const auto [p, ec] = std::from_chars(a.loop.data(), a.loop.data() + a.loop.size(), n);
      if (ec != std::errc() || p != a.loop.data() + a.loop.size() || n == 0) {
        return usage_error("--loop takes a positive count, not '" + a.loop + "'", name);
      }
      o.loops = n;
    }
  }
  o.participant.domain_id = a.domain;
  o.participant.interface = a.nic;
  o.participant.peers = a.peers;
  o.participant.max_message_size = a.max_message_size;
  if (f.wait->count() > 0 && a.wait_readers == 0) {
    return usage_error("--wait-readers takes a count of at least 1", name);
  }
  o.wait_readers = a.wait_readers;
  if (!(a.wait_timeout > 0) || a.wait_timeout > 1e6) {
    return usage_error("--wait-timeout must be a positive number of seconds", name);
  }
  if (!(a.ack_timeout >= 0) || a.ack_timeout > 1e6) {
    return usage_error("--ack-timeout must be a number of seconds", name);
  }
  o.wait_timeout = std::chrono::nanoseconds(static_cast<int64_t>(a.wait_timeout * 1e9));
  o.ack_timeout = std::chrono::nanoseconds(static_cast<int64_t>(a.ack_timeout * 1e9));
  o.progress = !a.quiet;
  o.qos_file = a.qos_file;
  o.remap = a.remap;
  o.latched = !a.no_latched;
  o.realtime_priority = a.realtime;
  o.progress_tty = ::isatty(STDERR_FILENO) != 0;
  o.stop = &g_stop;
  install_signal_handlers();
  return replay::play(o, std::cerr);
}

int run(int argc, char** argv) {
  CLI::App app{"pubsub-replay: inspect, verify, export and replay pub/sub recordings"};
  app.name("pubsub-replay");
  app.require_subcommand(1);
  app.fallthrough(false);
  app.set_version_flag("--version", std::string("pubsub-replay ") + PUBSUB_VERSION +
                                        " (recording format " +
                                        std::to_string(storage::format::kFormatVersion) + ")");
  Args a;
  PlayFlags play;
  define_info(app, a);  // in the order --help lists them
  define_play(app, a, play);
  define_other_commands(app, a);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return parse_error(app, e, argc, argv);
  }
  const std::string name = app.get_subcommands().front()->get_name();
  a.dirs = expand_sets(a.dirs);
  if (name == "merge")
    return replay::merge({a.dirs, a.output, a.quiet, !a.no_clock_correction}, std::cout, std::cerr);
  if (name == "import")
    return replay::import_mcap({a.dirs.front(), a.output, a.quiet}, std::cout, std::cerr);
  if (a.dirs.size() == 1 && is_mcap_file(a.dirs.front())) return run_mcap(a, play, name);
  if (a.dirs.size() == 1) a.dir = a.dirs.front();
  if (a.dirs.size() > 1) return run_several(a, play, name);
  if (a.dir.empty()) {
    return usage_error("the recording directory DIR is missing (write it right after '" + name +
                           "', before options that take several values)",
                       name);
  }
  if (name == "info") return replay::info({a.dir, a.json}, std::cout, std::cerr);
  if (name == "types") return replay::types({a.dir, a.topic}, std::cout, std::cerr);
  if (name == "verify") return replay::verify(a.dir, std::cout, std::cerr);
  if (name == "reindex") return replay::reindex(a.dir, std::cout, std::cerr);
  if (name == "recover") return replay::recover(a.dir, std::cout, std::cerr);

  return run_selected(a, play, name);
}

// export or play of a.dir with the selection the options give.
int run_selected(const Args& a, const PlayFlags& play, const std::string& name) {
  replay::Selection sel;
  sel.topics = a.topics;
  std::string error;
  if (!a.start.empty() && !(sel.start = time_option(a.start, "--start", error))) {
    return usage_error(error, name);
  }
  if (!a.end.empty() && !(sel.end = time_option(a.end, "--end", error))) {
    return usage_error(error, name);
  }
  return name == "export" ? run_export(a, sel) : run_play(a, play, sel);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::bad_alloc&) {
    std::cerr << "pubsub-replay: out of memory\n";
  } catch (const std::exception& e) {
    std::cerr << "pubsub-replay: internal error: " << e.what() << '\n';
  } catch (...) {
    std::cerr << "pubsub-replay: internal error\n";
  }
  return replay::kExitProblems;
}
