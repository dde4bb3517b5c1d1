// A directory of its own under /tmp for one test of pubsub-recorder's service endpoints, removed
// with everything in it at the end of the test (recorder_unit_tests).
#pragma once

#include <stdlib.h>
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

namespace recorder_test {

struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& tag = "recorder_unit_test") {
    std::string tmpl = "/tmp/" + tag + ".XXXXXX";
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  // Writes `content` to the file `name` in the directory, with permissions `mode`.
  std::filesystem::path file(const std::string& name, const std::string& content, mode_t mode) {
    const std::filesystem::path p = path / name;
    std::ofstream(p) << content;
    REQUIRE(::chmod(p.c_str(), mode) == 0);
    return p;
  }
};

}  // namespace recorder_test
