// IDL to the type model through Cyclone DDS's IDL library (libcycloneddsidl 0.10.2).
//
// Ownership: parse_idl() creates one idl_pstate_t per call (held by a unique_ptr that calls
// idl_delete_pstate), hands it a NUL-terminated copy of the text (idl_parse_string), walks the
// tree the library built and copies what it needs into a TypeLibrary; no pointer into the tree
// survives the call. Nothing is shared between calls, so parses on different threads are
// independent.
//
// Flags: IDL_FLAG_EXTENDED_DATA_TYPES (int8/uint8/int16/... and bitmask), IDL_FLAG_ANONYMOUS_TYPES
// (sequence<...>/string<N> written in a member declaration), IDL_FLAG_ANNOTATIONS (@key,
// @id, ...) - what Cyclone's idlc passes - plus IDL_FLAG_KEYLIST so old "#pragma keylist T a b"
// files still parse (the library turns the list into key flags on the members, @key keeps
// working). config.default_extensibility is set to IDL_FINAL: that is what the library uses
// anyway when it is left undefined, but left undefined it prints a warning.
//
// The library computes what the model needs: constant expressions (bounds, array sizes,
// @value, labels), member ids (@id, @autoid(SEQUENTIAL) continuing after the base struct's
// members, @autoid(HASH) and @hashid as MD5-based ids), enumerator values, bit positions,
// extensibility and nestedness (@nested, @topic, @default_nested). We take its values.
//
// The walk has two passes over the tree: the first adds every named type (struct, union, enum,
// bitmask, typedef declarator) to the library with its qualified name, so that the second,
// which fills them in declaration order, can refer to any of them by TypeId - forward
// declarations and recursion through sequences need nothing more. Anonymous types (bounded
// strings, sequences, arrays of a declarator) are added as the second pass meets them, one
// entry per use.
//
// Messages: the library writes its errors and warnings to stderr from idl_verror/idl_error/
// idl_warning and has no log callback in 0.10.2. This file defines those three functions
// itself: the library calls them through its PLT, so the definitions in our executable take
// precedence (ELF symbol interposition). While parse_idl() runs, a thread-local sink keeps the
// first error (location and text) and drops the warnings; for any other caller they print the
// way the library does. If the library were ever loaded so that it binds to its own copies
// (dlopen'ed into a local scope, -Bsymbolic), parse_idl() still returns the same errors but
// with "FILE: parse failed" instead of the library's text, and the library prints as before.
//
// Teardown: before idl_delete_pstate, release_recursion() drops the reference a sequence holds
// on a struct or union that contains it; libcycloneddsidl 0.10.2 would otherwise leak both.
//
// Not supported (refused with "FILE:LINE:COLUMN: ..."): preprocessor directives other than
// #pragma (the library has no preprocessor), wchar, wstring, long double, fixed, any, map
// (Cyclone 0.10.2 does not parse wstring/fixed/any/map at all; its syntax error at such a
// token is reported as the type not being supported). @must_understand is accepted by the
// library on members of mutable types only.
#include "types/idl.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

// Cyclone's headers are C: they name enums before defining them ("typedef enum idl_type
// idl_type_t;" ahead of "enum idl_type {...}"), which C++ rejects. The elaborated names find
// these stand-ins (same size and representation: unsigned int, the type GCC gives those C
// enums) through the using-directive; the enumerators still come from the headers' own enum
// definitions. Compare such fields through as_uint().
namespace cyclone_fwd {
enum idl_type : unsigned {};
enum idl_autoid : unsigned {};
enum idl_extensibility : unsigned {};
enum idl_try_construct : unsigned {};
enum idl_accept : unsigned {};
enum idl_visit_recurse : unsigned {};
enum idl_visit_iterate : unsigned {};
enum idl_visit_revisit : unsigned {};
enum idl_warning : unsigned {};
}  // namespace cyclone_fwd
using namespace cyclone_fwd;  // NOLINT(google-build-using-namespace): see above

extern "C" {
#include <idl/processor.h>
}

