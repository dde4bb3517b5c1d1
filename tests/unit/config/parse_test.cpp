// Documents that parse: the defaults, the example file, every key at its limits and in between.
#include <catch2/catch.hpp>

#include "test_util.hpp"

using namespace config;
using config_test::doc_with;
using config_test::parsed;

TEST_CASE("parse_recorder_config gives the documented defaults for a minimal document") {
  const RecorderConfig c = parsed(R"({"storage":{"path":"x"}})");
  CHECK(c.domain == 0);
  CHECK(c.interface.empty());
  CHECK(c.peers.empty());
  CHECK(c.topics.include == std::vector<std::string>{"*"});
  CHECK(c.topics.exclude.empty());
  CHECK(c.storage.path == "x");
  CHECK(c.storage.chunk_max_bytes == 4194304u);
  CHECK(c.storage.chunk_max_age == std::chrono::milliseconds(100));
  CHECK(c.storage.segment_max_bytes == 268435456u);
  CHECK(c.storage.segment_max_duration == std::chrono::seconds(600));
  CHECK(c.storage.compression == Compression::kLz4);
  CHECK(c.storage.lz4_acceleration == 16u);
  CHECK(c.storage.fsync == FsyncPolicy::kChunk);
  CHECK(c.storage.fsync_interval == std::chrono::milliseconds(1000));
  CHECK(c.storage.drop_page_cache);
  CHECK(c.storage.direct_io);
  CHECK(c.storage.retention.max_bytes == 0u);
  CHECK(c.storage.retention.max_age == std::chrono::seconds(0));
  CHECK(c.storage.min_free_bytes == 1073741824u);
  CHECK(c.storage.on_low_space == LowSpacePolicy::kStop);
  CHECK(c.queue_max_bytes == 67108864u);
  CHECK(c.max_sample_bytes == 67108864u);
  CHECK(c.stats_interval.count() == 5.0);
  CHECK(c.log.level == LogLevel::kInfo);
  CHECK(c.log.file.empty());
  CHECK(c.mode == RecorderMode::kRecord);
  CHECK(c.snapshot.before.count() == 30.0);
  CHECK(c.snapshot.after.count() == 10.0);
  CHECK(c.snapshot.max_bytes == 268435456u);
  CHECK(c.control.socket == "control.sock");
  CHECK_FALSE(c.control.dds);
  CHECK(c.control.allow.empty());

  // ... and they are the member initializers, so a default-constructed struct agrees.
  RecorderConfig expected;
  expected.storage.path = "x";
  CHECK(c == expected);
}

TEST_CASE("load_recorder_config reads the example file with the expected values") {
  auto r = load_recorder_config(PUBSUB_CONFIG_DIR "/examples/recorder.json");
  INFO((r.ok() ? std::string() : r.error().to_string()));
  REQUIRE(r.ok());
  const RecorderConfig& c = *r;
  CHECK(c.domain == 0);
  CHECK(c.interface.empty());
  CHECK(c.peers.empty());
  CHECK(c.topics.include == std::vector<std::string>{"*"});
  CHECK(c.topics.exclude == std::vector<std::string>{"rt/rosout", "*_debug"});
  CHECK(c.topics.regex.empty());
  CHECK(c.storage.path == "recordings/example");
  CHECK(c.storage.chunk_max_bytes == 4194304u);
  CHECK(c.storage.chunk_max_age == std::chrono::milliseconds(100));
  CHECK(c.storage.segment_max_bytes == 268435456u);
  CHECK(c.storage.segment_max_duration == std::chrono::seconds(600));
  CHECK(c.storage.compression == Compression::kLz4);
  CHECK(c.storage.fsync == FsyncPolicy::kChunk);
  CHECK(c.storage.fsync_interval == std::chrono::milliseconds(1000));
  CHECK(c.storage.retention.max_bytes == 107374182400u);
  CHECK(c.storage.retention.max_age == std::chrono::seconds(604800));
  CHECK(c.storage.min_free_bytes == 1073741824u);
  CHECK(c.storage.on_low_space == LowSpacePolicy::kStop);
  CHECK(c.queue_max_bytes == 67108864u);
  CHECK(c.transport_shm);
  CHECK(c.transport_udp);
  CHECK(c.max_sample_bytes == 16777216u);
  CHECK(c.stats_interval.count() == 5.0);
  CHECK(c.log.level == LogLevel::kInfo);
  CHECK(c.log.file.empty());
  CHECK_FALSE(c.control.dds);
  CHECK(c.control.allow == std::vector<Ipv4Network>{{0x7F000001u, 32}});
}

