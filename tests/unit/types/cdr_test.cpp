// types::decode_cdr: types built in code, the serialized bytes written out by hand from the
// DDS-XTypes 1.3 rules (7.4.3; each byte annotated), the exact JSON text compared. Offsets in
// the comments count from the byte after the encapsulation header, where alignment starts.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "types/cdr.hpp"

using namespace types;
using common::Errc;

namespace {

using Bytes = std::vector<uint8_t>;

TypeId add_struct(TypeLibrary& lib, std::string name, std::vector<Member> members,
                  Extensibility e = Extensibility::kFinal, TypeId base = kNoType) {
  Type t;
  t.kind = Kind::kStruct;
  t.name = std::move(name);
  t.extensibility = e;
  t.members = std::move(members);
  t.base = base;
  return lib.add(std::move(t));
}

Member mem(std::string name, TypeId type, uint32_t id = 0, bool optional = false) {
  Member m;
  m.name = std::move(name);
  m.type = type;
  m.id = id;
  m.optional = optional;
  return m;
}

TypeId add_seq(TypeLibrary& lib, TypeId element, uint32_t bound = 0) {
  Type t;
  t.kind = Kind::kSequence;
  t.element = element;
  t.bound = bound;
  return lib.add(std::move(t));
}

TypeId add_array(TypeLibrary& lib, TypeId element, std::vector<uint32_t> dims) {
  Type t;
  t.kind = Kind::kArray;
  t.element = element;
  t.dims = std::move(dims);
  return lib.add(std::move(t));
}

TypeId add_string(TypeLibrary& lib, uint32_t bound) {
  Type t;
  t.kind = Kind::kString;
  t.bound = bound;
  return lib.add(std::move(t));
}

TypeId add_enum(TypeLibrary& lib, std::string name, uint16_t bit_bound) {
  Type t;
  t.kind = Kind::kEnum;
  t.name = std::move(name);
  t.bit_bound = bit_bound;
  t.literals = {{"A", 0}, {"B", 1}, {"C", 2}};
  return lib.add(std::move(t));
}

TypeId add_bitmask(TypeLibrary& lib, std::string name, uint16_t bit_bound) {
  Type t;
  t.kind = Kind::kBitmask;
  t.name = std::move(name);
  t.bit_bound = bit_bound;
  t.flags = {{"F0", 0}, {"F2", 2}};
  return lib.add(std::move(t));
}

TypeId add_alias(TypeLibrary& lib, std::string name, TypeId element) {
  Type t;
  t.kind = Kind::kAlias;
  t.name = std::move(name);
  t.element = element;
  return lib.add(std::move(t));
}

UnionCase ucase(std::vector<int64_t> labels, Member m, bool is_default = false) {
  UnionCase c;
  c.labels = std::move(labels);
  c.member = std::move(m);
  c.is_default = is_default;
  return c;
}

TypeId add_union(TypeLibrary& lib, std::string name, TypeId disc, std::vector<UnionCase> cases,
                 Extensibility e = Extensibility::kFinal) {
  Type t;
  t.kind = Kind::kUnion;
  t.name = std::move(name);
  t.discriminator = disc;
  t.cases = std::move(cases);
  t.extensibility = e;
  return lib.add(std::move(t));
}

// Decodes and returns the JSON text; fails the test (with the error) when it does not decode.
std::string json(const TypeLibrary& lib, TypeId top, const Bytes& sample,
                 const DecodeLimits& limits = {}) {
  auto r = decode_cdr(lib, top, sample, limits);
  INFO((r.ok() ? std::string("ok") : r.error().to_string()));
  REQUIRE(r.ok());
  return r.value().dump();
}

// Decodes and returns the error; fails the test when it decodes.
common::Error error(const TypeLibrary& lib, TypeId top, const Bytes& sample,
                    const DecodeLimits& limits = {}) {
  auto r = decode_cdr(lib, top, sample, limits);
  INFO((r.ok() ? r.value().dump() : std::string("error")));
  REQUIRE_FALSE(r.ok());
  return r.error();
}

TypeId prim(const TypeLibrary& lib, Kind k) {
  return lib.primitive(k);
}

// struct P { boolean b; char c; octet o; int8 i8; uint8 u8; int16 i16; uint16 u16; int32 i32;
//            uint32 u32; int64 i64; uint64 u64; float f; double d; };
TypeId all_primitives(TypeLibrary& lib) {
  return add_struct(lib, "P",
                    {mem("b", prim(lib, Kind::kBool)), mem("c", prim(lib, Kind::kChar8)),
                     mem("o", prim(lib, Kind::kOctet)), mem("i8", prim(lib, Kind::kInt8)),
                     mem("u8", prim(lib, Kind::kUInt8)), mem("i16", prim(lib, Kind::kInt16)),
                     mem("u16", prim(lib, Kind::kUInt16)), mem("i32", prim(lib, Kind::kInt32)),
                     mem("u32", prim(lib, Kind::kUInt32)), mem("i64", prim(lib, Kind::kInt64)),
                     mem("u64", prim(lib, Kind::kUInt64)), mem("f", prim(lib, Kind::kFloat32)),
                     mem("d", prim(lib, Kind::kFloat64))});
}

const char* const kAllPrimitivesJson =
    R"({"b":true,"c":"A","o":255,"i8":-128,"u8":200,"i16":-2,"u16":65535,"i32":-100000,)"
    R"("u32":4000000000,"i64":-9223372036854775808,"u64":18446744073709551615,"f":1.5,)"
    R"("d":-0.25})";

// XCDR1 little endian: 8-byte values aligned to 8.
const Bytes kPrimitivesXcdr1Le = {
    0x00, 0x01, 0x00, 0x00,                          // CDR_LE, options
    0x01,                                            // 0  b = true
    0x41,                                            // 1  c = 'A'
    0xff,                                            // 2  o = 255
    0x80,                                            // 3  i8 = -128
    0xc8,                                            // 4  u8 = 200
    0x00,                                            // 5  padding to 2
    0xfe, 0xff,                                      // 6  i16 = -2
    0xff, 0xff,                                      // 8  u16 = 65535
    0x00, 0x00,                                      // 10 padding to 4
    0x60, 0x79, 0xfe, 0xff,                          // 12 i32 = -100000 (0xfffe7960)
    0x00, 0x28, 0x6b, 0xee,                          // 16 u32 = 4000000000 (0xee6b2800)
    0x00, 0x00, 0x00, 0x00,                          // 20 padding to 8 (XCDR1)
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80,  // 24 i64 = INT64_MIN
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,  // 32 u64 = UINT64_MAX
    0x00, 0x00, 0xc0, 0x3f,                          // 40 f = 1.5f (0x3fc00000)
    0x00, 0x00, 0x00, 0x00,                          // 44 padding to 8 (XCDR1)
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xd0, 0xbf,  // 48 d = -0.25 (0xbfd0000000000000)
};

}  // namespace

