// Private helpers of the config parser: strict JSON parsing that never throws (a SAX handler
// building an ordered_json, so values keep document order, duplicate keys are found and every
// syntax error gets a position), and SchemaReader, which walks a parsed document against a schema
// and collects one message per problem instead of stopping at the first.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace config::detail {

using Json = nlohmann::ordered_json;

// Objects and arrays nested deeper than this are refused (the schema needs three levels); keeps
// recursion in later walks over the document bounded.
inline constexpr size_t kMaxJsonDepth = 64;

struct JsonParse {
  Json value;
  // Set when the text is not valid JSON: "invalid JSON: <what>" without any prefix.
  std::optional<std::string> syntax_error;
  // 1-based line and byte column of the syntax error (0 when unknown).
  size_t line = 0;
  size_t column = 0;
  // JSON pointers of keys that appear twice in one object (the last value is kept).
  std::vector<std::string> duplicate_keys;
};

// Parses strict JSON (RFC 8259: no comments, no trailing commas). Never throws.
JsonParse parse_json(std::string_view text);

// 1-based line and byte column of the character at 0-based `offset` (clamped to the text).
std::pair<size_t, size_t> line_column(std::string_view text, size_t offset);

// Optimal string alignment distance: insertions, deletions, substitutions and transpositions of
// adjacent characters each count 1.
size_t edit_distance(std::string_view a, std::string_view b);

// The known key a mistyped key most likely meant, or "" when none is close.
std::string_view closest_key(std::string_view key, const std::vector<std::string_view>& known);

// One JSON pointer reference token: "~" -> "~0", "/" -> "~1" (RFC 6901), control characters as
// \u00XX so a message stays one printable line.
std::string pointer_token(std::string_view key);

// A JSON value as an error message shows what was found: scalars as JSON text (long strings
// shortened), "[]" / "{}" when empty, else "an array" / "an object".
std::string describe(const Json& value);

// Walks a document, collecting "PREFIX/json/path: message" lines.
class SchemaReader {
 public:
  using ReadFn = std::function<void(const Json& value, const std::string& path)>;
  struct Field {
    std::string_view key;
    ReadFn read;
  };

  // `prefix` starts every message ("recorder.json: " or "").
  explicit SchemaReader(std::string prefix) : prefix_(std::move(prefix)) {}

  // Records "PREFIX<path>: <what>"; an empty path stands for the document itself.
  void fail(const std::string& path, const std::string& what);
  std::vector<std::string>& messages() { return messages_; }
  size_t error_count() const { return messages_.size(); }

  // An object whose keys must all be in `fields`: each present key's value goes to its reader in
  // document order; unknown keys are errors naming the known ones (and the closest, if close).
  // Returns false (after recording the error) when `value` is not an object.
  bool object(const Json& value, const std::string& path, const std::vector<Field>& fields);

  // A JSON integer in [min, max] (max == UINT64_MAX reads as ">= min"). `out` is written only
  // when the value is acceptable; returns whether it was.
  template <typename T>
  bool integer(const Json& value, const std::string& path, T& out, uint64_t min, uint64_t max) {
    uint64_t v = 0;
    if (!integer_value(value, path, v, min, max)) return false;
    out = static_cast<T>(v);
    return true;
  }
  bool integer_value(const Json& value, const std::string& path, uint64_t& out, uint64_t min,
                     uint64_t max);

  // A JSON number (integer or not) in (min_exclusive, max].
  bool number(const Json& value, const std::string& path, double& out, double min_exclusive,
              double max);

  bool string(const Json& value, const std::string& path, std::string& out);

  // A string that is one of `choices`.
  template <typename E>
  bool one_of(const Json& value, const std::string& path, E& out,
              std::initializer_list<std::pair<std::string_view, E>> choices) {
    return one_of(value, path, out, std::span(choices.begin(), choices.size()));
  }
  // The same with a table of names (one table per enum: recorder_config.cpp's k*Names).
  template <class E>
  bool one_of(const Json& value, const std::string& path, E& out,
              std::type_identity_t<std::span<const std::pair<std::string_view, E>>> choices) {
    if (value.is_string()) {
      const auto& s = value.get_ref<const std::string&>();
      for (const auto& [name, e] : choices) {
        if (s == name) {
          out = e;
          return true;
        }
      }
    }
    std::string expected = "expected one of ";
    bool first = true;
    for (const auto& c : choices) {
      if (!first) expected += ", ";
      first = false;
      expected += '"';
      expected += c.first;
      expected += '"';
    }
    fail(path, expected + ", got " + describe(value));
    return false;
  }

  // An array: each element goes to `element` with its path. `what` completes "expected an array
  // of ...". Returns false when `value` is not an array.
  bool array(const Json& value, const std::string& path, std::string_view what,
             const ReadFn& element);

 private:
  std::string prefix_;
  std::vector<std::string> messages_;
};

}  // namespace config::detail
