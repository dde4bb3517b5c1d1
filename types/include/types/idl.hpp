// IDL to the type model, parsed by Cyclone DDS's IDL library (libcycloneddsidl 0.10.2, Debian
// package cyclonedds-dev: idl_create_pstate + idl_parse_string, then a walk over its tree), not
// by a parser of our own. Accepts IDL 4 as that library does: modules, structs (inheritance),
// unions, enums, bitmasks, typedefs, sequences, arrays, bounded strings, constants used as
// bounds, forward declarations and recursion through sequences, the annotations @key,
// @optional, @id, @autoid, @hashid, @must_understand (mutable types), @final/@appendable/
// @mutable/@extensibility (none: final), @value, @bit_bound, @position, @nested/@topic, and
// "#pragma keylist". Member ids, enumerator values and labels are the library's. Refused with
// a message: other preprocessor directives (#include, #define, #if..., #line: no preprocessor
// is run), wchar, wstring, long double, fixed, any, map.
// Nothing is written to stderr (the library's messages are captured, see idl.cpp).
// Thread-safe (one parser state per call).
#pragma once

#include <string>
#include <string_view>

#include "types/result.hpp"
#include "types/type_model.hpp"

namespace types {

// Parses IDL text. `file_name` is only used in messages. Errors: kInvalidArgument with
// "FILE:LINE:COLUMN: what" (the library's first message for syntax and semantic errors, or
// ours for an unsupported type or a preprocessor directive).
Result<TypeLibrary> parse_idl(std::string_view text, std::string_view file_name);

// Reads and parses a file (kNotFound / kIo when it cannot be read).
Result<TypeLibrary> parse_idl_file(const std::string& path);

}  // namespace types
