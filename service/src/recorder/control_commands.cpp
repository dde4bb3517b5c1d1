#include "control_commands.hpp"

#include <cstdio>
#include <ctime>
#include <optional>
#include <string>
#include <vector>

#include "text.hpp"

namespace service {

nlohmann::json refusal(const std::string& why) {
  return {{"ok", false}, {"error", why}};
}

namespace {

using nlohmann::json;

json success(const std::string& message) {
  return {{"ok", true}, {"message", message}};
}

// "2026-11-26T16:05:01.123Z"
std::string utc_time(int64_t ns) {
  return utc_millis(ns, "%Y-%m-%dT%H:%M:%S", "Z");
}

// The request's "topics": absent = all; else an array of names. Nullopt with `why` when bad.
std::optional<std::vector<std::string>> topic_list(const json& req, std::string& why) {
  std::vector<std::string> out;
  if (!req.contains("topics")) return out;
  const json& t = req["topics"];
  if (!t.is_array()) {
    why = "\"topics\" must be an array of topic names";
    return std::nullopt;
  }
  for (const json& n : t) {
    if (!n.is_string() || n.get<std::string>().empty()) {
      why = "\"topics\" must be an array of topic names";
      return std::nullopt;
    }
    out.push_back(n.get<std::string>());
  }
  return out;
}

json pause_or_resume(Recorder& r, const json& req, bool pause) {
  std::string why;
  auto topics = topic_list(req, why);
  if (!topics) return refusal(why);
  auto done = pause ? r.pause(*topics) : r.resume(*topics);
  if (!done) return refusal(done.error().message);
  std::string what = topics->empty() ? "every topic" : "";
  for (const auto& t : *topics) what += (what.empty() ? "" : ", ") + t;
  return success(std::string(pause ? "paused " : "resumed ") + what);
}

json tag(Recorder& r, const json& req) {
  if (!req.contains("name") || !req["name"].is_string())
    return refusal("tag needs a \"name\" (a string)");
  std::string note;
  if (req.contains("note")) {
    if (!req["note"].is_string()) return refusal("a tag's \"note\" is a string");
    note = req["note"].get<std::string>();
  }
  const std::string name = req["name"].get<std::string>();
  auto t = r.tag(name, note);
  if (!t) return refusal(t.error().message);
  json reply = success("tag \"" + name + "\" at " + utc_time(*t));
  reply["time_ns"] = *t;
  return reply;
}

json start(Recorder& r, const json& req) {
  std::string id;
  if (req.contains("recording_id")) {
    if (!req["recording_id"].is_string()) return refusal("a \"recording_id\" is a string");
    id = req["recording_id"].get<std::string>();
  }
  auto t = r.start(id);
  if (!t) return refusal(t.error().message);
  json reply = success("started" + (id.empty() ? std::string() : " recording " + id) + " at " +
                       utc_time(*t));
  reply["time_ns"] = *t;
  return reply;
}

json snapshot(Recorder& r, const json& req) {
  std::string tag;
  if (req.contains("tag")) {
    if (!req["tag"].is_string()) return refusal("a snapshot's \"tag\" is a string");
    tag = req["tag"].get<std::string>();
  }
  auto t = r.snapshot(tag);
  if (!t) return refusal(t.error().message);
  json reply =
      success(std::string(t->extended ? "snapshot extended: " : "snapshot: ") + t->path.string() +
              " from " + utc_time(t->from_ns) + " until " + utc_time(t->until_ns));
  reply["path"] = t->path.string();
  reply["extended"] = t->extended;
  reply["trigger_ns"] = t->trigger_ns;
  reply["from_ns"] = t->from_ns;
  reply["until_ns"] = t->until_ns;
  return reply;
}

}  // namespace

json status_json(const RecorderStatus& s) {
  json topics = json::object();
  for (const auto& t : s.topics) {
    topics[t.name] = {{"samples", t.samples}, {"bytes", t.bytes},     {"lost", t.lost},
                      {"skipped", t.skipped}, {"writers", t.writers}, {"paused", t.paused}};
  }
  json out = {{"samples", s.samples},
              {"bytes", s.bytes},
              {"lost", s.lost},
              {"held_back", s.held_back},
              {"skipped", s.skipped},
              {"samples_shm", s.samples_shm},
              {"writers", s.writers},
              {"queue_fill", s.queue_fill},
              {"paused", s.paused},
              {"seconds", s.seconds},
              {"armed", s.armed},
              {"recording_id", s.recording_id},
              {"path", s.path},
              {"free_bytes", s.free_bytes},
              {"topics", topics},
              {"mode", s.mode},
              {"incompatible_qos", s.incompatible_qos}};
  if (!s.control_refused.empty()) out["control_refused"] = s.control_refused;
  if (!s.discovery_refused.empty()) out["discovery_refused"] = s.discovery_refused;
  out["wall_clock_offset_s"] = s.wall_clock_offset_s;
  out["clock_steps"] = s.clock_steps;
  out["writers_elsewhere"] = s.writers_elsewhere;
  if (s.hooks) {
    out["hooks"] = {
        {"run", s.hooks->run}, {"failed", s.hooks->failed}, {"pending", s.hooks->pending}};
  }
  if (s.snapshot) {
    const SnapshotStatus& n = *s.snapshot;
    out["snapshot"] = {{"buffered_samples", n.buffered_samples},
                       {"buffered_bytes", n.buffered_bytes},
                       {"max_bytes", n.max_bytes},
                       {"buffered_seconds", n.buffered_seconds},
                       {"dropped_samples", n.dropped_samples},
                       {"snapshots", n.snapshots},
                       {"writing", n.writing},
                       {"last_path", n.last_path}};
  }
  return out;
}

json handle_control(Recorder& r, const json& req) {
  if (!req.contains("cmd") || !req["cmd"].is_string())
    return refusal(
        "a request needs \"cmd\": status, start, pause, resume, split, tag, snapshot or stop");
  const std::string cmd = req["cmd"].get<std::string>();
  if (cmd == "status") return {{"ok", true}, {"status", status_json(r.status())}};
  if (cmd == "start") return start(r, req);
  if (cmd == "clock") return success("clock");  // DDS control adds the times (asks_for_times)
  if (cmd == "pause") return pause_or_resume(r, req, true);
  if (cmd == "resume") return pause_or_resume(r, req, false);
  if (cmd == "split") {
    auto seg = r.split();
    if (!seg) return refusal(seg.error().message);
    json reply = success("recording goes on in segment " + std::to_string(*seg));
    reply["segment"] = *seg;
    return reply;
  }
  if (cmd == "tag") return tag(r, req);
  if (cmd == "snapshot") return snapshot(r, req);
  if (cmd == "stop") {
    r.stop();
    return success("stopping: the recording is being closed");
  }
  return refusal("unknown command \"" + cmd +
                 "\" (commands: status, start, pause, resume, split, tag, snapshot, stop)");
}

}  // namespace service
