// A configuration from a file and command-line settings (compose_recorder_config,
// parse_set_option): settings override the file's keys, a file missing what a setting gives is
// complete, every problem is named by the file or by the flag that caused it.
#include <fstream>

#include "test_util.hpp"

using config_test::TempDir;

namespace {

std::string write(const TempDir& d, const char* name, const char* text) {
  std::ofstream(d.str(name)) << text;
  return d.str(name);
}

config::Setting set(const char* text) {
  auto s = config::parse_set_option(text);
  REQUIRE(s);
  return s.value();
}

}  // namespace

TEST_CASE("The --set option: dotted or pointer keys, JSON values or else strings") {
  const config::Setting a = set("storage.fsync=none");
  CHECK(a.pointer == "/storage/fsync");
  CHECK(a.json == "\"none\"");
  CHECK(a.flag == "--set storage.fsync=none");
  CHECK(set("/domain=3").json == "3");
  CHECK(set("topics.include=[\"rt/*\"]").json == "[\"rt/*\"]");
  CHECK(set("interface=").json == "\"\"");
  auto bad = config::parse_set_option("fsync");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().messages ==
        std::vector<std::string>{
            "--set fsync: expected KEY=VALUE, e.g. storage.fsync=none or domain=3"});
  REQUIRE_FALSE(config::parse_set_option("=1"));
}

TEST_CASE("Composed configuration: settings over the file, later ones winning") {
  TempDir d;
  const auto file =
      write(d, "r.json", R"({"domain": 5, "storage": {"path": "a", "fsync": "segment"}})");
  auto c = config::compose_recorder_config(file, {{"/domain", "6", "--domain 6"},
                                                  set("storage.compression=none"),
                                                  {"/domain", "7", "--domain 7"}});
  REQUIRE(c);
  CHECK(c->domain == 7);
  CHECK(c->storage.path == "a");                             // from the file
  CHECK(c->storage.fsync == config::FsyncPolicy::kSegment);  // kept
  CHECK(c->storage.compression == config::Compression::kNone);
  // No file: the settings alone.
  auto alone = config::compose_recorder_config("", {{"/storage/path", "\"b\"", "--output b"}});
  REQUIRE(alone);
  CHECK(alone->storage.path == "b");
  CHECK(alone->domain == 0);
}

TEST_CASE("Composed configuration: errors name the file or the flag") {
  TempDir d;
  // A file without storage.path is complete with -o; its other errors still count.
  const auto nopath = write(d, "nopath.json", R"({"domain": 1})");
  REQUIRE_FALSE(config::compose_recorder_config(nopath, {}));
  REQUIRE(config::compose_recorder_config(nopath, {{"/storage/path", "\"x\"", "--output x"}}));
  const auto typo = write(d, "typo.json", R"({"domian": 1})");
  auto t = config::compose_recorder_config(typo, {{"/storage/path", "\"x\"", "--output x"}});
  REQUIRE_FALSE(t);
  REQUIRE(t.error().messages.size() == 1);
  CHECK(t.error().messages[0].rfind(d.str("typo.json") + ": /domian: unknown key", 0) == 0);
  // A bad value from a flag is named by the flag.
  auto f = config::compose_recorder_config(
      nopath, {{"/storage/path", "\"x\"", "--output x"}, {"/domain", "300", "--domain 300"}});
  REQUIRE_FALSE(f);
  CHECK(f.error().messages ==
        std::vector<std::string>{"--domain 300: /domain: expected an integer in 0..232, got 300"});
  // A key under something that is not an object.
  auto n = config::compose_recorder_config(
      "", {{"/storage", "\"s\"", "--set storage=s"}, set("storage.path=x")});
  REQUIRE_FALSE(n);
  CHECK(n.error().messages ==
        std::vector<std::string>{"--set storage.path=x: /storage is not an object"});
  // A file that is not JSON: its syntax error, with line and column.
  const auto broken = write(d, "broken.json", "{\n  \"domain\": \n}");
  auto b = config::compose_recorder_config(broken, {set("domain=1")});
  REQUIRE_FALSE(b);
  CHECK(b.error().messages[0].rfind(d.str("broken.json") + ":3:1: invalid JSON", 0) == 0);
}

TEST_CASE("topics.regex: a valid ECMAScript expression is kept, an invalid one named") {
  auto ok = config::parse_recorder_config(
      R"js({"storage": {"path": "x"}, "topics": {"regex": "rt/(tf|scan)"}})js", "r.json");
  REQUIRE(ok);
  CHECK(ok->topics.regex == "rt/(tf|scan)");
  auto none = config::parse_recorder_config(R"js({"storage": {"path": "x"}})js", "r.json");
  REQUIRE(none);
  CHECK(none->topics.regex.empty());
  auto bad = config::parse_recorder_config(
      R"js({"storage": {"path": "x"}, "topics": {"regex": "rt/(tf"}})js", "r.json");
  REQUIRE_FALSE(bad);
  REQUIRE(bad.error().messages.size() == 1);
  CHECK(bad.error().messages[0].rfind(
            "r.json: /topics/regex: invalid regular expression \"rt/(tf\": ", 0) == 0);
}

TEST_CASE("topics.writers: all by default, local from the file or from --set") {
  auto none = config::parse_recorder_config(R"js({"storage": {"path": "x"}})js", "r.json");
  REQUIRE(none);
  CHECK(none->topics.writers == config::WritersScope::kAll);
  auto local = config::parse_recorder_config(
      R"js({"storage": {"path": "x"}, "topics": {"writers": "local"}})js", "r.json");
  REQUIRE(local);
  CHECK(local->topics.writers == config::WritersScope::kLocal);
  CHECK(config::to_string(local->topics.writers) == "local");
  auto set = config::parse_set_option("topics.writers=local");
  REQUIRE(set);
  CHECK(set->pointer == "/topics/writers");
  CHECK(set->json == "\"local\"");
}
