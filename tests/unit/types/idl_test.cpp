// types::parse_idl / parse_idl_file: every construct of all_constructs.idl checked fact by fact
// in the TypeLibrary the Cyclone DDS IDL library's tree is turned into, then the errors (syntax,
// semantic, unsupported types, preprocessor directives, missing file) with their exact
// "FILE:LINE:COLUMN: message" text, and that a failing parse writes nothing to stderr.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "types/idl.hpp"
#include "types_test_util.hpp"

using namespace types;

using types_test::id_of;

namespace {

const std::string kAllConstructs = std::string(PUBSUB_TYPES_TEST_DIR) + "/all_constructs.idl";

const TypeLibrary& all_constructs() {
  static const TypeLibrary lib = [] {
    auto parsed = parse_idl_file(kAllConstructs);
    if (!parsed) FAIL(parsed.error().to_string());
    return std::move(parsed).value();
  }();
  return lib;
}

const Type& type_named(const TypeLibrary& lib, const std::string& name) {
  return lib.at(id_of(lib, name));
}

const Member& member(const Type& t, const std::string& name) {
  for (const Member& m : t.members)
    if (m.name == name) return m;
  FAIL("no member " << name << " in " << t.name);
  throw std::logic_error("unreachable");
}

// The type of a member of a named struct.
const Type& member_type(const TypeLibrary& lib, const std::string& type, const std::string& name) {
  return lib.at(member(type_named(lib, type), name).type);
}

std::string error_of(std::string_view text, std::string_view file = "bad.idl") {
  auto parsed = parse_idl(text, file);
  REQUIRE_FALSE(parsed.ok());
  CHECK(parsed.error().code == common::Errc::kInvalidArgument);
  return parsed.error().message;
}

// Redirects file descriptor 2 to a temporary file while alive; text() is what was written.
class StderrCapture {
 public:
  StderrCapture() : file_(std::tmpfile()), saved_(dup(2)) {
    std::fflush(stderr);
    dup2(fileno(file_), 2);
  }
  ~StderrCapture() {
    restore();
    std::fclose(file_);
  }
  std::string text() {
    restore();
    std::string out;
    std::rewind(file_);
    for (int c; (c = std::fgetc(file_)) != EOF;) out += static_cast<char>(c);
    return out;
  }

 private:
  void restore() {
    if (saved_ < 0) return;
    std::fflush(stderr);
    dup2(saved_, 2);
    close(saved_);
    saved_ = -1;
  }
  FILE* file_;
  int saved_;
};

}  // namespace

TEST_CASE("parse_idl: named types get qualified names and kinds, in declaration order") {
  const TypeLibrary& lib = all_constructs();
  CHECK(type_named(lib, "pkg::sub::Name").kind == Kind::kAlias);
  CHECK(type_named(lib, "pkg::sub::Samples").kind == Kind::kAlias);
  CHECK(type_named(lib, "pkg::sub::Matrix").kind == Kind::kAlias);
  CHECK(type_named(lib, "pkg::sub::Tag").kind == Kind::kAlias);
  CHECK(type_named(lib, "pkg::sub::Color").kind == Kind::kEnum);
  CHECK(type_named(lib, "pkg::sub::Perms").kind == Kind::kBitmask);
  CHECK(type_named(lib, "pkg::sub::Shape").kind == Kind::kUnion);
  CHECK(type_named(lib, "::pkg::sub::Point").kind == Kind::kStruct);  // find() takes a leading ::
  CHECK(type_named(lib, "pkg::sub::Point").name == "pkg::sub::Point");
  CHECK_FALSE(lib.find("Point").has_value());
  CHECK_FALSE(lib.find("pkg::sub::kRows").has_value());  // constants are not types

  std::vector<std::string> names;
  for (TypeId id : lib.named()) names.push_back(lib.at(id).name);
  CHECK(names == std::vector<std::string>{"pkg::sub::Point", "pkg::sub::Plain", "pkg::sub::Header",
                                          "pkg::sub::Base", "pkg::sub::Derived", "pkg::sub::Hashed",
                                          "pkg::sub::Node", "pkg::sub::Shape", "pkg::sub::Value",
                                          "pkg::sub::Primitives", "pkg::sub::Everything",
                                          "pkg::other::Wrapper"});
}

