#include "service/ctl.hpp"

#include "service/cli_text.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "config/recorder_config.hpp"
#include "control_auth.hpp"
#include "control_server.hpp"
#include "ctl_set.hpp"
#include "dds_control.hpp"
#include "pubsub/participant.hpp"
#include "service/recorder.hpp"
#include "text.hpp"

namespace service {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitRefused = 1;
constexpr int kExitUsage = 2;  // also: cannot reach the recorder

struct CtlArgs {
  std::string socket, path, config;
  bool dds = false;
  uint32_t domain = 0;
  std::string interface;
  std::string key_file;
  double timeout_s = 30;
  std::vector<std::string> topics;
  std::string tag_name, note;
  std::string snapshot_tag;
  std::string recording_id;  // start --id
  bool json = false;         // status: the JSON object instead of the text
  std::string set;           // --dds --set NAME: every member of the recording set
  size_t members = 0;        // --members N: wait for N of them (0: those discovery shows)
};

// The socket from --socket, --path DIR (DIR/control.sock) or --config FILE (its control.socket).
int socket_of(const CtlArgs& a, std::filesystem::path& out) {
  const int given = !a.socket.empty() + !a.path.empty() + !a.config.empty();
  if (given != 1) {
    std::fprintf(stderr,
                 "pubsub-recorder ctl: give exactly one of --socket PATH, --path DIR (the "
                 "recording directory), --config FILE and --dds\n");
    return kExitUsage;
  }
  if (!a.socket.empty()) {
    out = a.socket;
  } else if (!a.path.empty()) {
    out = std::filesystem::path(a.path) / "control.sock";
  } else {
    auto cfg = config::load_recorder_config(a.config);
    if (!cfg) {
      std::cerr << cfg.error().to_string();
      return kExitUsage;
    }
    out = control_socket_path(*cfg);
    // A relative socket lives in the recording directory; with strftime conversions in
    // storage.path only the running recorder knows which one that is.
    if (!cfg->control.socket.empty() && cfg->control.socket.is_relative() &&
        cfg->storage.path.string().find('%') != std::string::npos) {
      std::fprintf(stderr,
                   "pubsub-recorder ctl: %s: storage.path \"%s\" has %% conversions, so the "
                   "socket's directory is known to the running recorder only: give --path DIR, or "
                   "set control.socket to an absolute path (e.g. "
                   "/run/pubsub-recorder/NAME/control.sock)\n",
                   a.config.c_str(), cfg->storage.path.c_str());
      return kExitUsage;
    }
    if (out.empty()) {
      std::fprintf(stderr,
                   "pubsub-recorder ctl: %s has no control socket (control.socket is \"\")\n",
                   a.config.c_str());
      return kExitUsage;
    }
  }
  return kExitOk;
}

nlohmann::json request_of(const std::string& cmd, const CtlArgs& a) {
  nlohmann::json req{{"cmd", cmd}};
  if ((cmd == "pause" || cmd == "resume") && !a.topics.empty()) req["topics"] = a.topics;
  if (cmd == "tag") {
    req["name"] = a.tag_name;
    if (!a.note.empty()) req["note"] = a.note;
  }
  if (cmd == "snapshot" && !a.snapshot_tag.empty()) req["tag"] = a.snapshot_tag;
  if (cmd == "start" && !a.recording_id.empty()) req["recording_id"] = a.recording_id;
  return req;
}

// A recording set's start without --id: one id for every member, "SET-20261130T031300Z-7f3a"
// (the UTC time of the request and 16 random bits, so that two starts in a second differ).
std::string new_recording_id(const std::string& set) {
  const auto now = std::chrono::system_clock::now();
  const int64_t ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count();
  std::random_device rd;
  char tail[8];
  std::snprintf(tail, sizeof tail, "-%04x", static_cast<unsigned>(rd() & 0xffff));
  return set + "-" + utc_millis(ns, "%Y%m%dT%H%M%S", "").substr(0, 15) + "Z" + tail;
}

// `ctl status` for a person: the totals, then a line per topic, then what is unusual.
std::string status_text(const nlohmann::json& s) {
  auto u = [&](const char* k) { return s.value(k, uint64_t{0}); };
  char head[512];
  std::snprintf(
      head, sizeof head,
      "%s %s, %.1f s: %llu samples, %s, %llu lost, %llu held back by back-pressure, "
      "%llu skipped while paused; %llu writers matched; queue %.0f%% full%s\n",
      s.value("mode", std::string("record")) == "snapshot" ? "snapshot mode in" : "recording",
      s.value("path", std::string("?")).c_str(), s.value("seconds", 0.0),
      static_cast<unsigned long long>(u("samples")), mb(static_cast<double>(u("bytes"))).c_str(),
      static_cast<unsigned long long>(u("lost")), static_cast<unsigned long long>(u("held_back")),
      static_cast<unsigned long long>(u("skipped")), static_cast<unsigned long long>(u("writers")),
      100.0 * s.value("queue_fill", 0.0),
      s.value("armed", false)    ? "; ARMED: nothing is recorded until start"
      : s.value("paused", false) ? "; PAUSED"
                                 : "");
  std::string out = head;
  if (const auto id = s.value("recording_id", std::string()); !id.empty())
    out += "recording id " + id + "\n";
  if (const uint64_t n = u("writers_elsewhere"); n > 0) {
    out += std::to_string(n) +
           " writers on other hosts matched and not recorded here (topics.writers local)\n";
  }
  if (s.contains("hooks")) {
    const auto& h = s["hooks"];
    out += "storage.on_segment_closed: " + std::to_string(h.value("run", uint64_t{0})) +
           " commands run, " + std::to_string(h.value("failed", uint64_t{0})) + " failed, " +
           std::to_string(h.value("pending", uint64_t{0})) + " waiting\n";
  }
  const auto topics = s.value("topics", nlohmann::json::object());
  size_t width = 5;
  for (const auto& [name, t] : topics.items()) width = std::max(width, name.size());
  if (!topics.empty()) {
    char line[256];
    std::snprintf(line, sizeof line, "  %-*s %10s %10s %6s %7s\n", static_cast<int>(width), "TOPIC",
                  "SAMPLES", "MB", "LOST", "WRITERS");
    out += line;
  }
  for (const auto& [name, t] : topics.items()) {
    char line[512];
    std::snprintf(line, sizeof line, "  %-*s %10llu %10.1f %6llu %7llu%s\n",
                  static_cast<int>(width), name.c_str(),
                  static_cast<unsigned long long>(t.value("samples", uint64_t{0})),
                  static_cast<double>(t.value("bytes", uint64_t{0})) / 1e6,
                  static_cast<unsigned long long>(t.value("lost", uint64_t{0})),
                  static_cast<unsigned long long>(t.value("writers", uint64_t{0})),
                  t.value("paused", false) ? "  paused" : "");
    out += line;
  }
  const auto incompatible = s.value("incompatible_qos", nlohmann::json::object());
  if (!incompatible.empty()) {
    out += "incompatible QoS (endpoint pairs not matched):";
    for (const auto& [policy, n] : incompatible.items()) out += " " + policy + " " + n.dump();
    out += "\n";
  }
  if (s.contains("snapshot") && s["snapshot"].is_object()) {
    const auto& n = s["snapshot"];
    char line[512];
    std::snprintf(line, sizeof line,
                  "snapshot buffer: %llu samples, %.1f s, %s of %s; %llu dropped; %llu snapshots "
                  "written%s\n",
                  static_cast<unsigned long long>(n.value("buffered_samples", uint64_t{0})),
                  n.value("buffered_seconds", 0.0),
                  mb(static_cast<double>(n.value("buffered_bytes", uint64_t{0}))).c_str(),
                  mb(static_cast<double>(n.value("max_bytes", uint64_t{0}))).c_str(),
                  static_cast<unsigned long long>(n.value("dropped_samples", uint64_t{0})),
                  static_cast<unsigned long long>(n.value("snapshots", uint64_t{0})),
                  n.value("writing", false) ? " (one being written)" : "");
    out += line;
    if (const auto last = n.value("last_path", std::string()); !last.empty()) {
      out += "last snapshot: " + last + "\n";
    }
  }
  return out;
}

// The client's own participant on the recorders' domain.
Result<std::unique_ptr<pubsub::Participant>> ctl_participant(const CtlArgs& a) {
  pubsub::ParticipantOptions po;
  po.domain_id = a.domain;
  po.interface = a.interface;
  po.user_data = "pubsub-recorder ctl";
  po.shared_memory = false;            // a few samples: not worth a segment
  po.log = [](const std::string&) {};  // the output is the reply, as with the socket
  return pubsub::Participant::create(po);
}

// --dds: the request through a participant of our own on the recorder's domain, signed with
// `key` when there is one.
Result<nlohmann::json> dds_request(const CtlArgs& a, const nlohmann::json& request,
                                   std::chrono::milliseconds timeout, const ControlKey* key) {
  auto participant = ctl_participant(a);
  if (!participant) return participant.error();
  return dds_control_request(**participant, request, timeout, key);
}

// --dds --set NAME: the request to every member of the recording set; prints their answers.
int run_set(const CtlArgs& a, const std::string& cmd, const nlohmann::json& request,
            std::chrono::milliseconds timeout, const ControlKey* key) {
  auto participant = ctl_participant(a);
  if (!participant) {
    std::fprintf(stderr, "pubsub-recorder ctl: %s\n", participant.error().message.c_str());
    return kExitUsage;
  }
  auto members = dds_set_request(**participant, request, a.set, a.members, timeout, key);
  if (!members) {
    std::fprintf(stderr, "pubsub-recorder ctl: %s\n", members.error().message.c_str());
    return kExitUsage;
  }
  const SetOutput o = set_output(a.set, cmd, *members, a.json);
  std::fputs(o.out.c_str(), stdout);
  std::fputs(o.err.c_str(), stderr);
  return o.exit;
}

}  // namespace