TEST_CASE("cdr: unread trailing bytes are counted, declared padding and zero alignment not",
          "[cdr]") {
  TypeLibrary lib;
  const TypeId u32 = add_struct(lib, "U", {mem("a", prim(lib, Kind::kUInt32))});
  const TypeId u8 = add_struct(lib, "B", {mem("b", prim(lib, Kind::kUInt8))});
  auto trailing = [&](TypeId t, const Bytes& sample) {
    size_t n = 12345;
    auto r = decode_cdr(lib, t, sample, {}, &n);
    REQUIRE(r.ok());
    return n;
  };
  CHECK(trailing(u32, {0x00, 0x01, 0x00, 0x00, 1, 0, 0, 0}) == 0);
  CHECK(trailing(u32, {0x00, 0x01, 0x00, 0x00, 1, 0, 0, 0, 2, 0, 0, 0}) == 4);
  CHECK(trailing(u32, {0x00, 0x01, 0x00, 0x00, 1, 0, 0, 0, 0, 0, 0, 0, 0}) == 5);
  // Padding the options declare (any bytes), and up to 3 zero bytes to a multiple of 4.
  CHECK(trailing(u32, {0x00, 0x01, 0x00, 0x02, 1, 0, 0, 0, 0xab, 0xcd}) == 0);
  CHECK(trailing(u8, {0x00, 0x01, 0x00, 0x00, 7, 0, 0, 0}) == 0);
  CHECK(trailing(u8, {0x00, 0x01, 0x00, 0x00, 7, 1, 0, 0}) == 3);
  CHECK(trailing(u8, {0x00, 0x01, 0x00, 0x00, 7, 0, 0}) == 2);  // not to a multiple of 4
}

TEST_CASE("cdr: every primitive, XCDR1 little endian (8-byte values aligned to 8)", "[cdr]") {
  TypeLibrary lib;
  const TypeId p = all_primitives(lib);
  CHECK(json(lib, p, kPrimitivesXcdr1Le) == kAllPrimitivesJson);
}

TEST_CASE("cdr: every primitive, XCDR1 big endian", "[cdr]") {
  TypeLibrary lib;
  const TypeId p = all_primitives(lib);
  const Bytes be = {
      0x00, 0x00, 0x00, 0x00,                          // CDR_BE
      0x01, 0x41, 0xff, 0x80, 0xc8,                    // 0  b c o i8 u8
      0x00,                                            // 5  padding
      0xff, 0xfe,                                      // 6  i16 = -2
      0xff, 0xff,                                      // 8  u16
      0x00, 0x00,                                      // 10 padding
      0xff, 0xfe, 0x79, 0x60,                          // 12 i32 = -100000
      0xee, 0x6b, 0x28, 0x00,                          // 16 u32 = 4000000000
      0x00, 0x00, 0x00, 0x00,                          // 20 padding to 8
      0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // 24 i64 = INT64_MIN
      0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,  // 32 u64
      0x3f, 0xc0, 0x00, 0x00,                          // 40 f = 1.5
      0x00, 0x00, 0x00, 0x00,                          // 44 padding to 8
      0xbf, 0xd0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // 48 d = -0.25
  };
  CHECK(json(lib, p, be) == kAllPrimitivesJson);
  // PL_CDR_BE announces XCDR1 big endian too: a final type is decoded by its own layout.
  Bytes pl = be;
  pl[1] = 0x02;
  CHECK(json(lib, p, pl) == kAllPrimitivesJson);
}

TEST_CASE("cdr: every primitive, XCDR2 little endian (8-byte values aligned to 4)", "[cdr]") {
  TypeLibrary lib;
  const TypeId p = all_primitives(lib);
  const Bytes le = {
      0x00, 0x07, 0x00, 0x00,                          // CDR2_LE
      0x01, 0x41, 0xff, 0x80, 0xc8,                    // 0  b c o i8 u8
      0x00,                                            // 5  padding to 2
      0xfe, 0xff,                                      // 6  i16 = -2
      0xff, 0xff,                                      // 8  u16
      0x00, 0x00,                                      // 10 padding to 4
      0x60, 0x79, 0xfe, 0xff,                          // 12 i32
      0x00, 0x28, 0x6b, 0xee,                          // 16 u32
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80,  // 20 i64: aligned to 4 only
      0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,  // 28 u64
      0x00, 0x00, 0xc0, 0x3f,                          // 36 f
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xd0, 0xbf,  // 40 d: no padding
  };
  CHECK(json(lib, p, le) == kAllPrimitivesJson);
}

TEST_CASE("cdr: every primitive, XCDR2 big endian", "[cdr]") {
  TypeLibrary lib;
  const TypeId p = all_primitives(lib);
  const Bytes be = {
      0x00, 0x06, 0x00, 0x00,                          // CDR2_BE
      0x01, 0x41, 0xff, 0x80, 0xc8,                    // 0  b c o i8 u8
      0x00,                                            // 5  padding
      0xff, 0xfe,                                      // 6  i16
      0xff, 0xff,                                      // 8  u16
      0x00, 0x00,                                      // 10 padding
      0xff, 0xfe, 0x79, 0x60,                          // 12 i32
      0xee, 0x6b, 0x28, 0x00,                          // 16 u32
      0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // 20 i64
      0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,  // 28 u64
      0x3f, 0xc0, 0x00, 0x00,                          // 36 f
      0xbf, 0xd0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // 40 d
  };
  CHECK(json(lib, p, be) == kAllPrimitivesJson);
  Bytes d = be;  // D_CDR2_BE: also XCDR2 big endian
  d[1] = 0x08;
  CHECK(json(lib, p, d) == kAllPrimitivesJson);
}

TEST_CASE("cdr: floats print their shortest form, NaN and infinity become null", "[cdr]") {
  TypeLibrary lib;
  const TypeId t =
      add_struct(lib, "F",
                 {mem("a", prim(lib, Kind::kFloat32)), mem("b", prim(lib, Kind::kFloat32)),
                  mem("c", prim(lib, Kind::kFloat64))});
  const Bytes le = {
      0x00, 0x01, 0x00, 0x00,                          // CDR_LE
      0xcd, 0xcc, 0xcc, 0x3d,                          // 0 a = 0.1f (0x3dcccccd)
      0x00, 0x00, 0xc0, 0x7f,                          // 4 b = NaN (0x7fc00000)
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xf0, 0x7f,  // 8 c = +infinity
  };
  CHECK(json(lib, t, le) == R"({"a":0.1,"b":null,"c":null})");
}

TEST_CASE("cdr: a bool byte other than 0 or 1 is an error", "[cdr]") {
  TypeLibrary lib;
  const TypeId t = add_struct(lib, "B", {mem("flag", prim(lib, Kind::kBool))});
  const auto e = error(lib, t, {0x00, 0x01, 0x00, 0x00, 0x02});
  CHECK(e.code == Errc::kCorrupt);
  CHECK(e.message ==
        "offset 0 (bytes after the encapsulation header): flag: boolean byte 2 is neither 0 nor 1");
}

