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
// (decoded; "?" for one that does not decode) for the test's thread.
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
