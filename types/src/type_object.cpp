// XTypes TypeObjects to the type model (see type_object.hpp for the interface). OVERVIEW
//
// Three layers, bottom up:
// - Reader: a bounded XCDR2 cursor over one buffer. Alignment is to min(size, 4) relative to the
//   buffer's first byte (XCDR2 MAXALIGN is 4, 7.4.3.4.3); DHEADERs (appendable and mutable
//   structs, sequences and arrays of non-primitive elements, 7.4.3.5) narrow the readable end
//   to the bytes they delimit, and close() moves to that end, skipping members a newer writer
//   appended. Every read checks the bytes left; the first failure is kept as the Error.
// - The framing parsers: TypeInformation (mutable: EMHEADERs with length codes, 7.4.3.4.2),
//   TypeMapping (final struct of three sequences) and TypeLookup_getTypes_Out (mutable). A
//   TypeObject is an appendable union, so its DHEADER delimits it: the pairs keep each one as
//   its bytes, sliced at its DHEADER (4-aligned in the stream, so alignment inside the slice is
//   the same as in the stream).
// - Builder: decode_type_objects. A work list of EK_COMPLETE hashes, each given its TypeId (a
//   placeholder in the library) when first referenced, then decoded from its TypeObject bytes
//   into a Type; TypeIdentifiers of members become either a reference to such a TypeId or an
//   anonymous string/sequence/array type. No recursion over the type graph (only over one
//   TypeIdentifier's nesting, limited at parse time). A last pass checks what the consumers of
//   the library rely on: alias chains and base chains end, bases are structs, discriminators
//   are integers, chars, booleans or enums; like the IDL parser, bases and discriminators are
//   stored with their aliases resolved.
//
// The layouts are those of Cyclone DDS 0.10's ddsi_xt_typeinfo.idl, which differs from the
// XTypes 1.3 annex in two places that matter on the wire: CompleteArrayType and
// CompleteBitmaskType are appendable (a DHEADER first). TK_INT8/TK_UINT8/TK_CHAR16 (0x0c,
// 0x0d, 0x11) are XTypes 1.3 values that file lacks.
#include "types/type_object.hpp"
#include "types/result.hpp"

#include <bit>
#include <cstring>
#include <map>
#include <memory>
#include <string_view>
#include <utility>

#include "common/hex.hpp"
#include "xtypes_constants.hpp"

namespace types {
namespace {

using namespace xtypes;  // NOLINT(google-build-using-namespace): the shared constants
using common::Errc;
using common::Error;

// TypeLookup_getTypes_Out member ids (@hashid: the first 4 bytes of MD5("types") /
// MD5("complete_to_minimal"), little endian, & 0x0fffffff).
constexpr uint32_t kTypesMemberId = 0x02804ad1;
constexpr uint32_t kCompleteToMinimalMemberId = 0x0b8e6577;
constexpr uint32_t kMemberIdMask = 0x0fffffff;

constexpr int kMaxIdentifierDepth = 16;  // sequence<sequence<...>> nesting in one identifier
constexpr int kMaxChain = 64;            // alias hops and base structs

// ---------------------------------------------------------------------------------------------
// Reader

class Reader {
 public:
  Reader(std::span<const uint8_t> bytes, ByteOrder order)
      : data_(bytes.data()),
        size_(bytes.size()),
        end_(bytes.size()),
        swap_((order == ByteOrder::kBig) != (std::endian::native == std::endian::big)) {}

  size_t pos() const { return pos_; }
  size_t left() const { return end_ - pos_; }
  const Error& error() const { return error_; }
  const uint8_t* data() const { return data_; }

  bool fail(Errc code, const std::string& what) { return fail_at(pos_, code, what); }
  bool fail_at(size_t offset, Errc code, const std::string& what) {
    error_ = Error{code, "offset " + std::to_string(offset) + ": " + what};
    return false;
  }
  bool corrupt(const std::string& what) { return fail(Errc::kCorrupt, what); }

  bool align(size_t n) {
    const size_t pad = (n - pos_ % n) % n;
    if (!need(pad, "padding")) return false;
    pos_ += pad;
    return true;
  }
  bool u8(uint8_t& v, std::string_view what) {
    if (!need(1, what)) return false;
    v = data_[pos_++];
    return true;
  }
  bool u16(uint16_t& v, std::string_view what) { return scalar(v, what); }
  bool u32(uint32_t& v, std::string_view what) { return scalar(v, what); }
  bool i32(int32_t& v, std::string_view what) {
    uint32_t u = 0;
    if (!scalar(u, what)) return false;
    v = static_cast<int32_t>(u);
    return true;
  }
  bool boolean(bool& v, std::string_view what) {
    uint8_t b = 0;
    if (!u8(b, what)) return false;
    if (b > 1) return fail_at(pos_ - 1, Errc::kCorrupt, std::string(what) + ": not a boolean");
    v = b == 1;
    return true;
  }
  bool raw(uint8_t* out, size_t n, std::string_view what) {
    if (!need(n, what)) return false;
    std::memcpy(out, data_ + pos_, n);
    pos_ += n;
    return true;
  }
  bool string(std::string& out, std::string_view what);
  // A uint32 DHEADER, then narrows the readable end to the bytes it delimits; `saved` is the
  // end to restore with close().
  bool open(size_t& saved, std::string_view what);
  // Narrows the readable end to the next `n` bytes (`header`: the offset of the DHEADER or
  // EMHEADER that gave n, for messages).
  bool narrow(uint64_t n, size_t& saved, std::string_view what, size_t header);
  void close(size_t saved) {
    pos_ = end_;
    end_ = saved;
  }
  // Back to an earlier position inside the current region (to re-read a NEXTINT).
  void rewind(size_t p) { pos_ = p < pos_ ? p : pos_; }
  // A sequence's uint32 length, checked against the bytes left (each element at least
  // `min_element` bytes) so that nothing is sized from an unchecked length.
  bool count(uint32_t& n, size_t min_element, std::string_view what);

