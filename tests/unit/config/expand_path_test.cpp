// expand_storage_path: storage.path's strftime conversions, exactly, for fixed times in fixed time
// zones (TZ set for the test, restored after), and every refusal with its message.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <ctime>
#include <optional>

#include "test_util.hpp"

using namespace config;
using config_test::messages_of;
using Messages = std::vector<std::string>;

namespace {

// TZ set to `zone` (a POSIX TZ string, so no time zone database is needed) for the scope.
class ScopedTz {
 public:
  explicit ScopedTz(const char* zone) {
    if (const char* old = std::getenv("TZ")) saved_ = old;
    ::setenv("TZ", zone, 1);
    ::tzset();
  }
  ~ScopedTz() {
    if (saved_) {
      ::setenv("TZ", saved_->c_str(), 1);
    } else {
      ::unsetenv("TZ");
    }
    ::tzset();
  }
  ScopedTz(const ScopedTz&) = delete;
  ScopedTz& operator=(const ScopedTz&) = delete;

 private:
  std::optional<std::string> saved_;
};

// 2023-11-14 22:13:20.750 UTC, a Tuesday, day 318 of the year.
const auto kTime =
    std::chrono::system_clock::from_time_t(1700000000) + std::chrono::milliseconds(750);

RecorderConfig with_path(const std::string& path) {
  RecorderConfig c;
  c.storage.path = path;
  return c;
}

// The expanded path (the expansion must succeed).
std::string expanded(const std::string& pattern,
                     std::chrono::system_clock::time_point now = kTime) {
  RecorderConfig c = with_path(pattern);
  const auto r = expand_storage_path(c, now);
  INFO("pattern: " << pattern);
  INFO("messages:\n" << (r.ok() ? std::string() : r.error().to_string()));
  REQUIRE(r.ok());
  return c.storage.path.string();
}

// The messages of a pattern that must be refused; the configuration must stay as it was.
Messages refused(const std::string& pattern) {
  RecorderConfig c = with_path(pattern);
  const auto r = expand_storage_path(c, kTime);
  INFO("pattern: " << pattern);
  REQUIRE_FALSE(r.ok());
  CHECK(c.storage.path.string() == pattern);
  return messages_of(r);
}

const std::string kKnown =
    "(known: %Y %y %m %d %j %H %M %S %F %T %s %z %Z, and %% for a percent sign)";

}  // namespace

TEST_CASE("expand_storage_path: each conversion, exactly, in UTC") {
  ScopedTz tz("UTC0");
  CHECK(expanded("recordings/%Y%m%d-%H%M%S") == "recordings/20231114-221320");
  CHECK(expanded("/data/rec-%F") == "/data/rec-2023-11-14");
  CHECK(expanded("%Y|%y|%m|%d|%j|%H|%M|%S|%F|%T|%s|%z|%Z|%%") ==
        "2023|23|11|14|318|22|13|20|2023-11-14|22:13:20|1700000000|+0000|UTC|%");
  // The second of the start, not rounded.
  CHECK(expanded("%S", kTime + std::chrono::milliseconds(249)) == "20");
  CHECK(expanded("%S", kTime + std::chrono::milliseconds(250)) == "21");
}

TEST_CASE("expand_storage_path: local time is the TZ environment's") {
  {
    ScopedTz tz("EET-2");  // UTC+2: already the next day
    CHECK(expanded("rec-%Y%m%d-%H%M%S%z-%Z") == "rec-20231115-001320+0200-EET");
    CHECK(expanded("%j %s") == "319 1700000000");  // %s is the same instant everywhere
  }
  {
    ScopedTz tz("CET-1CEST,M3.5.0,M10.5.0/3");  // with daylight saving time
    CHECK(expanded("%F %T %z %Z") == "2023-11-14 23:13:20 +0100 CET");
    // 2023-07-22 04:26:40 UTC
    CHECK(expanded("%F %T %z %Z", std::chrono::system_clock::from_time_t(1690000000)) ==
          "2023-07-22 06:26:40 +0200 CEST");
  }
  {
    ScopedTz tz("<-10>10");  // UTC-10
    CHECK(expanded("%Y%m%d-%H%M%S") == "20231114-121320");
  }
}

TEST_CASE("expand_storage_path: a path without conversions is left as it is") {
  ScopedTz tz("UTC0");
  for (const std::string p : {"rec", "/var/lib/pubsub-recorder/rec/", "a b/ c", "./x"}) {
    CHECK(expanded(p) == p);
  }
  CHECK(expanded("100%%/rec-%%Y") == "100%/rec-%Y");
}

TEST_CASE("expand_storage_path refuses unknown conversions, each named") {
  ScopedTz tz("UTC0");
  CHECK(refused("rec-%Q") ==
        Messages{"storage path \"rec-%Q\": unknown conversion \"%Q\" " + kKnown});
  // Locale-dependent names, glibc's flags and POSIX's E/O modifiers are not taken either.
  CHECK(refused("rec-%b-%-d-%Ey") ==
        Messages{"storage path \"rec-%b-%-d-%Ey\": unknown conversion \"%b\" " + kKnown,
                 "storage path \"rec-%b-%-d-%Ey\": unknown conversion \"%-\" " + kKnown,
                 "storage path \"rec-%b-%-d-%Ey\": unknown conversion \"%E\" " + kKnown});
}

TEST_CASE("expand_storage_path refuses a lone % at the end") {
  ScopedTz tz("UTC0");
  CHECK(refused("rec-%Y-%") ==
        Messages{"storage path \"rec-%Y-%\" ends with a lone \"%\" (write \"%%\" for a percent "
                 "sign)"});
  CHECK(refused("%") ==
        Messages{"storage path \"%\" ends with a lone \"%\" (write \"%%\" for a percent sign)"});
}

TEST_CASE("expand_storage_path refuses a path that expands to nothing") {
  ScopedTz tz("<>0");  // a zone whose abbreviation is empty
  CHECK(refused("%Z") == Messages{"storage path \"%Z\" expands to an empty string"});
  CHECK(expanded("rec%Z") == "rec");
}
