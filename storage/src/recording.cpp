// Recording (reader), tail recovery, verify and reindex. OVERVIEW
//
// - A Recording owns one SQLite connection (the file opened read-only, or a private in-memory
//   copy after tail recovery) and one FileSource per segment, opened lazily. Cursors borrow both;
//   all of it belongs to the thread using the Recording.
// - Tail recovery (resync) runs on an Index: for each segment the writer did not finish it
//   verifies indexed chunks from the end backwards until one is good (dropping bad rows), then
//   scans forward from there, adding valid unindexed chunks and stopping (cutting, when allowed
//   to modify files) at the first incomplete or corrupt one. Segment files newer than the index
//   knows are scanned the same way.
// - recover() is resync allowed to modify files: what it cuts (torn tails, segments without a valid
//   header) is first copied (moved) to DIR/recovered/ and synced; the index then says "recovered".
// - A Cursor streams chunk rows from one SQL statement ordered by first reception time, loads a
//   chunk only when the merge frontier reaches its first reception time, and merges loaded chunks
//   with a heap. Each loaded chunk keeps its decoded body; record views point into it.
#include "storage/recording.hpp"
#include "errno_error.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <queue>
#include <set>
#include <tuple>

#include "common/hex.hpp"
#include "segment_file.hpp"
#include "sqlite_index.hpp"
#include "storage/io.hpp"

namespace storage {

using detail::ChunkRow;
using detail::Index;
using detail::Stmt;

const char* to_string(Problem::Kind kind) {
  switch (kind) {
    case Problem::Kind::kTornTail:
      return "torn tail";
    case Problem::Kind::kCorruptChunk:
      return "corrupt chunk";
    case Problem::Kind::kMissingSegment:
      return "missing segment";
    case Problem::Kind::kUnindexedChunk:
      return "unindexed chunk";
    case Problem::Kind::kIndexMismatch:
      return "index mismatch";
    case Problem::Kind::kBadSegment:
      return "bad segment";
    case Problem::Kind::kTruncated:
      return "truncated segment";
  }
  return "?";
}

const char* to_string(Damage::Kind kind) {
  switch (kind) {
    case Damage::Kind::kTruncated:
      return "truncated segment";
    case Damage::Kind::kCorruptChunk:
      return "corrupt chunk";
    case Damage::Kind::kMissingSegment:
      return "missing segment file";
    case Damage::Kind::kIndexMissing:
      return "index missing";
    case Damage::Kind::kIndexStale:
      return "index stale";
    case Damage::Kind::kUnclean:
      return "not closed cleanly";
  }
  return "?";
}

const char* repair_command(Damage::Kind kind) {
  return kind == Damage::Kind::kIndexMissing || kind == Damage::Kind::kIndexStale ? "reindex"
                                                                                  : "recover";
}

const char* to_string(CloseState state) {
  switch (state) {
    case CloseState::kClean:
      return "clean";
    case CloseState::kRecovered:
      return "recovered";
    case CloseState::kUnclean:
      return "unclean";
  }
  return "?";
}

namespace {

// The index's meta "clean": "1" written by the writer's close, "recovered" by recover(), "0" (or
// nothing) while a writer has it open.
constexpr const char* kMetaRecovered = "recovered";
CloseState state_of(const std::optional<std::string>& meta_clean) {
  if (meta_clean && *meta_clean == "1") return CloseState::kClean;
  if (meta_clean && *meta_clean == kMetaRecovered) return CloseState::kRecovered;
  return CloseState::kUnclean;
}

// The index's meta "format_version": every version from kMinFormatVersion up is read.
bool known_format_version(const std::string& v) {
  for (uint32_t k = format::kMinFormatVersion; k <= format::kFormatVersion; ++k)
    if (v == std::to_string(k)) return true;
  return false;
}

std::string recovered_dir(const std::string& dir) {
  return dir + "/recovered";
}

// Copies bytes [from, end) of `src` to a new file `to` and syncs it: recover() keeps what it cuts.
Status copy_tail(const ByteSource& src, uint64_t from, const std::string& to) {
  const int fd = ::open(to.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return errno_error(errno, "create " + to);
  Bytes buf(static_cast<size_t>(std::min<uint64_t>(src.size() - from, 1u << 20)));
  Status st = Status{};
  for (uint64_t pos = from; st && pos < src.size();) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(buf.size(), src.size() - pos));
    st = src.read_at(pos, std::span(buf.data(), n));
    for (size_t done = 0; st && done < n;) {
      const ssize_t w = ::write(fd, buf.data() + done, n - done);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) st = errno_error(errno, "write " + to);
      if (w > 0) done += static_cast<size_t>(w);
    }
    pos += n;
  }
  if (st && ::fsync(fd) != 0) st = errno_error(errno, "fsync " + to);
  ::close(fd);
  return st;
}

Status sync_dir(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return errno_error(errno, "open " + dir);
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  return rc == 0 ? Status{} : errno_error(err, "fsync " + dir);
}

bool file_exists(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0;
}

// The header of the chunk at `offset` when it is whole and verifies (its body may be cut).
std::optional<format::ChunkHeader> peek_chunk_header(const ByteSource& src, uint64_t offset) {
  std::byte hb[format::kChunkHeaderSize];
  if (offset + sizeof hb > src.size() || !src.read_at(offset, hb)) return std::nullopt;
  auto h = format::decode_chunk_header(ByteSpan(hb, sizeof hb));
  if (!h) return std::nullopt;
  return *h;
}

// Fills a problem at a torn place from the chunk header there, when that header survives.
void describe_from_header(const ByteSource& src, uint64_t offset, Problem& p) {
  auto h = peek_chunk_header(src, offset);
  p.records_known = h.has_value();
  if (!h) return;
  p.chunk_sequence = h->sequence;
  p.first_recv_ns = h->first_recv_ns;
  p.last_recv_ns = h->last_recv_ns;
  p.records = h->record_count;
  if (p.kind == Problem::Kind::kTornTail && offset + format::chunk_span(*h) > src.size())
    p.bytes = offset + format::chunk_span(*h) - src.size();
}

// The meta "repaired": one line per damage recover() repaired ("kind segment offset chunks
// records exact bytes").
std::string encode_repairs(const std::vector<Damage>& ds) {
  std::string s;
  for (const Damage& d : ds)
    s += std::to_string(static_cast<int>(d.kind)) + " " + std::to_string(d.segment) + " " +
         std::to_string(d.offset) + " " + std::to_string(d.chunks) + " " +
         std::to_string(d.records) + " " + (d.records_exact ? "1" : "0") + " " +
         std::to_string(d.bytes) + "\n";
  return s;
}

std::vector<Damage> decode_repairs(const std::string& s) {
  std::vector<Damage> ds;
  size_t pos = 0;
  while (pos < s.size()) {
    size_t nl = s.find('\n', pos);
    if (nl == std::string::npos) nl = s.size();
    unsigned long long v[7] = {};
    if (std::sscanf(s.substr(pos, nl - pos).c_str(), "%llu %llu %llu %llu %llu %llu %llu", &v[0],
                    &v[1], &v[2], &v[3], &v[4], &v[5], &v[6]) == 7 &&
        v[0] <= static_cast<unsigned long long>(Damage::Kind::kUnclean)) {
      Damage d;
      d.kind = static_cast<Damage::Kind>(v[0]);
      d.segment = v[1];
      d.offset = v[2];
      d.chunks = v[3];
      d.records = v[4];
      d.records_exact = v[5] != 0;
      d.bytes = v[6];
      ds.push_back(d);
    }
    pos = nl + 1;
  }
  return ds;
}

