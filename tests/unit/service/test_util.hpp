// Helpers for the pubsub-replay tests: recordings written with storage::SegmentWriter and the
// recording schema (as the recorder lays them out), a model of what was written, a raw subscriber
// over libpubsub's FakeNetwork, and a runner for the real pubsub-replay binary.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "pubsub/participant.hpp"
#include "pubsub/testing/fake_network.hpp"
#include "scratch_dir.hpp"
#include "service/recording_schema.hpp"
#include "service/replay.hpp"
#include "storage/segment_writer.hpp"

namespace replay_test {

using namespace std::chrono_literals;

using service_test::TempDir;

// The lines of `s`, without their newlines.
inline std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> v;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) v.push_back(l);
  return v;
}

// 2026-11-21T23:38:00Z
inline constexpr int64_t kT0 = 1'795'304'280'000'000'000;

struct TopicSpec {
  std::string name;
  std::string type;
  bool keyed = false;
  pubsub::ReliabilityKind reliability = pubsub::ReliabilityKind::kReliable;
};

struct RecordSpec {
  size_t topic = 0;   // index into the topic specs
  size_t writer = 0;  // index into the writer list
  storage::RecordMeta meta;
  storage::Bytes payload;
};

// What a test wrote: topic and writer definitions and the records in append order.
struct Model {
  std::vector<TopicSpec> topics;
  std::vector<size_t> writer_topic;  // writer index -> topic index
  std::vector<storage::Guid> writer_guid;
  std::vector<RecordSpec> records;
  std::vector<storage::TypeDef> types;  // stored after the writers
  std::vector<storage::Mark> marks;     // stored after the types

  size_t add_topic(TopicSpec t) {
    topics.push_back(std::move(t));
    return topics.size() - 1;
  }
  size_t add_writer(size_t topic) {
    writer_topic.push_back(topic);
    storage::Guid g{};
    for (size_t k = 0; k < 12; ++k) g[k] = static_cast<uint8_t>(0x40 + writer_guid.size() * 7 + k);
    g[12] = 0;
    g[13] = 0;
    g[14] = static_cast<uint8_t>(writer_guid.size() + 1);
    g[15] = topics[topic].keyed ? 0x02 : 0x03;
    writer_guid.push_back(g);
    return writer_guid.size() - 1;
  }
};

inline void put_u32_le(storage::Bytes& b, uint32_t v) {
  for (int i = 0; i < 4; ++i) b.push_back(static_cast<std::byte>(v >> (8 * i)));
}

// A serialized KeyedSeq-like sample: CDR_LE header, seq, key, then `extra` pattern bytes that
// identify (topic, writer, seq) so any mix-up or corruption shows.
inline storage::Bytes make_payload(size_t topic, size_t writer, uint32_t seq, uint32_t key,
                                   size_t extra) {
  storage::Bytes b{std::byte{0}, std::byte{1}, std::byte{0}, std::byte{0}};
  put_u32_le(b, seq);
  put_u32_le(b, key);
  uint32_t x = static_cast<uint32_t>(topic * 1000003 + writer * 7919 + seq * 2654435761u + 1);
  for (size_t i = 0; i < extra; ++i) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    b.push_back(static_cast<std::byte>(x));
  }
  const size_t pad = (4 - (b.size() % 4)) % 4;
  b.insert(b.end(), pad, std::byte{0});
  b[3] = static_cast<std::byte>(pad);
  return b;
}

inline storage::KeyHash key_hash_of(uint32_t key) {
  const uint8_t be[4] = {static_cast<uint8_t>(key >> 24), static_cast<uint8_t>(key >> 16),
                         static_cast<uint8_t>(key >> 8), static_cast<uint8_t>(key)};
  return pubsub::KeyHash::from_key_cdr_be(pubsub::Bytes(reinterpret_cast<const std::byte*>(be), 4))
      .value;
}

// Adds a record; reception = kT0 + recv_offset_ns, source = reception - 1 ms when `source`.
inline RecordSpec& add_record(Model& m, size_t writer, int64_t seq, int64_t recv_offset_ns,
                              storage::Bytes payload, bool source = true,
                              std::optional<storage::KeyHash> key = std::nullopt,
                              uint32_t extra_flags = 0) {
  RecordSpec r;
  r.writer = writer;
  r.topic = m.writer_topic[writer];
  r.meta.sequence = seq;
  r.meta.reception_ns = kT0 + recv_offset_ns;
  r.meta.source_ns = source ? r.meta.reception_ns - 1'000'000 : 0;
  r.meta.flags = (source ? service::kFlagHasSourceTimestamp : 0) | extra_flags;
  if (key) {
    r.meta.has_key_hash = true;
    r.meta.key_hash = *key;
  }
  r.payload = std::move(payload);
  m.records.push_back(std::move(r));
  return m.records.back();
}

