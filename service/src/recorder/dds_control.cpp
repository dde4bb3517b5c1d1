#include "dds_control.hpp"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

#include "common/thread_name.hpp"
#include "control_commands.hpp"

namespace service {
namespace {

using nlohmann::json;

std::string dump(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

// The participant's GUID (prefix + the participant entity id), as Guid::to_string writes it.
std::string participant_guid(const pubsub::GuidPrefix& prefix) {
  pubsub::Guid g;
  g.prefix = prefix;
  g.entity.value = 0x000001c1;  // ENTITYID_PARTICIPANT
  return g.to_string();
}

}  // namespace

bool asks_for_times(const json& request) {
  return request.is_object() && request.contains("clock") && request["clock"] == true;
}

std::optional<ClockOffset> clock_offset(const json& reply, int64_t t1, int64_t t4) {
  if (!reply.is_object() || !reply.contains("recv_ns") || !reply.contains("send_ns") ||
      !reply["recv_ns"].is_number_integer() || !reply["send_ns"].is_number_integer())
    return std::nullopt;
  const int64_t t2 = reply["recv_ns"].get<int64_t>();
  const int64_t t3 = reply["send_ns"].get<int64_t>();
  const int64_t round_trip = (t4 - t1) - (t3 - t2);
  if (t3 < t2 || t4 < t1 || round_trip < 0) return std::nullopt;
  // Halves of each sum: no overflow for times of this century.
  return ClockOffset{((t2 - t1) + (t3 - t4)) / 2, round_trip / 2};
}

std::string announced_addresses(const pubsub::DiscoveredParticipant& p) {
  std::vector<uint32_t> seen;
  std::string s;
  for (const auto& l : p.unicast) {
    if (l.kind != pubsub::Locator::kUdpV4) continue;
    if (std::find(seen.begin(), seen.end(), l.ipv4()) != seen.end()) continue;
    seen.push_back(l.ipv4());
    s += (s.empty() ? "" : ", ") + l.address_string();
  }
  return s;
}

// ---- the recorder's side --------------------------------------------------------------------

// Warnings of one kind at most once per DdsControl::kLogEvery; the next one logged says how many
// were not, and flush() says it for the last ones. Any thread.
class RateLimitedLog {
 public:
  explicit RateLimitedLog(DdsControl::Log log) : log_(std::move(log)) {}
  void operator()(size_t kind, const std::string& line) {
    const auto now = std::chrono::steady_clock::now();
    uint64_t skipped = 0;
    {
      std::lock_guard lk(mu_);
      Kind& k = kinds_[kind];
      if (k.logged && now - k.last < DdsControl::kLogEvery) {
        ++k.skipped;
        return;
      }
      k.logged = true;
      k.last = now;
      skipped = std::exchange(k.skipped, 0);
    }
    log_(skipped == 0 ? line
                      : line + " (and " + std::to_string(skipped) + " more like it not logged)");
  }
  // At the end: what was not logged since the last line of each kind, one line per kind.
  void flush(const std::function<std::string(size_t kind)>& name) {
    std::lock_guard lk(mu_);
    for (auto& [kind, k] : kinds_) {
      if (k.skipped == 0) continue;
      log_("DDS control: " + std::to_string(std::exchange(k.skipped, 0)) + " more " + name(kind) +
           " were not logged");
    }
  }

 private:
  struct Kind {
    bool logged = false;
    std::chrono::steady_clock::time_point last;
    uint64_t skipped = 0;
  };
  DdsControl::Log log_;
  std::mutex mu_;
  std::map<size_t, Kind> kinds_;
};

// The kinds of RateLimitedLog's lines: the refusals (by Refusal), then these.
constexpr size_t kLogUndecodable = kRefusalCount, kLogDropped = kRefusalCount + 1,
                 kLogReplyFailed = kRefusalCount + 2;

struct DdsControl::Impl {
  struct Request {
    pubsub::Guid from;  // the request's writer
    uint64_t id = 0;
    std::string text;
    bool too_long = false;    // over kMaxRequestBytes (text then empty)
    int64_t received_ns = 0;  // the participant's reception clock when it arrived
  };
  struct Reply {  // what the worker sends
    json body;
    bool sign = false;  // the request authenticated: sign the reply with its nonce
    std::string nonce;
    // The request asked for the times (clock_request): "recv_ns" and "send_ns" go into the body.
    bool times = false;
  };

