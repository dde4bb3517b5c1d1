// Crash safety: a child writing continuously (storage_crash_child) is SIGKILLed at random
// moments, 24 times. Each time the recording opens read-only (recovering the tail in memory,
// files untouched), holds exactly a prefix of the written stream that includes every record the
// child reported durable, byte-identical, never a partial record; recover() then repairs it on
// disk and verify() finds nothing wrong.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <thread>

#include "crash_common.hpp"
#include "storage/recording.hpp"

using namespace storage;
namespace fs = std::filesystem;

namespace {

struct Child {
  pid_t pid = -1;
  int out = -1;  // read end of the child's stdout
};

Child spawn(const std::string& dir) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  Child c;
  c.pid = fork();
  REQUIRE(c.pid >= 0);
  if (c.pid == 0) {
    dup2(fds[1], 1);
    close(fds[0]);
    close(fds[1]);
    execl(STORAGE_CRASH_CHILD, STORAGE_CRASH_CHILD, dir.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[1]);
  c.out = fds[0];
  return c;
}

// Reads the child's "durable N" lines until `until`; returns the largest N seen.
uint64_t read_durable(int fd, std::string& buf, std::chrono::steady_clock::time_point until,
                      uint64_t durable) {
  for (;;) {
    const auto left = until - std::chrono::steady_clock::now();
    if (left <= std::chrono::steady_clock::duration::zero()) break;
    fd_set set;
    FD_ZERO(&set);
    FD_SET(fd, &set);
    timeval tv{0,
               static_cast<suseconds_t>(
                   std::chrono::duration_cast<std::chrono::microseconds>(left).count() % 1000000)};
    if (left >= std::chrono::seconds(1)) tv.tv_sec = 1;
    const int r = select(fd + 1, &set, nullptr, nullptr, &tv);
    if (r <= 0) continue;
    char tmp[4096];
    const ssize_t n = read(fd, tmp, sizeof tmp);
    if (n <= 0) break;
    buf.append(tmp, static_cast<size_t>(n));
    size_t nl;
    while ((nl = buf.find('\n')) != std::string::npos) {
      const std::string line = buf.substr(0, nl);
      buf.erase(0, nl + 1);
      if (line.rfind("durable ", 0) == 0) durable = std::stoull(line.substr(8));
    }
  }
  return durable;
}

std::map<std::string, uintmax_t> sizes(const std::string& dir) {
  std::map<std::string, uintmax_t> m;
  for (auto& e : fs::directory_iterator(dir + "/segments")) m[e.path().string()] = e.file_size();
  return m;
}

// Checks that the recording holds exactly records 0..n-1 of the stream; returns n.
uint64_t check_stream(Recording& rec) {
  auto cur = rec.query();
  REQUIRE(cur.ok());
  uint64_t i = 0;
  Bytes want;
  while (const RecordView* v = cur->next()) {
    const RecordMeta m = crash::meta(i);
    INFO("record " << i);
    REQUIRE(v->meta.topic == m.topic);
    REQUIRE(v->meta.writer == m.writer);
    REQUIRE(v->meta.sequence == m.sequence);
    REQUIRE(v->meta.reception_ns == m.reception_ns);
    REQUIRE(v->meta.source_ns == m.source_ns);
    REQUIRE(v->meta.flags == m.flags);
    REQUIRE(v->meta.has_key_hash == m.has_key_hash);
    crash::fill_payload(i, want);
    REQUIRE(v->payload.size() == want.size());
    REQUIRE(std::equal(v->payload.begin(), v->payload.end(), want.begin()));
    ++i;
  }
  REQUIRE(cur->status().ok());
  CHECK(cur->problems() == 0);
  return i;
}

}  // namespace

TEST_CASE(
    "storage: SIGKILLed writer leaves a recording that opens and holds every durable record") {
  const fs::path root = fs::temp_directory_path() / ("storage-crash-" + std::to_string(getpid()));
  fs::remove_all(root);
  fs::create_directories(root);
  std::mt19937_64 rng(std::random_device{}());
  const auto test_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
  int rounds = 0;
  uint64_t total_records = 0, total_cut = 0;
  for (; rounds < 24 && std::chrono::steady_clock::now() < test_deadline; ++rounds) {
    const std::string dir = (root / ("r" + std::to_string(rounds))).string();
    Child c = spawn(dir);
    std::string buf;
    // Wait for the first durable point (bounded), then kill after a random 0-250 ms.
    uint64_t durable = 0;
    const auto first_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (durable == 0 && std::chrono::steady_clock::now() < first_deadline)
      durable = read_durable(
          c.out, buf, std::chrono::steady_clock::now() + std::chrono::milliseconds(20), durable);
    REQUIRE(durable > 0);
    const auto kill_at =
        std::chrono::steady_clock::now() + std::chrono::microseconds(rng() % 250000);
    durable = read_durable(c.out, buf, kill_at, durable);
    REQUIRE(kill(c.pid, SIGKILL) == 0);
    int status = 0;
    REQUIRE(waitpid(c.pid, &status, 0) == c.pid);
    REQUIRE(WIFSIGNALED(status));
    // Lines written before the kill are still in the pipe.
    durable = read_durable(
        c.out, buf, std::chrono::steady_clock::now() + std::chrono::milliseconds(50), durable);
    close(c.out);
    INFO("round " << rounds << ", durable " << durable);

    const auto before = sizes(dir);
    uint64_t n_ro = 0;
    {
      std::vector<Problem> problems;
      RecordingOptions opt;
      opt.on_problem = [&](const Problem& p) { problems.push_back(p); };
      auto rec = Recording::open(dir, opt);
      REQUIRE(rec.ok());
      CHECK((*rec)->close_state() == CloseState::kUnclean);
      n_ro = check_stream(**rec);
      REQUIRE(n_ro >= durable);
      auto totals = (*rec)->totals();
      REQUIRE(totals.ok());
      CHECK(totals->records == n_ro);
      CHECK(totals->lost == 0);
      // Only the tail can be damaged: a torn last chunk, or a new segment file whose header
      // was not completely written when the process died.
      for (auto& p : problems)
        CHECK((p.kind == Problem::Kind::kTornTail || p.kind == Problem::Kind::kBadSegment));
      total_cut += (*rec)->recovery().bytes_cut;
    }
    CHECK(sizes(dir) == before);  // read-only open modified nothing
    auto rep = Recording::recover(dir);
    REQUIRE(rep.ok());
    auto rec = Recording::open(dir);
    REQUIRE(rec.ok());
    CHECK((*rec)->close_state() == CloseState::kRecovered);
    CHECK(check_stream(**rec) == n_ro);
    auto v = (*rec)->verify();
    REQUIRE(v.ok());
    CHECK(v->ok());
    CHECK(v->records == n_ro);
    total_records += n_ro;
    fs::remove_all(dir);
  }
  fs::remove_all(root);
  CHECK(rounds >= 20);
  WARN("crash rounds: " << rounds << ", records checked: " << total_records
                        << ", torn bytes found: " << total_cut);
}
