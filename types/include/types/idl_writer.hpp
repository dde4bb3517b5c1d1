// The type model back to IDL text: what `pubsub-replay types` prints and what an MCAP Schema
// record (encoding "omgidl") carries. Every named type that `top` depends on is written first,
// each inside its modules, so the text parses on its own (parse_idl round-trips it).
#pragma once

#include <string>

#include "types/type_model.hpp"

namespace types {

// IDL of `top` and of every named type it uses, dependencies first.
std::string to_idl(const TypeLibrary& lib, TypeId top);

}  // namespace types
