// common::md5 (common/md5.hpp) against RFC 1321's test vectors and the padding edges.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "common/hex.hpp"
#include "common/md5.hpp"

namespace {

std::string md5_hex(const std::vector<uint8_t>& v) {
  return common::to_hex(common::md5(v));
}
std::string md5_hex(const std::string& s) {
  return common::to_hex(common::md5({reinterpret_cast<const uint8_t*>(s.data()), s.size()}));
}

}  // namespace

TEST_CASE("md5 matches the RFC 1321 test vectors and block boundaries") {
  REQUIRE(md5_hex(std::string()) == "d41d8cd98f00b204e9800998ecf8427e");
  REQUIRE(md5_hex(std::string("abc")) == "900150983cd24fb0d6963f7d28e17f72");
  REQUIRE(md5_hex(std::string("message digest")) == "f96b697d7cb7938d525a2f31aaf161d0");
  REQUIRE(md5_hex(std::string("abcdefghijklmnopqrstuvwxyz")) == "c3fcd3d76192e4007dfb496cca67e13b");
  REQUIRE(md5_hex(std::string("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")) ==
          "d174ab98d277d9f5a5611c2c9f419d9f");
  REQUIRE(md5_hex(std::string("1234567890123456789012345678901234567890"
                              "1234567890123456789012345678901234567890")) ==
          "57edf4a22be3c955ac49da2e2107b67a");
  // Padding edges: 55 bytes fit one block with the length, 56 need a second, 64 is one full block.
  REQUIRE(md5_hex(std::string(55, 'a')) == "ef1772b6dff9a122358552954ad0df65");
  REQUIRE(md5_hex(std::string(56, 'a')) == "3b0c8ac703f828b04c6c197006d17218");
  REQUIRE(md5_hex(std::string(63, 'a')) == "b06521f39153d618550606be297466d5");
  REQUIRE(md5_hex(std::string(64, 'a')) == "014842d480b571495a4a0363793f7367");
  REQUIRE(md5_hex(std::string(65, 'a')) == "c743a45e0d2e6a95cb859adae0248435");
  // 1000 bytes (15 blocks + a tail), values checked with coreutils md5sum.
  REQUIRE(md5_hex(std::string(1000, 'a')) == "cabe45dcc9ae5b66ba86600cca6b8ba8");
  std::vector<uint8_t> k(1000);
  for (size_t i = 0; i < k.size(); ++i) k[i] = static_cast<uint8_t>(i * 7 + 3);
  REQUIRE(md5_hex(k) == "10046f077f2082ac19676b8079f1cb1a");
}
