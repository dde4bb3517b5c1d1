// Documents that must be refused, and the exact message each problem gets.
#include <catch2/catch.hpp>

#include "test_util.hpp"

using namespace config;
using config_test::doc_with;
using config_test::errors_of;
using config_test::only_error;

namespace {

struct IntegerRange {
  const char* pointer;
  const char* range;  // as the message states it
  const char* too_low;
  const char* too_high;  // nullptr: no upper bound
};

const IntegerRange kIntegerRanges[] = {
    {"/domain", "in 0..232", "-1", "233"},
    {"/queue_max_bytes", "in 1048576..17179869184", "1048575", "17179869185"},
    {"/max_sample_bytes", "in 1024..1073737728", "1023", "1073737729"},
    {"/storage/chunk_max_bytes", "in 4096..268435456", "4095", "268435457"},
    {"/storage/chunk_max_age_ms", "in 1..60000", "0", "60001"},
    {"/storage/lz4_acceleration", "in 1..65537", "0", "65538"},
    {"/storage/segment_max_bytes", "in 1048576..1099511627776", "1048575", "1099511627777"},
    {"/storage/segment_max_duration_s", "in 0..604800", "-1", "604801"},
    {"/storage/fsync_interval_ms", "in 1..3600000", "0", "3600001"},
    {"/storage/retention/max_bytes", ">= 0", "-1", nullptr},
    {"/storage/retention/max_age_s", "in 0..9223372036", "-1", "9223372037"},
    {"/storage/min_free_bytes", ">= 0", "-1", nullptr},
    {"/snapshot/max_bytes", "in 1048576..68719476736", "1048575", "68719476737"},
};

}  // namespace

TEST_CASE("parse_recorder_config refuses integers out of range, naming path and range") {
  for (const IntegerRange& k : kIntegerRanges) {
    const std::string expected = std::string(k.pointer) + ": expected an integer " + k.range;
    INFO(k.pointer);
    CHECK(only_error(doc_with(k.pointer, k.too_low)) == expected + ", got " + k.too_low);
    if (k.too_high != nullptr) {
      CHECK(only_error(doc_with(k.pointer, k.too_high)) == expected + ", got " + k.too_high);
    }
  }
  // Beyond 64 bits the number is no longer an integer for the parser; still a clear message.
  CHECK(only_error(doc_with("/storage/retention/max_bytes", "18446744073709551616")) ==
        "/storage/retention/max_bytes: expected an integer >= 0, got 1.8446744073709552e+19");
  CHECK(only_error(doc_with("/domain", "-9223372036854775808")) ==
        "/domain: expected an integer in 0..232, got -9223372036854775808");
}

TEST_CASE("parse_recorder_config refuses non-integers for integer keys") {
  for (const IntegerRange& k : kIntegerRanges) {
    const std::string expected = std::string(k.pointer) + ": expected an integer " + k.range;
    INFO(k.pointer);
    CHECK(only_error(doc_with(k.pointer, "1.5")) == expected + ", got 1.5");
    CHECK(only_error(doc_with(k.pointer, "4096.0")) == expected + ", got 4096.0");
    CHECK(only_error(doc_with(k.pointer, "1e3")) == expected + ", got 1000.0");
    CHECK(only_error(doc_with(k.pointer, R"("4096")")) == expected + R"(, got "4096")");
    CHECK(only_error(doc_with(k.pointer, "true")) == expected + ", got true");
    CHECK(only_error(doc_with(k.pointer, "null")) == expected + ", got null");
    CHECK(only_error(doc_with(k.pointer, "[1]")) == expected + ", got an array");
    CHECK(only_error(doc_with(k.pointer, "{}")) == expected + ", got {}");
  }
}