TEST_CASE("parse_idl: typedefs, constants as bounds and anonymous types") {
  const TypeLibrary& lib = all_constructs();
  const Type& name = lib.at(type_named(lib, "pkg::sub::Name").element);
  CHECK(name.kind == Kind::kString);
  CHECK(name.bound == 16);  // kNameMax
  CHECK(name.name.empty());

  const Type& samples = lib.at(type_named(lib, "pkg::sub::Samples").element);
  CHECK(samples.kind == Kind::kSequence);
  CHECK(samples.bound == 8);
  CHECK(samples.element == lib.primitive(Kind::kInt32));

  const Type& matrix = lib.at(type_named(lib, "pkg::sub::Matrix").element);
  CHECK(matrix.kind == Kind::kArray);
  CHECK(matrix.dims == std::vector<uint32_t>{2, 3});  // kRows, kCols = kRows + 1
  CHECK(matrix.element == lib.primitive(Kind::kFloat64));
  CHECK(type_named(lib, "pkg::sub::Tag").element == lib.primitive(Kind::kInt32));

  const Type& e = type_named(lib, "pkg::sub::Everything");
  CHECK(member(e, "title").type == lib.primitive(Kind::kString));
  CHECK(member_type(lib, "pkg::sub::Everything", "code").kind == Kind::kString);
  CHECK(member_type(lib, "pkg::sub::Everything", "code").bound == 8);
  const Type& points = member_type(lib, "pkg::sub::Everything", "points");
  CHECK(points.kind == Kind::kSequence);
  CHECK(points.bound == 0);
  CHECK(points.element == id_of(lib, "pkg::sub::Point"));
  CHECK(member_type(lib, "pkg::sub::Everything", "corners").bound == 4);
  CHECK(member(e, "samp").type == id_of(lib, "pkg::sub::Samples"));
  CHECK(member(e, "mat").type == id_of(lib, "pkg::sub::Matrix"));

  const Type& grid = member_type(lib, "pkg::sub::Everything", "grid");
  CHECK(grid.kind == Kind::kArray);
  CHECK(grid.dims == std::vector<uint32_t>{2, 3, 4});
  CHECK(grid.element == lib.primitive(Kind::kInt32));
  const Type& names = member_type(lib, "pkg::sub::Everything", "names");
  CHECK(names.dims == std::vector<uint32_t>{2});
  CHECK(names.element == id_of(lib, "pkg::sub::Name"));

  const Type& outer = member_type(lib, "pkg::sub::Everything", "nested_seq");
  REQUIRE(outer.kind == Kind::kSequence);
  CHECK(outer.bound == 0);
  CHECK(lib.at(outer.element).kind == Kind::kSequence);
  CHECK(lib.at(outer.element).bound == 3);
  CHECK(lib.at(outer.element).element == id_of(lib, "pkg::sub::Point"));
}

TEST_CASE("parse_idl: enums with @value and @bit_bound, bitmasks with @position") {
  const TypeLibrary& lib = all_constructs();
  const Type& color = type_named(lib, "pkg::sub::Color");
  CHECK(color.bit_bound == 8);
  REQUIRE(color.literals.size() == 4);
  CHECK(color.literals[0].name == "RED");
  CHECK(color.literals[0].value == 0);
  CHECK(color.literals[1].name == "GREEN");
  CHECK(color.literals[1].value == 5);
  CHECK(color.literals[2].value == 6);  // continues after @value(5)
  CHECK(color.literals[3].name == "ALPHA");
  CHECK(color.literals[3].value == 7);

  const Type& level = type_named(lib, "pkg::sub::Level");
  CHECK(level.bit_bound == 32);
  REQUIRE(level.literals.size() == 2);
  CHECK(level.literals[1].name == "HIGH");
  CHECK(level.literals[1].value == 1);

  const Type& perms = type_named(lib, "pkg::sub::Perms");
  CHECK(perms.bit_bound == 16);
  REQUIRE(perms.flags.size() == 3);
  CHECK(perms.flags[0].name == "READ");
  CHECK(perms.flags[0].position == 0);
  CHECK(perms.flags[1].name == "WRITE");
  CHECK(perms.flags[1].position == 3);
  CHECK(perms.flags[2].name == "EXEC");
  CHECK(perms.flags[2].position == 4);
}