namespace {

// ---- messages from the library -------------------------------------------------------------

// What the library reported during one parse_idl() call.
struct Diagnostics {
  const idl_pstate_t* pstate = nullptr;
  bool has_error = false;
  bool has_location = false;
  uint32_t line = 0;
  uint32_t column = 0;
  std::string message;  // the first error's text, without location
};

thread_local Diagnostics* t_sink = nullptr;

// Installs a sink for the current thread for the lifetime of the object.
class SinkScope {
 public:
  explicit SinkScope(Diagnostics* d) : previous_(t_sink) { t_sink = d; }
  ~SinkScope() { t_sink = previous_; }
  SinkScope(const SinkScope&) = delete;
  SinkScope& operator=(const SinkScope&) = delete;

 private:
  Diagnostics* previous_;
};

std::string vformat(const char* fmt, va_list ap) {
  va_list copy;
  va_copy(copy, ap);
  const int n = std::vsnprintf(nullptr, 0, fmt, copy);
  va_end(copy);
  if (n <= 0) return {};
  std::string out(static_cast<size_t>(n) + 1, '\0');
  std::vsnprintf(out.data(), out.size(), fmt, ap);
  out.resize(static_cast<size_t>(n));
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

// Prints a message the way libcycloneddsidl does ("file:line:col: text", "line:col: text").
void print_like_library(const idl_location_t* loc, const std::string& text) {
  if (loc && loc->first.file && loc->first.file->name)
    std::fprintf(stderr, "%s:%u:%u: %s\n", loc->first.file->name, loc->first.line,
                 loc->first.column, text.c_str());
  else if (loc)
    std::fprintf(stderr, "%u:%u: %s\n", loc->first.line, loc->first.column, text.c_str());
  else
    std::fprintf(stderr, "%s\n", text.c_str());
}

Diagnostics* sink_for(const idl_pstate_t* pstate) {
  return (t_sink && t_sink->pstate == pstate) ? t_sink : nullptr;
}

void report_error(const idl_pstate_t* pstate, const idl_location_t* loc, const char* fmt,
                  va_list ap) {
  std::string text = vformat(fmt, ap);
  Diagnostics* d = sink_for(pstate);
  if (!d) return print_like_library(loc, text);
  if (d->has_error) return;  // the first error is the one that matters
  d->has_error = true;
  d->has_location = loc != nullptr;
  if (loc) {
    d->line = loc->first.line;
    d->column = loc->first.column;
  }
  d->message = std::move(text);
}

bool warning_disabled(const idl_pstate_t* pstate, idl_warning_t warning) {
  if (!pstate || !pstate->config.disable_warnings) return false;
  for (size_t i = 0; i < pstate->config.n_disable_warnings; ++i)
    if (pstate->config.disable_warnings[i] == warning) return true;
  return false;
}

}  // namespace

// The library's reporting functions, interposed (see the comment at the top).
extern "C" {

void idl_verror(const idl_pstate_t* pstate, const idl_location_t* loc, const char* fmt,
                va_list ap) {
  report_error(pstate, loc, fmt, ap);
}

void idl_error(const idl_pstate_t* pstate, const idl_location_t* loc, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  report_error(pstate, loc, fmt, ap);
  va_end(ap);
}

void idl_warning(const idl_pstate_t* pstate, idl_warning_t warning, const idl_location_t* loc,
                 const char* fmt, ...) {
  if (sink_for(pstate) || warning_disabled(pstate, warning)) return;  // parse_idl: dropped
  va_list ap;
  va_start(ap, fmt);
  std::string text = vformat(fmt, ap);
  va_end(ap);
  print_like_library(loc, text);
}

}  // extern "C"

namespace types {
namespace {

using common::Errc;
using common::Error;
using common::Expected;

template <class E>
unsigned as_uint(E e) {
  return static_cast<unsigned>(e);
}

std::string located(std::string_view file, uint32_t line, uint32_t column, std::string_view what) {
  std::string out(file);
  out += ':' + std::to_string(line) + ':' + std::to_string(column) + ": ";
  out += what;
  return out;
}

// ---- preprocessor directives -----------------------------------------------------------------

// Skips a comment or literal starting at text[i] (if one does); returns the index after it.
// Counts the newlines it passes in `line`.
size_t skip_comment_or_literal(std::string_view text, size_t i, size_t& line) {
  if (text.compare(i, 2, "//") == 0) {
    while (i < text.size() && text[i] != '\n') ++i;
    return i;
  }
  if (text.compare(i, 2, "/*") == 0) {
    i += 2;
    while (i < text.size() && text.compare(i, 2, "*/") != 0) line += text[i++] == '\n';
    return std::min(text.size(), i + 2);
  }
  if (text[i] == '"' || text[i] == '\'') {
    const char quote = text[i++];
    while (i < text.size() && text[i] != quote && text[i] != '\n') i += text[i] == '\\' ? 2 : 1;
    return std::min(text.size(), i + 1);
  }
  return i;
}

// The name after '#' at text[i] ("include", "define", "" for "# 1 \"x.idl\"").
std::string directive_name(std::string_view text, size_t i) {
  ++i;
  while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
  std::string name;
  while (i < text.size() && (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '_'))
    name += text[i++];
  return name;
}

// Refuses every directive but #pragma (which the library handles: keylist, unknown ones are
// ignored), ignoring '#' inside comments and literals.
std::optional<Error> check_directives(std::string_view text, std::string_view file) {
  size_t line = 1;
  bool line_start = true;
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      line_start = true;
      ++i;
    } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      ++i;
    } else if (c == '#' && line_start) {
      std::string name = directive_name(text, i);
      if (name != "pragma")
        return Error{Errc::kInvalidArgument,
                     located(file, static_cast<uint32_t>(line), 1,
                             "preprocessor directives are not supported (#" + name +
                                 "); run the file through a C preprocessor first")};
      while (i < text.size() && text[i] != '\n') ++i;
    } else {
      line_start = false;
      const size_t next = skip_comment_or_literal(text, i, line);
      i = next == i ? i + 1 : next;
    }
  }
  return std::nullopt;
}