TEST_CASE("parse_recorder_config refuses bad stats intervals") {
  const std::string expected = "/stats_interval_s: expected a number > 0 and <= 3600, got ";
  CHECK(only_error(doc_with("/stats_interval_s", "0")) == expected + "0");
  CHECK(only_error(doc_with("/stats_interval_s", "0.0")) == expected + "0.0");
  CHECK(only_error(doc_with("/stats_interval_s", "-1")) == expected + "-1");
  CHECK(only_error(doc_with("/stats_interval_s", "3600.5")) == expected + "3600.5");
  CHECK(only_error(doc_with("/stats_interval_s", "3601")) == expected + "3601");
  CHECK(only_error(doc_with("/stats_interval_s", R"("5")")) == expected + R"("5")");
  CHECK(only_error(doc_with("/stats_interval_s", "false")) == expected + "false");
}

TEST_CASE("parse_recorder_config refuses wrong types for string, array and object keys") {
  const std::pair<std::string, std::string> cases[] = {
      {doc_with("/interface", "5"),
       "/interface: expected an interface name (at most 15 characters, no '/' or spaces), an "
       "IPv4 address or \"\", got 5"},
      {doc_with("/peers", R"("10.0.0.1")"),
       R"(/peers: expected an array of IPv4 address strings, got "10.0.0.1")"},
      {doc_with("/peers", "[1]"), "/peers/0: expected an IPv4 address string, got 1"},
      {doc_with("/topics", R"(["*"])"), "/topics: expected an object, got an array"},
      {doc_with("/topics/include", R"("*")"),
       R"(/topics/include: expected an array of topic pattern strings, got "*")"},
      {doc_with("/topics/exclude", "{}"),
       "/topics/exclude: expected an array of topic pattern strings, got {}"},
      {doc_with("/topics/include", R"(["a", 5])"),
       "/topics/include/1: expected a topic pattern string, got 5"},
      {doc_with("/topics/exclude", "[null]"),
       "/topics/exclude/0: expected a topic pattern string, got null"},
      {R"({"storage":"rec"})", R"(/storage: expected an object, got "rec")"},
      {doc_with("/storage/path", "5"),
       "/storage/path: expected a non-empty string (the recording directory), got 5"},
      {doc_with("/storage/path", R"("")"),
       R"(/storage/path: expected a non-empty string (the recording directory), got "")"},
      {doc_with("/storage/retention", "0"), "/storage/retention: expected an object, got 0"},
      {doc_with("/storage/compression", "true"),
       R"(/storage/compression: expected one of "lz4", "none", got true)"},
      {doc_with("/storage/fsync", "1"),
       R"(/storage/fsync: expected one of "none", "chunk", "segment", "interval", got 1)"},
      {doc_with("/storage/on_low_space", "1"),
       R"(/storage/on_low_space: expected one of "stop", "rotate", got 1)"},
      {doc_with("/storage/min_free_bytes", R"("1 GiB")"),
       R"(/storage/min_free_bytes: expected an integer >= 0, got "1 GiB")"},
      {doc_with("/log", R"("info")"), R"(/log: expected an object, got "info")"},
      {doc_with("/log/level", "2"),
       R"(/log/level: expected one of "trace", "debug", "info", "warn", "error", "off", got 2)"},
      {doc_with("/log/file", "false"), "/log/file: expected a string, got false"},
      {doc_with("/types", "[]"), "/types: expected an object, got []"},
      {doc_with("/types/idl", R"("a.idl")"),
       R"(/types/idl: expected an array of IDL file paths, got "a.idl")"},
      {doc_with("/types/idl", R"(["a.idl", ""])"),
       R"(/types/idl/1: expected a non-empty path without NUL characters, got "")"},
      {doc_with("/storage/on_segment_closed", "7"),
       "/storage/on_segment_closed: expected a string, got 7"},
      {doc_with("/topics/writers", R"("remote")"),
       R"(/topics/writers: expected one of "all", "local", got "remote")"},
      {doc_with("/mode", R"("snap")"),
       R"(/mode: expected one of "record", "snapshot", got "snap")"},
      {doc_with("/snapshot", "30"), "/snapshot: expected an object, got 30"},
      {doc_with("/snapshot/before_s", "0"),
       "/snapshot/before_s: expected a number > 0 and <= 3600, got 0"},
      {doc_with("/snapshot/before_s", "3601"),
       "/snapshot/before_s: expected a number > 0 and <= 3600, got 3601"},
      {doc_with("/snapshot/after_s", "-0.5"),
       "/snapshot/after_s: expected a number >= 0 and <= 3600, got -0.5"},
      {doc_with("/snapshot/after_s", R"("10")"),
       R"(/snapshot/after_s: expected a number >= 0 and <= 3600, got "10")"},
      {doc_with("/snapshot/befor_s", "1"),
       R"(/snapshot/befor_s: unknown key, did you mean "before_s"? (known keys: before_s, after_s, max_bytes))"},
      {"[]", "top level: expected an object, got []"},
      {R"("x")", R"(top level: expected an object, got "x")"},
  };
  for (const auto& [doc, message] : cases) CHECK(only_error(doc) == message);
}

