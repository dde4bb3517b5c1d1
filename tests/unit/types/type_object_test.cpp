// types/type_object.hpp against Cyclone DDS's idlc 0.10.2 as the oracle: the TypeInformation
// and TypeMapping bytes idlc generates for all_constructs_xtypes.idl and keyedseq.idl (turned
// into idlc_gen/*_idlc.hpp at build time, see CMakeLists.txt) are decoded and the library
// compared, type by type and field by field, with what parse_idl makes of the same file; then
// exact facts (ids, flags, values, labels, bounds), a getTypes_Out built around the same
// TypeObjects, and the errors: truncation at every length, a missing hash, unsupported kinds.
//
// Where Cyclone's TypeObjects differ from the IDL (asserted, not hidden): idlc 0.10.2 has no
// TK_INT8/TK_UINT8 and writes int8 as TK_CHAR8 and uint8 as TK_BYTE; it sets IS_MUST_UNDERSTAND
// on every key member.
#include <catch2/catch.hpp>
#include <cstring>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "all_constructs_xtypes_idlc.hpp"
#include "keyedseq_idlc.hpp"
#include "types/idl.hpp"
#include "types/idl_writer.hpp"
#include "types/type_object.hpp"
#include "types_test_util.hpp"

using namespace types;

using types_test::id_of;