// ---- syntax errors at types Cyclone 0.10.2 does not know ----------------------------------------

// The identifier at 1-based (line, column) of text, or "".
std::string word_at(std::string_view text, uint32_t line, uint32_t column) {
  size_t i = 0;
  for (uint32_t l = 1; l < line && i < text.size(); ++i)
    if (text[i] == '\n') ++l;
  i += column > 0 ? column - 1 : 0;
  std::string word;
  while (i < text.size() && (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '_'))
    word += text[i++];
  return word;
}

// The library's first error as our message: "FILE:LINE:COLUMN: text".
Error parse_error(const Diagnostics& d, std::string_view text, std::string_view file,
                  idl_retcode_t rc) {
  if (!d.has_error)
    return Error{
        Errc::kInvalidArgument,
        std::string(file) + ": parse failed (libcycloneddsidl code " + std::to_string(rc) + ")"};
  if (!d.has_location) return Error{Errc::kInvalidArgument, std::string(file) + ": " + d.message};
  std::string what = d.message;
  if (what == "syntax error") {
    const std::string word = word_at(text, d.line, d.column);
    for (const char* unsupported : {"wstring", "fixed", "any", "map", "Object", "ValueBase"})
      if (word == unsupported) what = "type " + word + " is not supported";
  }
  return Error{Errc::kInvalidArgument, located(file, d.line, d.column, what)};
}

// ---- the walk ------------------------------------------------------------------------------

class Builder {
 public:
  // `builtin` is the pseudo file of the library's own declarations (see parse_idl()).
  Builder(std::string_view file, const idl_file_t* builtin) : file_(file), builtin_(builtin) {}

  Expected<TypeLibrary> build(const void* root) {
    declare(root, "");
    if (!define(root)) return *error_;
    return std::move(lib_);
  }

