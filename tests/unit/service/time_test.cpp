// Time arguments ("12.5", ISO-8601) and ISO formatting.
#include <catch2/catch.hpp>

#include "test_util.hpp"

using replay_test::kT0;
using service::replay::format_iso;
using service::replay::parse_time_arg;

TEST_CASE("parse_time_arg reads offsets in seconds exactly") {
  auto a = parse_time_arg("12.5");
  REQUIRE(a);
  CHECK_FALSE(a->absolute);
  CHECK(a->ns == 12'500'000'000);
  CHECK(parse_time_arg("0")->ns == 0);
  CHECK(parse_time_arg("3")->ns == 3'000'000'000);
  CHECK(parse_time_arg(".25")->ns == 250'000'000);
  CHECK(parse_time_arg("1.000000001")->ns == 1'000'000'001);
  CHECK(parse_time_arg("2s")->ns == 2'000'000'000);
  CHECK(parse_time_arg(" 7 ")->ns == 7'000'000'000);
}

TEST_CASE("parse_time_arg reads ISO-8601 times with fractions and offsets") {
  auto a = parse_time_arg("2026-11-21T23:38:00Z");
  REQUIRE(a);
  CHECK(a->absolute);
  CHECK(a->ns == kT0);
  CHECK(parse_time_arg("2026-11-21T23:38:00.250Z")->ns == kT0 + 250'000'000);
  CHECK(parse_time_arg("2026-11-21T23:38:00.123456789Z")->ns == kT0 + 123'456'789);
  CHECK(parse_time_arg("2026-11-22T00:38:00+01:00")->ns == kT0);
  CHECK(parse_time_arg("2026-11-21T22:08:00-0130")->ns == kT0);
  CHECK(parse_time_arg("2026-11-21T23:38:00")->ns == kT0);  // no zone: UTC
  CHECK(parse_time_arg("2026-11-21 23:38")->ns == kT0);
  CHECK(parse_time_arg("2026-11-21")->ns == kT0 - (23 * 3600 + 38 * 60) * 1'000'000'000LL);
  CHECK(parse_time_arg("2024-02-29T00:00:00Z"));
}

TEST_CASE("parse_time_arg refuses bad times with a clear message") {
  for (const char* bad :
       {"", "abc", "-3", "1.2.3", "12x", "2026-13-01T00:00:00Z", "2026-02-29T00:00:00Z",
        "2026-11-21T24:00:00Z", "2026-11-21T23:61:00Z", "2026-11-21T23:38:00+25:00",
        "2026-11-21T23:38:00Zjunk", "2026-1-2", "2026-11-21T23:38:00."}) {
    INFO(bad);
    auto a = parse_time_arg(bad);
    REQUIRE_FALSE(a);
    CHECK(a.error().code == common::Errc::kInvalidArgument);
    CHECK(a.error().message.find("bad time") == 0);
    CHECK(a.error().message.find('\n') == std::string::npos);
  }
}

TEST_CASE("format_iso prints UTC with milliseconds or nanoseconds") {
  CHECK(format_iso(kT0) == "2026-11-21T23:38:00.000Z");
  CHECK(format_iso(kT0 + 123'456'789) == "2026-11-21T23:38:00.123Z");
  CHECK(format_iso(kT0 + 123'456'789, 9) == "2026-11-21T23:38:00.123456789Z");
  CHECK(format_iso(0) == "1970-01-01T00:00:00.000Z");
  CHECK(format_iso(-1, 9) == "1969-12-31T23:59:59.999999999Z");
  CHECK(format_iso(951'782'400'000'000'000) == "2000-02-29T00:00:00.000Z");
  // Round trip.
  for (int64_t t : {kT0, kT0 + 1, kT0 + 999'999'999, int64_t{1'000'000'000'123'456'789}}) {
    CHECK(parse_time_arg(format_iso(t, 9))->ns == t);
  }
}

TEST_CASE("parse_time_arg reads tag:NAME") {
  auto a = parse_time_arg("tag:engine-start");
  REQUIRE(a.ok());
  CHECK(a->tag == "engine-start");
  auto b = parse_time_arg("tag:");
  REQUIRE_FALSE(b.ok());
  CHECK(b.error().message ==
        "bad time 'tag:': no tag name after 'tag:' (expected seconds from the start of the "
        "recording, e.g. 12.5, an ISO-8601 time, e.g. 2026-11-21T23:38:00.5Z, or tag:NAME)");
}
