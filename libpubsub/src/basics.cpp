#include "pubsub/basics.hpp"

#include <cstdio>
#include <ctime>

#include "common/md5.hpp"

namespace pubsub {

std::array<uint8_t, 16> Guid::bytes() const {
  std::array<uint8_t, 16> b{};
  std::memcpy(b.data(), prefix.data(), 12);
  b[12] = static_cast<uint8_t>(entity.value >> 24);
  b[13] = static_cast<uint8_t>(entity.value >> 16);
  b[14] = static_cast<uint8_t>(entity.value >> 8);
  b[15] = static_cast<uint8_t>(entity.value);
  return b;
}

Guid Guid::from_bytes(const uint8_t* b) {
  Guid g;
  std::memcpy(g.prefix.data(), b, 12);
  g.entity.value = uint32_t{b[12]} << 24 | uint32_t{b[13]} << 16 | uint32_t{b[14]} << 8 | b[15];
  return g;
}

std::string Guid::to_string() const {
  char buf[40];
  char* p = buf;
  for (uint8_t b : prefix) p += std::snprintf(p, 3, "%02x", b);
  std::snprintf(p, sizeof(buf) - 24, ":%08x", entity.value);
  return buf;
}

size_t GuidHash::operator()(const GuidPrefix& p) const noexcept {
  uint64_t a, b;
  uint32_t c;
  std::memcpy(&a, p.data(), 8);
  std::memcpy(&c, p.data() + 8, 4);
  b = c;
  uint64_t h = a * 0x9E3779B97F4A7C15ull ^ (b + 0x632BE59BD9B4E019ull);
  return static_cast<size_t>(h ^ (h >> 29));
}

size_t GuidHash::operator()(const Guid& g) const noexcept {
  return (*this)(g.prefix) ^ (static_cast<size_t>(g.entity.value) * 0xff51afd7ed558ccdull);
}

Time Time::now() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return Time{static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec};
}

namespace {
int64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}
}  // namespace

ReceptionClock::ReceptionClock(bool steady) : steady_(steady) {
  if (steady_) offset_ns_ = Time::now().ns - monotonic_ns();
}

Time ReceptionClock::now() const {
  return steady_ ? Time{monotonic_ns() + offset_ns_} : Time::now();
}

Duration ReceptionClock::wall_offset() const {
  if (!steady_) return Duration{0};
  const int64_t mono = monotonic_ns();
  return Duration{Time::now().ns - (mono + offset_ns_)};
}

Locator Locator::udp_v4(uint32_t ip, uint32_t port) {
  Locator l;
  l.kind = kUdpV4;
  l.port = port;
  l.address[12] = static_cast<uint8_t>(ip >> 24);
  l.address[13] = static_cast<uint8_t>(ip >> 16);
  l.address[14] = static_cast<uint8_t>(ip >> 8);
  l.address[15] = static_cast<uint8_t>(ip);
  return l;
}

uint32_t Locator::ipv4() const {
  return uint32_t{address[12]} << 24 | uint32_t{address[13]} << 16 | uint32_t{address[14]} << 8 |
         address[15];
}

std::string Locator::to_string() const {
  return address_string() + ":" + std::to_string(port);
}

std::string Locator::address_string() const {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%u.%u.%u.%u", address[12], address[13], address[14], address[15]);
  return buf;
}

KeyHash KeyHash::from_key_cdr_be(Bytes key) {
  KeyHash h;
  const auto* p = reinterpret_cast<const uint8_t*>(key.data());
  if (key.size() <= 16) {
    if (!key.empty()) std::memcpy(h.value.data(), p, key.size());
  } else {
    h.value = common::md5({p, key.size()});
  }
  return h;
}

}  // namespace pubsub
