// Checks of the paths the recorder will write to, run after the command line has had its say
// (--path overrides storage.path). They only look: the one thing created is a probe directory,
// removed at once, because access(2) cannot tell everything that refuses a write (root passes it
// regardless of mode bits; NFS servers and security modules decide on their own). Before them,
// expand_storage_path turns storage.path's strftime conversions into the time of the start.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>

#include "config/recorder_config.hpp"
#include "storage/recording.hpp"

namespace config {

namespace {

std::string in_quotes(const std::string& s) {
  return "\"" + s + "\"";
}

// "a/b//" -> "a/b"; "/" stays "/".
std::string strip_trailing_slashes(std::string p) {
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p;
}

// The directory a new entry `p` (without trailing slashes) would be created in.
std::string parent_of(const std::string& p) {
  const size_t slash = p.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return strip_trailing_slashes(p.substr(0, slash));
}

// Why the process cannot create entries in directory `dir`, or "" when it can.
std::string cannot_create_in(const std::string& dir) {
  if (::faccessat(AT_FDCWD, dir.c_str(), W_OK | X_OK, AT_EACCESS) != 0) {
    return std::strerror(errno);
  }
  static std::atomic<unsigned> counter{0};
  for (int attempt = 0; attempt < 8; ++attempt) {
    const std::string probe = dir + "/.pubsub-recorder-probe-" + std::to_string(::getpid()) + "-" +
                              std::to_string(counter.fetch_add(1));
    if (::mkdir(probe.c_str(), 0700) == 0) {
      (void)::rmdir(probe.c_str());
      return {};
    }
    if (errno != EEXIST) return std::strerror(errno);
  }
  return "cannot create a probe entry";
}

// For a path that does not exist yet: "" when it can be created, else the tail of a message
// (": parent directory "x" does not exist").
std::string check_parent(const std::string& p) {
  const std::string parent = parent_of(p);
  struct stat st {};
  if (::stat(parent.c_str(), &st) != 0) {
    const int e = errno;
    if (e == ENOENT) return ": parent directory " + in_quotes(parent) + " does not exist";
    return ": parent directory " + in_quotes(parent) + ": " + std::strerror(e);
  }
  if (!S_ISDIR(st.st_mode))
    return ": parent directory " + in_quotes(parent) + " is not a directory";
  if (const std::string why = cannot_create_in(parent); !why.empty()) {
    return ": parent directory " + in_quotes(parent) + " is not writable (" + why + ")";
  }
  return {};
}

// "" when `p` does not exist (even as a dangling symbolic link), else a message tail.
std::string absent(const std::string& p, bool& exists) {
  struct stat st {};
  exists = ::stat(p.c_str(), &st) == 0;
  if (exists) return {};
  const int e = errno;
  if (e != ENOENT && e != ENOTDIR) return std::string(": ") + std::strerror(e);
  if (::lstat(p.c_str(), &st) == 0) return " is a dangling symbolic link";
  return {};
}

}  // namespace

ConfigResult<void> expand_storage_path(RecorderConfig& config,
                                       std::chrono::system_clock::time_point now) {
  const std::string pattern = config.storage.path.string();
  if (pattern.find('%') == std::string::npos) return {};
  auto problem = [&](const std::string& what) {
    return "storage path " + in_quotes(pattern) + what;
  };
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm local{};
  if (::localtime_r(&t, &local) == nullptr) {
    return ConfigErrors{{problem(": cannot convert the time to local time")}};
  }
  std::string known;  // "%Y %y ..." for the message
  for (const char c : kStoragePathConversions)
    known += std::string(known.empty() ? "" : " ") + '%' + c;
  std::string out;
  std::vector<std::string> problems;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%') {
      out += pattern[i];
    } else if (i + 1 == pattern.size()) {
      problems.push_back(problem(" ends with a lone \"%\" (write \"%%\" for a percent sign)"));
    } else if (const char c = pattern[++i]; c == '%') {
      out += '%';
    } else if (kStoragePathConversions.find(c) == std::string_view::npos) {
      problems.push_back(problem(": unknown conversion \"%" + std::string(1, c) +
                                 "\" (known: " + known + ", and %% for a percent sign)"));
    } else {
      const char format[] = {'%', c, '\0'};
      char field[64];
      out.append(field, std::strftime(field, sizeof field, format, &local));
    }
  }
  if (!problems.empty()) return ConfigErrors{std::move(problems)};
  if (out.empty()) return ConfigErrors{{problem(" expands to an empty string")}};
  config.storage.path = out;
  return {};
}

