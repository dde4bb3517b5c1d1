// types::to_idl: exact text for types built in code, and a round trip through parse_idl for
// every named type of all_constructs.idl (write, parse again, compare the trees).
#include <catch2/catch.hpp>
#include <set>
#include <string>

#include "types/idl.hpp"
#include "types/idl_writer.hpp"

using namespace types;

namespace {

TypeId add_struct(TypeLibrary& lib, std::string name, std::vector<Member> members,
                  Extensibility e = Extensibility::kFinal) {
  Type t;
  t.kind = Kind::kStruct;
  t.name = std::move(name);
  t.extensibility = e;
  t.members = std::move(members);
  return lib.add(std::move(t));
}

Member member(std::string name, TypeId type, uint32_t id) {
  Member m;
  m.name = std::move(name);
  m.type = type;
  m.id = id;
  return m;
}

// Structural equality of two types in two libraries (names, kinds, members, bounds, ...),
// following references by structure, not by id. `seen` stops at recursion.
bool same(const TypeLibrary& a, TypeId ia, const TypeLibrary& b, TypeId ib,
          std::set<std::pair<TypeId, TypeId>>& seen, std::string& why);

bool same_member(const TypeLibrary& a, const Member& ma, const TypeLibrary& b, const Member& mb,
                 std::set<std::pair<TypeId, TypeId>>& seen, std::string& why) {
  if (ma.name != mb.name || ma.id != mb.id || ma.key != mb.key || ma.optional != mb.optional) {
    why = "member " + ma.name + " vs " + mb.name + " (id " + std::to_string(ma.id) + " vs " +
          std::to_string(mb.id) + ")";
    return false;
  }
  return same(a, ma.type, b, mb.type, seen, why);
}

bool same(const TypeLibrary& a, TypeId ia, const TypeLibrary& b, TypeId ib,
          std::set<std::pair<TypeId, TypeId>>& seen, std::string& why) {
  if (!seen.insert({ia, ib}).second) return true;
  const Type& x = a.at(ia);
  const Type& y = b.at(ib);
  if (x.kind != y.kind || x.name != y.name || x.extensibility != y.extensibility ||
      x.bound != y.bound || x.dims != y.dims || x.bit_bound != y.bit_bound ||
      x.members.size() != y.members.size() || x.cases.size() != y.cases.size() ||
      x.nested != y.nested) {
    why = "type '" + x.name + "' differs from '" + y.name + "'";
    return false;
  }
  for (size_t i = 0; i < x.literals.size(); ++i)
    if (x.literals[i].name != y.literals[i].name || x.literals[i].value != y.literals[i].value)
      return why = "literal of " + x.name, false;
  for (size_t i = 0; i < x.flags.size(); ++i)
    if (x.flags[i].name != y.flags[i].name || x.flags[i].position != y.flags[i].position)
      return why = "flag of " + x.name, false;
  if ((x.element == kNoType) != (y.element == kNoType) ||
      (x.base == kNoType) != (y.base == kNoType) ||
      (x.discriminator == kNoType) != (y.discriminator == kNoType))
    return why = "references of " + x.name, false;
  if (x.element != kNoType && !same(a, x.element, b, y.element, seen, why)) return false;
  if (x.base != kNoType && !same(a, x.base, b, y.base, seen, why)) return false;
  if (x.discriminator != kNoType && !same(a, x.discriminator, b, y.discriminator, seen, why))
    return false;
  for (size_t i = 0; i < x.members.size(); ++i)
    if (!same_member(a, x.members[i], b, y.members[i], seen, why)) return false;
  for (size_t i = 0; i < x.cases.size(); ++i) {
    if (x.cases[i].labels != y.cases[i].labels || x.cases[i].is_default != y.cases[i].is_default)
      return why = "case labels of " + x.name, false;
    if (!same_member(a, x.cases[i].member, b, y.cases[i].member, seen, why)) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("to_idl writes a struct with its dependencies first, inside their modules") {
  TypeLibrary lib;
  const TypeId f64 = lib.primitive(Kind::kFloat64);
  const TypeId point = add_struct(lib, "geo::Point", {member("x", f64, 0), member("y", f64, 1)});
  Type seq;
  seq.kind = Kind::kSequence;
  seq.element = point;
  seq.bound = 16;
  const TypeId seq_id = lib.add(seq);
  Type str;
  str.kind = Kind::kString;
  str.bound = 32;
  const TypeId str_id = lib.add(str);
  Type arr;
  arr.kind = Kind::kArray;
  arr.element = lib.primitive(Kind::kInt16);
  arr.dims = {2, 3};
  const TypeId arr_id = lib.add(arr);
  Member key = member("id", lib.primitive(Kind::kUInt32), 0);
  key.key = true;
  Member opt = member("label", str_id, 5);
  opt.optional = true;
  const TypeId path = add_struct(lib, "geo::nav::Path",
                                 {key, member("points", seq_id, 1), member("grid", arr_id, 2), opt},
                                 Extensibility::kAppendable);
  CHECK(to_idl(lib, path) ==
        "module geo {\n"
        "@final\n"
        "struct Point {\n"
        "  double x;\n"
        "  double y;\n"
        "};\n"
        "};\n"
        "module geo {\n"
        "module nav {\n"
        "@appendable\n"
        "struct Path {\n"
        "  @key unsigned long id;\n"
        "  sequence<geo::Point, 16> points;\n"
        "  short grid[2][3];\n"
        "  @optional @id(5) string<32> label;\n"
        "};\n"
        "};\n"
        "};\n");
}

TEST_CASE("to_idl writes enums, bitmasks, unions, typedefs and a forward declaration") {
  TypeLibrary lib;
  Type color;
  color.kind = Kind::kEnum;
  color.name = "Color";
  color.bit_bound = 8;
  color.literals = {{"RED", 0}, {"GREEN", 1}, {"BLUE", 7}};
  const TypeId color_id = lib.add(color);
  Type flags;
  flags.kind = Kind::kBitmask;
  flags.name = "m::Flags";
  flags.bit_bound = 16;
  flags.flags = {{"A", 0}, {"B", 1}, {"C", 9}};
  const TypeId flags_id = lib.add(flags);
  Type u;
  u.kind = Kind::kUnion;
  u.name = "m::Choice";
  u.discriminator = color_id;
  UnionCase c1;
  c1.labels = {0, 1};
  c1.member = member("a", lib.primitive(Kind::kInt32), 0);  // sequential from 0, as parsed
  UnionCase c2;
  c2.is_default = true;
  c2.member = member("f", flags_id, 1);
  u.cases = {c1, c2};
  const TypeId u_id = lib.add(u);
  // struct Node { sequence<Node> children; m::Choice c; };  (recursive through a sequence)
  Type node;
  node.kind = Kind::kStruct;
  node.name = "Node";
  const TypeId node_id = lib.add(node);
  Type kids;
  kids.kind = Kind::kSequence;
  kids.element = node_id;
  const TypeId kids_id = lib.add(kids);
  Type alias;
  alias.kind = Kind::kAlias;
  alias.name = "m::Count";
  alias.element = lib.primitive(Kind::kUInt64);
  const TypeId alias_id = lib.add(alias);
  lib.at(node_id).members = {member("children", kids_id, 0), member("c", u_id, 1),
                             member("n", alias_id, 2)};
  CHECK(to_idl(lib, node_id) ==
        "struct Node;\n"
        "@bit_bound(8)\n"
        "enum Color {\n"
        "  RED,\n"
        "  GREEN,\n"
        "  @value(7) BLUE\n"
        "};\n"
        "module m {\n"
        "@bit_bound(16)\n"
        "bitmask Flags {\n"
        "  A,\n"
        "  B,\n"
        "  @position(9) C\n"
        "};\n"
        "};\n"
        "module m {\n"
        "@final\n"
        "union Choice switch (Color) {\n"
        "  case ::RED:\n"
        "  case ::GREEN:\n"
        "    long a;\n"
        "  default:\n"
        "    m::Flags f;\n"
        "};\n"
        "};\n"
        "module m {\n"
        "typedef unsigned long long Count;\n"
        "};\n"
        "@final\n"
        "struct Node {\n"
        "  sequence<Node> children;\n"
        "  m::Choice c;\n"
        "  m::Count n;\n"
        "};\n");
}

TEST_CASE("to_idl output parses back to the same types (all_constructs.idl)") {
  auto lib = parse_idl_file(std::string(PUBSUB_TYPES_TEST_DIR) + "/all_constructs.idl");
  REQUIRE(lib.ok());
  const auto named = lib.value().named();
  REQUIRE(named.size() >= 8);
  for (TypeId id : named) {
    const std::string& name = lib.value().at(id).name;
    const std::string text = to_idl(lib.value(), id);
    INFO(name << ":\n" << text);
    auto again = parse_idl(text, name + ".idl");
    REQUIRE(again.ok());
    const auto id2 = again.value().find(name);
    REQUIRE(id2.has_value());
    std::set<std::pair<TypeId, TypeId>> seen;
    std::string why;
    CHECK(same(lib.value(), id, again.value(), *id2, seen, why));
    CHECK(why == "");
  }
}

TEST_CASE("to_idl keeps the leading :: only where a shorter name could be taken for another") {
  TypeLibrary lib;
  const TypeId f32 = lib.primitive(Kind::kFloat32);
  const TypeId global = add_struct(lib, "Point", {member("v", f32, 0)});
  const TypeId nested = add_struct(lib, "geo::Point", {member("x", f32, 0)});
  const TypeId line =
      add_struct(lib, "geo::Line", {member("a", global, 0), member("b", nested, 1)});
  const std::string idl = to_idl(lib, line);
  CHECK(idl.find("  ::Point a;\n") != std::string::npos);
  CHECK(idl.find("  geo::Point b;\n") != std::string::npos);
  // And Cyclone's parser reads it back to the same members.
  auto again = parse_idl(idl, "line.idl");
  REQUIRE(again.ok());
  const auto id = again.value().find("geo::Line");
  REQUIRE(id.has_value());
  const Type& t = again.value().at(*id);
  REQUIRE(t.members.size() == 2);
  CHECK(again.value().at(t.members[0].type).name == "Point");
  CHECK(again.value().at(t.members[1].type).name == "geo::Point");
}

TEST_CASE("to_idl for Foxglove: flattened bases, bitmask typedefs, Enum::LITERAL, uint8 switches") {
  const char* idl = R"(module m {
  enum Color { RED, GREEN };
  @bit_bound(12) bitmask Perm { READ, WRITE };
  @appendable struct Base { long a; };
  @appendable struct Mid : Base { long b; };
  @appendable struct Top : Mid { Perm p; };
  union ByColor switch (Color) { case GREEN: long g; case RED: short r; };
  union ByChar switch (char) { case 'a': long x; default: octet y; };
  struct All { Top t; ByColor c; ByChar h; };
};
)";
  auto lib = parse_idl(idl, "fox.idl");
  REQUIRE(lib.ok());
  auto all = lib->find("m::All");
  REQUIRE(all);
  CHECK(to_idl(*lib, *all, IdlDialect::kFoxglove) ==
        "module m {\n@appendable\nstruct Base {\n  long a;\n};\n};\n"
        "module m {\n@appendable\nstruct Mid {\n  long a;\n  long b;\n};\n};\n"
        "module m {\ntypedef uint16 Perm;\n};\n"
        "module m {\n@appendable\nstruct Top {\n  long a;\n  long b;\n  m::Perm p;\n};\n};\n"
        "module m {\nenum Color {\n  RED,\n  GREEN\n};\n};\n"
        "module m {\n@final\nunion ByColor switch (m::Color) {\n  case m::Color::GREEN:\n"
        "    long g;\n  case m::Color::RED:\n    short r;\n};\n};\n"
        "module m {\n@final\nunion ByChar switch (uint8) {\n  case 97:\n    long x;\n"
        "  default:\n    octet y;\n};\n};\n"
        "module m {\n@final\nstruct All {\n  m::Top t;\n  m::ByColor c;\n  m::ByChar h;\n};\n};\n");
  // The standard dialect keeps what IDL 4 has.
  const std::string standard = to_idl(*lib, *all);
  CHECK(standard.find("struct Top : m::Mid {") != std::string::npos);
  CHECK(standard.find("bitmask Perm {") != std::string::npos);
  CHECK(standard.find("case ::m::GREEN:") != std::string::npos);
  CHECK(standard.find("switch (char)") != std::string::npos);
}
