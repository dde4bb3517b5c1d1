#include "segment_file.hpp"

#include <dirent.h>

#include <algorithm>
#include <map>

namespace storage::detail {

std::vector<uint64_t> list_segment_files(const std::string& dir) {
  std::vector<uint64_t> out;
  DIR* d = ::opendir(segments_dir(dir).c_str());
  if (!d) return out;
  while (dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.size() != 12 || name.substr(8) != ".seg") continue;
    if (!std::all_of(name.begin(), name.begin() + 8, [](char c) { return c >= '0' && c <= '9'; }))
      continue;
    out.push_back(std::strtoull(name.substr(0, 8).c_str(), nullptr, 10));
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

Result<format::ChunkHeader> read_chunk(const ByteSource& src, uint64_t offset, Bytes& stored,
                                       Bytes* raw, const format::DecodeLimits& limits) {
  std::byte hb[format::kChunkHeaderSize];
  if (offset + format::kChunkHeaderSize > src.size())
    return Error{ErrorCode::kTruncated, "chunk header past end of segment"};
  if (auto s = src.read_at(offset, hb); !s) return s.error();
  auto h = format::decode_chunk_header(ByteSpan(hb, sizeof hb), limits);
  if (!h) return h.error();
  if (offset + format::kChunkHeaderSize + h->stored_size > src.size())
    return Error{ErrorCode::kTruncated, "chunk body past end of segment"};
  if (offset + format::chunk_span(*h) > src.size())
    return Error{ErrorCode::kTruncated, "chunk padding past end of segment"};
  stored.resize(h->stored_size);
  if (auto s = src.read_at(offset + format::kChunkHeaderSize, stored); !s) return s.error();
  if (raw) {
    if (auto s = format::decode_chunk_body(*h, stored, *raw); !s) return s.error();
  } else if (format::crc32c(stored.data(), stored.size()) != h->body_crc) {
    return Error{ErrorCode::kCorrupt, "chunk body checksum mismatch"};
  }
  return h;
}

Status summarize_chunk(const format::ChunkHeader& h, ByteSpan raw, ChunkRow& row,
                       const format::DecodeLimits& limits) {
  row.topics.clear();
  row.writers.clear();
  row.gaps.clear();
  row.topic_defs.clear();
  row.type_defs.clear();
  row.writer_defs.clear();
  row.marks.clear();
  std::map<TopicId, ChunkTopicStat> topics;
  std::map<WriterId, ChunkWriterStat> writers;
  format::EntryDecoder dec(raw, limits);
  format::Entry e;
  uint32_t records = 0, entries = 0;
  int64_t first = INT64_MAX, last = INT64_MIN, min_seq = INT64_MAX, max_seq = INT64_MIN;
  for (;;) {
    auto more = dec.next(e);
    if (!more) return more.error();
    if (!*more) break;
    ++entries;
    switch (e.kind) {
      case format::EntryKind::kData: {
        const RecordMeta& m = e.record.meta;
        ++records;
        first = std::min(first, m.reception_ns);
        last = std::max(last, m.reception_ns);
        min_seq = std::min(min_seq, m.sequence);
        max_seq = std::max(max_seq, m.sequence);
        auto [ti, tnew] = topics.try_emplace(m.topic);
        auto& t = ti->second;
        if (tnew) t = {m.topic, 0, 0, m.reception_ns, m.reception_ns};
        ++t.count;
        t.bytes += e.record.payload.size();
        t.first_recv_ns = std::min(t.first_recv_ns, m.reception_ns);
        t.last_recv_ns = std::max(t.last_recv_ns, m.reception_ns);
        auto [wi, wnew] = writers.try_emplace(m.writer);
        auto& w = wi->second;
        if (wnew) w = {m.writer, 0, 0, m.reception_ns, m.reception_ns, m.sequence, m.sequence};
        ++w.count;
        w.bytes += e.record.payload.size();
        w.first_recv_ns = std::min(w.first_recv_ns, m.reception_ns);
        w.last_recv_ns = std::max(w.last_recv_ns, m.reception_ns);
        w.min_seq = std::min(w.min_seq, m.sequence);
        w.max_seq = std::max(w.max_seq, m.sequence);
        break;
      }
      case format::EntryKind::kTopic:
        row.topic_defs.emplace_back(e.topic_id, e.topic);
        break;
      case format::EntryKind::kWriter:
      case format::EntryKind::kWriterQos:  // decoded as kWriter
        row.writer_defs.emplace_back(e.writer_id, e.writer);
        break;
      case format::EntryKind::kGap:
        row.gaps.push_back(e.gap);
        break;
      case format::EntryKind::kType:
        row.type_defs.push_back(e.type);
        break;
      case format::EntryKind::kMark:
        row.marks.push_back(e.mark);
        break;
    }
  }
  if (records != h.record_count || entries != h.entry_count)
    return Error{ErrorCode::kCorrupt, "chunk entry counts disagree with its header"};
  if (records == 0) first = last = min_seq = max_seq = 0;
  if (first != h.first_recv_ns || last != h.last_recv_ns)
    return Error{ErrorCode::kCorrupt, "chunk time range disagrees with its header"};
  for (auto& [id, t] : topics) row.topics.push_back(t);
  for (auto& [id, w] : writers) row.writers.push_back(w);
  ChunkInfo& c = row.info;
  c.sequence = h.sequence;
  c.stored_size = h.stored_size;
  c.raw_size = h.raw_size;
  c.codec = static_cast<uint8_t>(h.codec);
  c.record_count = h.record_count;
  c.entry_count = h.entry_count;
  c.first_recv_ns = first;
  c.last_recv_ns = last;
  c.min_seq = min_seq;
  c.max_seq = max_seq;
  return Status{};
}

}  // namespace storage::detail
