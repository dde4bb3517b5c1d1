// Signed DDS control requests (control_auth.hpp): HMAC-SHA256 against RFC 4231, key files and
// their modes, the verifier's refusals by reason with their exact texts, nonces remembered for
// the clock window only, and the client's check of the reply.
#include "control_auth.hpp"
#include "scratch_dir.hpp"

#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

using nlohmann::json;
using service::ControlKey;
using service::Refusal;
using service::RequestVerifier;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

const ControlKey kKey{"0123456789abcdef0123456789abcdef"};
const std::string kFrom = "0102030405060708090a0b0c:00000103";
const std::string kNonce = "00112233445566778899aabbccddeeff";
constexpr int64_t kNow = 1'800'000'000'000;  // ms since 1970

json signed_request(const std::string& text, int64_t time_ms = kNow,
                    const std::string& nonce = kNonce, const ControlKey& key = kKey,
                    uint32_t domain = 7, const std::string& from = kFrom) {
  return json::parse(service::sign_request(key, domain, from, time_ms, nonce, text));
}

using service_test::TempDir;

}  // namespace

TEST_CASE("control auth: HMAC-SHA256 gives RFC 4231's test vectors (cases 1 and 2)") {
  CHECK(service::hmac_sha256_hex(std::string(20, '\x0b'), "Hi There") ==
        "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  CHECK(service::hmac_sha256_hex("Jefe", "what do ya want for nothing?") ==
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST_CASE("control auth: a key file of mode 600 is read without its trailing newline") {
  TempDir d;
  auto k = service::load_control_key(d.file("key", kKey.bytes + "\n", 0600));
  REQUIRE(k.ok());
  CHECK(k->bytes == kKey.bytes);
  auto r = service::load_control_key(d.file("ro", kKey.bytes, 0400));
  REQUIRE(r.ok());
  CHECK(r->bytes == kKey.bytes);
}

TEST_CASE(
    "control auth: key files others may read, short, long, missing or not files are refused") {
  TempDir d;
  const auto open = d.file("open", kKey.bytes, 0644);
  auto k = service::load_control_key(open);
  REQUIRE_FALSE(k.ok());
  CHECK(k.error().code == service::Errc::kInvalidArgument);
  CHECK(k.error().message == "control key file " + open.string() +
                                 " has mode 0644: others than its owner may read or write it "
                                 "(chmod 600 " +
                                 open.string() + ")");
  CHECK_FALSE(service::load_control_key(d.file("group", kKey.bytes, 0620)).ok());
  const auto short_key = d.file("short", "0123456789abcde\n", 0600);
  k = service::load_control_key(short_key);
  REQUIRE_FALSE(k.ok());
  CHECK(k.error().message == "control key file " + short_key.string() +
                                 " holds 15 bytes; a key is 16 to 4096 bytes (make one with: "
                                 "openssl rand -hex 32 > " +
                                 short_key.string() + ")");
  CHECK_FALSE(service::load_control_key(d.file("long", std::string(4097, 'k'), 0600)).ok());
  k = service::load_control_key(d.dir() / "missing");
  REQUIRE_FALSE(k.ok());
  CHECK(k.error().code == service::Errc::kNotFound);
  CHECK(k.error().message ==
        "control key file " + (d.dir() / "missing").string() + ": No such file or directory");
  k = service::load_control_key(d.dir());
  REQUIRE_FALSE(k.ok());
  CHECK(k.error().message == "control key file " + d.dir().string() + " is not a regular file");
}

TEST_CASE("control auth: a signed request is carried out once, with its command and nonce") {
  RequestVerifier v(kKey, 7, 30s);
  const auto o = v.check(signed_request(R"({"cmd":"tag","name":"x"})"), kFrom, kNow);
  REQUIRE(o.ok);
  CHECK(o.request == json{{"cmd", "tag"}, {"name", "x"}});
  CHECK(o.signed_request);
  CHECK(o.nonce == kNonce);
  // The same request again (a captured copy): refused, whatever the clock says within the window.
  const auto again = v.check(signed_request(R"({"cmd":"tag","name":"x"})"), kFrom, kNow + 29'000);
  CHECK_FALSE(again.ok);
  CHECK(again.refusal == Refusal::kReplayed);
  CHECK(again.why == "request already carried out (its nonce was seen)");
  // Another nonce is another request.
  CHECK(v.check(signed_request(R"({"cmd":"status"})", kNow, std::string(32, 'a')), kFrom, kNow).ok);
}

TEST_CASE(
    "control auth: unsigned, tampered, other key, domain, writer, times are refused by reason") {
  RequestVerifier v(kKey, 7, 30s);
  const auto refused = [&](const json& m, Refusal r, const std::string& why,
                           const std::string& from = kFrom) {
    const auto o = v.check(m, from, kNow);
    CHECK_FALSE(o.ok);
    CHECK(o.refusal == r);
    CHECK(o.why == why);
  };
  refused(json{{"cmd", "stop"}}, Refusal::kUnsigned,
          "request not signed: this recorder carries out only requests signed with its "
          "control.key_file (pubsub-recorder ctl --dds --key-file FILE)");
  json tampered = signed_request(R"({"cmd":"status"})");
  tampered["request"] = R"({"cmd":"stop"})";
  refused(tampered, Refusal::kBadSignature, "bad signature: not signed with this recorder's key");
  refused(signed_request(R"({"cmd":"stop"})", kNow, kNonce, ControlKey{std::string(32, 'z')}),
          Refusal::kBadSignature, "bad signature: not signed with this recorder's key");
  json no_nonce = signed_request(R"({"cmd":"stop"})");
  no_nonce.erase("nonce");
  refused(no_nonce, Refusal::kBadSignature,
          "signed request without the fields auth \"hmac-sha256\", domain, from, time_ms, nonce "
          "(32 hex digits), request and mac");
  refused(signed_request(R"({"cmd":"stop"})", kNow, kNonce, kKey, 8), Refusal::kReplayed,
          "signed for domain 8, this recorder is on domain 7");
  const std::string other = "0102030405060708090a0b0c:00000203";
  refused(signed_request(R"({"cmd":"stop"})"), Refusal::kReplayed,
          "signed for writer " + kFrom + " but sent by writer " + other, other);
  refused(signed_request(R"({"cmd":"stop"})", kNow - 60'000), Refusal::kStale,
          "request time is 60.0 s behind this recorder's clock (control.max_clock_skew_s 30)");
  refused(signed_request(R"({"cmd":"stop"})", kNow + 30'500), Refusal::kStale,
          "request time is 30.5 s ahead of this recorder's clock (control.max_clock_skew_s 30)");
  refused(signed_request("[1]"), Refusal::kBadSignature,
          "the signed request is not one JSON object, e.g. {\"cmd\":\"status\"}");
}

TEST_CASE(
    "control auth: a nonce is remembered until its time leaves the window, then it is stale") {
  RequestVerifier v(kKey, 7, 30s);
  const json m = signed_request(R"({"cmd":"split"})");
  REQUIRE(v.check(m, kFrom, kNow).ok);
  CHECK(v.check(m, kFrom, kNow + 30'000).refusal == Refusal::kReplayed);
  const auto late = v.check(m, kFrom, kNow + 30'001);
  CHECK_FALSE(late.ok);
  CHECK(late.refusal == Refusal::kStale);
}

TEST_CASE("control auth: without a key, unsigned requests run and signed ones are refused") {
  RequestVerifier v(std::nullopt, 7, 30s);
  const auto o = v.check(json{{"cmd", "status"}}, kFrom, kNow);
  REQUIRE(o.ok);
  CHECK(o.request == json{{"cmd", "status"}});
  CHECK_FALSE(o.signed_request);
  const auto s = v.check(signed_request(R"({"cmd":"status"})"), kFrom, kNow);
  CHECK_FALSE(s.ok);
  CHECK(s.refusal == Refusal::kBadSignature);
  CHECK(s.why ==
        "this recorder has no control.key_file and cannot check a signed request: send it "
        "without --key-file, or give the recorder the key");
}

TEST_CASE("control auth: the client opens signed replies and unsigned refusals only") {
  RequestVerifier v(kKey, 7, 30s);
  const std::string inner = R"({"ok":true,"message":"split"})";
  const std::string reply = v.sign_reply(kFrom, kNonce, inner);
  auto opened = service::open_reply(kKey, kFrom, kNonce, reply);
  REQUIRE(opened.ok());
  CHECK(*opened == json::parse(inner));
  // Another request's reply, another writer's, another key's, or one tampered with.
  const std::string bad_sig =
      "the reply's signature does not match the key: forged, or signed with another key";
  CHECK(service::open_reply(kKey, kFrom, std::string(32, 'b'), reply).error().message == bad_sig);
  CHECK(service::open_reply(kKey, "0102030405060708090a0b0c:00000203", kNonce, reply)
            .error()
            .message == bad_sig);
  CHECK(
      service::open_reply(ControlKey{std::string(20, 'q')}, kFrom, kNonce, reply).error().message ==
      bad_sig);
  json t = json::parse(reply);
  t["reply"] = R"({"ok":true,"message":"stopping"})";
  CHECK(service::open_reply(kKey, kFrom, kNonce, t.dump()).error().message == bad_sig);
  // Unsigned: a refusal is taken (nothing was done), a success is not.
  const std::string refusal = R"({"ok":false,"error":"bad signature"})";
  opened = service::open_reply(kKey, kFrom, kNonce, refusal);
  REQUIRE(opened.ok());
  CHECK(*opened == json::parse(refusal));
  auto unsigned_ok = service::open_reply(kKey, kFrom, kNonce, inner);
  REQUIRE_FALSE(unsigned_ok.ok());
  CHECK(unsigned_ok.error().code == service::Errc::kCorrupt);
  CHECK(unsigned_ok.error().message ==
        "the recorder's reply is not signed, although the request was: it does not hold the key "
        "(control.key_file), or the reply is forged");
}

TEST_CASE("control auth: nonces are 32 hex digits and differ") {
  const std::string a = service::random_nonce(), b = service::random_nonce();
  CHECK(a.size() == 32);
  CHECK(a.find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(a != b);
}
