// XTypes 1.3 TypeLookup service messages (7.6.3.3), as much as a client of getTypes needs: the
// request it sends and the header of the reply it gets. The TypeObjects inside a reply are left
// as bytes (the types module decodes them: types/type_object.hpp), so libpubsub knows nothing
// of the type system.
//
// Both are XCDR2 (the builtin TypeLookup topics' types are @final structs around unions, which
// have XTypes' default extensibility APPENDABLE (a DHEADER each), and @mutable members, as
// Cyclone DDS 0.10 compiles them from DDS-XTypes' IDL; checked byte for byte against its
// serializer in tests/unit/pubsub/type_lookup_test.cpp):
//   TypeLookup_Request { RequestHeader { SampleIdentity requestId; string<255> instanceName; };
//                        union TypeLookup_Call switch(long) { case getTypes_HashId:
//                          @mutable TypeLookup_getTypes_In { sequence<TypeIdentifier> type_ids; };
//                        } }
//   TypeLookup_Reply   { ReplyHeader { SampleIdentity relatedRequestId; long remoteEx; };
//                        union TypeLookup_Return switch(long) { case getTypes_HashId:
//                          union TypeLookup_getTypes_Result switch(long) { case 0 (OK):
//                            @mutable TypeLookup_getTypes_Out {...}; }; } }
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "pubsub/basics.hpp"

namespace pubsub::wire {

inline constexpr uint32_t kTypeLookupGetTypesHashId = 0x018252d3;         // @hashid("getTypes")
inline constexpr uint32_t kTypeLookupGetDependenciesHashId = 0x05aafb31;  // "getDependencies"
inline constexpr uint32_t kTypeLookupTypeIdsMemberId = 0x0c536065;        // @hashid "type_ids"

// A hashed TypeIdentifier: equivalence kind (EK_COMPLETE 0xf2 / EK_MINIMAL 0xf1) + 14-byte hash.
using HashedTypeId = std::array<uint8_t, 15>;

// The serialized request (encapsulation header included: CDR2_LE).
std::vector<uint8_t> encode_type_lookup_get_types(const Guid& writer, SequenceNumber sn,
                                                  std::span<const HashedTypeId> type_ids);

struct TypeLookupReplyHeader {
  Guid request_writer;            // relatedRequestId: the request's writer ...
  SequenceNumber request_sn = 0;  // ... and sequence number
  int32_t remote_exception = 0;   // REMOTE_EX_OK = 0
  uint32_t operation = 0;         // kTypeLookupGetTypesHashId, ...
  int32_t result = 0;             // the operation's return code (DDS_RETCODE_OK = 0)
  bool little_endian = true;
  // For getTypes with result 0: the TypeLookup_getTypes_Out (from its DHEADER to the end),
  // within the payload given to the decoder, at an offset that is a multiple of 4 from the
  // start of the XCDR2 stream (so its own alignment holds).
  const uint8_t* body = nullptr;
  size_t body_size = 0;
};

// ---- the service's side ----

inline constexpr uint32_t kTypeLookupTypesMemberId = 0x02804ad1;              // "types"
inline constexpr uint32_t kTypeLookupCompleteToMinimalMemberId = 0x0b8e6577;  // ...

struct TypeLookupRequest {
  Guid writer;  // requestId
  SequenceNumber sn = 0;
  uint32_t operation = 0;
  std::vector<HashedTypeId> type_ids;  // getTypes: the hashed ones (others are skipped)
};
// Decodes a request (encapsulation header included): XCDR2, either byte order. Nullopt for
// bytes that are not one.
std::optional<TypeLookupRequest> decode_type_lookup_request(const uint8_t* data, size_t size);

// One TypeObject of a reply: its identifier and its XCDR2 bytes (little endian, its DHEADER
// first, as types/type_object_writer.hpp makes them).
struct TypeObjectRef {
  HashedTypeId id{};
  std::span<const uint8_t> type_object;
};
// The serialized reply to getTypes request (writer, sn) with these TypeObjects (encapsulation
// header included: CDR2_LE), as Cyclone DDS lays it out; complete_to_minimal is left empty.
std::vector<uint8_t> encode_type_lookup_get_types_reply(const Guid& request_writer,
                                                        SequenceNumber sn,
                                                        std::span<const TypeObjectRef> types);

// Decodes a reply (encapsulation header included). Nullopt for bytes that are not one: an
// unknown encapsulation, or truncated before the result.
std::optional<TypeLookupReplyHeader> decode_type_lookup_reply(const uint8_t* data, size_t size);

}  // namespace pubsub::wire