TEST_CASE("cdr: strings, bounded and unbounded", "[cdr]") {
  TypeLibrary lib;
  const TypeId s3 = add_string(lib, 3);
  const TypeId t = add_struct(lib, "S", {mem("s", prim(lib, Kind::kString)), mem("b", s3)});
  SECTION("within the bound") {
    CHECK(json(lib, t,
               {
                   0x00, 0x01, 0x00, 0x00,  // CDR_LE
                   0x03, 0x00, 0x00, 0x00,  // 0  s: length 3 (with the NUL)
                   'h',  'i',  0x00,        // 4  "hi" NUL
                   0x00,                    // 7  padding to 4
                   0x04, 0x00, 0x00, 0x00,  // 8  b: length 4
                   'a',  'b',  'c',  0x00,  // 12 "abc" NUL: 3 characters, the bound
               }) == R"({"s":"hi","b":"abc"})");
  }
  SECTION("over the bound") {
    const auto e = error(lib, t,
                         {
                             0x00, 0x01, 0x00, 0x00,        // CDR_LE
                             0x01, 0x00, 0x00, 0x00, 0x00,  // 0 s: "" (length 1, NUL)
                             0x00, 0x00, 0x00,              // 5 padding
                             0x05, 0x00, 0x00, 0x00,        // 8 b: length 5
                             'a',  'b',  'c',  'd',  0x00,  // 12 4 characters > bound 3
                         });
    CHECK(e.code == Errc::kCorrupt);
    CHECK(e.message ==
          "offset 8 (bytes after the encapsulation header): b: string of 4 "
          "characters exceeds its bound 3");
  }
  SECTION("missing NUL") {
    const auto e = error(lib, t,
                         {
                             0x00, 0x01, 0x00, 0x00,  // CDR_LE
                             0x03, 0x00, 0x00, 0x00,  // 0 s: length 3
                             'h', 'i', '!',           // 4 no NUL at the end
                         });
    CHECK(e.code == Errc::kCorrupt);
    CHECK_THAT(e.message, Catch::Contains("s: string not terminated by a NUL"));
  }
  SECTION("length past the end") {
    const auto e = error(lib, t, {0x00, 0x01, 0x00, 0x00, 0x09, 0x00, 0x00, 0x00, 'h', 0x00});
    CHECK(e.code == Errc::kTruncated);
  }
  SECTION("invalid UTF-8 is replaced, valid multi-byte text kept") {
    CHECK(json(lib, t,
               {
                   0x00, 0x01, 0x00, 0x00,  // CDR_LE
                   0x05, 0x00, 0x00, 0x00,  // 0 s: length 5
                   0xc3, 0xa9,              // 4 U+00E9 (valid)
                   0xff,                    // 6 invalid byte
                   'x',  0x00,              // 7 'x' NUL
                   0x00, 0x00, 0x00,        // 9 padding
                   0x01, 0x00, 0x00, 0x00,  // 12 b: length 1
                   0x00,                    // 16 ""
               }) == "{\"s\":\"\xc3\xa9\xef\xbf\xbdx\",\"b\":\"\"}");
  }
}

TEST_CASE("cdr: enums by bit_bound in XCDR2, always 4 bytes in XCDR1", "[cdr]") {
  TypeLibrary lib;
  const TypeId e8 = add_enum(lib, "E8", 8);
  const TypeId e16 = add_enum(lib, "E16", 16);
  const TypeId e32 = add_enum(lib, "E32", 32);
  const TypeId t = add_struct(lib, "E", {mem("a", e8), mem("b", e16), mem("c", e32)});
  CHECK(json(lib, t,
             {
                 0x00, 0x07, 0x00, 0x00,  // CDR2_LE
                 0x02,                    // 0 a: 1 byte, C
                 0x00,                    // 1 padding to 2
                 0x01, 0x00,              // 2 b: 2 bytes, B
                 0x07, 0x00, 0x00, 0x00,  // 4 c: 4 bytes, 7 (no literal -> number)
             }) == R"({"a":"C","b":"B","c":7})");
  CHECK(json(lib, t,
             {
                 0x00, 0x00, 0x00, 0x00,  // CDR_BE
                 0x00, 0x00, 0x00, 0x02,  // 0 a: 4 bytes in XCDR1
                 0x00, 0x00, 0x00, 0x01,  // 4 b
                 0x00, 0x00, 0x00, 0x00,  // 8 c = A
             }) == R"({"a":"C","b":"B","c":"A"})");
}

TEST_CASE("cdr: bitmasks by bit_bound", "[cdr]") {
  TypeLibrary lib;
  const TypeId b8 = add_bitmask(lib, "B8", 8);
  const TypeId b16 = add_bitmask(lib, "B16", 16);
  const TypeId b64 = add_bitmask(lib, "B64", 64);
  const TypeId t = add_struct(lib, "M", {mem("a", b8), mem("b", b16), mem("c", b64)});
  CHECK(json(lib, t,
             {
                 0x00, 0x01, 0x00, 0x00,                          // CDR_LE
                 0x05,                                            // 0 a: uint8
                 0x00,                                            // 1 padding
                 0x04, 0x01,                                      // 2 b: uint16 0x0104
                 0x00, 0x00, 0x00, 0x00,                          // 4 padding to 8 (XCDR1)
                 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80,  // 8 c: uint64
             }) == R"({"a":5,"b":260,"c":9223372036854775809})");
  CHECK(json(lib, t,
             {
                 0x00, 0x07, 0x00, 0x00,                          // CDR2_LE
                 0x05, 0x00, 0x04, 0x01,                          // 0 a, padding, b
                 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80,  // 4 c: aligned to 4
             }) == R"({"a":5,"b":260,"c":9223372036854775809})");
}

TEST_CASE("cdr: aliases are followed", "[cdr]") {
  TypeLibrary lib;
  const TypeId a1 = add_alias(lib, "pkg::MyInt", prim(lib, Kind::kInt32));
  const TypeId a2 = add_alias(lib, "pkg::MyInt2", a1);
  const TypeId seq = add_alias(lib, "pkg::Ints", add_seq(lib, a2));
  const TypeId t = add_struct(lib, "pkg::A", {mem("x", a2), mem("v", seq)});
  CHECK(json(lib, t,
             {
                 0x00, 0x07, 0x00, 0x00,  // CDR2_LE
                 0xff, 0xff, 0xff, 0xff,  // 0 x = -1
                 0x01, 0x00, 0x00, 0x00,  // 4 v: length 1 (int32 elements: no DHEADER)
                 0x02, 0x00, 0x00, 0x00,  // 8 v[0] = 2
             }) == R"({"x":-1,"v":[2]})");
}

TEST_CASE("cdr: sequences of primitives", "[cdr]") {
  TypeLibrary lib;
  const TypeId s = add_seq(lib, prim(lib, Kind::kInt16));
  const TypeId s2 = add_seq(lib, prim(lib, Kind::kInt16), 2);
  const TypeId t = add_struct(lib, "Q", {mem("q", s)});
  const TypeId t2 = add_struct(lib, "Q2", {mem("q", s2)});
  const Bytes three = {
      0x00, 0x07, 0x00, 0x00,  // CDR2_LE
      0x03, 0x00, 0x00, 0x00,  // 0 length 3
      0x01, 0x00,              // 4 1
      0x02, 0x00,              // 6 2
      0x03, 0x00,              // 8 3
  };
  CHECK(json(lib, t, three) == R"({"q":[1,2,3]})");
  const auto e = error(lib, t2, three);
  CHECK(e.code == Errc::kCorrupt);
  CHECK(e.message ==
        "offset 0 (bytes after the encapsulation header): q: sequence length 3 "
        "exceeds its bound 2");
  CHECK(json(lib, t, {0x00, 0x07, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}) == R"({"q":[]})");
}