TEST_CASE("parse_idl: struct extensibility, keys, optionals, ids and inheritance") {
  const TypeLibrary& lib = all_constructs();
  CHECK(type_named(lib, "pkg::sub::Point").extensibility == Extensibility::kFinal);
  CHECK(type_named(lib, "pkg::sub::Plain").extensibility == Extensibility::kFinal);  // the default
  CHECK(type_named(lib, "pkg::sub::Header").extensibility == Extensibility::kAppendable);
  CHECK(type_named(lib, "pkg::sub::Base").extensibility == Extensibility::kMutable);
  CHECK(type_named(lib, "pkg::sub::Everything").extensibility == Extensibility::kAppendable);

  const Type& header = type_named(lib, "pkg::sub::Header");
  REQUIRE(header.members.size() == 2);
  CHECK(header.members[0].name == "stamp");
  CHECK(header.members[0].key);
  CHECK(header.members[0].type == lib.primitive(Kind::kUInt64));
  CHECK_FALSE(header.members[1].key);
  CHECK(header.members[1].type == id_of(lib, "pkg::sub::Name"));
  CHECK(header.base == kNoType);

  const Type& base = type_named(lib, "pkg::sub::Base");
  CHECK(member(base, "uid").key);
  CHECK(member(base, "uid").id == 0);
  CHECK(member(base, "label").optional);
  CHECK(member(base, "label").id == 1);
  CHECK_FALSE(member(base, "label").key);

  const Type& derived = type_named(lib, "pkg::sub::Derived");
  CHECK(derived.base == id_of(lib, "pkg::sub::Base"));
  REQUIRE(derived.members.size() == 4);  // its own members only
  CHECK(derived.members[0].name == "s");
  CHECK(derived.members[0].id == 2);  // after the base's uid (0) and label (1)
  CHECK(derived.members[1].name == "us");
  CHECK(derived.members[1].id == 10);  // @id(10)
  CHECK(derived.members[2].id == 11);  // sequential after an @id
  CHECK(derived.members[3].id == 12);
  CHECK(derived.members[2].type == lib.primitive(Kind::kInt8));
  CHECK(derived.members[3].type == lib.primitive(Kind::kUInt8));

  CHECK(type_named(lib, "pkg::sub::Primitives").nested);        // @nested
  CHECK_FALSE(type_named(lib, "pkg::sub::Everything").nested);  // @topic(platform = "DDS")
  CHECK_FALSE(type_named(lib, "pkg::sub::Point").nested);
  CHECK(member(type_named(lib, "pkg::sub::Everything"), "key_id").key);
  CHECK(member(type_named(lib, "pkg::sub::Everything"), "val").id == 14);

  const Type& wrapper = type_named(lib, "pkg::other::Wrapper");
  CHECK(member(wrapper, "at").type == id_of(lib, "pkg::sub::Point"));
  CHECK(member(wrapper, "lvl").type == id_of(lib, "pkg::sub::Level"));
}

TEST_CASE("parse_idl: @autoid(HASH) ids are the MD5-derived ones, @must_understand") {
  // Computed outside Cyclone: `printf %s alpha | md5sum` = 2c1743a3..., the first four bytes
  // read little-endian are 0xa343172c, & 0x0FFFFFFF = 0x0343172c = 54728492. Likewise gamma:
  // md5 05b048d7... -> 0xd748b005 & 0x0FFFFFFF = 0x0748b005 = 122204165.
  const Type& hashed = type_named(all_constructs(), "pkg::sub::Hashed");
  CHECK(hashed.autoid_hash);
  CHECK_FALSE(type_named(all_constructs(), "pkg::sub::Derived").autoid_hash);
  REQUIRE(hashed.members.size() == 3);
  CHECK(hashed.members[0].name == "alpha");
  CHECK(hashed.members[0].id == 54728492u);
  CHECK(hashed.members[1].name == "beta");
  CHECK(hashed.members[1].id == 3u);  // @id wins over @autoid(HASH)
  CHECK(hashed.members[2].name == "gamma");
  CHECK(hashed.members[2].id == 122204165u);
  CHECK(hashed.members[2].must_understand);
  CHECK_FALSE(hashed.members[0].must_understand);
}

