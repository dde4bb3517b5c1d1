// SetClock (set_clock.hpp has the overview): the prober thread and the note format.
#include "set_clock.hpp"

#include <algorithm>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "common/thread_name.hpp"

namespace service {
namespace {

using Steady = std::chrono::steady_clock;
using json = nlohmann::json;

}  // namespace

std::string member_note(const json& reply) {
  if (!reply.is_object() || !reply.contains("member") || !reply["member"].is_object()) return "";
  const json& m = reply["member"];
  if (!m.contains("host") || !m["host"].is_string() || !m.contains("address") ||
      !m["address"].is_string())
    return "";
  return "host " + m["host"].get<std::string>() + ", address " + m["address"].get<std::string>();
}

struct SetClock::Impl {
  struct Sent {
    int64_t t1 = 0;
    std::string nonce;
  };
  struct Reply {
    pubsub::GuidPrefix from{};
    uint64_t id = 0;
    std::string text;
    int64_t t4 = 0;
  };

  pubsub::Participant& participant;
  Options opt;
  std::string user_data;
  pubsub::GuidPrefix self{};
  std::unique_ptr<pubsub::Writer> writer;
  std::unique_ptr<pubsub::Reader> reader;
  pubsub::Guid me;
  uint64_t next_id = 1;  // the prober thread's
  // The prober thread's: when each member is due next, and those whose refusal was logged.
  std::map<pubsub::GuidPrefix, Steady::time_point> due;
  std::set<pubsub::GuidPrefix> refusals;

  std::mutex mu;
  std::condition_variable cv;
  std::vector<Reply> replies;  // under mu
  bool stopping = false;       // under mu
  std::thread thread;

  Impl(pubsub::Participant& p, Options o) : participant(p), opt(std::move(o)) {}

  int64_t now() const { return participant.reception_clock().now().ns; }

  // A receive thread: keep the replies to our requests, with their arrival time.
  void on_reply(const pubsub::SampleInfo& info, pubsub::Bytes body) {
    const int64_t t4 = now();
    auto r = dds_control_wire::decode_reply(body, info.encapsulation, 1u << 20);
    if (!r || r->requester != me) return;
    std::lock_guard lk(mu);
    replies.push_back({info.writer.prefix, r->id, std::move(r->json), t4});
    cv.notify_all();
  }

  // Members that are due and have matched our request writer.
  std::vector<pubsub::GuidPrefix> due_members() {
    const auto matched = writer->matched_reader_guids();
    const auto t = Steady::now();
    std::vector<pubsub::GuidPrefix> out;
    for (const auto& d : participant.discovered_participants()) {
      if (d.user_data != user_data || d.guid_prefix == self) continue;
      if (t < due[d.guid_prefix]) continue;
      const bool reachable =
          std::any_of(matched.begin(), matched.end(),
                      [&](const pubsub::Guid& g) { return g.prefix == d.guid_prefix; });
      if (reachable) out.push_back(d.guid_prefix);
    }
    return out;
  }

  // Waits `d` unless stopping; false when stopping.
  bool sleep(std::chrono::milliseconds d) {
    std::unique_lock lk(mu);
    return !cv.wait_for(lk, d, [&] { return stopping; });
  }

  std::map<uint64_t, Sent> send_rounds() {
    std::map<uint64_t, Sent> sent;
    for (int k = 0; k < opt.rounds; ++k) {
      if (k > 0 && !sleep(opt.spacing)) break;
      const json req = {{"cmd", "clock"}, {"clock", true}, {"set", opt.set}};
      Sent s;
      s.nonce = opt.key ? random_nonce() : std::string();
      const std::string text =
          opt.key ? sign_request(*opt.key, participant.options().domain_id, me.to_string(),
                                 unix_ms_now(), s.nonce, req.dump())
                  : req.dump();
      const uint64_t id = next_id++;
      const auto body = dds_control_wire::encode(dds_control_wire::Request{id, text});
      s.t1 = now();
      if (!writer->write(body)) continue;
      sent.emplace(id, std::move(s));
    }
    return sent;
  }

