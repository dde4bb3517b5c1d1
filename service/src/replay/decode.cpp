// export --decode: types from IDL files, matched to topics by type name; CSV flattening.
#include "decode.hpp"

#include "types/idl.hpp"

namespace service::replay::detail {

Result<SampleDecoder> SampleDecoder::create(const std::vector<std::string>& idl_files,
                                            const ResolvedSelection& sel,
                                            std::vector<std::string>& missing, bool require_one) {
  SampleDecoder d;
  for (const std::string& f : idl_files) {
    auto lib = types::parse_idl_file(f);
    if (!lib) return lib.error();
    d.libs_.push_back(std::make_unique<types::TypeLibrary>(std::move(lib).value()));
  }
  for (const storage::TopicInfo& t : sel.topics) {
    bool found = false;
    for (const auto& lib : d.libs_) {
      if (auto id = lib->find(t.def.type_name)) {
        d.topics_[t.id] = TopicType{lib.get(), *id, t.def.type_name};
        found = true;
        break;
      }
    }
    if (!found) missing.push_back(t.def.name + " (type " + t.def.type_name + ")");
  }
  if (d.topics_.empty() && !require_one) return d;
  if (d.topics_.empty()) {
    std::string names;
    for (const auto& m : missing) names += (names.empty() ? "" : ", ") + m;
    return make_error(Errc::kNotFound,
                      "--decode: no type in the IDL given for any selected topic: " + names);
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
