// A directory of its own under $TMPDIR for one test of the service's programs (replay and
// recorder unit tests), removed with everything in it at the end of the test.
#pragma once

#include <stdlib.h>
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

namespace service_test {

class TempDir {
 public:
  explicit TempDir(const std::string& tag = "service_test") {
    std::string tmpl = (std::filesystem::temp_directory_path() / (tag + "-XXXXXX")).string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::filesystem::path dir() const { return path_; }
  std::string sub(const std::string& name) const { return path_ + "/" + name; }
  // Writes `content` to the file `name` in the directory, with permissions `mode`.
  std::filesystem::path file(const std::string& name, const std::string& content, mode_t mode) {
    const std::filesystem::path p = dir() / name;
    std::ofstream(p) << content;
    REQUIRE(::chmod(p.c_str(), mode) == 0);
    return p;
  }

 private:
  std::string path_;
};

}  // namespace service_test