  // The best reply of each member among `got`, to the requests in `sent`.
  void evaluate(const std::map<uint64_t, Sent>& sent, const std::vector<Reply>& got,
                const std::vector<pubsub::GuidPrefix>& asked) {
    std::map<pubsub::GuidPrefix, Offset> best;
    for (const Reply& r : got) {
      auto s = sent.find(r.id);
      if (s == sent.end() || std::find(asked.begin(), asked.end(), r.from) == asked.end()) continue;
      json body;
      if (opt.key) {
        auto opened = open_reply(*opt.key, me.to_string(), s->second.nonce, r.text);
        if (!opened) continue;
        body = std::move(opened).value();
      } else {
        body = json::parse(r.text, nullptr, false);
      }
      if (!body.is_object() || !body.value("ok", false)) {
        if (refusals.insert(r.from).second && opt.warn)
          opt.warn("set clock: member " + member_note(body) + " refused the clock request: " +
                   (body.is_object() ? body.value("error", std::string("?")) : r.text));
        continue;
      }
      auto c = clock_offset(body, s->second.t1, r.t4);
      if (!c) continue;
      auto [it, fresh] = best.try_emplace(r.from, Offset{r.from, member_note(body), *c, 0});
      ++it->second.rounds;
      if (c->error_ns < it->second.clock.error_ns) it->second.clock = *c;
    }
    const auto t = Steady::now();
    for (const auto& p : asked) due[p] = t + (best.count(p) ? opt.interval : opt.retry);
    for (const auto& [p, o] : best) {
      if (opt.on_offset) opt.on_offset(o);
    }
  }

  void measure(const std::vector<pubsub::GuidPrefix>& asked) {
    {
      std::lock_guard lk(mu);
      replies.clear();
    }
    const auto sent = send_rounds();
    const size_t want = sent.size() * asked.size();
    std::vector<Reply> got;
    {
      std::unique_lock lk(mu);
      auto from_asked = [&] {
        return static_cast<size_t>(
            std::count_if(replies.begin(), replies.end(), [&](const Reply& r) {
              return std::find(asked.begin(), asked.end(), r.from) != asked.end();
            }));
      };
      cv.wait_for(lk, opt.wait, [&] { return stopping || from_asked() >= want; });
      if (stopping) return;
      got.swap(replies);
    }
    evaluate(sent, got, asked);
  }

  void run() {
    while (sleep(opt.poll)) {
      const auto asked = due_members();
      if (!asked.empty()) measure(asked);
    }
  }
};

Result<std::unique_ptr<SetClock>> SetClock::start(pubsub::Participant& participant,
                                                  Options options) {
  auto impl = std::make_unique<Impl>(participant, std::move(options));
  Impl* m = impl.get();
  m->user_data = recorder_user_data(m->opt.set);
  m->self = participant.guid().prefix;
  auto writer = participant.create_writer({kControlRequestTopic, kControlRequestType});
  if (!writer) return writer.error();
  m->writer = std::move(writer).value();
  m->me = m->writer->guid();
  pubsub::ReaderQos rq;
  rq.durability = pubsub::DurabilityKind::kTransientLocal;  // a reply that beats the match
  auto reader = participant.create_reader(
      {kControlReplyTopic, kControlReplyType}, rq,
      [m](const pubsub::SampleInfo& i, pubsub::Bytes b) { m->on_reply(i, b); });
  if (!reader) return reader.error();
  m->reader = std::move(reader).value();
  m->thread = std::thread([m] { m->run(); });
  common::name_thread(m->thread, "rec-set-clock");
  return std::unique_ptr<SetClock>(new SetClock(std::move(impl)));
}

SetClock::SetClock(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

SetClock::~SetClock() {
  {
    std::lock_guard lk(impl_->mu);
    impl_->stopping = true;
  }
  impl_->cv.notify_all();
  impl_->thread.join();
  impl_->reader.reset();
  impl_->writer.reset();
}

}  // namespace service
