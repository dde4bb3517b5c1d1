// thread_names(): the names of this process's threads, as /proc/self/task/*/comm gives them (the
// names top -H, ps -L and perf show). For the tests that check a module names its threads.
#pragma once

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

namespace test_support {

inline std::multiset<std::string> thread_names() {
  std::multiset<std::string> names;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    if (std::getline(comm, name)) names.insert(name);
  }
  return names;
}

}  // namespace test_support