// Fills topics / time range / record count of a problem from the index row of a chunk.
void describe_from_index(Index& idx, const ChunkInfo& c, Problem& p) {
  p.chunk_sequence = c.sequence;
  p.segment = c.segment;
  p.offset = c.offset;
  p.first_recv_ns = c.first_recv_ns;
  p.last_recv_ns = c.last_recv_ns;
  p.records = c.record_count;
  if (auto t = idx.chunk_topics(c.sequence))
    for (auto& s : *t) p.topics.push_back(s.topic);
}

// A segment the index names whose file cannot be read.
Problem missing_segment(const SegmentInfo& s, std::string message) {
  Problem p;
  p.kind = Problem::Kind::kMissingSegment;
  p.segment = s.number;
  p.first_recv_ns = s.first_recv_ns;
  p.last_recv_ns = s.last_recv_ns;
  p.records = s.record_count;
  p.chunks = s.chunk_count;
  p.message = std::move(message);
  return p;
}

// recover(): DIR/recovered/<segment file name><suffix>, the directory made on first use; the
// path is listed in `saved`.
Result<std::string> recovered_path(const std::string& dir, uint64_t seg, const std::string& suffix,
                                   std::vector<std::string>& saved) {
  const std::string d = recovered_dir(dir);
  if (::mkdir(d.c_str(), 0755) != 0 && errno != EEXIST) return errno_error(errno, "mkdir " + d);
  const std::string seg_path = detail::segment_path(dir, seg);
  std::string to = d + seg_path.substr(seg_path.rfind('/')) + suffix;
  saved.push_back(to);
  return to;
}

// recover(): cuts segment `seg` at `end` after copying the rest to
// DIR/recovered/<segment>.from-<end> (listed in `saved`).
Status cut_segment_tail(const std::string& dir, const ByteSource& src, uint64_t seg, uint64_t end,
                        std::vector<std::string>& saved) {
  auto to = recovered_path(dir, seg, ".from-" + std::to_string(end), saved);
  if (!to) return to.error();
  if (auto s = copy_tail(src, end, *to); !s) return s;
  if (auto s = sync_dir(recovered_dir(dir)); !s) return s;
  const std::string path = detail::segment_path(dir, seg);
  if (::truncate(path.c_str(), static_cast<off_t>(end)) != 0)
    return errno_error(errno, "truncate " + path);
  return Status{};
}

struct Resync {
  Index& idx;
  std::string dir;
  bool modify;  // truncate files / delete stray files
  format::DecodeLimits limits;
  const ProblemCallback& cb;
  RecoveryReport rep;
  std::set<uint64_t> cut_chunks;  // sequences whose records are counted in rep.records_cut
  std::map<uint64_t, std::vector<TopicId>> dropped_topics;  // index rows dropped, by sequence

  void report(const Problem& p) {
    ++rep.problems;
    if (p.kind == Problem::Kind::kTornTail && p.chunk_sequence != 0 && !p.topics.empty())
      dropped_topics.emplace(p.chunk_sequence, p.topics);
    if (p.kind == Problem::Kind::kTornTail && p.chunk_sequence != 0 &&
        cut_chunks.insert(p.chunk_sequence).second)
      rep.records_cut += p.records;
    if (cb) cb(p);
  }

  // Moves a segment without a valid header to DIR/recovered/.
  Status set_aside(uint64_t seg) {
    auto to = recovered_path(dir, seg, "", rep.saved_files);
    if (!to) return to.error();
    const std::string path = detail::segment_path(dir, seg);
    if (::rename(path.c_str(), to->c_str()) != 0) return errno_error(errno, "rename " + path);
    if (auto s = sync_dir(recovered_dir(dir)); !s) return s;
    return sync_dir(detail::segments_dir(dir));
  }

  // Scans `src` from `pos`, adding valid chunks to the index; returns the end of the last good one.
  Result<uint64_t> scan_forward(const ByteSource& src, uint64_t seg, uint64_t pos) {
    Bytes stored, raw;
    ChunkRow row;
    while (pos < src.size()) {
      auto h = detail::read_chunk(src, pos, stored, &raw, limits);
      Status bad = h ? detail::summarize_chunk(*h, raw, row, limits) : h.error();
      ++rep.chunks_checked;
      if (!bad) {
        Problem p;
        p.kind = Problem::Kind::kTornTail;
        p.segment = seg;
        p.offset = pos;
        if (h) {
          p.chunk_sequence = h->sequence;
          p.first_recv_ns = h->first_recv_ns;
          p.last_recv_ns = h->last_recv_ns;
          p.records = h->record_count;
        } else {
          describe_from_header(src, pos, p);
          // A chunk dropped from the index above: its topics from that row.
          if (auto t = dropped_topics.find(p.chunk_sequence); t != dropped_topics.end())
            p.topics = t->second;
        }
        p.tail_bytes = src.size() - pos;
        p.message = "incomplete or corrupt chunk at the end of the segment (" +
                    bad.error().message + "): " + std::to_string(src.size() - pos) + " bytes " +
                    (modify ? "cut" : "ignored");
        rep.bytes_cut += src.size() - pos;
        report(p);
        break;
      }
      row.info.segment = seg;
      row.info.offset = pos;
      if (auto s = idx.put_chunk(row); !s) return s.error();
      ++rep.chunks_added;
      pos += format::chunk_span(*h);
    }
    return pos;
  }

  Status check_segment(uint64_t seg, bool known) {
    const std::string path = detail::segment_path(dir, seg);
    auto src = FileSource::open(path);
    if (!src) return src.error();
    std::vector<ChunkInfo> chunks;
    if (known) {
      auto c = idx.chunks_of_segment(seg);
      if (!c) return c.error();
      chunks = std::move(*c);
    }
    std::byte hb[format::kSegmentHeaderSize];
    const bool header_ok = (*src)->size() >= sizeof hb && (*src)->read_at(0, hb) &&
                           format::decode_segment_header(ByteSpan(hb, sizeof hb)).ok();
    uint64_t pos = format::kSegmentHeaderSize;
    if (!header_ok) {
      for (auto& c : chunks) {
        if (auto s = idx.delete_chunk(c.sequence); !s) return s;
        ++rep.chunks_dropped;
      }
      Problem p;
      p.kind = Problem::Kind::kBadSegment;
      p.segment = seg;
      p.message = "segment header missing or corrupt (file of " + std::to_string((*src)->size()) +
                  " bytes)";
      rep.bytes_cut += (*src)->size();
      report(p);
      if (modify) {
        if (auto s = idx.delete_segment(seg); !s) return s;
        if (auto s = set_aside(seg); !s) return s;
      }
      return Status{};
    }
    if (!known) {
      auto h = format::decode_segment_header(ByteSpan(hb, sizeof hb));
      if (auto s = idx.put_segment(seg, h->created_ns); !s) return s;
    }
    // Backwards over indexed chunks until one verifies.
    Bytes stored;
    while (!chunks.empty()) {
      const ChunkInfo& c = chunks.back();
      auto h = detail::read_chunk(**src, c.offset, stored, nullptr, limits);
      ++rep.chunks_checked;
      if (h && h->sequence == c.sequence && h->stored_size == c.stored_size) {
        pos = c.offset + format::chunk_span(*h);
        break;
      }
      Problem p;
      p.kind = Problem::Kind::kTornTail;
      describe_from_index(idx, c, p);
      p.message = "indexed chunk at the end of the segment is " +
                  std::string(h ? "not the one indexed" : h.error().message);
      report(p);
      if (auto s = idx.delete_chunk(c.sequence); !s) return s;
      ++rep.chunks_dropped;
      chunks.pop_back();
    }
    auto end = scan_forward(**src, seg, pos);
    if (!end) return end.error();
    if (modify) {
      if (*end < (*src)->size())
        if (auto s = cut_segment_tail(dir, **src, seg, *end, rep.saved_files); !s) return s;
      if (auto s = idx.set_segment_closed(seg, true); !s) return s;
    }
    return Status{};
  }