 private:
  void declare(const void* list, const std::string& scope);
  void declare_named(const void* node, Kind kind, const std::string& name);
  bool define(const void* list);
  bool define_struct(const idl_struct_t* s);
  bool define_union(const idl_union_t* u);
  bool define_cases(const idl_union_t* u, Type& t);
  void define_enum(const idl_enum_t* e);
  void define_bitmask(const idl_bitmask_t* b);
  bool define_typedef(const idl_typedef_t* td);
  std::optional<TypeId> type_of(const void* type_spec);
  std::optional<TypeId> primitive_of(const void* type_spec);
  std::optional<TypeId> declared_type(const idl_declarator_t* d, const void* type_spec);
  bool fail(const void* node, const std::string& what);
  bool is_builtin(const void* node) const {
    return builtin_ && idl_location(node)->first.file == builtin_;
  }

  std::string_view file_;
  const idl_file_t* builtin_;
  TypeLibrary lib_;
  std::unordered_map<const void*, TypeId> ids_;  // tree node -> named type
  std::optional<Error> error_;
};

bool Builder::fail(const void* node, const std::string& what) {
  const idl_location_t* loc = idl_location(node);
  error_ = Error{Errc::kInvalidArgument, located(file_, loc->first.line, loc->first.column, what)};
  return false;
}

void Builder::declare_named(const void* node, Kind kind, const std::string& name) {
  Type t;
  t.kind = kind;
  t.name = name;
  ids_[node] = lib_.add(std::move(t));
}

// Pass 1: a placeholder with kind and qualified name for every named type, in order.
void Builder::declare(const void* list, const std::string& scope) {
  for (const void* node = list; node; node = idl_next(node)) {
    if (is_builtin(node)) continue;
    const std::string name = scope + (idl_identifier(node) ? idl_identifier(node) : "");
    if (idl_is_module(node)) {
      declare(static_cast<const idl_module_t*>(node)->definitions, name + "::");
    } else if (idl_is_forward(node)) {
      continue;  // the definition follows (the library insists on it)
    } else if (idl_is_struct(node)) {
      declare_named(node, Kind::kStruct, name);
    } else if (idl_is_union(node)) {
      declare_named(node, Kind::kUnion, name);
    } else if (idl_is_enum(node)) {
      declare_named(node, Kind::kEnum, name);
    } else if (idl_is_bitmask(node)) {
      declare_named(node, Kind::kBitmask, name);
    } else if (idl_is_typedef(node)) {
      const auto* td = static_cast<const idl_typedef_t*>(node);
      for (const void* d = td->declarators; d; d = idl_next(d))
        declare_named(d, Kind::kAlias, scope + idl_identifier(d));
    }
  }
}

// Pass 2: fills the placeholders (constants and annotation declarations are skipped).
bool Builder::define(const void* list) {
  for (const void* node = list; node; node = idl_next(node)) {
    bool ok = true;
    if (is_builtin(node))
      continue;
    else if (idl_is_module(node))
      ok = define(static_cast<const idl_module_t*>(node)->definitions);
    else if (idl_is_forward(node))
      continue;
    else if (idl_is_struct(node))
      ok = define_struct(static_cast<const idl_struct_t*>(node));
    else if (idl_is_union(node))
      ok = define_union(static_cast<const idl_union_t*>(node));
    else if (idl_is_enum(node))
      define_enum(static_cast<const idl_enum_t*>(node));
    else if (idl_is_bitmask(node))
      define_bitmask(static_cast<const idl_bitmask_t*>(node));
    else if (idl_is_typedef(node))
      ok = define_typedef(static_cast<const idl_typedef_t*>(node));
    if (!ok) return false;
  }
  return true;
}

Extensibility extensibility_of(idl_extensibility_t e) {
  if (as_uint(e) == as_uint(IDL_MUTABLE)) return Extensibility::kMutable;
  if (as_uint(e) == as_uint(IDL_APPENDABLE)) return Extensibility::kAppendable;
  return Extensibility::kFinal;
}

