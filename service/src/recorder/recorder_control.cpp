// The recorder's control (Recorder::Impl, recorder_impl.hpp): the control socket, DDS control
// and metrics servers, started by create(), each running its requests on its own thread; and
// the commands they run (Recorder::status, pause, resume, split, tag, snapshot), any thread,
// under maps_mu where they touch the topics.

#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>

#include "common/hex.hpp"
#include "control_commands.hpp"
#include "recorder_impl.hpp"
#include "text.hpp"

namespace service {

Result<void> Recorder::Impl::start_control(const std::filesystem::path& path) {
  auto server = ControlServer::start(path, [this](const nlohmann::json& request) {
    Recorder* r = owner.load();
    if (!r) return nlohmann::json{{"ok", false}, {"error", "the recorder is starting"}};
    return handle_control(*r, request);
  });
  if (!server) return server.error();
  control = std::move(server).value();
  log->info("control socket {}", path.string());
  return {};
}

nlohmann::json Recorder::Impl::handle_dds_request(const nlohmann::json& request) {
  const std::string& set = cfg.control.set;
  if (request.contains("set") && (!request["set"].is_string() || request["set"] != set))
    return nullptr;  // another recording set's request: not for us, no reply
  Recorder* r = owner.load();
  nlohmann::json reply = r ? handle_control(*r, request)
                           : nlohmann::json{{"ok", false}, {"error", "the recorder is starting"}};
  if (!set.empty()) {
    reply["member"] = member_json();
    // The members this one sees: ctl names one it did not find itself (killed a moment ago).
    nlohmann::json seen = nlohmann::json::array();
    for (const auto& d : participant->discovered_participants()) {
      if (d.user_data != recorder_user_data(set)) continue;
      seen.push_back(
          {{"participant", common::to_hex(d.guid_prefix)}, {"addresses", announced_addresses(d)}});
    }
    reply["set_members"] = std::move(seen);
  }
  return reply;
}

nlohmann::json Recorder::Impl::member_json() const {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  const std::string addr = participant->unicast_locator().to_string();
  return {{"set", cfg.control.set},
          {"host", host},
          {"address", addr.substr(0, addr.rfind(':'))},
          {"path", cfg.storage.path.string()}};
}

Result<void> Recorder::Impl::start_dds_control() {
  DdsControl::Auth auth;
  if (!cfg.control.key_file.empty()) {
    auto key = load_control_key(cfg.control.key_file);
    if (!key) return key.error();
    auth.key = std::move(key).value();
  }
  auth.max_skew =
      std::chrono::milliseconds(static_cast<int64_t>(cfg.control.max_clock_skew_s * 1000));
  auto dds = DdsControl::start(
      *participant, cfg.control.allow,
      [this](const nlohmann::json& request) { return handle_dds_request(request); },
      [l = log](const std::string& line) { l->warn("{}", line); }, std::move(auth));
  if (!dds) return dds.error();
  dds_control = std::move(dds).value();
  control_refusals = dds_control->refusals();
  std::string allow;
  for (const auto& n : cfg.control.allow) allow += (allow.empty() ? "" : ", ") + n.to_string();
  if (cfg.control.key_file.empty()) {
    log->info("DDS control on domain {} (allow {})", cfg.domain, allow);
  } else {
    log->info(
        "DDS control on domain {} (allow {}; requests signed with the key in {}, clocks "
        "within {} s)",
        cfg.domain, allow, cfg.control.key_file.string(), cfg.control.max_clock_skew_s);
  }
  return {};
}

Result<void> Recorder::Impl::start_set_clock() {
  SetClock::Options o;
  o.set = cfg.control.set;
  if (!cfg.control.key_file.empty()) {
    auto key = load_control_key(cfg.control.key_file);
    if (!key) return key.error();
    o.key = std::move(key).value();
  }
  o.warn = [l = log](const std::string& line) { l->warn("{}", line); };
  o.on_offset = [this](const SetClock::Offset& off) {
    const std::string note = clock_note(off.clock);
    log->info("set clock: {} is {} from this recorder's clock ({} replies)", off.member, note,
              off.rounds);
    if (auto s =
            store->add_mark({storage::MarkKind::kClockOffset, reception_now(), off.member, note});
        !s)
      log->warn("set clock: the offset to {} not recorded: {}", off.member, s.error().message);
  };
  auto clock = SetClock::start(*participant, std::move(o));
  if (!clock) return clock.error();
  set_clock = std::move(clock).value();
  return {};
}

Result<void> Recorder::Impl::start_metrics(const std::string& listen) {
  auto server = MetricsServer::start(listen, [this] {
    Recorder* r = owner.load();
    return r ? prometheus_text(r->status()) : std::string();
  });
  if (!server) return server.error();
  metrics = std::move(server).value();
  log->info("metrics on http://{}:{}/metrics", listen.substr(0, listen.rfind(':')),
            metrics->port());
  return {};
}

namespace {

Error refused(std::string why) {
  return Error{Errc::kInvalidArgument, std::move(why)};
}

// maps_mu held: the recorded topics named `names`, or the refusal naming the first unknown one.
template <typename Topics>
Result<std::vector<TopicState*>> find_topics(Topics& topics,
                                             const std::vector<std::string>& names) {
  std::vector<TopicState*> out;
  for (const auto& n : names) {
    auto it = std::find_if(topics.begin(), topics.end(),
                           [&](const auto& e) { return e.second->name == n; });
    if (it == topics.end()) return refused("no topic \"" + n + "\" is recorded");
    out.push_back(it->second.get());
  }
  return out;
}

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

}  // namespace

RecorderStatus Recorder::status() {
  Impl& m = *impl_;
  RecorderStatus st;
  const SinkFill ws = m.store->fill();
  st.queue_fill =
      ws.max_bytes ? static_cast<double>(ws.in_use_bytes) / static_cast<double>(ws.max_bytes) : 0;
  if (m.snap) {
    st.mode = "snapshot";
    st.snapshot = m.snap->status();
  }
  if (m.control_refusals) st.control_refused = m.control_refusals->by_name();
  st.samples_shm = m.reader->stats().samples_shm;
  st.writers = m.reader->matched_writers();
  st.writers_elsewhere = m.elsewhere_writers.load();
  if (m.hooks) {
    const HookCounts h = m.hooks->counts();
    st.hooks = RecorderStatus::Hooks{h.run, h.failed, h.pending};
  }
  const pubsub::ParticipantStats ps = m.participant->stats();
  st.discovery_refused = {{"participants", ps.participants_refused},
                          {"endpoints", ps.endpoints_refused}};
  st.wall_clock_offset_s = static_cast<double>(m.wall_offset_ns.load()) / 1e9;
  st.clock_steps = m.clock_steps.load();
  for (size_t i = 0; i < pubsub::kQosPolicyCount; ++i) {
    if (ps.incompatible_by_policy[i] == 0) continue;
    st.incompatible_qos[pubsub::to_string(static_cast<pubsub::QosPolicyId>(i))] =
        ps.incompatible_by_policy[i];
  }
  st.seconds = std::chrono::duration<double>(Clock::now() - m.started).count();
  st.path = m.cfg.storage.path.string();
  if (struct statvfs v{}; ::statvfs(st.path.c_str(), &v) == 0)
    st.free_bytes = static_cast<uint64_t>(v.f_bavail) * v.f_frsize;
  std::lock_guard lk(m.maps_mu);
  st.paused = m.pause_all && !m.armed;
  st.armed = m.armed;
  st.recording_id = m.recording_id;
  for (const auto& [info, t] : m.topics) {
    TopicStatus ts;
    ts.name = t->name;
    ts.paused = t->paused.load(std::memory_order_relaxed);
    ts.writers = t->writers.size();
    for (const WriterState* w : t->writers) {
      ts.samples += w->samples.load(std::memory_order_relaxed);
      ts.bytes += w->bytes.load(std::memory_order_relaxed);
      ts.lost += w->lost.load(std::memory_order_relaxed);
      ts.skipped += w->skipped.load(std::memory_order_relaxed);
      st.held_back += w->refused.load(std::memory_order_relaxed);
    }
    st.samples += ts.samples;
    st.bytes += ts.bytes;
    st.lost += ts.lost;
    st.skipped += ts.skipped;
    st.topics.push_back(std::move(ts));
  }
  std::sort(st.topics.begin(), st.topics.end(),
            [](const TopicStatus& a, const TopicStatus& b) { return a.name < b.name; });
  return st;
}

Result<void> Recorder::Impl::set_paused(const std::vector<std::string>& names, bool on) {
  std::lock_guard lk(maps_mu);
  if (armed) return refused("armed: nothing is recorded until start");
  std::vector<storage::Mark> marks;
  const auto kind = on ? storage::MarkKind::kPause : storage::MarkKind::kResume;
  const int64_t t = reception_now();
  if (names.empty()) {
    bool any = pause_all;
    for (const auto& [info, ts] : topics) any = any || ts->paused.load();
    if (on && pause_all) return refused("already paused");
    if (!on && !any) return refused("not paused");
    pause_all = on;
    for (const auto& [info, ts] : topics) ts->paused.store(on);
    marks.push_back({kind, t, "", ""});
  } else {
    auto found = find_topics(topics, names);
    if (!found) return found.error();
    for (TopicState* ts : *found) {
      if (ts->paused.load() == on)
        return refused("topic \"" + ts->name + "\" is " + (on ? "already paused" : "not paused"));
    }
    for (TopicState* ts : *found) {
      ts->paused.store(on);
      marks.push_back({kind, t, ts->name, ""});
    }
  }
  for (const auto& mk : marks) {
    if (auto s = store->add_mark(mk); !s) return s.error();
  }
  log->info("{} {}", on ? "paused" : "resumed",
            names.empty() ? std::string("every topic") : "topics " + joined(names));
  return {};
}

Result<void> Recorder::pause(const std::vector<std::string>& topics) {
  return impl_->set_paused(topics, true);
}

Result<void> Recorder::resume(const std::vector<std::string>& topics) {
  return impl_->set_paused(topics, false);
}

namespace {
bool valid_recording_id(const std::string& id) {
  return id.size() <= 128 && id.find_first_not_of(
                                 "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                 "0123456789._:-") == std::string::npos;
}
}  // namespace

Result<int64_t> Recorder::start(const std::string& recording_id) {
  if (!valid_recording_id(recording_id))
    return refused("a recording id has at most 128 of A-Z a-z 0-9 . _ : -");
  Impl& m = *impl_;
  std::lock_guard lk(m.maps_mu);
  if (!m.armed)
    return refused(m.cfg.control.armed ? "already started"
                                       : "not armed: recording since it started");
  const int64_t t = m.reception_now();
  if (auto s = m.store->add_mark({storage::MarkKind::kStart, t, recording_id, ""}); !s)
    return s.error();
  m.armed = false;
  m.pause_all = false;
  for (const auto& [info, ts] : m.topics) ts->paused.store(false);
  m.recording_id = recording_id;
  m.log->info("started{}", recording_id.empty() ? "" : " recording " + recording_id);
  return t;
}

Result<uint64_t> Recorder::split() {
  auto next = impl_->store->split();
  if (!next) return next.error();
  impl_->log->info("split: recording goes on in segment {}", *next);
  return *next;
}

Result<int64_t> Recorder::tag(const std::string& name, const std::string& note) {
  if (name.empty() || name.size() > 256) return refused("a tag name has 1 to 256 bytes");
  if (note.size() > 4096) return refused("a tag note has at most 4096 bytes");
  const int64_t t = impl_->reception_now();
  if (auto s = impl_->store->add_mark({storage::MarkKind::kTag, t, name, note}); !s)
    return s.error();
  impl_->log->info("tag \"{}\"{}{}", name, note.empty() ? "" : ": ", note);
  return t;
}

Result<SnapshotTrigger> Recorder::snapshot(const std::string& tag) {
  if (!impl_->snap)
    return refused("this recorder is not in snapshot mode (\"mode\": \"snapshot\")");
  return impl_->snap->trigger(tag);
}

}  // namespace service