TEST_CASE("cdr: sequences of structs: a DHEADER in XCDR2, none in XCDR1", "[cdr]") {
  TypeLibrary lib;
  const TypeId pt =
      add_struct(lib, "Pt", {mem("x", prim(lib, Kind::kInt16)), mem("y", prim(lib, Kind::kInt16))});
  const TypeId t = add_struct(lib, "Path", {mem("points", add_seq(lib, pt))});
  const char* const expected = R"({"points":[{"x":1,"y":2},{"x":3,"y":4}]})";
  CHECK(json(lib, t,
             {
                 0x00, 0x07, 0x00, 0x00,  // CDR2_LE
                 0x0c, 0x00, 0x00, 0x00,  // 0  DHEADER: 12 bytes follow
                 0x02, 0x00, 0x00, 0x00,  // 4  length 2
                 0x01, 0x00, 0x02, 0x00,  // 8  points[0]
                 0x03, 0x00, 0x04, 0x00,  // 12 points[1]
             }) == expected);
  CHECK(json(lib, t,
             {
                 0x00, 0x01, 0x00, 0x00,  // CDR_LE
                 0x02, 0x00, 0x00, 0x00,  // 0 length 2
                 0x01, 0x00, 0x02, 0x00,  // 4 points[0]
                 0x03, 0x00, 0x04, 0x00,  // 8 points[1]
             }) == expected);
  // 2 elements of 4 bytes cannot be in 6: found before anything is decoded.
  auto e = error(lib, t,
                 {
                     0x00, 0x01, 0x00, 0x00,  // CDR_LE
                     0x02, 0x00, 0x00, 0x00,  // 0 length 2
                     0x01, 0x00, 0x02, 0x00,  // 4 points[0]
                     0x03, 0x00,              // 8 points[1].x, then the end
                 });
  CHECK(e.code == Errc::kTruncated);
  CHECK(e.message ==
        "offset 4 (bytes after the encapsulation header): points: 2 elements of at "
        "least 4 bytes, 6 bytes left");
  // The error path names the element and the member.
  const TypeId named = add_struct(
      lib, "Named", {mem("id", prim(lib, Kind::kUInt8)), mem("name", prim(lib, Kind::kString))});
  const TypeId list = add_struct(lib, "List", {mem("items", add_seq(lib, named))});
  e = error(lib, list,
            {
                0x00, 0x01, 0x00, 0x00,  // CDR_LE
                0x02, 0x00, 0x00, 0x00,  // 0  length 2
                0x01, 0x00, 0x00, 0x00,  // 4  items[0].id = 1, padding
                0x01, 0x00, 0x00, 0x00,  // 8  items[0].name: length 1
                0x00,                    // 12 "" (the NUL)
                0x02,                    // 13 items[1].id = 2
                0x00, 0x00,              // 14 padding
                0x02, 0x00, 0x00, 0x00,  // 16 items[1].name: length 2
                'a',  'b',               // 20 no NUL
            });
  CHECK(e.code == Errc::kCorrupt);
  CHECK(e.message ==
        "offset 21 (bytes after the encapsulation header): items[1].name: string "
        "not terminated by a NUL");
}

TEST_CASE("cdr: sequences of enums and strings carry a DHEADER in XCDR2", "[cdr]") {
  TypeLibrary lib;
  const TypeId e8 = add_enum(lib, "E8", 8);
  const TypeId t = add_struct(
      lib, "T", {mem("e", add_seq(lib, e8)), mem("s", add_seq(lib, prim(lib, Kind::kString)))});
  CHECK(json(lib, t,
             {
                 0x00, 0x07, 0x00, 0x00,  // CDR2_LE
                 0x06, 0x00, 0x00, 0x00,  // 0  e: DHEADER 6 (enums are not primitive types)
                 0x02, 0x00, 0x00, 0x00,  // 4  length 2
                 0x00, 0x02,              // 8  A, C (1 byte each: bit_bound 8)
                 0x00, 0x00,              // 10 padding
                 0x0a, 0x00, 0x00, 0x00,  // 12 s: DHEADER 10
                 0x01, 0x00, 0x00, 0x00,  // 16 length 1
                 0x02, 0x00, 0x00, 0x00,  // 20 s[0]: length 2
                 'z',  0x00,              // 24 "z"
             }) == R"({"e":["A","C"],"s":["z"]})");
}

TEST_CASE("cdr: multi-dimensional arrays nest outermost first", "[cdr]") {
  TypeLibrary lib;
  const TypeId pt =
      add_struct(lib, "Pt", {mem("x", prim(lib, Kind::kInt16)), mem("y", prim(lib, Kind::kInt16))});
  const TypeId t = add_struct(lib, "Grid",
                              {mem("m", add_array(lib, prim(lib, Kind::kInt16), {2, 3})),
                               mem("p", add_array(lib, pt, {2}))});
  CHECK(json(lib, t,
             {
                 0x00, 0x07, 0x00, 0x00,  // CDR2_LE
                 0x01, 0x00, 0x02, 0x00,  // 0  m[0][0] m[0][1]
                 0x03, 0x00, 0x04, 0x00,  // 4  m[0][2] m[1][0]
                 0x05, 0x00, 0x06, 0x00,  // 8  m[1][1] m[1][2]
                 0x08, 0x00, 0x00, 0x00,  // 12 p: DHEADER 8 (struct elements)
                 0x07, 0x00, 0x08, 0x00,  // 16 p[0]
                 0x09, 0x00, 0x0a, 0x00,  // 20 p[1]
             }) == R"({"m":[[1,2,3],[4,5,6]],"p":[{"x":7,"y":8},{"x":9,"y":10}]})");
  CHECK(json(lib, t,
             {
                 0x00, 0x01, 0x00, 0x00,                          // CDR_LE: no DHEADER
                 0x01, 0x00, 0x02, 0x00, 0x03, 0x00, 0x04, 0x00,  // 0 m
                 0x05, 0x00, 0x06, 0x00,                          // 8
                 0x07, 0x00, 0x08, 0x00, 0x09, 0x00, 0x0a, 0x00,  // 12 p
             }) == R"({"m":[[1,2,3],[4,5,6]],"p":[{"x":7,"y":8},{"x":9,"y":10}]})");
}

TEST_CASE("cdr: names of modules do not matter to the decoding", "[cdr]") {
  TypeLibrary lib;
  const TypeId inner = add_struct(lib, "a::b::c::Inner", {mem("v", prim(lib, Kind::kUInt8))});
  const TypeId outer = add_struct(lib, "x::Outer", {mem("in", inner)});
  const TypeId flat = add_struct(
      lib, "Flat", {mem("in", add_struct(lib, "I", {mem("v", prim(lib, Kind::kUInt8))}))});
  const Bytes b = {0x00, 0x01, 0x00, 0x00, 0x09};
  CHECK(json(lib, outer, b) == R"({"in":{"v":9}})");
  CHECK(json(lib, flat, b) == R"({"in":{"v":9}})");
}

TEST_CASE("cdr: unions select by label, the default case, or nothing", "[cdr]") {
  TypeLibrary lib;
  // union U switch (long) { case 1: short s; case 2: case 3: string t; default: float f; };
  const TypeId u = add_union(lib, "U", prim(lib, Kind::kInt32),
                             {ucase({1}, mem("s", prim(lib, Kind::kInt16), 1)),
                              ucase({2, 3}, mem("t", prim(lib, Kind::kString), 2)),
                              ucase({}, mem("f", prim(lib, Kind::kFloat32), 3), true)});
  CHECK(json(lib, u, {0x00, 0x07, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x07, 0x00}) ==
        R"({"$discriminator":1,"s":7})");
  CHECK(json(lib, u,
             {
                 0x00, 0x07, 0x00, 0x00,  // CDR2_LE
                 0x03, 0x00, 0x00, 0x00,  // 0 discriminator 3
                 0x02, 0x00, 0x00, 0x00,  // 4 t: length 2
                 'x', 0x00,               // 8 "x"
             }) == R"({"$discriminator":3,"t":"x"})");
  CHECK(json(lib, u,
             {
                 0x00, 0x00, 0x00, 0x00,  // CDR_BE
                 0x00, 0x00, 0x00, 0x09,  // 0 discriminator 9: no label, default case
                 0x3f, 0xc0, 0x00, 0x00,  // 4 f = 1.5
             }) == R"({"$discriminator":9,"f":1.5})");
  // union V switch (octet) { case 1: long a; }; -- no default
  const TypeId v = add_union(lib, "V", prim(lib, Kind::kOctet),
                             {ucase({1}, mem("a", prim(lib, Kind::kInt32), 1))});
  CHECK(json(lib, v, {0x00, 0x01, 0x00, 0x00, 0x05}) == R"({"$discriminator":5})");
  CHECK(json(lib, v,
             {
                 0x00, 0x01, 0x00, 0x00,  // CDR_LE
                 0x01,                    // 0 discriminator 1
                 0x00, 0x00, 0x00,        // 1 padding to 4
                 0x2a, 0x00, 0x00, 0x00,  // 4 a = 42
             }) == R"({"$discriminator":1,"a":42})");
}

