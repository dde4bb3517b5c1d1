// A catalog of named types from several sources (IDL files, a recording's stored definitions),
// looked up by a topic's DDS type name. Sources are searched in the order they were added, so
// the first that defines a name wins (the user's IDL before what a recording holds). Used by
// pubsub-recorder (types.idl) and pubsub-replay (--idl, stored types). Not thread-safe; const
// lookups may run concurrently.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "types/result.hpp"
#include "types/type_model.hpp"

namespace types {

class TypeCatalog {
 public:
  // Parses each file (types/idl.hpp) and adds it, in order. The first error ends it: the
  // parser's "FILE:LINE:COLUMN: message", or the file's read error.
  static Result<TypeCatalog> from_idl_files(const std::vector<std::filesystem::path>& files);

  // Adds a library; `origin` names it in listings ("pose.idl", "recording (lookup)").
  void add(TypeLibrary lib, std::string origin);

  struct Found {
    const TypeLibrary* lib = nullptr;
    TypeId id = kNoType;
    const std::string* origin = nullptr;
  };
  // The first source's type of this name (with or without a leading "::"), if any.
  std::optional<Found> find(std::string_view type_name) const;
  bool empty() const { return sources_.empty(); }

 private:
  struct Source {
    std::unique_ptr<TypeLibrary> lib;  // stable address for Found
    std::string origin;
  };
  std::vector<Source> sources_;
};

}  // namespace types
