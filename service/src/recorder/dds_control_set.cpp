// The client side of a recording set (dds_control.hpp, dds_set_request): one request to every
// recorder whose participant announces control.set NAME, one reply collected from each.
//
// Runs on the caller's thread; the reply reader's callback (a participant receive thread) only
// stores replies under `mu`. Members are told apart by their participant (the reply writer's GUID
// prefix), found in discovery by their user data (recorder_user_data).
#include <algorithm>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>

#include "common/hex.hpp"
#include "dds_control.hpp"

namespace service {
namespace {

using Clock = std::chrono::steady_clock;

int64_t wall_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}
constexpr auto kQuiet = std::chrono::seconds(2);  // discovery settled: no new member for this long

std::vector<pubsub::DiscoveredParticipant> members_now(const pubsub::Participant& p,
                                                       const std::string& user_data) {
  std::vector<pubsub::DiscoveredParticipant> out;
  for (auto& d : p.discovered_participants()) {
    if (d.user_data == user_data) out.push_back(std::move(d));
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.guid_prefix < b.guid_prefix; });
  return out;
}

// The members: `want` of them, or (want 0) as many as discovery shows once it has been quiet.
Result<std::vector<pubsub::DiscoveredParticipant>> find_members(const pubsub::Participant& p,
                                                                const std::string& set, size_t want,
                                                                Clock::time_point deadline) {
  const std::string user_data = recorder_user_data(set);
  const std::string domain = std::to_string(p.options().domain_id);
  std::vector<pubsub::DiscoveredParticipant> seen;
  auto changed = Clock::now();
  for (;;) {
    auto now_members = members_now(p, user_data);
    if (now_members.size() != seen.size()) changed = Clock::now();
    seen = std::move(now_members);
    if (want > 0 ? seen.size() >= want : !seen.empty() && Clock::now() - changed >= kQuiet)
      return seen;
    if (Clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (seen.empty())
    return Error{Errc::kTimeout, "no recorder of set " + set + " on domain " + domain};
  if (want == 0) return seen;
  return Error{Errc::kTimeout, "only " + std::to_string(seen.size()) + " of " +
                                   std::to_string(want) + " recorders of set " + set +
                                   " on domain " + domain};
}

// Whether every member's request reader has matched `w`.
bool all_matched(const pubsub::Writer& w, const std::vector<pubsub::DiscoveredParticipant>& ms) {
  const auto readers = w.matched_reader_guids();
  return std::all_of(ms.begin(), ms.end(), [&](const auto& m) {
    return std::any_of(readers.begin(), readers.end(),
                       [&](const pubsub::Guid& g) { return g.prefix == m.guid_prefix; });
  });
}

// Members the answering ones still see ("set_members" of their replies) that ctl did not find:
// a member killed a moment ago stays in the others' discovery until its lease runs out, but a
// new participant never hears of it. Each is added without a reply, so it is named.
void add_members_others_see(std::vector<SetMember>& out, const pubsub::GuidPrefix& self) {
  std::map<pubsub::GuidPrefix, std::string> others;
  for (const auto& s : out) {
    if (!s.reply || !s.reply->contains("set_members") || !(*s.reply)["set_members"].is_array())
      continue;
    for (const auto& e : (*s.reply)["set_members"]) {
      if (!e.is_object() || !e.contains("participant") || !e["participant"].is_string()) continue;
      pubsub::GuidPrefix p{};
      if (!common::from_hex(e["participant"].get<std::string>(), p) || p == self) continue;
      if (std::any_of(out.begin(), out.end(),
                      [&](const SetMember& m) { return m.participant == p; }))
        continue;
      others.emplace(p, e.value("addresses", std::string()));
    }
  }
  for (auto& [p, addresses] : others)
    out.push_back(SetMember{p, addresses, std::nullopt, std::nullopt});
}

}  // namespace

Result<std::vector<SetMember>> dds_set_request(pubsub::Participant& participant,
                                               const nlohmann::json& request,
                                               const std::string& set, size_t members,
                                               std::chrono::milliseconds timeout,
                                               const ControlKey* key) {
  const auto deadline = Clock::now() + timeout;
  constexpr uint64_t kId = 1;
  auto writer = participant.create_writer({kControlRequestTopic, kControlRequestType});
  if (!writer) return writer.error();
  const pubsub::Guid me = (*writer)->guid();
  std::mutex mu;
  std::condition_variable cv;
  struct Got {
    std::string json;
    int64_t t4 = 0;  // our wall clock when it arrived
  };
  std::map<pubsub::GuidPrefix, Got> replies;  // under mu
  pubsub::ReaderQos rq;
  rq.durability = pubsub::DurabilityKind::kTransientLocal;
  auto reader = participant.create_reader(
      {kControlReplyTopic, kControlReplyType}, rq,
      [&](const pubsub::SampleInfo& info, pubsub::Bytes body) {
        auto r = dds_control_wire::decode_reply(body, info.encapsulation, 16u << 20);
        const int64_t t4 = wall_ns();
        if (!r || r->requester != me || r->id != kId) return;
        std::lock_guard lk(mu);
        replies.emplace(info.writer.prefix, Got{std::move(r->json), t4});
        cv.notify_all();
      });
  if (!reader) return reader.error();

  auto found = find_members(participant, set, members, deadline);
  if (!found) return found.error();
  const auto& ms = *found;
  while (!all_matched(**writer, ms) && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));

  nlohmann::json req = request;
  req["set"] = set;
  req["clock"] = true;  // each member's times in its reply: its clock's offset to ours
  const std::string nonce = key ? random_nonce() : std::string();
  const std::string text = key ? sign_request(*key, participant.options().domain_id, me.to_string(),
                                              unix_ms_now(), nonce, req.dump())
                               : req.dump();
  const auto body = dds_control_wire::encode(dds_control_wire::Request{kId, text});
  const int64_t t1 = wall_ns();
  if (auto w = (*writer)->write(body); !w)
    return Error{Errc::kIo, "cannot send the request: " + w.error().message};
  std::map<pubsub::GuidPrefix, Got> got;
  {
    std::unique_lock lk(mu);
    cv.wait_until(lk, deadline, [&] {
      return std::all_of(ms.begin(), ms.end(),
                         [&](const auto& m) { return replies.count(m.guid_prefix) > 0; });
    });
    got = replies;
  }
  std::vector<SetMember> out;
  for (const auto& m : ms) {
    SetMember s{m.guid_prefix, announced_addresses(m), std::nullopt, std::nullopt};
    if (auto it = got.find(m.guid_prefix); it != got.end()) {
      const std::string& answer = it->second.json;
      if (key) {
        auto opened = open_reply(*key, me.to_string(), nonce, answer);
        s.reply =
            opened ? *opened : nlohmann::json{{"ok", false}, {"error", opened.error().message}};
      } else {
        auto j = nlohmann::json::parse(answer, nullptr, false);
        s.reply =
            j.is_object()
                ? j
                : nlohmann::json{{"ok", false}, {"error", "reply is not a JSON object: " + answer}};
      }
      s.clock = clock_offset(*s.reply, t1, it->second.t4);
    }
    out.push_back(std::move(s));
  }
  add_members_others_see(out, participant.guid().prefix);
  return out;
}

}  // namespace service