namespace {

using Bytes = std::span<const uint8_t>;

struct Topic {
  const char* name;
  Bytes info;
  Bytes map;
};

#define TOPIC(ns, ident, qualified)                            \
  Topic {                                                      \
    qualified, Bytes(ns::info_##ident), Bytes(ns::map_##ident) \
  }

const std::vector<Topic>& all_topics() {
  namespace a = idlc_all_constructs_xtypes;
  static const std::vector<Topic> topics = {
      TOPIC(a, pkg_sub_Point, "pkg::sub::Point"),
      TOPIC(a, pkg_sub_Plain, "pkg::sub::Plain"),
      TOPIC(a, pkg_sub_Header, "pkg::sub::Header"),
      TOPIC(a, pkg_sub_Base, "pkg::sub::Base"),
      TOPIC(a, pkg_sub_Derived, "pkg::sub::Derived"),
      TOPIC(a, pkg_sub_Hashed, "pkg::sub::Hashed"),
      TOPIC(a, pkg_sub_Shape, "pkg::sub::Shape"),
      TOPIC(a, pkg_sub_Value, "pkg::sub::Value"),
      TOPIC(a, pkg_sub_Everything, "pkg::sub::Everything"),
      TOPIC(a, pkg_other_Wrapper, "pkg::other::Wrapper"),
  };
  return topics;
}

DecodedTypes decode(const Topic& t) {
  auto info = decode_type_information(t.info);
  INFO(t.name << ": " << (info.ok() ? "" : info.error().message));
  REQUIRE(info.ok());
  auto set = parse_type_mapping(t.map);
  INFO((set.ok() ? "" : set.error().message));
  REQUIRE(set.ok());
  auto d = decode_type_objects(set->pairs, info->complete.hash);
  INFO((d.ok() ? "" : d.error().message));
  REQUIRE(d.ok());
  return std::move(d).value();
}

TypeLibrary parsed(const std::string& path) {
  auto lib = parse_idl_file(path);
  INFO((lib.ok() ? "" : lib.error().message));
  REQUIRE(lib.ok());
  return std::move(lib).value();
}

// What idlc 0.10.2 writes for a primitive kind (no TK_INT8/TK_UINT8).
Kind as_cyclone(Kind k) {
  return k == Kind::kInt8 ? Kind::kChar8 : k == Kind::kUInt8 ? Kind::kOctet : k;
}

// Field-by-field equality of type `a` of the decoded library and `b` of the parsed one,
// following references by structure; the first difference goes to `why`.
class Compare {
 public:
  Compare(const TypeLibrary& decoded, const TypeLibrary& idl) : x_(decoded), y_(idl) {}
  bool same(TypeId a, TypeId b, const std::string& path);
  std::string why;

 private:
  bool differ(const std::string& path, const std::string& what) {
    why = path + ": " + what;
    return false;
  }
  bool same_member(const Member& a, const Member& b, const std::string& path);
  bool same_cases(const Type& a, const Type& b, const std::string& path);

  const TypeLibrary& x_;
  const TypeLibrary& y_;
  std::set<std::pair<TypeId, TypeId>> seen_;
};

bool Compare::same_member(const Member& a, const Member& b, const std::string& path) {
  const std::string p = path + "." + b.name;
  if (a.name != b.name) return differ(p, "name " + a.name);
  if (a.id != b.id) return differ(p, "id " + std::to_string(a.id) + " vs " + std::to_string(b.id));
  if (a.key != b.key || a.optional != b.optional) return differ(p, "key/optional");
  // Cyclone marks every key member must-understand (XTypes 7.2.2.4.4.4.8).
  if (a.must_understand != (b.must_understand || b.key)) return differ(p, "must_understand");
  return same(a.type, b.type, p);
}

bool Compare::same_cases(const Type& a, const Type& b, const std::string& path) {
  if (a.cases.size() != b.cases.size()) return differ(path, "case count");
  for (size_t i = 0; i < a.cases.size(); ++i) {
    const UnionCase& ca = a.cases[i];
    const UnionCase& cb = b.cases[i];
    if (ca.labels != cb.labels || ca.is_default != cb.is_default)
      return differ(path + "." + cb.member.name, "labels/default");
    if (!same_member(ca.member, cb.member, path)) return false;
  }
  return true;
}

bool Compare::same(TypeId ia, TypeId ib, const std::string& path) {
  if (!seen_.insert({ia, ib}).second) return true;
  const Type& a = x_.at(ia);
  const Type& b = y_.at(ib);
  if (a.kind != as_cyclone(b.kind)) return differ(path, "kind");
  if (a.name != b.name) return differ(path, "name " + a.name + " vs " + b.name);
  if (a.extensibility != b.extensibility || a.nested != b.nested)
    return differ(path, "extensibility/nested");
  if (a.bound != b.bound || a.dims != b.dims || a.bit_bound != b.bit_bound)
    return differ(path, "bound/dims/bit_bound");
  if (a.literals.size() != b.literals.size()) return differ(path, "literal count");
  for (size_t i = 0; i < a.literals.size(); ++i)
    if (a.literals[i].name != b.literals[i].name || a.literals[i].value != b.literals[i].value)
      return differ(path, "literal " + b.literals[i].name);
  if (a.flags.size() != b.flags.size()) return differ(path, "flag count");
  for (size_t i = 0; i < a.flags.size(); ++i)
    if (a.flags[i].name != b.flags[i].name || a.flags[i].position != b.flags[i].position)
      return differ(path, "flag " + b.flags[i].name);
  if ((a.element == kNoType) != (b.element == kNoType) ||
      (a.base == kNoType) != (b.base == kNoType) ||
      (a.discriminator == kNoType) != (b.discriminator == kNoType))
    return differ(path, "element/base/discriminator presence");
  if (a.element != kNoType && !same(a.element, b.element, path + "<element>")) return false;
  if (a.base != kNoType && !same(a.base, b.base, path + "<base>")) return false;
  if (a.discriminator != kNoType && !same(a.discriminator, b.discriminator, path + "<disc>"))
    return false;
  if (a.members.size() != b.members.size()) return differ(path, "member count");
  for (size_t i = 0; i < a.members.size(); ++i)
    if (!same_member(a.members[i], b.members[i], path)) return false;
  return same_cases(a, b, path);
}

// parse_idl's IDL text with int8/uint8 as idlc writes them.
std::string cyclone_idl(std::string text) {
  for (auto [from, to] : {std::pair{"  int8 ", "  char "}, std::pair{"  uint8 ", "  octet "}})
    for (size_t p; (p = text.find(from)) != std::string::npos;)
      text.replace(p, std::strlen(from), to);
  return text;
}

const Member& member(const TypeLibrary& lib, TypeId id, const std::string& name) {
  for (const Member& m : lib.at(id).members)
    if (m.name == name) return m;
  FAIL("no member " << name);
  throw 0;
}

void put32(std::vector<uint8_t>& v, uint32_t x) {
  for (int i = 0; i < 4; ++i) v.push_back(static_cast<uint8_t>(x >> (8 * i)));
}

// A TypeLookup_getTypes_Out around a TypeMapping's TypeObjects: its complete pairs as `types`
// (EMHEADER LC 5: the sequence's DHEADER is NEXTINT), its complete-to-minimal pairs as
// `complete_to_minimal` (LC 4, NEXTINT), an unknown member (id 7, LC 2) in between.
std::vector<uint8_t> get_types_out(Bytes mapping) {
  const auto u32 = [&](size_t at) {
    return uint32_t{mapping[at]} | uint32_t{mapping[at + 1]} << 8 |
           uint32_t{mapping[at + 2]} << 16 | uint32_t{mapping[at + 3]} << 24;
  };
  const size_t complete = (4 + u32(0) + 3) / 4 * 4;
  const size_t c2m = (complete + 4 + u32(complete) + 3) / 4 * 4;
  std::vector<uint8_t> body;
  put32(body, 0x50000000u | 0x02804ad1u);
  body.insert(body.end(), mapping.begin() + complete,
              mapping.begin() + complete + 4 + u32(complete));
  while (body.size() % 4) body.push_back(0);
  put32(body, 0x20000007u);
  put32(body, 0xdeadbeef);
  put32(body, 0x40000000u | 0x0b8e6577u);
  put32(body, static_cast<uint32_t>(mapping.size() - c2m));
  body.insert(body.end(), mapping.begin() + c2m, mapping.end());
  std::vector<uint8_t> out;
  put32(out, static_cast<uint32_t>(body.size()));
  out.insert(out.end(), body.begin(), body.end());
  return out;
}

}  // namespace

TEST_CASE("type_object: KeyedSeq's TypeInformation from idlc, exactly") {
  auto info = decode_type_information(idlc_keyedseq::info_KeyedSeq);
  REQUIRE(info.ok());
  CHECK(to_hex(kEkComplete, info->complete.hash) == "f2c6e6285a68c8f6cd7c4203c46cb2");
  CHECK(info->complete.serialized_size == 122);
  REQUIRE(info->minimal);
  CHECK(to_hex(kEkMinimal, info->minimal->hash) == "f1fa0413693f17171633962dcd81a2");
  CHECK(info->minimal->serialized_size == 76);
  CHECK(info->complete_dependent_count == 0);
  CHECK(info->complete_dependencies.empty());
}

TEST_CASE("type_object: KeyedSeq's TypeMapping from idlc, exactly") {
  auto set = parse_type_mapping(idlc_keyedseq::map_KeyedSeq);
  REQUIRE(set.ok());
  REQUIRE(set->pairs.size() == 2);
  CHECK(set->pairs[0].equivalence_kind == kEkMinimal);
  CHECK(set->pairs[0].type_object.size() == 76);
  CHECK(set->pairs[1].equivalence_kind == kEkComplete);
  CHECK(to_hex(kEkComplete, set->pairs[1].hash) == "f2c6e6285a68c8f6cd7c4203c46cb2");
  CHECK(set->pairs[1].type_object.size() == 122);
  REQUIRE(set->complete_to_minimal.size() == 1);
  CHECK(set->complete_to_minimal[0].first == set->pairs[1].hash);
  CHECK(set->complete_to_minimal[0].second == set->pairs[0].hash);

  const DecodedTypes d =
      decode({"KeyedSeq", idlc_keyedseq::info_KeyedSeq, idlc_keyedseq::map_KeyedSeq});
  const TypeLibrary& lib = d.library;
  const Type& t = lib.at(d.top);
  CHECK(t.kind == Kind::kStruct);
  CHECK(t.name == "KeyedSeq");
  CHECK(t.extensibility == Extensibility::kFinal);
  CHECK_FALSE(t.nested);
  CHECK(t.base == kNoType);
  REQUIRE(t.members.size() == 3);
  CHECK((t.members[0].name == "seq" && t.members[0].id == 0 && !t.members[0].key &&
         !t.members[0].must_understand && t.members[0].type == lib.primitive(Kind::kUInt32)));
  CHECK((t.members[1].name == "keyval" && t.members[1].id == 1 && t.members[1].key &&
         t.members[1].must_understand && !t.members[1].optional &&
         t.members[1].type == lib.primitive(Kind::kUInt32)));
  const Type& baggage = lib.at(t.members[2].type);
  CHECK((t.members[2].name == "baggage" && t.members[2].id == 2));
  CHECK((baggage.kind == Kind::kSequence && baggage.bound == 0 &&
         baggage.element == lib.primitive(Kind::kOctet)));

  TypeLibrary idl = parsed(PUBSUB_REPLAY_TEST_DIR "/keyedseq.idl");
  Compare cmp(lib, idl);
  CHECK(cmp.same(d.top, id_of(idl, "KeyedSeq"), "KeyedSeq"));
  CHECK(cmp.why == "");
  CHECK(to_idl(lib, d.top) == to_idl(idl, id_of(idl, "KeyedSeq")));
}

TEST_CASE("type_object: every topic type of all_constructs_xtypes.idl as parse_idl has it") {
  const TypeLibrary idl = parsed(PUBSUB_TYPES_TEST_DIR "/all_constructs_xtypes.idl");
  for (const Topic& topic : all_topics()) {
    INFO(topic.name);
    const DecodedTypes d = decode(topic);
    CHECK(d.library.at(d.top).name == topic.name);
    Compare cmp(d.library, idl);
    CHECK(cmp.same(d.top, id_of(idl, topic.name), topic.name));
    CHECK(cmp.why == "");
    CHECK(to_idl(d.library, d.top) == cyclone_idl(to_idl(idl, id_of(idl, topic.name))));

    // The complete hash TypeInformation names is one of the TypeMapping's complete pairs, and
    // every dependency it lists is another.
    auto info = decode_type_information(topic.info);
    auto set = parse_type_mapping(topic.map);
    REQUIRE((info.ok() && set.ok()));
    std::set<EquivalenceHash> complete;
    for (const TypeObjectPair& p : set->pairs)
      if (p.equivalence_kind == kEkComplete) complete.insert(p.hash);
    CHECK(complete.count(info->complete.hash) == 1);
    CHECK(info->complete_dependencies.size() == complete.size() - 1);
    CHECK(info->complete_dependent_count == static_cast<int32_t>(complete.size() - 1));
    for (const TypeIdWithSize& dep : info->complete_dependencies)
      CHECK(complete.count(dep.hash) == 1);
  }
}

TEST_CASE("type_object: Everything's facts, exactly") {
  const DecodedTypes d = decode(all_topics()[8]);
  const TypeLibrary& lib = d.library;
  const Type& top = lib.at(d.top);
  REQUIRE(top.name == "pkg::sub::Everything");
  CHECK(top.extensibility == Extensibility::kAppendable);
  CHECK_FALSE(top.nested);
  REQUIRE(top.members.size() == 17);
  for (uint32_t i = 0; i < top.members.size(); ++i) CHECK(top.members[i].id == i);
  CHECK(member(lib, d.top, "key_id").key);

  // Strings, sequences and arrays: bounds and dimensions.
  CHECK(member(lib, d.top, "title").type == lib.primitive(Kind::kString));
  CHECK((lib.at(member(lib, d.top, "code").type).kind == Kind::kString &&
         lib.at(member(lib, d.top, "code").type).bound == 8));
  const Type& corners = lib.at(member(lib, d.top, "corners").type);
  CHECK((corners.kind == Kind::kSequence && corners.bound == 4 &&
         lib.at(corners.element).name == "pkg::sub::Point"));
  const Type& grid = lib.at(member(lib, d.top, "grid").type);
  CHECK((grid.kind == Kind::kArray && grid.dims == std::vector<uint32_t>{2, 3, 4} &&
         grid.element == lib.primitive(Kind::kInt32)));
  const Type& nested = lib.at(member(lib, d.top, "nested_seq").type);
  CHECK((nested.kind == Kind::kSequence && nested.bound == 0 &&
         lib.at(nested.element).kind == Kind::kSequence && lib.at(nested.element).bound == 3));
  const Type& names = lib.at(member(lib, d.top, "names").type);
  CHECK((names.kind == Kind::kArray && names.dims == std::vector<uint32_t>{2} &&
         lib.at(names.element).kind == Kind::kAlias &&
         lib.at(names.element).name == "pkg::sub::Name"));
  const Type& name = lib.at(lib.at(names.element).element);
  CHECK((name.kind == Kind::kString && name.bound == 16));
  const Type& matrix = lib.at(id_of(lib, "pkg::sub::Matrix"));
  CHECK(
      (matrix.kind == Kind::kAlias && lib.at(matrix.element).dims == std::vector<uint32_t>{2, 3}));
  const Type& samples = lib.at(lib.at(id_of(lib, "pkg::sub::Samples")).element);
  CHECK((samples.kind == Kind::kSequence && samples.bound == 8));

  // Header: appendable, key stamp (must-understand by Cyclone), frame of alias Name.
  const TypeId header = id_of(lib, "pkg::sub::Header");
  CHECK(lib.at(header).extensibility == Extensibility::kAppendable);
  CHECK((member(lib, header, "stamp").key && member(lib, header, "stamp").must_understand));
  CHECK(lib.at(member(lib, header, "frame").type).name == "pkg::sub::Name");

  // Enums and bitmasks.
  const Type& color = lib.at(id_of(lib, "pkg::sub::Color"));
  CHECK(color.bit_bound == 8);
  REQUIRE(color.literals.size() == 4);
  CHECK((color.literals[0].name == "RED" && color.literals[0].value == 0));
  CHECK((color.literals[1].name == "GREEN" && color.literals[1].value == 5));
  CHECK((color.literals[2].name == "BLUE" && color.literals[2].value == 6));
  CHECK((color.literals[3].name == "ALPHA" && color.literals[3].value == 7));
  CHECK(lib.at(id_of(lib, "pkg::sub::Level")).bit_bound == 32);
  const Type& perms = lib.at(id_of(lib, "pkg::sub::Perms"));
  CHECK(perms.bit_bound == 16);
  REQUIRE(perms.flags.size() == 3);
  CHECK((perms.flags[0].name == "READ" && perms.flags[0].position == 0));
  CHECK((perms.flags[1].name == "WRITE" && perms.flags[1].position == 3));
  CHECK((perms.flags[2].name == "EXEC" && perms.flags[2].position == 4));

  // Unions: discriminators (Tag resolved to long), labels, default case, member ids from 0.
  const Type& shape = lib.at(id_of(lib, "pkg::sub::Shape"));
  CHECK(shape.extensibility == Extensibility::kFinal);
  CHECK(lib.at(shape.discriminator).name == "pkg::sub::Color");
  REQUIRE(shape.cases.size() == 3);
  CHECK((shape.cases[0].labels == std::vector<int64_t>{0} && !shape.cases[0].is_default &&
         shape.cases[0].member.name == "corner" && shape.cases[0].member.id == 0));
  CHECK((shape.cases[1].labels == std::vector<int64_t>{5, 6} && shape.cases[1].member.id == 1 &&
         shape.cases[1].member.type == lib.primitive(Kind::kFloat64)));
  CHECK((shape.cases[2].labels.empty() && shape.cases[2].is_default &&
         shape.cases[2].member.name == "raw" && shape.cases[2].member.id == 2));
  const Type& value = lib.at(id_of(lib, "pkg::sub::Value"));
  CHECK(value.extensibility == Extensibility::kAppendable);
  CHECK(value.discriminator == lib.primitive(Kind::kInt32));
  REQUIRE(value.discriminator_typedef != kNoType);  // Value's TypeObject refers to alias Tag
  CHECK(lib.at(value.discriminator_typedef).name == "pkg::sub::Tag");
  CHECK(shape.discriminator_typedef == kNoType);
  REQUIRE(value.cases.size() == 3);
  CHECK(value.cases[0].labels == std::vector<int64_t>{1, 2});
  CHECK(value.cases[1].labels == std::vector<int64_t>{-3});
  CHECK(value.cases[2].labels == std::vector<int64_t>{7});
  CHECK(lib.at(value.cases[2].member.type).dims == std::vector<uint32_t>{2});

  // Primitives: @nested; int8/uint8 as idlc 0.10.2 writes them (TK_CHAR8, TK_BYTE).
  const TypeId prims = id_of(lib, "pkg::sub::Primitives");
  CHECK(lib.at(prims).nested);
  CHECK(member(lib, prims, "i8").type == lib.primitive(Kind::kChar8));
  CHECK(member(lib, prims, "u8").type == lib.primitive(Kind::kOctet));
  CHECK(member(lib, prims, "ull").type == lib.primitive(Kind::kUInt64));
  CHECK(member(lib, prims, "d").type == lib.primitive(Kind::kFloat64));
}

TEST_CASE("type_object: mutable structs, bases, @optional, @must_understand, @autoid(HASH)") {
  const DecodedTypes derived = decode(all_topics()[4]);
  const TypeLibrary& lib = derived.library;
  const Type& t = lib.at(derived.top);
  CHECK(t.extensibility == Extensibility::kMutable);
  REQUIRE(t.base != kNoType);
  const Type& base = lib.at(t.base);
  CHECK((base.name == "pkg::sub::Base" && base.extensibility == Extensibility::kMutable));
  REQUIRE(base.members.size() == 2);
  CHECK((base.members[0].name == "uid" && base.members[0].id == 0 && base.members[0].key));
  CHECK((base.members[1].name == "label" && base.members[1].id == 1 && base.members[1].optional &&
         !base.members[1].key && lib.at(base.members[1].type).bound == 16));
  REQUIRE(t.members.size() == 4);
  CHECK((t.members[0].id == 2 && t.members[1].id == 10 && t.members[2].id == 11 &&
         t.members[3].id == 12));

  const DecodedTypes hashed = decode(all_topics()[5]);
  const Type& h = hashed.library.at(hashed.top);
  CHECK(h.autoid_hash);  // IS_AUTOID_HASH
  CHECK_FALSE(t.autoid_hash);
  REQUIRE(h.members.size() == 3);
  CHECK((h.members[0].name == "alpha" && h.members[0].id == 0x0343172c));
  CHECK((h.members[1].name == "beta" && h.members[1].id == 3));
  CHECK((h.members[2].name == "gamma" && h.members[2].must_understand && !h.members[2].key));
}

TEST_CASE("type_object: a getTypes_Out with the same TypeObjects decodes the same") {
  for (const Topic& topic : all_topics()) {
    INFO(topic.name);
    const std::vector<uint8_t> out = get_types_out(topic.map);
    auto set = parse_get_types_out(out);
    INFO((set.ok() ? "" : set.error().message));
    REQUIRE(set.ok());
    auto mapping = parse_type_mapping(topic.map);
    REQUIRE(mapping.ok());
    size_t complete = 0;
    for (const TypeObjectPair& p : mapping->pairs) complete += p.equivalence_kind == kEkComplete;
    CHECK(set->pairs.size() == complete);
    CHECK(set->complete_to_minimal == mapping->complete_to_minimal);
    auto info = decode_type_information(topic.info);
    REQUIRE(info.ok());
    auto d = decode_type_objects(set->pairs, info->complete.hash);
    REQUIRE(d.ok());
    const DecodedTypes ref = decode(topic);
    CHECK(to_idl(d->library, d->top) == to_idl(ref.library, ref.top));
  }
}

TEST_CASE("type_object: truncated input is kTruncated at every length") {
  for (const Topic& topic : {all_topics()[8], Topic{"KeyedSeq", idlc_keyedseq::info_KeyedSeq,
                                                    idlc_keyedseq::map_KeyedSeq}}) {
    INFO(topic.name);
    for (size_t n = 0; n < topic.info.size(); ++n) {
      auto r = decode_type_information(topic.info.first(n));
      REQUIRE_FALSE(r.ok());
      CHECK(r.error().code == common::Errc::kTruncated);
    }
    for (size_t n = 0; n < topic.map.size(); ++n) {
      auto r = parse_type_mapping(topic.map.first(n));
      REQUIRE_FALSE(r.ok());
      CHECK(r.error().code == common::Errc::kTruncated);
    }
    const std::vector<uint8_t> out = get_types_out(topic.map);
    for (size_t n = 0; n < out.size(); ++n) {
      auto r = parse_get_types_out(Bytes(out).first(n));
      REQUIRE_FALSE(r.ok());
      CHECK(r.error().code == common::Errc::kTruncated);
    }
  }
  const Bytes info(idlc_keyedseq::info_KeyedSeq);
  CHECK(decode_type_information(info.first(0)).error().message ==
        "TypeInformation: offset 0: DHEADER of TypeInformation needs 4 bytes, 0 left");
  CHECK(decode_type_information(info.first(60)).error().message ==
        "TypeInformation: offset 0: TypeInformation of 96 bytes, 56 left");
  const Bytes map(idlc_keyedseq::map_KeyedSeq);
  CHECK(parse_type_mapping(map.first(120)).error().message ==
        "TypeMapping: offset 100: TypeIdentifierTypeObjectPair sequence of 142 bytes, 16 left");
  CHECK(parse_type_mapping(map.first(285)).error().message ==
        "TypeMapping: offset 248: TypeIdentifierPair sequence of 34 bytes, 33 left");
}

TEST_CASE("type_object: a referenced type missing from the set is kNotFound naming its hash") {
  const Topic& everything = all_topics()[8];
  auto header = decode_type_information(all_topics()[2].info);
  auto info = decode_type_information(everything.info);
  auto set = parse_type_mapping(everything.map);
  REQUIRE((header.ok() && info.ok() && set.ok()));
  std::vector<TypeObjectPair> pairs;
  for (const TypeObjectPair& p : set->pairs)
    if (p.hash != header->complete.hash) pairs.push_back(p);
  REQUIRE(pairs.size() == set->pairs.size() - 1);
  auto d = decode_type_objects(pairs, info->complete.hash);
  REQUIRE_FALSE(d.ok());
  CHECK(d.error().code == common::Errc::kNotFound);
  CHECK(d.error().message == "type pkg::sub::Everything member hdr: type " +
                                 to_hex(kEkComplete, header->complete.hash) +
                                 " is not among the TypeObjects");
  CHECK(to_hex(kEkComplete, header->complete.hash) == "f2cc3395baf151a3f92b7606d8b0f9");

  auto none = decode_type_objects({}, info->complete.hash);
  REQUIRE_FALSE(none.ok());
  CHECK(none.error().message ==
        "topic type: type f20fdd7ddc223af8c93a21d41342af is not among the TypeObjects");
}

TEST_CASE("type_object: what the model cannot hold is kUnsupported naming type and member") {
  auto set = parse_type_mapping(idlc_keyedseq::map_KeyedSeq);
  REQUIRE(set.ok());
  const EquivalenceHash hash = set->pairs[1].hash;
  std::vector<uint8_t>& object = set->pairs[1].type_object;
  // Member seq's TypeIdentifier (TK_UINT32) at offset 50 of the complete TypeObject; the
  // TypeObject's kind (TK_STRUCTURE) at offset 5.
  REQUIRE(object.at(50) == 0x07);
  REQUIRE(object.at(5) == 0x51);
  const auto with = [&](size_t at, uint8_t v) {
    std::vector<TypeObjectPair> pairs = set->pairs;
    pairs[1].type_object[at] = v;
    return decode_type_objects(pairs, hash);
  };
  auto f128 = with(50, 0x0b);
  REQUIRE_FALSE(f128.ok());
  CHECK(f128.error().code == common::Errc::kUnsupported);
  CHECK(f128.error().message ==
        "type KeyedSeq member seq: float128 (long double) is not supported");
  CHECK(with(50, 0x11).error().message ==
        "type KeyedSeq member seq: char16 (wchar) is not supported");
  CHECK(with(50, 0x2a).error().message ==
        "type KeyedSeq member seq: TypeIdentifier kind 0x2a is not supported");
  auto bitset = with(5, 0x53);
  CHECK(bitset.error().code == common::Errc::kUnsupported);
  CHECK(bitset.error().message ==
        "topic type: type f2c6e6285a68c8f6cd7c4203c46cb2 is a bitset (TK_BITSET), which is not "
        "supported");
  CHECK(with(5, 0x62).error().message ==
        "topic type: type f2c6e6285a68c8f6cd7c4203c46cb2 is a map (TK_MAP), which is not "
        "supported");
  // A minimal TypeObject under a complete hash.
  auto minimal = with(4, 0xf1);
  CHECK(minimal.error().code == common::Errc::kCorrupt);
  CHECK(minimal.error().message ==
        "TypeObject f2c6e6285a68c8f6cd7c4203c46cb2: offset 4: not a complete TypeObject "
        "(equivalence kind 0xf1)");
}

TEST_CASE("type_object: a getTypes reply Cyclone DDS sent for ddsperf's KeyedSeq, exactly") {
  // The TypeLookup_getTypes_Out of the reply ddsperf's participant (Cyclone DDS 0.10.2) sent
  // pubsub-recorder (tests/integration/replay/ddsperf_decode.sh): one COMPLETE TypeObject.
  const std::string hex =
      "A4000000D14A80528E00000001000000F2C6E6285A68C8F6CD7C4203C46CB200"
      "76000000F25101001100000000000000090000004B6579656453657100000000"
      "5600000003000000120000000000000001000700040000007365710000000000"
      "150000000100000031000700070000006B657976616C0000000000001A000000"
      "02000000010080F3010000020800000062616767616765000000000077658E5B"
      "0400000000000000";
  std::vector<uint8_t> bytes;
  for (size_t i = 0; i < hex.size(); i += 2)
    bytes.push_back(static_cast<uint8_t>(std::stoul(hex.substr(i, 2), nullptr, 16)));
  auto set = parse_get_types_out(bytes);
  REQUIRE(set.ok());
  REQUIRE(set->pairs.size() == 1);
  CHECK(set->pairs[0].equivalence_kind == kEkComplete);
  CHECK(to_hex(kEkComplete, set->pairs[0].hash) == "f2c6e6285a68c8f6cd7c4203c46cb2");
  CHECK(set->complete_to_minimal.empty());
  auto d = decode_type_objects(set->pairs, set->pairs[0].hash);
  REQUIRE(d.ok());
  CHECK(to_idl(d->library, d->top) ==
        "@final\nstruct KeyedSeq {\n  unsigned long seq;\n  @key unsigned long keyval;\n"
        "  sequence<octet> baggage;\n};\n");
}