TEST_CASE("parse_recorder_config refuses bad enum values, listing the choices") {
  CHECK(only_error(doc_with("/storage/fsync", R"("always")")) ==
        R"(/storage/fsync: expected one of "none", "chunk", "segment", "interval", got "always")");
  CHECK(only_error(doc_with("/storage/fsync", R"("Chunk")")) ==
        R"(/storage/fsync: expected one of "none", "chunk", "segment", "interval", got "Chunk")");
  CHECK(only_error(doc_with("/storage/compression", R"("zstd")")) ==
        R"(/storage/compression: expected one of "lz4", "none", got "zstd")");
  CHECK(only_error(doc_with("/storage/page_cache", "false")) ==
        R"(/storage/page_cache: expected one of "drop", "keep", got false)");
  CHECK(only_error(doc_with("/storage/direct_io", R"("on")")) ==
        R"(/storage/direct_io: expected one of "auto", "off", got "on")");
  CHECK(only_error(doc_with("/storage/on_low_space", R"("delete")")) ==
        R"(/storage/on_low_space: expected one of "stop", "rotate", got "delete")");
  CHECK(only_error(doc_with("/storage/on_low_space", R"("Stop")")) ==
        R"(/storage/on_low_space: expected one of "stop", "rotate", got "Stop")");
  CHECK(only_error(doc_with("/storage/on_low_space", "null")) ==
        R"(/storage/on_low_space: expected one of "stop", "rotate", got null)");
  CHECK(
      only_error(doc_with("/log/level", R"("warning")")) ==
      R"(/log/level: expected one of "trace", "debug", "info", "warn", "error", "off", got "warning")");
}

TEST_CASE("parse_recorder_config refuses bad interfaces and peers") {
  const std::string itf =
      "/interface: expected an interface name (at most 15 characters, no '/' or spaces), an IPv4 "
      "address or \"\", got ";
  CHECK(only_error(doc_with("/interface", R"("999.1.1.1")")) == itf + R"("999.1.1.1")");
  CHECK(only_error(doc_with("/interface", R"("10.0.0")")) == itf + R"("10.0.0")");
  CHECK(only_error(doc_with("/interface", R"("abcdefghijklmnop")")) ==
        itf + R"("abcdefghijklmnop")");
  CHECK(only_error(doc_with("/interface", R"("eth 0")")) == itf + R"("eth 0")");
  CHECK(only_error(doc_with("/interface", R"("a/b")")) == itf + R"("a/b")");
  CHECK(only_error(doc_with("/interface", R"("..")")) == itf + R"("..")");

  CHECK(errors_of(doc_with("/peers", R"(["10.0.0.1", "host.example", "1.2.3.256", ""])")) ==
        std::vector<std::string>{
            R"(/peers/1: expected an IPv4 address string, got "host.example")",
            R"(/peers/2: expected an IPv4 address string, got "1.2.3.256")",
            R"(/peers/3: expected an IPv4 address string, got "")",
        });
  CHECK(only_error(doc_with("/peers", R"(["10.0.0.1\u0000junk"])")) ==
        R"(/peers/0: expected an IPv4 address string, got "10.0.0.1\u0000junk")");
}