ConfigResult<void> validate_storage_path(const RecorderConfig& config) {
  const std::string given = config.storage.path.string();
  if (given.empty()) return ConfigErrors{{"storage path is empty (set /storage/path or --path)"}};
  auto fail = [&](const std::string& what) {
    return ConfigErrors{{"storage path " + in_quotes(given) + what}};
  };
  const std::string p = strip_trailing_slashes(given);

  bool exists = false;
  if (const std::string why = absent(p, exists); !why.empty()) return fail(why);
  if (!exists) {
    if (const std::string why = check_parent(p); !why.empty()) return fail(why);
    return {};
  }

  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) return fail(std::string(": ") + std::strerror(errno));
  if (!S_ISDIR(st.st_mode)) return fail(" is not a directory");
  const std::string index = p + "/index.sqlite3";
  if (config.mode == RecorderMode::kSnapshot) {
    // The directory the snapshots go into: earlier snapshots may be there, a recording not.
    if (::lstat(index.c_str(), &st) == 0)
      return fail(
          " holds a recording (index.sqlite3 present); in snapshot mode storage.path is the "
          "directory each snapshot's recording is made in: use another directory");
    if (const std::string why = cannot_create_in(p); !why.empty())
      return fail(" is not writable (" + why + ")");
    return {};
  }
  if (::lstat(index.c_str(), &st) == 0) {
    auto state = storage::Recording::close_state(p);
    if (state && *state == storage::CloseState::kUnclean) {
      return fail(
          " holds a recording that was not closed cleanly (or is being written): the recorder "
          "never appends to a recording; run 'pubsub-replay recover " +
          p + "' to finish it, and record into a new directory");
    }
    return fail(
        " already holds a recording (index.sqlite3 present); the recorder never appends to one: "
        "record into a new directory");
  }
  DIR* dir = ::opendir(p.c_str());
  if (dir == nullptr) return fail(std::string(": cannot list it: ") + std::strerror(errno));
  std::string first_entry;
  while (const dirent* entry = ::readdir(dir)) {
    const std::string_view name = entry->d_name;
    if (name != "." && name != "..") {
      first_entry = name;
      break;
    }
  }
  ::closedir(dir);
  if (!first_entry.empty())
    return fail(" is not empty (it contains " + in_quotes(first_entry) + ")");
  if (const std::string why = cannot_create_in(p); !why.empty()) {
    return fail(" is not writable (" + why + ")");
  }
  return {};
}

ConfigResult<void> validate_log_file(const RecorderConfig& config) {
  const std::string file = config.log.file.string();
  if (file.empty()) return {};
  auto fail = [&](const std::string& what) {
    return ConfigErrors{{"log file " + in_quotes(file) + what}};
  };
  if (file.back() == '/') return fail(" names a directory, not a file");

  bool exists = false;
  if (const std::string why = absent(file, exists); !why.empty()) return fail(why);
  if (!exists) {
    if (const std::string why = check_parent(file); !why.empty()) return fail(why);
    return {};
  }
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) return fail(std::string(": ") + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) return fail(" is a directory");
  if (::faccessat(AT_FDCWD, file.c_str(), W_OK, AT_EACCESS) != 0) {
    return fail(std::string(" is not writable (") + std::strerror(errno) + ")");
  }
  return {};
}

}  // namespace config
