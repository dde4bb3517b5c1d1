#include "json_reader.hpp"

#include <algorithm>
#include <cstdio>
#include <set>

namespace config::detail {

namespace {

// `text` with every byte that is not part of a well-formed UTF-8 sequence shown as <0xNN>
// (nlohmann quotes the offending input in its messages, raw).
std::string valid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const auto b = static_cast<unsigned char>(text[i]);
    size_t len = 0;
    uint32_t cp = 0;
    if (b < 0x80) {
      len = 1;
      cp = b;
    } else if ((b & 0xe0) == 0xc0) {
      len = 2;
      cp = b & 0x1f;
    } else if ((b & 0xf0) == 0xe0) {
      len = 3;
      cp = b & 0x0f;
    } else if ((b & 0xf8) == 0xf0) {
      len = 4;
      cp = b & 0x07;
    }
    bool ok = len > 0 && i + len <= text.size();
    for (size_t k = 1; ok && k < len; ++k) {
      const auto c = static_cast<unsigned char>(text[i + k]);
      ok = (c & 0xc0) == 0x80;
      cp = (cp << 6) | (c & 0x3f);
    }
    static constexpr uint32_t kMinForLength[] = {0, 0, 0x80, 0x800, 0x10000};
    ok = ok && cp >= kMinForLength[len] && cp <= 0x10ffff && (cp < 0xd800 || cp > 0xdfff);
    if (ok) {
      out.append(text.substr(i, len));
      i += len;
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "<0x%02X>", b);
      out += buf;
      ++i;
    }
  }
  return out;
}

// Builds an ordered_json from SAX events like nlohmann's own DOM parser, but returns errors
// instead of throwing them, remembers where each value sits (for duplicate-key paths) and bounds
// the nesting depth.
class DomBuilder {
 public:
  using number_integer_t = Json::number_integer_t;
  using number_unsigned_t = Json::number_unsigned_t;
  using number_float_t = Json::number_float_t;
  using string_t = Json::string_t;
  using binary_t = Json::binary_t;

  explicit DomBuilder(JsonParse& out) : out_(out) {}

  bool null() { return add(nullptr); }
  bool boolean(bool v) { return add(v); }
  bool number_integer(number_integer_t v) { return add(v); }
  bool number_unsigned(number_unsigned_t v) { return add(v); }
  bool number_float(number_float_t v, const string_t& /*text*/) { return add(v); }
  bool string(string_t& v) { return add(std::move(v)); }
  bool binary(binary_t& v) { return add(std::move(v)); }

  bool start_object(std::size_t /*elements*/) { return open(Json::value_t::object); }
  bool start_array(std::size_t /*elements*/) { return open(Json::value_t::array); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }

  bool key(string_t& k) {
    Frame& f = frames_.back();
    f.key = k;
    if (!f.keys.insert(k).second) out_.duplicate_keys.push_back(path());
    pending_member_ = &(*f.value)[k];
    return true;
  }

  bool parse_error(std::size_t position, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& ex) {
    error_position_ = position;
    // "[json.exception.parse_error.101] parse error at line 1, column 5: syntax error while
    // parsing value - ..." -> "syntax error while parsing value - ..."
    std::string_view what = ex.what();
    if (const auto bracket = what.find("] "); bracket != std::string_view::npos) {
      what.remove_prefix(bracket + 2);
    }
    if (what.starts_with("parse error")) {
      if (const auto colon = what.find(": "); colon != std::string_view::npos) {
        what.remove_prefix(colon + 2);
      }
    }
    out_.syntax_error = "invalid JSON: " + valid_utf8(what);
    return false;
  }

  // The 1-based count of characters read when the error was found, 0 if none.
  size_t error_position() const { return error_position_; }

 private:
  struct Frame {
    Json* value = nullptr;
    std::string key;             // objects: the current member's key
    size_t next_index = 0;       // arrays: index the next element gets
    std::set<std::string> keys;  // objects: keys seen so far
  };

