// The type model back to IDL text: what `pubsub-replay types` prints and what an MCAP Schema
// record (encoding "omgidl") carries. Every named type that `top` depends on is written first,
// each inside its modules, so the text parses on its own (parse_idl round-trips it).
#pragma once

#include <string>

#include "types/type_model.hpp"

namespace types {

enum class IdlDialect {
  kStandard,  // IDL 4 as libcycloneddsidl reads it (`pubsub-replay types`)
  // What Foxglove's IDL parser (@foxglove/omgidl-parser 1.1) reads, for MCAP schemas, with the
  // same CDR layout: a struct's base members written into it (no inheritance), bitmasks as
  // typedefs of the unsigned integer that holds them, union labels of an enum as Enum::LITERAL,
  // char and octet discriminators as uint8 with numeric labels, no leading "::" and no forward
  // declarations (so recursive types do not parse there).
  kFoxglove,
};

// IDL of `top` and of every named type it uses, dependencies first.
std::string to_idl(const TypeLibrary& lib, TypeId top, IdlDialect dialect = IdlDialect::kStandard);

}  // namespace types
