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

TEST_CASE("value_or gives the value, or the fallback on an error") {
  CHECK(half(8).value_or(-1) == 4);
  CHECK(half(7).value_or(-1) == -1);
  const auto kept = half(6);
  CHECK(kept.value_or(0) == 3);
  auto moved = Expected<std::unique_ptr<int>>(std::make_unique<int>(5));
  auto p = std::move(moved).value_or(nullptr);
  REQUIRE(p);
  CHECK(*p == 5);
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

TEST_CASE("with_context puts the caller's context before the message and keeps the code") {
  const Error e = half(5).error().with_context("cannot halve the count");
  CHECK(e.code == Errc::kInvalidArgument);
  CHECK(e.message == "cannot halve the count: 5 is odd");

  auto bad = half(9).with_context("first");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message == "first: 9 is odd");
  auto good = half(10).with_context("unused");
  REQUIRE(good);
  CHECK(*good == 5);

  auto v = check_even(1).with_context("check");
  REQUIRE_FALSE(v);
  CHECK(v.error().code == Errc::kInvalidArgument);
  CHECK(v.error().message == "check: 1 is odd");
  CHECK(check_even(4).with_context("check").ok());
}

TEST_CASE("and_then and transform chain on the value and pass the first error on") {
  auto quarter = [](int n) { return half(n).and_then(half); };
  CHECK(*quarter(12) == 3);
  REQUIRE_FALSE(quarter(6));
  CHECK(quarter(6).error().message == "3 is odd");  // the second step's error
  CHECK(quarter(5).error().message == "5 is odd");  // the first step's: the second never runs

  int calls = 0;
  auto text = half(14).transform([&](int n) {
    ++calls;
    return std::to_string(n) + " apples";
  });
  REQUIRE(text);
  CHECK(*text == "7 apples");
  auto none = half(15).transform([&](int n) {
    ++calls;
    return n;
  });
  REQUIRE_FALSE(none);
  CHECK(none.error().message == "15 is odd");
  CHECK(calls == 1);

  int seen = 0;
  Expected<void> stored = half(16).transform([&](int n) { seen = n; });
  CHECK(stored.ok());
  CHECK(seen == 8);

  auto after_void = check_even(2).and_then([] { return half(20); });
  REQUIRE(after_void);
  CHECK(*after_void == 10);
  auto skipped = check_even(7).and_then([&]() -> Expected<int> {
    ++calls;
    return 1;
  });
  REQUIRE_FALSE(skipped);
  CHECK(skipped.error().message == "7 is odd");
  CHECK(calls == 1);

  auto moved = Expected<std::unique_ptr<int>>(std::make_unique<int>(3))
                   .transform([](std::unique_ptr<int> p) { return *p * 2; });
  REQUIRE(moved);
  CHECK(*moved == 6);
}
