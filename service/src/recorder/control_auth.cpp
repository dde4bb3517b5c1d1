#include "control_auth.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>
#include <span>

#include "common/hex.hpp"

namespace service {
namespace {

using nlohmann::json;

constexpr const char* kScheme = "hmac-sha256";
constexpr size_t kMinKeyBytes = 16;
constexpr size_t kMaxKeyBytes = 4096;
constexpr size_t kMaxRemembered = 1 << 16;  // nonces; only requests that authenticated count

bool equal_mac(const std::string& a, const std::string& b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

bool is_hex(const std::string& s, size_t n) {
  if (s.size() != n) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

std::string request_mac(const ControlKey& key, uint32_t domain, const std::string& from,
                        int64_t time_ms, const std::string& nonce, const std::string& request) {
  return hmac_sha256_hex(key.bytes, "pubsub-recorder control request v1\n" +
                                        std::to_string(domain) + "\n" + from + "\n" +
                                        std::to_string(time_ms) + "\n" + nonce + "\n" + request);
}

std::string reply_mac(const ControlKey& key, const std::string& from, const std::string& nonce,
                      const std::string& reply) {
  return hmac_sha256_hex(key.bytes,
                         "pubsub-recorder control reply v1\n" + from + "\n" + nonce + "\n" + reply);
}

std::string octal_mode(mode_t m) {
  char b[8];
  std::snprintf(b, sizeof b, "%04o", static_cast<unsigned>(m & 07777));
  return b;
}

}  // namespace

Result<ControlKey> load_control_key(const std::filesystem::path& path) {
  const std::string p = path.string();
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) {
    const int e = errno;
    return Error{e == ENOENT ? Errc::kNotFound : Errc::kIo,
                 "control key file " + p + ": " + std::strerror(e)};
  }
  if (!S_ISREG(st.st_mode))
    return Error{Errc::kInvalidArgument, "control key file " + p + " is not a regular file"};
  if ((st.st_mode & 077) != 0) {
    return Error{Errc::kInvalidArgument, "control key file " + p + " has mode " +
                                             octal_mode(st.st_mode) +
                                             ": others than its owner may read or write it "
                                             "(chmod 600 " +
                                             p + ")"};
  }
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return Error{Errc::kIo, "control key file " + p + ": cannot be read"};
  while (!bytes.empty() && std::strchr(" \t\r\n", bytes.back()) != nullptr) bytes.pop_back();
  if (bytes.size() < kMinKeyBytes || bytes.size() > kMaxKeyBytes) {
    return Error{Errc::kInvalidArgument,
                 "control key file " + p + " holds " + std::to_string(bytes.size()) +
                     " bytes; a key is " + std::to_string(kMinKeyBytes) + " to " +
                     std::to_string(kMaxKeyBytes) +
                     " bytes (make one with: openssl rand -hex 32 > " + p + ")"};
  }
  return ControlKey{std::move(bytes)};
}

std::string hmac_sha256_hex(const std::string& key, const std::string& message) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), out, &n);
  return common::to_hex(std::span<const uint8_t>(out, n));
}

std::string random_nonce() {
  unsigned char b[16];
  if (RAND_bytes(b, sizeof b) != 1) {
    // OpenSSL's generator failed (no entropy source): fall back to the kernel's, via
    // std::random_device (getrandom on Linux), so a nonce is never a constant.
    std::random_device rd;
    for (size_t i = 0; i < sizeof b; i += 4) {
      const uint32_t v = rd();
      std::memcpy(b + i, &v, 4);
    }
  }
  return common::to_hex(std::span<const uint8_t>(b, sizeof b));
}

int64_t unix_ms_now() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string sign_request(const ControlKey& key, uint32_t domain, const std::string& from,
                         int64_t time_ms, const std::string& nonce,
                         const std::string& request_text) {
  const json envelope = {{"auth", kScheme},
                         {"domain", domain},
                         {"from", from},
                         {"time_ms", time_ms},
                         {"nonce", nonce},
                         {"request", request_text},
                         {"mac", request_mac(key, domain, from, time_ms, nonce, request_text)}};
  return envelope.dump();
}

Result<nlohmann::json> open_reply(const ControlKey& key, const std::string& from,
                                  const std::string& nonce, const std::string& reply_text) {
  const json outer = json::parse(reply_text, nullptr, false);
  if (outer.is_discarded() || !outer.is_object())
    return Error{Errc::kCorrupt, "reply is not a JSON object: " + reply_text};
  if (!outer.contains("auth")) {
    if (outer.value("ok", true) == false) return outer;  // a refusal: nothing was carried out
    return Error{Errc::kCorrupt,
                 "the recorder's reply is not signed, although the request was: it does not hold "
                 "the key (control.key_file), or the reply is forged"};
  }
  const auto field = [&](const char* k) {
    return outer.contains(k) && outer[k].is_string() ? outer[k].get<std::string>() : std::string();
  };
  const std::string reply = field("reply");
  if (field("auth") != kScheme || field("nonce") != nonce ||
      !equal_mac(field("mac"), reply_mac(key, from, nonce, reply))) {
    return Error{Errc::kCorrupt,
                 "the reply's signature does not match the key: forged, or "
                 "signed with another key"};
  }
  json inner = json::parse(reply, nullptr, false);
  if (inner.is_discarded() || !inner.is_object())
    return Error{Errc::kCorrupt, "reply is not a JSON object: " + reply};
  return inner;
}