  Status run() {
    rep.state = CloseState::kUnclean;
    auto segs = idx.segments();
    if (!segs) return segs.error();
    std::set<uint64_t> on_disk;
    for (uint64_t n : detail::list_segment_files(dir)) on_disk.insert(n);
    uint64_t max_known = 0, min_known = UINT64_MAX;
    for (const SegmentInfo& s : *segs) {
      max_known = std::max(max_known, s.number);
      min_known = std::min(min_known, s.number);
      if (!on_disk.count(s.number)) {
        auto chunks = idx.chunks_of_segment(s.number);
        if (!chunks) return chunks.error();
        Problem p = missing_segment(s, "segment file missing");
        std::set<TopicId> topics;
        for (auto& c : *chunks)
          if (auto t = idx.chunk_topics(c.sequence))
            for (auto& x : *t) topics.insert(x.topic);
        p.topics.assign(topics.begin(), topics.end());
        report(p);
        rep.chunks_dropped += chunks->size();
        if (auto st = idx.delete_segment(s.number); !st) return st;
        continue;
      }
      if (!s.closed)
        if (auto st = check_segment(s.number, true); !st) return st;
    }
    for (uint64_t n : on_disk) {
      if (n > max_known || segs->empty()) {
        if (auto st = check_segment(n, false); !st) return st;
      } else if (n < min_known && modify) {
        // Left over by retention that crashed between the index commit and the unlink.
        ::unlink(detail::segment_path(dir, n).c_str());
      }
    }
    return Status{};
  }
};

Status resync(Index& idx, const std::string& dir, bool modify, const format::DecodeLimits& limits,
              const ProblemCallback& cb, RecoveryReport& rep) {
  Resync r{idx, dir, modify, limits, cb, {}};
  if (auto s = idx.begin(); !s) return s;
  Status st = r.run();
  if (st && modify) st = idx.set_meta("clean", kMetaRecovered);
  if (st) {
    st = idx.commit();
  } else {
    idx.rollback();
  }
  rep = r.rep;
  return st;
}

}  // namespace

// ---------------------------------------------------------------------------------------------

struct Recording::Impl {
  std::string dir;
  RecordingOptions opt;
  std::unique_ptr<Index> idx;
  RecoveryReport recovery;
  LockState lock;  // at open()
  std::map<uint64_t, std::unique_ptr<FileSource>> sources;

  Result<const ByteSource*> source(uint64_t seg) {
    auto it = sources.find(seg);
    if (it != sources.end()) return static_cast<const ByteSource*>(it->second.get());
    auto src = FileSource::open(detail::segment_path(dir, seg));
    if (!src) return src.error();
    const ByteSource* p = src->get();
    sources.emplace(seg, std::move(*src));
    return p;
  }
};

Recording::Recording(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Recording::~Recording() = default;

Result<std::unique_ptr<Recording>> Recording::open(const std::string& dir,
                                                   RecordingOptions options) {
  const std::string ipath = detail::index_path(dir);
  if (!file_exists(ipath))
    return Error{ErrorCode::kNotFound, ipath + " does not exist (run reindex to rebuild it)"};
  auto impl = std::make_unique<Impl>();
  impl->dir = dir;
  impl->opt = std::move(options);
  auto lock = WriterLock::state(dir);
  if (!lock) return lock.error();
  impl->lock = std::move(*lock);
  auto idx = Index::open(ipath, Index::Mode::kReadOnly);
  if (!idx) return idx.error();
  auto v = (*idx)->meta("format_version");
  if (!v || !known_format_version(*v))
    return Error{ErrorCode::kUnsupported, "index format version " + v.value_or("(none)")};
  const CloseState state = state_of((*idx)->meta("clean"));
  impl->recovery.state = state;
  if (state != CloseState::kUnclean) {
    impl->idx = std::move(*idx);
  } else {
    idx->reset();
    auto mem = Index::open_memory_copy(ipath);
    if (!mem) return mem.error();
    impl->idx = std::move(*mem);
    if (auto s =
            resync(*impl->idx, dir, false, impl->opt.limits, impl->opt.on_problem, impl->recovery);
        !s)
      return s.error();
  }
  return std::unique_ptr<Recording>(new Recording(std::move(impl)));
}

Result<CloseState> Recording::close_state(const std::string& dir) {
  const std::string ipath = detail::index_path(dir);
  if (!file_exists(ipath)) return Error{ErrorCode::kNotFound, ipath + " does not exist"};
  auto idx = Index::open(ipath, Index::Mode::kReadOnly);
  if (!idx) return idx.error();
  return state_of((*idx)->meta("clean"));
}

namespace {

// Recording::reindex(): a new index built from the segment files alone.
struct Reindexer {
  Index& x;
  const ProblemCallback& on_problem;
  ReindexReport rep;
  std::string recording_id;
  uint64_t last_seg = 0;
  Bytes stored, raw, window;
  ChunkRow row;

  void report(const Problem& p) {
    ++rep.problems;
    if (p.kind == Problem::Kind::kTornTail) ++rep.torn_tails;
    if (on_problem) on_problem(p);
  }

  // From `pos`, the offset of the next chunk header that verifies, or nullopt if none follows.
  Result<std::optional<uint64_t>> next_header(const ByteSource& src, uint64_t pos) {
    const uint64_t size = src.size();
    window.resize(1 << 20);
    for (uint64_t next = pos + 1; next + format::kChunkHeaderSize <= size;) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(window.size(), size - next));
      if (auto s = src.read_at(next, std::span(window.data(), n)); !s) return s.error();
      for (size_t i = 0; i + format::kChunkHeaderSize <= n; ++i) {
        if (std::memcmp(window.data() + i, "PSCK", 4) != 0) continue;
        if (format::decode_chunk_header(ByteSpan(window.data() + i, format::kChunkHeaderSize)))
          return std::optional<uint64_t>(next + i);
      }
      next += n > format::kChunkHeaderSize ? n - format::kChunkHeaderSize + 1 : n;
    }
    return std::optional<uint64_t>();
  }

  // The chunks of one segment into the index; damaged ones reported and skipped.
  Status chunks(const ByteSource& src, uint64_t seg) {
    uint64_t pos = format::kSegmentHeaderSize;
    while (pos < src.size()) {
      auto h = detail::read_chunk(src, pos, stored, &raw);
      Status st = h ? detail::summarize_chunk(*h, raw, row) : h.error();
      if (st) {
        row.info.segment = seg;
        row.info.offset = pos;
        if (auto s = x.put_chunk(row); !s) return s;
        ++rep.chunks;
        rep.records += h->record_count;
        pos += format::chunk_span(*h);
        continue;
      }
      Problem p;
      p.segment = seg;
      p.offset = pos;
      if (h) {  // header intact, body bad: skip exactly this chunk
        p.kind = Problem::Kind::kCorruptChunk;
        p.chunk_sequence = h->sequence;
        p.first_recv_ns = h->first_recv_ns;
        p.last_recv_ns = h->last_recv_ns;
        p.records = h->record_count;
        p.message = st.error().message + "; chunk left out of the index";
        report(p);
        pos += format::chunk_span(*h);
        continue;
      }
      // Header unreadable: look for the next chunk header that verifies.
      auto next = next_header(src, pos);
      if (!next) return next.error();
      p.kind = *next ? Problem::Kind::kCorruptChunk : Problem::Kind::kTornTail;
      if (*next) p.bytes = **next - pos;
      if (!*next) p.tail_bytes = src.size() - pos;
      describe_from_header(src, pos, p);
      p.message =
          st.error().message + (*next ? "; skipped " + std::to_string(**next - pos) + " bytes"
                                      : "; ignoring the rest of the segment");
      report(p);
      if (!*next) break;
      pos = **next;
    }
    return Status{};
  }

  Status segment(const std::string& dir, uint64_t seg) {
    auto src = FileSource::open(detail::segment_path(dir, seg));
    if (!src) return src.error();
    std::byte hb[format::kSegmentHeaderSize];
    Result<format::SegmentHeader> sh = Error{ErrorCode::kTruncated, "segment shorter than header"};
    if ((*src)->size() >= sizeof hb) {
      if (auto s = (*src)->read_at(0, hb); !s) return s;
      sh = format::decode_segment_header(ByteSpan(hb, sizeof hb));
    }
    if (!sh) {
      report({Problem::Kind::kBadSegment, seg, 0, 0, {}, 0, 0, 0, sh.error().message});
      return Status{};
    }
    if (recording_id.empty()) recording_id = common::to_hex(sh->recording_id);
    if (auto s = x.put_segment(seg, sh->created_ns); !s) return s;
    ++rep.segments;
    last_seg = seg;
    const uint64_t torn_before = rep.torn_tails;
    if (auto s = chunks(**src, seg); !s) return s;
    // A torn segment stays open: opening the recording checks its tail again.
    if (rep.torn_tails == torn_before) return x.set_segment_closed(seg, true);
    return Status{};
  }

  // The meta rows; the close state is the old index's, never upgraded (a torn tail in a recording
  // its writer closed is damage done later - a truncated copy - not an unclean close). Without an
  // old index: unclean when a tail is torn, else recovered.
  Status finish(std::optional<CloseState> old_state, const std::string& repairs) {
    rep.state = old_state            ? *old_state
                : rep.torn_tails > 0 ? CloseState::kUnclean
                                     : CloseState::kRecovered;
    Status s = x.set_meta("format_version", std::to_string(format::kFormatVersion));
    if (s) s = x.set_meta("recording_id", recording_id);
    if (s && !repairs.empty()) s = x.set_meta("repaired", repairs);
    if (s && rep.state == CloseState::kUnclean && rep.segments > 0)
      s = x.set_segment_closed(last_seg, false);
    if (s)
      s = x.set_meta("clean", rep.state == CloseState::kClean       ? "1"
                              : rep.state == CloseState::kRecovered ? kMetaRecovered
                                                                    : "0");
    if (s) s = x.commit();
    if (s) s = x.exec("PRAGMA journal_mode=DELETE");
    return s;
  }
};

}  // namespace

