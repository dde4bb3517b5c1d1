// IDL output of the type model. OVERVIEW
//
// to_idl() walks the types `top` uses, depth first, and writes each named type after the named
// types it needs (post-order), so the text parses top to bottom. A struct or union that is
// reached again while it is being walked (recursion through a sequence) gets a forward
// declaration at the start. Each named type is written inside its own module blocks (modules
// may be reopened in IDL). References are fully qualified, without the leading "::"
// ("geo::Point": Foxglove's IDL parser takes no leading "::"), except where another type's name
// ends with the same words ("Point" and "geo::Point"), which a scoping rule could pick instead:
// those keep the "::". Anonymous types are written inline: sequence<T, N>, string<N>, and
// arrays as declarator suffixes ("x[3][4]"); an anonymous array that is an element of a
// sequence (possible from a TypeObject, not from IDL) gets a typedef named after its id.
// Annotations: extensibility always (@final, @appendable or @mutable), @key, @optional, @id
// where an id is not the next sequential one, @bit_bound where not 32, @value/@position where
// not sequential, @nested. IdlDialect::kFoxglove writes what Foxglove's parser cannot read in
// other words (see idl_writer.hpp): flattened bases, bitmask typedefs, Enum::LITERAL labels,
// uint8 for char/octet discriminators.
#include "types/idl_writer.hpp"

#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/hex.hpp"

namespace types {
namespace {

const char* primitive_name(Kind k) {
  switch (k) {
    case Kind::kBool:
      return "boolean";
    case Kind::kChar8:
      return "char";
    case Kind::kOctet:
      return "octet";
    case Kind::kInt8:
      return "int8";
    case Kind::kUInt8:
      return "uint8";
    case Kind::kInt16:
      return "short";
    case Kind::kUInt16:
      return "unsigned short";
    case Kind::kInt32:
      return "long";
    case Kind::kUInt32:
      return "unsigned long";
    case Kind::kInt64:
      return "long long";
    case Kind::kUInt64:
      return "unsigned long long";
    case Kind::kFloat32:
      return "float";
    case Kind::kFloat64:
      return "double";
    default:
      return nullptr;
  }
}

const char* extensibility_annotation(Extensibility e) {
  switch (e) {
    case Extensibility::kFinal:
      return "@final";
    case Extensibility::kAppendable:
      return "@appendable";
    case Extensibility::kMutable:
      return "@mutable";
  }
  return "@final";
}

// "a::b::X" -> modules {"a", "b"} and the local name "X".
std::vector<std::string> split_scoped(const std::string& name) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t pos; (pos = name.find("::", start)) != std::string::npos; start = pos + 2)
    parts.push_back(name.substr(start, pos - start));
  parts.push_back(name.substr(start));
  return parts;
}

class Writer {
 public:
  Writer(const TypeLibrary& lib, IdlDialect dialect)
      : lib_(lib), foxglove_(dialect == IdlDialect::kFoxglove) {
    // A name another type's name ends with ("Point" and "geo::Point") could resolve to that
    // other type from inside its module: such names keep the leading "::".
    std::vector<const std::string*> names;
    for (size_t i = 0; i < lib.size(); ++i)
      if (!lib.at(static_cast<TypeId>(i)).name.empty())
        names.push_back(&lib.at(static_cast<TypeId>(i)).name);
    for (const std::string* a : names)
      for (const std::string* b : names)
        if (b->size() > a->size() + 2 && b->ends_with("::" + *a)) ambiguous_.insert(*a);
  }

  std::string run(TypeId top) {
    visit(top);
    std::string out;
    if (foxglove_) return body_.str();  // no forward declarations there
    for (TypeId id : forward_) {
      const Type& t = lib_.at(id);
      out += open_modules(t.name);
      out += (t.kind == Kind::kUnion ? "union " : "struct ") + local_name(t.name) + ";\n";
      out += close_modules(t.name);
    }
    return out + body_.str();
  }

 private:
  // Writes every named type `id` depends on, then `id` itself (when named).
  void visit(TypeId id) {
    const Type& t = lib_.at(id);
    if (is_primitive(t.kind) || t.kind == Kind::kString) return;
    if (done_.count(id)) return;
    if (active_.count(id)) {
      if (!t.name.empty() && (t.kind == Kind::kStruct || t.kind == Kind::kUnion))
        forward_.insert(id);
      return;
    }
    active_.insert(id);
    visit_children(t);
    active_.erase(id);
    done_.insert(id);
    if (!t.name.empty()) {
      write_named(t);
    } else if (t.kind == Kind::kArray && anon_array_typedefs_.count(id)) {
      body_ << "typedef " << ref(t.element) << " anon_array_" << id << dims_suffix(t) << ";\n";
    }
  }

