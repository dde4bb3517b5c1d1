// Signed DDS control requests (config control.key_file; pubsub-recorder ctl --key-file; README
// "DDS control: signed requests"). Used by DdsControl (the recorder's side) and by
// dds_control_request (the client's side).
//
// OVERVIEW
// - The key: a file of at least 16 bytes (trailing whitespace and newlines are not part of it),
//   a regular file that neither group nor others may read or write, as ssh asks of its keys
//   (load_control_key). Both sides hold the same key.
// - A signed request is the ControlRequest's JSON text as an envelope around the command's text:
//     {"auth":"hmac-sha256","domain":7,"from":"<request writer GUID>","time_ms":<unix ms>,
//      "nonce":"<32 hex digits>","request":"{\"cmd\":\"tag\",\"name\":\"x\"}","mac":"<64 hex>"}
//   mac = HMAC-SHA256(key, "pubsub-recorder control request v1\n" domain "\n" from "\n" time_ms
//   "\n" nonce "\n" request), in lower-case hex. The MAC covers the recorder's identity as the
//   client can name it before any recorder answered (the domain: every recorder of the domain
//   that holds the key carries a request out, as ctl --dds means), the sender (the writer whose
//   GUID the reply is addressed to: a request copied into another writer is refused), the time
//   and a random nonce.
// - The recorder (RequestVerifier) refuses a request that is not signed, whose MAC is wrong,
//   that was signed for another domain or sent by another writer than it names, whose time is
//   more than max_skew from its own clock, or whose nonce it has already carried out within that
//   window (it remembers a nonce until its time is more than max_skew past). A captured request
//   therefore cannot be carried out a second time: within the window its nonce is known, after it
//   its time is too old.
// - The reply to an authenticated request is signed too, so the client knows a holder of the key
//   answered: {"auth":"hmac-sha256","nonce":"<the request's>","reply":"<reply JSON text>",
//   "mac":"<hex>"}, mac over "pubsub-recorder control reply v1\n" from "\n" nonce "\n" reply.
//   Refusals of requests that did not authenticate cannot be signed (the sender's key is not
//   ours) and go out as plain {"ok":false,...}: the client accepts an unsigned refusal, never an
//   unsigned success.
// - Not protected: confidentiality (requests and replies are readable by anyone on the network;
//   DDS Security would encrypt them) and availability (anyone can flood the request topic).
// - Threads: RequestVerifier is not thread safe; DdsControl's worker is its only user.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_map>

#include "service/result.hpp"

namespace service {

struct ControlKey {
  std::string bytes;
};

// The key in `path`. Errors: kNotFound (no such file), kInvalidArgument (not a regular file;
// readable or writable by group or others, with the chmod that fixes it; shorter than 16 or
// longer than 4096 bytes), kIo (cannot be read).
Result<ControlKey> load_control_key(const std::filesystem::path& path);

// HMAC-SHA256 of `message` under `key`, 64 lower-case hex digits.
std::string hmac_sha256_hex(const std::string& key, const std::string& message);

// 32 hex digits from the system's random number generator.
std::string random_nonce();

int64_t unix_ms_now();

// The client's side: the envelope for `request_text` (one JSON object's text).
std::string sign_request(const ControlKey& key, uint32_t domain, const std::string& from,
                         int64_t time_ms, const std::string& nonce,
                         const std::string& request_text);

// The client's side: the reply's JSON object from `reply_text`, the recorder's answer to the
// signed request `nonce` of writer `from`. A signed reply must carry our nonce and a valid MAC;
// an unsigned one is accepted only as a refusal ({"ok":false,...}). Errors: kCorrupt (not JSON,
// a bad MAC, another nonce, an unsigned success).
Result<nlohmann::json> open_reply(const ControlKey& key, const std::string& from,
                                  const std::string& nonce, const std::string& reply_text);

// Why a request was refused; the counters of status's "control_refused" and the metric
// pubsub_recorder_control_refused_total{reason} go by these names.
enum class Refusal { kUnsigned, kBadSignature, kStale, kReplayed, kNotAllowed };
inline constexpr int kRefusalCount = 5;
const char* to_string(Refusal r);  // "unsigned", "bad_signature", "stale", "replayed",
                                   // "not_allowed"

// Refusals counted by reason; any thread.
struct RefusalCounts {
  std::array<std::atomic<uint64_t>, kRefusalCount> n{};
  void add(Refusal r) { n[static_cast<size_t>(r)].fetch_add(1, std::memory_order_relaxed); }
  std::map<std::string, uint64_t> by_name() const;  // every reason, by to_string's name
};

class RequestVerifier {
 public:
  // No key: requests must not be signed (a signed one is refused: this recorder cannot check
  // it, and carrying it out would make the client believe it was checked).
  RequestVerifier(std::optional<ControlKey> key, uint32_t domain,
                  std::chrono::milliseconds max_skew);

  struct Outcome {
    bool ok = false;
    Refusal refusal = Refusal::kUnsigned;  // when !ok
    std::string why;                       // when !ok: the reply's error text
    nlohmann::json request;                // when ok: the command object
    bool signed_request = false;           // when ok: the reply is to be signed
    std::string nonce;                     // when signed_request
  };
  // `message`: the ControlRequest's text, parsed (one JSON object); `from`: the GUID of the
  // writer it came from; `now_ms`: the recorder's clock. The nonce of a request that
  // authenticates is remembered.
  Outcome check(const nlohmann::json& message, const std::string& from, int64_t now_ms);

  // The reply for an authenticated request: the envelope around `reply`.
  std::string sign_reply(const std::string& from, const std::string& nonce,
                         const std::string& reply_text) const;

 private:
  void forget_old(int64_t now_ms);
  std::optional<ControlKey> key_;
  uint32_t domain_;
  int64_t max_skew_ms_;
  std::unordered_map<std::string, int64_t> seen_;  // nonce -> its request's time_ms
};

}  // namespace service
