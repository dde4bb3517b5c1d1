// A configuration made of a file and command-line settings (config/recorder_config.hpp,
// compose_recorder_config): the settings are applied to the file's JSON tree, then the whole is
// validated by the one parser, so a flag is checked exactly as the same key in a file.
#include <nlohmann/json.hpp>

#include "config/recorder_config.hpp"

namespace config {
namespace {

using json = nlohmann::json;

// Whether the message `m` of file `source` is about `pointer` or a key below it
// ("rec.json: /storage/path: required key is missing" is about "/storage/path").
bool about(const std::string& m, const std::string& source, const std::string& pointer) {
  const std::string head = source + ": " + pointer;
  return m.rfind(head, 0) == 0 &&
         (m.size() == head.size() || m[head.size()] == ':' || m[head.size()] == '/');
}

// Sets `pointer` in `doc` to `value`, creating the objects on the way; false with a message
// when something on the way is not an object.
bool set_value(json& doc, const Setting& s, const json& value, std::string& error) {
  json* at = &doc;
  size_t pos = 1;
  while (pos <= s.pointer.size()) {
    const size_t next = std::min(s.pointer.find('/', pos), s.pointer.size());
    const std::string key = s.pointer.substr(pos, next - pos);
    if (at->is_null()) *at = json::object();
    if (!at->is_object()) {
      error = s.flag + ": " + s.pointer.substr(0, pos - 1) + " is not an object";
      return false;
    }
    at = &(*at)[key];
    pos = next + 1;
  }
  *at = value;
  return true;
}

}  // namespace

ConfigResult<Setting> parse_set_option(std::string_view text) {
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos) {
    return ConfigErrors{{"--set " + std::string(text) +
                         ": expected KEY=VALUE, e.g. storage.fsync=none or domain=3"}};
  }
  std::string key(text.substr(0, eq));
  if (key.empty() || key == "/") {
    return ConfigErrors{{"--set " + std::string(text) + ": the key is empty"}};
  }
  if (key[0] != '/') {
    for (char& c : key) c = c == '.' ? '/' : c;
    key.insert(key.begin(), '/');
  }
  const std::string value(text.substr(eq + 1));
  const json parsed = json::parse(value, nullptr, false);
  return Setting{key, parsed.is_discarded() ? json(value).dump() : value,
                 "--set " + std::string(text)};
}

ConfigResult<RecorderConfig> compose_recorder_config(const std::filesystem::path& file,
                                                     const std::vector<Setting>& settings) {
  if (settings.empty()) {
    return file.empty() ? parse_recorder_config("{}", "command line") : load_recorder_config(file);
  }
  json doc = json::object();
  if (!file.empty()) {
    auto text = read_config_file(file);
    if (!text) return text.error();
    const std::string name = file.string();
    auto alone = parse_recorder_config(*text, name);
    doc = json::parse(*text, nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) return alone;  // its syntax error
    if (!alone) {
      ConfigErrors kept;
      for (const auto& m : alone.error().messages) {
        bool replaced = false;
        for (const auto& s : settings) replaced = replaced || about(m, name, s.pointer);
        if (!replaced) kept.messages.push_back(m);
      }
      if (!kept.messages.empty()) return kept;
    }
  }
  for (const auto& s : settings) {
    const json value = json::parse(s.json, nullptr, false);
    std::string error;
    if (value.is_discarded()) return ConfigErrors{{s.flag + ": not a JSON value: " + s.json}};
    if (!set_value(doc, s, value, error)) return ConfigErrors{{error}};
  }
  auto composed = parse_recorder_config(doc.dump(), "command line");
  if (composed) return composed;
  // A problem with a key a flag set is named by the flag ("--domain 300: /domain: ...").
  ConfigErrors errors;
  for (std::string m : composed.error().messages) {
    for (auto s = settings.rbegin(); s != settings.rend(); ++s) {
      if (about(m, "command line", s->pointer)) {
        m = s->flag + m.substr(std::string("command line").size());
        break;
      }
    }
    errors.messages.push_back(std::move(m));
  }
  return errors;
}

}  // namespace config
