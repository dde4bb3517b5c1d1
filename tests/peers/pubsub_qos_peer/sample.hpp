// pubsub_qos_peer: the type QosTest::Sample (../qos_test.idl) serialized by hand.
//
//   module QosTest { @final struct Sample { @key long id; long seq; sequence<octet> payload; }; };
//
// libpubsub moves serialized bytes only; this file is the type support. A sample is the
// encapsulation header (CDR_LE {0,1,0,pad} for XCDR1, CDR2_LE {0,7,0,pad} for XCDR2; the low
// two bits of the last byte count the padding at the end), then id, seq, the payload's length
// (all little-endian 32-bit) and the payload bytes, padded to a multiple of 4. For this @final
// struct of 4-byte-aligned members the XCDR2 body is the same as the XCDR1 one. The serialized
// key (dispose, unregister) is the header and id alone; the key hash is id big endian followed
// by 12 zero bytes. Decoding takes both byte orders. Pure functions, any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "pubsub/basics.hpp"

namespace pubsub_peer {

inline constexpr char kTypeName[] = "QosTest::Sample";

// Data representation ids (DataRepresentationId_t).
inline constexpr int16_t kXcdr1 = 0;
inline constexpr int16_t kXcdr2 = 2;

// Byte i of the payload of sample (id, seq): the deterministic pattern of the contract.
inline uint8_t payload_byte(int32_t id, int32_t seq, uint32_t i) {
  return static_cast<uint8_t>(static_cast<uint32_t>(id) * 31u + static_cast<uint32_t>(seq) * 7u +
                              i);
}

// The whole serialized sample (header included) into `out`, replacing its content.
void serialize_sample(int32_t id, int32_t seq, uint32_t payload_size, int16_t representation,
                      std::vector<std::byte>& out);
// The serialized key of instance id (header included): what dispose and unregister carry.
std::vector<std::byte> serialize_key(int32_t id, int16_t representation);
// The RTPS key hash of instance id.
pubsub::KeyHash key_hash_of(int32_t id);

struct Decoded {
  int32_t id = 0;
  int32_t seq = 0;
  uint32_t size = 0;  // payload length
  bool ok = false;    // the payload is the pattern
};

// A sample's body as a reader gets it (after the header, padding removed; `encapsulation` is
// the header's first two bytes). Nothing when it is not a QosTest::Sample.
std::optional<Decoded> decode_sample(uint16_t encapsulation, pubsub::Bytes body);
// The id of the instance a dispose or unregister names: from the serialized key if it came
// with one, else from the key hash.
std::optional<int32_t> decode_key(uint16_t encapsulation, pubsub::Bytes body,
                                  const std::optional<pubsub::KeyHash>& key_hash);

}  // namespace pubsub_peer
