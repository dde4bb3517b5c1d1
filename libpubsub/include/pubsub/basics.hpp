// Basic vocabulary of libpubsub: identifiers (GUIDs, entity ids), sequence numbers, time,
// locators, key hashes, and the Result type every fallible call returns.
#pragma once

#include <array>
#include <chrono>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <variant>

#include "common/expected.hpp"

namespace pubsub {

using Bytes = std::span<const std::byte>;

// ---- errors ---------------------------------------------------------------------------------

// The common error vocabulary (common/expected.hpp) under libpubsub's names.
using ErrorCode = common::Errc;
using common::Error;
using common::make_error;
template <class T>
using Result = common::Expected<T>;

// ---- identifiers ----------------------------------------------------------------------------

using GuidPrefix = std::array<uint8_t, 12>;

// 4 bytes: 3-byte key + 1-byte kind, compared and stored big endian as on the wire.
struct EntityId {
  uint32_t value = 0;
  constexpr uint8_t kind() const { return static_cast<uint8_t>(value & 0xff); }
  constexpr auto operator<=>(const EntityId&) const = default;
};

struct Guid {
  GuidPrefix prefix{};
  EntityId entity;
  auto operator<=>(const Guid&) const = default;
  // Compared on every delivered sample: two word compares rather than a call to memcmp.
  bool operator==(const Guid& o) const {
    uint64_t a, b;
    uint32_t c, d;
    std::memcpy(&a, prefix.data(), 8);
    std::memcpy(&b, o.prefix.data(), 8);
    std::memcpy(&c, prefix.data() + 8, 4);
    std::memcpy(&d, o.prefix.data() + 8, 4);
    return a == b && c == d && entity.value == o.entity.value;
  }
  std::array<uint8_t, 16> bytes() const;
  static Guid from_bytes(const uint8_t* sixteen);
  std::string to_string() const;  // "0102...0c:000001c1"
};

struct GuidHash {
  size_t operator()(const Guid& g) const noexcept;
  size_t operator()(const GuidPrefix& p) const noexcept;
};

// RTPS sequence numbers are 64-bit, starting at 1.
using SequenceNumber = int64_t;

// The samples of a reliable writer that a reader will never get because the writer went away
// (deleted, or its lease expired) before they were delivered: those it sent or announced
// (HEARTBEAT) that were held back (refused, or waiting behind a hole) or never received.
struct UndeliveredSamples {
  uint64_t count = 0;
  // The lowest and highest of them (0 and 0 when count is 0). GAP'd sequence numbers between
  // them are not counted, so count <= last - first + 1.
  SequenceNumber first = 0;
  SequenceNumber last = 0;
};

// ---- time -----------------------------------------------------------------------------------

using Duration = std::chrono::nanoseconds;

// Wall-clock time in nanoseconds since the UNIX epoch (what goes into INFO_TS).
struct Time {
  int64_t ns = 0;
  static Time now();
  auto operator<=>(const Time&) const = default;
};

// The clock a participant stamps reception times with (ParticipantOptions::steady_reception_clock).
// Wall: the wall clock, as DDS specifies. Steady: the wall clock when the ReceptionClock was made
// plus CLOCK_MONOTONIC's time since - in step with the wall clock while nobody steps it (NTP's
// slewing moves both), and ordered and evenly spaced when someone does; the step shows as a
// difference between Time::now() and now() (wall_offset()).
class ReceptionClock {
 public:
  explicit ReceptionClock(bool steady = false);
  Time now() const;
  bool steady() const { return steady_; }
  // Time::now() - now(): 0 for a wall clock, and the sum of the wall clock's steps since the
  // ReceptionClock was made for a steady one (give or take the two reads' distance).
  Duration wall_offset() const;

 private:
  bool steady_;
  int64_t offset_ns_ = 0;  // wall - monotonic when made
};

// ---- locators -------------------------------------------------------------------------------

struct Locator {
  static constexpr int32_t kUdpV4 = 1;
  int32_t kind = kUdpV4;
  uint32_t port = 0;
  std::array<uint8_t, 16> address{};  // IPv4 in the last 4 bytes

  static Locator udp_v4(uint32_t ipv4_host_order, uint32_t port);
  uint32_t ipv4() const;               // host order
  std::string to_string() const;       // "198.18.0.1:7411"
  std::string address_string() const;  // "198.18.0.1" (an IPv4 locator's address alone)
  auto operator<=>(const Locator&) const = default;
};

// ---- keys -----------------------------------------------------------------------------------

// The RTPS key hash: the key fields serialized big endian (XCDR1), zero-padded when they fit in
// 16 bytes, otherwise the MD5 of that serialization.
struct KeyHash {
  std::array<uint8_t, 16> value{};
  static KeyHash from_key_cdr_be(Bytes key_fields_cdr_be);
  auto operator<=>(const KeyHash&) const = default;
};

}  // namespace pubsub

template <>
struct std::hash<pubsub::Guid> {
  size_t operator()(const pubsub::Guid& g) const noexcept { return pubsub::GuidHash{}(g); }
};