TEST_CASE("parse_idl: unions - discriminators, labels, default case") {
  const TypeLibrary& lib = all_constructs();
  const Type& shape = type_named(lib, "pkg::sub::Shape");
  CHECK(shape.discriminator == id_of(lib, "pkg::sub::Color"));
  CHECK(shape.extensibility == Extensibility::kFinal);
  REQUIRE(shape.cases.size() == 3);
  CHECK(shape.cases[0].labels == std::vector<int64_t>{0});  // RED
  CHECK(shape.cases[0].member.name == "corner");
  CHECK(shape.cases[0].member.type == id_of(lib, "pkg::sub::Point"));
  CHECK(shape.cases[1].labels == std::vector<int64_t>{5, 6});  // GREEN, BLUE
  CHECK(shape.cases[1].member.type == lib.primitive(Kind::kFloat64));
  CHECK_FALSE(shape.cases[1].is_default);
  CHECK(shape.cases[2].is_default);
  CHECK(shape.cases[2].labels.empty());
  CHECK(shape.cases[2].member.name == "raw");
  CHECK(shape.cases[2].member.type == lib.primitive(Kind::kOctet));
  CHECK(shape.cases[2].member.id == 2);

  const Type& value = type_named(lib, "pkg::sub::Value");
  CHECK(value.discriminator == lib.primitive(Kind::kInt32));  // typedef Tag resolved
  REQUIRE(value.discriminator_typedef != kNoType);            // and kept
  CHECK(lib.at(value.discriminator_typedef).name == "pkg::sub::Tag");
  CHECK(shape.discriminator_typedef == kNoType);
  CHECK(value.extensibility == Extensibility::kAppendable);
  REQUIRE(value.cases.size() == 3);
  CHECK(value.cases[0].labels == std::vector<int64_t>{1, 2});
  CHECK(value.cases[1].labels == std::vector<int64_t>{-3});
  CHECK(value.cases[1].member.type == lib.primitive(Kind::kString));
  CHECK(value.cases[2].labels == std::vector<int64_t>{7});
  const Type& pair = lib.at(value.cases[2].member.type);
  CHECK(pair.kind == Kind::kArray);
  CHECK(pair.dims == std::vector<uint32_t>{2});
  CHECK(pair.element == lib.primitive(Kind::kInt16));
  for (const UnionCase& c : value.cases) CHECK_FALSE(c.is_default);
}

TEST_CASE("parse_idl: char and boolean discriminators") {
  auto parsed = parse_idl(
      "union C switch (char) { case 'a': long x; case 'b': case 'c': short y; };\n"
      "union B switch (boolean) { case TRUE: long t; case FALSE: double f; };\n",
      "u.idl");
  REQUIRE(parsed.ok());
  const Type& c = type_named(*parsed, "C");
  CHECK(c.discriminator == parsed->primitive(Kind::kChar8));
  REQUIRE(c.cases.size() == 2);
  CHECK(c.cases[0].labels == std::vector<int64_t>{'a'});
  CHECK(c.cases[1].labels == std::vector<int64_t>{'b', 'c'});
  const Type& b = type_named(*parsed, "B");
  CHECK(b.discriminator == parsed->primitive(Kind::kBool));
  REQUIRE(b.cases.size() == 2);
  CHECK(b.cases[0].labels == std::vector<int64_t>{1});
  CHECK(b.cases[1].labels == std::vector<int64_t>{0});
}

