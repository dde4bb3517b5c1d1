// export --decode: types from IDL files and from the recording, matched to topics by type name;
// CSV flattening.
#include "decode.hpp"

#include <set>
#include <utility>

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

// The first difference between two types that matters on the wire (aliases followed; names of
// nested types, bounds of strings and sequences and annotations without wire effect ignored).
class TypeComparer {
 public:
  TypeComparer(const types::TypeLibrary& a, const types::TypeLibrary& b) : a_(a), b_(b) {}
  // "" when they match, else e.g. "member pose.x: double here, float in the recording".
  std::string difference(types::TypeId x, types::TypeId y) {
    diff_.clear();
    same(x, y, "");
    return diff_;
  }

 private:
  static const char* primitive(types::Kind k) {
    static const char* const kNames[] = {"boolean",
                                         "char",
                                         "octet",
                                         "int8",
                                         "uint8",
                                         "short",
                                         "unsigned short",
                                         "long",
                                         "unsigned long",
                                         "long long",
                                         "unsigned long long",
                                         "float",
                                         "double"};
    return types::is_primitive(k) ? kNames[static_cast<int>(k)] : nullptr;
  }
  static std::string spell(const types::TypeLibrary& lib, types::TypeId id) {
    const types::Type& t = lib.at(lib.resolve(id));
    if (const char* p = primitive(t.kind)) return p;
    switch (t.kind) {
      case types::Kind::kString:
        return "string";
      case types::Kind::kSequence:
        return "sequence<" + spell(lib, t.element) + ">";
      case types::Kind::kArray: {
        std::string s = spell(lib, t.element);
        for (uint32_t d : t.dims) s += "[" + std::to_string(d) + "]";
        return s;
      }
      case types::Kind::kEnum:
        return "enum " + t.name;
      case types::Kind::kBitmask:
        return "bitmask " + t.name;
      case types::Kind::kUnion:
        return "union " + t.name;
      default:
        return "struct " + t.name;
    }
  }
  static const char* extensibility(types::Extensibility e) {
    return e == types::Extensibility::kFinal        ? "@final"
           : e == types::Extensibility::kAppendable ? "@appendable"
                                                    : "@mutable";
  }
  bool differ(const std::string& path, const std::string& here, const std::string& recorded) {
    diff_ = (path.empty() ? std::string("the type") : "member " + path) + ": " + here + " here, " +
            recorded + " in the recording";
    return false;
  }
  // Struct members with those of the bases first.
  void members_of(const types::TypeLibrary& lib, types::TypeId id,
                  std::vector<const types::Member*>& out, int depth = 0) {
    const types::Type& t = lib.at(lib.resolve(id));
    if (t.base != types::kNoType && depth < 32) members_of(lib, t.base, out, depth + 1);
    for (const auto& m : t.members) out.push_back(&m);
  }
  static std::string join(const std::string& path, const std::string& name) {
    return path.empty() ? name : path + "." + name;
  }
  bool same(types::TypeId x, types::TypeId y, const std::string& path) {
    x = a_.resolve(x);
    y = b_.resolve(y);
    if (!seen_.insert({x, y}).second) return true;  // recursion: compared above
    const types::Type& s = a_.at(x);
    const types::Type& t = b_.at(y);
    if (s.kind != t.kind) return differ(path, spell(a_, x), spell(b_, y));
    if (types::is_primitive(s.kind) || s.kind == types::Kind::kString) return true;
    switch (s.kind) {
      case types::Kind::kSequence:
        return same(s.element, t.element, path + "[]");
      case types::Kind::kArray:
        if (s.dims != t.dims) return differ(path, spell(a_, x), spell(b_, y));
        return same(s.element, t.element, path + "[]");
      case types::Kind::kEnum: {
        if (s.bit_bound != t.bit_bound || s.literals.size() != t.literals.size())
          return differ(path,
                        spell(a_, x) + " of " + std::to_string(s.literals.size()) + " literals",
                        std::to_string(t.literals.size()) + " literals");
        for (size_t i = 0; i < s.literals.size(); ++i) {
          if (s.literals[i].name != t.literals[i].name ||
              s.literals[i].value != t.literals[i].value)
            return differ(
                path, "literal " + s.literals[i].name + " = " + std::to_string(s.literals[i].value),
                t.literals[i].name + " = " + std::to_string(t.literals[i].value));
        }
        return true;
      }
      case types::Kind::kBitmask:
        if (s.bit_bound != t.bit_bound)
          return differ(path, "@bit_bound(" + std::to_string(s.bit_bound) + ")",
                        "@bit_bound(" + std::to_string(t.bit_bound) + ")");
        return true;
      case types::Kind::kUnion: {
        if (s.extensibility != t.extensibility)
          return differ(path, extensibility(s.extensibility), extensibility(t.extensibility));
        if (!same(s.discriminator, t.discriminator, join(path, "$discriminator"))) return false;
        if (s.cases.size() != t.cases.size())
          return differ(path, std::to_string(s.cases.size()) + " cases",
                        std::to_string(t.cases.size()));
        for (size_t i = 0; i < s.cases.size(); ++i) {
          const auto& c = s.cases[i];
          const auto& d = t.cases[i];
          if (c.labels != d.labels || c.is_default != d.is_default ||
              c.member.name != d.member.name)
            return differ(join(path, c.member.name), "a different case", "case " + d.member.name);
          if (!same(c.member.type, d.member.type, join(path, c.member.name))) return false;
        }
        return true;
      }
      default: {  // struct
        if (s.extensibility != t.extensibility)
          return differ(path, extensibility(s.extensibility), extensibility(t.extensibility));
        std::vector<const types::Member*> ms, mt;
        members_of(a_, x, ms);
        members_of(b_, y, mt);
        for (size_t i = 0; i < ms.size() || i < mt.size(); ++i) {
          if (i >= mt.size() || i >= ms.size() || ms[i]->name != mt[i]->name) {
            auto at = [&](const std::vector<const types::Member*>& v) {
              return i < v.size() ? "member " + join(path, v[i]->name) : std::string("no member");
            };
            diff_ = at(ms) + " here, " + at(mt) + " in the recording" +
                    (i ? " (after " + join(path, ms[i - 1]->name) + ")" : std::string());
            return false;
          }
          const types::Member& m = *ms[i];
          const types::Member& n = *mt[i];
          const std::string p = join(path, m.name);
          if (m.key != n.key)
            return differ(p, m.key ? "@key" : "not @key", n.key ? "@key" : "not @key");
          if (m.optional != n.optional)
            return differ(p, m.optional ? "@optional" : "not @optional",
                          n.optional ? "@optional" : "not @optional");
          if (s.extensibility == types::Extensibility::kMutable && m.id != n.id)
            return differ(p, "@id(" + std::to_string(m.id) + ")",
                          "@id(" + std::to_string(n.id) + ")");
          if (!same(m.type, n.type, p)) return false;
        }
        return true;
      }
    }
  }

