// The recorder's schema (config/README.md) on top of SchemaReader: one reader per key, each
// checking type and range and writing its RecorderConfig field only when the value is good, so a
// document with several problems yields all of them.
#include <arpa/inet.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>
#include <new>
#include <regex>

#include "common/glob.hpp"
#include "config/recorder_config.hpp"
#include "json_reader.hpp"

namespace config {

using detail::describe;
using detail::Json;
using detail::SchemaReader;

namespace {

// Each enum's names, one table for reading (one_of) and writing (to_string).
template <class E>
using Names = std::pair<std::string_view, E>;
constexpr Names<Compression> kCompressionNames[] = {{"lz4", Compression::kLz4},
                                                    {"none", Compression::kNone}};
constexpr Names<FsyncPolicy> kFsyncNames[] = {{"none", FsyncPolicy::kNone},
                                              {"chunk", FsyncPolicy::kChunk},
                                              {"segment", FsyncPolicy::kSegment},
                                              {"interval", FsyncPolicy::kInterval}};
constexpr Names<RecorderMode> kModeNames[] = {{"record", RecorderMode::kRecord},
                                              {"snapshot", RecorderMode::kSnapshot}};
constexpr Names<LowSpacePolicy> kLowSpaceNames[] = {{"stop", LowSpacePolicy::kStop},
                                                    {"rotate", LowSpacePolicy::kRotate}};
constexpr Names<LogLevel> kLogLevelNames[] = {
    {"trace", LogLevel::kTrace}, {"debug", LogLevel::kDebug}, {"info", LogLevel::kInfo},
    {"warn", LogLevel::kWarn},   {"error", LogLevel::kError}, {"off", LogLevel::kOff}};

template <class E, size_t N>
std::string_view name_of(const Names<E> (&names)[N], E value) {
  for (const auto& [name, v] : names)
    if (v == value) return name;
  return "?";
}

}  // namespace

std::string_view to_string(Compression compression) {
  return name_of(kCompressionNames, compression);
}
std::string_view to_string(FsyncPolicy policy) {
  return name_of(kFsyncNames, policy);
}
std::string_view to_string(RecorderMode mode) {
  return name_of(kModeNames, mode);
}
std::string_view to_string(LowSpacePolicy policy) {
  return name_of(kLowSpaceNames, policy);
}
std::string_view to_string(LogLevel level) {
  return name_of(kLogLevelNames, level);
}

std::string ConfigErrors::to_string() const {
  std::string out;
  for (const auto& m : messages) {
    out += m;
    out += '\n';
  }
  return out;
}

bool Ipv4Network::contains(uint32_t ipv4_host_order) const {
  if (prefix_length == 0) return true;
  const uint32_t mask = prefix_length >= 32 ? ~0u : ~(~0u >> prefix_length);
  return (ipv4_host_order & mask) == (address & mask);
}

std::string Ipv4Network::to_string() const {
  return std::to_string(address >> 24) + "." + std::to_string((address >> 16) & 0xff) + "." +
         std::to_string((address >> 8) & 0xff) + "." + std::to_string(address & 0xff) + "/" +
         std::to_string(prefix_length);
}

namespace {

constexpr uint64_t kUnbounded = std::numeric_limits<uint64_t>::max();
// retention.max_age_s is turned into nanoseconds by storage; keep that within int64.
constexpr uint64_t kMaxAgeLimit =
    static_cast<uint64_t>(std::numeric_limits<int64_t>::max() / 1'000'000'000);
// Linux interface names are shorter than IFNAMSIZ (16).
constexpr size_t kMaxInterfaceName = 15;

bool is_ipv4(const std::string& s) {
  if (s.find('\0') != std::string::npos) return false;  // inet_pton would stop at it
  in_addr addr{};
  return inet_pton(AF_INET, s.c_str(), &addr) == 1;
}

// "", an interface name as the kernel accepts it (dev_valid_name, except that ':' is allowed for
// address labels such as "eth0:1"), or an IPv4 address.
bool is_interface(const std::string& s) {
  if (s.empty()) return true;  // automatic
  if (s.find_first_not_of("0123456789.") == std::string::npos) return is_ipv4(s);
  if (s.size() > kMaxInterfaceName || s == "." || s == "..") return false;
  for (const char c : s) {
    if (c == '/' || c == ' ' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return false;
  }
  return true;
}

// "A.B.C.D/N" (N in 0..32) or "A.B.C.D" (a /32). False when it is not; `why` is then replaced
// when the text is a network whose prefix length is over 32.
bool parse_network(const std::string& s, Ipv4Network& out, std::string& why) {
  const auto slash = s.find('/');
  const std::string address = s.substr(0, slash);
  in_addr addr{};
  if (address.find('\0') != std::string::npos || inet_pton(AF_INET, address.c_str(), &addr) != 1) {
    return false;
  }
  uint64_t prefix = 32;
  if (slash != std::string::npos) {
    const std::string digits = s.substr(slash + 1);
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) {
      return false;
    }
    prefix = digits.size() > 9 ? 33 : std::stoul(digits);  // no overflow
    if (prefix > 32) {
      why = "expected a prefix length in 0..32, got ";
      return false;
    }
  }
  out.address = ntohl(addr.s_addr);
  out.prefix_length = static_cast<uint8_t>(prefix);
  return true;
}

class RecorderSchema {
 public:
  RecorderSchema(SchemaReader& reader, RecorderConfig& config) : r_(reader), c_(config) {}

  void read(const Json& document) {
    bool saw_storage = false;
    const bool is_object = r_.object(
        document, "",
        {
            {"domain",
             [&](const Json& v, const std::string& p) { r_.integer(v, p, c_.domain, 0, 232); }},
            {"interface", [&](const Json& v, const std::string& p) { interface(v, p); }},
            {"peers", [&](const Json& v, const std::string& p) { peers(v, p); }},
            {"transports", [&](const Json& v, const std::string& p) { transports(v, p); }},
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
            {"stats_interval_s",
             [&](const Json& v, const std::string& p) { stats_interval(v, p); }},
            {"log", [&](const Json& v, const std::string& p) { log(v, p); }},
            {"types", [&](const Json& v, const std::string& p) { types(v, p); }},
            {"control", [&](const Json& v, const std::string& p) { control(v, p); }},
            {"metrics", [&](const Json& v, const std::string& p) { metrics(v, p); }},
        });
    if (is_object && !saw_storage) missing_path("/storage/path");
    // Storage refuses a queue that cannot hold one chunk.
    if (queue_ok_ && chunk_ok_ && c_.queue_max_bytes < c_.storage.chunk_max_bytes) {
      r_.fail("/queue_max_bytes", "expected at least /storage/chunk_max_bytes (" +
                                      std::to_string(c_.storage.chunk_max_bytes) + "), got " +
                                      std::to_string(c_.queue_max_bytes));
    }
  }

 private:
  void missing_path(const std::string& path) {
    r_.fail(path, "required key is missing (expected a string: the recording directory)");
  }

  void interface(const Json& v, const std::string& p) {
    if (v.is_string() && is_interface(v.get<std::string>())) {
      c_.interface = v.get<std::string>();
      return;
    }
    r_.fail(p,
            "expected an interface name (at most 15 characters, no '/' or spaces), an IPv4 "
            "address or \"\", got " +
                describe(v));
  }

  void peers(const Json& v, const std::string& p) {
    std::vector<std::string> out;
    const size_t errors = r_.error_count();
    r_.array(v, p, "IPv4 address strings", [&](const Json& e, const std::string& ep) {
      if (e.is_string() && is_ipv4(e.get<std::string>())) {
        out.push_back(e.get<std::string>());
      } else {
        r_.fail(ep, "expected an IPv4 address string, got " + describe(e));
      }
    });
    if (r_.error_count() == errors) c_.peers = std::move(out);
  }

  void transports(const Json& v, const std::string& p) {
    bool shm = false, udp = false;
    const size_t errors = r_.error_count();
    r_.array(v, p, "\"shm\" and/or \"udp\"", [&](const Json& e, const std::string& ep) {
      const std::string name = e.is_string() ? e.get<std::string>() : "";
      bool& seen = name == "shm" ? shm : udp;
      if (name != "shm" && name != "udp") {
        r_.fail(ep, "expected \"shm\" or \"udp\", got " + describe(e));
      } else if (seen) {
        r_.fail(ep, "\"" + name + "\" is listed twice");
      } else {
        seen = true;
      }
    });
    if (r_.error_count() != errors) return;
    if (!shm && !udp) {
      r_.fail(p, "expected at least one of \"shm\" and \"udp\", got []");
      return;
    }
    c_.transport_shm = shm;
    c_.transport_udp = udp;
  }

  // A list of topic patterns, each checked with common::check_glob.
  void patterns(const Json& v, const std::string& p, std::vector<std::string>& target,
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

  void topics(const Json& v, const std::string& p) {
    r_.object(
        v, p,
        {
            {"include", [&](const Json& e,
                            const std::string& ep) { patterns(e, ep, c_.topics.include, true); }},
            {"exclude", [&](const Json& e,
                            const std::string& ep) { patterns(e, ep, c_.topics.exclude, false); }},
            {"regex", [&](const Json& e, const std::string& ep) { regex(e, ep); }},
        });
  }

  void regex(const Json& v, const std::string& p) {
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

  void storage(const Json& v, const std::string& p) {
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
                 r_.fail(ep, "expected a non-empty string (the recording directory), got " +
                                 describe(e));
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
        });
    if (is_object && !saw_path) missing_path(p + "/path");
  }

  void retention(const Json& v, const std::string& p) {
    RetentionConfig& r = c_.storage.retention;
    r_.object(v, p,
              {
                  {"max_bytes",
                   [&](const Json& e, const std::string& ep) {
                     r_.integer(e, ep, r.max_bytes, 0, kUnbounded);
                   }},
                  {"max_age_s",
                   [&](const Json& e, const std::string& ep) {
                     seconds(e, ep, r.max_age, 0, kMaxAgeLimit);
                   }},
              });
  }

  void stats_interval(const Json& v, const std::string& p) {
    double s = 0;
    if (r_.number(v, p, s, 0, 3600)) c_.stats_interval = std::chrono::duration<double>(s);
  }

  void types(const Json& v, const std::string& p) {
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

  void snapshot(const Json& v, const std::string& p) {
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

  void metrics(const Json& v, const std::string& p) {
    r_.object(v, p,
              {
                  {"listen",
                   [&](const Json& e, const std::string& ep) {
                     if (e.is_string() && is_listen_address(e.get<std::string>())) {
                       c_.metrics.listen = e.get<std::string>();
                     } else {
                       r_.fail(ep,
                               "expected \"IPV4:PORT\" (e.g. \"127.0.0.1:9464\") or \"\", got " +
                                   describe(e));
                     }
                   }},
              });
  }

  // "" or IPV4:PORT with PORT in 0..65535.
  static bool is_listen_address(const std::string& s) {
    if (s.empty()) return true;
    const auto colon = s.rfind(':');
    if (colon == std::string::npos || colon + 1 == s.size() || s.size() - colon > 6) return false;
    for (size_t i = colon + 1; i < s.size(); ++i)
      if (s[i] < '0' || s[i] > '9') return false;
    return std::stoul(s.substr(colon + 1)) <= 65535 && is_ipv4(s.substr(0, colon));
  }

  void control(const Json& v, const std::string& p) {
    r_.object(v, p,
              {
                  {"socket",
                   [&](const Json& e, const std::string& ep) {
                     // sockaddr_un's sun_path holds 108 bytes with the terminating NUL.
                     if (e.is_string() && e.get<std::string>().size() <= 107 &&
                         e.get<std::string>().find('\0') == std::string::npos) {
                       c_.control.socket = e.get<std::string>();
                     } else {
                       r_.fail(ep,
                               "expected a socket path of at most 107 bytes without NUL "
                               "characters, or \"\" for none, got " +
                                   describe(e));
                     }
                   }},
                  {"dds", [&](const Json& e, const std::string& ep) { dds(e, ep); }},
                  {"allow", [&](const Json& e, const std::string& ep) { allow(e, ep); }},
              });
    if (v.is_object()) dds_needs_allow(v, p);
  }

  void dds(const Json& v, const std::string& p) {
    if (v.is_boolean()) {
      c_.control.dds = v.get<bool>();
    } else {
      r_.fail(p, "expected true or false, got " + describe(v));
    }
  }

  // DDS control is only as narrow as its allow list: an empty one is refused, not "everyone".
  void dds_needs_allow(const Json& v, const std::string& p) {
    if (!allow_ok_ || !c_.control.dds || !c_.control.allow.empty()) return;
    r_.fail(p + "/allow",
            "required when /control/dds is true (expected a non-empty array of the IPv4 "
            "networks whose participants may send commands, e.g. [\"127.0.0.1/32\"])" +
                std::string(v.contains("allow") ? ", got []" : ""));
  }

  void allow(const Json& v, const std::string& p) {
    std::vector<Ipv4Network> out;
    const size_t errors = r_.error_count();
    const bool is_array =
        r_.array(v, p, "IPv4 network strings", [&](const Json& e, const std::string& ep) {
          std::string why =
              "expected an IPv4 network such as \"198.18.0.0/15\" or an IPv4 "
              "address, got ";
          Ipv4Network net;
          if (e.is_string() && parse_network(e.get<std::string>(), net, why)) {
            out.push_back(net);
          } else {
            r_.fail(ep, why + describe(e));
          }
        });
    allow_ok_ = is_array && r_.error_count() == errors;
    if (allow_ok_) c_.control.allow = std::move(out);
  }

  void log(const Json& v, const std::string& p) {
    r_.object(v, p,
              {
                  {"level",
                   [&](const Json& e, const std::string& ep) {
                     r_.one_of(e, ep, c_.log.level, kLogLevelNames);
                   }},
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

  void milliseconds(const Json& v, const std::string& p, std::chrono::milliseconds& out,
                    uint64_t min, uint64_t max) {
    uint64_t n = 0;
    if (r_.integer(v, p, n, min, max)) out = std::chrono::milliseconds(static_cast<int64_t>(n));
  }

  void seconds(const Json& v, const std::string& p, std::chrono::seconds& out, uint64_t min,
               uint64_t max) {
    uint64_t n = 0;
    if (r_.integer(v, p, n, min, max)) out = std::chrono::seconds(static_cast<int64_t>(n));
  }

  SchemaReader& r_;
  RecorderConfig& c_;
  // False when queue_max_bytes / chunk_max_bytes were given but rejected (their cross-check is
  // then skipped; the defaults take part in it).
  bool queue_ok_ = true;
  bool chunk_ok_ = true;
  // False when control.allow was given and is not an array of networks (its errors say so; the
  // check that control.dds has an allow list is then skipped).
  bool allow_ok_ = true;
};

std::string prefix(std::string_view source_name) {
  return source_name.empty() ? std::string() : std::string(source_name) + ": ";
}

ConfigResult<RecorderConfig> parse_impl(std::string_view text, std::string_view source_name) {
  const std::string source(source_name);
  detail::JsonParse parsed = detail::parse_json(text);
  if (parsed.syntax_error) {
    std::string where = source;
    if (parsed.line > 0) {
      if (where.empty())
        where = "line " + std::to_string(parsed.line) + ", column " + std::to_string(parsed.column);
      else
        where += ":" + std::to_string(parsed.line) + ":" + std::to_string(parsed.column);
    }
    return ConfigErrors{{(where.empty() ? "" : where + ": ") + *parsed.syntax_error}};
  }

  SchemaReader reader(prefix(source_name));
  for (const auto& path : parsed.duplicate_keys) {
    reader.fail(path, "duplicate key (each key may appear once per object)");
  }
  RecorderConfig config;
  RecorderSchema(reader, config).read(parsed.value);
  if (reader.error_count() > 0) return ConfigErrors{std::move(reader.messages())};
  return config;
}

}  // namespace

ConfigResult<RecorderConfig> parse_recorder_config(std::string_view json_text,
                                                   std::string_view source_name) {
  try {
    return parse_impl(json_text, source_name);
  } catch (const std::bad_alloc&) {
    return ConfigErrors{{prefix(source_name) + "out of memory while parsing"}};
  } catch (const std::exception& e) {
    // Not expected (the SAX parser reports errors by return value); kept so that nothing escapes.
    return ConfigErrors{{prefix(source_name) + "cannot parse: " + e.what()}};
  }
}

ConfigResult<std::string> read_config_file(const std::filesystem::path& file) {
  // Configuration files are small; refuse to read anything unreasonably large.
  constexpr off_t kMaxConfigBytes = 16 << 20;
  const std::string name = file.string();
  auto cannot_read = [&](const std::string& why) {
    return ConfigErrors{{"cannot read " + name + ": " + why}};
  };
  const int fd = ::open(name.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return cannot_read(std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    return cannot_read(std::strerror(e));
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    return cannot_read(std::strerror(EISDIR));
  }
  if (S_ISREG(st.st_mode) && st.st_size > kMaxConfigBytes) {
    ::close(fd);
    return cannot_read("larger than " + std::to_string(kMaxConfigBytes >> 20) + " MiB");
  }
  std::string text;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int e = errno;
      ::close(fd);
      return cannot_read(std::strerror(e));
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > static_cast<size_t>(kMaxConfigBytes)) {
      ::close(fd);
      return cannot_read("larger than " + std::to_string(kMaxConfigBytes >> 20) + " MiB");
    }
  }
  ::close(fd);
  return text;
}

ConfigResult<RecorderConfig> load_recorder_config(const std::filesystem::path& file) {
  auto text = read_config_file(file);
  if (!text) return text.error();
  return parse_recorder_config(*text, file.string());
}

}  // namespace config