 private:
  bool need(size_t n, std::string_view what) {
    if (end_ - pos_ >= n) return true;
    const bool at_input_end = end_ == size_;
    return fail(at_input_end ? Errc::kTruncated : Errc::kCorrupt,
                std::string(what) + " needs " + std::to_string(n) + " bytes, " +
                    std::to_string(end_ - pos_) + " left" +
                    (at_input_end ? "" : " in the enclosing length"));
  }
  template <class U>
  bool scalar(U& v, std::string_view what) {
    if (!align(sizeof(U)) || !need(sizeof(U), what)) return false;
    std::memcpy(&v, data_ + pos_, sizeof(U));
    if (swap_)
      v = sizeof(U) == 2 ? static_cast<U>(__builtin_bswap16(static_cast<uint16_t>(v)))
                         : static_cast<U>(__builtin_bswap32(static_cast<uint32_t>(v)));
    pos_ += sizeof(U);
    return true;
  }

  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
  size_t end_;
  bool swap_;
  Error error_;
};

bool Reader::string(std::string& out, std::string_view what) {
  uint32_t len = 0;
  if (!u32(len, what)) return false;
  const size_t start = pos_;
  if (len == 0) return fail_at(start - 4, Errc::kCorrupt, std::string(what) + ": length 0");
  if (!need(len, what)) return false;
  const auto* p = reinterpret_cast<const char*>(data_ + pos_);
  if (p[len - 1] != '\0' || std::memchr(p, '\0', len - 1) != nullptr)
    return fail_at(
        start - 4, Errc::kCorrupt,
        std::string(what) + ": not a NUL-terminated string of " + std::to_string(len) + " bytes");
  out.assign(p, len - 1);
  pos_ += len;
  return true;
}

bool Reader::open(size_t& saved, std::string_view what) {
  uint32_t n = 0;
  if (!u32(n, std::string("DHEADER of ") + std::string(what))) return false;
  return narrow(n, saved, what, pos_ - 4);
}

bool Reader::narrow(uint64_t n, size_t& saved, std::string_view what, size_t header) {
  if (n > end_ - pos_) {
    const bool at_input_end = end_ == size_;
    return fail_at(header, at_input_end ? Errc::kTruncated : Errc::kCorrupt,
                   std::string(what) + " of " + std::to_string(n) + " bytes, " +
                       std::to_string(end_ - pos_) + " left" +
                       (at_input_end ? "" : " in the enclosing length"));
  }
  saved = end_;
  end_ = pos_ + static_cast<size_t>(n);
  return true;
}

bool Reader::count(uint32_t& n, size_t min_element, std::string_view what) {
  if (!u32(n, std::string("length of ") + std::string(what))) return false;
  if (uint64_t{n} * min_element > end_ - pos_)
    return fail_at(pos_ - 4, end_ == size_ ? Errc::kTruncated : Errc::kCorrupt,
                   std::string(what) + ": " + std::to_string(n) + " elements in " +
                       std::to_string(end_ - pos_) + " bytes");
  return true;
}

// ---------------------------------------------------------------------------------------------
// TypeIdentifier (a final union: no DHEADER; 7.3.4.2)

struct Ident {
  uint8_t kind = kTkNone;
  EquivalenceHash hash{};          // EK_MINIMAL / EK_COMPLETE
  uint32_t bound = 0;              // strings, plain sequences
  std::vector<uint32_t> dims;      // plain arrays
  std::unique_ptr<Ident> element;  // plain sequences and arrays
};

bool read_ident(Reader& r, Ident& out, int depth);

// PlainCollectionHeader { octet equiv_kind; uint16 element_flags; }
bool collection_header(Reader& r) {
  uint8_t ek = 0;
  uint16_t flags = 0;
  return r.u8(ek, "collection equivalence kind") && r.u16(flags, "collection element flags");
}

bool element_ident(Reader& r, Ident& out, int depth) {
  out.element = std::make_unique<Ident>();
  return read_ident(r, *out.element, depth + 1);
}

bool array_dims(Reader& r, Ident& out, bool large) {
  uint32_t n = 0;
  if (!r.count(n, large ? 4 : 1, "array bounds")) return false;
  if (n == 0) return r.corrupt("array without dimensions");
  out.dims.resize(n);
  for (uint32_t& d : out.dims) {
    uint8_t small = 0;
    if (large ? !r.u32(d, "array bound") : !r.u8(small, "array bound")) return false;
    if (!large) d = small;
    if (d == 0) return r.corrupt("array dimension 0");
  }
  return true;
}

// Maps are parsed (to know where the identifier ends) and then refused by their kind.
bool map_ident(Reader& r, Ident& out, bool large, int depth) {
  uint8_t small = 0;
  uint16_t key_flags = 0;
  Ident key;
  if (!collection_header(r)) return false;
  if (large ? !r.u32(out.bound, "map bound") : !r.u8(small, "map bound")) return false;
  return element_ident(r, out, depth) && r.u16(key_flags, "map key flags") &&
         read_ident(r, key, depth + 1);
}

bool read_ident(Reader& r, Ident& out, int depth) {
  if (depth > kMaxIdentifierDepth)
    return r.fail(Errc::kUnsupported,
                  "TypeIdentifier nested deeper than " + std::to_string(kMaxIdentifierDepth));
  if (!r.u8(out.kind, "TypeIdentifier")) return false;
  uint8_t small = 0;
  size_t saved = 0;
  switch (out.kind) {
    case kTiString8Small:
    case kTiString16Small:
      if (!r.u8(small, "string bound")) return false;
      out.bound = small;
      return true;
    case kTiString8Large:
    case kTiString16Large:
      return r.u32(out.bound, "string bound");
    case kTiSeqSmall:
      if (!collection_header(r) || !r.u8(small, "sequence bound")) return false;
      out.bound = small;
      return element_ident(r, out, depth);
    case kTiSeqLarge:
      return collection_header(r) && r.u32(out.bound, "sequence bound") &&
             element_ident(r, out, depth);
    case kTiArraySmall:
    case kTiArrayLarge:
      return collection_header(r) && array_dims(r, out, out.kind == kTiArrayLarge) &&
             element_ident(r, out, depth);
    case kTiMapSmall:
    case kTiMapLarge:
      return map_ident(r, out, out.kind == kTiMapLarge, depth);
    case kTiScc:  // StronglyConnectedComponentId: appendable
      if (!r.open(saved, "strongly connected component id")) return false;
      r.close(saved);
      return true;
    case kEkMinimal:
    case kEkComplete:
      return r.raw(out.hash.data(), out.hash.size(), "equivalence hash");
    default:  // primitives (no member) and kinds without a member
      return true;
  }
}

bool is_hash(const Ident& id) {
  return id.kind == kEkMinimal || id.kind == kEkComplete;
}

// ---------------------------------------------------------------------------------------------
// TypeInformation and the TypeObject sets

// A member of a mutable struct (7.4.3.4.2): aligns, reads its EMHEADER (and NEXTINT), then
// narrows to the member's bytes; `saved` for close().
bool open_mutable_member(Reader& r, uint32_t& id, size_t& saved) {
  uint32_t h = 0;
  if (!r.u32(h, "EMHEADER")) return false;
  id = h & kMemberIdMask;
  const uint32_t lc = (h >> 28) & 7;
  const size_t header = r.pos() - 4;
  if (lc < 4) return r.narrow(uint64_t{1} << lc, saved, "member", header);
  uint32_t next = 0;
  if (lc == 4) return r.u32(next, "NEXTINT") && r.narrow(next, saved, "member", header);
  // LC 5-7: NEXTINT is the member's own first uint32 (its DHEADER or length), read again by
  // the member; the member is 4 + NEXTINT * 1, 4 or 8 bytes.
  const size_t at = r.pos();
  if (!r.u32(next, "NEXTINT")) return false;
  r.rewind(at);
  const uint64_t scale = lc == 5 ? 1 : lc == 6 ? 4 : 8;
  return r.narrow(4 + uint64_t{next} * scale, saved, "member", header);
}

// Calls on_member(id) for each member of a mutable struct, positioned at the member's bytes and
// narrowed to them; bytes a member leaves unread are skipped.
template <class F>
bool mutable_members(Reader& r, std::string_view what, F&& on_member) {
  size_t outer = 0;
  if (!r.open(outer, what)) return false;
  while (r.left() > 0) {
    uint32_t id = 0;
    size_t saved = 0;
    if (!open_mutable_member(r, id, saved) || !on_member(id)) return false;
    r.close(saved);
  }
  r.close(outer);
  return true;
}

// TypeIdentifierWithSize (appendable): a hash or another identifier, and the object's size.
bool ident_with_size(Reader& r, Ident& id, uint32_t& size) {
  size_t saved = 0;
  if (!r.open(saved, "TypeIdentifierWithSize") || !read_ident(r, id, 0) ||
      !r.u32(size, "typeobject_serialized_size"))
    return false;
  r.close(saved);
  return true;
}

struct WithDeps {
  bool present = false;
  Ident id;
  uint32_t size = 0;
  int32_t dependent_count = 0;
  std::vector<TypeIdWithSize> dependencies;  // the EK_COMPLETE ones
};

// TypeIdentifierWithDependencies (appendable). A member repeated replaces the earlier one.
bool with_dependencies(Reader& r, WithDeps& out) {
  out = WithDeps{};
  size_t saved = 0, seq = 0;
  uint32_t n = 0;
  if (!r.open(saved, "TypeIdentifierWithDependencies") || !ident_with_size(r, out.id, out.size) ||
      !r.i32(out.dependent_count, "dependent_typeid_count") || !r.open(seq, "dependent_typeids") ||
      !r.count(n, 4, "dependent_typeids"))
    return false;
  for (uint32_t i = 0; i < n; ++i) {
    Ident dep;
    uint32_t size = 0;
    if (!ident_with_size(r, dep, size)) return false;
    if (dep.kind == kEkComplete) out.dependencies.push_back(TypeIdWithSize{dep.hash, size});
  }
  r.close(seq);
  r.close(saved);
  out.present = true;
  return true;
}

// A TypeObject (appendable union): its DHEADER and what it delimits, copied.
bool type_object_bytes(Reader& r, std::vector<uint8_t>& out) {
  if (!r.align(4)) return false;
  const size_t start = r.pos();
  size_t saved = 0;
  if (!r.open(saved, "TypeObject")) return false;
  r.close(saved);
  out.assign(r.data() + start, r.data() + r.pos());
  return true;
}

// sequence<TypeIdentifierTypeObjectPair>
bool object_pairs(Reader& r, ByteOrder order, TypeObjectSet& set) {
  size_t saved = 0;
  uint32_t n = 0;
  if (!r.open(saved, "TypeIdentifierTypeObjectPair sequence") ||
      !r.count(n, 8, "TypeIdentifierTypeObjectPair sequence"))
    return false;
  for (uint32_t i = 0; i < n; ++i) {
    const size_t at = r.pos();
    Ident id;
    TypeObjectPair pair;
    pair.order = order;
    if (!read_ident(r, id, 0)) return false;
    if (!is_hash(id))
      return r.fail_at(at, Errc::kCorrupt,
                       "TypeIdentifier of pair " + std::to_string(i) + " is not a hash (kind 0x" +
                           common::to_hex(id.kind) + ")");
    pair.equivalence_kind = id.kind;
    pair.hash = id.hash;
    if (!type_object_bytes(r, pair.type_object)) return false;
    set.pairs.push_back(std::move(pair));
  }
  r.close(saved);
  return true;
}

// sequence<TypeIdentifierPair>; pairs of two hashes are kept.
bool identifier_pairs(Reader& r, TypeObjectSet& set) {
  size_t saved = 0;
  uint32_t n = 0;
  if (!r.open(saved, "TypeIdentifierPair sequence") ||
      !r.count(n, 2, "TypeIdentifierPair sequence"))
    return false;
  for (uint32_t i = 0; i < n; ++i) {
    Ident a, b;
    if (!read_ident(r, a, 0) || !read_ident(r, b, 0)) return false;
    if (is_hash(a) && is_hash(b)) set.complete_to_minimal.emplace_back(a.hash, b.hash);
  }
  r.close(saved);
  return true;
}

}  // namespace

std::string to_hex(uint8_t equivalence_kind, const EquivalenceHash& hash) {
  std::string s = common::to_hex(equivalence_kind);
  s += common::to_hex(hash);
  return s;
}

Result<TypeInformation> decode_type_information(std::span<const uint8_t> bytes, ByteOrder order) {
  Reader r(bytes, order);
  WithDeps minimal, complete;
  const bool ok = mutable_members(r, "TypeInformation", [&](uint32_t id) {
    if (id == kMinimalInfoId) return with_dependencies(r, minimal);
    if (id == kCompleteInfoId) return with_dependencies(r, complete);
    return true;
  });
  if (!ok) return r.error().with_context("TypeInformation");
  if (!complete.present || complete.id.kind != kEkComplete)
    return common::make_error(Errc::kCorrupt,
                              "TypeInformation: no EK_COMPLETE TypeIdentifier of the type");
  TypeInformation info;
  info.complete = TypeIdWithSize{complete.id.hash, complete.size};
  if (minimal.present && minimal.id.kind == kEkMinimal)
    info.minimal = TypeIdWithSize{minimal.id.hash, minimal.size};
  info.complete_dependent_count = complete.dependent_count;
  info.complete_dependencies = std::move(complete.dependencies);
  return info;
}

Result<TypeObjectSet> parse_type_mapping(std::span<const uint8_t> bytes, ByteOrder order) {
  Reader r(bytes, order);
  TypeObjectSet set;
  if (!object_pairs(r, order, set) || !object_pairs(r, order, set) || !identifier_pairs(r, set))
    return r.error().with_context("TypeMapping");
  return set;
}

Result<TypeObjectSet> parse_get_types_out(std::span<const uint8_t> bytes, ByteOrder order) {
  Reader r(bytes, order);
  TypeObjectSet set;
  const bool ok = mutable_members(r, "getTypes_Out", [&](uint32_t id) {
    if (id == kTypesMemberId) return object_pairs(r, order, set);
    if (id == kCompleteToMinimalMemberId) return identifier_pairs(r, set);
    return true;
  });
  if (!ok) return r.error().with_context("getTypes_Out");
  return set;
}

// ---------------------------------------------------------------------------------------------
// decode_type_objects

namespace {

// An @optional member of a final struct (XCDR2: a presence boolean), whose value, when present,
// is an appendable struct or a sequence of them: skipped by its DHEADER. All such members of the
// TypeObject are applied annotations.
bool skip_optional(Reader& r, std::string_view what) {
  bool present = false;
  size_t saved = 0;
  if (!r.boolean(present, what)) return false;
  if (!present) return true;
  if (!r.open(saved, what)) return false;
  r.close(saved);
  return true;
}

// CompleteTypeDetail (final): annotations (skipped), the fully qualified name.
bool type_detail(Reader& r, std::string& name) {
  if (!skip_optional(r, "type ann_builtin") || !skip_optional(r, "type ann_custom") ||
      !r.string(name, "type name"))
    return false;
  if (name.starts_with("::")) name.erase(0, 2);
  return !name.empty() || r.corrupt("empty type name");
}

// CompleteMemberDetail (final): the name, annotations (skipped).
bool member_detail(Reader& r, std::string& name) {
  if (!r.string(name, "member name")) return false;
  if (name.empty()) return r.corrupt("empty member name");
  return skip_optional(r, "member ann_builtin") && skip_optional(r, "member ann_custom");
}

// StructTypeFlag / UnionTypeFlag: at most one extensibility bit (none: final).
bool type_flags(Reader& r, uint16_t flags, Type& t) {
  const int n =
      std::popcount(static_cast<unsigned>(flags & (kIsFinal | kIsAppendable | kIsMutable)));
  if (n > 1)
    return r.corrupt("type flags 0x" + common::to_hex(flags >> 8) + common::to_hex(flags & 0xff) +
                     " name more than one extensibility");
  t.extensibility = (flags & kIsMutable)      ? Extensibility::kMutable
                    : (flags & kIsAppendable) ? Extensibility::kAppendable
                                              : Extensibility::kFinal;
  t.nested = (flags & kIsNested) != 0;
  t.autoid_hash = (flags & kIsAutoidHash) != 0;
  return true;
}

std::optional<Kind> primitive_kind(uint8_t tk) {
  switch (tk) {
    case kTkBoolean:
      return Kind::kBool;
    case kTkByte:
      return Kind::kOctet;
    case kTkInt8:
      return Kind::kInt8;
    case kTkUInt8:
      return Kind::kUInt8;
    case kTkInt16:
      return Kind::kInt16;
    case kTkUInt16:
      return Kind::kUInt16;
    case kTkInt32:
      return Kind::kInt32;
    case kTkUInt32:
      return Kind::kUInt32;
    case kTkInt64:
      return Kind::kInt64;
    case kTkUInt64:
      return Kind::kUInt64;
    case kTkFloat32:
      return Kind::kFloat32;
    case kTkFloat64:
      return Kind::kFloat64;
    case kTkChar8:
      return Kind::kChar8;
    default:
      return std::nullopt;
  }
}

// What is refused, as a message tail: "maps are not supported".
std::string unsupported_identifier(uint8_t kind) {
  switch (kind) {
    case kTkFloat128:
      return "float128 (long double) is not supported";
    case kTkChar16:
      return "char16 (wchar) is not supported";
    case kTiString16Small:
    case kTiString16Large:
      return "wide strings (wstring) are not supported";
    case kTiMapSmall:
    case kTiMapLarge:
      return "maps are not supported";
    case kTiScc:
      return "strongly connected component TypeIdentifiers are not supported";
    default:
      return "TypeIdentifier kind 0x" + common::to_hex(kind) + " is not supported";
  }
}

std::string unsupported_object(uint8_t tk) {
  switch (tk) {
    case kTkAnnotation:
      return "an annotation type (TK_ANNOTATION), which is not supported";
    case kTkBitset:
      return "a bitset (TK_BITSET), which is not supported";
    case kTkMap:
      return "a map (TK_MAP), which is not supported";
    default:
      return "of kind 0x" + common::to_hex(tk) + ", which is not supported";
  }
}

std::string member_where(const std::string& type, const std::string& member) {
  return "type " + type + " member " + member;
}

class Builder {
 public:
  explicit Builder(std::span<const TypeObjectPair> pairs) {
    for (const TypeObjectPair& p : pairs)
      if (p.equivalence_kind == kEkComplete) objects_.emplace(p.hash, &p);  // the first one wins
  }
  Result<DecodedTypes> run(const EquivalenceHash& top);

