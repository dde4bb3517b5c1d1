#include "dds_control_wire.hpp"

#include <cstring>

namespace service {
namespace {

// ---- CDR ------------------------------------------------------------------------------------

// Encapsulation identifiers (DDS-XTypes 7.6.3.1.2): PLAIN_CDR and PLAIN_CDR2, BE and LE.
constexpr uint16_t kCdrBe = 0x0000, kCdrLe = 0x0001, kCdr2Be = 0x0006, kCdr2Le = 0x0007;

class CdrOut {
 public:
  void octets(const uint8_t* p, size_t n) {
    const auto* b = reinterpret_cast<const std::byte*>(p);
    out_.insert(out_.end(), b, b + n);
  }
  void u32(uint32_t v) { little_endian(v, 4); }
  void u64(uint64_t v) { little_endian(v, 8); }
  void string(const std::string& s) {
    u32(static_cast<uint32_t>(s.size() + 1));
    octets(reinterpret_cast<const uint8_t*>(s.data()), s.size());
    out_.push_back(std::byte{0});
  }
  std::vector<std::byte> take() { return std::move(out_); }

 private:
  // Every member sits at an offset its size divides (see the header): no padding to add.
  void little_endian(uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out_.push_back(static_cast<std::byte>(v >> (8 * i)));
  }
  std::vector<std::byte> out_;
};

class CdrIn {
 public:
  CdrIn(pubsub::Bytes body, bool big_endian) : body_(body), big_endian_(big_endian) {}
  bool octets(uint8_t* p, size_t n) {
    if (body_.size() - at_ < n) return false;
    std::memcpy(p, body_.data() + at_, n);
    at_ += n;
    return true;
  }
  bool u32(uint32_t& v) {
    uint64_t x = 0;
    if (!number(x, 4)) return false;
    v = static_cast<uint32_t>(x);
    return true;
  }
  bool u64(uint64_t& v) { return number(v, 8); }
  bool string(std::string& s, size_t max) {
    uint32_t n = 0;
    if (!u32(n) || n == 0 || n - 1 > max || body_.size() - at_ < n) return false;
    const char* p = reinterpret_cast<const char*>(body_.data() + at_);
    if (p[n - 1] != '\0') return false;
    s.assign(p, n - 1);
    at_ += n;
    return true;
  }

 private:
  bool number(uint64_t& v, size_t n) {
    uint8_t b[8];
    if (!octets(b, n)) return false;
    v = 0;
    for (size_t i = 0; i < n; ++i) {
      const size_t shift = 8 * (big_endian_ ? n - 1 - i : i);
      v |= static_cast<uint64_t>(b[i]) << shift;
    }
    return true;
  }
  pubsub::Bytes body_;
  size_t at_ = 0;
  bool big_endian_;
};

// Big endian (true) or little (false) for the encapsulations the types' form allows.
std::optional<bool> big_endian(uint16_t encapsulation) {
  switch (encapsulation) {
    case kCdrBe:
    case kCdr2Be:
      return true;
    case kCdrLe:
    case kCdr2Le:
      return false;
    default:
      return std::nullopt;
  }
}

}  // namespace

// ---- wire form ------------------------------------------------------------------------------

namespace dds_control_wire {

std::vector<std::byte> encode(const Request& r) {
  CdrOut out;
  out.u64(r.id);
  out.string(r.json);
  return out.take();
}

std::vector<std::byte> encode(const Reply& r) {
  CdrOut out;
  const auto guid = r.requester.bytes();
  out.octets(guid.data(), guid.size());
  out.u64(r.id);
  out.string(r.json);
  return out.take();
}

std::optional<Request> decode_request(pubsub::Bytes body, uint16_t encapsulation,
                                      size_t max_string) {
  const auto be = big_endian(encapsulation);
  if (!be) return std::nullopt;
  CdrIn in(body, *be);
  Request r;
  if (!in.u64(r.id) || !in.string(r.json, max_string)) return std::nullopt;
  return r;
}

std::optional<Reply> decode_reply(pubsub::Bytes body, uint16_t encapsulation, size_t max_string) {
  const auto be = big_endian(encapsulation);
  if (!be) return std::nullopt;
  CdrIn in(body, *be);
  Reply r;
  uint8_t guid[16];
  if (!in.octets(guid, sizeof guid) || !in.u64(r.id) || !in.string(r.json, max_string))
    return std::nullopt;
  r.requester = pubsub::Guid::from_bytes(guid);
  return r;
}

}  // namespace dds_control_wire

}  // namespace service