TEST_CASE("parse_idl: @extensibility(...) and a union's recursion through a sequence") {
  auto parsed = parse_idl(
      "@extensibility(MUTABLE) struct S { long a; };\n"
      "@extensibility(APPENDABLE) union U switch (short) { case 1: sequence<U> more; };\n",
      "x.idl");
  REQUIRE(parsed.ok());
  CHECK(type_named(*parsed, "S").extensibility == Extensibility::kMutable);
  const Type& u = type_named(*parsed, "U");
  CHECK(u.extensibility == Extensibility::kAppendable);
  CHECK(u.discriminator == parsed->primitive(Kind::kInt16));
  REQUIRE(u.cases.size() == 1);
  CHECK(parsed->at(u.cases[0].member.type).element == id_of(*parsed, "U"));
}

TEST_CASE("parse_idl: forward declaration and recursion through a sequence") {
  const TypeLibrary& lib = all_constructs();
  const TypeId node = id_of(lib, "pkg::sub::Node");
  const Type& children = member_type(lib, "pkg::sub::Node", "children");
  CHECK(children.kind == Kind::kSequence);
  CHECK(children.element == node);
  CHECK(member(type_named(lib, "pkg::sub::Everything"), "tree").type == node);
  CHECK(lib.at(node).members.size() == 2);
}

TEST_CASE("parse_idl: primitive types") {
  const TypeLibrary& lib = all_constructs();
  const std::vector<std::pair<std::string, Kind>> expected = {
      {"b", Kind::kBool},     {"c", Kind::kChar8},   {"o", Kind::kOctet},   {"i8", Kind::kInt8},
      {"u8", Kind::kUInt8},   {"s", Kind::kInt16},   {"i16", Kind::kInt16}, {"us", Kind::kUInt16},
      {"u16", Kind::kUInt16}, {"l", Kind::kInt32},   {"i32", Kind::kInt32}, {"ul", Kind::kUInt32},
      {"u32", Kind::kUInt32}, {"ll", Kind::kInt64},  {"i64", Kind::kInt64}, {"ull", Kind::kUInt64},
      {"u64", Kind::kUInt64}, {"f", Kind::kFloat32}, {"d", Kind::kFloat64}};
  const Type& p = type_named(lib, "pkg::sub::Primitives");
  REQUIRE(p.members.size() == expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    INFO(expected[i].first);
    CHECK(p.members[i].name == expected[i].first);
    CHECK(p.members[i].type == lib.primitive(expected[i].second));
    CHECK(p.members[i].id == i);
  }
}

TEST_CASE("parse_idl: #pragma keylist marks the listed members as keys") {
  auto parsed =
      parse_idl("struct S { long a; long b; long c; };\n#pragma keylist S c a\n", "k.idl");
  REQUIRE(parsed.ok());
  const Type& s = type_named(*parsed, "S");
  CHECK(member(s, "a").key);
  CHECK_FALSE(member(s, "b").key);
  CHECK(member(s, "c").key);
}

TEST_CASE("parse_idl: an empty file gives the primitives only") {
  for (std::string_view text : {"", "  \n// nothing\n/* at all */\n"}) {
    auto parsed = parse_idl(text, "empty.idl");
    REQUIRE(parsed.ok());
    CHECK(parsed->size() == TypeLibrary().size());
    CHECK(parsed->named().empty());
  }
}

TEST_CASE("parse_idl: syntax and semantic errors carry FILE:LINE:COLUMN") {
  CHECK(error_of("struct S {\n  long a\n};\n") == "bad.idl:3:1: syntax error");
  CHECK(error_of("module m {\nstruct S {\n  Unknown u;\n};\n};\n") ==
        "bad.idl:3:3: Scoped name 'Unknown' cannot be resolved");
  CHECK(error_of("struct S { long a; };\nstruct S { long b; };\n", "dup.idl")
            .rfind("dup.idl:2:", 0) == 0);
  // Only the first error is returned.
  CHECK(error_of("struct S { X a; Y b; };") == "bad.idl:1:12: Scoped name 'X' cannot be resolved");
}

