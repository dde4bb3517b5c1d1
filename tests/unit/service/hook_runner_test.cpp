// storage.on_segment_closed's runner (service/src/recorder/hook_runner.hpp): commands run one at
// a time in the order posted, with $1 and the PUBSUB_* variables, failures logged and counted,
// drain() waiting for all of them, and no descriptor of the recorder's leaking into them.
#include "hook_runner.hpp"
#include "scratch_dir.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

using service::HookEvent;
using service::HookRunner;

namespace {

using service_test::TempDir;

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Lines {
  std::mutex mu;
  std::vector<std::string> v;
  auto sink() {
    return [this](bool warning, const std::string& s) {
      std::lock_guard lk(mu);
      v.push_back((warning ? "W " : "I ") + s);
    };
  }
};

}  // namespace

TEST_CASE("HookRunner: in order, one at a time, with $1 and PUBSUB_* set, then drained") {
  TempDir dir;
  const std::string out = dir.sub("out.txt");
  Lines lines;
  // Each command takes a little while: a second one started early would interleave its lines.
  HookRunner r("echo \"start $1 $PUBSUB_EVENT $PUBSUB_PATH $PUBSUB_RECORDING\" >> " + out +
                   "; sleep 0.05; echo \"end $1\" >> " + out,
               lines.sink());
  r.post({"segment", "/r/segments/00000001.seg", "/r"});
  r.post({"segment", "/r/segments/00000002.seg", "/r"});
  r.post({"recording", "/r", "/r"});
  r.drain();
  CHECK(read_all(out) ==
        "start /r/segments/00000001.seg segment /r/segments/00000001.seg /r\n"
        "end /r/segments/00000001.seg\n"
        "start /r/segments/00000002.seg segment /r/segments/00000002.seg /r\n"
        "end /r/segments/00000002.seg\n"
        "start /r recording /r /r\n"
        "end /r\n");
  const auto c = r.counts();
  CHECK(c.run == 3);
  CHECK(c.failed == 0);
  CHECK(c.pending == 0);
  std::lock_guard lk(lines.mu);
  CHECK(lines.v ==
        std::vector<std::string>{"I storage.on_segment_closed for /r/segments/00000001.seg: exit 0",
                                 "I storage.on_segment_closed for /r/segments/00000002.seg: exit 0",
                                 "I storage.on_segment_closed for /r: exit 0"});
}

TEST_CASE("HookRunner: a failing or killed command is logged with its status and counted") {
  Lines lines;
  {
    HookRunner r("case $1 in *bad) exit 3 ;; *killed) kill -9 $$ ;; esac", lines.sink());
    r.post({"segment", "/r/bad", "/r"});
    r.post({"segment", "/r/killed", "/r"});
    r.post({"segment", "/r/good", "/r"});
    r.drain();
    const auto c = r.counts();
    CHECK(c.run == 3);
    CHECK(c.failed == 2);
  }
  std::lock_guard lk(lines.mu);
  CHECK(lines.v == std::vector<std::string>{
                       "W storage.on_segment_closed for /r/bad failed: exit 3",
                       "W storage.on_segment_closed for /r/killed failed: signal 9 (Killed)",
                       "I storage.on_segment_closed for /r/good: exit 0"});
}

TEST_CASE("HookRunner: the command gets stdin from /dev/null and none of the recorder's fds") {
  TempDir dir;
  const int opened = ::open(dir.sub("held").c_str(), O_CREAT | O_WRONLY, 0600);  // not O_CLOEXEC
  REQUIRE(opened > 2);
  const int fd = ::dup2(opened, 100);  // above any ls may open itself
  REQUIRE(fd == 100);
  ::close(opened);
  const std::string out = dir.sub("fds.txt");
  Lines lines;
  HookRunner r("ls /proc/self/fd > " + out + "; wc -c < /dev/stdin >> " + out, lines.sink());
  r.post({"segment", "x", "y"});
  r.drain();
  ::close(fd);
  // ls's own directory descriptor is the one above 2 (it opens /proc/self/fd), and stdin is empty.
  const std::string got = read_all(out);
  CHECK(got.find("\n" + std::to_string(fd) + "\n") == std::string::npos);
  CHECK(got.substr(got.rfind('\n', got.size() - 2) + 1) == "0\n");
}

TEST_CASE("HookRunner: destroyed with commands queued, it runs them all first") {
  TempDir dir;
  const std::string out = dir.sub("out.txt");
  Lines lines;
  {
    HookRunner r("sleep 0.02; echo $1 >> " + out, lines.sink());
    for (int i = 0; i < 5; ++i) r.post({"segment", std::to_string(i), "r"});
  }
  CHECK(read_all(out) == "0\n1\n2\n3\n4\n");
}