TEST_CASE("cdr: union with an enum discriminator (enum size rules apply)", "[cdr]") {
  TypeLibrary lib;
  const TypeId e8 = add_enum(lib, "E8", 8);
  const TypeId u = add_union(lib, "W", e8,
                             {ucase({0}, mem("a", prim(lib, Kind::kUInt8), 1)),
                              ucase({2}, mem("c", prim(lib, Kind::kUInt16), 2))});
  CHECK(json(lib, u, {0x00, 0x07, 0x00, 0x00, 0x02, 0x00, 0x05, 0x00}) ==
        R"({"$discriminator":"C","c":5})");  // XCDR2: 1-byte discriminator, padding, c
  CHECK(json(lib, u, {0x00, 0x01, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x05, 0x00}) ==
        R"({"$discriminator":"C","c":5})");  // XCDR1: 4-byte discriminator, c
}

TEST_CASE("cdr: appendable and mutable unions in XCDR2", "[cdr]") {
  TypeLibrary lib;
  const TypeId app =
      add_union(lib, "AU", prim(lib, Kind::kInt16),
                {ucase({1}, mem("a", prim(lib, Kind::kInt32), 1))}, Extensibility::kAppendable);
  CHECK(json(lib, app,
             {
                 0x00, 0x09, 0x00, 0x00,  // D_CDR2_LE
                 0x08, 0x00, 0x00, 0x00,  // 0 DHEADER 8
                 0x01, 0x00,              // 4 discriminator 1
                 0x00, 0x00,              // 6 padding
                 0x2a, 0x00, 0x00, 0x00,  // 8 a = 42
             }) == R"({"$discriminator":1,"a":42})");
  const TypeId mut = add_union(lib, "MU", prim(lib, Kind::kInt16),
                               {ucase({1}, mem("a", prim(lib, Kind::kInt32), 1)),
                                ucase({2}, mem("b", prim(lib, Kind::kString), 2))},
                               Extensibility::kMutable);
  CHECK(json(lib, mut,
             {
                 0x00, 0x0b, 0x00, 0x00,  // PL_CDR2_LE
                 0x16, 0x00, 0x00, 0x00,  // 0  DHEADER 22
                 0x00, 0x00, 0x00, 0x10,  // 4  EMHEADER: LC 1 (2 bytes), id 0: discriminator
                 0x02, 0x00,              // 8  discriminator 2
                 0x00, 0x00,              // 10 padding
                 0x02, 0x00, 0x00, 0x40,  // 12 EMHEADER: LC 4, id 2
                 0x06, 0x00, 0x00, 0x00,  // 16 NEXTINT: 6 bytes
                 0x02, 0x00, 0x00, 0x00,  // 20 b: length 2
                 'z',  0x00,              // 24 "z"
             }) == R"({"$discriminator":2,"b":"z"})");
}

TEST_CASE("cdr: optional members in XCDR1 (parameter header) and XCDR2 (flag byte)", "[cdr]") {
  TypeLibrary lib;
  // struct O { long a; @optional long b; @optional double c; };
  const TypeId t =
      add_struct(lib, "O",
                 {mem("a", prim(lib, Kind::kInt32), 0), mem("b", prim(lib, Kind::kInt32), 1, true),
                  mem("c", prim(lib, Kind::kFloat64), 2, true)});
  CHECK(json(lib, t,
             {
                 0x00, 0x01, 0x00, 0x00,  // CDR_LE
                 0x01, 0x00, 0x00, 0x00,  // 0  a = 1
                 0x01, 0x00, 0x04, 0x00,  // 4  b: pid 1, length 4
                 0x05, 0x00, 0x00, 0x00,  // 8  b = 5
                 0x02, 0x00, 0x00, 0x00,  // 12 c: pid 2, length 0: absent
             }) == R"({"a":1,"b":5,"c":null})");
  // b absent; c present behind PID_EXTENDED (as Cyclone writes optionals). The value starts at
  // offset 20 (4 mod 8): alignment restarts at the value, so the double has no padding.
  CHECK(json(lib, t,
             {
                 0x00, 0x01, 0x00, 0x00,                          // CDR_LE
                 0x01, 0x00, 0x00, 0x00,                          // 0  a = 1
                 0x01, 0x00, 0x00, 0x00,                          // 4  b: pid 1, length 0
                 0x01, 0x7f, 0x08, 0x00,                          // 8  PID_EXTENDED|MU, 8
                 0x02, 0x00, 0x00, 0x00,                          // 12 member id 2
                 0x08, 0x00, 0x00, 0x00,                          // 16 length 8
                 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x40,  // 20 c = 2.0
             }) == R"({"a":1,"b":null,"c":2.0})");
  CHECK(json(lib, t,
             {
                 0x00, 0x07, 0x00, 0x00,  // CDR2_LE
                 0x01, 0x00, 0x00, 0x00,  // 0  a = 1
                 0x01,                    // 4  b present
                 0x00, 0x00, 0x00,        // 5  padding
                 0x05, 0x00, 0x00, 0x00,  // 8  b = 5
                 0x00,                    // 12 c absent
             }) == R"({"a":1,"b":5,"c":null})");
  CHECK(json(lib, t,
             {
                 0x00, 0x07, 0x00, 0x00,                          // CDR2_LE
                 0x01, 0x00, 0x00, 0x00,                          // 0  a = 1
                 0x00,                                            // 4  b absent
                 0x01,                                            // 5  c present
                 0x00, 0x00,                                      // 6  padding to 4
                 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x40,  // 8  c = 2.0
             }) == R"({"a":1,"b":null,"c":2.0})");
}