  pubsub::Participant& participant;
  std::vector<config::Ipv4Network> allow;
  Handler handler;
  RateLimitedLog warn;
  RequestVerifier verifier;  // the worker's
  std::function<int64_t()> now_ms;
  std::shared_ptr<RefusalCounts> refused = std::make_shared<RefusalCounts>();
  std::unique_ptr<pubsub::Writer> writer;
  std::unique_ptr<pubsub::Reader> reader;

  std::mutex mu;
  std::condition_variable cv;
  std::deque<Request> queue;  // under mu
  bool stopping = false;      // under mu
  std::thread worker;

  Impl(pubsub::Participant& p, std::vector<config::Ipv4Network> a, Handler h, Log w, Auth auth)
      : participant(p),
        allow(std::move(a)),
        handler(std::move(h)),
        warn(std::move(w)),
        verifier(std::move(auth.key), p.options().domain_id, auth.max_skew),
        now_ms(std::move(auth.now_ms)) {}

  // A receive thread: decode and queue, nothing more.
  void on_sample(const pubsub::SampleInfo& info, pubsub::Bytes body) {
    auto r = dds_control_wire::decode_request(body, info.encapsulation, body.size());
    if (!r) {
      warn(kLogUndecodable, "DDS control: ignored an undecodable request (" +
                                std::to_string(body.size()) + " bytes) from writer " +
                                info.writer.to_string());
      return;
    }
    {
      std::lock_guard lk(mu);
      if (queue.size() < kMaxQueued) {
        const bool too_long = r->json.size() > kMaxRequestBytes;
        queue.push_back({info.writer, r->id, too_long ? std::string() : std::move(r->json),
                         too_long, participant.reception_clock().now().ns});
        cv.notify_one();
        return;
      }
    }
    warn(kLogDropped, "DDS control: dropped a request from writer " + info.writer.to_string() +
                          ": " + std::to_string(kMaxQueued) + " requests are waiting");
  }

  void run_worker() {
    for (;;) {
      Request r;
      {
        std::unique_lock lk(mu);
        cv.wait(lk, [&] { return stopping || !queue.empty(); });
        if (stopping) return;
        r = std::move(queue.front());
        queue.pop_front();
      }
      Reply reply = answer(r);
      if (!reply.body.is_null()) send(r, reply);  // null: the handler ignores it (another set)
    }
  }

  // The participant of the request's writer and the addresses it announced; whether one of them
  // is in control.allow.
  bool allowed(const Request& r, std::string& who) {
    const auto& prefix = r.from.prefix;
    std::string addresses = "no announced address";
    bool ok = false;
    for (const auto& p : participant.discovered_participants()) {
      if (p.guid_prefix != prefix) continue;
      if (auto a = announced_addresses(p); !a.empty()) addresses = std::move(a);
      for (const auto& l : p.unicast) {
        if (l.kind != pubsub::Locator::kUdpV4) continue;
        for (const auto& net : allow) ok = ok || net.contains(l.ipv4());
      }
    }
    who = "participant " + participant_guid(prefix) + " (" + addresses + ")";
    return ok;
  }

