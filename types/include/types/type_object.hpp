// XTypes TypeObjects to the type model: what a DDS writer announces of its data type in
// discovery and what its participant's TypeLookup service sends back, turned into a TypeLibrary
// for the CDR decoder (cdr.hpp) and the IDL writer (idl_writer.hpp). DDS-XTypes 1.3, 7.3.4
// (TypeObject), 7.6.3.2.2 (TypeInformation) and 7.6.3.3 (TypeLookup), as Cyclone DDS 0.10 lays
// them out (its ddsi_xt_typeinfo.idl; all XCDR2 without an encapsulation header):
//
//   1. decode_type_information: the PID_TYPE_INFORMATION (0x0075) parameter value of a
//      discovered writer -> the EK_COMPLETE and EK_MINIMAL hashes of the topic type and the
//      complete types it depends on, i.e. what to ask the writer's participant for.
//   2. parse_type_mapping / parse_get_types_out: a Cyclone TypeMapping (what idlc generates and
//      the TypeLookup service answers from) or a TypeLookup_getTypes_Out -> the
//      (TypeIdentifier, TypeObject) pairs, each TypeObject kept as its bytes. Only the framing
//      is checked here; sets from several replies can be concatenated.
//   3. decode_type_objects: the pairs and the topic type's complete hash -> a TypeLibrary. Only
//      COMPLETE TypeObjects reachable from the topic type are decoded (minimal ones carry no
//      names).
//
// Supported: structs (base type, final/appendable/mutable, @nested, member ids, @key,
// @optional, must_understand flags), unions (discriminator, labels, default case), enums
// (values, bit_bound), bitmasks (positions, bit_bound), aliases, sequences and arrays (plain
// TypeIdentifiers and CompleteSequenceType/CompleteArrayType objects), strings (bounded and
// not), every primitive the model has. Applied annotations (builtin and custom) are skipped:
// they do not change the data's layout. Refused with kUnsupported, naming the type and member:
// float128, char16/wstring, maps, bitsets, annotation types, strongly connected components
// (recursive types as hashed by XTypes 1.3, 7.3.4.9.3), unknown kinds.
//
// Everything comes from the network: every read is bounded by the input (errors kTruncated when
// it ends early, kCorrupt for bytes that contradict themselves, with the byte offset), element
// counts are checked against the bytes left before anything is reserved, TypeIdentifier nesting
// is limited, and the type graph is walked with a work list, not recursion. Pure functions,
// thread-safe. Fuzzed by tests/fuzz/type_object_fuzzer.cpp.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "types/result.hpp"
#include "types/type_model.hpp"

namespace types {

constexpr uint8_t kEkMinimal = 0xf1;  // EquivalenceKind of a TypeIdentifier holding a hash
constexpr uint8_t kEkComplete = 0xf2;

// The first 14 bytes of the MD5 of a TypeObject's serialization.
using EquivalenceHash = std::array<uint8_t, 14>;

// A hashed TypeIdentifier as it goes on the wire (TypeLookup requests and replies): the
// equivalence kind, then the hash.
using HashedTypeId = std::array<uint8_t, 15>;
inline HashedTypeId hashed_type_id(uint8_t equivalence_kind, const EquivalenceHash& hash) {
  HashedTypeId id{equivalence_kind};
  for (size_t i = 0; i < hash.size(); ++i) id[i + 1] = hash[i];
  return id;
}

// "f2c6e6285a68c8f6cd7c4203c46cb2": the equivalence kind, then the hash, in hex.
std::string to_hex(uint8_t equivalence_kind, const EquivalenceHash& hash);

// The byte order of the enclosing message (Cyclone DDS writes little endian).
enum class ByteOrder : uint8_t { kLittle, kBig };

struct TypeIdWithSize {
  EquivalenceHash hash{};
  uint32_t serialized_size = 0;  // of the TypeObject, as announced
};

struct TypeInformation {
  TypeIdWithSize complete;                // the topic type, EK_COMPLETE
  std::optional<TypeIdWithSize> minimal;  // the topic type, EK_MINIMAL (when announced)
  // As announced: how many types the complete type depends on (may exceed the list; -1: not
  // counted).
  int32_t complete_dependent_count = 0;
  // The EK_COMPLETE dependencies listed (other TypeIdentifiers need no lookup and are left out).
  std::vector<TypeIdWithSize> complete_dependencies;
};

// Decodes a TypeInformation (mutable struct, XCDR2). A missing or non-hash complete identifier
// is kCorrupt.
Result<TypeInformation> decode_type_information(std::span<const uint8_t> bytes,
                                                ByteOrder order = ByteOrder::kLittle);

// One (TypeIdentifier, TypeObject) pair whose identifier is a hash.
struct TypeObjectPair {
  uint8_t equivalence_kind = kEkComplete;  // kEkMinimal or kEkComplete
  EquivalenceHash hash{};
  std::vector<uint8_t> type_object;  // the TypeObject's XCDR2 bytes, its DHEADER first
  ByteOrder order = ByteOrder::kLittle;
};

struct TypeObjectSet {
  std::vector<TypeObjectPair> pairs;  // minimal and complete, in the order received
  // complete_to_minimal (getTypes_Out) / identifier_complete_minimal (TypeMapping) entries that
  // pair two hashes.
  std::vector<std::pair<EquivalenceHash, EquivalenceHash>> complete_to_minimal;
};

// Parses a Cyclone DDS TypeMapping (final struct: identifier_object_pair_minimal,
// identifier_object_pair_complete, identifier_complete_minimal). kCorrupt for a pair whose
// identifier is not a hash.
Result<TypeObjectSet> parse_type_mapping(std::span<const uint8_t> bytes,
                                         ByteOrder order = ByteOrder::kLittle);

// Parses a TypeLookup_getTypes_Out (mutable struct; members `types` and `complete_to_minimal`,
// ids by @hashid), the body of a getTypes reply's result without its encapsulation header.
Result<TypeObjectSet> parse_get_types_out(std::span<const uint8_t> bytes,
                                          ByteOrder order = ByteOrder::kLittle);

struct DecodedTypes {
  TypeLibrary library;
  TypeId top = kNoType;
};

// Builds the type model of the topic type `complete_hash` (EK_COMPLETE) from the complete
// TypeObjects among `pairs`. Errors: kNotFound naming the hash (hex) of a type referenced but
// absent; kUnsupported naming the type and member of a construct the model cannot hold;
// kCorrupt/kTruncated for bytes that do not decode (naming the type's hash and the offset);
// kInvalidArgument for types that do not hold together (an alias loop, a base that is not a
// struct, a discriminator that is not an integer, char, boolean or enum).
Result<DecodedTypes> decode_type_objects(std::span<const TypeObjectPair> pairs,
                                         const EquivalenceHash& complete_hash);

}  // namespace types
