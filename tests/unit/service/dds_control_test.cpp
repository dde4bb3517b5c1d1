// The recorder's DDS control (DdsControl, dds_control_request) over libpubsub's FakeNetwork: the
// wire form byte for byte, requests from allowed and refused participants with their exact
// replies and warnings, bad requests, a handler that blocks, and no recorder at all.
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "dds_control.hpp"
#include "pubsub/testing/fake_network.hpp"

using nlohmann::json;
using service::dds_control_request;
using service::DdsControl;
namespace wire = service::dds_control_wire;
using namespace std::chrono_literals;

namespace {

std::vector<std::byte> bytes(std::initializer_list<int> v) {
  std::vector<std::byte> out;
  for (int b : v) out.push_back(static_cast<std::byte>(b));
  return out;
}

std::unique_ptr<pubsub::Participant> participant(const std::shared_ptr<pubsub::FakeNetwork>& net,
                                                 uint32_t domain = 0) {
  pubsub::ParticipantOptions o;
  pubsub::use_fake_network(o, net);
  o.domain_id = domain;
  o.announce_period = 100ms;
  o.lease_duration = 3s;
  o.log = [](const std::string&) {};
  auto p = pubsub::Participant::create(o);
  REQUIRE(p.ok());
  return std::move(p).value();
}

config::Ipv4Network host(uint32_t ip) {
  return config::Ipv4Network{ip, 32};
}

std::string dotted(uint32_t ip) {
  return std::to_string(ip >> 24) + "." + std::to_string((ip >> 16) & 0xff) + "." +
         std::to_string((ip >> 8) & 0xff) + "." + std::to_string(ip & 0xff);
}

// Collects the warnings DdsControl logs (from its worker and receive threads).
struct Warnings {
  std::mutex mu;
  std::vector<std::string> lines;
  DdsControl::Log log() {
    return [this](const std::string& l) {
      std::lock_guard lk(mu);
      lines.push_back(l);
    };
  }
  std::vector<std::string> get() {
    std::lock_guard lk(mu);
    return lines;
  }
};

// A hand-made client: a request writer, and a TRANSIENT_LOCAL reader that collects the replies
// to that writer (decoded; "?" for one that does not decode) for the test's thread.
struct HandClient {
  std::unique_ptr<pubsub::Writer> writer;
  std::unique_ptr<pubsub::Reader> reader;
  std::mutex mu;
  std::vector<wire::Reply> replies;

  explicit HandClient(pubsub::Participant& p) {
    auto w = p.create_writer({service::kControlRequestTopic, service::kControlRequestType});
    REQUIRE(w.ok());
    writer = std::move(w).value();
    pubsub::ReaderQos rq;
    rq.durability = pubsub::DurabilityKind::kTransientLocal;
    auto r = p.create_reader({service::kControlReplyTopic, service::kControlReplyType}, rq,
                             [this](const pubsub::SampleInfo& i, pubsub::Bytes b) {
                               auto rep = wire::decode_reply(b, i.encapsulation, 1 << 20);
                               if (rep && rep->requester != writer->guid()) return;  // another's
                               std::lock_guard lk(mu);  // no Catch2 off the test's thread
                               replies.push_back(rep ? *rep : wire::Reply{{}, 0, "?"});
                             });
    REQUIRE(r.ok());
    reader = std::move(r).value();
  }
  bool send(uint64_t id, const std::string& request) {
    return writer->write(wire::encode(wire::Request{id, request})).ok();
  }
  // True once `n` replies have come, false after 10 s without them.
  bool wait_replies(size_t n) {
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    for (;;) {
      {
        std::lock_guard lk(mu);
        if (replies.size() >= n) return true;
      }
      if (std::chrono::steady_clock::now() >= deadline) return false;
      std::this_thread::sleep_for(5ms);
    }
  }
};

}  // namespace

