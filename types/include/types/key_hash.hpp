// The RTPS key hash of a sample, from its type (DDS-XTypes 1.3, 7.6.8; RTPS 2.5, 9.6.4.8): the
// key members serialized as PLAIN_CDR2 big endian (base members first, then in declaration
// order; a nested struct contributes its own key members, or all of them when it has none),
// zero-padded to 16 bytes when the key's largest serialization fits in 16, else the MD5 of the
// serialization.
//
// Why: a writer need not send key hashes (Cyclone DDS does not), but a replay must know which
// instance each sample belongs to - to keep the last samples of each instance for late joiners,
// and to send disposes the way every reader understands (Fast DDS 2.9 reads a dispose's key only
// from its key hash).
//
// Supported keys: primitives, enums, bitmasks, strings, arrays and sequences of primitives, and
// final nested structs of those. Other keys (unions, appendable or mutable nested structs,
// collections of constructed types) are kUnsupported. A sample is decoded with the CDR decoder
// (cdr.hpp); a key-only payload (a dispose or unregister that carries the serialized key) with
// the key members alone, for final top-level types. Pure functions, thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "types/result.hpp"
#include "types/type_model.hpp"

namespace types {

using KeyHashBytes = std::array<uint8_t, 16>;

class KeyHasher {
 public:
  // kUnsupported when the type has no key, or a key this does not support.
  static Result<KeyHasher> create(const TypeLibrary& lib, TypeId top);
  // The key hash of a full sample (encapsulation header + body).
  Result<KeyHashBytes> of_sample(std::span<const uint8_t> sample) const;
  // The key hash of a key-only payload (encapsulation header + the key members).
  Result<KeyHashBytes> of_key_payload(std::span<const uint8_t> payload) const;
  // Whether the key's largest serialization fits in 16 bytes: the key hash is then the key
  // itself, zero-padded (not an MD5), and a reader can take the instance from it alone.
  bool key_fits_hash() const { return fits_16_; }
  // The key's PLAIN_CDR2 big-endian serialization of a sample, before hashing (tests).
  Result<std::vector<uint8_t>> serialized_key(std::span<const uint8_t> sample) const;

 private:
  struct KeyMember {
    std::vector<std::string> path;  // member names from the top-level struct
    TypeId type = kNoType;
  };
  const TypeLibrary* lib_ = nullptr;
  TypeId top_ = kNoType;
  std::vector<KeyMember> keys_;
  bool fits_16_ = false;           // the key's largest serialization is at most 16 bytes
  TypeLibrary key_only_;           // the key members as a final struct, for key-only payloads
  TypeId key_only_top_ = kNoType;  // kNoType: key-only payloads not supported
};

}  // namespace types
