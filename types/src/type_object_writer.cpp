// The type model to XTypes TypeObjects (see type_object_writer.hpp for the interface).
// OVERVIEW
//
// - Out: an XCDR2 little-endian writer over one growing buffer, aligning to min(size, 4) from
//   the buffer's first byte; open() writes a DHEADER placeholder that close() fills in.
// - Encoder: a depth-first walk from the topic type that gives each named type (struct, union,
//   enum, bitmask, alias) its slot in the order idlc's visitor pushes types (before the types
//   it uses), walks the types it refers to, then - their hashes known - writes its minimal and
//   complete TypeObject and hashes them. Anonymous strings, sequences and arrays are plain
//   TypeIdentifiers written inline. A type met again while it is being walked is recursive and
//   refused; the walk is a recursion over the type graph bounded by kMaxEncodeDepth.
// - TypeInformation and TypeMapping are then written from the slots, as idlc's
//   generate_type_meta_ser_impl does: the minimal dependencies without repeated hashes (two
//   aliases of one type share a minimal TypeObject), the complete ones and the mapping's pairs
//   one per named type.
//
// The layouts (Cyclone DDS 0.10's ddsi_xt_typeinfo.idl) are those type_object.cpp reads; the
// comments on each writer name the structures and their extensibility.
#include "types/type_object_writer.hpp"
#include "types/result.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <set>
#include <utility>

#include "common/md5.hpp"
#include "xtypes_constants.hpp"

namespace types {
namespace {

using namespace xtypes;  // NOLINT(google-build-using-namespace): the shared constants
using common::Errc;
using common::Error;

constexpr uint32_t kMaxMemberId = 0x0fffffff;

EquivalenceHash equivalence_hash(std::span<const uint8_t> object) {
  const std::array<uint8_t, 16> d = common::md5(object);
  EquivalenceHash h{};
  std::copy_n(d.begin(), h.size(), h.begin());
  return h;
}

// NameHash (7.3.4.3): the first 4 bytes of MD5(name).
std::array<uint8_t, 4> name_hash(const std::string& name) {
  const std::array<uint8_t, 16> d =
      common::md5({reinterpret_cast<const uint8_t*>(name.data()), name.size()});
  return {d[0], d[1], d[2], d[3]};
}

// ---------------------------------------------------------------------------------------------
// Out

class Out {
 public:
  std::vector<uint8_t> bytes;

  void align(size_t n) {
    while (bytes.size() % n != 0) bytes.push_back(0);
  }
  void u8(uint8_t v) { bytes.push_back(v); }
  void u16(uint16_t v) {
    align(2);
    for (int i = 0; i < 2; ++i) bytes.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  void u32(uint32_t v) {
    align(4);
    for (int i = 0; i < 4; ++i) bytes.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  void i32(int32_t v) { u32(static_cast<uint32_t>(v)); }
  void raw(std::span<const uint8_t> b) { bytes.insert(bytes.end(), b.begin(), b.end()); }
  // string: length with the NUL, the characters, the NUL.
  void str(const std::string& s) {
    u32(static_cast<uint32_t>(s.size() + 1));
    bytes.insert(bytes.end(), s.begin(), s.end());
    bytes.push_back(0);
  }
  // A DHEADER (or NEXTINT) to fill in by close(): the number of bytes written after it.
  size_t open() {
    u32(0);
    return bytes.size() - 4;
  }
  void close(size_t at) {
    const auto n = static_cast<uint32_t>(bytes.size() - at - 4);
    for (int i = 0; i < 4; ++i) bytes[at + i] = static_cast<uint8_t>(n >> (8 * i));
  }
};

// ---------------------------------------------------------------------------------------------
// Encoder

bool is_hashed(Kind k) {
  return k == Kind::kStruct || k == Kind::kUnion || k == Kind::kEnum || k == Kind::kBitmask ||
         k == Kind::kAlias;
}

uint8_t type_kind(Kind k) {
  switch (k) {
    case Kind::kStruct:
      return kTkStructure;
    case Kind::kUnion:
      return kTkUnion;
    case Kind::kEnum:
      return kTkEnum;
    case Kind::kBitmask:
      return kTkBitmask;
    default:
      return kTkAlias;
  }
}

// The discriminator's type as the union declared it (an alias when it was one).
TypeId declared_discriminator(const Type& t) {
  return t.discriminator_typedef != kNoType ? t.discriminator_typedef : t.discriminator;
}

std::string hex_id(uint32_t v) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (int i = 7; i >= 0; --i) s += d[(v >> (4 * i)) & 15];
  return "0x" + s;
}

class Encoder {
 public:
  Encoder(const TypeLibrary& lib, const EncodeOptions& options) : lib_(lib), options_(options) {}
  Result<EncodedTypes> run(TypeId top);