TEST_CASE("parse_recorder_config reads every key when set to non-default values") {
  const RecorderConfig c = parsed(R"({
    "domain": 232,
    "interface": "eth0",
    "peers": ["10.0.0.1", "192.168.1.2"],
    "transports": ["shm"],
    "topics": {"include": ["rt/*", "Square"], "exclude": ["*[!a-z]", "?"]},
    "storage": {
      "path": "/var/lib/rec/one",
      "chunk_max_bytes": 65536,
      "chunk_max_age_ms": 60000,
      "segment_max_bytes": 1099511627776,
      "segment_max_duration_s": 0,
      "compression": "none",
      "lz4_acceleration": 65537,
      "fsync": "interval",
      "fsync_interval_ms": 3600000,
      "page_cache": "keep",
      "direct_io": "off",
      "retention": {"max_bytes": 18446744073709551615, "max_age_s": 86400},
      "min_free_bytes": 0,
      "on_low_space": "rotate"
    },
    "queue_max_bytes": 17179869184,
    "max_sample_bytes": 1024,
    "stats_interval_s": 0.25,
    "log": {"level": "trace", "file": "/var/log/rec.log"},
    "types": {"idl": ["msgs/pose.idl", "/usr/share/idl/seq.idl"]},
    "mode": "snapshot",
    "snapshot": {"before_s": 0.5, "after_s": 0, "max_bytes": 68719476736},
    "control": {"socket": "", "dds": true, "allow": ["198.18.0.0/15", "127.0.0.1"]}
  })");
  CHECK(c.mode == RecorderMode::kSnapshot);
  CHECK(c.snapshot.before.count() == 0.5);
  CHECK(c.snapshot.after.count() == 0.0);
  CHECK(c.snapshot.max_bytes == 68719476736u);
  CHECK(c.domain == 232);
  CHECK(c.interface == "eth0");
  CHECK(c.peers == std::vector<std::string>{"10.0.0.1", "192.168.1.2"});
  CHECK(c.transport_shm);
  CHECK_FALSE(c.transport_udp);
  CHECK(c.topics.include == std::vector<std::string>{"rt/*", "Square"});
  CHECK(c.topics.exclude == std::vector<std::string>{"*[!a-z]", "?"});
  CHECK(c.storage.path == "/var/lib/rec/one");
  CHECK(c.storage.chunk_max_bytes == 65536u);
  CHECK(c.storage.chunk_max_age == std::chrono::milliseconds(60000));
  CHECK(c.storage.segment_max_bytes == 1099511627776u);
  CHECK(c.storage.segment_max_duration == std::chrono::seconds(0));
  CHECK(c.storage.compression == Compression::kNone);
  CHECK(c.storage.lz4_acceleration == 65537u);
  CHECK(c.storage.fsync == FsyncPolicy::kInterval);
  CHECK(c.storage.fsync_interval == std::chrono::milliseconds(3600000));
  CHECK_FALSE(c.storage.drop_page_cache);
  CHECK_FALSE(c.storage.direct_io);
  CHECK(c.storage.retention.max_bytes == 18446744073709551615u);
  CHECK(c.storage.retention.max_age == std::chrono::seconds(86400));
  CHECK(c.storage.min_free_bytes == 0u);
  CHECK(c.storage.on_low_space == LowSpacePolicy::kRotate);
  CHECK(c.queue_max_bytes == 17179869184u);
  CHECK(c.max_sample_bytes == 1024u);
  CHECK(c.stats_interval.count() == 0.25);
  CHECK(c.log.level == LogLevel::kTrace);
  CHECK(c.log.file == "/var/log/rec.log");
  CHECK(c.types.idl ==
        std::vector<std::filesystem::path>{"msgs/pose.idl", "/usr/share/idl/seq.idl"});
  CHECK(c.control.socket.empty());
  CHECK(c.control.dds);
  REQUIRE(c.control.allow.size() == 2);
  CHECK(c.control.allow[0] == Ipv4Network{0xC6120000u, 15});
  CHECK(c.control.allow[1] == Ipv4Network{0x7F000001u, 32});
}