  void visit_children(const Type& t) {
    if (t.element != kNoType) {
      const Type& e = lib_.at(t.element);
      if (t.kind == Kind::kSequence && e.kind == Kind::kArray && e.name.empty())
        anon_array_typedefs_.insert(t.element);
      visit(t.element);
    }
    if (t.base != kNoType) visit(t.base);
    if (t.discriminator != kNoType) visit(t.discriminator);
    for (const Member& m : t.members) visit(m.type);
    for (const UnionCase& c : t.cases) visit(c.member.type);
  }

  // A type as it appears in a declaration, arrays excepted (their dimensions go on the name).
  std::string ref(TypeId id) const {
    const Type& t = lib_.at(id);
    if (const char* p = primitive_name(t.kind)) return p;
    if (!t.name.empty()) return ambiguous_.count(t.name) && !foxglove_ ? "::" + t.name : t.name;
    if (t.kind == Kind::kArray && anon_array_typedefs_.count(id))
      return "anon_array_" + std::to_string(id);
    return anonymous_ref(t, id);
  }

  // A string, sequence or array written out (an array as its element: the dimensions go on
  // the declarator), whatever the type's name.
  std::string anonymous_ref(const Type& t, TypeId id) const {
    switch (t.kind) {
      case Kind::kString:
        return t.bound ? "string<" + std::to_string(t.bound) + ">" : "string";
      case Kind::kSequence:
        return sequence_of(t);
      case Kind::kArray:
        return ref(t.element);
      default:
        return "/* unnamed type " + std::to_string(id) + " */ octet";
    }
  }

  // "sequence<T, N>"; "> >" for nested ones (libcycloneddsidl reads ">>" as a shift).
  std::string sequence_of(const Type& t) const {
    std::string s = "sequence<" + ref(t.element);
    if (t.bound) s += ", " + std::to_string(t.bound);
    return s + (s.back() == '>' ? " >" : ">");
  }

  std::string dims_suffix(const Type& t) const {
    std::string s;
    for (uint32_t d : t.dims) s += "[" + std::to_string(d) + "]";
    return s;
  }

  // "TYPE NAME" with an anonymous array's dimensions after the name.
  std::string declaration(TypeId type, const std::string& name) const {
    const Type& t = lib_.at(type);
    if (t.kind == Kind::kArray && t.name.empty() && !anon_array_typedefs_.count(type))
      return ref(type) + " " + name + dims_suffix(t);
    return ref(type) + " " + name;
  }

  static std::string local_name(const std::string& scoped) { return split_scoped(scoped).back(); }

  static std::string open_modules(const std::string& scoped) {
    auto parts = split_scoped(scoped);
    std::string s;
    for (size_t i = 0; i + 1 < parts.size(); ++i) s += "module " + parts[i] + " {\n";
    return s;
  }
  static std::string close_modules(const std::string& scoped) {
    const size_t n = split_scoped(scoped).size() - 1;
    std::string s;
    for (size_t i = 0; i < n; ++i) s += "};\n";
    return s;
  }

  void write_named(const Type& t) {
    body_ << open_modules(t.name);
    const std::string name = local_name(t.name);
    switch (t.kind) {
      case Kind::kStruct:
        write_struct(t, name);
        break;
      case Kind::kUnion:
        write_union(t, name);
        break;
      case Kind::kEnum:
        write_enum(t, name);
        break;
      case Kind::kBitmask:
        write_bitmask(t, name);
        break;
      case Kind::kAlias:
        body_ << "typedef " << declaration(t.element, name) << ";\n";
        break;
      case Kind::kSequence:
      case Kind::kArray:
      case Kind::kString:
        body_ << "typedef " << anonymous_ref(t, kNoType) << " " << name
              << (t.kind == Kind::kArray ? dims_suffix(t) : std::string()) << ";\n";
        break;
      default:
        break;
    }
    body_ << close_modules(t.name);
  }

  // First id a struct's own members take under SEQUENTIAL ids (after the base's members).
  uint32_t first_member_id(const Type& t) const {
    uint32_t next = 0;
    for (TypeId b = t.base; b != kNoType; b = lib_.at(b).base) {
      const Type& base = lib_.at(b);
      if (!base.members.empty()) {
        next = base.members.back().id + 1;
        break;
      }
    }
    return next;
  }

  void write_member(const Member& m, uint32_t& next_id, const char* indent) {
    body_ << indent;
    if (m.key) body_ << "@key ";
    if (m.optional) body_ << "@optional ";
    if (m.id != next_id) body_ << "@id(" << m.id << ") ";
    next_id = m.id + 1;
    body_ << declaration(m.type, m.name) << ";\n";
  }

