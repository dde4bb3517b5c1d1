// Text that is not JSON: one message with file, line, column and the parser's reason; and the
// private helpers behind messages (positions, edit distance, pointer escaping, value display).
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <regex>

#include "json_reader.hpp"
#include "test_util.hpp"

using namespace config;

namespace {

std::string syntax_error(std::string_view text, std::string_view source = "recorder.json") {
  auto r = parse_recorder_config(text, source);
  INFO("text: " << text);
  REQUIRE_FALSE(r.ok());
  REQUIRE(r.error().messages.size() == 1);
  return r.error().messages[0];
}

// nlohmann's own "line L, column C" for the text, to compare our position with.
std::string nlohmann_position(const std::string& text) {
  try {
    const auto parsed = nlohmann::json::parse(text);
    (void)parsed;
  } catch (const nlohmann::json::parse_error& e) {
    std::smatch m;
    const std::string what = e.what();
    if (std::regex_search(what, m, std::regex("at line ([0-9]+), column ([0-9]+)"))) {
      return m[1].str() + ":" + m[2].str();
    }
  }
  return "?";
}

}  // namespace

TEST_CASE("parse_recorder_config reports invalid JSON with file, line and column") {
  CHECK(syntax_error("{\n  \"storage\": {\n    \"path\": \"x\",\n  }\n}\n") ==
        "recorder.json:4:3: invalid JSON: syntax error while parsing object key - unexpected "
        "'}'; expected string literal");
  CHECK(syntax_error("") ==
        "recorder.json:1:1: invalid JSON: syntax error while parsing value - unexpected end of "
        "input; expected '[', '{', or a literal");
  CHECK(syntax_error("{\"storage\": {\"path\": \"x\"}}\n}") ==
        "recorder.json:2:1: invalid JSON: syntax error while parsing value - unexpected '}'; "
        "expected end of input");
  CHECK(syntax_error("{\"domain\": 1e999, \"storage\": {\"path\": \"x\"}}") ==
        "recorder.json:1:16: invalid JSON: number overflow parsing '1e999'");
  // Comments are not JSON.
  CHECK(syntax_error("// comment\n{}") ==
        "recorder.json:1:1: invalid JSON: syntax error while parsing value - invalid literal; "
        "last read: '/'");
}

TEST_CASE("parse_recorder_config positions agree with nlohmann's own line and column") {
  const std::string texts[] = {
      "{\"a\": tru}",    "{\"storage\": {\"path\": \"x\"}, }",
      "[1, 2,\n 3,,]",   "{\"s\": \"bad \\q escape\"}",
      "\n\n\n{\"a\" 1}", "{\"a\": 1}}",
      "{\"a\": [1, 2}",  "{\"a\": \"x\"\n \"b\": 1}",
  };
  for (const auto& text : texts) {
    INFO("text: " << text);
    const std::string message = syntax_error(text);
    const std::string expected_prefix =
        "recorder.json:" + nlohmann_position(text) + ": invalid JSON: ";
    CHECK(message.substr(0, expected_prefix.size()) == expected_prefix);
  }
}

TEST_CASE("parse_recorder_config points at the offending character where nlohmann says column 0") {
  // nlohmann reports "line 3, column 0" here (its column is lost when it puts a character
  // back); the offending character is the '1' of "01".
  CHECK(syntax_error("{\n\n   \"domain\": 01\n}") ==
        "recorder.json:3:15: invalid JSON: syntax error while parsing object - unexpected number "
        "literal; expected '}'");
  // nlohmann: "line 2, column 0"; the problem is the line break at the end of line 1.
  CHECK(syntax_error("{\"s\": \"unterminated\n\"}") ==
        "recorder.json:1:20: invalid JSON: syntax error while parsing value - invalid string: "
        "control character U+000A (LF) must be escaped to \\u000A or \\n; last read: "
        "'\"unterminated<U+000A>'");
}

TEST_CASE("parse_recorder_config keeps syntax messages valid UTF-8") {
  CHECK(syntax_error("{\"s\": \"\xff\"}") ==
        "recorder.json:1:8: invalid JSON: syntax error while parsing value - invalid string: "
        "ill-formed UTF-8 byte; last read: '\"<0xFF>'");
}

TEST_CASE("parse_recorder_config without a source name states line and column in words") {
  CHECK(syntax_error("{\n  x\n}", "") ==
        "line 2, column 3: invalid JSON: syntax error while parsing object key - invalid "
        "literal; last read: '{<U+000A>  x'; expected string literal");
}

