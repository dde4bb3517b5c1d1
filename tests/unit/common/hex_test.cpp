// common/hex.hpp: to_hex and from_hex, both ways, and the text from_hex refuses.
#include "common/hex.hpp"

#include <array>
#include <catch2/catch.hpp>

TEST_CASE("hex: from_hex reads what to_hex writes, and nothing else") {
  const std::array<uint8_t, 4> bytes{0x01, 0x9a, 0xff, 0x00};
  CHECK(common::to_hex(bytes) == "019aff00");
  std::array<uint8_t, 4> back{};
  REQUIRE(common::from_hex("019aff00", back));
  CHECK(back == bytes);
  for (const char* bad : {"019aff0", "019aff000", "019AFF00", "019aff0g", "", " 19aff00"}) {
    INFO(bad);
    CHECK_FALSE(common::from_hex(bad, back));
  }
  std::array<uint8_t, 0> none{};
  CHECK(common::from_hex("", none));
}