TEST_CASE("parse_recorder_config refuses bad transports, naming the element") {
  CHECK(errors_of(doc_with("/transports", R"(["shm", "tcp", 3, "shm"])")) ==
        std::vector<std::string>{
            R"(/transports/1: expected "shm" or "udp", got "tcp")",
            R"(/transports/2: expected "shm" or "udp", got 3)",
            R"(/transports/3: "shm" is listed twice)",
        });
  CHECK(only_error(doc_with("/transports", "[]")) ==
        R"(/transports: expected at least one of "shm" and "udp", got [])");
  CHECK(only_error(doc_with("/transports", R"("shm")")) ==
        R"(/transports: expected an array of "shm" and/or "udp", got "shm")");
}

TEST_CASE("parse_recorder_config refuses bad topic patterns with check_glob's reason") {
  CHECK(only_error(doc_with("/topics/include", R"(["a*", "[abc"])")) ==
        R"(/topics/include/1: invalid topic pattern "[abc": unterminated '[' at position 1)");
  CHECK(only_error(doc_with("/topics/exclude", R"(["ok", "x[a-"])")) ==
        R"(/topics/exclude/1: invalid topic pattern "x[a-": unterminated '[' at position 2)");
  CHECK(only_error(doc_with("/topics/exclude", R"([""])")) ==
        R"(/topics/exclude/0: invalid topic pattern "": empty pattern)");
  CHECK(only_error(doc_with("/topics/include", "[]")) ==
        "/topics/include: expected a non-empty array of topic pattern strings, got []");
}

TEST_CASE("parse_recorder_config requires storage.path") {
  const std::string missing =
      "/storage/path: required key is missing (expected a string: the recording directory)";
  CHECK(only_error("{}") == missing);
  CHECK(only_error(R"({"domain":1})") == missing);
  CHECK(only_error(R"({"storage":{}})") == missing);
  CHECK(only_error(R"({"storage":{"fsync":"none"}})") == missing);
}

TEST_CASE("parse_recorder_config refuses a queue smaller than one chunk") {
  CHECK(only_error(R"({"storage":{"path":"x"},"queue_max_bytes":1048576})") ==
        "/queue_max_bytes: expected at least /storage/chunk_max_bytes (4194304), got 1048576");
  CHECK(only_error(R"({"storage":{"path":"x","chunk_max_bytes":268435456}})") ==
        "/queue_max_bytes: expected at least /storage/chunk_max_bytes (268435456), got 67108864");
  // A bad chunk_max_bytes is reported alone, not compared.
  CHECK(only_error(R"({"storage":{"path":"x","chunk_max_bytes":1},"queue_max_bytes":1048576})") ==
        "/storage/chunk_max_bytes: expected an integer in 4096..268435456, got 1");
}

TEST_CASE("parse_recorder_config refuses unknown keys, suggesting close ones") {
  const std::string top =
      " (known keys: domain, interface, peers, transports, discovery, topics, mode, snapshot, "
      "storage, "
      "queue_max_bytes, "
      "max_sample_bytes, stats_interval_s, log, types, control, metrics)";
  const std::string storage =
      " (known keys: path, chunk_max_bytes, chunk_max_age_ms, segment_max_bytes, "
      "segment_max_duration_s, compression, lz4_acceleration, fsync, fsync_interval_ms, "
      "page_cache, direct_io, retention, min_free_bytes, on_low_space, on_segment_closed)";
  CHECK(only_error(doc_with("/domian", "1")) ==
        "/domian: unknown key, did you mean \"domain\"?" + top);
  CHECK(only_error(doc_with("/Domain", "1")) ==
        "/Domain: unknown key, did you mean \"domain\"?" + top);
  CHECK(only_error(doc_with("/verbose", "true")) == "/verbose: unknown key" + top);
  CHECK(only_error(doc_with("/storage/chunk_size", "4096")) ==
        "/storage/chunk_size: unknown key" + storage);
  CHECK(only_error(doc_with("/storage/chunk_max_byte", "4096")) ==
        "/storage/chunk_max_byte: unknown key, did you mean \"chunk_max_bytes\"?" + storage);
  CHECK(only_error(doc_with("/storage/fsnyc", R"("none")")) ==
        "/storage/fsnyc: unknown key, did you mean \"fsync\"?" + storage);
  CHECK(only_error(doc_with("/storage/min_free_byte", "1")) ==
        "/storage/min_free_byte: unknown key, did you mean \"min_free_bytes\"?" + storage);
  CHECK(only_error(doc_with("/storage/on_low_disk_space", R"("stop")")) ==
        "/storage/on_low_disk_space: unknown key" + storage);
  CHECK(only_error(doc_with("/storage/retention/max_age", "1")) ==
        "/storage/retention/max_age: unknown key, did you mean \"max_age_s\"? "
        "(known keys: max_bytes, max_age_s)");
  CHECK(only_error(doc_with("/topics/includes", R"(["*"])")) ==
        "/topics/includes: unknown key, did you mean \"include\"? (known keys: include, exclude, "
        "regex, writers)");
  CHECK(only_error(doc_with("/log/levle", R"("info")")) ==
        "/log/levle: unknown key, did you mean \"level\"? (known keys: level, file)");
  CHECK(only_error(doc_with("/log/path", R"("x")")) ==
        "/log/path: unknown key (known keys: level, file)");
}

TEST_CASE("parse_recorder_config escapes odd keys in JSON pointers") {
  CHECK(
      only_error(R"({"storage":{"path":"x"},"a/b~c":1})") ==
      R"(/a~1b~0c: unknown key (known keys: domain, interface, peers, transports, discovery, topics, mode, snapshot, storage, )"
      R"(queue_max_bytes, max_sample_bytes, stats_interval_s, log, types, control, metrics))");
  CHECK(
      only_error(R"({"storage":{"path":"x"},"a\nb":1})") ==
      R"(/a\u000ab: unknown key (known keys: domain, interface, peers, transports, discovery, topics, mode, snapshot, storage, )"
      R"(queue_max_bytes, max_sample_bytes, stats_interval_s, log, types, control, metrics))");
}

TEST_CASE("parse_recorder_config shortens long values in messages") {
  const std::string long_value(200, 'a');
  CHECK(only_error(doc_with("/storage/fsync", "\"" + long_value + "\"")) ==
        R"(/storage/fsync: expected one of "none", "chunk", "segment", "interval", got ")" +
            std::string(55, 'a') + "...\"");
}

TEST_CASE("parse_recorder_config refuses duplicate keys") {
  CHECK(only_error(R"({"storage":{"path":"x","fsync":"none","fsync":"chunk"}})") ==
        "/storage/fsync: duplicate key (each key may appear once per object)");
  CHECK(errors_of(R"({"storage":{"path":"x"},"storage":{"path":"y"},"peers":[{"a":1,"a":2}]})") ==
        std::vector<std::string>{
            "/storage: duplicate key (each key may appear once per object)",
            "/peers/0/a: duplicate key (each key may appear once per object)",
            "/peers/0: expected an IPv4 address string, got an object",
        });
}

TEST_CASE("parse_recorder_config reports all problems together in document order") {
  const auto messages = errors_of(R"({
    "domain": 300,
    "topics": {"include": ["[x"], "exclude": 7},
    "storage": {
      "chunk_size": 1,
      "fsync": "always",
      "retention": {"max_bytes": -5}
    },
    "stats_interval_s": 0,
    "log": {"level": "loud"}
  })");
  CHECK(messages == std::vector<std::string>{
                        "/domain: expected an integer in 0..232, got 300",
                        R"(/topics/include/0: invalid topic pattern "[x": unterminated '[' at )"
                        "position 1",
                        "/topics/exclude: expected an array of topic pattern strings, got 7",
                        "/storage/chunk_size: unknown key (known keys: path, chunk_max_bytes, "
                        "chunk_max_age_ms, segment_max_bytes, segment_max_duration_s, "
                        "compression, lz4_acceleration, fsync, fsync_interval_ms, page_cache, "
                        "direct_io, retention, min_free_bytes, on_low_space, on_segment_closed)",
                        R"(/storage/fsync: expected one of "none", "chunk", "segment", )"
                        R"("interval", got "always")",
                        "/storage/retention/max_bytes: expected an integer >= 0, got -5",
                        "/storage/path: required key is missing (expected a string: the "
                        "recording directory)",
                        "/stats_interval_s: expected a number > 0 and <= 3600, got 0",
                        R"(/log/level: expected one of "trace", "debug", "info", "warn", )"
                        R"("error", "off", got "loud")",
                    });
}

TEST_CASE("parse_recorder_config prefixes messages with the source name") {
  auto r = parse_recorder_config(R"({"storage":{"path":"x","fsync":"always"},"domain":-1})",
                                 "recorder.json");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().messages ==
        std::vector<std::string>{
            R"(recorder.json: /storage/fsync: expected one of "none", "chunk", "segment", )"
            R"("interval", got "always")",
            "recorder.json: /domain: expected an integer in 0..232, got -1",
        });
  CHECK(r.error().to_string() ==
        "recorder.json: /storage/fsync: expected one of \"none\", \"chunk\", \"segment\", "
        "\"interval\", got \"always\"\nrecorder.json: /domain: expected an integer in 0..232, "
        "got -1\n");
}

TEST_CASE("load_recorder_config reports files it cannot read") {
  config_test::TempDir dir;
  const std::string missing = dir.str("nope.json");
  auto r = load_recorder_config(missing);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().messages ==
        std::vector<std::string>{"cannot read " + missing + ": No such file or directory"});

  auto d = load_recorder_config(dir.path());
  REQUIRE_FALSE(d.ok());
  CHECK(d.error().messages ==
        std::vector<std::string>{"cannot read " + dir.str() + ": Is a directory"});
}

TEST_CASE("load_recorder_config prefixes schema errors with the file name") {
  config_test::TempDir dir;
  const std::string file = dir.str("r.json");
  {
    std::FILE* f = std::fopen(file.c_str(), "w");
    REQUIRE(f != nullptr);
    std::fputs("{\"storage\": {\"path\": \"x\", \"compression\": \"gzip\"}}\n", f);
    std::fclose(f);
  }
  auto r = load_recorder_config(file);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().messages ==
        std::vector<std::string>{
            file + R"(: /storage/compression: expected one of "lz4", "none", got "gzip")"});
}