TEST_CASE("cdr: appendable struct with DHEADER, from older and newer writers", "[cdr]") {
  TypeLibrary lib;
  const TypeId e8 = add_enum(lib, "E8", 8);
  const TypeId pt =
      add_struct(lib, "Pt", {mem("x", prim(lib, Kind::kInt16)), mem("y", prim(lib, Kind::kInt16))});
  const TypeId ap = add_struct(
      lib, "Ap",
      {mem("x", prim(lib, Kind::kInt32)), mem("y", prim(lib, Kind::kInt16)),
       mem("s", prim(lib, Kind::kString)), mem("e", e8),
       mem("q", add_seq(lib, prim(lib, Kind::kInt16))), mem("o", prim(lib, Kind::kInt32), 5, true),
       mem("p", pt), mem("c", prim(lib, Kind::kChar8))},
      Extensibility::kAppendable);
  SECTION("every member") {
    CHECK(json(lib, ap,
               {
                   0x00, 0x09, 0x00, 0x00,  // D_CDR2_LE
                   0x1b, 0x00, 0x00, 0x00,  // 0  DHEADER 27
                   0x01, 0x00, 0x00, 0x00,  // 4  x = 1
                   0x02, 0x00,              // 8  y = 2
                   0x00, 0x00,              // 10 padding
                   0x02, 0x00, 0x00, 0x00,  // 12 s: length 2
                   'k',  0x00,              // 16 "k"
                   0x01,                    // 18 e = B
                   0x00,                    // 19 padding
                   0x00, 0x00, 0x00, 0x00,  // 20 q: length 0
                   0x00,                    // 24 o absent
                   0x00,                    // 25 padding to 2
                   0x03, 0x00, 0x04, 0x00,  // 26 p
                   'w',                     // 30 c
               }) == R"({"x":1,"y":2,"s":"k","e":"B","q":[],"o":null,"p":{"x":3,"y":4},"c":"w"})");
  }
  SECTION("an older writer sent only x: the rest take their defaults") {
    CHECK(json(lib, ap,
               {
                   0x00, 0x07, 0x00, 0x00,  // CDR2_LE
                   0x04, 0x00, 0x00, 0x00,  // 0 DHEADER 4
                   0x01, 0x00, 0x00, 0x00,  // 4 x = 1
               }) ==
          "{\"x\":1,\"y\":0,\"s\":\"\",\"e\":\"A\",\"q\":[],\"o\":null,\"p\":{\"x\":0,\"y\":0},"
          "\"c\":\"\\u0000\"}");
  }
  SECTION("a newer writer sent more: the extra bytes are skipped") {
    const TypeId small = add_struct(
        lib, "Small", {mem("x", prim(lib, Kind::kInt32)), mem("y", prim(lib, Kind::kInt16))},
        Extensibility::kAppendable);
    const TypeId outer =
        add_struct(lib, "Outer", {mem("a", small), mem("after", prim(lib, Kind::kInt8))});
    CHECK(json(lib, outer,
               {
                   0x00, 0x07, 0x00, 0x00,  // CDR2_LE
                   0x0c, 0x00, 0x00, 0x00,  // 0  a: DHEADER 12
                   0x01, 0x00, 0x00, 0x00,  // 4  a.x = 1
                   0x02, 0x00,              // 8  a.y = 2
                   0x00, 0x00,              // 10 (writer's padding)
                   0x2a, 0x00, 0x00, 0x00,  // 12 a member this reader does not know
                   0x09,                    // 16 after = 9
               }) == R"({"a":{"x":1,"y":2},"after":9})");
  }
  SECTION("a DHEADER longer than the data") {
    const auto e = error(lib, ap, {0x00, 0x07, 0x00, 0x00, 0x20, 0x00, 0x00, 0x00, 0x01});
    CHECK(e.code == Errc::kTruncated);
    CHECK(e.message ==
          "offset 0 (bytes after the encapsulation header): (top level): DHEADER "
          "of 32 bytes, 1 left");
  }
}

TEST_CASE("cdr: XCDR1 appendable struct is plain", "[cdr]") {
  TypeLibrary lib;
  const TypeId ap =
      add_struct(lib, "Ap", {mem("x", prim(lib, Kind::kInt32))}, Extensibility::kAppendable);
  CHECK(json(lib, ap, {0x00, 0x01, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00}) == R"({"x":7})");
}

TEST_CASE("cdr: mutable struct in PL_CDR (XCDR1), with PID_EXTENDED and an unknown pid", "[cdr]") {
  TypeLibrary lib;
  // @mutable struct M { @id(1) short a; @id(2) string s; @id(20000) long big;
  //                     @id(3) double d; @id(4) @optional long o; @id(5) long missing; };
  const TypeId m = add_struct(
      lib, "M",
      {mem("a", prim(lib, Kind::kInt16), 1), mem("s", prim(lib, Kind::kString), 2),
       mem("big", prim(lib, Kind::kInt32), 20000), mem("d", prim(lib, Kind::kFloat64), 3),
       mem("o", prim(lib, Kind::kInt32), 4, true), mem("missing", prim(lib, Kind::kInt32), 5)},
      Extensibility::kMutable);
  CHECK(json(lib, m,
             {
                 0x00, 0x03, 0x00, 0x00,                          // PL_CDR_LE
                 0x02, 0x40, 0x08, 0x00,                          // 0  pid 2 | must-understand, 8
                 0x03, 0x00, 0x00, 0x00, 'h',  'i',  0x00, 0x00,  // 4  s = "hi" (+ padding)
                 0x01, 0x00, 0x02, 0x00,                          // 12 pid 1, length 2
                 0x05, 0x00,                                      // 16 a = 5
                 0x00, 0x00,                                      // 18 padding to 4
                 0x01, 0x3f, 0x08, 0x00,                          // 20 PID_EXTENDED, 8
                 0x20, 0x4e, 0x00, 0x00,                          // 24 member id 20000
                 0x04, 0x00, 0x00, 0x00,                          // 28 length 4
                 0x2a, 0x00, 0x00, 0x00,                          // 32 big = 42
                 0x07, 0x00, 0x04, 0x00,                          // 36 pid 7 (unknown), 4
                 0xff, 0xff, 0xff, 0xff,                          // 40 skipped
                 0x03, 0x00, 0x08, 0x00,                          // 44 pid 3, length 8
                 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xf8, 0x3f,  // 48 d = 1.5
                 0x04, 0x00, 0x04, 0x00,                          // 56 pid 4, length 4
                 0x06, 0x00, 0x00, 0x00,                          // 60 o = 6
                 0x02, 0x3f, 0x00, 0x00,                          // 64 PID_LIST_END
             }) == R"({"a":5,"s":"hi","big":42,"d":1.5,"o":6,"missing":null})");
  // Without PID_LIST_END the sample is truncated.
  const auto e = error(lib, m, {0x00, 0x03, 0x00, 0x00, 0x01, 0x00, 0x02, 0x00, 0x05, 0x00});
  CHECK(e.code == Errc::kTruncated);
}