TEST_CASE("control.allow: CIDR networks, a bare address is a /32, prefix 0 contains everything") {
  const RecorderConfig c = parsed(
      doc_with("/control/allow", R"(["198.18.0.0/15", "10.1.2.3", "0.0.0.0/0", "10.1.2.255/24"])"));
  REQUIRE(c.control.allow.size() == 4);
  CHECK_FALSE(c.control.dds);  // a list alone turns nothing on
  const Ipv4Network& bench = c.control.allow[0];
  CHECK(bench.to_string() == "198.18.0.0/15");
  CHECK(bench.contains(0xC6120001u));        // 198.18.0.1
  CHECK(bench.contains(0xC613FFFFu));        // 198.19.255.255
  CHECK_FALSE(bench.contains(0xC6140000u));  // 198.20.0.0
  CHECK_FALSE(bench.contains(0xC611FFFFu));  // 198.17.255.255
  const Ipv4Network& host = c.control.allow[1];
  CHECK(host.to_string() == "10.1.2.3/32");
  CHECK(host.contains(0x0A010203u));
  CHECK_FALSE(host.contains(0x0A010204u));
  CHECK(c.control.allow[2].contains(0xFFFFFFFFu));
  CHECK(c.control.allow[2].contains(0u));
  // Bits past the prefix are kept as written and ignored when comparing.
  CHECK(c.control.allow[3].to_string() == "10.1.2.255/24");
  CHECK(c.control.allow[3].contains(0x0A010201u));
  CHECK_FALSE(c.control.allow[3].contains(0x0A010301u));
}

namespace {

struct IntegerKey {
  const char* pointer;
  uint64_t min;
  uint64_t max;
  uint64_t (*get)(const RecorderConfig&);
};

// Every integer key with its documented range and where its value lands.
const IntegerKey kIntegerKeys[] = {
    {"/domain", 0, 232, [](const RecorderConfig& c) -> uint64_t { return c.domain; }},
    {"/queue_max_bytes", 4194304, 17179869184,  // at least the default chunk_max_bytes
     [](const RecorderConfig& c) -> uint64_t { return c.queue_max_bytes; }},
    {"/max_sample_bytes", 1024, 1073737728,
     [](const RecorderConfig& c) -> uint64_t { return c.max_sample_bytes; }},
    {"/storage/chunk_max_bytes", 4096, 67108864,  // at most the default queue_max_bytes
     [](const RecorderConfig& c) -> uint64_t { return c.storage.chunk_max_bytes; }},
    {"/storage/chunk_max_age_ms", 1, 60000,
     [](const RecorderConfig& c) -> uint64_t { return c.storage.chunk_max_age.count(); }},
    {"/storage/segment_max_bytes", 1048576, 1099511627776,
     [](const RecorderConfig& c) -> uint64_t { return c.storage.segment_max_bytes; }},
    {"/storage/segment_max_duration_s", 0, 604800,
     [](const RecorderConfig& c) -> uint64_t { return c.storage.segment_max_duration.count(); }},
    {"/storage/fsync_interval_ms", 1, 3600000,
     [](const RecorderConfig& c) -> uint64_t { return c.storage.fsync_interval.count(); }},
    {"/storage/retention/max_bytes", 0, 18446744073709551615u,
     [](const RecorderConfig& c) -> uint64_t { return c.storage.retention.max_bytes; }},
    {"/storage/retention/max_age_s", 0, 9223372036,
     [](const RecorderConfig& c) -> uint64_t { return c.storage.retention.max_age.count(); }},
    {"/storage/min_free_bytes", 0, 18446744073709551615u,
     [](const RecorderConfig& c) -> uint64_t { return c.storage.min_free_bytes; }},
    {"/snapshot/max_bytes", 1048576, 68719476736,
     [](const RecorderConfig& c) -> uint64_t { return c.snapshot.max_bytes; }},
};

}  // namespace

TEST_CASE("parse_recorder_config accepts every integer key at both ends of its range") {
  for (const IntegerKey& k : kIntegerKeys) {
    for (const uint64_t v : {k.min, k.max, k.min + (k.max - k.min) / 3}) {
      INFO(k.pointer << " = " << v);
      CHECK(k.get(parsed(doc_with(k.pointer, std::to_string(v)))) == v);
    }
  }
}

