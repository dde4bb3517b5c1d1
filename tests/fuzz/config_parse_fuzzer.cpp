// Fuzz target: config::parse_recorder_config over arbitrary bytes. Beyond "no crash": nothing may
// escape as an exception (the library promises none), a refused document has at least one
// message and every message is one non-empty line of valid UTF-8 that starts with the source
// name; an accepted document satisfies the schema's ranges.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "config/recorder_config.hpp"

namespace {

bool valid_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    const size_t len = b < 0x80             ? 1
                       : (b & 0xe0) == 0xc0 ? 2
                       : (b & 0xf0) == 0xe0 ? 3
                       : (b & 0xf8) == 0xf0 ? 4
                                            : 0;
    if (len == 0 || i + len > s.size()) return false;
    for (size_t k = 1; k < len; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return false;
    }
    i += len;
  }
  return true;
}

void check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto r = config::parse_recorder_config(text, "fuzz.json");
  if (!r.ok()) {
    check(!r.error().messages.empty());
    for (const std::string& m : r.error().messages) {
      check(m.starts_with("fuzz.json"));
      check(m.size() > 10);
      check(m.find('\n') == std::string::npos && m.find('\r') == std::string::npos);
      check(valid_utf8(m));
    }
    return 0;
  }
  const config::RecorderConfig& c = r.value();
  check(!c.storage.path.empty());
  check(!c.topics.include.empty());
  check(c.domain <= 232);
  check(c.storage.chunk_max_bytes >= 4096 && c.storage.chunk_max_bytes <= (256u << 20));
  check(c.queue_max_bytes >= c.storage.chunk_max_bytes);
  check(c.max_sample_bytes >= 1024 && c.max_sample_bytes <= config::kMaxSampleBytesLimit);
  check(c.stats_interval.count() > 0 && c.stats_interval.count() <= 3600);
  check(c.storage.chunk_max_age.count() >= 1 && c.storage.fsync_interval.count() >= 1);
  check(c.storage.retention.max_age.count() >= 0);
  return 0;
}