TEST_CASE("DDS control wire form: the documented bytes, both byte orders, XCDR1 and XCDR2") {
  const auto req = wire::encode(wire::Request{0x0102030405060708ull, "{}"});
  CHECK(req == bytes({8, 7, 6, 5, 4, 3, 2, 1, 3, 0, 0, 0, '{', '}', 0}));
  for (uint16_t le : {0x0001, 0x0007}) {
    auto r = wire::decode_request(req, le, 100);
    REQUIRE(r);
    CHECK(r->id == 0x0102030405060708ull);
    CHECK(r->json == "{}");
  }
  const auto be = bytes({1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 3, '{', '}', 0});
  for (uint16_t e : {0x0000, 0x0006}) {
    auto r = wire::decode_request(be, e, 100);
    REQUIRE(r);
    CHECK(r->id == 0x0102030405060708ull);
    CHECK(r->json == "{}");
  }
  // PL_CDR, a string without its NUL, a length past the end, a short body, over the limit.
  CHECK_FALSE(wire::decode_request(req, 0x0003, 100));
  CHECK_FALSE(wire::decode_request(bytes({1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, '{', '}'}), 1, 100));
  CHECK_FALSE(wire::decode_request(bytes({1, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, '{', 0}), 1, 100));
  CHECK_FALSE(wire::decode_request(bytes({1, 0, 0, 0, 0, 0, 0}), 1, 100));
  CHECK_FALSE(wire::decode_request(bytes({1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}), 1, 100));
  CHECK_FALSE(wire::decode_request(req, 1, 1));

  pubsub::Guid g;
  for (int i = 0; i < 12; ++i) g.prefix[static_cast<size_t>(i)] = static_cast<uint8_t>(i + 1);
  g.entity.value = 0x00000103;
  const auto rep = wire::encode(wire::Reply{g, 9, "{\"ok\":true}"});
  std::vector<std::byte> want = bytes({1, 2, 3, 4, 5, 6, 7, 8, 9,  10, 11, 12, 0, 0, 1, 3,  //
                                       9, 0, 0, 0, 0, 0, 0, 0, 12, 0,  0,  0});
  for (char c : std::string("{\"ok\":true}")) want.push_back(static_cast<std::byte>(c));
  want.push_back(std::byte{0});
  CHECK(rep == want);
  auto r = wire::decode_reply(rep, 1, 100);
  REQUIRE(r);
  CHECK(r->requester == g);
  CHECK(r->id == 9);
  CHECK(r->json == "{\"ok\":true}");
}

TEST_CASE("DDS control: an allowed participant's request runs the handler, the reply is its") {
  auto net = pubsub::FakeNetwork::create();
  auto recorder = participant(net);
  auto client = participant(net);
  const uint32_t client_ip = client->unicast_locator().ipv4();
  Warnings warnings;
  std::vector<json> seen;
  std::mutex seen_mu;
  auto control = DdsControl::start(
      *recorder, {config::Ipv4Network{client_ip & 0xffffff00u, 24}},
      [&](const json& r) {
        std::lock_guard lk(seen_mu);
        seen.push_back(r);
        return json{{"ok", true}, {"echo", r}};
      },
      warnings.log());
  REQUIRE(control.ok());
  const json req{{"cmd", "tag"}, {"name", "x"}};
  auto reply = dds_control_request(*client, req, 10s);
  REQUIRE(reply.ok());
  CHECK(*reply == json{{"ok", true}, {"echo", req}});
  // A second client request (a new writer) gets its own reply, not the first one's again.
  auto again = dds_control_request(*client, json{{"cmd", "status"}}, 10s);
  REQUIRE(again.ok());
  CHECK(*again == json{{"ok", true}, {"echo", {{"cmd", "status"}}}});
  {
    std::lock_guard lk(seen_mu);
    CHECK(seen == std::vector<json>{req, json{{"cmd", "status"}}});
  }
  CHECK(warnings.get().empty());
}

