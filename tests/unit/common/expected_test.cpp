// common::Expected and common::Error (common/expected.hpp): the one result type of all modules.
#include <catch2/catch.hpp>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/expected.hpp"

using common::Errc;
using common::Error;
using common::Expected;

namespace {

Expected<int> half(int n) {
  if (n % 2) return common::make_error(Errc::kInvalidArgument, std::to_string(n) + " is odd");
  return n / 2;
}

Expected<void> check_even(int n) {
  auto h = half(n);
  if (!h) return h.error();  // an error passes to a caller of another result type unchanged
  return {};
}

struct ManyErrors {
  std::vector<std::string> lines;
};

}  // namespace

TEST_CASE("Expected holds a value or an Error, and says which") {
  auto ok = half(8);
  REQUIRE(ok.ok());
  CHECK(static_cast<bool>(ok));
  CHECK(ok.value() == 4);
  CHECK(*ok == 4);
  CHECK_THROWS_AS(ok.error(), std::bad_variant_access);

  auto bad = half(7);
  REQUIRE_FALSE(bad.ok());
  CHECK_FALSE(static_cast<bool>(bad));
  CHECK(bad.error().code == Errc::kInvalidArgument);
  CHECK(bad.error().message == "7 is odd");
  CHECK_THROWS_AS(bad.value(), std::bad_variant_access);
}

TEST_CASE("Expected of void is success or the error passed on") {
  CHECK(check_even(2).ok());
  const auto e = check_even(3);
  REQUIRE_FALSE(e.ok());
  CHECK(e.error().code == Errc::kInvalidArgument);
  CHECK(e.error().message == "3 is odd");
  CHECK_THROWS_AS(Expected<void>{}.error(), std::bad_optional_access);
}

TEST_CASE("Expected moves a move-only value out and takes another error type") {
  Expected<std::unique_ptr<int>> p(std::make_unique<int>(5));
  REQUIRE(p);
  std::unique_ptr<int> owned = std::move(p).value();
  CHECK(*owned == 5);

  Expected<int, ManyErrors> many(ManyErrors{{"a", "b"}});
  REQUIRE_FALSE(many);
  CHECK(many.error().lines == std::vector<std::string>{"a", "b"});
  Expected<void, ManyErrors> none;
  CHECK(none.ok());
}

TEST_CASE("Error::to_string names the code, then the message") {
  CHECK(Error{Errc::kNoSpace, "write segments/00000001.seg: No space left on device"}.to_string() ==
        "no space left: write segments/00000001.seg: No space left on device");
  CHECK(Error{Errc::kIo, "read x"}.to_string() == "I/O error: read x");
  CHECK(std::string(common::to_string(Errc::kIndex)) == "index error");
  CHECK(std::string(common::to_string(Errc::kLowSpace)) == "low disk space");
  CHECK(std::string(common::to_string(Errc::kTruncated)) == "truncated data");
  CHECK(std::string(common::to_string(static_cast<Errc>(99))) == "unknown error");
}
