// Helpers of the config tests: parse-and-expect shortcuts, documents with one key set, temporary
// directories and running a check as an unprivileged user.
#pragma once

#include <catch2/catch.hpp>

#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "config/recorder_config.hpp"

namespace config_test {

namespace fs = std::filesystem;

// The messages of a document that must fail (no source name, so no prefix).
inline std::vector<std::string> errors_of(std::string_view json) {
  auto r = config::parse_recorder_config(json, "");
  INFO("document: " << json);
  REQUIRE_FALSE(r.ok());
  REQUIRE_FALSE(r.error().messages.empty());
  return r.error().messages;
}

// The single message of a document with exactly one problem.
inline std::string only_error(std::string_view json) {
  auto messages = errors_of(json);
  INFO("document: " << json);
  INFO("messages:\n" << config::ConfigErrors{messages}.to_string());
  REQUIRE(messages.size() == 1);
  return messages[0];
}

// The configuration of a document that must parse.
inline config::RecorderConfig parsed(std::string_view json) {
  auto r = config::parse_recorder_config(json, "");
  INFO("document: " << json);
  INFO("messages:\n" << (r.ok() ? std::string() : r.error().to_string()));
  REQUIRE(r.ok());
  return std::move(r).value();
}

// A valid document plus the key at `pointer` ("/storage/retention/max_age_s") set to the JSON text
// `value`. storage.path is always "x" unless the pointer is /storage/path itself.
inline std::string doc_with(std::string_view pointer, std::string_view value) {
  std::vector<std::string> parts;
  for (size_t at = 1; at <= pointer.size();) {
    const size_t next = std::min(pointer.find('/', at), pointer.size());
    parts.emplace_back(pointer.substr(at, next - at));
    at = next + 1;
  }
  auto nested = [&](size_t from) {
    std::string s;
    for (size_t i = from; i < parts.size(); ++i) {
      s += "\"" + parts[i] + "\":";
      if (i + 1 < parts.size()) s += "{";
    }
    s += value;
    for (size_t i = from; i + 1 < parts.size(); ++i) s += "}";
    return s;
  };
  if (parts.size() >= 2 && parts[0] == "storage") {
    if (parts[1] == "path") return "{\"storage\":{" + nested(1) + "}}";
    return "{\"storage\":{\"path\":\"x\"," + nested(1) + "}}";
  }
  return "{\"storage\":{\"path\":\"x\"}," + nested(0) + "}";
}

// A fresh directory under the system temp dir (mode 0755 so an unprivileged child can look into
// it), removed with everything in it, whatever its modes, at the end.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "config-test-XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path_ = tmpl;
    fs::permissions(path_, fs::perms(0755));
  }
  ~TempDir() {
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(path_, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (it->is_directory(ec) && !it->is_symlink(ec)) {
        fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ec);
      }
    }
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const fs::path& path() const { return path_; }
  std::string str(std::string_view rel = {}) const {
    return rel.empty() ? path_.string() : (path_ / rel).string();
  }
  // Names of the entries directly in `rel` (or the temp dir), sorted.
  std::vector<std::string> entries(std::string_view rel = {}) const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(rel.empty() ? path_ : path_ / rel)) {
      out.push_back(e.path().filename().string());
    }
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  fs::path path_;
};

// Runs `check` in a forked child that first calls `setup` (as root; return false to skip) and
// then, when `as_nobody`, drops to uid/gid 65534. Returns the messages `check` produced, or
// nullopt when the child could not set itself up (the caller then WARNs and skips).
struct ChildResult {
  bool ran = false;
  std::vector<std::string> messages;
};

inline ChildResult run_in_child(const std::function<bool()>& setup, bool as_nobody,
                                const std::function<std::vector<std::string>()>& check) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(fds[0]);
    bool ok = setup ? setup() : true;
    if (ok && as_nobody) {
      ok = ::setgroups(0, nullptr) == 0 && ::setgid(65534) == 0 && ::setuid(65534) == 0;
    }
    std::string out = ok ? "RAN\n" : "SKIP\n";
    if (ok) {
      for (const auto& m : check()) out += m + "\n";
    }
    for (size_t done = 0; done < out.size();) {
      const ssize_t n = ::write(fds[1], out.data() + done, out.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;)
    text.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  ChildResult result;
  size_t start = 0;
  bool first = true;
  for (size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1) {
    std::string line = text.substr(start, nl - start);
    if (first) {
      result.ran = line == "RAN";
      first = false;
    } else {
      result.messages.push_back(std::move(line));
    }
  }
  return result;
}

inline std::vector<std::string> messages_of(const config::ConfigResult<void>& r) {
  return r.ok() ? std::vector<std::string>{} : r.error().messages;
}

}  // namespace config_test