 private:
  bool fail(Errc code, std::string message) {
    error_ = Error{code, std::move(message)};
    return false;
  }
  bool valid(TypeId id, const std::string& where);
  bool walk(TypeId id, const std::string& where, int depth);
  bool visit(TypeId id, const std::string& where, int depth);
  bool encode(size_t slot);
  bool ident(Out& o, TypeId id, uint8_t ek, const std::string& where, int depth);
  bool fully_descriptive(TypeId id) const;
  uint8_t primitive(Kind k) const;
  void hash_ident(Out& o, TypeId id, uint8_t ek) const;

  bool struct_object(Out& o, const Type& t, uint8_t ek);
  bool union_object(Out& o, const Type& t, uint8_t ek);
  bool alias_object(Out& o, const Type& t, uint8_t ek);
  void enum_object(Out& o, const Type& t, uint8_t ek);
  void bitmask_object(Out& o, const Type& t, uint8_t ek);

  std::vector<uint8_t> type_information() const;
  std::vector<uint8_t> type_mapping() const;

  const TypeLibrary& lib_;
  EncodeOptions options_;
  std::map<TypeId, size_t> slots_;  // named type -> index in types_
  std::vector<bool> done_;          // types_[i] has its TypeObjects
  std::vector<EncodedType> types_;
  Error error_;
};

Result<EncodedTypes> Encoder::run(TypeId top) {
  if (top >= lib_.size())
    return common::make_error(Errc::kInvalidArgument, "topic type: type id " + std::to_string(top) +
                                                          " is not in the library");
  const Type& t = lib_.at(top);
  if (t.kind != Kind::kStruct && t.kind != Kind::kUnion)
    return common::make_error(Errc::kInvalidArgument,
                              "topic type " + (t.name.empty() ? std::to_string(top) : t.name) +
                                  " is not a struct or union");
  if (!visit(top, "topic type", 0)) return error_;
  EncodedTypes out;
  out.types = types_;
  out.type_information = type_information();
  out.type_mapping = type_mapping();
  return out;
}

bool Encoder::valid(TypeId id, const std::string& where) {
  if (id < lib_.size()) return true;
  return fail(Errc::kInvalidArgument, where + ": type id " +
                                          (id == kNoType ? "none" : std::to_string(id)) +
                                          " is not in the library");
}

// The named types `id` refers to, through anonymous collections, in the order idlc meets them.
bool Encoder::walk(TypeId id, const std::string& where, int depth) {
  if (!valid(id, where)) return false;
  if (depth > kMaxEncodeDepth)
    return fail(Errc::kUnsupported, where + ": types nested deeper than " +
                                        std::to_string(kMaxEncodeDepth) + " are not supported");
  const Type& t = lib_.at(id);
  if (is_hashed(t.kind)) return visit(id, where, depth);
  if (t.kind == Kind::kSequence || t.kind == Kind::kArray) return walk(t.element, where, depth + 1);
  return true;
}

// A named type: its slot (first visit), the types it uses, then its TypeObjects.
bool Encoder::visit(TypeId id, const std::string& where, int depth) {
  if (auto it = slots_.find(id); it != slots_.end()) {
    if (done_[it->second]) return true;
    return fail(Errc::kUnsupported, where + ": type " + lib_.at(id).name +
                                        " contains itself; recursive types are not supported");
  }
  const Type& t = lib_.at(id);
  const size_t slot = types_.size();
  slots_.emplace(id, slot);
  types_.push_back(EncodedType{});
  types_.back().id = id;
  types_.back().name = t.name;
  done_.push_back(false);
  const std::string self = "type " + t.name;
  switch (t.kind) {
    case Kind::kStruct:
      if (t.base != kNoType && !walk(t.base, self + " base", depth + 1)) return false;
      for (const Member& m : t.members)
        if (!walk(m.type, self + " member " + m.name, depth + 1)) return false;
      break;
    case Kind::kUnion:
      if (!walk(declared_discriminator(t), self + " discriminator", depth + 1)) return false;
      for (const UnionCase& c : t.cases)
        if (!walk(c.member.type, self + " member " + c.member.name, depth + 1)) return false;
      break;
    case Kind::kAlias:
      if (!walk(t.element, self, depth + 1)) return false;
      break;
    default:
      break;
  }
  if (!encode(slot)) return false;
  done_[slot] = true;
  return true;
}

uint8_t Encoder::primitive(Kind k) const {
  switch (k) {
    case Kind::kBool:
      return kTkBoolean;
    case Kind::kChar8:
      return kTkChar8;
    case Kind::kOctet:
      return kTkByte;
    case Kind::kInt8:
      return options_.cyclone_int8 ? kTkChar8 : kTkInt8;
    case Kind::kUInt8:
      return options_.cyclone_int8 ? kTkByte : kTkUInt8;
    case Kind::kInt16:
      return kTkInt16;
    case Kind::kUInt16:
      return kTkUInt16;
    case Kind::kInt32:
      return kTkInt32;
    case Kind::kUInt32:
      return kTkUInt32;
    case Kind::kInt64:
      return kTkInt64;
    case Kind::kUInt64:
      return kTkUInt64;
    case Kind::kFloat32:
      return kTkFloat32;
    default:
      return kTkFloat64;
  }
}

// Needs no hash: primitives, strings, and plain collections of those (idlc's
// has_fully_descriptive_typeid).
bool Encoder::fully_descriptive(TypeId id) const {
  for (int depth = 0; depth <= kMaxEncodeDepth; ++depth) {
    const Type& t = lib_.at(id);
    if (is_primitive(t.kind) || t.kind == Kind::kString) return true;
    if (t.kind != Kind::kSequence && t.kind != Kind::kArray) return false;
    id = t.element;  // checked by walk()
  }
  return false;
}

void Encoder::hash_ident(Out& o, TypeId id, uint8_t ek) const {
  const EncodedType& e = types_[slots_.at(id)];
  o.u8(ek);
  o.raw(ek == kEkMinimal ? e.minimal_hash : e.complete_hash);
}

// A TypeIdentifier (final union, 7.3.4.2) of the `ek` flavour.
bool Encoder::ident(Out& o, TypeId id, uint8_t ek, const std::string& where, int depth) {
  if (depth > kMaxEncodeDepth)
    return fail(Errc::kUnsupported, where + ": types nested deeper than " +
                                        std::to_string(kMaxEncodeDepth) + " are not supported");
  const Type& t = lib_.at(id);
  if (is_primitive(t.kind)) {
    o.u8(primitive(t.kind));
    return true;
  }
  if (is_hashed(t.kind)) {
    hash_ident(o, id, ek);
    return true;
  }
  if (t.kind == Kind::kString) {
    if (t.bound < 256) {
      o.u8(kTiString8Small);
      o.u8(static_cast<uint8_t>(t.bound));
    } else {
      o.u8(kTiString8Large);
      o.u32(t.bound);
    }
    return true;
  }
  // PlainCollectionHeader { octet equiv_kind; uint16 element_flags; } first.
  const uint8_t equiv = fully_descriptive(t.element) ? kEkBoth : ek;
  if (t.kind == Kind::kSequence) {
    const bool small = t.bound < 256;
    o.u8(small ? kTiSeqSmall : kTiSeqLarge);
    o.u8(equiv);
    o.u16(kTryConstruct1);
    if (small)
      o.u8(static_cast<uint8_t>(t.bound));
    else
      o.u32(t.bound);
    return ident(o, t.element, ek, where, depth + 1);
  }
  // Arrays: small while the number of elements is at most 255 (idlc's idl_array_size).
  if (t.dims.empty()) return fail(Errc::kInvalidArgument, where + ": array without dimensions");
  uint64_t elements = 1;
  for (uint32_t d : t.dims) elements = std::min<uint64_t>(elements * d, uint64_t{1} << 32);
  const bool small = elements <= 255;
  o.u8(small ? kTiArraySmall : kTiArrayLarge);
  o.u8(equiv);
  o.u16(kTryConstruct1);
  o.u32(static_cast<uint32_t>(t.dims.size()));
  for (uint32_t d : t.dims) {
    if (small)
      o.u8(static_cast<uint8_t>(d));
    else
      o.u32(d);
  }
  return ident(o, t.element, ek, where, depth + 1);
}

// CompleteTypeDetail (final): ann_builtin, ann_custom (both absent), type_name.
void type_detail(Out& o, const std::string& name) {
  o.u8(0);
  o.u8(0);
  o.str(name);
}

// CompleteMemberDetail (final) / MinimalMemberDetail (final).
void member_detail(Out& o, const std::string& name, uint8_t ek) {
  if (ek == kEkMinimal) {
    o.raw(name_hash(name));
    return;
  }
  o.str(name);
  o.u8(0);
  o.u8(0);
}

uint16_t extensibility_flags(const Type& t) {
  uint16_t f = t.extensibility == Extensibility::kMutable      ? kIsMutable
               : t.extensibility == Extensibility::kAppendable ? kIsAppendable
                                                               : kIsFinal;
  if (t.nested) f |= kIsNested;
  if (t.autoid_hash) f |= kIsAutoidHash;
  return f;
}

// (Complete|Minimal)StructType (final): flags, header (appendable: base, detail), members
// (sequence of appendable (Complete|Minimal)StructMember: common (final: id, flags, type),
// detail).
bool Encoder::struct_object(Out& o, const Type& t, uint8_t ek) {
  o.u16(extensibility_flags(t));
  const size_t header = o.open();
  if (t.base == kNoType)
    o.u8(kTkNone);
  else if (!ident(o, t.base, ek, "type " + t.name + " base", 0))
    return false;
  if (ek == kEkComplete) type_detail(o, t.name);
  o.close(header);
  const size_t seq = o.open();
  o.u32(static_cast<uint32_t>(t.members.size()));
  for (const Member& m : t.members) {
    const std::string where = "type " + t.name + " member " + m.name;
    if (m.id > kMaxMemberId)
      return fail(Errc::kUnsupported,
                  where + ": member id " + hex_id(m.id) + " is above 0x0fffffff");
    uint16_t flags = kTryConstruct1;
    if (m.key) flags |= kIsKey | kIsMustUnderstand;  // XTypes 7.2.2.4.4.4.8, as idlc does
    if (m.must_understand) flags |= kIsMustUnderstand;
    if (m.optional) flags |= kIsOptional;
    const size_t member = o.open();
    o.u32(m.id);
    o.u16(flags);
    if (!ident(o, m.type, ek, where, 0)) return false;
    member_detail(o, m.name, ek);
    o.close(member);
  }
  o.close(seq);
  return true;
}

// (Complete|Minimal)UnionType (final): flags, header (appendable: detail), discriminator
// (appendable: common (final: flags, type), annotations), members (sequence of appendable
// (Complete|Minimal)UnionMember: common (final: id, flags, type, labels), detail).
bool Encoder::union_object(Out& o, const Type& t, uint8_t ek) {
  o.u16(extensibility_flags(t));
  const size_t header = o.open();
  if (ek == kEkComplete) type_detail(o, t.name);
  o.close(header);
  const size_t disc = o.open();
  o.u16(kTryConstruct1 | kIsMustUnderstand);  // XTypes 7.2.2.4.4.4.6, as idlc does
  if (!ident(o, declared_discriminator(t), ek, "type " + t.name + " discriminator", 0))
    return false;
  if (ek == kEkComplete) {
    o.u8(0);
    o.u8(0);
  }
  o.close(disc);
  const size_t seq = o.open();
  o.u32(static_cast<uint32_t>(t.cases.size()));
  for (const UnionCase& c : t.cases) {
    const std::string where = "type " + t.name + " member " + c.member.name;
    if (c.member.id > kMaxMemberId)
      return fail(Errc::kUnsupported,
                  where + ": member id " + hex_id(c.member.id) + " is above 0x0fffffff");
    const size_t member = o.open();
    o.u32(c.member.id);
    o.u16(c.is_default ? kTryConstruct1 | kIsDefault : kTryConstruct1);
    if (!ident(o, c.member.type, ek, where, 0)) return false;
    o.u32(static_cast<uint32_t>(c.labels.size()));
    for (int64_t label : c.labels) {
      if (label < INT32_MIN || label > INT32_MAX)
        return fail(Errc::kUnsupported,
                    where + ": case label " + std::to_string(label) + " is outside int32");
      o.i32(static_cast<int32_t>(label));
    }
    member_detail(o, c.member.name, ek);
    o.close(member);
  }
  o.close(seq);
  return true;
}

// (Complete|Minimal)AliasType (final): flags (0), header (appendable: detail), body
// (appendable: common (final: related flags, related type), annotations).
bool Encoder::alias_object(Out& o, const Type& t, uint8_t ek) {
  o.u16(0);
  const size_t header = o.open();
  if (ek == kEkComplete) type_detail(o, t.name);
  o.close(header);
  const size_t body = o.open();
  o.u16(0);
  if (!ident(o, t.element, ek, "type " + t.name, 0)) return false;
  if (ek == kEkComplete) {
    o.u8(0);
    o.u8(0);
  }
  o.close(body);
  return true;
}

// (Complete|Minimal)EnumeratedType (final): flags, header (appendable: bit_bound, detail),
// literals by value (sequence of appendable literals: common (appendable: value, flags),
// detail).
void Encoder::enum_object(Out& o, const Type& t, uint8_t ek) {
  o.u16(kIsFinal);
  const size_t header = o.open();
  o.u16(t.bit_bound);
  if (ek == kEkComplete) type_detail(o, t.name);
  o.close(header);
  std::vector<const EnumLiteral*> literals;
  for (const EnumLiteral& l : t.literals) literals.push_back(&l);
  std::stable_sort(literals.begin(), literals.end(),
                   [](const EnumLiteral* a, const EnumLiteral* b) { return a->value < b->value; });
  const size_t seq = o.open();
  o.u32(static_cast<uint32_t>(literals.size()));
  for (const EnumLiteral* l : literals) {
    const size_t literal = o.open();
    const size_t common = o.open();
    o.i32(l->value);
    o.u16(0);
    o.close(common);
    member_detail(o, l->name, ek);
    o.close(literal);
  }
  o.close(seq);
}

// (Complete|Minimal)BitmaskType (appendable in Cyclone DDS): flags, header (appendable:
// bit_bound, detail), flags by position (sequence of appendable flags: common (final: position,
// flags), detail).
void Encoder::bitmask_object(Out& o, const Type& t, uint8_t ek) {
  const size_t outer = o.open();
  o.u16(kIsFinal);
  const size_t header = o.open();
  o.u16(t.bit_bound);
  if (ek == kEkComplete) type_detail(o, t.name);
  o.close(header);
  std::vector<const BitFlag*> flags;
  for (const BitFlag& f : t.flags) flags.push_back(&f);
  std::stable_sort(flags.begin(), flags.end(),
                   [](const BitFlag* a, const BitFlag* b) { return a->position < b->position; });
  const size_t seq = o.open();
  o.u32(static_cast<uint32_t>(flags.size()));
  for (const BitFlag* f : flags) {
    const size_t flag = o.open();
    o.u16(f->position);
    o.u16(0);
    member_detail(o, f->name, ek);
    o.close(flag);
  }
  o.close(seq);
  o.close(outer);
}

// Both TypeObjects (appendable union: DHEADER, equivalence kind, then the final union of the
// type kind) of a slot, and their hashes.
bool Encoder::encode(size_t slot) {
  const Type& t = lib_.at(types_[slot].id);
  for (uint8_t ek : {kEkMinimal, kEkComplete}) {
    Out o;
    const size_t object = o.open();
    o.u8(ek);
    o.u8(type_kind(t.kind));
    bool ok = true;
    switch (t.kind) {
      case Kind::kStruct:
        ok = struct_object(o, t, ek);
        break;
      case Kind::kUnion:
        ok = union_object(o, t, ek);
        break;
      case Kind::kAlias:
        ok = alias_object(o, t, ek);
        break;
      case Kind::kEnum:
        enum_object(o, t, ek);
        break;
      default:
        bitmask_object(o, t, ek);
        break;
    }
    if (!ok) return false;
    o.close(object);
    EncodedType& e = types_[slot];
    (ek == kEkMinimal ? e.minimal_hash : e.complete_hash) = equivalence_hash(o.bytes);
    (ek == kEkMinimal ? e.minimal_object : e.complete_object) = std::move(o.bytes);
  }
  return true;
}

// TypeIdentifierWithSize (appendable): the hash identifier, the TypeObject's size.
void with_size(Out& o, uint8_t ek, const EquivalenceHash& hash, size_t size) {
  const size_t d = o.open();
  o.u8(ek);
  o.raw(hash);
  o.u32(static_cast<uint32_t>(size));
  o.close(d);
}

// TypeInformation (mutable: minimal @id(0x1001), complete @id(0x1002), each an EMHEADER with
// length code 4 and its NEXTINT), each a TypeIdentifierWithDependencies (appendable: the type
// with its size, dependent_typeid_count, dependent_typeids).
std::vector<uint8_t> Encoder::type_information() const {
  Out o;
  const size_t info = o.open();
  for (uint8_t ek : {kEkMinimal, kEkComplete}) {
    const bool minimal = ek == kEkMinimal;
    o.u32(0x40000000u | (minimal ? kMinimalInfoId : kCompleteInfoId));
    const size_t next = o.open();
    const size_t deps = o.open();
    const EncodedType& top = types_.front();
    with_size(o, ek, minimal ? top.minimal_hash : top.complete_hash,
              (minimal ? top.minimal_object : top.complete_object).size());
    std::vector<const EncodedType*> listed;
    std::set<EquivalenceHash> seen;
    for (size_t i = 1; i < types_.size(); ++i)
      if (!minimal || seen.insert(types_[i].minimal_hash).second) listed.push_back(&types_[i]);
    o.i32(static_cast<int32_t>(listed.size()));
    const size_t seq = o.open();
    o.u32(static_cast<uint32_t>(listed.size()));
    for (const EncodedType* e : listed)
      with_size(o, ek, minimal ? e->minimal_hash : e->complete_hash,
                (minimal ? e->minimal_object : e->complete_object).size());
    o.close(seq);
    o.close(deps);
    o.close(next);
  }
  o.close(info);
  return std::move(o.bytes);
}

// TypeMapping (final): identifier_object_pair_minimal, identifier_object_pair_complete
// (sequences of final TypeIdentifierTypeObjectPair), identifier_complete_minimal (sequence of
// final TypeIdentifierPair).
std::vector<uint8_t> Encoder::type_mapping() const {
  Out o;
  for (uint8_t ek : {kEkMinimal, kEkComplete}) {
    const size_t seq = o.open();
    o.u32(static_cast<uint32_t>(types_.size()));
    for (const EncodedType& e : types_) {
      o.u8(ek);
      o.raw(ek == kEkMinimal ? e.minimal_hash : e.complete_hash);
      o.align(4);
      o.raw(ek == kEkMinimal ? e.minimal_object : e.complete_object);
    }
    o.close(seq);
  }
  const size_t seq = o.open();
  o.u32(static_cast<uint32_t>(types_.size()));
  for (const EncodedType& e : types_) {
    o.u8(kEkComplete);
    o.raw(e.complete_hash);
    o.u8(kEkMinimal);
    o.raw(e.minimal_hash);
  }
  o.close(seq);
  return std::move(o.bytes);
}

}  // namespace

const std::vector<uint8_t>* EncodedTypes::find(uint8_t equivalence_kind,
                                               const EquivalenceHash& hash) const {
  for (const EncodedType& e : types) {
    if (equivalence_kind == kEkMinimal && e.minimal_hash == hash) return &e.minimal_object;
    if (equivalence_kind == kEkComplete && e.complete_hash == hash) return &e.complete_object;
  }
  return nullptr;
}

std::vector<TypeObjectPair> EncodedTypes::pairs() const {
  std::vector<TypeObjectPair> out;
  std::set<EquivalenceHash> seen;
  for (const EncodedType& e : types)
    if (seen.insert(e.minimal_hash).second)
      out.push_back(TypeObjectPair{kEkMinimal, e.minimal_hash, e.minimal_object});
  for (const EncodedType& e : types)
    out.push_back(TypeObjectPair{kEkComplete, e.complete_hash, e.complete_object});
  return out;
}

Result<EncodedTypes> encode_type_objects(const TypeLibrary& lib, TypeId top,
                                         const EncodeOptions& options) {
  return Encoder(lib, options).run(top);
}

}  // namespace types
