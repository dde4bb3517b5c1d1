// Helpers shared by the types module's tests.
#pragma once

#include <catch2/catch.hpp>
#include <optional>
#include <string>

#include "types/type_model.hpp"

namespace types_test {

// The id of the type `name` in `lib`; the test fails if there is none.
inline types::TypeId id_of(const types::TypeLibrary& lib, const std::string& name) {
  std::optional<types::TypeId> id = lib.find(name);
  INFO(name);
  REQUIRE(id.has_value());
  return *id;
}

}  // namespace types_test