  // Where the next value goes: the root, the end of the open array or the pending member.
  template <typename V>
  Json* place(V&& v) {
    if (frames_.empty()) {
      out_.value = Json(std::forward<V>(v));
      return &out_.value;
    }
    Frame& f = frames_.back();
    if (f.value->is_array()) {
      ++f.next_index;
      f.value->emplace_back(std::forward<V>(v));
      return &f.value->back();
    }
    *pending_member_ = Json(std::forward<V>(v));
    return pending_member_;
  }

  template <typename V>
  bool add(V&& v) {
    place(std::forward<V>(v));
    return true;
  }

  bool open(Json::value_t type) {
    if (frames_.size() >= kMaxJsonDepth) {
      out_.syntax_error = "invalid configuration: JSON nested deeper than " +
                          std::to_string(kMaxJsonDepth) + " levels";
      return false;
    }
    Json* v = place(type);
    frames_.push_back(Frame{v, {}, 0, {}});
    return true;
  }

  bool close() {
    frames_.pop_back();
    return true;
  }

  // JSON pointer of the member whose key was just read.
  std::string path() const {
    std::string p;
    for (const Frame& f : frames_) {
      p += '/';
      p += f.value->is_array() ? std::to_string(f.next_index - 1) : pointer_token(f.key);
    }
    return p;
  }

  JsonParse& out_;
  std::vector<Frame> frames_;
  Json* pending_member_ = nullptr;
  size_t error_position_ = 0;
};

}  // namespace

JsonParse parse_json(std::string_view text) {
  JsonParse out;
  DomBuilder builder(out);
  // With a SAX handler that returns false instead of throwing, nlohmann does not throw for bad
  // input; only allocation can (caught by the caller).
  const bool ok = Json::sax_parse(text, &builder, nlohmann::json::input_format_t::json,
                                  /*strict=*/true, /*ignore_comments=*/false);
  if (!ok) {
    if (!out.syntax_error) out.syntax_error = "invalid JSON";
    if (builder.error_position() > 0) {
      std::tie(out.line, out.column) = line_column(text, builder.error_position() - 1);
    }
    out.value = Json();
    out.duplicate_keys.clear();
  }
  return out;
}

std::pair<size_t, size_t> line_column(std::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  const std::string_view before = text.substr(0, offset);
  const size_t line = 1 + static_cast<size_t>(std::count(before.begin(), before.end(), '\n'));
  const size_t last_newline = before.rfind('\n');
  const size_t column = last_newline == std::string_view::npos ? offset + 1 : offset - last_newline;
  return {line, column};
}

size_t edit_distance(std::string_view a, std::string_view b) {
  // Three rolling rows of the Damerau (optimal string alignment) table.
  std::vector<size_t> two(b.size() + 1), one(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) one[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      cur[j] = std::min({one[j] + 1, cur[j - 1] + 1, one[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        cur[j] = std::min(cur[j], two[j - 2] + 1);
      }
    }
    std::swap(two, one);
    std::swap(one, cur);
  }
  return one[b.size()];
}

std::string_view closest_key(std::string_view key, const std::vector<std::string_view>& known) {
  std::string_view best;
  size_t best_distance = 0;
  for (std::string_view k : known) {
    // Allow about one edit per four characters of the known key (at least 1, at most 3), so
    // "fsnyc" finds "fsync" but "chunk_size" does not claim "chunk_max_bytes".
    const size_t allowed = std::clamp<size_t>(k.size() / 4, 1, 3);
    // The length difference alone is a lower bound; skip long junk keys without the O(n*m) table.
    if ((key.size() > k.size() ? key.size() - k.size() : k.size() - key.size()) > allowed) continue;
    const size_t d = edit_distance(key, k);
    if (d <= allowed && (best.empty() || d < best_distance)) {
      best = k;
      best_distance = d;
    }
  }
  return best;
}

std::string pointer_token(std::string_view key) {
  std::string out;
  out.reserve(key.size());
  for (const char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x",
                    static_cast<unsigned>(static_cast<unsigned char>(c)));
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

std::string describe(const Json& value) {
  constexpr size_t kMaxShown = 60;
  switch (value.type()) {
    case Json::value_t::array:
      return value.empty() ? "[]" : "an array";
    case Json::value_t::object:
      return value.empty() ? "{}" : "an object";
    case Json::value_t::discarded:
      return "nothing";
    default:
      break;
  }
  std::string text = value.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (text.size() > kMaxShown) {
    size_t cut = kMaxShown - 4;
    // Do not split a UTF-8 sequence.
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xc0) == 0x80) --cut;
    text.resize(cut);
    text += value.is_string() ? "...\"" : "...";
  }
  return text;
}