// Writes the model as a recording in `dir` (topic defs through service::topic_def, as the
// recorder does). With close = false everything is flushed but the recording is left open, as a
// killed recorder leaves it (call it in a child process that then exits).
inline void write_recording(const std::string& dir, Model& m,
                            storage::SegmentWriterOptions opt = {}, bool close = true) {
  opt.fsync = storage::FsyncPolicy::kNone;
  auto w = storage::SegmentWriter::create(dir, opt);
  if (!w) throw std::runtime_error("SegmentWriter::create: " + w.error().to_string());
  std::vector<storage::TopicId> tids;
  for (const auto& t : m.topics) {
    pubsub::TopicInfo info;
    info.name = t.name;
    info.type_name = t.type;
    info.keyed = t.keyed;
    info.reliability = t.reliability;
    info.history = {pubsub::HistoryKind::kKeepAll, 1};
    info.max_blocking_time = std::chrono::milliseconds(100);
    info.data_representation = {0};
    auto id = (*w)->add_topic(service::topic_def(info));
    if (!id) throw std::runtime_error("add_topic: " + id.error().to_string());
    tids.push_back(*id);
  }
  std::vector<storage::WriterId> wids;
  for (size_t i = 0; i < m.writer_guid.size(); ++i) {
    auto id = (*w)->add_writer({tids[m.writer_topic[i]], m.writer_guid[i]});
    if (!id) throw std::runtime_error("add_writer: " + id.error().to_string());
    wids.push_back(*id);
  }
  for (const auto& t : m.types) {
    if (auto s = (*w)->add_type(t); !s)
      throw std::runtime_error("add_type: " + s.error().to_string());
  }
  for (const auto& k : m.marks) {
    if (auto s = (*w)->add_mark(k); !s)
      throw std::runtime_error("add_mark: " + s.error().to_string());
  }
  for (auto& r : m.records) {
    r.meta.topic = tids[r.topic];
    r.meta.writer = wids[r.writer];
    auto s = (*w)->append(r.meta, r.payload);
    if (!s) throw std::runtime_error("append: " + s.error().to_string());
  }
  if (!close) {
    auto s = (*w)->flush();
    if (!s) throw std::runtime_error("flush: " + s.error().to_string());
    (void)w->release();  // never closed
    return;
  }
  auto s = (*w)->close();
  if (!s) throw std::runtime_error("close: " + s.error().to_string());
}

// A sample as a raw subscriber received it.
struct Got {
  std::string topic;
  std::string type;
  pubsub::Guid writer;
  int64_t sn = 0;
  std::optional<pubsub::KeyHash> key_hash;
  uint32_t status_info = 0;
  bool key_only = false;
  int64_t source_ns = 0;
  std::vector<std::byte> payload;
  std::chrono::steady_clock::time_point arrival;
};

// A participant with a RawReader on every topic, collecting what arrives.
class Subscriber {
 public:
  explicit Subscriber(std::shared_ptr<pubsub::FakeNetwork> net) {
    auto p = pubsub::Participant::create(options(net));
    if (!p) throw std::runtime_error("participant: " + p.error().message);
    participant_ = std::move(p).value();
    pubsub::RawReaderListener l;
    l.on_sample = [this](const pubsub::RawSample& s) {
      Got g;
      g.topic = s.topic->name;
      g.type = s.topic->type_name;
      g.writer = s.writer;
      g.sn = s.sequence_number;
      g.key_hash = s.key_hash;
      g.status_info = s.status_info;
      g.key_only = s.key_only;
      g.source_ns = s.source_timestamp.ns;
      g.payload.assign(s.serialized.begin(), s.serialized.end());
      g.arrival = std::chrono::steady_clock::now();
      std::lock_guard lk(mu_);
      got_.push_back(std::move(g));
      return true;
    };
    auto r = participant_->create_raw_reader({}, l);
    if (!r) throw std::runtime_error("raw reader: " + r.error().message);
    reader_ = std::move(r).value();
  }
  ~Subscriber() {
    reader_.reset();
    participant_.reset();
  }
  pubsub::Participant& participant() { return *participant_; }
  static pubsub::ParticipantOptions options(std::shared_ptr<pubsub::FakeNetwork> net) {
    pubsub::ParticipantOptions o;
    pubsub::use_fake_network(o, std::move(net));
    o.announce_period = std::chrono::milliseconds(100);
    o.lease_duration = std::chrono::seconds(3);
    return o;
  }
  std::vector<Got> samples() {
    std::lock_guard lk(mu_);
    return got_;
  }
  size_t count() {
    std::lock_guard lk(mu_);
    return got_.size();
  }
  bool wait_for(size_t n, std::chrono::milliseconds timeout = 10s) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (count() < n && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(5ms);
    }
    return count() >= n;
  }

 private:
  std::unique_ptr<pubsub::Participant> participant_;
  std::unique_ptr<pubsub::RawReader> reader_;
  std::mutex mu_;
  std::vector<Got> got_;
};

