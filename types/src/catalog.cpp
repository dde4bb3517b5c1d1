// TypeCatalog: IDL files and stored definitions, searched in order (see catalog.hpp).
#include "types/catalog.hpp"
#include "types/result.hpp"

#include "types/idl.hpp"

namespace types {

Result<TypeCatalog> TypeCatalog::from_idl_files(const std::vector<std::filesystem::path>& files) {
  TypeCatalog c;
  for (const auto& f : files) {
    auto lib = parse_idl_file(f.string());
    if (!lib) return lib.error();
    c.add(std::move(lib).value(), f.string());
  }
  return c;
}

void TypeCatalog::add(TypeLibrary lib, std::string origin) {
  sources_.push_back({std::make_unique<TypeLibrary>(std::move(lib)), std::move(origin)});
}

std::optional<TypeCatalog::Found> TypeCatalog::find(std::string_view type_name) const {
  for (const Source& s : sources_)
    if (auto id = s.lib->find(type_name)) return Found{s.lib.get(), *id, &s.origin};
  return std::nullopt;
}

}  // namespace types