TEST_CASE("control.socket takes a path of at most 107 bytes or \"\"") {
  CHECK(config_test::parsed(doc_with("/control/socket", R"("")")).control.socket.empty());
  CHECK(config_test::parsed(doc_with("/control/socket", R"("/run/x/r.sock")")).control.socket ==
        "/run/x/r.sock");
  const std::string ok(107, 'a');
  CHECK(config_test::parsed(doc_with("/control/socket", "\"" + ok + "\"")).control.socket == ok);
  CHECK(only_error(doc_with("/control/socket", "\"" + ok + "a\"")) ==
        "/control/socket: expected a socket path of at most 107 bytes without NUL characters, or "
        "\"\" for none, got \"" +
            std::string(55, 'a') + "...\"");
  CHECK(only_error(doc_with("/control/socket", "1")) ==
        "/control/socket: expected a socket path of at most 107 bytes without NUL characters, or "
        "\"\" for none, got 1");
}

TEST_CASE("control.dds is a boolean, control.allow an array of IPv4 networks") {
  CHECK(config_test::parsed(doc_with("/control/dds", "false")).control == ControlConfig{});
  CHECK(only_error(doc_with("/control/dds", "1")) == "/control/dds: expected true or false, got 1");
  CHECK(only_error(doc_with("/control/dds", R"("yes")")) ==
        "/control/dds: expected true or false, got \"yes\"");
  const std::string bad =
      ": expected an IPv4 network such as \"198.18.0.0/15\" or an IPv4 address, got ";
  CHECK(only_error(doc_with("/control/allow", R"("198.18.0.0/15")")) ==
        "/control/allow: expected an array of IPv4 network strings, got \"198.18.0.0/15\"");
  CHECK(only_error(doc_with("/control/allow", R"(["10.0.0.0/8", "localhost"])")) ==
        "/control/allow/1" + bad + "\"localhost\"");
  for (const char* text : {"10.0.0/8", "10.0.0.0/", "10.0.0.0/x", "10.0.0.0/-1", "10.0.0.0/ 8",
                           "/8", "", "10.0.0.0/8/8", "::1/128"}) {
    INFO(text);
    CHECK(only_error(doc_with("/control/allow", std::string("[\"") + text + "\"]")) ==
          "/control/allow/0" + bad + "\"" + text + "\"");
  }
  CHECK(only_error(doc_with("/control/allow", "[32]")) == "/control/allow/0" + bad + "32");
  CHECK(only_error(doc_with("/control/allow", R"(["10.0.0.0/33"])")) ==
        "/control/allow/0: expected a prefix length in 0..32, got \"10.0.0.0/33\"");
  CHECK(only_error(doc_with("/control/allow", R"(["10.0.0.0/4294967328"])")) ==
        "/control/allow/0: expected a prefix length in 0..32, got \"10.0.0.0/4294967328\"");
}

