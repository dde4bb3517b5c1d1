// RecorderSchema: the document and its top-level keys, topics, types, log, and the duration
// helpers (recorder_schema.hpp has the overview).
#include <regex>

#include "common/glob.hpp"
#include "recorder_schema.hpp"

namespace config::detail {

void RecorderSchema::read(const Json& document) {
  bool saw_storage = false;
  const bool is_object = r_.object(
      document, "",
      {
          {"domain",
           [&](const Json& v, const std::string& p) { r_.integer(v, p, c_.domain, 0, 232); }},
          {"interface", [&](const Json& v, const std::string& p) { interface(v, p); }},
          {"peers", [&](const Json& v, const std::string& p) { peers(v, p); }},
          {"transports", [&](const Json& v, const std::string& p) { transports(v, p); }},
          {"discovery", [&](const Json& v, const std::string& p) { discovery(v, p); }},
          {"topics", [&](const Json& v, const std::string& p) { topics(v, p); }},
          {"mode",
           [&](const Json& v, const std::string& p) { r_.one_of(v, p, c_.mode, kModeNames); }},
          {"snapshot", [&](const Json& v, const std::string& p) { snapshot(v, p); }},
          {"storage",
           [&](const Json& v, const std::string& p) {
             saw_storage = true;
             storage(v, p);
           }},
          {"queue_max_bytes",
           [&](const Json& v, const std::string& p) {
             queue_ok_ = r_.integer(v, p, c_.queue_max_bytes, 1u << 20, 16ull << 30);
           }},
          {"max_sample_bytes",
           [&](const Json& v, const std::string& p) {
             r_.integer(v, p, c_.max_sample_bytes, 1024, kMaxSampleBytesLimit);
           }},
          {"stats_interval_s", [&](const Json& v, const std::string& p) { stats_interval(v, p); }},
          {"log", [&](const Json& v, const std::string& p) { log(v, p); }},
          {"types", [&](const Json& v, const std::string& p) { types(v, p); }},
          {"control", [&](const Json& v, const std::string& p) { control(v, p); }},
          {"metrics", [&](const Json& v, const std::string& p) { metrics(v, p); }},
      });
  if (is_object && !saw_storage) missing_path("/storage/path");
  armed_needs_control();
  // Storage refuses a queue that cannot hold one chunk.
  if (queue_ok_ && chunk_ok_ && c_.queue_max_bytes < c_.storage.chunk_max_bytes) {
    r_.fail("/queue_max_bytes", "expected at least /storage/chunk_max_bytes (" +
                                    std::to_string(c_.storage.chunk_max_bytes) + "), got " +
                                    std::to_string(c_.queue_max_bytes));
  }
}

// An armed recorder waits for `start`: something must be able to send it.
void RecorderSchema::armed_needs_control() {
  if (!c_.control.armed) return;
  if (c_.mode != RecorderMode::kRecord)
    r_.fail("/control/armed",
            "waits for a start command, which mode \"snapshot\" does not take (it always "
            "buffers): set /mode to \"record\", or leave armed out");
  else if (c_.control.socket.empty() && !c_.control.dds)
    r_.fail("/control/armed",
            "waits for a start command, but no control path can send one: give "
            "/control/socket a path or set /control/dds to true, or leave armed out");
}

void RecorderSchema::missing_path(const std::string& path) {
  r_.fail(path, "required key is missing (expected a string: the recording directory)");
}

void RecorderSchema::patterns(const Json& v, const std::string& p, std::vector<std::string>& target,
                              bool non_empty) {
  std::vector<std::string> out;
  const size_t errors = r_.error_count();
  if (!r_.array(v, p, "topic pattern strings", [&](const Json& e, const std::string& ep) {
        if (!e.is_string()) {
          r_.fail(ep, "expected a topic pattern string, got " + describe(e));
          return;
        }
        const auto& pattern = e.get_ref<const std::string&>();
        if (const auto ok = common::check_glob(pattern); !ok) {
          r_.fail(ep, "invalid topic pattern " + describe(e) + ": " + ok.error().message);
          return;
        }
        out.push_back(pattern);
      })) {
    return;
  }
  if (non_empty && v.empty()) {
    r_.fail(p, "expected a non-empty array of topic pattern strings, got []");
    return;
  }
  if (r_.error_count() == errors) target = std::move(out);
}

void RecorderSchema::topics(const Json& v, const std::string& p) {
  r_.object(
      v, p,
      {
          {"include",
           [&](const Json& e, const std::string& ep) { patterns(e, ep, c_.topics.include, true); }},
          {"exclude", [&](const Json& e,
                          const std::string& ep) { patterns(e, ep, c_.topics.exclude, false); }},
          {"regex", [&](const Json& e, const std::string& ep) { regex(e, ep); }},
          {"writers",
           [&](const Json& e, const std::string& ep) {
             r_.one_of(e, ep, c_.topics.writers, kWritersNames);
           }},
      });
}

void RecorderSchema::regex(const Json& v, const std::string& p) {
  std::string text;
  if (!r_.string(v, p, text)) return;
  try {
    (void)std::regex(text, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    r_.fail(p, "invalid regular expression " + describe(v) + ": " + e.what());
    return;
  }
  c_.topics.regex = std::move(text);
}

void RecorderSchema::stats_interval(const Json& v, const std::string& p) {
  double s = 0;
  if (r_.number(v, p, s, 0, 3600)) c_.stats_interval = std::chrono::duration<double>(s);
}

void RecorderSchema::types(const Json& v, const std::string& p) {
  r_.object(v, p,
            {
                {"idl",
                 [&](const Json& e, const std::string& ep) {
                   std::vector<std::filesystem::path> files;
                   const size_t errors = r_.error_count();
                   r_.array(e, ep, "IDL file paths", [&](const Json& f, const std::string& fp) {
                     if (f.is_string() && !f.get<std::string>().empty() &&
                         f.get<std::string>().find('\0') == std::string::npos) {
                       files.emplace_back(f.get<std::string>());
                     } else {
                       r_.fail(fp, "expected a non-empty path without NUL characters, got " +
                                       describe(f));
                     }
                   });
                   if (r_.error_count() == errors) c_.types.idl = std::move(files);
                 }},
            });
}

void RecorderSchema::log(const Json& v, const std::string& p) {
  r_.object(
      v, p,
      {
          {"level", [&](const Json& e,
                        const std::string& ep) { r_.one_of(e, ep, c_.log.level, kLogLevelNames); }},
          {"file",
           [&](const Json& e, const std::string& ep) {
             std::string file;
             if (!r_.string(e, ep, file)) return;
             if (file.find('\0') != std::string::npos) {
               r_.fail(ep, "expected a path without NUL characters, got " + describe(e));
               return;
             }
             c_.log.file = file;
           }},
      });
}

void RecorderSchema::milliseconds(const Json& v, const std::string& p,
                                  std::chrono::milliseconds& out, uint64_t min, uint64_t max) {
  uint64_t n = 0;
  if (r_.integer(v, p, n, min, max)) out = std::chrono::milliseconds(static_cast<int64_t>(n));
}

void RecorderSchema::seconds(const Json& v, const std::string& p, std::chrono::seconds& out,
                             uint64_t min, uint64_t max) {
  uint64_t n = 0;
  if (r_.integer(v, p, n, min, max)) out = std::chrono::seconds(static_cast<int64_t>(n));
}

}  // namespace config::detail
