// The pubsub-replay binary: bad arguments, bad times and directories that are not (usable)
// recordings give one clear line on stderr and exit 2, never a crash or a stack trace.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "shapes_fixture.hpp"

using namespace replay_test;

namespace {

// Exactly one line "pubsub-replay: ..." containing `what` on stderr, nothing on stdout, exit 2.
void check_usage_error(const std::string& args, const std::string& what) {
  INFO("pubsub-replay " << args);
  const RunResult r = run_replay(args);
  INFO("stderr: " << r.err);
  CHECK_FALSE(r.signaled);
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(count_lines(r.err) == 1);
  CHECK(r.err.rfind("pubsub-replay: ", 0) == 0);
  CHECK(r.err.find(what) != std::string::npos);
  CHECK(r.err.find("terminate called") == std::string::npos);
}

}  // namespace

TEST_CASE("pubsub-replay: bad arguments give one clear message and exit 2") {
  TempDir tmp;
  const std::string rec = tmp.sub("rec");
  Model m = make_shapes(8);
  write_recording(rec, m);
  check_usage_error("", "a command is needed");
  check_usage_error("frobnicate " + rec, "unknown command 'frobnicate'");
  check_usage_error("info", "recording directory DIR is missing");
  check_usage_error("info " + rec + " --bogus", "--bogus");
  // An option CLI11 does not know, after the directories.
  check_usage_error("info " + rec + " --json foo --exclude",
                    "pubsub-replay: unexpected argument: --exclude (see 'pubsub-replay "
                    "info --help')");
  // Commands take several directories: "foo" is one, --exclude is not an option.
  check_usage_error("export " + rec + " --exclude foo",
                    "pubsub-replay: unexpected argument: --exclude (see 'pubsub-replay "
                    "export --help')");
  check_usage_error("play " + rec + " --rate 0", "--rate must be a positive number");
  check_usage_error("play " + rec + " --rate -2", "--rate");
  check_usage_error("play " + rec + " --rate abc", "--rate");
  check_usage_error("play " + rec + " --rate 2 --fast", "--rate excludes --fast");
  check_usage_error("play " + rec + " --loop 0", "--loop takes a positive count");
  check_usage_error("play " + rec + " --wait-timeout 5", "--wait-timeout requires --wait-readers");
  check_usage_error("play " + rec + " --wait-readers 0", "--wait-readers takes a count");
  check_usage_error("play " + rec + " --domain 999", "--domain");
  check_usage_error("play " + rec + " --topics 'Nope*'", "matches no topic of the recording");
  check_usage_error("play " + rec + " --topics '[ab'", "bad topic pattern");
  check_usage_error("export " + rec + " --format xml", "--format must be jsonl, csv or mcap");
  check_usage_error("export " + rec + " -o " + tmp.sub("no/such/dir/out.jsonl"), "cannot write");
  check_usage_error("export " + rec + " --profile ros2", "--profile applies to --format mcap only");
  check_usage_error("export " + rec + " --format mcap --profile ros1 -o " + tmp.sub("x.mcap"),
                    "--profile must be ros2, not 'ros1'");
  // import: an MCAP file in, a new recording out; nothing written when refused.
  check_usage_error("import " + tmp.sub("none.mcap") + " -o " + tmp.sub("out"),
                    "cannot open " + tmp.sub("none.mcap"));
  std::ofstream(tmp.sub("text.mcap")) << "not an MCAP file at all";
  check_usage_error("import " + tmp.sub("text.mcap") + " -o " + tmp.sub("out"),
                    tmp.sub("text.mcap") + ": not an MCAP file (no MCAP magic at its start); " +
                        tmp.sub("out") + " not written");
  CHECK_FALSE(std::filesystem::exists(tmp.sub("out")));
  // An empty directory given as OUT was there before: it stays, empty.
  std::filesystem::create_directory(tmp.sub("empty_out"));
  check_usage_error("import " + tmp.sub("text.mcap") + " -o " + tmp.sub("empty_out"),
                    tmp.sub("empty_out") + " not written");
  CHECK(std::filesystem::is_directory(tmp.sub("empty_out")));
  CHECK(std::filesystem::is_empty(tmp.sub("empty_out")));
  check_usage_error("import " + tmp.sub("text.mcap"), "--output is required");
  std::ofstream(tmp.sub("empty.mcap")) << "\x89MCAP0\r\n";
  check_usage_error("import " + tmp.sub("empty.mcap") + " -o " + rec,
                    rec + " exists and is not empty: import writes a new recording");
  check_usage_error("verify " + tmp.sub("empty.mcap"),
                    tmp.sub("empty.mcap") +
                        " is an MCAP file: verify takes recordings ('pubsub-replay import' makes "
                        "one of it)");
}

