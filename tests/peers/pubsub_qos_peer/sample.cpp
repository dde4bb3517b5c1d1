// pubsub_qos_peer: QosTest::Sample to and from bytes (sample.hpp).
#include "sample.hpp"

#include <cstring>

namespace pubsub_peer {
namespace {

constexpr size_t kHeader = 4;      // encapsulation kind (2 bytes, big endian), options (2)
constexpr size_t kFixedBody = 12;  // id, seq, the payload's length

// Encapsulation kinds: plain CDR of XCDR1 and XCDR2, big and little endian.
constexpr uint16_t kCdrBe = 0x0000;
constexpr uint16_t kCdrLe = 0x0001;
constexpr uint16_t kCdr2Be = 0x0006;
constexpr uint16_t kCdr2Le = 0x0007;

uint8_t kind_byte(int16_t representation) {
  return representation == kXcdr2 ? static_cast<uint8_t>(kCdr2Le) : static_cast<uint8_t>(kCdrLe);
}

void put_le32(std::byte* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<std::byte>(v >> (8 * i));
}

uint32_t get32(const std::byte* p, bool little_endian) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) {
    const auto byte = static_cast<uint32_t>(p[little_endian ? i : 3 - i]);
    v |= byte << (8 * i);
  }
  return v;
}

// Whether the body of this encapsulation is plain CDR we read; its byte order in `le`.
bool plain_cdr(uint16_t encapsulation, bool& le) {
  if (encapsulation != kCdrBe && encapsulation != kCdrLe && encapsulation != kCdr2Be &&
      encapsulation != kCdr2Le) {
    return false;
  }
  le = (encapsulation & 1u) != 0;
  return true;
}

}  // namespace

void serialize_sample(int32_t id, int32_t seq, uint32_t payload_size, int16_t representation,
                      std::vector<std::byte>& out) {
  const size_t pad = (4 - (kFixedBody + payload_size) % 4) % 4;
  out.assign(kHeader + kFixedBody + payload_size + pad, std::byte{0});
  std::byte* p = out.data();
  p[1] = static_cast<std::byte>(kind_byte(representation));
  p[3] = static_cast<std::byte>(pad);
  put_le32(p + 4, static_cast<uint32_t>(id));
  put_le32(p + 8, static_cast<uint32_t>(seq));
  put_le32(p + 12, payload_size);
  for (uint32_t i = 0; i < payload_size; ++i) {
    p[kHeader + kFixedBody + i] = static_cast<std::byte>(payload_byte(id, seq, i));
  }
}

std::vector<std::byte> serialize_key(int32_t id, int16_t representation) {
  std::vector<std::byte> out(kHeader + 4, std::byte{0});
  out[1] = static_cast<std::byte>(kind_byte(representation));
  put_le32(out.data() + kHeader, static_cast<uint32_t>(id));
  return out;
}

pubsub::KeyHash key_hash_of(int32_t id) {
  const auto v = static_cast<uint32_t>(id);
  const std::byte be[4] = {static_cast<std::byte>(v >> 24), static_cast<std::byte>(v >> 16),
                           static_cast<std::byte>(v >> 8), static_cast<std::byte>(v)};
  return pubsub::KeyHash::from_key_cdr_be(pubsub::Bytes(be, sizeof be));
}

std::optional<Decoded> decode_sample(uint16_t encapsulation, pubsub::Bytes body) {
  bool le = true;
  if (!plain_cdr(encapsulation, le) || body.size() < kFixedBody) return std::nullopt;
  Decoded d;
  d.id = static_cast<int32_t>(get32(body.data(), le));
  d.seq = static_cast<int32_t>(get32(body.data() + 4, le));
  d.size = get32(body.data() + 8, le);
  if (d.size > body.size() - kFixedBody) return std::nullopt;
  d.ok = true;
  for (uint32_t i = 0; i < d.size && d.ok; ++i) {
    d.ok = static_cast<uint8_t>(body[kFixedBody + i]) == payload_byte(d.id, d.seq, i);
  }
  return d;
}

std::optional<int32_t> decode_key(uint16_t encapsulation, pubsub::Bytes body,
                                  const std::optional<pubsub::KeyHash>& key_hash) {
  bool le = true;
  if (body.size() >= 4 && plain_cdr(encapsulation, le)) {
    return static_cast<int32_t>(get32(body.data(), le));
  }
  if (!key_hash) return std::nullopt;
  std::byte be[4];
  std::memcpy(be, key_hash->value.data(), 4);
  return static_cast<int32_t>(get32(be, false));
}

}  // namespace pubsub_peer