TEST_CASE("DDS control: a participant outside control.allow is refused, warned, not run") {
  auto net = pubsub::FakeNetwork::create();
  auto recorder = participant(net);
  auto client = participant(net);
  const uint32_t client_ip = client->unicast_locator().ipv4();
  Warnings warnings;
  int calls = 0;
  auto control = DdsControl::start(
      *recorder, {host(client_ip + 1), config::Ipv4Network{0x0A000000u, 8}},
      [&](const json&) {
        ++calls;
        return json{{"ok", true}};
      },
      warnings.log());
  REQUIRE(control.ok());
  auto reply = dds_control_request(*client, json{{"cmd", "stop"}}, 10s);
  REQUIRE(reply.ok());
  const std::string who =
      "participant " + client->guid().to_string() + " (" + dotted(client_ip) + ")";
  CHECK(*reply == json{{"ok", false}, {"error", who + " is not in control.allow"}});
  CHECK(calls == 0);
  CHECK(warnings.get() == std::vector<std::string>{"DDS control: refused {\"cmd\":\"stop\"} from " +
                                                   who + ": not in control.allow"});
}

TEST_CASE("DDS control: requests that are not JSON objects or too long are refused, ids match") {
  auto net = pubsub::FakeNetwork::create();
  auto recorder = participant(net);
  auto client = participant(net);
  Warnings warnings;
  auto control = DdsControl::start(
      *recorder, {config::Ipv4Network{0, 0}},
      [](const json&) {
        return json{{"ok", true}};
      },
      warnings.log());
  REQUIRE(control.ok());
  // A hand-made client: four requests on one writer, told apart by their ids.
  HandClient c(*client);
  REQUIRE(c.writer->wait_for_readers(1, 10s));
  REQUIRE(c.send(41, "not json"));
  REQUIRE(c.send(42, "[1]"));
  REQUIRE(c.send(43, "{\"cmd\":\"status\"}"));
  // Over 64 KiB, as the socket's line limit (the sample itself is fine).
  REQUIRE(c.send(44, "{\"cmd\":\"" + std::string(70000, 'x') + "\"}"));
  REQUIRE(c.wait_replies(4));
  std::lock_guard lk(c.mu);
  auto& replies = c.replies;
  REQUIRE(replies.size() == 4);
  const std::string bad =
      R"({"error":"a request is one JSON object, e.g. {\"cmd\":\"status\"}","ok":false})";
  for (size_t i = 0; i < 4; ++i) {
    CHECK(replies[i].requester == c.writer->guid());
    CHECK(replies[i].id == 41 + i);
  }
  CHECK(replies[0].json == bad);
  CHECK(replies[1].json == bad);
  CHECK(replies[2].json == R"({"ok":true})");
  CHECK(replies[3].json == R"({"error":"request longer than 65536 bytes","ok":false})");
  CHECK(warnings.get().empty());
}