TEST_CASE(
    "control.key_file is a path (\"\": none) given with control.dds, max_clock_skew_s 1 to 3600") {
  const std::string base =
      R"({"storage":{"path":"x"},"control":{"dds":true,"allow":["10.0.0.0/8"],)";
  CHECK(only_error(base + R"("key_file":7}})") ==
        "/control/key_file: expected the path of a key file, or \"\" for none, got 7");
  CHECK(only_error(R"({"storage":{"path":"x"},"control":{"key_file":"k"}})") ==
        "/control/key_file: signs DDS control requests: set /control/dds to true, or leave "
        "key_file out");
  CHECK(only_error(base + R"("max_clock_skew_s":0.5}})") ==
        "/control/max_clock_skew_s: expected seconds from 1 to 3600, got 0.5");
  CHECK(only_error(base + R"("max_clock_skew_s":"30"}})") ==
        "/control/max_clock_skew_s: expected seconds from 1 to 3600, got \"30\"");
  const RecorderConfig c =
      config_test::parsed(base + R"("key_file":"/etc/k","max_clock_skew_s":5}})");
  CHECK(c.control.key_file == "/etc/k");
  CHECK(c.control.max_clock_skew_s == 5);
  const RecorderConfig d =
      config_test::parsed(R"({"storage":{"path":"x"},"control":{"key_file":""}})");
  CHECK(d.control.key_file.empty());
  CHECK(d.control.max_clock_skew_s == 30);
}