TEST_CASE("cdr: mutable struct in PL_CDR2 with length codes 0 to 7", "[cdr]") {
  TypeLibrary lib;
  const TypeId pt =
      add_struct(lib, "Pt", {mem("x", prim(lib, Kind::kInt16)), mem("y", prim(lib, Kind::kInt16))});
  const TypeId small = add_struct(
      lib, "Small", {mem("x", prim(lib, Kind::kInt32)), mem("y", prim(lib, Kind::kInt16))},
      Extensibility::kAppendable);
  const TypeId m = add_struct(
      lib, "M2",
      {mem("a", prim(lib, Kind::kInt8), 1), mem("b", prim(lib, Kind::kInt16), 2),
       mem("c", prim(lib, Kind::kInt32), 3), mem("d", prim(lib, Kind::kInt64), 4),
       mem("s", prim(lib, Kind::kString), 5), mem("q", add_seq(lib, prim(lib, Kind::kInt32)), 6),
       mem("p", pt, 7), mem("n", small, 8), mem("m", prim(lib, Kind::kInt32), 9),
       mem("r", add_seq(lib, prim(lib, Kind::kFloat64)), 10),
       mem("o", prim(lib, Kind::kInt32), 11, true)},
      Extensibility::kMutable);
  CHECK(json(lib, m,
             {
                 0x00, 0x0b, 0x00, 0x00,                          // PL_CDR2_LE
                 0x74, 0x00, 0x00, 0x00,                          // 0   DHEADER 116
                 0x01, 0x00, 0x00, 0x00,                          // 4   EMHEADER LC 0, id 1
                 0xff, 0x00, 0x00, 0x00,                          // 8   a = -1, padding
                 0x02, 0x00, 0x00, 0x10,                          // 12  LC 1, id 2
                 0x10, 0x00, 0x00, 0x00,                          // 16  b = 16, padding
                 0x03, 0x00, 0x00, 0xa0,                          // 20  must-understand, LC 2, id 3
                 0x64, 0x00, 0x00, 0x00,                          // 24  c = 100
                 0x04, 0x00, 0x00, 0x30,                          // 28  LC 3, id 4
                 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,  // 32  d = -1
                 0x05, 0x00, 0x00, 0x40,                          // 40  LC 4, id 5
                 0x07, 0x00, 0x00, 0x00,                          // 44  NEXTINT 7
                 0x03, 0x00, 0x00, 0x00, 'o',  'k',  0x00,        // 48  s = "ok"
                 0x00,                                            // 55  padding
                 0x63, 0x00, 0x00, 0x20,                          // 56  LC 2, id 99: unknown
                 0x00, 0x00, 0x00, 0x00,                          // 60  skipped
                 0x06, 0x00, 0x00, 0x60,                          // 64  LC 6, id 6
                 0x02, 0x00, 0x00, 0x00,                          // 68  q: length 2 = NEXTINT
                 0x0a, 0x00, 0x00, 0x00, 0x0b, 0x00, 0x00, 0x00,  // 72  10, 11 (4 + 4*2 bytes)
                 0x08, 0x00, 0x00, 0x50,                          // 80  LC 5, id 8
                 0x06, 0x00, 0x00, 0x00,                          // 84  n: DHEADER 6 = NEXTINT
                 0x01, 0x00, 0x00, 0x00, 0x02, 0x00,              // 88  n.x = 1, n.y = 2
                 0x00, 0x00,                                      // 94  padding
                 0x07, 0x00, 0x00, 0x20,                          // 96  LC 2, id 7
                 0x03, 0x00, 0x04, 0x00,                          // 100 p
                 0x0a, 0x00, 0x00, 0x70,                          // 104 LC 7, id 10
                 0x01, 0x00, 0x00, 0x00,                          // 108 r: length 1 = NEXTINT
                 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xf0, 0x3f,  // 112 1.0 (4 + 8*1 bytes)
             }) == R"({"a":-1,"b":16,"c":100,"d":-1,"s":"ok","q":[10,11],"p":{"x":3,"y":4},)"
                   R"("n":{"x":1,"y":2},"m":null,"r":[1.0],"o":null})");
  // A member length past the DHEADER.
  const auto e = error(lib, m,
                       {
                           0x00, 0x0b, 0x00, 0x00,  // PL_CDR2_LE
                           0x08, 0x00, 0x00, 0x00,  // 0 DHEADER 8
                           0x05, 0x00, 0x00, 0x40,  // 4 LC 4, id 5
                           0x09, 0x00, 0x00, 0x00,  // 8 NEXTINT 9: past the DHEADER
                           0x00, 0x00, 0x00, 0x00,
                       });
  CHECK(e.code == Errc::kCorrupt);
  CHECK(e.message ==
        "offset 12 (bytes after the encapsulation header): (top level): member 5 "
        "of 9 bytes (length code 4), 0 left in the enclosing length");
}

TEST_CASE("cdr: struct with a base: base members first, one DHEADER", "[cdr]") {
  TypeLibrary lib;
  SECTION("final, XCDR1") {
    const TypeId base = add_struct(lib, "Base", {mem("id", prim(lib, Kind::kInt32))});
    const TypeId d = add_struct(lib, "Derived", {mem("v", prim(lib, Kind::kInt16))},
                                Extensibility::kFinal, base);
    CHECK(json(lib, d, {0x00, 0x01, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00, 0x03, 0x00}) ==
          R"({"id":7,"v":3})");
  }
  SECTION("appendable, XCDR2") {
    const TypeId base =
        add_struct(lib, "Base", {mem("id", prim(lib, Kind::kInt32))}, Extensibility::kAppendable);
    const TypeId d = add_struct(lib, "Derived", {mem("v", prim(lib, Kind::kInt16))},
                                Extensibility::kAppendable, base);
    CHECK(json(lib, d,
               {
                   0x00, 0x09, 0x00, 0x00,  // D_CDR2_LE
                   0x06, 0x00, 0x00, 0x00,  // 0 one DHEADER for base and derived: 6
                   0x07, 0x00, 0x00, 0x00,  // 4 id = 7
                   0x03, 0x00,              // 8 v = 3
               }) == R"({"id":7,"v":3})");
  }
  SECTION("mutable, XCDR2") {
    const TypeId base =
        add_struct(lib, "Base", {mem("id", prim(lib, Kind::kInt32), 1)}, Extensibility::kMutable);
    const TypeId d = add_struct(lib, "Derived", {mem("v", prim(lib, Kind::kInt16), 2)},
                                Extensibility::kMutable, base);
    CHECK(json(lib, d,
               {
                   0x00, 0x0b, 0x00, 0x00,  // PL_CDR2_LE
                   0x10, 0x00, 0x00, 0x00,  // 0  DHEADER 16
                   0x02, 0x00, 0x00, 0x10,  // 4  LC 1, id 2
                   0x03, 0x00, 0x00, 0x00,  // 8  v = 3, padding
                   0x01, 0x00, 0x00, 0x20,  // 12 LC 2, id 1 (the base's member)
                   0x07, 0x00, 0x00, 0x00,  // 16 id = 7
               }) == R"({"id":7,"v":3})");
  }
}

TEST_CASE("cdr: ddsperf KeyedSeq (final, XCDR1 LE), @key changes nothing", "[cdr]") {
  TypeLibrary lib;
  // struct KeyedSeq { unsigned long seq; @key unsigned long keyval; sequence<octet> baggage; };
  Member key = mem("keyval", prim(lib, Kind::kUInt32), 1);
  key.key = true;
  const TypeId t = add_struct(lib, "KeyedSeq",
                              {mem("seq", prim(lib, Kind::kUInt32), 0), key,
                               mem("baggage", add_seq(lib, prim(lib, Kind::kOctet)), 2)});
  const Bytes sample = {
      0x00, 0x01, 0x00, 0x01,  // CDR_LE, options: 1 byte of padding at the end
      0x2a, 0x00, 0x00, 0x00,  // 0  seq = 42
      0x07, 0x00, 0x00, 0x00,  // 4  keyval = 7
      0x03, 0x00, 0x00, 0x00,  // 8  baggage: length 3
      0xaa, 0xbb, 0xcc,        // 12 the bytes
      0x00,                    // 15 padding
  };
  CHECK(json(lib, t, sample) == R"({"seq":42,"keyval":7,"baggage":[170,187,204]})");
}

