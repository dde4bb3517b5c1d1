// The recorder's configuration: the enum names, ConfigErrors, Ipv4Network, and parsing a file or
// text with RecorderSchema (recorder_schema.hpp, which names the files of the schema).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>

#include "config/recorder_config.hpp"
#include "recorder_schema.hpp"

namespace config {

using detail::name_of;
using detail::SchemaReader;

std::string_view to_string(Compression compression) {
  return name_of(detail::kCompressionNames, compression);
}
std::string_view to_string(FsyncPolicy policy) {
  return name_of(detail::kFsyncNames, policy);
}
std::string_view to_string(RecorderMode mode) {
  return name_of(detail::kModeNames, mode);
}
std::string_view to_string(LowSpacePolicy policy) {
  return name_of(detail::kLowSpaceNames, policy);
}
std::string_view to_string(WritersScope scope) {
  return name_of(detail::kWritersNames, scope);
}
std::string_view to_string(LogLevel level) {
  return name_of(detail::kLogLevelNames, level);
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
  detail::RecorderSchema(reader, config).read(parsed.value);
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
