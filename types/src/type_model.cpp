#include "types/type_model.hpp"

#include <cassert>

namespace types {

TypeLibrary::TypeLibrary() {
  for (int k = 0; k <= static_cast<int>(Kind::kString); ++k) {
    Type t;
    t.kind = static_cast<Kind>(k);
    types_.push_back(std::move(t));
  }
}

TypeId TypeLibrary::primitive(Kind k) const {
  assert(k <= Kind::kString && "TypeLibrary::primitive: not a primitive");
  return static_cast<TypeId>(k);
}

TypeId TypeLibrary::add(Type t) {
  types_.push_back(std::move(t));
  return static_cast<TypeId>(types_.size() - 1);
}

std::optional<TypeId> TypeLibrary::find(std::string_view name) const {
  if (name.starts_with("::")) name.remove_prefix(2);
  for (size_t i = 0; i < types_.size(); ++i)
    if (!types_[i].name.empty() && types_[i].name == name) return static_cast<TypeId>(i);
  return std::nullopt;
}

TypeId TypeLibrary::resolve(TypeId id) const {
  for (int hops = 0; hops < 64 && types_.at(id).kind == Kind::kAlias; ++hops)
    id = types_[id].element;
  return id;
}

std::vector<TypeId> TypeLibrary::named() const {
  std::vector<TypeId> out;
  for (size_t i = 0; i < types_.size(); ++i) {
    const Type& t = types_[i];
    if (!t.name.empty() && (t.kind == Kind::kStruct || t.kind == Kind::kUnion))
      out.push_back(static_cast<TypeId>(i));
  }
  return out;
}

}  // namespace types