  // Counts and logs a refusal; `what` is the request as the log shows it.
  Reply refuse(Refusal why, const std::string& what, const std::string& who,
               const std::string& reason) {
    refused->add(why);
    std::string shown = what.substr(0, 200);
    std::replace_if(  // one log line, whatever the sender put in
        shown.begin(), shown.end(),
        [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }, ' ');
    warn(static_cast<size_t>(why),
         "DDS control: refused " + shown + " from " + who + ": " + reason);
    Reply reply;
    reply.body = refusal(why == Refusal::kNotAllowed ? who + " is not in control.allow" : reason);
    return reply;
  }

  Reply answer(const Request& r) {
    std::string who;
    const bool address_ok = allowed(r, who);
    if (r.too_long) {
      const std::string why = "request longer than " + std::to_string(kMaxRequestBytes) + " bytes";
      if (!address_ok)
        return refuse(Refusal::kNotAllowed, "an over-long request", who, "not in control.allow");
      return {refusal(why)};
    }
    auto message = json::parse(r.text, nullptr, false);
    if (!address_ok) {
      std::string what = r.text;
      if (message.is_object() && message.contains("request") && message["request"].is_string())
        what = message["request"].get<std::string>();  // a signed one: the command
      return refuse(Refusal::kNotAllowed, what, who, "not in control.allow");
    }
    if (message.is_discarded() || !message.is_object())
      return {refusal("a request is one JSON object, e.g. {\"cmd\":\"status\"}")};
    auto checked = verifier.check(message, r.from.to_string(), now_ms());
    if (!checked.ok) {
      std::string what = r.text;
      if (message.contains("request") && message["request"].is_string())
        what = message["request"].get<std::string>();
      return refuse(checked.refusal, what, who, checked.why);
    }
    Reply reply{json(), checked.signed_request, checked.nonce, asks_for_times(checked.request)};
    try {
      reply.body = handler(checked.request);
    } catch (const std::exception& e) {  // a handler bug must not end the recorder
      reply.body = refusal(std::string("internal error: ") + e.what());
    }
    return reply;
  }