void SchemaReader::fail(const std::string& path, const std::string& what) {
  messages_.push_back(prefix_ + (path.empty() ? std::string("top level") : path) + ": " + what);
}

bool SchemaReader::object(const Json& value, const std::string& path,
                          const std::vector<Field>& fields) {
  if (!value.is_object()) {
    fail(path, "expected an object, got " + describe(value));
    return false;
  }
  for (auto it = value.begin(); it != value.end(); ++it) {
    const std::string& key = it.key();
    const Json& member = it.value();
    const auto field =
        std::find_if(fields.begin(), fields.end(), [&](const Field& f) { return f.key == key; });
    const std::string member_path = path + "/" + pointer_token(key);
    if (field != fields.end()) {
      field->read(member, member_path);
      continue;
    }
    std::vector<std::string_view> known;
    std::string list;
    for (const Field& f : fields) {
      known.push_back(f.key);
      if (!list.empty()) list += ", ";
      list += f.key;
    }
    std::string what = "unknown key";
    if (const auto guess = closest_key(key, known); !guess.empty()) {
      what += ", did you mean \"" + std::string(guess) + "\"?";
    }
    fail(member_path, what + " (known keys: " + list + ")");
  }
  return true;
}

bool SchemaReader::integer_value(const Json& value, const std::string& path, uint64_t& out,
                                 uint64_t min, uint64_t max) {
  bool in_range = false;
  if (value.is_number_unsigned()) {
    out = value.get<uint64_t>();
    in_range = out >= min && out <= max;
  } else if (value.is_number_integer()) {
    const int64_t v = value.get<int64_t>();
    out = static_cast<uint64_t>(v);
    in_range = v >= 0 && out >= min && out <= max;
  }
  if (in_range) return true;
  const std::string range = max == std::numeric_limits<uint64_t>::max()
                                ? ">= " + std::to_string(min)
                                : "in " + std::to_string(min) + ".." + std::to_string(max);
  fail(path, "expected an integer " + range + ", got " + describe(value));
  return false;
}

bool SchemaReader::number(const Json& value, const std::string& path, double& out,
                          double min_exclusive, double max) {
  if (value.is_number()) {
    const double v = value.get<double>();
    if (v > min_exclusive && v <= max) {
      out = v;
      return true;
    }
  }
  auto text = [](double d) {
    Json j = d;
    // 3600.0 reads better as 3600 in a message.
    if (d == static_cast<double>(static_cast<int64_t>(d))) j = static_cast<int64_t>(d);
    return j.dump();
  };
  fail(path, "expected a number > " + text(min_exclusive) + " and <= " + text(max) + ", got " +
                 describe(value));
  return false;
}

bool SchemaReader::string(const Json& value, const std::string& path, std::string& out) {
  if (!value.is_string()) {
    fail(path, "expected a string, got " + describe(value));
    return false;
  }
  out = value.get<std::string>();
  return true;
}

bool SchemaReader::array(const Json& value, const std::string& path, std::string_view what,
                         const ReadFn& element) {
  if (!value.is_array()) {
    fail(path, "expected an array of " + std::string(what) + ", got " + describe(value));
    return false;
  }
  size_t i = 0;
  for (const Json& e : value) element(e, path + "/" + std::to_string(i++));
  return true;
}

}  // namespace config::detail
