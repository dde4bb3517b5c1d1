// storage_bench: measures SegmentWriter ingest (one appending thread) and Recording read-back.
// Usage: storage_bench --dir DIR [--size BYTES] [--count N] [--payload zeros|random]
//          [--fsync none|chunk|segment|interval] [--chunk-bytes N] [--segment-bytes N]
//          [--queue-bytes N] [--compression lz4|none] [--accel N] [--direct-io on|off]
//          [--topics N] [--key-hash] [--read] [--keep]
// DIR must not exist yet: the recording is made there and removed at the end (unless --keep).
// Prints one line per phase. Records carry full metadata: topic, writer, sequence number,
// source and reception timestamps, flags (and a key hash with --key-hash).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "storage/recording.hpp"
#include "storage/segment_writer.hpp"

using namespace storage;
using Clock = std::chrono::steady_clock;

namespace {

[[noreturn]] void usage(const char* msg) {
  std::fprintf(stderr, "storage_bench: %s\n", msg);
  std::fprintf(stderr,
               "usage: storage_bench --dir DIR [--size BYTES] [--count N] "
               "[--payload zeros|random] [--fsync none|chunk|segment|interval] "
               "[--chunk-bytes N] [--segment-bytes N] [--queue-bytes N] "
               "[--compression lz4|none] [--accel N] [--direct-io on|off] "
               "[--topics N] [--key-hash] [--read] "
               "[--keep]\n");
  std::exit(2);
}

uint64_t parse_size(const std::string& s) {
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  std::string suffix(end);
  if (suffix == "K" || suffix == "k" || suffix == "KiB")
    v *= 1024;
  else if (suffix == "M" || suffix == "MiB")
    v *= 1024 * 1024;
  else if (suffix == "G" || suffix == "GiB")
    v *= 1024.0 * 1024 * 1024;
  else if (!suffix.empty())
    usage(("bad size " + s).c_str());
  return static_cast<uint64_t>(v);
}

double secs(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

struct BenchOptions {
  std::string dir, payload_kind = "random", fsync = "none", compression = "lz4", direct_io = "on";
  uint64_t size = 1024, count = 0, topics = 8;
  bool read_back = false, keep = false, key_hash = false;
  SegmentWriterOptions opt;
};

// The command line as given (exits through usage() on an unknown flag or a missing value).
BenchOptions parse_flags(int argc, char** argv) {
  BenchOptions b;
  SegmentWriterOptions& opt = b.opt;
  opt.segment_max_bytes = 1ull << 30;
  opt.max_record_bytes = 256u << 20;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto val = [&]() -> std::string {
      if (i + 1 >= argc) usage(("missing value for " + a).c_str());
      return argv[++i];
    };
    if (a == "--dir")
      b.dir = val();
    else if (a == "--size")
      b.size = parse_size(val());
    else if (a == "--count")
      b.count = parse_size(val());
    else if (a == "--payload")
      b.payload_kind = val();
    else if (a == "--fsync")
      b.fsync = val();
    else if (a == "--chunk-bytes")
      opt.chunk_max_bytes = static_cast<uint32_t>(parse_size(val()));
    else if (a == "--segment-bytes")
      opt.segment_max_bytes = parse_size(val());
    else if (a == "--queue-bytes")
      opt.queue_max_bytes = parse_size(val());
    else if (a == "--compression")
      b.compression = val();
    else if (a == "--accel")
      opt.lz4_acceleration = std::atoi(val().c_str());
    else if (a == "--direct-io")
      b.direct_io = val();
    else if (a == "--topics")
      b.topics = parse_size(val());
    else if (a == "--key-hash")
      b.key_hash = true;
    else if (a == "--read")
      b.read_back = true;
    else if (a == "--keep")
      b.keep = true;
    else
      usage(("unknown option " + a).c_str());
  }
  return b;
}

// Checks the values, fills in the default count and the writer's fsync and compression.
void resolve(BenchOptions& b) {
  SegmentWriterOptions& opt = b.opt;
  if (b.dir.empty()) usage("--dir is required");
  if (b.topics == 0 || b.topics > 100000) usage("--topics must be in [1, 100000]");
  if (b.count == 0)
    b.count = std::max<uint64_t>(1000, (2ull << 30) / std::max<uint64_t>(b.size, 1));
  if (b.fsync == "none")
    opt.fsync = FsyncPolicy::kNone;
  else if (b.fsync == "chunk")
    opt.fsync = FsyncPolicy::kChunk;
  else if (b.fsync == "segment")
    opt.fsync = FsyncPolicy::kSegment;
  else if (b.fsync == "interval")
    opt.fsync = FsyncPolicy::kInterval;
  else
    usage("bad --fsync");
  if (b.compression == "lz4")
    opt.compression = Compression::kLz4;
  else if (b.compression == "none")
    opt.compression = Compression::kNone;
  else
    usage("bad --compression");
  if (b.payload_kind != "zeros" && b.payload_kind != "random") usage("bad --payload");
  if (b.direct_io != "on" && b.direct_io != "off") usage("bad --direct-io");
  opt.direct_io = b.direct_io == "on";
}

// Payload pool: records take slices at varying offsets (random: every record differs).
std::vector<std::byte> make_pool(const BenchOptions& b, size_t pool_size) {
  std::vector<std::byte> pool(pool_size + b.size);
  if (b.payload_kind == "random") {
    std::mt19937_64 rng(42);
    for (size_t i = 0; i + 8 <= pool.size(); i += 8) {
      const uint64_t v = rng();
      std::memcpy(pool.data() + i, &v, 8);
    }
  }
  return pool;
}

// One topic and one writer per --topics; false if the writer refused one.
bool add_topics(SegmentWriter& wr, const BenchOptions& b, std::vector<WriterId>& writers) {
  for (uint64_t t = 0; t < b.topics; ++t) {
    auto tid =
        wr.add_topic({"bench/topic" + std::to_string(t), "bench::Payload", b.key_hash, {}, {}});
    if (!tid) {
      std::fprintf(stderr, "add_topic: %s\n", tid.error().to_string().c_str());
      return false;
    }
    auto wid = wr.add_writer({*tid, Guid{1, 2, 3, static_cast<uint8_t>(t)}});
    if (!wid) {
      std::fprintf(stderr, "add_writer: %s\n", wid.error().to_string().c_str());
      return false;
    }
    writers.push_back(*wid);
  }
  return true;
}

void print_ingest(const BenchOptions& b, const WriterStats& st, double t_total, double t_append) {
  const uint64_t size = b.size, count = b.count;
  const double payload_mb = static_cast<double>(count * size) / 1e6;
  std::printf(
      "ingest size=%llu payload=%s fsync=%s compression=%s count=%llu: %.3f s, %.2f M rec/s, "
      "%.1f MB/s payload, file %.1f MB (ratio %.3f), append-only %.2f M rec/s, %llu full\n",
      static_cast<unsigned long long>(size), b.payload_kind.c_str(), b.fsync.c_str(),
      b.compression.c_str(), static_cast<unsigned long long>(count), t_total,
      static_cast<double>(count) / t_total / 1e6, payload_mb / t_total,
      static_cast<double>(st.file_bytes) / 1e6,
      static_cast<double>(st.file_bytes) / static_cast<double>(std::max<uint64_t>(1, count * size)),
      static_cast<double>(count) / t_append / 1e6, static_cast<unsigned long long>(st.full_events));
  std::printf("result ingest %llu %s %s %llu %.4f %.3f %.1f %.1f\n",
              static_cast<unsigned long long>(size), b.payload_kind.c_str(), b.fsync.c_str(),
              static_cast<unsigned long long>(count), t_total,
              static_cast<double>(count) / t_total / 1e6, payload_mb / t_total,
              static_cast<double>(st.file_bytes) / 1e6);
}

// Appends --count records round robin over the topics, closes the writer, prints the ingest
// lines. The time runs from the first append to the return of close().
int ingest(SegmentWriter& wr, const BenchOptions& b, const std::vector<std::byte>& pool,
           size_t pool_size) {
  const uint64_t size = b.size, count = b.count, topics = b.topics;
  const bool key_hash = b.key_hash;
  std::vector<WriterId> writers;
  if (!add_topics(wr, b, writers)) return 1;
  std::vector<int64_t> seqs(topics, 1);
  const int64_t t0_ns = 1'700'000'000'000'000'000;
  RecordMeta m;
  m.has_key_hash = key_hash;
  const auto start = Clock::now();
  size_t off = 0;
  for (uint64_t i = 0; i < count; ++i) {
    const size_t t = static_cast<size_t>(i % topics);
    m.topic = static_cast<TopicId>(t + 1);
    m.writer = writers[t];
    m.sequence = seqs[t]++;
    m.reception_ns = t0_ns + static_cast<int64_t>(i) * 100;
    m.source_ns = m.reception_ns - 20000;
    m.flags = 0;
    if (key_hash) std::memcpy(m.key_hash.data(), &i, sizeof i);
    // Consecutive, non-overlapping slices (like a receive buffer; random stays incompressible).
    off += size;
    if (off + size > pool_size) off = (off + 64) % 4096;
    const Status s = wr.append(m, ByteSpan(pool.data() + off, size));
    if (!s) {
      std::fprintf(stderr, "append: %s\n", s.error().to_string().c_str());
      return 1;
    }
  }
  const auto appended = Clock::now();
  const Status cs = wr.close();
  const auto done = Clock::now();
  if (!cs) {
    std::fprintf(stderr, "close: %s\n", cs.error().to_string().c_str());
    return 1;
  }
  print_ingest(b, wr.stats(), secs(done - start), secs(appended - start));
  return 0;
}

// --read: the whole recording through Recording::query(), every record's metadata and one byte
// of its payload touched.
int read_back(const BenchOptions& b) {
  auto rec = Recording::open(b.dir);
  if (!rec) {
    std::fprintf(stderr, "open: %s\n", rec.error().to_string().c_str());
    return 1;
  }
  const auto r0 = Clock::now();
  auto cur = (*rec)->query();
  uint64_t n = 0, bytes = 0, check = 0;
  while (const RecordView* v = cur->next()) {
    ++n;
    bytes += v->payload.size();
    if (!v->payload.empty()) check += static_cast<uint8_t>(v->payload[v->payload.size() / 2]);
    check += static_cast<uint64_t>(v->meta.sequence);
  }
  const double tr = secs(Clock::now() - r0);
  std::printf(
      "read   size=%llu payload=%s: %llu records in %.3f s, %.2f M rec/s, %.1f MB/s "
      "payload (checksum %llu)\n",
      static_cast<unsigned long long>(b.size), b.payload_kind.c_str(),
      static_cast<unsigned long long>(n), tr, static_cast<double>(n) / tr / 1e6,
      static_cast<double>(bytes) / 1e6 / tr, static_cast<unsigned long long>(check));
  std::printf("result read %llu %s %s %llu %.4f %.3f %.1f 0\n",
              static_cast<unsigned long long>(b.size), b.payload_kind.c_str(), b.fsync.c_str(),
              static_cast<unsigned long long>(n), tr, static_cast<double>(n) / tr / 1e6,
              static_cast<double>(bytes) / 1e6 / tr);
  if (n != b.count || !cur->status()) {
    std::fprintf(stderr, "read back %llu of %llu records\n", static_cast<unsigned long long>(n),
                 static_cast<unsigned long long>(b.count));
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  BenchOptions b = parse_flags(argc, argv);
  resolve(b);

  // The recording goes into a directory of its own: one that exists (even empty) is refused, so
  // that removing it at the end removes nothing that was there before.
  std::error_code ec;
  if (std::filesystem::exists(b.dir, ec) || ec) {
    std::fprintf(stderr,
                 "storage_bench: --dir %s already exists; give a new path (it is removed "
                 "at the end unless --keep)\n",
                 b.dir.c_str());
    return 2;
  }
  const size_t pool_size = std::max<size_t>(b.size * 2, 64u << 20);
  const std::vector<std::byte> pool = make_pool(b, pool_size);

  auto w = SegmentWriter::create(b.dir, b.opt);
  if (!w) {
    std::fprintf(stderr, "create: %s\n", w.error().to_string().c_str());
    return 1;
  }
  if (const int rc = ingest(**w, b, pool, pool_size); rc != 0) return rc;
  if (b.read_back) {
    if (const int rc = read_back(b); rc != 0) return rc;
  }
  if (!b.keep) std::filesystem::remove_all(b.dir);
  return 0;
}