bool Builder::define_struct(const idl_struct_t* s) {
  const TypeId id = ids_.at(s);
  Type t = lib_.at(id);
  t.extensibility = extensibility_of(s->extensibility.value);
  t.nested = s->nested.value;
  t.autoid_hash = as_uint(s->autoid.value) == as_uint(IDL_HASH);
  if (s->inherit_spec) {
    std::optional<TypeId> base = type_of(s->inherit_spec->base);
    if (!base) return false;
    t.base = lib_.resolve(*base);
  }
  for (const void* m = s->members; m; m = idl_next(m)) {
    const auto* member = static_cast<const idl_member_t*>(m);
    for (const void* d = member->declarators; d; d = idl_next(d)) {
      const auto* decl = static_cast<const idl_declarator_t*>(d);
      std::optional<TypeId> type = declared_type(decl, member->type_spec);
      if (!type) return false;
      Member out;
      out.name = idl_identifier(decl);
      out.type = *type;
      out.id = decl->id.value;
      out.key = member->key.value;
      out.optional = member->optional.value;
      out.must_understand = member->must_understand.value;
      t.members.push_back(std::move(out));
    }
  }
  lib_.at(id) = std::move(t);
  return true;
}

bool Builder::define_union(const idl_union_t* u) {
  const TypeId id = ids_.at(u);
  Type t = lib_.at(id);
  t.extensibility = extensibility_of(u->extensibility.value);
  t.nested = u->nested.value;
  t.autoid_hash = as_uint(u->autoid.value) == as_uint(IDL_HASH);
  std::optional<TypeId> disc = type_of(u->switch_type_spec->type_spec);
  if (!disc) return false;
  t.discriminator = lib_.resolve(*disc);
  if (t.discriminator != *disc) t.discriminator_typedef = *disc;
  if (!define_cases(u, t)) return false;
  lib_.at(id) = std::move(t);
  return true;
}

// Labels are the library's values: integers, characters, booleans (0/1), enumerators' values.
bool Builder::define_cases(const idl_union_t* u, Type& t) {
  for (const void* c = u->cases; c; c = idl_next(c)) {
    const auto* cs = static_cast<const idl_case_t*>(c);
    UnionCase out;
    for (const void* l = cs->labels; l; l = idl_next(l)) {
      const idl_mask_t mask = idl_mask(l);
      if (mask == IDL_DEFAULT_CASE_LABEL)  // its const_expr is the value the library picked
        out.is_default = true;
      else if (mask != IDL_IMPLICIT_DEFAULT_CASE_LABEL)
        out.labels.push_back(idl_case_label_intvalue(l));
    }
    std::optional<TypeId> type = declared_type(cs->declarator, cs->type_spec);
    if (!type) return false;
    out.member.name = idl_identifier(cs->declarator);
    out.member.type = *type;
    out.member.id = cs->declarator->id.value;
    t.cases.push_back(std::move(out));
  }
  return true;
}

void Builder::define_enum(const idl_enum_t* e) {
  Type& t = lib_.at(ids_.at(e));
  t.bit_bound = e->bit_bound.value;
  for (const void* n = e->enumerators; n; n = idl_next(n)) {
    const auto* en = static_cast<const idl_enumerator_t*>(n);
    t.literals.push_back(EnumLiteral{idl_identifier(en), static_cast<int32_t>(en->value.value)});
  }
}

void Builder::define_bitmask(const idl_bitmask_t* b) {
  Type& t = lib_.at(ids_.at(b));
  t.bit_bound = b->bit_bound.value;
  for (const void* n = b->bit_values; n; n = idl_next(n)) {
    const auto* bv = static_cast<const idl_bit_value_t*>(n);
    t.flags.push_back(BitFlag{idl_identifier(bv), bv->position.value});
  }
}

bool Builder::define_typedef(const idl_typedef_t* td) {
  for (const void* d = td->declarators; d; d = idl_next(d)) {
    std::optional<TypeId> type =
        declared_type(static_cast<const idl_declarator_t*>(d), td->type_spec);
    if (!type) return false;
    lib_.at(ids_.at(d)).element = *type;
  }
  return true;
}

// The type of a declarator: type_spec, or an anonymous array of it ("long m[2][3]").
std::optional<TypeId> Builder::declared_type(const idl_declarator_t* d, const void* type_spec) {
  std::optional<TypeId> element = type_of(type_spec);
  if (!element || !d->const_expr) return element;
  Type array;
  array.kind = Kind::kArray;
  array.element = *element;
  for (const void* n = d->const_expr; n; n = idl_next(n))
    array.dims.push_back(static_cast<const idl_literal_t*>(n)->value.uint32);
  return lib_.add(std::move(array));
}