TEST_CASE(
    "DDS control: a blocking handler runs off the receive thread, stopping answers queued ones") {
  auto net = pubsub::FakeNetwork::create();
  auto recorder = participant(net);
  auto client = participant(net);
  std::atomic<int> calls{0};
  std::atomic<bool> release{false};
  Warnings warnings;
  auto control = DdsControl::start(
      *recorder, {config::Ipv4Network{0, 0}},
      [&](const json&) {
        ++calls;
        while (!release) std::this_thread::sleep_for(1ms);
        return json{{"ok", true}, {"message", "slow"}};
      },
      warnings.log());
  REQUIRE(control.ok());
  // A second reader of the request topic on the recorder's participant: the receive thread that
  // hands a request to DdsControl's reader hands it to this one as well, so once this one has
  // the second request DdsControl's listener has queued it or is about to (no fixed sleep that a
  // loaded machine outlasts).
  std::atomic<int> arrived{0};
  auto seen =
      recorder->create_reader({service::kControlRequestTopic, service::kControlRequestType}, {},
                              [&](const pubsub::SampleInfo&, pubsub::Bytes) { ++arrived; });
  REQUIRE(seen.ok());
  // A hand-made client (as above) that waits for both readers before it writes.
  HandClient c(*client);
  REQUIRE(c.writer->wait_for_readers(2, 10s));
  REQUIRE(c.send(1, R"({"cmd":"split"})"));
  auto wait_until = [](auto done) {
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (!done() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(1ms);
    return done();
  };
  REQUIRE(wait_until([&] { return calls == 1; }));
  // The handler blocks the worker, not the participant: the second request still arrives and
  // queues.
  REQUIRE(c.send(2, R"({"cmd":"status"})"));
  REQUIRE(wait_until([&] { return arrived == 2; }));
  std::this_thread::sleep_for(100ms);  // DdsControl's listener only decodes and queues
  CHECK(calls == 1);
  // Destroying the control lets the request being run finish and answers the queued one.
  std::thread stopper([&] { control.value().reset(); });
  std::this_thread::sleep_for(100ms);
  release = true;
  stopper.join();
  REQUIRE(c.wait_replies(2));
  std::lock_guard lk(c.mu);
  auto& replies = c.replies;
  REQUIRE(replies.size() == 2);
  CHECK(replies[0].requester == c.writer->guid());
  CHECK(replies[0].id == 1);
  CHECK(json::parse(replies[0].json) == json{{"ok", true}, {"message", "slow"}});
  CHECK(replies[1].id == 2);
  CHECK(json::parse(replies[1].json) == json{{"ok", false}, {"error", "the recorder is stopping"}});
  CHECK(calls == 1);
}

TEST_CASE("dds_control_request: no recorder on the domain is kTimeout") {
  auto net = pubsub::FakeNetwork::create();
  auto client = participant(net, 4);
  const auto t0 = std::chrono::steady_clock::now();
  auto r = dds_control_request(*client, json{{"cmd", "status"}}, 700ms);
  const auto took = std::chrono::steady_clock::now() - t0;
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == common::Errc::kTimeout);
  CHECK(r.error().message == "no recorder answers on domain 4");
  CHECK(took >= 650ms);
  CHECK(took < 10s);  // the timeout, not the 30 s default (generous: ThreadSanitizer, load)
}

namespace {

const service::ControlKey kDdsKey{"a key of thirty-two bytes, really"};

// A DdsControl that asks for kDdsKey, allows everyone, and answers {"ok":true,"echo":REQUEST}; its
// clock is fixed at `now_ms`.
struct KeyedControl {
  Warnings warnings;
  std::atomic<int> calls{0};
  std::unique_ptr<DdsControl> control;
  KeyedControl(pubsub::Participant& recorder, std::function<int64_t()> now_ms) {
    service::DdsControlAuth auth;
    auth.key = kDdsKey;
    auth.max_skew = 30s;
    auth.now_ms = std::move(now_ms);
    auto c = DdsControl::start(
        recorder, {config::Ipv4Network{0, 0}},
        [this](const json& r) {
          ++calls;
          return json{{"ok", true}, {"echo", r}};
        },
        warnings.log(), std::move(auth));
    REQUIRE(c.ok());
    control = std::move(c).value();
  }
};

}  // namespace