namespace {

// reindex() with the writer lock held by the caller.
Result<ReindexReport> reindex_locked(const std::string& dir, const ProblemCallback& on_problem) {
  const std::string ipath = detail::index_path(dir);
  const std::string tmp = ipath + ".reindex";
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) ::unlink((tmp + suffix).c_str());
  // The close state is kept (read before the old index is replaced), never upgraded; so is the
  // list of what recover() repaired.
  std::optional<CloseState> old_state;
  std::string repairs;
  if (file_exists(ipath))
    if (auto old = Index::open(ipath, Index::Mode::kReadOnly)) {
      auto v = (*old)->meta("format_version");
      if (v && known_format_version(*v)) {
        old_state = state_of((*old)->meta("clean"));
        repairs = (*old)->meta("repaired").value_or("");
      }
    }
  ReindexReport rep;
  {
    auto idx = Index::open(tmp, Index::Mode::kCreate);
    if (!idx) return idx.error();
    if (auto s = (*idx)->begin(); !s) return s.error();
    Reindexer r{**idx, on_problem, {}, {}, 0, {}, {}, {}, {}};
    for (uint64_t seg : detail::list_segment_files(dir))
      if (auto s = r.segment(dir, seg); !s) return s.error();
    if (auto s = r.finish(old_state, repairs); !s) return s.error();
    rep = r.rep;
  }
  for (const char* suffix : {"-wal", "-shm"}) ::unlink((ipath + suffix).c_str());
  if (::rename(tmp.c_str(), ipath.c_str()) != 0) return errno_error(errno, "rename " + tmp);
  return rep;
}

}  // namespace

Result<ReindexReport> Recording::reindex(const std::string& dir, ProblemCallback on_problem) {
  auto lock = WriterLock::acquire(dir, std::string(program_invocation_short_name) + " reindex");
  if (!lock) return lock.error();
  return reindex_locked(dir, on_problem);
}

const LockState& Recording::lock_state() const {
  return impl_->lock;
}

const RecoveryReport& Recording::recovery() const {
  return impl_->recovery;
}
Result<std::vector<TopicInfo>> Recording::topics() {
  return impl_->idx->topics();
}
Result<std::vector<WriterInfo>> Recording::writers() {
  return impl_->idx->writers();
}
Result<std::vector<SegmentInfo>> Recording::segments() {
  return impl_->idx->segments();
}
Result<std::vector<Gap>> Recording::gaps() {
  return impl_->idx->gaps();
}
Result<std::vector<TypeDef>> Recording::types() {
  return impl_->idx->types();
}

Result<std::vector<Mark>> Recording::marks() {
  return impl_->idx->marks();
}

Result<Totals> Recording::totals() {
  Totals t;
  auto topics = impl_->idx->topics();
  if (!topics) return topics.error();
  auto writers = impl_->idx->writers();
  if (!writers) return writers.error();
  auto segs = impl_->idx->segments();
  if (!segs) return segs.error();
  t.topics = topics->size();
  t.writers = writers->size();
  bool any = false;
  for (auto& x : *topics) {
    t.records += x.count;
    t.bytes += x.bytes;
    t.lost += x.lost;
    if (x.count == 0) continue;
    t.first_recv_ns = any ? std::min(t.first_recv_ns, x.first_recv_ns) : x.first_recv_ns;
    t.last_recv_ns = any ? std::max(t.last_recv_ns, x.last_recv_ns) : x.last_recv_ns;
    any = true;
  }
  t.segments = segs->size();
  for (auto& s : *segs) t.chunks += s.chunk_count;
  return t;
}

TopicId Recording::topic_id(const std::string& name) {
  Stmt s(impl_->idx->db(), "SELECT id FROM topics WHERE name = ? ORDER BY id LIMIT 1");
  s.bind(1, name);
  return s.step() == SQLITE_ROW ? static_cast<TopicId>(s.i64(0)) : 0;
}

// ---------------------------------------------------------------------------------------------

struct Cursor::Impl {
  Recording::Impl* rec = nullptr;
  std::unique_ptr<Stmt> stmt;
  bool rows_done = false;
  bool have_row = false;
  ChunkInfo row;
  int64_t start = 0, end = 0;
  bool all_topics = true;
  std::vector<bool> topic_on;  // by topic id
  Status status;
  uint64_t problems = 0;
  uint64_t loaded = 0;

  struct Loaded {
    Bytes stored, raw;
    std::vector<RecordView> recs;
    size_t pos = 0;
    uint64_t order = 0;
  };
  std::vector<std::unique_ptr<Loaded>> pool;  // free Loaded objects (buffers reused)
  struct HeapItem {
    int64_t recv;
    uint64_t order;
    Loaded* chunk;
    bool operator>(const HeapItem& o) const {
      return recv != o.recv ? recv > o.recv : order > o.order;
    }
  };
  std::priority_queue<HeapItem, std::vector<HeapItem>, std::greater<>> heap;
  std::vector<std::unique_ptr<Loaded>> active;
  Loaded* current = nullptr;  // the chunk of the record returned last (advanced on next call)
  RecordView view;