// A reference to a type: a named one (declared in pass 1), a primitive, or a new anonymous
// string<N> or sequence.
std::optional<TypeId> Builder::type_of(const void* ts) {
  if (idl_is_forward(ts)) ts = static_cast<const idl_forward_t*>(ts)->type_spec;
  if (auto it = ids_.find(ts); it != ids_.end()) return it->second;
  if (idl_is_string(ts)) {
    const uint32_t bound = static_cast<const idl_string_t*>(ts)->maximum;
    if (bound == 0) return lib_.primitive(Kind::kString);
    Type s;
    s.kind = Kind::kString;
    s.bound = bound;
    return lib_.add(std::move(s));
  }
  if (idl_is_sequence(ts)) {
    const auto* seq = static_cast<const idl_sequence_t*>(ts);
    std::optional<TypeId> element = type_of(seq->type_spec);
    if (!element) return std::nullopt;
    Type s;
    s.kind = Kind::kSequence;
    s.element = *element;
    s.bound = seq->maximum;
    return lib_.add(std::move(s));
  }
  if (idl_is_base_type(ts)) return primitive_of(ts);
  fail(ts, std::string("type ") + idl_construct(ts) + " is not supported");
  return std::nullopt;
}

std::optional<TypeId> Builder::primitive_of(const void* ts) {
  switch (idl_mask(ts) & IDL_TYPE_MASK) {
    case IDL_BOOL:
      return lib_.primitive(Kind::kBool);
    case IDL_CHAR:
      return lib_.primitive(Kind::kChar8);
    case IDL_OCTET:
      return lib_.primitive(Kind::kOctet);
    case IDL_INT8:
      return lib_.primitive(Kind::kInt8);
    case IDL_UINT8:
      return lib_.primitive(Kind::kUInt8);
    case IDL_SHORT:
    case IDL_INT16:
      return lib_.primitive(Kind::kInt16);
    case IDL_USHORT:
    case IDL_UINT16:
      return lib_.primitive(Kind::kUInt16);
    case IDL_LONG:
    case IDL_INT32:
      return lib_.primitive(Kind::kInt32);
    case IDL_ULONG:
    case IDL_UINT32:
      return lib_.primitive(Kind::kUInt32);
    case IDL_LLONG:
    case IDL_INT64:
      return lib_.primitive(Kind::kInt64);
    case IDL_ULLONG:
    case IDL_UINT64:
      return lib_.primitive(Kind::kUInt64);
    case IDL_FLOAT:
      return lib_.primitive(Kind::kFloat32);
    case IDL_DOUBLE:
      return lib_.primitive(Kind::kFloat64);
    case IDL_WCHAR:
      fail(ts, "type wchar is not supported");
      return std::nullopt;
    case IDL_LDOUBLE:
      fail(ts, "type long double is not supported");
      return std::nullopt;
    case IDL_ANY:
      fail(ts, "type any is not supported");
      return std::nullopt;
    default:
      fail(ts, std::string("type ") + idl_construct(ts) + " is not supported");
  }
  return std::nullopt;
}

// ---- tearing the tree down ----------------------------------------------------------------

bool is_ancestor(const idl_node_t* candidate, const idl_node_t* node) {
  for (const idl_node_t* n = node->parent; n; n = n->parent)
    if (n == candidate) return true;
  return false;
}

void release_recursion(idl_node_t* node);

// A type specifier owned by `owner` (not a reference to a declared type): walk into it. A
// sequence that refers to a struct or union it is part of ("struct Node { sequence<Node> c; }")
// holds a reference count on it that idl_delete_pstate never releases (the struct outlives the
// tree, and with it the sequence): libcycloneddsidl 0.10.2 leaks both. Drop that reference the
// way the library's own destructor would, without destroying anything: the tree still holds
// the struct, so its count stays above zero.
void release_type_spec(idl_node_t* owner, void* type_spec) {
  auto* ts = static_cast<idl_node_t*>(type_spec);
  if (!ts || ts->parent != owner) return;
  if (!idl_is_sequence(ts)) return;  // a base type or a string
  auto* seq = static_cast<idl_sequence_t*>(type_spec);
  auto* element = static_cast<idl_node_t*>(seq->type_spec);
  if (element && element->parent != ts && element->references > 1 && is_ancestor(element, ts)) {
    element->references--;
    seq->type_spec = nullptr;  // the library's destructor skips a null type specifier
    return;
  }
  release_type_spec(ts, seq->type_spec);
}