TEST_CASE("parse_idl: unsupported types are refused") {
  CHECK(error_of("struct S {\n  wchar w;\n};") == "bad.idl:2:3: type wchar is not supported");
  CHECK(error_of("struct S { long double d; };") ==
        "bad.idl:1:12: type long double is not supported");
  CHECK(error_of("typedef wchar W;") == "bad.idl:1:9: type wchar is not supported");
  // Cyclone 0.10.2 does not parse these at all; its syntax error is reported as such.
  CHECK(error_of("struct S { wstring w; };") == "bad.idl:1:12: type wstring is not supported");
  CHECK(error_of("struct S { any a; };") == "bad.idl:1:12: type any is not supported");
  CHECK(error_of("struct S { fixed<5, 2> f; };") == "bad.idl:1:12: type fixed is not supported");
  CHECK(error_of("struct S {\n map<long, long> m; };") == "bad.idl:2:2: type map is not supported");
}

TEST_CASE("parse_idl: preprocessor directives are refused") {
  const std::string tail =
      ": preprocessor directives are not supported (#include); run the file through a C "
      "preprocessor first";
  CHECK(error_of("// types\n#include \"other.idl\"\nstruct S { long a; };") ==
        "bad.idl:2:1" + tail);
  CHECK(error_of("struct S { long a; };\n\n   #define N 3\n")
            .rfind("bad.idl:3:1: preprocessor directives are not supported (#define)", 0) == 0);
  CHECK(error_of("#ifdef X\n#endif\n").rfind("bad.idl:1:1: preprocessor directives", 0) == 0);
  // '#' inside comments and string literals is not a directive.
  auto ok = parse_idl("/*\n#include \"x.idl\"\n*/\nconst string s = \"#define\";\n", "c.idl");
  CHECK(ok.ok());
}

TEST_CASE("parse_idl: a failing parse writes nothing to stderr") {
  StderrCapture capture;
  auto bad = parse_idl("struct S {\n  long a\n};\n", "bad.idl");
  auto unresolved = parse_idl("struct S { Unknown u; };", "bad.idl");
  auto warned =
      parse_idl("struct S { long a; }; @topic(platform = \"x\") struct T { long b; };", "warn.idl");
  const std::string written = capture.text();
  CHECK_FALSE(bad.ok());
  CHECK_FALSE(unresolved.ok());
  CHECK(warned.ok());  // an ignored annotation is a warning only, dropped as well
  CHECK(written.empty());
}

TEST_CASE("parse_idl: parses on several threads at once are independent") {
  std::vector<int> good(4, 0), bad(4, 0);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < good.size(); ++t) {
    threads.emplace_back([t, &good, &bad] {
      for (int i = 0; i < 3; ++i) {
        auto ok = parse_idl_file(kAllConstructs);
        if (ok && ok->named().size() == 12) ++good[t];
        auto err = parse_idl("struct S {\n  long a\n};\n", "t" + std::to_string(t) + ".idl");
        if (!err && err.error().message == "t" + std::to_string(t) + ".idl:3:1: syntax error")
          ++bad[t];
      }
    });
  }
  for (std::thread& th : threads) th.join();
  CHECK(good == std::vector<int>(4, 3));
  CHECK(bad == std::vector<int>(4, 3));
}

TEST_CASE("parse_idl_file: a missing file is kNotFound") {
  auto parsed = parse_idl_file(std::string(PUBSUB_TYPES_TEST_DIR) + "/no_such_file.idl");
  REQUIRE_FALSE(parsed.ok());
  CHECK(parsed.error().code == common::Errc::kNotFound);
  CHECK(parsed.error().message.find("no_such_file.idl") != std::string::npos);
}

TEST_CASE("parse_idl_file: messages name the file as given") {
  char path[] = "/tmp/pubsub_idl_test_XXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  const std::string text = "module m {\n  struct S { long a };\n};\n";
  REQUIRE(write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
  close(fd);
  auto parsed = parse_idl_file(path);
  unlink(path);
  REQUIRE_FALSE(parsed.ok());
  CHECK(parsed.error().message == std::string(path) + ":2:21: syntax error");
}