  void send(const Request& r, const Reply& reply) {
    std::string text;
    if (reply.times && reply.body.is_object()) {
      json body = reply.body;
      body["recv_ns"] = r.received_ns;
      body["send_ns"] = participant.reception_clock().now().ns;  // as late as the JSON allows
      text = dump(body);
    } else {
      text = dump(reply.body);
    }
    if (reply.sign) text = verifier.sign_reply(r.from.to_string(), reply.nonce, text);
    const auto body = dds_control_wire::encode(dds_control_wire::Reply{r.from, r.id, text});
    if (auto w = writer->write(body); !w)
      warn(kLogReplyFailed, "DDS control: reply to writer " + r.from.to_string() +
                                " not sent: " + w.error().message);
  }
};

Result<std::unique_ptr<DdsControl>> DdsControl::start(pubsub::Participant& participant,
                                                      std::vector<config::Ipv4Network> allow,
                                                      Handler handler, Log warn, Auth auth) {
  auto impl = std::make_unique<Impl>(participant, std::move(allow), std::move(handler),
                                     std::move(warn), std::move(auth));
  pubsub::WriterQos wq;
  wq.durability = pubsub::DurabilityKind::kTransientLocal;
  wq.history = {pubsub::HistoryKind::kKeepLast, kReplyHistory};
  auto writer = participant.create_writer({kControlReplyTopic, kControlReplyType}, wq);
  if (!writer) return writer.error();
  impl->writer = std::move(writer).value();
  Impl* m = impl.get();
  m->worker = std::thread([m] { m->run_worker(); });
  common::name_thread(m->worker, "rec-dds-control");
  // From here on the destructor joins the worker.
  std::unique_ptr<DdsControl> control(new DdsControl(std::move(impl)));
  pubsub::ReaderQos rq;
  rq.resource_limits.max_samples = 256;
  auto reader = participant.create_reader(
      {kControlRequestTopic, kControlRequestType}, rq,
      [m](const pubsub::SampleInfo& i, pubsub::Bytes b) { m->on_sample(i, b); });
  if (!reader) return reader.error();
  m->reader = std::move(reader).value();
  return control;
}

DdsControl::DdsControl(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

std::shared_ptr<const RefusalCounts> DdsControl::refusals() const {
  return impl_->refused;
}

DdsControl::~DdsControl() {
  Impl& m = *impl_;
  m.reader.reset();  // no new requests
  {
    std::lock_guard lk(m.mu);
    m.stopping = true;
  }
  m.cv.notify_all();
  m.worker.join();  // after the request it is on
  m.warn.flush([](size_t kind) -> std::string {
    if (kind < kRefusalCount)
      return std::string("refusals (") + to_string(static_cast<Refusal>(kind)) + ")";
    return kind == kLogUndecodable ? "undecodable requests"
           : kind == kLogDropped   ? "dropped requests"
                                   : "unsent replies";
  });
  for (const auto& r : m.queue) m.send(r, {refusal("the recorder is stopping")});
  m.writer->wait_for_acknowledgments(std::chrono::seconds(1));
  m.writer.reset();
}

// ---- the client's side ----------------------------------------------------------------------

std::string recorder_user_data(const std::string& set) {
  return set.empty() ? "pubsub-recorder" : "pubsub-recorder set=" + set;
}

Result<nlohmann::json> dds_control_request(pubsub::Participant& participant,
                                           const nlohmann::json& request,
                                           std::chrono::milliseconds timeout,
                                           const ControlKey* key) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const std::string domain = std::to_string(participant.options().domain_id);
  constexpr uint64_t kId = 1;  // one request per writer: its GUID tells the replies apart

  auto writer = participant.create_writer({kControlRequestTopic, kControlRequestType});
  if (!writer) return writer.error();
  const pubsub::Guid me = (*writer)->guid();

  // The reader's callback uses these: declared before it, they outlive it.
  std::mutex mu;
  std::condition_variable cv;
  std::optional<std::string> reply;  // under mu
  pubsub::ReaderQos rq;
  rq.durability = pubsub::DurabilityKind::kTransientLocal;  // the writer's history reaches us
  auto reader = participant.create_reader({kControlReplyTopic, kControlReplyType}, rq,
                                          [&](const pubsub::SampleInfo& info, pubsub::Bytes body) {
                                            auto r = dds_control_wire::decode_reply(
                                                body, info.encapsulation, 16u << 20);
                                            if (!r || r->requester != me || r->id != kId)
                                              return;  // another client's
                                            std::lock_guard lk(mu);
                                            if (!reply) reply = std::move(r->json);
                                            cv.notify_all();
                                          });
  if (!reader) return reader.error();

  auto left = [&] {
    return std::max(std::chrono::steady_clock::duration::zero(),
                    deadline - std::chrono::steady_clock::now());
  };
  if (!(*writer)->wait_for_readers(1, left()))
    return Error{Errc::kTimeout, "no recorder answers on domain " + domain};
  const std::string nonce = key ? random_nonce() : std::string();
  const std::string text = key ? sign_request(*key, participant.options().domain_id, me.to_string(),
                                              unix_ms_now(), nonce, request.dump())
                               : request.dump();
  const auto body = dds_control_wire::encode(dds_control_wire::Request{kId, text});
  if (auto w = (*writer)->write(body); !w)
    return Error{Errc::kIo, "cannot send the request: " + w.error().message};
  std::string answer;
  {
    std::unique_lock lk(mu);
    if (!cv.wait_until(lk, deadline, [&] { return reply.has_value(); })) {
      return Error{Errc::kTimeout, "no reply from a recorder on domain " + domain + " within " +
                                       std::to_string(timeout.count()) + " ms"};
    }
    answer = *reply;
  }
  if (key) return open_reply(*key, me.to_string(), nonce, answer);
  auto j = json::parse(answer, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return Error{Errc::kCorrupt, "reply is not a JSON object: " + answer};
  return j;
}

}  // namespace service
