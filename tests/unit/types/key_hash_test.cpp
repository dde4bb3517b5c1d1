// Key hashes from the type (types/key_hash.hpp), against values worked out from the rules
// (PLAIN_CDR2 big endian, zero-padded to 16 when the key's largest size fits, else MD5) and the one
// Fast DDS 2.9 puts on the wire for the test peers' QosTest::Sample (id 3: 00000003 and twelve
// zeros).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "types/idl.hpp"
#include "types/key_hash.hpp"

using namespace types;

namespace {

TypeLibrary lib_of(const char* idl) {
  auto lib = parse_idl(idl, "test.idl");
  REQUIRE(lib);
  return std::move(lib).value();
}

std::string hex(std::span<const uint8_t> b) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (uint8_t v : b) {
    s += d[v >> 4];
    s += d[v & 15];
  }
  return s;
}

// Little-endian helpers for building samples.
void le32(std::vector<uint8_t>& b, uint32_t v) {
  for (int i = 0; i < 4; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

}  // namespace

TEST_CASE("Key hash of a long key: the big-endian value padded, from a sample or a key payload") {
  TypeLibrary lib = lib_of(
      "module QosTest { @final struct Sample { @key long id; long seq; sequence<octet> payload; "
      "}; };");
  auto h = KeyHasher::create(lib, *lib.find("QosTest::Sample"));
  REQUIRE(h);
  for (uint16_t encap : {0x0001, 0x0007}) {  // CDR_LE and CDR2_LE: the same body here
    std::vector<uint8_t> s{0x00, static_cast<uint8_t>(encap), 0, 0};
    le32(s, 3);   // id
    le32(s, 17);  // seq
    le32(s, 2);   // payload length
    s.push_back(0xaa);
    s.push_back(0xbb);
    s.push_back(0);
    s.push_back(0);
    auto k = h->of_sample(s);
    REQUIRE(k);
    CHECK(hex(*k) == "00000003000000000000000000000000");
  }
  std::vector<uint8_t> key{0x00, 0x01, 0x00, 0x00};
  le32(key, 3);
  auto k = h->of_key_payload(key);
  REQUIRE(k);
  CHECK(hex(*k) == "00000003000000000000000000000000");
}

TEST_CASE("Key hash of an unbounded string key is the MD5 of its serialization") {
  TypeLibrary lib = lib_of("struct S { @key string name; long x; };");
  auto h = KeyHasher::create(lib, *lib.find("S"));
  REQUIRE(h);
  std::vector<uint8_t> s{0x00, 0x01, 0x00, 0x00};
  le32(s, 6);
  for (char c : std::string("hello")) s.push_back(static_cast<uint8_t>(c));
  s.push_back(0);
  s.insert(s.end(), {0, 0});  // align x
  le32(s, 9);
  auto key = h->serialized_key(s);
  REQUIRE(key);
  CHECK(hex(*key) == "0000000668656c6c6f00");
  auto k = h->of_sample(s);
  REQUIRE(k);
  CHECK(hex(*k) == "80e4d12f30e3c36fa1324dc7176489ad");  // md5(0000000668656c6c6f00)
}

TEST_CASE("Key hash: PLAIN_CDR2 aligns 8-byte keys to 4, bounded strings are sized by bound") {
  TypeLibrary lib = lib_of("struct T { @key long a; @key long long b; short z; };");
  auto h = KeyHasher::create(lib, *lib.find("T"));
  REQUIRE(h);
  // XCDR1 little endian: b at offset 8 (aligned to 8) in the body.
  std::vector<uint8_t> s{0x00, 0x01, 0x00, 0x00};
  le32(s, 1);
  le32(s, 0);  // padding to 8
  le32(s, 2);
  le32(s, 0);
  s.insert(s.end(), {5, 0, 0, 0});
  auto k = h->of_sample(s);
  REQUIRE(k);
  CHECK(hex(*k) == "00000001000000000000000200000000");  // 12 bytes, no padding after a

  TypeLibrary b = lib_of("struct B { @key string<11> id; };");  // 4 + 11 + 1 = 16: fits
  auto hb = KeyHasher::create(b, *b.find("B"));
  REQUIRE(hb);
  std::vector<uint8_t> bs{0x00, 0x01, 0x00, 0x00};
  le32(bs, 3);
  bs.insert(bs.end(), {'a', 'b', 0, 0});
  auto kb = hb->of_sample(bs);
  REQUIRE(kb);
  CHECK(hex(*kb) == "00000003616200000000000000000000");
}

TEST_CASE("Key hash: a type without a key, or with a union key, is refused") {
  TypeLibrary lib = lib_of(
      "struct N { long x; }; union U switch (long) { case 1: long a; }; struct K { @key U u; };");
  auto n = KeyHasher::create(lib, *lib.find("N"));
  REQUIRE_FALSE(n);
  CHECK(n.error().code == common::Errc::kUnsupported);
  auto u = KeyHasher::create(lib, *lib.find("K"));
  REQUIRE_FALSE(u);
  CHECK(u.error().code == common::Errc::kUnsupported);
}