// PlayOptions for a run over `net` that waits for one reader per writer.
inline service::replay::PlayOptions play_options(const std::string& dir,
                                                 std::shared_ptr<pubsub::FakeNetwork> net) {
  service::replay::PlayOptions o;
  o.dir = dir;
  o.participant = Subscriber::options(std::move(net));
  o.wait_readers = 1;
  o.wait_timeout = std::chrono::seconds(20);
  o.progress = false;
  return o;
}

inline std::string to_string(const std::vector<std::byte>& b) {
  return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}
inline std::string to_string(const storage::Bytes& b, int) {
  return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

inline std::string base64_decode(const std::string& in) {
  auto val = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    const int v = val(c);
    if (v < 0) continue;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  return out;
}

// Runs the pubsub-replay binary with `args` (shell words); captures stdout, stderr, exit code.
struct RunResult {
  int exit_code = -1;
  bool signaled = false;
  std::string out;
  std::string err;
};

inline std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// `wrapper` runs the binary (e.g. "timeout -s INT 2"); empty: run it directly.
inline RunResult run_replay_wrapped(const std::string& wrapper, const std::string& args) {
  TempDir tmp("replay-run");
  const std::string cmd = wrapper + " " + std::string(PUBSUB_REPLAY_BIN) + " " + args + " >" +
                          tmp.sub("out") + " 2>" + tmp.sub("err") + " </dev/null";
  const int status = std::system(cmd.c_str());
  RunResult r;
  if (WIFEXITED(status)) {
    r.exit_code = WEXITSTATUS(status);
  } else {
    r.signaled = true;
  }
  r.out = slurp(tmp.sub("out"));
  r.err = slurp(tmp.sub("err"));
  return r;
}

inline RunResult run_replay(const std::string& args) {
  return run_replay_wrapped("", args);
}

// Flips one byte in the body of the nth chunk (from 1) of segment 1 that holds data records.
// Returns {chunk offset, chunk sequence}, or {0, 0} when there is no such chunk.
inline std::pair<size_t, uint64_t> corrupt_data_chunk(const std::string& dir, size_t nth) {
  const std::string seg = dir + "/segments/00000001.seg";
  const std::string bytes = slurp(seg);
  size_t pos = 48, data_chunks = 0;
  while (pos + 64 <= bytes.size()) {
    uint32_t stored = 0, records = 0;
    uint16_t padding = 0;
    uint64_t seq = 0;
    std::memcpy(&seq, bytes.data() + pos + 8, 8);
    std::memcpy(&stored, bytes.data() + pos + 16, 4);
    std::memcpy(&records, bytes.data() + pos + 24, 4);
    std::memcpy(&padding, bytes.data() + pos + 50, 2);
    if (records > 0 && ++data_chunks == nth) {
      const size_t at = pos + 64 + std::min<size_t>(100, stored / 2);
      std::fstream io(seg, std::ios::in | std::ios::out | std::ios::binary);
      io.seekp(static_cast<std::streamoff>(at));
      const char c = static_cast<char>(bytes[at] ^ 0x5a);
      io.write(&c, 1);
      return {pos, seq};
    }
    pos += 64 + stored + padding;
  }
  return {0, 0};
}

inline size_t count_lines(const std::string& s) {
  return static_cast<size_t>(std::count(s.begin(), s.end(), '\n'));
}

}  // namespace replay_test