 private:
  struct Pending {
    EquivalenceHash hash;
    TypeId id;
    std::string referrer;  // "type m::S member x": where it was first referenced
  };

  bool fail(Errc code, std::string message) {
    error_ = Error{code, std::move(message)};
    return false;
  }
  bool ref(const EquivalenceHash& hash, const std::string& where, TypeId& out);
  bool convert(const Ident& id, const std::string& where, TypeId& out);
  bool build(size_t index);
  bool object(Reader& r, uint8_t tk, const Pending& p, Type& t);
  bool struct_object(Reader& r, Type& t);
  bool struct_member(Reader& r, Type& t);
  bool union_object(Reader& r, Type& t);
  bool union_member(Reader& r, Type& t);
  bool alias_object(Reader& r, Type& t);
  bool sequence_object(Reader& r, const Pending& p, Type& t);
  bool array_object(Reader& r, const Pending& p, Type& t);
  bool collection_element(Reader& r, const Pending& p, Type& t);
  bool enum_object(Reader& r, Type& t);
  bool bitmask_object(Reader& r, Type& t);
  bool resolve(TypeId id, const std::string& where, TypeId& out);
  bool validate();

  std::map<EquivalenceHash, const TypeObjectPair*> objects_;
  std::map<EquivalenceHash, TypeId> ids_;
  std::vector<Pending> work_;
  TypeLibrary lib_;
  TypeId first_ = 0;  // the first id this builder added
  std::optional<Error> error_;
};

Result<DecodedTypes> Builder::run(const EquivalenceHash& top) {
  first_ = static_cast<TypeId>(lib_.size());
  DecodedTypes out;
  if (!ref(top, "topic type", out.top)) return *error_;
  for (size_t i = 0; i < work_.size(); ++i)
    if (!build(i)) return *error_;
  if (!validate()) return *error_;
  out.library = std::move(lib_);
  return out;
}

// The TypeId of a complete hash: a placeholder queued for build() when first seen.
bool Builder::ref(const EquivalenceHash& hash, const std::string& where, TypeId& out) {
  if (auto it = ids_.find(hash); it != ids_.end()) {
    out = it->second;
    return true;
  }
  if (!objects_.count(hash))
    return fail(Errc::kNotFound,
                where + ": type " + to_hex(kEkComplete, hash) + " is not among the TypeObjects");
  out = lib_.add(Type{});
  ids_.emplace(hash, out);
  work_.push_back(Pending{hash, out, where});
  return true;
}

bool Builder::convert(const Ident& id, const std::string& where, TypeId& out) {
  if (std::optional<Kind> k = primitive_kind(id.kind)) {
    out = lib_.primitive(*k);
    return true;
  }
  Type t;
  switch (id.kind) {
    case kTiString8Small:
    case kTiString8Large:
      if (id.bound == 0) {
        out = lib_.primitive(Kind::kString);
        return true;
      }
      t.kind = Kind::kString;
      t.bound = id.bound;
      break;
    case kTiSeqSmall:
    case kTiSeqLarge:
    case kTiArraySmall:
    case kTiArrayLarge:
      if (!convert(*id.element, where, t.element)) return false;
      t.kind = id.kind == kTiSeqSmall || id.kind == kTiSeqLarge ? Kind::kSequence : Kind::kArray;
      t.bound = id.bound;
      t.dims = id.dims;
      break;
    case kEkComplete:
      return ref(id.hash, where, out);
    case kEkMinimal:
      return fail(Errc::kCorrupt,
                  where + ": refers to a minimal type (" + to_hex(id.kind, id.hash) + ")");
    case kTkNone:
      return fail(Errc::kCorrupt, where + ": no type (TK_NONE)");
    default:
      return fail(Errc::kUnsupported, where + ": " + unsupported_identifier(id.kind));
  }
  out = lib_.add(std::move(t));
  return true;
}

bool Builder::build(size_t index) {
  const Pending p = work_[index];  // work_ grows while this one is built
  const TypeObjectPair& pair = *objects_.at(p.hash);
  Reader r(pair.type_object, pair.order);
  Type t;
  size_t saved = 0;
  uint8_t ek = 0, tk = 0;
  bool ok = r.open(saved, "TypeObject") && r.u8(ek, "equivalence kind");
  if (ok && ek != kEkComplete)
    ok = r.fail_at(r.pos() - 1, Errc::kCorrupt,
                   "not a complete TypeObject (equivalence kind 0x" + common::to_hex(ek) + ")");
  ok = ok && r.u8(tk, "type kind") && object(r, tk, p, t);
  if (!ok) {
    if (!error_) error_ = r.error().with_context("TypeObject " + to_hex(kEkComplete, p.hash));
    return false;
  }
  lib_.at(p.id) = std::move(t);
  return true;
}

bool Builder::object(Reader& r, uint8_t tk, const Pending& p, Type& t) {
  switch (tk) {
    case kTkStructure:
      return struct_object(r, t);
    case kTkUnion:
      return union_object(r, t);
    case kTkAlias:
      return alias_object(r, t);
    case kTkSequence:
      return sequence_object(r, p, t);
    case kTkArray:
      return array_object(r, p, t);
    case kTkEnum:
      return enum_object(r, t);
    case kTkBitmask:
      return bitmask_object(r, t);
    default:
      return fail(Errc::kUnsupported, p.referrer + ": type " + to_hex(kEkComplete, p.hash) +
                                          " is " + unsupported_object(tk));
  }
}

// CompleteStructType (final): flags, header (appendable: base, detail), members.
bool Builder::struct_object(Reader& r, Type& t) {
  t.kind = Kind::kStruct;
  uint16_t flags = 0;
  size_t saved = 0;
  Ident base;
  if (!r.u16(flags, "struct flags") || !type_flags(r, flags, t) ||
      !r.open(saved, "struct header") || !read_ident(r, base, 0) || !type_detail(r, t.name))
    return false;
  r.close(saved);
  if (base.kind != kTkNone && !convert(base, "type " + t.name + " base", t.base)) return false;
  uint32_t n = 0;
  if (!r.open(saved, "struct members") || !r.count(n, 4, "struct members")) return false;
  for (uint32_t i = 0; i < n; ++i)
    if (!struct_member(r, t)) return false;
  r.close(saved);
  return true;
}

// CompleteStructMember (appendable): common (id, flags, type), detail (name).
bool Builder::struct_member(Reader& r, Type& t) {
  size_t saved = 0;
  uint16_t flags = 0;
  Ident id;
  Member m;
  if (!r.open(saved, "struct member") || !r.u32(m.id, "member id") ||
      !r.u16(flags, "member flags") || !read_ident(r, id, 0) || !member_detail(r, m.name))
    return false;
  r.close(saved);
  if (m.id > kMemberIdMask) return r.corrupt("member id 0x" + std::to_string(m.id) + " too large");
  m.key = (flags & kIsKey) != 0;
  m.optional = (flags & kIsOptional) != 0;
  m.must_understand = (flags & kIsMustUnderstand) != 0;
  if (!convert(id, member_where(t.name, m.name), m.type)) return false;
  t.members.push_back(std::move(m));
  return true;
}

// CompleteUnionType (final): flags, header (appendable: detail), discriminator (appendable),
// members.
bool Builder::union_object(Reader& r, Type& t) {
  t.kind = Kind::kUnion;
  uint16_t flags = 0, disc_flags = 0;
  size_t saved = 0;
  Ident disc;
  if (!r.u16(flags, "union flags") || !type_flags(r, flags, t) || !r.open(saved, "union header") ||
      !type_detail(r, t.name))
    return false;
  r.close(saved);
  if (!r.open(saved, "union discriminator") || !r.u16(disc_flags, "discriminator flags") ||
      !read_ident(r, disc, 0))
    return false;
  r.close(saved);
  if (!convert(disc, "type " + t.name + " discriminator", t.discriminator)) return false;
  uint32_t n = 0;
  if (!r.open(saved, "union members") || !r.count(n, 4, "union members")) return false;
  for (uint32_t i = 0; i < n; ++i)
    if (!union_member(r, t)) return false;
  r.close(saved);
  return true;
}

// CompleteUnionMember (appendable): common (id, flags, type, labels), detail (name).
bool Builder::union_member(Reader& r, Type& t) {
  size_t saved = 0;
  uint16_t flags = 0;
  uint32_t n = 0;
  Ident id;
  UnionCase c;
  if (!r.open(saved, "union member") || !r.u32(c.member.id, "member id") ||
      !r.u16(flags, "member flags") || !read_ident(r, id, 0) || !r.count(n, 4, "case labels"))
    return false;
  for (uint32_t i = 0; i < n; ++i) {
    int32_t label = 0;
    if (!r.i32(label, "case label")) return false;
    c.labels.push_back(label);
  }
  if (!member_detail(r, c.member.name)) return false;
  r.close(saved);
  c.is_default = (flags & kIsDefault) != 0;
  if (!convert(id, member_where(t.name, c.member.name), c.member.type)) return false;
  t.cases.push_back(std::move(c));
  return true;
}

// CompleteAliasType (final): flags, header (appendable: detail), body (appendable: type).
bool Builder::alias_object(Reader& r, Type& t) {
  t.kind = Kind::kAlias;
  uint16_t flags = 0, related_flags = 0;
  size_t saved = 0;
  Ident related;
  if (!r.u16(flags, "alias flags") || !r.open(saved, "alias header") || !type_detail(r, t.name))
    return false;
  r.close(saved);
  if (!r.open(saved, "alias body") || !r.u16(related_flags, "alias related flags") ||
      !read_ident(r, related, 0))
    return false;
  r.close(saved);
  return convert(related, "type " + t.name, t.element);
}

// CompleteCollectionElement (appendable): flags, type, detail (annotations, skipped).
bool Builder::collection_element(Reader& r, const Pending& p, Type& t) {
  size_t saved = 0;
  uint16_t flags = 0;
  Ident element;
  if (!r.open(saved, "collection element") || !r.u16(flags, "element flags") ||
      !read_ident(r, element, 0))
    return false;
  r.close(saved);
  const std::string name = t.name.empty() ? to_hex(kEkComplete, p.hash) : t.name;
  return convert(element, "type " + name + " element", t.element);
}

// CompleteSequenceType (final): flags, header (appendable: bound, optional detail), element.
bool Builder::sequence_object(Reader& r, const Pending& p, Type& t) {
  t.kind = Kind::kSequence;
  uint16_t flags = 0;
  size_t saved = 0;
  bool named = false;
  if (!r.u16(flags, "sequence flags") || !r.open(saved, "sequence header") ||
      !r.u32(t.bound, "sequence bound") || !r.boolean(named, "sequence detail") ||
      (named && !type_detail(r, t.name)))
    return false;
  r.close(saved);
  return collection_element(r, p, t);
}

// CompleteArrayType (appendable in Cyclone DDS): flags, header (appendable: bounds, detail),
// element.
bool Builder::array_object(Reader& r, const Pending& p, Type& t) {
  t.kind = Kind::kArray;
  uint16_t flags = 0;
  size_t outer = 0, saved = 0;
  uint32_t n = 0;
  if (!r.open(outer, "array type") || !r.u16(flags, "array flags") ||
      !r.open(saved, "array header") || !r.count(n, 4, "array bounds"))
    return false;
  if (n == 0) return r.corrupt("array without dimensions");
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t d = 0;
    if (!r.u32(d, "array bound")) return false;
    if (d == 0) return r.corrupt("array dimension 0");
    t.dims.push_back(d);
  }
  if (!type_detail(r, t.name)) return false;
  r.close(saved);
  if (!collection_element(r, p, t)) return false;
  r.close(outer);
  return true;
}

// CompleteEnumeratedType (final): flags, header (appendable: bit_bound, detail), literals
// (appendable: common (appendable: value, flags), detail).
bool Builder::enum_object(Reader& r, Type& t) {
  t.kind = Kind::kEnum;
  uint16_t flags = 0;
  size_t saved = 0, seq = 0;
  if (!r.u16(flags, "enum flags") || !r.open(saved, "enum header") ||
      !r.u16(t.bit_bound, "enum bit_bound") || !type_detail(r, t.name))
    return false;
  r.close(saved);
  if (t.bit_bound < 1 || t.bit_bound > 32)
    return r.corrupt("enum " + t.name + ": bit_bound " + std::to_string(t.bit_bound));
  uint32_t n = 0;
  if (!r.open(seq, "enum literals") || !r.count(n, 4, "enum literals")) return false;
  for (uint32_t i = 0; i < n; ++i) {
    EnumLiteral l;
    uint16_t lflags = 0;
    size_t common = 0;
    if (!r.open(saved, "enum literal") || !r.open(common, "enum literal value") ||
        !r.i32(l.value, "enum literal value") || !r.u16(lflags, "enum literal flags"))
      return false;
    r.close(common);
    if (!member_detail(r, l.name)) return false;
    r.close(saved);
    t.literals.push_back(std::move(l));
  }
  r.close(seq);
  return true;
}

// CompleteBitmaskType (appendable in Cyclone DDS): flags, header (as an enum's), flags
// (appendable: common (position, flags), detail).
bool Builder::bitmask_object(Reader& r, Type& t) {
  t.kind = Kind::kBitmask;
  uint16_t flags = 0;
  size_t outer = 0, saved = 0, seq = 0;
  if (!r.open(outer, "bitmask type") || !r.u16(flags, "bitmask flags") ||
      !r.open(saved, "bitmask header") || !r.u16(t.bit_bound, "bitmask bit_bound") ||
      !type_detail(r, t.name))
    return false;
  r.close(saved);
  if (t.bit_bound < 1 || t.bit_bound > 64)
    return r.corrupt("bitmask " + t.name + ": bit_bound " + std::to_string(t.bit_bound));
  uint32_t n = 0;
  if (!r.open(seq, "bitmask flags") || !r.count(n, 4, "bitmask flags")) return false;
  for (uint32_t i = 0; i < n; ++i) {
    BitFlag f;
    uint16_t fflags = 0;
    if (!r.open(saved, "bit flag") || !r.u16(f.position, "bit flag position") ||
        !r.u16(fflags, "bit flag flags") || !member_detail(r, f.name))
      return false;
    r.close(saved);
    if (f.position >= t.bit_bound)
      return r.corrupt("bitmask " + t.name + ": flag " + f.name + " at position " +
                       std::to_string(f.position) + " of " + std::to_string(t.bit_bound));
    t.flags.push_back(std::move(f));
  }
  r.close(seq);
  r.close(outer);
  return true;
}

// Follows aliases (at most kMaxChain).
bool Builder::resolve(TypeId id, const std::string& where, TypeId& out) {
  for (int hops = 0; hops <= kMaxChain; ++hops) {
    if (lib_.at(id).kind != Kind::kAlias) {
      out = id;
      return true;
    }
    id = lib_.at(id).element;
  }
  return fail(Errc::kInvalidArgument,
              where + ": aliases loop or nest deeper than " + std::to_string(kMaxChain));
}

bool is_discriminator_kind(Kind k) {
  return k <= Kind::kUInt64 || k == Kind::kEnum;
}

bool Builder::validate() {
  for (TypeId id = first_; id < lib_.size(); ++id) {
    Type& t = lib_.at(id);
    TypeId target = kNoType;
    if (t.kind == Kind::kAlias && !resolve(id, "type " + t.name, target)) return false;
    if (t.kind == Kind::kStruct && t.base != kNoType) {
      if (!resolve(t.base, "type " + t.name + " base", target)) return false;
      if (lib_.at(target).kind != Kind::kStruct)
        return fail(Errc::kInvalidArgument, "type " + t.name + ": base is not a struct");
      t.base = target;
    }
    if (t.kind == Kind::kUnion) {
      if (!resolve(t.discriminator, "type " + t.name + " discriminator", target)) return false;
      if (!is_discriminator_kind(lib_.at(target).kind))
        return fail(Errc::kInvalidArgument,
                    "type " + t.name + ": discriminator is not an integer, char, boolean or enum");
      if (target != t.discriminator) t.discriminator_typedef = t.discriminator;
      t.discriminator = target;
    }
  }
  for (TypeId id = first_; id < lib_.size(); ++id) {
    int depth = 0;
    for (TypeId b = lib_.at(id).base; b != kNoType; b = lib_.at(b).base)
      if (++depth > kMaxChain)
        return fail(Errc::kInvalidArgument, "type " + lib_.at(id).name +
                                                ": bases loop or nest deeper than " +
                                                std::to_string(kMaxChain));
  }
  return true;
}

}  // namespace

Result<DecodedTypes> decode_type_objects(std::span<const TypeObjectPair> pairs,
                                         const EquivalenceHash& complete_hash) {
  return Builder(pairs).run(complete_hash);
}

}  // namespace types