  void next_row() {
    have_row = false;
    if (rows_done) return;
    const int rc = stmt->step();
    if (rc == SQLITE_ROW) {
      row.sequence = static_cast<uint64_t>(stmt->i64(0));
      row.segment = static_cast<uint64_t>(stmt->i64(1));
      row.offset = static_cast<uint64_t>(stmt->i64(2));
      row.stored_size = static_cast<uint32_t>(stmt->i64(3));
      row.first_recv_ns = stmt->i64(4);
      row.last_recv_ns = stmt->i64(5);
      row.record_count = static_cast<uint32_t>(stmt->i64(6));
      have_row = true;
    } else {
      rows_done = true;
      if (rc != SQLITE_DONE)
        status = Error{ErrorCode::kIndex,
                       std::string("query chunks: ") + sqlite3_errmsg(rec->idx->db())};
    }
  }

  void problem(const ChunkInfo& c, const Status& why) {
    ++problems;
    if (!rec->opt.on_problem) return;
    Problem p;
    p.kind = Problem::Kind::kCorruptChunk;
    describe_from_index(*rec->idx, c, p);
    p.message = why.error().message + "; its records are skipped";
    rec->opt.on_problem(p);
  }

  // Read-ahead: chunks follow each other in a segment, so while one is read and handed out the
  // next kReadAhead bytes of its segment are read into the page cache in the background. A
  // recording just written is mostly not in the cache (the recorder drops what it wrote), and
  // read chunk by chunk it would wait for the disk at every chunk (a replay right after the
  // recording ran at a quarter of the recorded rate).
  static constexpr uint64_t kReadAhead = 32u << 20;
  uint64_t hinted_segment = 0, hinted_until = 0;

  void read_ahead(const ByteSource& src, const ChunkInfo& c) {
    if (c.segment != hinted_segment || c.offset > hinted_until) {
      hinted_segment = c.segment;
      hinted_until = c.offset;
    }
    const uint64_t want = c.offset + kReadAhead;
    if (want <= hinted_until + kReadAhead / 4) return;  // most of the window already asked for
    src.will_need(hinted_until, want - hinted_until);
    hinted_until = want;
  }

  void load(const ChunkInfo& c) {
    std::unique_ptr<Loaded> l;
    if (!pool.empty()) {
      l = std::move(pool.back());
      pool.pop_back();
    } else {
      l = std::make_unique<Loaded>();
    }
    l->recs.clear();
    l->pos = 0;
    l->order = loaded++;
    auto src = rec->source(c.segment);
    if (!src) return problem(c, src.error());
    read_ahead(**src, c);
    auto h = detail::read_chunk(**src, c.offset, l->stored, nullptr, rec->opt.limits);
    Status st = h ? Status{} : h.error();
    if (st && h->sequence != c.sequence)
      st = Error{ErrorCode::kCorrupt, "chunk at the indexed offset has another sequence number"};
    ByteSpan body = l->stored;  // raw chunks are decoded in place, without a copy
    if (st && h->codec != format::Codec::kRaw) {
      st = format::decode_chunk_body(*h, l->stored, l->raw, rec->opt.verify_checksums);
      body = l->raw;
    } else if (st && rec->opt.verify_checksums &&
               format::crc32c(l->stored.data(), l->stored.size()) != h->body_crc) {
      st = Error{ErrorCode::kCorrupt, "chunk body checksum mismatch"};
    }
    if (!st) {
      pool.push_back(std::move(l));
      return problem(c, st);
    }
    format::EntryDecoder dec(body, rec->opt.limits);
    format::Entry e;
    for (;;) {
      auto more = dec.next(e);
      if (!more) {
        l->recs.clear();
        pool.push_back(std::move(l));
        return problem(c, more.error());
      }
      if (!*more) break;
      if (e.kind != format::EntryKind::kData) continue;
      const RecordMeta& m = e.record.meta;
      if (m.reception_ns < start || m.reception_ns >= end) continue;
      if (!all_topics && (m.topic >= topic_on.size() || !topic_on[m.topic])) continue;
      l->recs.push_back(e.record);
    }
    if (!(h->flags & format::kChunkFlagRecvSorted))
      std::stable_sort(l->recs.begin(), l->recs.end(),
                       [](const RecordView& a, const RecordView& b) {
                         return a.meta.reception_ns < b.meta.reception_ns;
                       });
    if (l->recs.empty()) {
      pool.push_back(std::move(l));
      return;
    }
    heap.push({l->recs[0].meta.reception_ns, l->order, l.get()});
    active.push_back(std::move(l));
  }

  void retire(Loaded* l) {
    auto it = std::find_if(active.begin(), active.end(), [l](auto& p) { return p.get() == l; });
    pool.push_back(std::move(*it));
    active.erase(it);
  }

  const RecordView* next() {
    if (current) {  // advance the chunk that produced the previous record
      Loaded* l = current;
      current = nullptr;
      if (++l->pos < l->recs.size()) {
        const int64_t t = l->recs[l->pos].meta.reception_ns;
        // Fast path: the same chunk still holds the smallest record (no other chunk is due).
        if ((heap.empty() || t < heap.top().recv ||
             (t == heap.top().recv && l->order < heap.top().order)) &&
            (!have_row || t < row.first_recv_ns)) {
          current = l;
          view = l->recs[l->pos];
          return &view;
        }
        heap.push({t, l->order, l});
      } else {
        retire(l);
      }
    }
    for (;;) {
      while (have_row && (heap.empty() || row.first_recv_ns <= heap.top().recv)) {
        const ChunkInfo c = row;
        next_row();
        load(c);
      }
      if (!status.ok() || heap.empty()) return nullptr;
      const HeapItem top = heap.top();
      heap.pop();
      current = top.chunk;
      view = top.chunk->recs[top.chunk->pos];
      return &view;
    }
  }
};