const char* to_string(Refusal r) {
  switch (r) {
    case Refusal::kUnsigned:
      return "unsigned";
    case Refusal::kBadSignature:
      return "bad_signature";
    case Refusal::kStale:
      return "stale";
    case Refusal::kReplayed:
      return "replayed";
    case Refusal::kNotAllowed:
      return "not_allowed";
  }
  return "?";
}

std::map<std::string, uint64_t> RefusalCounts::by_name() const {
  std::map<std::string, uint64_t> out;
  for (size_t i = 0; i < n.size(); ++i)
    out[to_string(static_cast<Refusal>(i))] = n[i].load(std::memory_order_relaxed);
  return out;
}

RequestVerifier::RequestVerifier(std::optional<ControlKey> key, uint32_t domain,
                                 std::chrono::milliseconds max_skew)
    : key_(std::move(key)), domain_(domain), max_skew_ms_(max_skew.count()) {}

RequestVerifier::Outcome RequestVerifier::check(const json& m, const std::string& from,
                                                int64_t now_ms) {
  Outcome o;
  const auto refuse = [&](Refusal r, std::string why) {
    o.refusal = r;
    o.why = std::move(why);
    return o;
  };
  const bool is_signed = m.contains("auth");
  if (!key_) {
    if (is_signed)
      return refuse(Refusal::kBadSignature,
                    "this recorder has no control.key_file and cannot check a signed request: "
                    "send it without --key-file, or give the recorder the key");
    o.ok = true;
    o.request = m;
    return o;
  }
  if (!is_signed)
    return refuse(Refusal::kUnsigned,
                  "request not signed: this recorder carries out only requests signed with its "
                  "control.key_file (pubsub-recorder ctl --dds --key-file FILE)");
  const bool shaped =
      m["auth"] == kScheme && m.contains("domain") && m["domain"].is_number_unsigned() &&
      m.contains("from") && m["from"].is_string() && m.contains("time_ms") &&
      m["time_ms"].is_number_integer() && m.contains("nonce") && m["nonce"].is_string() &&
      is_hex(m["nonce"].get<std::string>(), 32) && m.contains("request") &&
      m["request"].is_string() && m.contains("mac") && m["mac"].is_string();
  if (!shaped)
    return refuse(Refusal::kBadSignature,
                  "signed request without the fields auth \"hmac-sha256\", domain, from, time_ms, "
                  "nonce (32 hex digits), request and mac");
  const auto domain = m["domain"].get<uint64_t>();
  const auto sender = m["from"].get<std::string>();
  const auto time_ms = m["time_ms"].get<int64_t>();
  const auto nonce = m["nonce"].get<std::string>();
  const auto text = m["request"].get<std::string>();
  if (domain > UINT32_MAX ||
      !equal_mac(m["mac"].get<std::string>(),
                 request_mac(*key_, static_cast<uint32_t>(domain), sender, time_ms, nonce, text)))
    return refuse(Refusal::kBadSignature, "bad signature: not signed with this recorder's key");
  if (domain != domain_)
    return refuse(Refusal::kReplayed, "signed for domain " + std::to_string(domain) +
                                          ", this recorder is on domain " +
                                          std::to_string(domain_));
  if (sender != from)
    return refuse(Refusal::kReplayed,
                  "signed for writer " + sender + " but sent by writer " + from);
  // (Compared without subtracting: time_ms is the sender's and may be any 64-bit value.)
  if (time_ms < now_ms - max_skew_ms_ || time_ms > now_ms + max_skew_ms_) {
    const double skew_s = (static_cast<double>(time_ms) - static_cast<double>(now_ms)) / 1e3;
    char b[200];
    std::snprintf(b, sizeof b,
                  "request time is %.1f s %s this recorder's clock (control.max_clock_skew_s "
                  "%.0f)",
                  skew_s < 0 ? -skew_s : skew_s, skew_s < 0 ? "behind" : "ahead of",
                  static_cast<double>(max_skew_ms_) / 1e3);
    return refuse(Refusal::kStale, b);
  }
  forget_old(now_ms);
  if (seen_.count(nonce) != 0)
    return refuse(Refusal::kReplayed, "request already carried out (its nonce was seen)");
  if (seen_.size() >= kMaxRemembered)
    return refuse(Refusal::kReplayed, "too many signed requests within control.max_clock_skew_s");
  seen_.emplace(nonce, time_ms);
  json request = json::parse(text, nullptr, false);
  if (request.is_discarded() || !request.is_object())
    return refuse(Refusal::kBadSignature,
                  "the signed request is not one JSON object, e.g. {\"cmd\":\"status\"}");
  o.ok = true;
  o.request = std::move(request);
  o.signed_request = true;
  o.nonce = nonce;
  return o;
}

void RequestVerifier::forget_old(int64_t now_ms) {
  // A nonce can come back only with its own time_ms, which is refused once it is more than
  // max_skew from now: older ones need not be remembered.
  for (auto it = seen_.begin(); it != seen_.end();) {
    if (it->second < now_ms - max_skew_ms_)
      it = seen_.erase(it);
    else
      ++it;
  }
}

std::string RequestVerifier::sign_reply(const std::string& from, const std::string& nonce,
                                        const std::string& reply_text) const {
  const json envelope = {{"auth", kScheme},
                         {"nonce", nonce},
                         {"reply", reply_text},
                         {"mac", reply_mac(*key_, from, nonce, reply_text)}};
  return envelope.dump();
}

}  // namespace service
