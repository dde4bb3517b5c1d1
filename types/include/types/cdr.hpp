// CDR decoding driven by the type model: one serialized sample (as it travels in an RTPS DATA
// submessage: the 4-byte encapsulation header, then the body) to a JSON value.
//
// Encodings (by the encapsulation header's representation identifier):
//   0x0000/0x0001 CDR_BE/LE, 0x0002/0x0003 PL_CDR_BE/LE           (XCDR1: plain, parameter list)
//   0x0006/0x0007 CDR2_BE/LE, 0x0008/0x0009 D_CDR2_BE/LE,
//   0x000a/0x000b PL_CDR2_BE/LE                                    (XCDR2)
// (the ids of DDSI-RTPS 2.5, 10.5: what Cyclone DDS and Fast DDS write).
// Types: structs (with base), unions, enums, bitmasks, aliases, sequences, arrays, bounded and
// unbounded strings, optional members, keys; final, appendable and mutable extensibility.
//
// JSON produced (nlohmann::ordered_json, members in declaration order, base members first):
//   struct -> object; union -> {"$discriminator": d, "<case member>": value} (only the
//   discriminator when no case is selected); enum -> literal name (a number when the value has
//   no literal); bitmask -> unsigned number; bool -> true/false; char -> one-character string;
//   octet and integers -> numbers (64-bit exactly); float/double -> numbers (NaN and infinities
//   -> null, as JSON has none); string -> string (bytes as they are; invalid UTF-8 replaced);
//   sequence/array -> array (multi-dimensional arrays nested, outermost first); an absent
//   optional member -> null; a member of a mutable type that is not in the sample -> null; a
//   member of an appendable type that an older writer did not send (its DHEADER ends before
//   it) -> the member type's default (0, false, "", [], the first enum literal; null when
//   optional).
//
// Bounded by the payload: every read is checked against the end, lengths are checked before
// anything is reserved, nesting depth is limited; a malformed sample is an Error (kCorrupt or
// kTruncated) naming the byte offset and the member path, never a crash or an over-read.
// Exceeding DecodeLimits (or an unknown representation id) is kUnsupported; a type library
// that does not hold together (a bad type id, an alias loop) is kInvalidArgument.
// Pure function, thread-safe. Fuzzed by tests/fuzz/cdr_decode_fuzzer.cpp.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>

#include "types/result.hpp"
#include "types/type_model.hpp"

namespace types {

using Json = nlohmann::ordered_json;

struct DecodeLimits {
  uint32_t max_depth = 100;             // nested structs/unions/collections
  uint64_t max_elements = 64ull << 20;  // elements in one sequence or array
};

// Decodes `sample` (encapsulation header + body) as type `top` of `lib`. `trailing`, when
// given, receives the number of bytes after the decoded value that nothing read: not the padding
// the encapsulation options declare (their two low bits), nor up to 3 zero bytes that bring the
// body to a multiple of 4 (writers that pad without declaring it). Non-zero usually means the
// type does not match the writer's (set on success only).
Result<Json> decode_cdr(const TypeLibrary& lib, TypeId top, std::span<const uint8_t> sample,
                        const DecodeLimits& limits = {}, size_t* trailing = nullptr);

}  // namespace types