Cursor::Cursor(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Cursor::~Cursor() = default;
Cursor::Cursor(Cursor&&) noexcept = default;
Cursor& Cursor::operator=(Cursor&&) noexcept = default;
const RecordView* Cursor::next() {
  return impl_->next();
}
const Status& Cursor::status() const {
  return impl_->status;
}
uint64_t Cursor::problems() const {
  return impl_->problems;
}
uint64_t Cursor::chunks_loaded() const {
  return impl_->loaded;
}

Result<Cursor> Recording::query(const Query& q) {
  auto c = std::make_unique<Cursor::Impl>();
  c->rec = impl_.get();
  c->start = q.start_ns;
  c->end = q.end_ns;
  std::vector<TopicId> ids = q.topic_ids;
  for (const auto& name : q.topic_names) {
    Stmt s(impl_->idx->db(), "SELECT id FROM topics WHERE name = ?");
    s.bind(1, name);
    while (s.step() == SQLITE_ROW) ids.push_back(static_cast<TopicId>(s.i64(0)));
  }
  c->all_topics = q.topic_ids.empty() && q.topic_names.empty();
  std::string topic_list;
  for (TopicId id : ids) {
    if (id >= c->topic_on.size()) c->topic_on.resize(id + 1, false);
    c->topic_on[id] = true;
    topic_list += (topic_list.empty() ? "" : ",") + std::to_string(id);
  }
  // Chunks whose first record lies in [start - max span, end): seeks the time index instead of
  // scanning from the start; max span is the longest time range of any chunk.
  const int64_t span = impl_->idx->max_chunk_span();
  const int64_t lo = q.start_ns < std::numeric_limits<int64_t>::min() + span
                         ? std::numeric_limits<int64_t>::min()
                         : q.start_ns - span;
  std::string sql =
      "SELECT id, segment_id, offset, stored_size, first_recv, last_recv, record_count "
      "FROM chunks WHERE record_count > 0 AND first_recv >= ?1 AND first_recv < ?2 AND "
      "last_recv >= ?3";
  if (!c->all_topics)
    sql +=
        " AND EXISTS (SELECT 1 FROM chunk_topics ct WHERE ct.chunk_id = chunks.id AND "
        "ct.topic_id IN (" +
        topic_list + ") AND ct.last_recv >= ?3 AND ct.first_recv < ?2)";
  sql += " ORDER BY first_recv, id";
  c->stmt = std::make_unique<Stmt>(impl_->idx->db(), sql.c_str());
  if (!c->stmt->ok()) return impl_->idx->error("prepare chunk query");
  c->stmt->bind(1, lo).bind(2, q.end_ns).bind(3, q.start_ns);
  if (q.start_ns >= q.end_ns || (!c->all_topics && ids.empty())) c->rows_done = true;
  c->next_row();
  return Cursor(std::move(c));
}

namespace {

// Recording::verify(): each segment's chunks read and compared with their index rows, the bytes
// between and after them scanned, segment files the index does not know listed.
struct Verifier {
  Index& idx;
  const format::DecodeLimits& limits;
  const ProblemCallback& on_problem;
  bool read_chunks = true;  // false: sizes, the last indexed chunk and what follows it only
  VerifyReport rep;
  Bytes stored, raw;
  ChunkRow row;

  void report(const Problem& p) {
    ++rep.problems;
    if (on_problem) on_problem(p);
  }

  void check_header(const ByteSource& src, uint64_t seg) {
    std::byte hb[format::kSegmentHeaderSize];
    if (src.read_at(0, hb).ok()) {
      auto h = format::decode_segment_header(ByteSpan(hb, sizeof hb));
      if (!h) report({Problem::Kind::kBadSegment, seg, 0, 0, {}, 0, 0, 0, h.error().message});
    } else {
      report({Problem::Kind::kBadSegment, seg, 0, 0, {}, 0, 0, 0, "segment header truncated"});
    }
  }

  // Valid chunks between indexed ones (or after the last) that the index does not list.
  void scan_unindexed(const ByteSource& src, uint64_t seg, uint64_t from, uint64_t to) {
    while (from < to) {
      auto h = detail::read_chunk(src, from, stored, nullptr, limits);
      Problem p;
      p.segment = seg;
      p.offset = from;
      if (!h) {
        // At the end of the file a torn tail; between indexed chunks damage.
        p.kind = to == src.size() ? Problem::Kind::kTornTail : Problem::Kind::kCorruptChunk;
        p.tail_bytes = to - from;
        describe_from_header(src, from, p);
        p.message = std::to_string(to - from) + " bytes not covered by the index (" +
                    h.error().message + ")";
        report(p);
        return;
      }
      p.kind = Problem::Kind::kUnindexedChunk;
      p.chunk_sequence = h->sequence;
      p.first_recv_ns = h->first_recv_ns;
      p.last_recv_ns = h->last_recv_ns;
      p.records = h->record_count;
      p.message = "valid chunk missing from the index";
      report(p);
      from += format::chunk_span(*h);
    }
  }

  // What differs between index row `c` and the chunk as read (row); empty when nothing.
  Result<std::string> differences(const ChunkInfo& c) {
    std::string diff;
    const ChunkInfo& r = row.info;
    if (r.sequence != c.sequence) diff += " sequence";
    if (r.stored_size != c.stored_size || r.raw_size != c.raw_size) diff += " sizes";
    if (r.record_count != c.record_count || r.entry_count != c.entry_count) diff += " counts";
    if (r.record_count && (r.first_recv_ns != c.first_recv_ns || r.last_recv_ns != c.last_recv_ns))
      diff += " time range";
    if (r.record_count && (r.min_seq != c.min_seq || r.max_seq != c.max_seq))
      diff += " sequence range";
    auto it = idx.chunk_topics(c.sequence);
    if (!it) return it.error();
    bool topics_equal = it->size() == row.topics.size();
    for (size_t i = 0; topics_equal && i < it->size(); ++i) {
      const auto &a = (*it)[i], &b = row.topics[i];
      topics_equal = a.topic == b.topic && a.count == b.count && a.bytes == b.bytes &&
                     a.first_recv_ns == b.first_recv_ns && a.last_recv_ns == b.last_recv_ns;
    }
    if (!topics_equal) diff += " per-topic counts";
    return diff;
  }

  // One indexed chunk: readable, checksums right, and as its row says. `end` is set to where the
  // next chunk should start (after the padding its header names, when the header is readable).
  Status check_chunk(const ByteSource& src, const ChunkInfo& c, uint64_t& end) {
    auto h = detail::read_chunk(src, c.offset, stored, &raw, limits);
    end = c.offset + (h ? format::chunk_span(*h) : format::kChunkHeaderSize + c.stored_size);
    Status st = h ? detail::summarize_chunk(*h, raw, row, limits) : h.error();
    Problem p;
    describe_from_index(idx, c, p);
    if (!st) {
      ++rep.chunks_bad;
      p.kind = Problem::Kind::kCorruptChunk;
      p.bytes = end - c.offset;
      p.message = st.error().message;
      report(p);
      return Status{};
    }
    auto diff = differences(c);
    if (!diff) return diff.error();
    if (!diff->empty()) {
      ++rep.chunks_bad;
      p.kind = Problem::Kind::kIndexMismatch;
      p.message = "index disagrees with the chunk:" + *diff;
      report(p);
      return Status{};
    }
    ++rep.chunks_ok;
    rep.records += row.info.record_count;
    return Status{};
  }

  // Indexed chunks the file no longer holds whole (the last `chunks.size() - whole`): one
  // truncation, counted from their index rows.
  Status truncated(const ByteSource& src, uint64_t seg, const std::vector<ChunkInfo>& chunks,
                   size_t whole) {
    Problem p;
    p.kind = Problem::Kind::kTruncated;
    p.segment = seg;
    p.offset = std::min<uint64_t>(src.size(), chunks[whole].offset);
    p.chunk_sequence = chunks[whole].sequence;
    std::set<TopicId> topics;
    for (size_t i = whole; i < chunks.size(); ++i) {
      const ChunkInfo& c = chunks[i];
      ++p.chunks;
      p.records += c.record_count;
      if (c.record_count) {
        p.first_recv_ns =
            p.first_recv_ns ? std::min(p.first_recv_ns, c.first_recv_ns) : c.first_recv_ns;
        p.last_recv_ns = std::max(p.last_recv_ns, c.last_recv_ns);
      }
      auto t = idx.chunk_topics(c.sequence);
      if (!t) return t.error();
      for (auto& x : *t) topics.insert(x.topic);
    }
    p.topics.assign(topics.begin(), topics.end());
    const ChunkInfo& last = chunks.back();
    p.bytes = last.offset + format::kChunkHeaderSize + last.stored_size - src.size();
    p.tail_bytes = src.size() - p.offset;
    p.message = "the file ends at byte " + std::to_string(src.size()) +
                ", the index lists chunks up to byte " +
                std::to_string(last.offset + format::kChunkHeaderSize + last.stored_size);
    rep.chunks_bad += p.chunks;
    report(p);
    return Status{};
  }

  Status segment(const ByteSource& src, uint64_t seg, const std::vector<ChunkInfo>& chunks) {
    check_header(src, seg);
    size_t whole = chunks.size();
    while (whole > 0 &&
           chunks[whole - 1].offset + format::kChunkHeaderSize + chunks[whole - 1].stored_size >
               src.size())
      --whole;
    if (whole < chunks.size())
      if (auto st = truncated(src, seg, chunks, whole); !st) return st;
    uint64_t expect = format::kSegmentHeaderSize;
    for (size_t i = 0; i < whole; ++i) {
      const ChunkInfo& c = chunks[i];
      if (c.offset > expect) {
        scan_unindexed(src, seg, expect, c.offset);
      } else if (c.offset < expect) {
        Problem p;
        p.kind = Problem::Kind::kIndexMismatch;
        describe_from_index(idx, c, p);
        p.message = "indexed chunk overlaps the previous one";
        report(p);
      }
      if (!read_chunks && i + 1 < whole) {  // trusted without reading: sizes only
        ++rep.chunks_ok;
        rep.records += c.record_count;
        expect = chunks[i + 1].offset;
        continue;
      }
      if (auto st = check_chunk(src, c, expect); !st) return st;
    }
    const uint64_t end =
        whole < chunks.size() ? std::min<uint64_t>(src.size(), chunks[whole].offset) : src.size();
    scan_unindexed(src, seg, expect, end);
    return Status{};
  }

  // A segment file the index does not know: named, with whether its header is even valid.
  void unknown_file(const std::string& dir, uint64_t n) {
    Problem p;
    p.kind = Problem::Kind::kUnindexedChunk;
    p.segment = n;
    p.message = "segment file not in the index";
    std::byte hb[format::kSegmentHeaderSize];
    auto src = FileSource::open(detail::segment_path(dir, n));
    if (!src || !(*src)->read_at(0, hb) ||
        !format::decode_segment_header(ByteSpan(hb, sizeof hb))) {
      p.kind = Problem::Kind::kBadSegment;
      p.message = "segment file not in the index, without a valid header";
    } else {  // the chunks it holds, by their headers
      for (uint64_t pos = format::kSegmentHeaderSize;;) {
        auto h = peek_chunk_header(**src, pos);
        if (!h || pos + format::chunk_span(*h) > (*src)->size()) break;
        ++p.chunks;
        p.records += h->record_count;
        pos += format::chunk_span(*h);
      }
    }
    report(p);
  }
};

}  // namespace

Result<VerifyReport> Recording::verify(const ProblemCallback& on_problem) {
  return verify_segments(on_problem, true);
}

Result<VerifyReport> Recording::verify_segments(const ProblemCallback& on_problem,
                                                bool read_chunks) {
  Verifier v{*impl_->idx, impl_->opt.limits, on_problem, read_chunks, {}, {}, {}, {}};
  auto segs = v.idx.segments();
  if (!segs) return segs.error();
  std::set<uint64_t> known;
  for (const SegmentInfo& s : *segs) {
    known.insert(s.number);
    ++v.rep.segments;
    auto chunks = v.idx.chunks_of_segment(s.number);
    if (!chunks) return chunks.error();
    auto src = impl_->source(s.number);
    if (!src) {
      v.report(missing_segment(s, src.error().message));
      v.rep.chunks_bad += chunks->size();
      continue;
    }
    if (auto st = v.segment(**src, s.number, *chunks); !st) return st.error();
  }
  for (uint64_t n : detail::list_segment_files(impl_->dir))
    if (!known.count(n)) v.unknown_file(impl_->dir, n);
  return v.rep;
}

namespace {

// What a live recording shows at its end because it is still being written: the tail, and
// chunks (or a segment) written after the index was read.
bool still_growing(const Problem& p, uint64_t last_indexed) {
  return p.kind == Problem::Kind::kTornTail ||
         (p.kind == Problem::Kind::kBadSegment && p.segment > last_indexed) ||
         (p.kind == Problem::Kind::kUnindexedChunk && p.segment >= last_indexed);
}

// The problems that opening and verifying report, one Damage per damaged place: a truncation or
// an unclean close per segment (its torn tail counted once), each corrupt chunk, each missing
// segment file, the chunks an index lacks per segment.
std::vector<Damage> classify(const std::vector<Problem>& problems, CloseState state,
                             uint64_t last_indexed) {
  std::vector<Damage> out;
  std::set<std::pair<uint64_t, uint64_t>> torn_seen;
  auto fresh = [&](Damage::Kind k, uint64_t seg) -> Damage& {
    Damage d;
    d.kind = k;
    d.segment = seg;
    d.offset = UINT64_MAX;
    out.push_back(std::move(d));
    return out.back();
  };
  auto merged = [&](Damage::Kind k, uint64_t seg) -> Damage& {
    for (auto& d : out)
      if (d.kind == k && d.segment == seg) return d;
    return fresh(k, seg);
  };
  auto add = [](Damage& d, const Problem& p, uint64_t chunks) {
    d.offset = std::min(d.offset, p.offset);
    d.chunks += chunks;
    d.records += p.records;
    d.records_exact = d.records_exact && p.records_known;
    d.bytes += p.bytes;
    d.tail_bytes += p.tail_bytes;
    for (TopicId t : p.topics)
      if (std::find(d.topics.begin(), d.topics.end(), t) == d.topics.end()) d.topics.push_back(t);
    if (d.detail.empty()) d.detail = p.message;
  };
  using K = Problem::Kind;
  using D = Damage::Kind;
  for (const Problem& p : problems) {
    switch (p.kind) {
      case K::kTruncated:
        add(merged(state == CloseState::kUnclean ? D::kUnclean : D::kTruncated, p.segment), p,
            p.chunks);
        break;
      case K::kTornTail:
        if (!torn_seen.insert({p.segment, p.offset}).second) break;
        add(merged(state == CloseState::kUnclean ? D::kUnclean : D::kTruncated, p.segment), p, 1);
        break;
      case K::kCorruptChunk:
        add(fresh(D::kCorruptChunk, p.segment), p, 1);
        break;
      case K::kBadSegment:
        if (state == CloseState::kUnclean && p.segment > last_indexed) {
          add(merged(D::kUnclean, p.segment), p, 0);
        } else {
          add(fresh(D::kCorruptChunk, p.segment), p, 0);
        }
        break;
      case K::kMissingSegment:
        add(merged(D::kMissingSegment, p.segment), p, p.chunks);
        break;
      case K::kUnindexedChunk:
        add(merged(state == CloseState::kUnclean ? D::kUnclean : D::kIndexStale, p.segment), p,
            p.chunks ? p.chunks : 1);
        break;
      case K::kIndexMismatch:
        add(merged(D::kIndexStale, p.segment), p, 1);
        break;
    }
  }
  for (auto& d : out)
    if (d.offset == UINT64_MAX) d.offset = 0;
  std::stable_sort(out.begin(), out.end(),
                   [](const Damage& a, const Damage& b) { return a.segment < b.segment; });
  if (state == CloseState::kUnclean &&
      std::none_of(out.begin(), out.end(), [](const Damage& d) { return d.kind == D::kUnclean; }))
    fresh(D::kUnclean, 0).offset = 0;
  return out;
}

// Chunks and records the segment files hold, by their chunk headers (no index to ask).
void count_segment_chunks(const std::string& dir, Damage& d) {
  for (uint64_t n : detail::list_segment_files(dir)) {
    auto src = FileSource::open(detail::segment_path(dir, n));
    if (!src) continue;
    for (uint64_t pos = format::kSegmentHeaderSize;;) {
      auto h = peek_chunk_header(**src, pos);
      if (!h || pos + format::chunk_span(*h) > (*src)->size()) break;
      ++d.chunks;
      d.records += h->record_count;
      pos += format::chunk_span(*h);
    }
  }
}

}  // namespace

Result<Diagnosis> Recording::diagnose(const std::string& dir, bool read_chunks) {
  return diagnose_impl(dir, read_chunks, false);
}

Result<Diagnosis> Recording::diagnose_impl(const std::string& dir, bool read_chunks,
                                           bool self_locked) {
  Diagnosis d;
  d.chunks_read = read_chunks;
  if (!self_locked) {
    auto lock = WriterLock::state(dir);
    if (!lock) return lock.error();
    d.lock = std::move(*lock);
  }
  const bool live = d.lock.live.has_value();
  if (!file_exists(detail::index_path(dir))) {
    const auto files = detail::list_segment_files(dir);
    if (files.empty())
      return Error{ErrorCode::kNotFound,
                   dir + " is not a recording (no index.sqlite3, no segment files)"};
    d.state = CloseState::kUnclean;
    Damage m;
    m.kind = Damage::Kind::kIndexMissing;
    m.detail = std::to_string(files.size()) + " segment file" + (files.size() == 1 ? "" : "s");
    count_segment_chunks(dir, m);
    d.damages.push_back(std::move(m));
    return d;
  }
  std::vector<Problem> problems;
  RecordingOptions opt;
  opt.on_problem = [&](const Problem& p) { problems.push_back(p); };
  auto rec = open(dir, std::move(opt));
  if (!rec) return rec.error();
  d.state = (*rec)->close_state();
  d.repaired = decode_repairs((*rec)->impl_->idx->meta("repaired").value_or(""));
  uint64_t last_indexed = 0;
  auto segs = (*rec)->segments();
  if (!segs) return segs.error();
  for (const auto& sg : *segs) last_indexed = std::max(last_indexed, sg.number);
  auto v = (*rec)->verify_segments([&](const Problem& p) { problems.push_back(p); }, read_chunks);
  if (!v) return v.error();
  d.chunks_ok = v->chunks_ok;
  d.records_ok = v->records;
  if (live)
    std::erase_if(problems, [&](const Problem& p) { return still_growing(p, last_indexed); });
  d.damages = classify(problems, live ? CloseState::kClean : d.state, last_indexed);
  return d;
}

namespace {

// recover(): what a clean close does not explain, repaired in the files (the index is rebuilt
// afterwards). A truncated segment loses the partial chunk at its end (moved to
// DIR/recovered/<segment>.from-<offset>); a corrupt chunk is moved out of its segment (to
// DIR/recovered/<segment>.chunk-at-<offset>) and the segment rewritten without it.
Status repair_files(const std::string& dir, const std::vector<Damage>& damages,
                    RecoveryReport& rep) {
  const std::string rdir = recovered_dir(dir);
  // Corrupt chunks from the last to the first, so that earlier offsets stay right.
  std::vector<const Damage*> order;
  for (const Damage& d : damages) order.push_back(&d);
  std::stable_sort(order.begin(), order.end(), [](const Damage* a, const Damage* b) {
    return a->segment != b->segment ? a->segment < b->segment : a->offset > b->offset;
  });
  for (const Damage* d : order) {
    const std::string path = detail::segment_path(dir, d->segment);
    if (d->kind == Damage::Kind::kTruncated && d->tail_bytes > 0) {
      auto src = FileSource::open(path);
      if (!src) return src.error();
      const uint64_t cut = (*src)->size() - d->tail_bytes;
      if (auto s = cut_segment_tail(dir, **src, d->segment, cut, rep.saved_files); !s) return s;
      rep.bytes_cut += d->tail_bytes;
    } else if (d->kind == Damage::Kind::kCorruptChunk && d->bytes > 0) {
      auto src = FileSource::open(path);
      if (!src) return src.error();
      const uint64_t size = (*src)->size();
      const uint64_t from = d->offset, to = std::min(size, d->offset + d->bytes);
      Bytes buf(static_cast<size_t>(size));
      if (auto s = (*src)->read_at(0, buf); !s) return s;
      auto kept =
          recovered_path(dir, d->segment, ".chunk-at-" + std::to_string(from), rep.saved_files);
      if (!kept) return kept.error();
      const std::string& keep = *kept;
      const std::string tmp = path + ".repair";
      // Each file: bytes [a, b) then [c, size).
      for (const auto& [name, a, b, c] :
           {std::tuple{keep, from, to, size}, std::tuple{tmp, uint64_t{0}, from, to}}) {
        const int fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0) return errno_error(errno, "create " + name);
        bool ok = ::write(fd, buf.data() + a, b - a) == static_cast<ssize_t>(b - a) &&
                  ::write(fd, buf.data() + c, size - c) == static_cast<ssize_t>(size - c) &&
                  ::fsync(fd) == 0;
        const int err = errno;
        ::close(fd);
        if (!ok) return errno_error(err, "write " + name);
      }
      if (::rename(tmp.c_str(), path.c_str()) != 0) return errno_error(errno, "rename " + tmp);
      if (auto s = sync_dir(rdir); !s) return s;
      if (auto s = sync_dir(detail::segments_dir(dir)); !s) return s;
      rep.bytes_cut += to - from;
    }
  }
  return Status{};
}

}  // namespace