TEST_CASE("cdr: every truncation of a rich sample is an error, never a crash", "[cdr]") {
  TypeLibrary lib;
  const TypeId pt =
      add_struct(lib, "Pt", {mem("x", prim(lib, Kind::kInt16)), mem("y", prim(lib, Kind::kInt16))});
  const TypeId u = add_union(lib, "U", prim(lib, Kind::kInt32),
                             {ucase({1}, mem("s", prim(lib, Kind::kInt16), 1))});
  const TypeId rich = add_struct(
      lib, "Rich",
      {mem("id", prim(lib, Kind::kInt32), 1), mem("name", prim(lib, Kind::kString), 2),
       mem("pts", add_seq(lib, pt), 3), mem("u", u, 4), mem("d", prim(lib, Kind::kFloat64), 5),
       mem("o", prim(lib, Kind::kInt32), 6, true)},
      Extensibility::kAppendable);
  const Bytes sample = {
      0x00, 0x07, 0x00, 0x00,                          // CDR2_LE
      0x30, 0x00, 0x00, 0x00,                          // 0  DHEADER 48
      0x05, 0x00, 0x00, 0x00,                          // 4  id = 5
      0x03, 0x00, 0x00, 0x00, 'a',  'b',  0x00,        // 8  name = "ab"
      0x00,                                            // 15 padding
      0x08, 0x00, 0x00, 0x00,                          // 16 pts: DHEADER 8
      0x01, 0x00, 0x00, 0x00,                          // 20 length 1
      0x01, 0x00, 0x02, 0x00,                          // 24 pts[0]
      0x01, 0x00, 0x00, 0x00, 0x09, 0x00,              // 28 u: discriminator 1, s = 9
      0x00, 0x00,                                      // 34 padding
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xf0, 0x3f,  // 36 d = 1.0
      0x01,                                            // 44 o present
      0x00, 0x00, 0x00,                                // 45 padding
      0x02, 0x00, 0x00, 0x00,                          // 48 o = 2
  };
  CHECK(json(lib, rich, sample) ==
        R"({"id":5,"name":"ab","pts":[{"x":1,"y":2}],"u":{"$discriminator":1,"s":9},"d":1.0,)"
        R"("o":2})");
  for (size_t n = 0; n < sample.size(); ++n) {
    const Bytes prefix(sample.begin(), sample.begin() + static_cast<std::ptrdiff_t>(n));
    auto r = decode_cdr(lib, rich, prefix);
    INFO("prefix of " << n << " bytes");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == Errc::kTruncated);
  }
  // The same for the XCDR1 sample of every primitive.
  const TypeId p = all_primitives(lib);
  for (size_t n = 0; n < kPrimitivesXcdr1Le.size(); ++n) {
    const Bytes prefix(kPrimitivesXcdr1Le.begin(),
                       kPrimitivesXcdr1Le.begin() + static_cast<std::ptrdiff_t>(n));
    auto r = decode_cdr(lib, p, prefix);
    INFO("prefix of " << n << " bytes");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == Errc::kTruncated);
  }
}

TEST_CASE("cdr: a sequence length of 0xffffffff is an error, nothing reserved", "[cdr]") {
  TypeLibrary lib;
  const TypeId pt = add_struct(lib, "Pt", {mem("x", prim(lib, Kind::kInt16))});
  const TypeId ints = add_struct(lib, "I", {mem("v", add_seq(lib, prim(lib, Kind::kInt32)))});
  const TypeId pts = add_struct(lib, "P", {mem("v", add_seq(lib, pt))});
  const Bytes huge = {0x00, 0x01, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0x01, 0x00, 0x00, 0x00};
  // Over DecodeLimits::max_elements (64 Mi by default).
  auto e = error(lib, ints, huge);
  CHECK(e.code == Errc::kUnsupported);
  // With no element limit: 4 Gi elements of 4 bytes cannot be in 4 bytes.
  DecodeLimits unlimited;
  unlimited.max_elements = UINT64_MAX;
  e = error(lib, ints, huge, unlimited);
  CHECK(e.code == Errc::kTruncated);
  CHECK(e.message ==
        "offset 4 (bytes after the encapsulation header): v: 4294967295 elements "
        "of at least 4 bytes, 4 bytes left");
  e = error(lib, pts, huge, unlimited);
  CHECK(e.code == Errc::kTruncated);
}

TEST_CASE("cdr: nesting deeper than max_depth is an error", "[cdr]") {
  TypeLibrary lib;
  // struct Node { sequence<Node> kids; };  (a struct and a sequence: two levels per node)
  Type node;
  node.kind = Kind::kStruct;
  node.name = "Node";
  const TypeId n = lib.add(node);
  lib.at(n).members.push_back(mem("kids", add_seq(lib, n)));
  const Bytes three_deep = {
      0x00, 0x01, 0x00, 0x00,  // CDR_LE
      0x01, 0x00, 0x00, 0x00,  // 0 kids: 1
      0x01, 0x00, 0x00, 0x00,  // 4 kids[0].kids: 1
      0x00, 0x00, 0x00, 0x00,  // 8 kids[0].kids[0].kids: 0
  };
  CHECK(json(lib, n, three_deep) == R"({"kids":[{"kids":[{"kids":[]}]}]})");
  DecodeLimits limits;
  limits.max_depth = 5;
  const auto e = error(lib, n, three_deep, limits);
  CHECK(e.code == Errc::kUnsupported);
  CHECK(e.message ==
        "offset 8 (bytes after the encapsulation header): kids[0].kids[0].kids: "
        "nested deeper than 5 levels");
}

TEST_CASE("cdr: encapsulation header and type library errors", "[cdr]") {
  TypeLibrary lib;
  const TypeId t = add_struct(lib, "T", {mem("x", prim(lib, Kind::kUInt8))});
  CHECK(error(lib, t, {0x00, 0x01}).code == Errc::kTruncated);
  const auto e = error(lib, t, {0x00, 0x04, 0x00, 0x00, 0x01});
  CHECK(e.code == Errc::kUnsupported);
  CHECK(e.message == "encapsulation header: representation id 0x4 is not a CDR encoding");
  CHECK(error(lib, 12345, {0x00, 0x01, 0x00, 0x00, 0x01}).code == Errc::kInvalidArgument);
  // An alias loop is an error, not a hang.
  const TypeId a = add_alias(lib, "A", kNoType);
  const TypeId b = add_alias(lib, "B", a);
  lib.at(a).element = b;
  CHECK(error(lib, a, {0x00, 0x01, 0x00, 0x00, 0x01}).code == Errc::kInvalidArgument);
}

TEST_CASE("cdr: empty structs in a sequence are bounded by a budget, not by bytes", "[cdr]") {
  TypeLibrary lib;
  const TypeId empty = add_struct(lib, "Empty", {});
  const TypeId t = add_struct(lib, "T", {mem("v", add_seq(lib, empty))});
  CHECK(json(lib, t, {0x00, 0x01, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00}) == R"({"v":[{},{}]})");
  DecodeLimits unlimited;
  unlimited.max_elements = UINT64_MAX;
  CHECK(error(lib, t, {0x00, 0x01, 0x00, 0x00, 0xff, 0xff, 0xff, 0x7f}, unlimited).code ==
        Errc::kUnsupported);
}

TEST_CASE("cdr: representation ids are those of DDSI-RTPS 2.5 (XCDR2 0x0006-0x000b)", "[cdr]") {
  TypeLibrary lib;
  const TypeId t = add_struct(lib, "U", {mem("v", prim(lib, Kind::kUInt16))});
  // A final struct reads the same under every XCDR2 id of one byte order.
  for (uint8_t id : {0x07, 0x09, 0x0b}) {
    INFO("id " << int(id));
    CHECK(json(lib, t, {0x00, id, 0x00, 0x00, 0x34, 0x12}) == R"({"v":4660})");
  }
  for (uint8_t id : {0x06, 0x08, 0x0a}) {
    INFO("id " << int(id));
    CHECK(json(lib, t, {0x00, id, 0x00, 0x00, 0x12, 0x34}) == R"({"v":4660})");
  }
  // 0x0004 (XML) and 0x0010-0x0015 (never written by an RTPS implementation) are refused.
  for (uint8_t id : {0x04, 0x05, 0x0c, 0x10, 0x11, 0x15}) {
    INFO("id " << int(id));
    CHECK(error(lib, t, {0x00, id, 0x00, 0x00, 0x34, 0x12}).code == Errc::kUnsupported);
  }
}