TEST_CASE("pubsub-replay: bad --qos files and --remap arguments name the problem, exit 2") {
  TempDir tmp;
  const std::string rec = tmp.sub("rec");
  Model m = make_shapes(8);
  write_recording(rec, m);
  auto qos_file = [&](const std::string& name, const std::string& text) {
    std::ofstream(tmp.sub(name)) << text;
    return tmp.sub(name);
  };
  check_usage_error("play " + rec + " --qos " + tmp.sub("none.json"),
                    "--qos " + tmp.sub("none.json") + ": cannot read the file");
  const auto not_object = qos_file("a.json", "[1, 2]");
  check_usage_error(
      "play " + rec + " --qos " + not_object,
      "--qos " + not_object + ": must be a JSON object of topic globs to QoS objects");
  const auto bad_member = qos_file("b.json", R"({"Square": {"deadlin": "2 s"}})");
  check_usage_error("play " + rec + " --qos " + bad_member,
                    "--qos " + bad_member + ": topic \"Square\": /deadlin: unknown QoS member");
  const auto bad_value = qos_file("c.json", R"({"*": {"deadline": "soon"}})");
  check_usage_error("play " + rec + " --qos " + bad_value,
                    "topic \"*\": /deadline: must be nanoseconds (-1: infinite) or a text like "
                    "\"2 s\", \"250 ms\", \"infinite\"");
  const auto bad_kind = qos_file("d.json", R"({"*": {"durability": "forever"}})");
  check_usage_error("play " + rec + " --qos " + bad_kind,
                    "/durability: \"forever\" is not one of \"volatile\", \"transient_local\", "
                    "\"transient\", \"persistent\"");
  const auto bad_glob = qos_file("e.json", R"({"[ab": {}})");
  check_usage_error("play " + rec + " --qos " + bad_glob, "topic \"[ab\": ");
  check_usage_error("play " + rec + " --remap Square", "--remap Square: expected OLD=NEW");
  check_usage_error("play " + rec + " --remap Square=A --remap Square=B",
                    "--remap Square=B: topic Square is remapped twice");
  check_usage_error("play " + rec + " --remap Hexagon=X", "--remap Hexagon=X: no topic Hexagon");
}

TEST_CASE("pubsub-replay: bad times give one clear message and exit 2") {
  TempDir tmp;
  const std::string rec = tmp.sub("rec");
  Model m = make_shapes(8);
  write_recording(rec, m);
  check_usage_error("play " + rec + " --start abc", "bad time 'abc'");
  check_usage_error("export " + rec + " --end 2026-02-30T00:00:00Z", "day out of range");
  check_usage_error("play " + rec + " --start 2026-11-21T25:00:00Z", "time of day out of range");
  check_usage_error("play " + rec + " --start 100", "is after the end of the recording");
  check_usage_error("play " + rec + " --end 2020-01-01T00:00:00Z",
                    "is not after the start of the recording");
  check_usage_error("export " + rec + " --start 2 --end 1", "is not before --end");
}

TEST_CASE("pubsub-replay: missing and unusable recordings give one clear message and exit 2") {
  TempDir tmp;
  for (const char* cmd : {"info", "play", "export", "verify"}) {
    check_usage_error(std::string(cmd) + " " + tmp.sub("missing"), "no such recording directory");
    check_usage_error(std::string(cmd) + " " + tmp.path(), "is not a recording");
  }
  {
    std::ofstream f(tmp.sub("file"));
    f << "not a directory\n";
  }
  check_usage_error("info " + tmp.sub("file"), "not a directory");
  check_usage_error("reindex " + tmp.path(), "is not a recording");
  // An index that is not an SQLite database.
  std::filesystem::create_directory(tmp.sub("junk"));
  {
    std::ofstream f(tmp.sub("junk/index.sqlite3"));
    f << "this is not a database, just text that is long enough to look like a header......\n";
  }
  check_usage_error("info " + tmp.sub("junk"), "cannot open the recording");
  check_usage_error("verify " + tmp.sub("junk"), "cannot open the recording");
}

TEST_CASE("pubsub-replay: info, export and verify run from the command line") {
  TempDir tmp;
  const std::string rec = tmp.sub("rec");
  Model m = make_shapes(8);
  write_recording(rec, m);
  RunResult r = run_replay("info " + rec + " --json");
  CHECK(r.exit_code == 0);
  CHECK(nlohmann::json::parse(r.out)["samples"] == 776);
  r = run_replay("info " + rec);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("total: 4 topics, 776 samples") != std::string::npos);
  r = run_replay("export " + rec + " --format csv --topics Circle -o " + tmp.sub("c.csv"));
  CHECK(r.exit_code == 0);
  CHECK(count_lines(slurp(tmp.sub("c.csv"))) == 151);
  r = run_replay("verify " + rec);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("result: ok") != std::string::npos);
  r = run_replay("info --help");
  CHECK(r.out.find("Usage: pubsub-replay info [OPTIONS] DIR...\n") != std::string::npos);
  r = run_replay("--version");
  CHECK(r.exit_code == 0);
  CHECK(r.out == "pubsub-replay 0.1.0 (recording format 5)\n");
  r = run_replay("--help");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("play") != std::string::npos);
}

TEST_CASE("pubsub-replay: play stops on SIGINT with exit 0 and a summary") {
  TempDir tmp;
  const std::string rec = tmp.sub("rec");
  Model m = make_shapes(8);
  write_recording(rec, m);
  // Over loopback (unicast); --loop without a count runs until interrupted.
  const RunResult r = run_replay_wrapped("timeout --preserve-status -s INT 1.5",
                                         "play " + rec + " --nic lo --loop");
  INFO("stderr: " << r.err);
  CHECK_FALSE(r.signaled);
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("pubsub-replay: interrupted after ") != std::string::npos);
  CHECK(r.err.find("terminate called") == std::string::npos);
}
