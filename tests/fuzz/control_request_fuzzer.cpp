// Fuzz target: a DDS control request as the recorder takes it from the network
// (service/src/recorder/dds_control.cpp and control_auth.hpp): the ControlRequest CDR body, its
// JSON text, then RequestVerifier::check with a key and without one, and the client's
// open_reply over the same text. Beyond "no crash": nothing throws; with a key, a request is
// carried out only if it is signed, and the same request a second time is refused as replayed;
// without a key, a signed request is refused and an unsigned object runs as it is.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "control_auth.hpp"
#include "dds_control_wire.hpp"

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

// The key of the corpus's signed requests (corpus/control_request), and the clock they were
// signed at.
const service::ControlKey kKey{"fuzzing key, not a secret, 32 b"};
constexpr int64_t kNow = 1'800'000'000'000;
const std::string kFrom = "0102030405060708090a0b0c:00000103";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const pubsub::Bytes body(reinterpret_cast<const std::byte*>(data), size);
  const auto request = service::dds_control_wire::decode_request(body, 0x0001, 64 * 1024);
  if (!request) return 0;
  const auto m = nlohmann::json::parse(request->json, nullptr, false);
  (void)service::open_reply(kKey, kFrom, "00000000000000000000000000000000", request->json);
  if (m.is_discarded() || !m.is_object()) return 0;
  service::RequestVerifier keyed(kKey, 0, std::chrono::seconds(30));
  const auto o = keyed.check(m, kFrom, kNow);
  if (o.ok) {
    check(o.signed_request && o.request.is_object() && o.nonce.size() == 32);
    const auto again = keyed.check(m, kFrom, kNow);
    check(!again.ok && again.refusal == service::Refusal::kReplayed);
    (void)keyed.sign_reply(kFrom, o.nonce, R"({"ok":true})");
  } else {
    check(!o.why.empty());
  }
  service::RequestVerifier open(std::nullopt, 0, std::chrono::seconds(30));
  const auto u = open.check(m, kFrom, kNow);
  check(u.ok == !m.contains("auth"));
  if (u.ok) check(u.request == m && !u.signed_request);
  return 0;
}