TEST_CASE("control.set is a short name of A-Z a-z 0-9 . _ -, given with control.dds") {
  const std::string base =
      R"({"storage":{"path":"x"},"control":{"dds":true,"allow":["10.0.0.0/8"],)";
  CHECK(only_error(base + R"("set":"rig 1"}})") ==
        "/control/set: expected a set name of at most 64 characters of A-Z a-z 0-9 . _ -, got "
        "\"rig 1\"");
  CHECK(only_error(base + R"("set":")" + std::string(65, 'a') + R"("}})")
            .rfind("/control/set: expected a set name of at most 64", 0) == 0);
  CHECK(only_error(base + R"("set":7}})") == "/control/set: expected a string, got 7");
  CHECK(only_error(R"({"storage":{"path":"x"},"control":{"set":"rig"}})") ==
        "/control/set: names a recording set reached by DDS control: set /control/dds to true, "
        "or leave set out");
  CHECK(config_test::parsed(base + R"("set":"rig-1.a_b"}})").control.set == "rig-1.a_b");
  CHECK(config_test::parsed(R"({"storage":{"path":"x"}})").control.set.empty());
}

TEST_CASE("control.armed is a boolean, for mode record with a control path") {
  CHECK(only_error(R"({"storage":{"path":"x"},"control":{"armed":1}})") ==
        "/control/armed: expected true or false, got 1");
  CHECK(only_error(R"({"storage":{"path":"x"},"control":{"armed":true,"socket":""}})") ==
        "/control/armed: waits for a start command, but no control path can send one: give "
        "/control/socket a path or set /control/dds to true, or leave armed out");
  CHECK(only_error(R"({"storage":{"path":"x"},"mode":"snapshot","control":{"armed":true}})") ==
        "/control/armed: waits for a start command, which mode \"snapshot\" does not take (it "
        "always buffers): set /mode to \"record\", or leave armed out");
  CHECK(config_test::parsed(R"({"storage":{"path":"x"},"control":{"armed":true}})").control.armed);
  CHECK(config_test::parsed(
            R"({"storage":{"path":"x"},"control":{"armed":true,"socket":"","dds":true,)"
            R"("allow":["10.0.0.0/8"]}})")
            .control.armed);
  CHECK_FALSE(config_test::parsed(R"({"storage":{"path":"x"}})").control.armed);
}

