// types/type_object_writer.hpp against Cyclone DDS's idlc 0.10.2 as the oracle: every topic
// type of all_constructs_xtypes.idl, keyedseq.idl and xtypes_extra.idl is parsed with
// parse_idl and encoded, and the TypeInformation and TypeMapping must be idlc's TYPE_INFO_CDR_
// / TYPE_MAP_CDR_ arrays byte for byte (idlc_gen/*_idlc.hpp, generated at build time, see
// CMakeLists.txt). Then: each hash is the MD5 of its TypeObject, the TypeObjects decode
// (decode_type_objects) to the library they came from (to_idl equal, all_constructs.idl's
// non-recursive types too), lookups by hash, and the refusals with their exact messages.
#include <algorithm>
#include <boost/uuid/detail/md5.hpp>
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
#include "types/type_object_writer.hpp"
#include "types_test_util.hpp"
#include "xtypes_extra_idlc.hpp"

using namespace types;

using types_test::id_of;

namespace {

using Bytes = std::span<const uint8_t>;

struct Oracle {
  const char* file;
  const char* name;
  Bytes info;
  Bytes map;
};

#define ORACLE(file, ns, ident, qualified)                           \
  Oracle {                                                           \
    file, qualified, Bytes(ns::info_##ident), Bytes(ns::map_##ident) \
  }

const std::vector<Oracle>& oracles() {
  namespace a = idlc_all_constructs_xtypes;
  namespace k = idlc_keyedseq;
  namespace x = idlc_xtypes_extra;
  static const std::string all = PUBSUB_TYPES_TEST_DIR "/all_constructs_xtypes.idl";
  static const std::string keyed = PUBSUB_REPLAY_TEST_DIR "/keyedseq.idl";
  static const std::string extra = PUBSUB_TYPES_TEST_DIR "/xtypes_extra.idl";
  static const std::vector<Oracle> list = {
      ORACLE(all.c_str(), a, pkg_sub_Point, "pkg::sub::Point"),
      ORACLE(all.c_str(), a, pkg_sub_Plain, "pkg::sub::Plain"),
      ORACLE(all.c_str(), a, pkg_sub_Header, "pkg::sub::Header"),
      ORACLE(all.c_str(), a, pkg_sub_Base, "pkg::sub::Base"),
      ORACLE(all.c_str(), a, pkg_sub_Derived, "pkg::sub::Derived"),
      ORACLE(all.c_str(), a, pkg_sub_Hashed, "pkg::sub::Hashed"),
      ORACLE(all.c_str(), a, pkg_sub_Shape, "pkg::sub::Shape"),
      ORACLE(all.c_str(), a, pkg_sub_Value, "pkg::sub::Value"),
      ORACLE(all.c_str(), a, pkg_sub_Everything, "pkg::sub::Everything"),
      ORACLE(all.c_str(), a, pkg_other_Wrapper, "pkg::other::Wrapper"),
      ORACLE(keyed.c_str(), k, KeyedSeq, "KeyedSeq"),
      ORACLE(extra.c_str(), x, ex_Large, "ex::Large"),
      ORACLE(extra.c_str(), x, ex_Aliases, "ex::Aliases"),
      ORACLE(extra.c_str(), x, ex_Unions, "ex::Unions"),
  };
  return list;
}

TypeLibrary parsed(const std::string& path) {
  auto lib = parse_idl_file(path);
  INFO((lib.ok() ? "" : lib.error().message));
  REQUIRE(lib.ok());
  return std::move(lib).value();
}

EncodedTypes encoded(const TypeLibrary& lib, TypeId top, const EncodeOptions& options = {}) {
  auto e = encode_type_objects(lib, top, options);
  INFO((e.ok() ? "" : e.error().message));
  REQUIRE(e.ok());
  return std::move(e).value();
}

// "" when equal, else where the bytes first differ.
std::string first_difference(Bytes got, Bytes want) {
  const size_t n = std::min(got.size(), want.size());
  for (size_t i = 0; i < n; ++i)
    if (got[i] != want[i])
      return "offset " + std::to_string(i) + ": " + std::to_string(got[i]) + " instead of " +
             std::to_string(want[i]);
  if (got.size() != want.size())
    return std::to_string(got.size()) + " bytes instead of " + std::to_string(want.size());
  return "";
}

std::array<uint8_t, 16> md5(Bytes b) {
  boost::uuids::detail::md5 h;
  h.process_bytes(b.data(), b.size());
  boost::uuids::detail::md5::digest_type d;
  h.get_digest(d);
  std::array<uint8_t, 16> out{};  // each word's most significant byte first (Boost 1.71+)
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<uint8_t>(d[i / 4] >> (24 - 8 * (i % 4)));
  return out;
}

// parse_idl's IDL text with int8/uint8 as idlc 0.10.2 writes them (TK_CHAR8, TK_BYTE).
std::string cyclone_idl(std::string text) {
  for (auto [from, to] : {std::pair{"  int8 ", "  char "}, std::pair{"  uint8 ", "  octet "},
                          std::pair{"<int8", "<char"}, std::pair{"<uint8", "<octet"}})
    for (size_t p; (p = text.find(from)) != std::string::npos;)
      text.replace(p, std::strlen(from), to);
  return text;
}

// The library with what a TypeObject cannot keep taken out: enumerators in value order, bit
// flags in position order (XTypes 7.3.4.5; the declaration order is lost).
TypeLibrary xtypes_order(TypeLibrary lib) {
  for (TypeId id = 0; id < lib.size(); ++id) {
    Type& t = lib.at(id);
    std::stable_sort(t.literals.begin(), t.literals.end(),
                     [](const EnumLiteral& a, const EnumLiteral& b) { return a.value < b.value; });
    std::stable_sort(t.flags.begin(), t.flags.end(),
                     [](const BitFlag& a, const BitFlag& b) { return a.position < b.position; });
  }
  return lib;
}

std::string round_trip(const EncodedTypes& e) {
  const std::vector<TypeObjectPair> pairs = e.pairs();
  auto d = decode_type_objects(pairs, e.top().complete_hash);
  INFO((d.ok() ? "" : d.error().message));
  REQUIRE(d.ok());
  return to_idl(d->library, d->top);
}

}  // namespace

TEST_CASE("type_object_writer: TypeInformation and TypeMapping are idlc's, byte for byte") {
  for (const Oracle& o : oracles()) {
    INFO(o.name);
    const TypeLibrary lib = parsed(o.file);
    const EncodedTypes e = encoded(lib, id_of(lib, o.name));
    CHECK(e.top().name == o.name);
    CHECK(first_difference(e.type_information, o.info) == "");
    CHECK(first_difference(e.type_mapping, o.map) == "");
    // Type by type, for a message that says which one differs.
    auto set = parse_type_mapping(o.map);
    REQUIRE(set.ok());
    REQUIRE(set->pairs.size() == 2 * e.types.size());
    for (size_t i = 0; i < e.types.size(); ++i) {
      INFO(e.types[i].name);
      CHECK(first_difference(e.types[i].minimal_object, set->pairs[i].type_object) == "");
      CHECK(first_difference(e.types[i].complete_object,
                             set->pairs[e.types.size() + i].type_object) == "");
    }
  }
}

TEST_CASE("type_object_writer: KeyedSeq's hashes and sizes, exactly") {
  const TypeLibrary lib = parsed(PUBSUB_REPLAY_TEST_DIR "/keyedseq.idl");
  const EncodedTypes e = encoded(lib, id_of(lib, "KeyedSeq"));
  REQUIRE(e.types.size() == 1);
  CHECK(to_hex(kEkComplete, e.top().complete_hash) == "f2c6e6285a68c8f6cd7c4203c46cb2");
  CHECK(to_hex(kEkMinimal, e.top().minimal_hash) == "f1fa0413693f17171633962dcd81a2");
  CHECK(e.top().complete_object.size() == 122);
  CHECK(e.top().minimal_object.size() == 76);
  auto info = decode_type_information(e.type_information);
  REQUIRE(info.ok());
  CHECK(info->complete.hash == e.top().complete_hash);
  CHECK(info->complete.serialized_size == 122);
}

TEST_CASE("type_object_writer: each hash is the first 14 bytes of the MD5 of its TypeObject") {
  // RFC 1321's test vector, so that the MD5 below is one.
  const std::string abc = "abc";
  const auto d = md5({reinterpret_cast<const uint8_t*>(abc.data()), abc.size()});
  CHECK(to_hex(d[0], EquivalenceHash{d[1], d[2], d[3], d[4], d[5], d[6], d[7], d[8], d[9], d[10],
                                     d[11], d[12], d[13], d[14]}) ==
        "900150983cd24fb0d6963f7d28e17f");
  size_t checked = 0;
  for (const Oracle& o : oracles()) {
    INFO(o.name);
    const TypeLibrary lib = parsed(o.file);
    const EncodedTypes e = encoded(lib, id_of(lib, o.name));
    for (const EncodedType& t : e.types) {
      INFO(t.name);
      const auto m = md5(t.minimal_object);
      const auto c = md5(t.complete_object);
      CHECK(std::equal(t.minimal_hash.begin(), t.minimal_hash.end(), m.begin()));
      CHECK(std::equal(t.complete_hash.begin(), t.complete_hash.end(), c.begin()));
      // A TypeObject's DHEADER counts the bytes after it; the first byte is its EK.
      CHECK(t.minimal_object.size() ==
            size_t{4} + (t.minimal_object[0] | size_t{t.minimal_object[1]} << 8));
      CHECK(t.minimal_object.at(4) == kEkMinimal);
      CHECK(t.complete_object.at(4) == kEkComplete);
      ++checked;
    }
  }
  CHECK(checked > 30);
}

TEST_CASE("type_object_writer: the TypeMapping holds what find() and pairs() give") {
  namespace a = idlc_all_constructs_xtypes;
  const TypeLibrary lib = parsed(PUBSUB_TYPES_TEST_DIR "/all_constructs_xtypes.idl");
  const EncodedTypes e = encoded(lib, id_of(lib, "pkg::sub::Everything"));
  REQUIRE(e.types.size() == 13);
  CHECK(e.types[1].name == "pkg::sub::Header");
  CHECK(e.types[2].name == "pkg::sub::Name");
  CHECK(e.types[12].name == "pkg::sub::Primitives");
  auto set = parse_type_mapping(a::map_pkg_sub_Everything);
  REQUIRE(set.ok());
  REQUIRE(set->pairs.size() == 26);
  for (const TypeObjectPair& p : set->pairs) {
    const std::vector<uint8_t>* bytes = e.find(p.equivalence_kind, p.hash);
    REQUIRE(bytes != nullptr);
    CHECK(*bytes == p.type_object);
  }
  const std::vector<TypeObjectPair> pairs = e.pairs();
  REQUIRE(pairs.size() == 26);
  for (size_t i = 0; i < pairs.size(); ++i) {
    CHECK(pairs[i].equivalence_kind == set->pairs[i].equivalence_kind);
    CHECK(pairs[i].hash == set->pairs[i].hash);
  }
  EquivalenceHash unknown{};
  CHECK(e.find(kEkComplete, unknown) == nullptr);
  // A complete hash is not found as a minimal one.
  CHECK(e.find(kEkMinimal, e.top().complete_hash) == nullptr);
}

TEST_CASE("type_object_writer: the TypeObjects decode to the library they came from") {
  for (const Oracle& o : oracles()) {
    INFO(o.name);
    const TypeLibrary lib = parsed(o.file);
    const TypeId top = id_of(lib, o.name);
    const std::string idl = to_idl(xtypes_order(lib), top);
    CHECK(round_trip(encoded(lib, top)) == cyclone_idl(idl));
    // With TK_INT8/TK_UINT8 int8 and uint8 come back as they were.
    const EncodedTypes exact = encoded(lib, top, EncodeOptions{.cyclone_int8 = false});
    CHECK(round_trip(exact) == idl);
    if (std::string(o.name) == "ex::Aliases") {  // Dir's and Wide's order is lost
      CHECK(idl != to_idl(lib, top));
      CHECK(idl.find("enum Dir {\n  @value(1) DOWN,\n  LEFT,\n  UP\n};") != std::string::npos);
    }
  }
}

TEST_CASE("type_object_writer: every struct and union of all_constructs.idl but the recursive") {
  const TypeLibrary lib = parsed(PUBSUB_TYPES_TEST_DIR "/all_constructs.idl");
  size_t encoded_count = 0;
  for (TypeId id : lib.named()) {
    const std::string& name = lib.at(id).name;
    INFO(name);
    auto e = encode_type_objects(lib, id, EncodeOptions{.cyclone_int8 = false});
    if (name == "pkg::sub::Node" || name == "pkg::sub::Everything") {
      REQUIRE_FALSE(e.ok());
      CHECK(e.error().code == common::Errc::kUnsupported);
      CHECK(e.error().message ==
            "type pkg::sub::Node member children: type pkg::sub::Node contains itself; recursive "
            "types are not supported");
      continue;
    }
    INFO((e.ok() ? "" : e.error().message));
    REQUIRE(e.ok());
    CHECK(round_trip(*e) == to_idl(lib, id));
    ++encoded_count;
  }
  CHECK(encoded_count == 10);
}

TEST_CASE("type_object_writer: what cannot be encoded is refused, naming type and member") {
  TypeLibrary lib;
  Type s;
  s.kind = Kind::kStruct;
  s.name = "m::S";
  s.members.push_back(Member{"x", lib.primitive(Kind::kInt32), 0x10000000});
  const TypeId sid = lib.add(s);
  auto big_id = encode_type_objects(lib, sid);
  REQUIRE_FALSE(big_id.ok());
  CHECK(big_id.error().code == common::Errc::kUnsupported);
  CHECK(big_id.error().message == "type m::S member x: member id 0x10000000 is above 0x0fffffff");

  Type u;
  u.kind = Kind::kUnion;
  u.name = "m::U";
  u.discriminator = lib.primitive(Kind::kInt64);
  UnionCase c;
  c.labels = {1, int64_t{1} << 32};
  c.member = Member{"a", lib.primitive(Kind::kFloat64), 1};
  u.cases.push_back(c);
  const TypeId uid = lib.add(u);
  auto label = encode_type_objects(lib, uid);
  REQUIRE_FALSE(label.ok());
  CHECK(label.error().code == common::Errc::kUnsupported);
  CHECK(label.error().message == "type m::U member a: case label 4294967296 is outside int32");

  Type e;
  e.kind = Kind::kEnum;
  e.name = "m::E";
  const TypeId eid = lib.add(e);
  auto not_topic = encode_type_objects(lib, eid);
  REQUIRE_FALSE(not_topic.ok());
  CHECK(not_topic.error().code == common::Errc::kInvalidArgument);
  CHECK(not_topic.error().message == "topic type m::E is not a struct or union");
  CHECK(encode_type_objects(lib, 9999).error().message ==
        "topic type: type id 9999 is not in the library");

  Type dangling;
  dangling.kind = Kind::kStruct;
  dangling.name = "m::D";
  dangling.members.push_back(Member{"y", 4242, 0});
  auto d = encode_type_objects(lib, lib.add(dangling));
  REQUIRE_FALSE(d.ok());
  CHECK(d.error().code == common::Errc::kInvalidArgument);
  CHECK(d.error().message == "type m::D member y: type id 4242 is not in the library");

  // A struct holding a struct ... 70 deep.
  TypeId inner = lib.primitive(Kind::kInt32);
  for (int i = 0; i < 70; ++i) {
    Type n;
    n.kind = Kind::kStruct;
    n.name = "m::N" + std::to_string(i);
    n.members.push_back(Member{"v", inner, 0});
    inner = lib.add(n);
  }
  auto deep = encode_type_objects(lib, inner);
  REQUIRE_FALSE(deep.ok());
  CHECK(deep.error().code == common::Errc::kUnsupported);
  CHECK(deep.error().message ==
        "type m::N5 member v: types nested deeper than 64 are not supported");

  // A struct that is its own base.
  Type self;
  self.kind = Kind::kStruct;
  self.name = "m::Self";
  const TypeId self_id = lib.add(self);
  lib.at(self_id).base = self_id;
  CHECK(encode_type_objects(lib, self_id).error().message ==
        "type m::Self base: type m::Self contains itself; recursive types are not supported");
}