  void write_struct(const Type& t, const std::string& name) {
    body_ << extensibility_annotation(t.extensibility) << "\n";
    if (t.nested) body_ << "@nested\n";
    body_ << "struct " << name;
    if (t.base != kNoType && !foxglove_) body_ << " : " << ref(t.base);
    body_ << " {\n";
    uint32_t next_id = 0;
    if (foxglove_) {
      // The bases' members first, outermost base first: the layout inheritance gives.
      std::vector<const Type*> chain;
      for (TypeId b = t.base; b != kNoType && chain.size() < 64; b = lib_.at(lib_.resolve(b)).base)
        chain.push_back(&lib_.at(lib_.resolve(b)));
      for (auto it = chain.rbegin(); it != chain.rend(); ++it)
        for (const Member& m : (*it)->members) write_member(m, next_id, "  ");
    } else {
      next_id = first_member_id(t);
    }
    for (const Member& m : t.members) write_member(m, next_id, "  ");
    body_ << "};\n";
  }

  std::string label(const Type& disc, int64_t v) const {
    switch (disc.kind) {
      case Kind::kBool:
        return v ? "TRUE" : "FALSE";
      case Kind::kChar8: {
        if (foxglove_) return std::to_string(static_cast<uint8_t>(v));
        const char c = static_cast<char>(v);
        if (c >= 0x20 && c < 0x7f && c != '\'' && c != '\\') return std::string("'") + c + "'";
        return "'\\x" + common::to_hex(static_cast<uint8_t>(v)) + "'";
      }
      case Kind::kEnum:
        for (const EnumLiteral& l : disc.literals)
          if (l.value == v)
            return foxglove_ ? disc.name + "::" + l.name : scope_of(disc.name) + l.name;
        return std::to_string(v);
      default:
        return std::to_string(v);
    }
  }
  // "::a::b::" for "a::b::X": enum literals live in the scope enclosing their enum.
  static std::string scope_of(const std::string& scoped) {
    auto parts = split_scoped(scoped);
    std::string s = "::";
    for (size_t i = 0; i + 1 < parts.size(); ++i) s += parts[i] + "::";
    return s;
  }

  void write_union(const Type& t, const std::string& name) {
    body_ << extensibility_annotation(t.extensibility) << "\n";
    if (t.nested) body_ << "@nested\n";
    const Type& disc = lib_.at(lib_.resolve(t.discriminator));
    const bool byte = disc.kind == Kind::kChar8 || disc.kind == Kind::kOctet;
    body_ << "union " << name << " switch ("
          << (foxglove_ && byte ? std::string("uint8") : ref(t.discriminator)) << ") {\n";
    uint32_t next_id =
        0;  // member ids of a union's cases: sequential from 0 (libcycloneddsidl, idlc)
    for (const UnionCase& c : t.cases) {
      for (int64_t v : c.labels) body_ << "  case " << label(disc, v) << ":\n";
      if (c.is_default) body_ << "  default:\n";
      write_member(c.member, next_id, "    ");
    }
    body_ << "};\n";
  }

  void write_enum(const Type& t, const std::string& name) {
    if (t.bit_bound != 32) body_ << "@bit_bound(" << t.bit_bound << ")\n";
    body_ << "enum " << name << " {\n";
    int64_t next = 0;
    for (size_t i = 0; i < t.literals.size(); ++i) {
      const EnumLiteral& l = t.literals[i];
      body_ << "  ";
      if (l.value != next) body_ << "@value(" << l.value << ") ";
      body_ << l.name << (i + 1 < t.literals.size() ? ",\n" : "\n");
      next = int64_t{l.value} + 1;
    }
    body_ << "};\n";
  }

  void write_bitmask(const Type& t, const std::string& name) {
    if (foxglove_) {  // the unsigned integer that holds the flags (XTypes 7.4.3.5.2)
      const int bits = t.bit_bound <= 8 ? 8 : t.bit_bound <= 16 ? 16 : t.bit_bound <= 32 ? 32 : 64;
      body_ << "typedef uint" << bits << " " << name << ";\n";
      return;
    }
    if (t.bit_bound != 32) body_ << "@bit_bound(" << t.bit_bound << ")\n";
    body_ << "bitmask " << name << " {\n";
    uint32_t next = 0;
    for (size_t i = 0; i < t.flags.size(); ++i) {
      const BitFlag& f = t.flags[i];
      body_ << "  ";
      if (f.position != next) body_ << "@position(" << f.position << ") ";
      body_ << f.name << (i + 1 < t.flags.size() ? ",\n" : "\n");
      next = uint32_t{f.position} + 1;
    }
    body_ << "};\n";
  }

  const TypeLibrary& lib_;
  const bool foxglove_;
  std::set<TypeId> done_, active_, forward_, anon_array_typedefs_;
  std::set<std::string> ambiguous_;
  std::ostringstream body_;
};

}  // namespace

std::string to_idl(const TypeLibrary& lib, TypeId top, IdlDialect dialect) {
  return Writer(lib, dialect).run(top);
}

}  // namespace types
