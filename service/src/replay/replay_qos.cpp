// QoS overrides, topic remapping and the latched state of play (replay_qos.hpp).
#include "replay_qos.hpp"

#include <deque>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/glob.hpp"

namespace service::replay::detail {

Result<QosOverrides> load_qos_overrides(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Error{Errc::kNotFound, "--qos " + path + ": cannot read the file"};
  std::stringstream text;
  text << in.rdbuf();
  const auto j = nlohmann::ordered_json::parse(text.str(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return Error{Errc::kInvalidArgument,
                 "--qos " + path + ": must be a JSON object of topic globs to QoS objects"};
  }
  QosOverrides o;
  for (const auto& [glob, qos] : j.items()) {
    if (auto ok = common::check_glob(glob); !ok)
      return ok.error().with_context("--qos " + path + ": topic \"" + glob + "\"");
    const std::string body = qos.dump();
    const std::string where = "--qos " + path + ": topic \"" + glob + "\"";
    if (!qos.is_object())
      return Error{Errc::kInvalidArgument, where + ": must be an object of QoS members"};
    if (auto probe = apply_qos_overrides(body, RecordedQos{}); !probe)
      return probe.error().with_context(where);
    o.entries.emplace_back(glob, body);
  }
  return o;
}

RecordedQos apply_overrides(const QosOverrides& o, const std::string& topic, RecordedQos qos) {
  for (const auto& [glob, body] : o.entries) {
    if (!common::glob_match(glob, topic)) continue;
    if (auto applied = apply_qos_overrides(body, qos))
      qos = std::move(applied).value();  // checked at load
  }
  return qos;
}

Result<std::map<std::string, std::string>> parse_remaps(const std::vector<std::string>& args) {
  std::map<std::string, std::string> m;
  for (const auto& a : args) {
    const auto eq = a.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == a.size()) {
      return Error{Errc::kInvalidArgument, "--remap " + a + ": expected OLD=NEW (topic names)"};
    }
    if (!m.emplace(a.substr(0, eq), a.substr(eq + 1)).second) {
      return Error{Errc::kInvalidArgument,
                   "--remap " + a + ": topic " + a.substr(0, eq) + " is remapped twice"};
    }
  }
  return m;
}

Result<RecordedQos> recorded_writer_qos(const storage::WriterInfo& w, const storage::TopicDef& t) {
  const storage::Bytes& b = w.def.qos.empty() ? t.qos : w.def.qos;
  if (b.empty()) return RecordedQos{};
  return decode_qos(b);
}

namespace {

constexpr size_t kKeepAllLatched = 65536;

struct Instances {
  size_t depth = 1;
  std::map<storage::KeyHash, std::deque<LatchedSample>> by_key;  // no key hash: the zero hash
};

}  // namespace

Result<std::vector<LatchedSample>> latched_samples(
    storage::Recording& rec, const std::map<storage::WriterId, pubsub::HistoryQos>& durable,
    const std::vector<storage::TopicId>& topics, int64_t start_ns, const InstanceKeyFn& key_of) {
  std::map<storage::WriterId, Instances> kept;
  for (const auto& [id, h] : durable) {
    kept[id].depth = h.kind == pubsub::HistoryKind::kKeepAll
                         ? kKeepAllLatched
                         : static_cast<size_t>(std::max(h.depth, 1));
  }
  storage::Query q;
  q.topic_ids = topics;
  q.end_ns = start_ns;
  auto cur = rec.query(q);
  if (!cur) return cur.error();
  while (const storage::RecordView* r = cur->next()) {
    auto w = kept.find(r->meta.writer);
    if (w == kept.end()) continue;
    const storage::KeyHash key = key_of(*r).value_or(storage::KeyHash{});
    auto& dq = w->second.by_key[key];
    dq.push_back({r->meta.writer, r->meta, storage::Bytes(r->payload.begin(), r->payload.end())});
    if (dq.size() > w->second.depth) dq.pop_front();
  }
  if (!cur->status()) return cur->status().error();
  std::vector<LatchedSample> out;
  for (auto& [id, inst] : kept) {
    for (auto& [key, dq] : inst.by_key) {
      for (auto& s : dq) out.push_back(std::move(s));
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const LatchedSample& a, const LatchedSample& b) {
    return a.meta.reception_ns < b.meta.reception_ns;
  });
  return out;
}

}  // namespace service::replay::detail
