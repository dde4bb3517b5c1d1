// RecorderSchema: where and how the recording is written: storage, retention, snapshot
// (recorder_schema.hpp has the overview).
#include "recorder_schema.hpp"

namespace config::detail {

void RecorderSchema::storage(const Json& v, const std::string& p) {
  StorageConfig& s = c_.storage;
  bool saw_path = false;
  const bool is_object = r_.object(
      v, p,
      {
          {"path",
           [&](const Json& e, const std::string& ep) {
             saw_path = true;
             std::string path;
             if (!e.is_string() || e.get_ref<const std::string&>().empty()) {
               r_.fail(ep,
                       "expected a non-empty string (the recording directory), got " + describe(e));
             } else if (e.get_ref<const std::string&>().find('\0') != std::string::npos) {
               r_.fail(ep, "expected a path without NUL characters, got " + describe(e));
             } else {
               s.path = e.get<std::string>();
             }
           }},
          {"chunk_max_bytes",
           [&](const Json& e, const std::string& ep) {
             chunk_ok_ = r_.integer(e, ep, s.chunk_max_bytes, 4096, 256u << 20);
           }},
          {"chunk_max_age_ms",
           [&](const Json& e, const std::string& ep) {
             milliseconds(e, ep, s.chunk_max_age, 1, 60'000);
           }},
          {"segment_max_bytes",
           [&](const Json& e, const std::string& ep) {
             r_.integer(e, ep, s.segment_max_bytes, 1u << 20, 1ull << 40);
           }},
          {"segment_max_duration_s",
           [&](const Json& e, const std::string& ep) {
             seconds(e, ep, s.segment_max_duration, 0, 604'800);
           }},
          {"compression",
           [&](const Json& e, const std::string& ep) {
             r_.one_of(e, ep, s.compression, kCompressionNames);
           }},
          {"lz4_acceleration",
           [&](const Json& e, const std::string& ep) {
             r_.integer(e, ep, s.lz4_acceleration, 1, 65537);
           }},
          {"fsync",
           [&](const Json& e, const std::string& ep) { r_.one_of(e, ep, s.fsync, kFsyncNames); }},
          {"fsync_interval_ms",
           [&](const Json& e, const std::string& ep) {
             milliseconds(e, ep, s.fsync_interval, 1, 3'600'000);
           }},
          {"page_cache",
           [&](const Json& e, const std::string& ep) {
             r_.one_of(e, ep, s.drop_page_cache, {{"drop", true}, {"keep", false}});
           }},
          {"direct_io",
           [&](const Json& e, const std::string& ep) {
             r_.one_of(e, ep, s.direct_io, {{"auto", true}, {"off", false}});
           }},
          {"retention", [&](const Json& e, const std::string& ep) { retention(e, ep); }},
          {"min_free_bytes",
           [&](const Json& e, const std::string& ep) {
             r_.integer(e, ep, s.min_free_bytes, 0, kUnbounded);
           }},
          {"on_low_space",
           [&](const Json& e, const std::string& ep) {
             r_.one_of(e, ep, s.on_low_space, kLowSpaceNames);
           }},
          {"on_segment_closed",
           [&](const Json& e, const std::string& ep) {
             if (e.is_string() && e.get_ref<const std::string&>().find('\0') != std::string::npos) {
               r_.fail(ep, "expected a shell command without NUL characters, got " + describe(e));
               return;
             }
             r_.string(e, ep, s.on_segment_closed);
           }},
      });
  if (is_object && !saw_path) missing_path(p + "/path");
}

void RecorderSchema::retention(const Json& v, const std::string& p) {
  RetentionConfig& r = c_.storage.retention;
  r_.object(
      v, p,
      {
          {"max_bytes",
           [&](const Json& e, const std::string& ep) {
             r_.integer(e, ep, r.max_bytes, 0, kUnbounded);
           }},
          {"max_age_s", [&](const Json& e,
                            const std::string& ep) { seconds(e, ep, r.max_age, 0, kMaxAgeLimit); }},
      });
}

void RecorderSchema::snapshot(const Json& v, const std::string& p) {
  r_.object(v, p,
            {
                {"before_s",
                 [&](const Json& e, const std::string& ep) {
                   double s = 0;
                   if (r_.number(e, ep, s, 0, 3600))
                     c_.snapshot.before = std::chrono::duration<double>(s);
                 }},
                {"after_s",
                 [&](const Json& e, const std::string& ep) {
                   // 0 is allowed: the snapshot ends at the trigger.
                   if (e.is_number() && e.get<double>() >= 0 && e.get<double>() <= 3600) {
                     c_.snapshot.after = std::chrono::duration<double>(e.get<double>());
                   } else {
                     r_.fail(ep, "expected a number >= 0 and <= 3600, got " + describe(e));
                   }
                 }},
                {"max_bytes",
                 [&](const Json& e, const std::string& ep) {
                   r_.integer(e, ep, c_.snapshot.max_bytes, 1u << 20, 64ull << 30);
                 }},
            });
}

}  // namespace config::detail