idl_node_t* as_node(void* p) {
  return static_cast<idl_node_t*>(p);
}

// Walks modules, structs, unions and typedefs for such sequences.
void release_recursion(idl_node_t* node) {
  for (; node; node = node->next) {
    if (idl_is_forward(node)) continue;  // its mask has the struct/union bit as well
    if (idl_is_module(node)) {
      release_recursion(as_node(reinterpret_cast<idl_module_t*>(node)->definitions));
    } else if (idl_is_struct(node)) {
      for (idl_node_t* m = as_node(reinterpret_cast<idl_struct_t*>(node)->members); m; m = m->next)
        release_type_spec(m, reinterpret_cast<idl_member_t*>(m)->type_spec);
    } else if (idl_is_union(node)) {
      for (idl_node_t* c = as_node(reinterpret_cast<idl_union_t*>(node)->cases); c; c = c->next)
        release_type_spec(c, reinterpret_cast<idl_case_t*>(c)->type_spec);
    } else if (idl_is_typedef(node)) {
      release_type_spec(node, reinterpret_cast<idl_typedef_t*>(node)->type_spec);
    }
  }
}

struct PstateDeleter {
  void operator()(idl_pstate_t* p) const {
    release_recursion(p->builtin_root ? p->builtin_root : p->root);
    idl_delete_pstate(p);
  }
};

}  // namespace

Expected<TypeLibrary> parse_idl(std::string_view text, std::string_view file_name) {
  if (std::optional<Error> e = check_directives(text, file_name)) return *e;
  const uint32_t flags = IDL_FLAG_EXTENDED_DATA_TYPES | IDL_FLAG_ANONYMOUS_TYPES |
                         IDL_FLAG_ANNOTATIONS | IDL_FLAG_KEYLIST;
  idl_pstate_t* raw = nullptr;
  if (idl_create_pstate(flags, nullptr, &raw) != IDL_RETCODE_OK || raw == nullptr)
    return Error{Errc::kNoSpace, std::string(file_name) + ": cannot create the IDL parser state"};
  std::unique_ptr<idl_pstate_t, PstateDeleter> pstate(raw);
  pstate->config.default_extensibility = IDL_FINAL;

  Diagnostics diagnostics;
  diagnostics.pstate = pstate.get();
  const std::string copy(text);  // the library wants a NUL-terminated string
  idl_retcode_t rc;
  {
    SinkScope scope(&diagnostics);
    rc = idl_parse_string(pstate.get(), copy.c_str());
  }
  if (rc != IDL_RETCODE_OK || diagnostics.has_error)
    return parse_error(diagnostics, text, file_name, rc);
  // The library declares its annotations and the bitmask DataRepresentationMask in the tree
  // too, in a pseudo file "<builtin>" ahead of ours; pstate->root skips them unless the text
  // declared nothing (then root == builtin_root). Those nodes are recognised by that file.
  const idl_file_t* builtin =
      pstate->builtin_root ? idl_location(pstate->builtin_root)->first.file : nullptr;
  return Builder(file_name, builtin).build(pstate->root);
}

Expected<TypeLibrary> parse_idl_file(const std::string& path) {
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) {
    const int err = errno;
    return Error{err == ENOENT ? Errc::kNotFound : Errc::kIo,
                 "open " + path + ": " + std::strerror(err)};
  }
  std::string text;
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f.get())) > 0) text.append(buf, n);
  if (std::ferror(f.get())) return Error{Errc::kIo, "read " + path + ": " + std::strerror(errno)};
  return parse_idl(text, path);
}

}  // namespace types
