// config/README.md is the user's reference: its key table must list exactly the keys the parser
// knows, and each documented default must be what the parser gives when the key is left out.
#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "test_util.hpp"

using namespace config;

namespace {

// Key (dotted, as in the README) -> documented default as JSON text ("" when there is none).
std::map<std::string, std::string> readme_keys() {
  std::ifstream in(PUBSUB_CONFIG_DIR "/README.md");
  REQUIRE(in.good());
  std::map<std::string, std::string> keys;
  const std::regex row(R"(^\| `([a-z0-9_.]+)` \|[^|]*\|[^|]*\| ([^|]*) \|)");
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (!std::regex_search(line, m, row)) continue;
    std::string def = m[2].str();
    if (def.size() >= 2 && def.front() == '`' && def.back() == '`') {
      def = def.substr(1, def.size() - 2);
    } else {
      def.clear();
    }
    keys[m[1].str()] = def;
  }
  return keys;
}

// Every key the parser knows, read off the "known keys" lists of its unknown-key messages.
std::set<std::string> parser_keys() {
  const auto messages = config_test::errors_of(
      R"({"zz":1,"topics":{"zz":1},"storage":{"path":"x","zz":1,"retention":{"zz":1}},)"
      R"("log":{"zz":1},"types":{"zz":1},"control":{"zz":1},"metrics":{"zz":1},"snapshot":{"zz":1},"discovery":{"zz":1}})");
  std::set<std::string> keys;
  const std::regex form(R"(^/(.*)zz: unknown key \(known keys: (.*)\)$)");
  for (const auto& msg : messages) {
    std::smatch m;
    REQUIRE(std::regex_match(msg, m, form));
    std::string prefix = m[1].str();
    std::replace(prefix.begin(), prefix.end(), '/', '.');
    std::stringstream list(m[2].str());
    for (std::string k; std::getline(list, k, ',');) {
      if (k.front() == ' ') k.erase(0, 1);
      keys.insert(prefix + k);
    }
  }
  // Objects are documented through their members.
  for (const char* object : {"topics", "storage", "storage.retention", "log", "types", "control",
                             "metrics", "snapshot", "discovery"}) {
    REQUIRE(keys.erase(object) == 1);
  }
  return keys;
}

// {"storage":{"path":"x"}} with the dotted key set to `value`.
std::string doc_with_dotted(std::string key, const std::string& value) {
  std::replace(key.begin(), key.end(), '.', '/');
  return config_test::doc_with("/" + key, value);
}

}  // namespace

TEST_CASE("README documents exactly the keys the parser knows") {
  std::set<std::string> documented;
  for (const auto& [key, def] : readme_keys()) documented.insert(key);
  CHECK(documented.size() == 46);
  CHECK(documented == parser_keys());
}

TEST_CASE("README defaults are the parser's defaults") {
  RecorderConfig defaults;
  defaults.storage.path = "x";
  for (const auto& [key, def] : readme_keys()) {
    INFO(key << " = " << def);
    if (key == "storage.path") {
      CHECK(def.empty());
      continue;
    }
    REQUIRE_FALSE(def.empty());
    CHECK(config_test::parsed(doc_with_dotted(key, def)) == defaults);
  }
}

TEST_CASE("the example file sets every documented key") {
  std::ifstream in(PUBSUB_CONFIG_DIR "/examples/recorder.json");
  std::stringstream text;
  text << in.rdbuf();
  for (const auto& [key, def] : readme_keys()) {
    const std::string leaf = key.substr(key.rfind('.') + 1);
    INFO(key);
    CHECK(text.str().find("\"" + leaf + "\":") != std::string::npos);
  }
}