TEST_CASE("discovery limits are integers from 1, into RecorderConfig::discovery") {
  CHECK(only_error(R"({"storage":{"path":"x"},"discovery":{"max_participants":0}})") ==
        "/discovery/max_participants: expected an integer in 1..1000000, got 0");
  CHECK(only_error(R"({"storage":{"path":"x"},"discovery":{"max_endpoints":1.5}})") ==
        "/discovery/max_endpoints: expected an integer in 1..10000000, got 1.5");
  CHECK(only_error(R"({"storage":{"path":"x"},"discovery":{"max_peers":1}})") ==
        "/discovery/max_peers: unknown key (known keys: max_participants, "
        "max_participants_per_address, max_endpoints_per_participant, max_endpoints)");
  const RecorderConfig c = config_test::parsed(
      R"({"storage":{"path":"x"},"discovery":{"max_participants":10,"max_participants_per_address":2,)"
      R"("max_endpoints_per_participant":30,"max_endpoints":40}})");
  CHECK(c.discovery == config::DiscoveryConfig{10, 2, 30, 40});
}

TEST_CASE("control.dds true needs a non-empty control.allow") {
  const std::string required =
      "/control/allow: required when /control/dds is true (expected a non-empty array of the "
      "IPv4 networks whose participants may send commands, e.g. [\"127.0.0.1/32\"])";
  CHECK(only_error(R"({"storage":{"path":"x"},"control":{"dds":true}})") == required);
  CHECK(only_error(R"({"storage":{"path":"x"},"control":{"dds":true,"allow":[]}})") ==
        required + ", got []");
  // In either order, and a bad entry is reported alone (not as a missing list too).
  CHECK(only_error(R"({"storage":{"path":"x"},"control":{"allow":[],"dds":true}})") ==
        required + ", got []");
  CHECK(only_error(R"({"storage":{"path":"x"},"control":{"dds":true,"allow":["10.0.0.0/40"]}})") ==
        "/control/allow/0: expected a prefix length in 0..32, got \"10.0.0.0/40\"");
  CHECK(only_error(R"({"storage":{"path":"x"},"control":{"dds":true,"allow":{}}})") ==
        "/control/allow: expected an array of IPv4 network strings, got {}");
  // With the file name, as the recorder prints it.
  auto r = parse_recorder_config(R"({"storage":{"path":"x"},"control":{"dds":true}})", "r.json");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().messages == std::vector<std::string>{"r.json: " + required});
  const RecorderConfig c = config_test::parsed(
      R"({"storage":{"path":"x"},"control":{"dds":true,"allow":["127.0.0.1"]}})");
  CHECK(c.control.dds);
  CHECK(c.control.allow == std::vector<Ipv4Network>{{0x7F000001u, 32}});
}

TEST_CASE("metrics.listen takes IPV4:PORT or \"\"") {
  CHECK(config_test::parsed(doc_with("/metrics/listen", R"("127.0.0.1:9464")")).metrics.listen ==
        "127.0.0.1:9464");
  CHECK(config_test::parsed(doc_with("/metrics/listen", R"("")")).metrics.listen.empty());
  const std::string why =
      "/metrics/listen: expected \"IPV4:PORT\" (e.g. \"127.0.0.1:9464\") or \"\", got ";
  CHECK(only_error(doc_with("/metrics/listen", R"("localhost:9464")")) ==
        why + "\"localhost:9464\"");
  CHECK(only_error(doc_with("/metrics/listen", R"("127.0.0.1:65536")")) ==
        why + "\"127.0.0.1:65536\"");
  CHECK(only_error(doc_with("/metrics/listen", R"("127.0.0.1:")")) == why + "\"127.0.0.1:\"");
  CHECK(only_error(doc_with("/metrics/listen", "9464")) == why + "9464");
}