TEST_CASE("parse_recorder_config refuses deeply nested documents without recursing") {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  CHECK(syntax_error(deep) ==
        "recorder.json: invalid configuration: JSON nested deeper than 64 levels");
  const std::string ok_depth = "{\"storage\":{\"path\":\"x\"},\"peers\":" + std::string(40, '[') +
                               std::string(40, ']') + "}";
  CHECK(config_test::only_error(ok_depth) ==
        "/peers/0: expected an IPv4 address string, got an array");
}

TEST_CASE("line_column counts lines and byte columns from 1") {
  using detail::line_column;
  CHECK(line_column("", 0) == std::pair<size_t, size_t>{1, 1});
  CHECK(line_column("abc", 2) == std::pair<size_t, size_t>{1, 3});
  CHECK(line_column("ab\ncd", 3) == std::pair<size_t, size_t>{2, 1});
  CHECK(line_column("ab\ncd", 4) == std::pair<size_t, size_t>{2, 2});
  CHECK(line_column("ab\n", 3) == std::pair<size_t, size_t>{2, 1});
  CHECK(line_column("ab", 99) == std::pair<size_t, size_t>{1, 3});  // clamped to the end
}

TEST_CASE("edit_distance counts insertions, deletions, substitutions and transpositions") {
  using detail::edit_distance;
  CHECK(edit_distance("", "") == 0);
  CHECK(edit_distance("fsync", "fsync") == 0);
  CHECK(edit_distance("", "abc") == 3);
  CHECK(edit_distance("abc", "") == 3);
  CHECK(edit_distance("fsnyc", "fsync") == 1);  // transposition
  CHECK(edit_distance("domian", "domain") == 1);
  CHECK(edit_distance("chunk_max_byte", "chunk_max_bytes") == 1);
  CHECK(edit_distance("kitten", "sitting") == 3);
  CHECK(edit_distance("chunk_size", "chunk_max_bytes") > 3);
}

TEST_CASE("closest_key suggests only keys within about one edit per four characters") {
  using detail::closest_key;
  const std::vector<std::string_view> known{"path", "chunk_max_bytes", "chunk_max_age_ms", "fsync"};
  CHECK(closest_key("pth", known) == "path");
  CHECK(closest_key("pa", known).empty());
  CHECK(closest_key("chunk_max_ages_ms", known) == "chunk_max_age_ms");
  CHECK(closest_key("chunk_max_byes", known) == "chunk_max_bytes");
  CHECK(closest_key("chunk_size", known).empty());
  CHECK(closest_key("FSYNC", known).empty());  // five substitutions
  CHECK(closest_key("", known).empty());
}

TEST_CASE("pointer_token escapes '~', '/' and control characters") {
  using detail::pointer_token;
  CHECK(pointer_token("plain_key") == "plain_key");
  CHECK(pointer_token("a/b") == "a~1b");
  CHECK(pointer_token("a~b") == "a~0b");
  CHECK(pointer_token("~/") == "~0~1");
  CHECK(pointer_token(std::string_view("a\0b", 3)) == "a\\u0000b");
  CHECK(pointer_token("tab\there") == "tab\\u0009here");
}

TEST_CASE("describe shows scalars as JSON and containers by kind") {
  using detail::describe;
  using detail::Json;
  CHECK(describe(Json(nullptr)) == "null");
  CHECK(describe(Json(true)) == "true");
  CHECK(describe(Json(-3)) == "-3");
  CHECK(describe(Json(1.5)) == "1.5");
  CHECK(describe(Json("a\"b")) == R"("a\"b")");
  CHECK(describe(Json::array()) == "[]");
  CHECK(describe(Json::array({1})) == "an array");
  CHECK(describe(Json::object()) == "{}");
  CHECK(describe(Json::object({{"a", 1}})) == "an object");
  // Long strings are cut at a UTF-8 character boundary.
  std::string s;
  for (int i = 0; i < 40; ++i) s += "\xc3\xa9";  // 'é', two bytes each
  const std::string shown = describe(Json(s));
  CHECK(shown.size() <= 60);
  CHECK(shown.substr(shown.size() - 4) == "...\"");
  CHECK(Json::parse(shown).get<std::string>().size() % 2 == 1);  // '"' + whole 'é's + "..."
}