TEST_CASE("parse_recorder_config accepts automatic, named and numeric interfaces") {
  CHECK(parsed(doc_with("/interface", R"("")")).interface.empty());
  CHECK(parsed(doc_with("/interface", R"("enp0s31f6")")).interface == "enp0s31f6");
  CHECK(parsed(doc_with("/interface", R"("eth0:1")")).interface == "eth0:1");
  CHECK(parsed(doc_with("/interface", R"("abcdefghijklmno")")).interface == "abcdefghijklmno");
  CHECK(parsed(doc_with("/interface", R"("198.18.0.2")")).interface == "198.18.0.2");
}

TEST_CASE("parse_recorder_config accepts every enum spelling") {
  const std::pair<const char*, LogLevel> levels[] = {
      {"trace", LogLevel::kTrace}, {"debug", LogLevel::kDebug}, {"info", LogLevel::kInfo},
      {"warn", LogLevel::kWarn},   {"error", LogLevel::kError}, {"off", LogLevel::kOff}};
  for (const auto& [name, level] : levels) {
    INFO(name);
    CHECK(parsed(doc_with("/log/level", "\"" + std::string(name) + "\"")).log.level == level);
    CHECK(to_string(level) == name);
  }
  const std::pair<const char*, FsyncPolicy> policies[] = {{"none", FsyncPolicy::kNone},
                                                          {"chunk", FsyncPolicy::kChunk},
                                                          {"segment", FsyncPolicy::kSegment},
                                                          {"interval", FsyncPolicy::kInterval}};
  for (const auto& [name, policy] : policies) {
    INFO(name);
    CHECK(parsed(doc_with("/storage/fsync", "\"" + std::string(name) + "\"")).storage.fsync ==
          policy);
    CHECK(to_string(policy) == name);
  }
  CHECK(parsed(doc_with("/storage/compression", R"("none")")).storage.compression ==
        Compression::kNone);
  CHECK(parsed(doc_with("/storage/compression", R"("lz4")")).storage.compression ==
        Compression::kLz4);
  CHECK(to_string(Compression::kNone) == "none");
  CHECK(to_string(Compression::kLz4) == "lz4");
  CHECK(parsed(doc_with("/storage/on_low_space", R"("stop")")).storage.on_low_space ==
        LowSpacePolicy::kStop);
  CHECK(parsed(doc_with("/storage/on_low_space", R"("rotate")")).storage.on_low_space ==
        LowSpacePolicy::kRotate);
  CHECK(to_string(LowSpacePolicy::kStop) == "stop");
  CHECK(to_string(LowSpacePolicy::kRotate) == "rotate");
  CHECK(parsed(doc_with("/storage/direct_io", R"("auto")")).storage.direct_io);
  CHECK_FALSE(parsed(doc_with("/storage/direct_io", R"("off")")).storage.direct_io);
}

TEST_CASE("parse_recorder_config takes fractional and integral stats intervals") {
  CHECK(parsed(doc_with("/stats_interval_s", "0.001")).stats_interval.count() == 0.001);
  CHECK(parsed(doc_with("/stats_interval_s", "3600")).stats_interval.count() == 3600.0);
  CHECK(parsed(doc_with("/stats_interval_s", "2.5e1")).stats_interval.count() == 25.0);
}

TEST_CASE("parse_recorder_config accepts a queue exactly one chunk large") {
  const RecorderConfig c =
      parsed(R"({"storage":{"path":"x","chunk_max_bytes":1048576},"queue_max_bytes":1048576})");
  CHECK(c.queue_max_bytes == 1048576u);
  CHECK(c.storage.chunk_max_bytes == 1048576u);
}

TEST_CASE("parse_recorder_config accepts an empty exclude list and keeps pattern order") {
  const RecorderConfig c =
      parsed(R"({"storage":{"path":"x"},"topics":{"exclude":[],"include":["b","a","b"]}})");
  CHECK(c.topics.exclude.empty());
  CHECK(c.topics.include == std::vector<std::string>{"b", "a", "b"});
}

TEST_CASE("parse_recorder_config keeps storage.path as written") {
  CHECK(parsed(doc_with("/storage/path", R"("rec dir/with spaces/")")).storage.path ==
        "rec dir/with spaces/");
  CHECK(parsed(doc_with("/storage/path", R"("caf\u00e9")")).storage.path == "caf\xc3\xa9");
}

TEST_CASE("ConfigErrors::to_string puts each message on its own line") {
  CHECK(ConfigErrors{{"a", "b"}}.to_string() == "a\nb\n");
  CHECK(ConfigErrors{}.to_string().empty());
}
