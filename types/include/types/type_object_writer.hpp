// The type model to XTypes TypeObjects: the reverse of type_object.hpp, for a writer that
// announces its type (PID_TYPE_INFORMATION) and a TypeLookup service that answers getTypes.
// DDS-XTypes 1.3, 7.3.4 (TypeObject), 7.6.3.2.2 (TypeInformation), laid out as Cyclone DDS
// 0.10.2's idlc does (XCDR2 little endian, no encapsulation header), so that for a type parsed
// from IDL (parse_idl) the TypeInformation and TypeMapping are byte for byte what idlc
// generates for the same IDL (TYPE_INFO_CDR_<T> / TYPE_MAP_CDR_<T>), Cyclone's choices
// included:
//   - int8 and uint8 as TK_CHAR8 and TK_BYTE (idlc 0.10.2 has no TK_INT8/TK_UINT8; see
//     EncodeOptions to write the XTypes 1.3 kinds instead),
//   - every key member also IS_MUST_UNDERSTAND, TRY_CONSTRUCT1 (DISCARD) on every member,
//     collection element and union discriminator (which is also IS_MUST_UNDERSTAND),
//   - IS_FINAL set on final structs, unions, enums and bitmasks; IS_AUTOID_HASH on
//     @autoid(HASH) structs and unions,
//   - anonymous strings, sequences and arrays as plain TypeIdentifiers (small ones while the
//     bound / the product of the dimensions is at most 255), their equivalence kind EK_BOTH
//     when the element needs no hash,
//   - the dependencies in the order idlc's visitor meets them (depth first, each type before
//     the types it uses, bases before members, a union's discriminator before its cases),
//     enum literals sorted by value, bit flags by position, no applied annotations.
//
// Not expressible (refused with kUnsupported, naming the type): recursive types (XTypes hashes
// them as strongly connected components, which neither idlc 0.10.2 nor decode_type_objects
// supports), union labels outside int32, member ids above 0x0fffffff, types nested deeper than
// kMaxEncodeDepth. What the model does not keep is not written, so TypeObjects of IDL using it
// differ from idlc's: @hashid's applied annotation (idlc writes it in the member's
// ann_builtin), the typedef a base struct was declared with (parse_idl keeps only the struct;
// a discriminator's typedef is kept, Type::discriminator_typedef), @key on a discriminator,
// @try_construct other than DISCARD, @external, @unit/@min/@max.
//
// Pure function of the library, thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "types/result.hpp"
#include "types/type_model.hpp"
#include "types/type_object.hpp"

namespace types {

constexpr int kMaxEncodeDepth = 64;  // named types and anonymous collections inside each other

struct EncodeOptions {
  // idlc 0.10.2: int8 as TK_CHAR8, uint8 as TK_BYTE. false: TK_INT8 / TK_UINT8 (XTypes 1.3),
  // which decode_type_objects reads back as kInt8 / kUInt8.
  bool cyclone_int8 = true;
};

// One named type (struct, union, enum, bitmask, alias) with its two TypeObjects.
struct EncodedType {
  TypeId id = kNoType;  // in the library encoded
  std::string name;
  EquivalenceHash minimal_hash{};        // MD5(minimal_object)[0..14)
  EquivalenceHash complete_hash{};       // MD5(complete_object)[0..14)
  std::vector<uint8_t> minimal_object;   // XCDR2 LE, its DHEADER first
  std::vector<uint8_t> complete_object;  // XCDR2 LE, its DHEADER first
};

struct EncodedTypes {
  // The topic type first, then every named type it depends on, in idlc's order.
  std::vector<EncodedType> types;
  // The PID_TYPE_INFORMATION value (mutable struct: minimal and complete
  // TypeIdentifierWithDependencies), as idlc's TYPE_INFO_CDR_<T>.
  std::vector<uint8_t> type_information;
  // Cyclone's TypeMapping (minimal pairs, complete pairs, complete-to-minimal pairs), as idlc's
  // TYPE_MAP_CDR_<T>.
  std::vector<uint8_t> type_mapping;

  const EncodedType& top() const { return types.front(); }
  // The TypeObject bytes of an EK_MINIMAL or EK_COMPLETE hash; nullptr when none of `types`
  // has it.
  const std::vector<uint8_t>* find(uint8_t equivalence_kind, const EquivalenceHash& hash) const;
  // Every (TypeIdentifier, TypeObject) pair, minimal ones first (each hash once), as
  // decode_type_objects and a getTypes reply take them.
  std::vector<TypeObjectPair> pairs() const;
};

// Encodes the topic type `top` (a struct or union) and the named types it depends on.
// Errors: kInvalidArgument for a `top` that is not a struct or union of the library (or a
// reference to a TypeId the library lacks); kUnsupported as listed above.
Result<EncodedTypes> encode_type_objects(const TypeLibrary& lib, TypeId top,
                                         const EncodeOptions& options = {});

}  // namespace types