  const types::TypeLibrary& a_;
  const types::TypeLibrary& b_;
  std::set<std::pair<types::TypeId, types::TypeId>> seen_;
  std::string diff_;
};

// For every selected topic whose type came from --idl while the recording holds a definition of
// it: one warning when the two differ.
void compare_with_recorded(const std::map<storage::TopicId, SampleDecoder::TopicType>& topics,
                           const types::TypeCatalog& catalog, const ResolvedSelection& sel,
                           std::vector<std::string>& mismatches) {
  std::map<std::string, std::string> diff_of;  // type name -> difference ("" none)
  for (const storage::TopicInfo& t : sel.topics) {
    auto it = topics.find(t.id);
    if (it == topics.end()) continue;
    const std::string& name = t.def.type_name;
    auto f = catalog.find(name);
    if (!f || f->origin->rfind("the recording (", 0) == 0) continue;  // not from --idl
    const storage::TypeDef* def = recorded_type(sel.recorded_types, name);
    if (!def) continue;
    auto d = diff_of.find(name);
    if (d == diff_of.end()) {
      std::string diff;
      auto lib = types::parse_idl(def->idl, "type " + name + " in the recording");
      std::optional<types::TypeId> id;
      if (lib) id = lib->find(name);
      if (lib && id) diff = TypeComparer(*f->lib, *lib).difference(f->id, *id);
      d = diff_of.emplace(name, diff).first;
    }
    if (d->second.empty()) continue;
    mismatches.push_back("topic " + t.def.name + ": type " + name + " from " + *f->origin +
                         " differs from the one recorded (" + type_source_name(def) +
                         "): " + d->second);
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
  compare_with_recorded(d.topics_, d.catalog_, sel, d.mismatches_);
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

Result<types::Json> SampleDecoder::decode(const TopicType& t, storage::ByteSpan payload,
                                          size_t* trailing) {
  return types::decode_cdr(
      *t.lib, t.id,
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(payload.data()), payload.size()),
      {}, trailing);
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
    std::string col = "value";
    for (const auto& p : path) col += "." + p;
    columns_.push_back(col);
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