int run_ctl(int argc, char** argv) {
  CLI::App app{
      "pubsub-recorder ctl: controls a running pubsub-recorder through its control socket, or "
      "with --dds through DDS requests on its domain (control.dds; the recorder answers "
      "participants whose address is in its control.allow and, with control.key_file, requests "
      "signed with --key-file)"};
  app.name("pubsub-recorder ctl");
  CtlArgs a;
  app.add_option("--socket", a.socket, "the recorder's control socket (control.socket)");
  app.add_option("--path", a.path, "the recording directory (its control.sock)");
  app.add_option("--config", a.config, "the recorder's configuration file");
  app.add_flag("--dds", a.dds,
               "send the command as a DDS request instead (topic "
               "pubsub_recorder/control/request)");
  app.add_option("--domain", a.domain, "with --dds: the recorder's DDS domain (default 0)")
      ->check(CLI::Range(0, 232));
  app.add_option("--interface", a.interface,
                 "with --dds: network interface name or IPv4 address (default: the first up, "
                 "multicast-capable one); the recorder checks this address against "
                 "control.allow");
  app.add_option("--key-file", a.key_file,
                 "with --dds: sign the request with the key in this file (mode 600), as a "
                 "recorder with control.key_file requires, and accept only a reply signed with it");
  app.add_option("--set", a.set,
                 "with --dds: every recorder of this recording set (control.set) at once: a "
                 "line or status row per member; exit 3 when a member does not answer");
  app.add_option("--members", a.members,
                 "with --set: wait until N members are discovered (default: those discovery "
                 "shows once it has been quiet for 2 s)")
      ->check(CLI::Range(1, 100000));
  app.add_option("--timeout", a.timeout_s,
                 "seconds to wait for the reply (default 30); with --dds for a recorder to "
                 "match too")
      ->check(CLI::PositiveNumber);
  app.require_subcommand(1, 1);
  app.add_subcommand("status", "print the statistics (--json: as one JSON object)")
      ->add_flag("--json", a.json, "the statistics as one JSON object, for programs");
  for (const char* c : {"pause", "resume"}) {
    auto* s = app.add_subcommand(c, std::string(c) + " recording (every topic, or --topic ...)");
    s->add_option("--topic", a.topics, "a topic name (repeatable)");
  }
  auto* start = app.add_subcommand(
      "start", "start an armed recorder (control.armed); with --set every member at once");
  start->add_option("--id", a.recording_id,
                    "the recording id stored in the recording (A-Z a-z 0-9 . _ : -, at most "
                    "128); with --set the default is SET-UTCTIME-RANDOM, the same for every "
                    "member");
  app.add_subcommand("split", "end the current segment, go on in the next");
  auto* tag = app.add_subcommand("tag", "put a named mark with the current time in the recording");
  tag->add_option("NAME", a.tag_name, "the tag's name")->required();
  tag->add_option("--note", a.note, "a note stored with the tag");
  auto* snapshot = app.add_subcommand(
      "snapshot", "snapshot mode: write the buffered seconds and the next ones to a new recording");
  snapshot->add_option("TAG", a.snapshot_tag,
                       "part of the snapshot's directory name and its tag (A-Z a-z 0-9 . _ -)");
  app.add_subcommand("stop", "close the recording and end the recorder");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return cli_exit(app, e, "pubsub-recorder ctl", kExitUsage);
  }
  std::filesystem::path socket;
  if (a.dds) {
    if (!a.socket.empty() || !a.path.empty() || !a.config.empty()) {
      std::fprintf(stderr,
                   "pubsub-recorder ctl: --dds sends the command over DDS: give no --socket, "
                   "--path or --config with it\n");
      return kExitUsage;
    }
  } else {
    if (app.count("--domain") || app.count("--interface") || app.count("--key-file") ||
        app.count("--set") || app.count("--members")) {
      std::fprintf(stderr,
                   "pubsub-recorder ctl: --domain, --interface, --key-file, --set and --members "
                   "go with --dds\n");
      return kExitUsage;
    }
    if (int rc = socket_of(a, socket); rc != kExitOk) return rc;
  }
  std::optional<ControlKey> key;
  if (!a.key_file.empty()) {
    auto k = load_control_key(a.key_file);
    if (!k) {
      std::fprintf(stderr, "pubsub-recorder ctl: %s\n", k.error().message.c_str());
      return kExitUsage;
    }
    key = std::move(k).value();
  }
  const std::string cmd = app.get_subcommands().front()->get_name();
  const auto timeout = std::chrono::milliseconds(static_cast<int64_t>(a.timeout_s * 1000));
  if (!a.set.empty()) {
    if (cmd == "start" && a.recording_id.empty()) a.recording_id = new_recording_id(a.set);
    return run_set(a, cmd, request_of(cmd, a), timeout, key ? &*key : nullptr);
  }
  if (app.count("--members")) {
    std::fprintf(stderr, "pubsub-recorder ctl: --members goes with --set\n");
    return kExitUsage;
  }
  auto reply = a.dds ? dds_request(a, request_of(cmd, a), timeout, key ? &*key : nullptr)
                     : control_request(socket, request_of(cmd, a), timeout);
  if (!reply) {
    const std::string& m = reply.error().message;
    // Nothing listens on the socket (none there, or a killed recorder's): say that.
    if (!a.dds && (reply.error().code == Errc::kNotFound ||
                   m.find("Connection refused") != std::string::npos)) {
      const std::string where = a.path.empty() ? socket.string() : a.path;
      std::fprintf(stderr, "pubsub-recorder ctl: no recorder is running on %s (%s)\n",
                   where.c_str(), m.substr(std::string("cannot connect to ").size()).c_str());
      return kExitUsage;
    }
    std::fprintf(stderr, "pubsub-recorder ctl: %s\n", m.c_str());
    return kExitUsage;
  }
  const nlohmann::json& r = *reply;
  if (!r.value("ok", false)) {
    std::fprintf(stderr, "pubsub-recorder ctl: %s: %s\n", cmd.c_str(),
                 r.value("error", std::string("refused")).c_str());
    return kExitRefused;
  }
  if (cmd == "status") {
    const auto status = r.value("status", nlohmann::json::object());
    if (a.json) {
      std::printf("%s\n", status.dump().c_str());
    } else {
      std::fputs(status_text(status).c_str(), stdout);
    }
  } else {
    std::printf("%s\n", r.value("message", std::string("done")).c_str());
  }
  return kExitOk;
}

}  // namespace service