Result<RecoveryReport> Recording::recover(const std::string& dir, ProblemCallback on_problem) {
  const std::string ipath = detail::index_path(dir);
  if (!file_exists(ipath) && detail::list_segment_files(dir).empty())
    return Error{ErrorCode::kNotFound, ipath + " does not exist and there are no segment files"};
  auto lock = WriterLock::acquire(dir, std::string(program_invocation_short_name) + " recover");
  if (!lock) return lock.error();
  RecoveryReport rep;
  rep.state = CloseState::kUnclean;
  if (!file_exists(ipath)) {  // first an index, from the segments
    auto d = diagnose_impl(dir, false, true);
    if (!d) return d.error();
    rep.repaired = d->damages;
    auto r = reindex_locked(dir, on_problem);
    if (!r) return r.error();
    rep.reindexed = true;
  }
  {
    auto idx = Index::open(ipath, Index::Mode::kReadWrite);
    if (!idx) return idx.error();
    RecoveryReport found;
    found.state = state_of((*idx)->meta("clean"));
    if (found.state == CloseState::kUnclean) {
      std::vector<Problem> problems;
      auto segs = (*idx)->segments();
      if (!segs) return segs.error();
      uint64_t last_indexed = 0;
      for (const auto& sg : *segs) last_indexed = std::max(last_indexed, sg.number);
      ProblemCallback cb = [&](const Problem& p) {
        problems.push_back(p);
        if (on_problem) on_problem(p);
      };
      if (auto s = resync(**idx, dir, true, {}, cb, found); !s) return s.error();
      for (Damage& x : classify(problems, CloseState::kUnclean, last_indexed))
        rep.repaired.push_back(std::move(x));
    }
    if (!rep.reindexed) rep.state = found.state;
    rep.chunks_checked = found.chunks_checked;
    rep.chunks_added = found.chunks_added;
    rep.chunks_dropped = found.chunks_dropped;
    rep.bytes_cut = found.bytes_cut;
    rep.records_cut = found.records_cut;
    rep.problems = found.problems;
    rep.saved_files = found.saved_files;
    (void)(*idx)->exec("PRAGMA journal_mode=DELETE");  // at rest without -wal/-shm files
  }
  // Damage that a clean close does not explain: every chunk read.
  auto d = diagnose_impl(dir, true, true);
  if (!d) return d.error();
  bool rebuild = false;
  for (const Damage& x : d->damages) {
    if (x.kind == Damage::Kind::kUnclean) continue;
    rebuild = true;
    rep.repaired.push_back(x);
    rep.records_cut += x.records;
  }
  if (rebuild) {
    if (auto s = repair_files(dir, d->damages, rep); !s) return s.error();
    auto r = reindex_locked(dir, on_problem);
    if (!r) return r.error();
    rep.reindexed = true;
  }
  if (!rep.repaired.empty()) {  // kept in the index: info and verify say what was repaired
    auto idx = Index::open(ipath, Index::Mode::kReadWrite);
    if (!idx) return idx.error();
    std::string all = (*idx)->meta("repaired").value_or("") + encode_repairs(rep.repaired);
    if (auto s = (*idx)->begin(); !s) return s.error();
    if (auto s = (*idx)->set_meta("repaired", all); !s) return s.error();
    if (auto s = (*idx)->commit(); !s) return s.error();
    (void)(*idx)->exec("PRAGMA journal_mode=DELETE");
  }
  return rep;
}

}  // namespace storage