TEST_CASE("DDS control with a key: signed requests run with a signed reply, others are refused") {
  auto net = pubsub::FakeNetwork::create();
  auto recorder = participant(net);
  auto client = participant(net);
  KeyedControl k(*recorder, service::unix_ms_now);
  // ctl --key-file: signed, and the reply's signature is checked (dds_control_request opens it).
  const json req{{"cmd", "tag"}, {"name", "x"}};
  auto reply = dds_control_request(*client, req, 10s, &kDdsKey);
  REQUIRE(reply.ok());
  CHECK(*reply == json{{"ok", true}, {"echo", req}});
  // Unsigned, and signed with another key: plain refusals, nothing run.
  auto plain = dds_control_request(*client, json{{"cmd", "stop"}}, 10s);
  REQUIRE(plain.ok());
  const std::string not_signed =
      "request not signed: this recorder carries out only requests signed with its "
      "control.key_file (pubsub-recorder ctl --dds --key-file FILE)";
  CHECK(*plain == json{{"ok", false}, {"error", not_signed}});
  const service::ControlKey other{"another key, also long enough"};
  auto forged = dds_control_request(*client, json{{"cmd", "stop"}}, 10s, &other);
  REQUIRE(forged.ok());
  CHECK(*forged ==
        json{{"ok", false}, {"error", "bad signature: not signed with this recorder's key"}});
  CHECK(k.calls == 1);
  // A second unsigned request: counted, not logged again within DdsControl::kLogEvery.
  REQUIRE(dds_control_request(*client, json{{"cmd", "stop"}}, 10s).ok());
  CHECK(k.control->refusals()->by_name() == std::map<std::string, uint64_t>{{"bad_signature", 1},
                                                                            {"not_allowed", 0},
                                                                            {"replayed", 0},
                                                                            {"stale", 0},
                                                                            {"unsigned", 2}});
  const std::string who = "participant " + client->guid().to_string() + " (" +
                          dotted(client->unicast_locator().ipv4()) + ")";
  CHECK(k.warnings.get() ==
        std::vector<std::string>{
            "DDS control: refused {\"cmd\":\"stop\"} from " + who + ": " + not_signed,
            "DDS control: refused {\"cmd\":\"stop\"} from " + who +
                ": bad signature: not signed with this recorder's key"});
}

TEST_CASE("DDS control with a key: a captured request sent again, from another writer, or late") {
  auto net = pubsub::FakeNetwork::create();
  auto recorder = participant(net);
  auto client = participant(net);
  constexpr int64_t kNow = 1'800'000'000'000;
  KeyedControl k(*recorder, [] { return kNow; });
  HandClient c(*client);
  HandClient thief(*client);
  REQUIRE(c.writer->wait_for_readers(1, 10s));
  REQUIRE(thief.writer->wait_for_readers(1, 10s));
  const std::string from = c.writer->guid().to_string();
  const std::string nonce = "0123456789abcdef0123456789abcdef";
  const std::string request =
      service::sign_request(kDdsKey, 0, from, kNow - 1000, nonce, R"({"cmd":"split"})");
  REQUIRE(c.send(1, request));
  REQUIRE(c.send(2, request));  // the same bytes again: a replay
  // The same bytes from another writer, and a request signed 31 s before the recorder's clock.
  REQUIRE(thief.send(3, request));
  REQUIRE(
      c.send(4, service::sign_request(kDdsKey, 0, from, kNow - 31'000,
                                      "ffffffffffffffffffffffffffffffff", R"({"cmd":"split"})")));
  REQUIRE(c.wait_replies(3));
  REQUIRE(thief.wait_replies(1));
  std::lock_guard lk(c.mu);
  REQUIRE(c.replies.size() == 3);
  auto first = service::open_reply(kDdsKey, from, nonce, c.replies[0].json);
  REQUIRE(first.ok());
  CHECK(*first == json{{"ok", true}, {"echo", {{"cmd", "split"}}}});
  CHECK(json::parse(c.replies[1].json) ==
        json{{"ok", false}, {"error", "request already carried out (its nonce was seen)"}});
  CHECK(
      json::parse(c.replies[2].json) ==
      json{{"ok", false},
           {"error",
            "request time is 31.0 s behind this recorder's clock (control.max_clock_skew_s 30)"}});
  std::lock_guard tl(thief.mu);
  CHECK(json::parse(thief.replies[0].json) ==
        json{{"ok", false},
             {"error", "signed for writer " + from + " but sent by writer " +
                           thief.writer->guid().to_string()}});
  CHECK(k.calls == 1);
  CHECK(k.control->refusals()->by_name() == std::map<std::string, uint64_t>{{"bad_signature", 0},
                                                                            {"not_allowed", 0},
                                                                            {"replayed", 2},
                                                                            {"stale", 1},
                                                                            {"unsigned", 0}});
}
