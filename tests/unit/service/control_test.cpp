// The recorder's control socket (ControlServer, control_request) and the Prometheus text: the
// protocol on a real Unix socket, refusals with their exact messages, and the exact exposition.
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "control_server.hpp"
#include "metrics_server.hpp"
#include "scratch_dir.hpp"

using nlohmann::json;
using service::control_request;
using service::ControlServer;

namespace {

using service_test::TempDir;

// Answers {"echo": request} and counts.
ControlServer::Handler echo(int& calls) {
  return [&calls](const json& r) {
    ++calls;
    return json{{"ok", true}, {"echo", r}};
  };
}

// Connects, sends `bytes`, reads `lines` reply lines (or to EOF).
std::string converse(const std::filesystem::path& p, const std::string& bytes, int lines) {
  const int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::strcpy(a.sun_path, p.c_str());
  REQUIRE(::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  REQUIRE(::send(s, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
          static_cast<ssize_t>(bytes.size()));
  std::string got;
  char buf[4096];
  int seen = 0;
  while (seen < lines) {
    const ssize_t n = ::recv(s, buf, sizeof buf, 0);
    if (n <= 0) break;
    got.append(buf, static_cast<size_t>(n));
    seen = static_cast<int>(std::count(got.begin(), got.end(), '\n'));
  }
  ::close(s);
  return got;
}

}  // namespace

TEST_CASE("Control socket: requests on one connection are answered in order, mode 0600") {
  TempDir d;
  int calls = 0;
  const auto path = d.dir() / "c.sock";
  auto server = ControlServer::start(path, echo(calls));
  REQUIRE(server.ok());
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  const std::string got = converse(path, "{\"cmd\":\"a\"}\n[1]\nnot json\n{\"cmd\":\"b\"}\n", 4);
  CHECK(got ==
        "{\"echo\":{\"cmd\":\"a\"},\"ok\":true}\n"
        "{\"error\":\"a request is one JSON object per line, e.g. {\\\"cmd\\\":\\\"status\\\"}\","
        "\"ok\":false}\n"
        "{\"error\":\"a request is one JSON object per line, e.g. {\\\"cmd\\\":\\\"status\\\"}\","
        "\"ok\":false}\n"
        "{\"echo\":{\"cmd\":\"b\"},\"ok\":true}\n");
  CHECK(calls == 2);
  auto r = control_request(path, json{{"cmd", "c"}}, std::chrono::seconds(5));
  REQUIRE(r.ok());
  CHECK(*r == json{{"ok", true}, {"echo", {{"cmd", "c"}}}});
  server.value().reset();
  CHECK_FALSE(std::filesystem::exists(path));
}

TEST_CASE("Control socket: in a directory whose path is longer than sun_path holds") {
  TempDir d;
  int calls = 0;
  const auto dir = d.dir() / std::string(70, 'r') / std::string(70, 'e');
  std::filesystem::create_directories(dir);
  const auto path = dir / "control.sock";
  REQUIRE(path.string().size() > 107);
  auto server = ControlServer::start(path, echo(calls));
  REQUIRE(server.ok());
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  auto r = control_request(path, json{{"cmd", "c"}}, std::chrono::seconds(5));
  REQUIRE(r.ok());
  CHECK(*r == json{{"ok", true}, {"echo", {{"cmd", "c"}}}});
  auto second = ControlServer::start(path, echo(calls));
  REQUIRE_FALSE(second.ok());
  CHECK(second.error().message == "another recorder listens on control socket " + path.string());
  server.value().reset();
  CHECK_FALSE(std::filesystem::exists(path));
}

TEST_CASE("Control socket: a line over 64 KiB is refused and ends the connection") {
  TempDir d;
  int calls = 0;
  const auto path = d.dir() / "c.sock";
  auto server = ControlServer::start(path, echo(calls));
  REQUIRE(server.ok());
  const std::string got = converse(path, std::string(70000, 'x') + "\n{\"cmd\":\"a\"}\n", 5);
  CHECK(got == "{\"error\":\"request longer than 65536 bytes\",\"ok\":false}\n");
  CHECK(calls == 0);
}

TEST_CASE("Control socket: a live one is refused, a stale one replaced, a file kept") {
  TempDir d;
  int calls = 0;
  const auto path = d.dir() / "c.sock";
  {
    auto first = ControlServer::start(path, echo(calls));
    REQUIRE(first.ok());
    auto second = ControlServer::start(path, echo(calls));
    REQUIRE_FALSE(second.ok());
    CHECK(second.error().code == common::Errc::kAlreadyExists);
    CHECK(second.error().message == "another recorder listens on control socket " + path.string());
  }
  // A socket file nobody listens on (a killed recorder's).
  const int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::strcpy(a.sun_path, path.c_str());
  REQUIRE(::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  ::close(s);
  REQUIRE(std::filesystem::is_socket(path));
  {
    auto again = ControlServer::start(path, echo(calls));
    REQUIRE(again.ok());
    CHECK(control_request(path, json{{"cmd", "x"}}, std::chrono::seconds(5)).ok());
  }
  const auto file = d.dir() / "plain";
  std::ofstream(file) << "keep me";
  auto refused = ControlServer::start(file, echo(calls));
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message ==
        "control socket " + file.string() + " exists and is not a socket");
  CHECK(std::filesystem::file_size(file) == 7);
}

TEST_CASE("control_request: no socket is kNotFound with the path") {
  auto r = control_request("/nonexistent/c.sock", json{{"cmd", "status"}}, std::chrono::seconds(1));
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == common::Errc::kNotFound);
  CHECK(r.error().message == "cannot connect to /nonexistent/c.sock: No such file or directory");
}

TEST_CASE("Prometheus text of a status, exactly, with label escaping") {
  service::RecorderStatus s;
  s.samples = 12;
  s.bytes = 3400;
  s.lost = 1;
  s.held_back = 5;
  s.skipped = 2;
  s.writers = 3;
  s.writers_elsewhere = 1;
  s.queue_fill = 0.25;
  s.paused = true;
  s.seconds = 1.5;
  s.clock_steps = 2;
  s.wall_clock_offset_s = -300.25;
  s.topics.push_back({"a\"b\\c\nd", 12, 3400, 1, 2, 3, true});
  s.incompatible_qos = {{"DEADLINE", 2}, {"OWNERSHIP", 1}};
  s.discovery_refused = {{"endpoints", 4}, {"participants", 3}};
  s.control_refused = {
      {"bad_signature", 1}, {"not_allowed", 0}, {"replayed", 2}, {"stale", 0}, {"unsigned", 7}};
  const std::string want =
      "# HELP pubsub_recorder_samples_total Samples recorded.\n"
      "# TYPE pubsub_recorder_samples_total counter\n"
      "pubsub_recorder_samples_total 12\n"
      "# HELP pubsub_recorder_bytes_total Payload bytes recorded.\n"
      "# TYPE pubsub_recorder_bytes_total counter\n"
      "pubsub_recorder_bytes_total 3400\n"
      "# HELP pubsub_recorder_lost_total Samples best-effort writers sent that never arrived.\n"
      "# TYPE pubsub_recorder_lost_total counter\n"
      "pubsub_recorder_lost_total 1\n"
      "# HELP pubsub_recorder_held_back_total Deliveries refused while storage was full "
      "(back-pressure, not loss).\n"
      "# TYPE pubsub_recorder_held_back_total counter\n"
      "pubsub_recorder_held_back_total 5\n"
      "# HELP pubsub_recorder_skipped_total Samples not recorded: topic paused.\n"
      "# TYPE pubsub_recorder_skipped_total counter\n"
      "pubsub_recorder_skipped_total 2\n"
      "# HELP pubsub_recorder_queue_fill_ratio Closed chunks waiting for the disk, fraction of "
      "queue_max_bytes.\n"
      "# TYPE pubsub_recorder_queue_fill_ratio gauge\n"
      "pubsub_recorder_queue_fill_ratio 0.25\n"
      "# HELP pubsub_recorder_paused 1 while every topic is paused.\n"
      "# TYPE pubsub_recorder_paused gauge\n"
      "pubsub_recorder_paused 1\n"
      "# HELP pubsub_recorder_writers Writers matched.\n"
      "# TYPE pubsub_recorder_writers gauge\n"
      "pubsub_recorder_writers 3\n"
      "# HELP pubsub_recorder_writers_elsewhere Writers on other hosts matched so far, not "
      "recorded (topics.writers local).\n"
      "# TYPE pubsub_recorder_writers_elsewhere gauge\n"
      "pubsub_recorder_writers_elsewhere 1\n"
      "# HELP pubsub_recorder_uptime_seconds Seconds since recording started.\n"
      "# TYPE pubsub_recorder_uptime_seconds gauge\n"
      "pubsub_recorder_uptime_seconds 1.5\n"
      "# HELP pubsub_recorder_clock_steps_total Steps of the wall clock seen (reception times "
      "follow the monotonic clock).\n"
      "# TYPE pubsub_recorder_clock_steps_total counter\n"
      "pubsub_recorder_clock_steps_total 2\n"
      "# HELP pubsub_recorder_wall_clock_offset_seconds The wall clock minus reception times: the "
      "sum of its steps since the start.\n"
      "# TYPE pubsub_recorder_wall_clock_offset_seconds gauge\n"
      "pubsub_recorder_wall_clock_offset_seconds -300.25\n"
      "# HELP pubsub_recorder_incompatible_qos_total Endpoint pairs not matched: a "
      "requested/offered QoS rule fails.\n"
      "# TYPE pubsub_recorder_incompatible_qos_total counter\n"
      "pubsub_recorder_incompatible_qos_total{policy=\"DEADLINE\"} 2\n"
      "pubsub_recorder_incompatible_qos_total{policy=\"OWNERSHIP\"} 1\n"
      "# HELP pubsub_recorder_discovery_refused_total Discovery announcements refused by the "
      "discovery limits, by kind.\n"
      "# TYPE pubsub_recorder_discovery_refused_total counter\n"
      "pubsub_recorder_discovery_refused_total{kind=\"endpoints\"} 4\n"
      "pubsub_recorder_discovery_refused_total{kind=\"participants\"} 3\n"
      "# HELP pubsub_recorder_control_refused_total DDS control requests refused, by reason.\n"
      "# TYPE pubsub_recorder_control_refused_total counter\n"
      "pubsub_recorder_control_refused_total{reason=\"bad_signature\"} 1\n"
      "pubsub_recorder_control_refused_total{reason=\"not_allowed\"} 0\n"
      "pubsub_recorder_control_refused_total{reason=\"replayed\"} 2\n"
      "pubsub_recorder_control_refused_total{reason=\"stale\"} 0\n"
      "pubsub_recorder_control_refused_total{reason=\"unsigned\"} 7\n"
      "# HELP pubsub_recorder_topic_samples_total Samples recorded, per topic.\n"
      "# TYPE pubsub_recorder_topic_samples_total counter\n"
      "pubsub_recorder_topic_samples_total{topic=\"a\\\"b\\\\c\\nd\"} 12\n"
      "# HELP pubsub_recorder_topic_bytes_total Payload bytes recorded, per topic.\n"
      "# TYPE pubsub_recorder_topic_bytes_total counter\n"
      "pubsub_recorder_topic_bytes_total{topic=\"a\\\"b\\\\c\\nd\"} 3400\n"
      "# HELP pubsub_recorder_topic_lost_total Samples lost, per topic.\n"
      "# TYPE pubsub_recorder_topic_lost_total counter\n"
      "pubsub_recorder_topic_lost_total{topic=\"a\\\"b\\\\c\\nd\"} 1\n"
      "# HELP pubsub_recorder_topic_paused 1 while the topic is paused.\n"
      "# TYPE pubsub_recorder_topic_paused gauge\n"
      "pubsub_recorder_topic_paused{topic=\"a\\\"b\\\\c\\nd\"} 1\n";
  CHECK(service::prometheus_text(s) == want);
}
