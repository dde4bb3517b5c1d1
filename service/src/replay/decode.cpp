// export --decode: types from IDL files and from the recording, matched to topics by type name;
// CSV flattening.
#include "decode.hpp"

#include <set>

#include "types/idl.hpp"

namespace service::replay::detail {

namespace {

const std::string kRecordedLookup = "the recording (lookup)";

// Adds the recording's definition of every selected topic's type (after the user's IDL, which
// wins). A stored definition that does not parse leaves its topics without a type (warned).
void add_recorded_types(types::TypeCatalog& catalog, const ResolvedSelection& sel,
                        std::vector<std::string>& warnings) {
  std::set<std::string> done;
  for (const storage::TopicInfo& t : sel.topics) {
    const std::string& name = t.def.type_name;
    if (!done.insert(name).second || catalog.find(name)) continue;
    const storage::TypeDef* def = recorded_type(sel.recorded_types, name);
    if (!def) continue;
    const std::string origin = std::string("the recording (") + type_source_name(def) + ")";
    auto lib = types::parse_idl(def->idl, "type " + name + " in " + origin);
    if (!lib) {
      warnings.push_back(lib.error().message);
      continue;
    }
    catalog.add(std::move(lib).value(), origin);
  }
}

}  // namespace

Result<SampleDecoder> SampleDecoder::create(const std::vector<std::string>& idl_files,
                                            const ResolvedSelection& sel,
                                            std::vector<std::string>& missing,
                                            std::vector<std::string>& warnings, bool require_one) {
  SampleDecoder d;
  auto catalog = types::TypeCatalog::from_idl_files({idl_files.begin(), idl_files.end()});
  if (!catalog) return catalog.error();
  d.catalog_ = std::move(catalog).value();
  add_recorded_types(d.catalog_, sel, warnings);
  for (const storage::TopicInfo& t : sel.topics) {
    if (auto f = d.catalog_.find(t.def.type_name)) {
      const bool looked_up = *f->origin == kRecordedLookup;
      d.topics_[t.id] = TopicType{f->lib, f->id, t.def.type_name, looked_up ? "lookup" : "idl"};
    } else {
      missing.push_back(t.def.name + " (type " + t.def.type_name + ")");
    }
  }
  if (d.topics_.empty() && !require_one) return d;
  if (d.topics_.empty()) {
    std::string names;
    for (const auto& m : missing) names += (names.empty() ? "" : ", ") + m;
    return make_error(Errc::kNotFound,
                      "--decode: no type, in the recording or the IDL given, for any selected "
                      "topic: " +
                          names);
  }
  const TopicType& first = d.topics_.begin()->second;
  std::vector<std::string> path;
  d.flatten(*first.lib, first.id, path, 0);
  return d;
}

common::Expected<types::Json> SampleDecoder::decode(const TopicType& t, storage::ByteSpan payload) {
  return types::decode_cdr(
      *t.lib, t.id,
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(payload.data()), payload.size()));
}

std::string SampleDecoder::single_type_name() const {
  std::string name;
  for (const auto& [id, t] : topics_) {
    if (!name.empty() && t.name != name) return "";
    name = t.name;
  }
  return name;
}

// Struct members (base first) become dotted paths; every other kind is one leaf column.
void SampleDecoder::flatten(const types::TypeLibrary& lib, types::TypeId id,
                            std::vector<std::string>& path, int depth) {
  const types::Type& t = lib.at(lib.resolve(id));
  if (t.kind != types::Kind::kStruct || depth > 32) {
    std::string col;
    for (const auto& p : path) col += (col.empty() ? "" : ".") + p;
    columns_.push_back(col.empty() ? "value" : col);
    column_paths_.push_back(path);
    return;
  }
  if (t.base != types::kNoType) flatten(lib, t.base, path, depth + 1);
  for (const types::Member& m : t.members) {
    path.push_back(m.name);
    flatten(lib, m.type, path, depth + 1);
    path.pop_back();
  }
}

void SampleDecoder::append_csv_values(std::string& out, const types::Json& value) const {
  for (const auto& path : column_paths_) {
    const types::Json* v = &value;
    for (const auto& key : path) {
      if (!v->is_object()) {
        v = nullptr;
        break;
      }
      auto it = v->find(key);
      if (it == v->end()) {
        v = nullptr;
        break;
      }
      v = &*it;
    }
    out += ',';
    if (!v || v->is_null()) continue;
    if (v->is_string()) {
      append_csv_field(out, v->get_ref<const std::string&>());
    } else {
      append_csv_field(out, v->dump(-1, ' ', false, types::Json::error_handler_t::replace));
    }
  }
}

}  // namespace service::replay::detail
