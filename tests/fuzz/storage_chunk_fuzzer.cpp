// libFuzzer target over the storage decoders (untrusted bytes from segment files). The first
// input byte selects what the rest is:
//   0: one chunk (64-byte header + body; body checksum not enforced so mutations reach the LZ4
//      and entry decoders), decoded and summarised like reindex does
//   1: a raw entry stream (records, definitions, gaps)
//   2: a whole segment file, walked chunk by chunk like recovery does
// Every decoded payload byte is read, so an out-of-bounds view shows up under ASan. Invariant
// beyond "no crash": every entry stream that decodes is written again with the format's encoders
// and must decode to the same entries (an encoder that writes what its decoder reads differently
// aborts), and a chunk header that decodes encodes back to the same bytes.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "segment_file.hpp"
#include "storage/format.hpp"
#include "storage/io.hpp"

using namespace storage;

namespace {

format::DecodeLimits limits() {
  format::DecodeLimits l;
  l.max_raw_chunk_bytes = 4u << 20;
  l.max_record_bytes = 4u << 20;
  return l;
}

volatile uint64_t sink;

void check(bool ok) {
  if (!ok) std::abort();
}

// An entry with its payload copied (the decoder's views die with its input).
struct Owned {
  format::EntryKind kind;
  RecordMeta meta;
  Bytes payload;
  TopicId topic_id;
  TopicDef topic;
  WriterId writer_id;
  WriterDef writer;
  Gap gap;
  TypeDef type;
  Mark mark;
};

bool same(const RecordMeta& a, const RecordMeta& b) {
  return a.topic == b.topic && a.writer == b.writer && a.sequence == b.sequence &&
         a.source_ns == b.source_ns && a.reception_ns == b.reception_ns && a.flags == b.flags &&
         a.has_key_hash == b.has_key_hash && (!a.has_key_hash || a.key_hash == b.key_hash);
}

bool same(const Owned& a, const format::Entry& b) {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case format::EntryKind::kData:
      return same(a.meta, b.record.meta) && a.payload.size() == b.record.payload.size() &&
             std::equal(a.payload.begin(), a.payload.end(), b.record.payload.begin());
    case format::EntryKind::kTopic:
      return a.topic_id == b.topic_id && a.topic.name == b.topic.name &&
             a.topic.type_name == b.topic.type_name && a.topic.keyed == b.topic.keyed &&
             a.topic.qos == b.topic.qos && a.topic.type_info == b.topic.type_info;
    case format::EntryKind::kWriter:
    case format::EntryKind::kWriterQos:  // decoded as kWriter
      return a.writer_id == b.writer_id && a.writer.topic == b.writer.topic &&
             a.writer.guid == b.writer.guid && a.writer.qos == b.writer.qos;
    case format::EntryKind::kGap:
      return a.gap.writer == b.gap.writer && a.gap.first_missing == b.gap.first_missing &&
             a.gap.last_missing == b.gap.last_missing;
    case format::EntryKind::kType:
      return a.type.type_name == b.type.type_name && a.type.source == b.type.source &&
             a.type.idl == b.type.idl && a.type.type_object == b.type.type_object;
    case format::EntryKind::kMark:
      return a.mark == b.mark;
  }
  return false;
}

// Appends `e` to `out` with the format's encoders.
void encode(const format::Entry& e, Bytes& out, format::DeltaState& st) {
  switch (e.kind) {
    case format::EntryKind::kData: {
      const size_t at = out.size();
      out.resize(at + format::kMaxRecordOverhead + e.record.payload.size());
      auto* base = reinterpret_cast<uint8_t*>(out.data());
      const uint8_t* end =
          format::encode_data_record(base + at, e.record.meta, e.record.payload, st);
      out.resize(static_cast<size_t>(end - base));
      break;
    }
    case format::EntryKind::kTopic:
      format::append_topic_entry(out, e.topic_id, e.topic);
      break;
    case format::EntryKind::kWriter:
    case format::EntryKind::kWriterQos:
      format::append_writer_entry(out, e.writer_id, e.writer);
      break;
    case format::EntryKind::kGap:
      format::append_gap_entry(out, e.gap);
      break;
    case format::EntryKind::kType:
      format::append_type_entry(out, e.type);
      break;
    case format::EntryKind::kMark:
      format::append_mark_entry(out, e.mark);
      break;
  }
}

// Decodes `raw` as far as it goes, re-encodes what decoded and checks it decodes the same.
void round_trip(ByteSpan raw) {
  format::EntryDecoder dec(raw, limits());
  format::Entry e;
  std::vector<Owned> first;
  Bytes again;
  format::DeltaState st;
  for (int guard = 0; guard < 100000; ++guard) {
    auto more = dec.next(e);
    if (!more.ok() || !*more) break;
    encode(e, again, st);
    first.push_back({e.kind, e.record.meta, Bytes(e.record.payload.begin(), e.record.payload.end()),
                     e.topic_id, e.topic, e.writer_id, e.writer, e.gap, e.type, e.mark});
  }
  format::EntryDecoder dec2(again, limits());
  for (const Owned& o : first) {
    auto more = dec2.next(e);
    check(more.ok() && *more && same(o, e));
  }
  auto end = dec2.next(e);
  check(end.ok() && !*end);
}

void walk_entries(ByteSpan raw) {
  format::EntryDecoder dec(raw, limits());
  format::Entry e;
  uint64_t acc = 0;
  for (int guard = 0; guard < 1000000; ++guard) {
    auto more = dec.next(e);
    if (!more.ok() || !*more) break;
    if (e.kind == format::EntryKind::kData) {
      for (std::byte b : e.record.payload) acc += static_cast<uint8_t>(b);
      acc += static_cast<uint64_t>(e.record.meta.sequence);
    } else if (e.kind == format::EntryKind::kTopic) {
      acc += e.topic.name.size() + e.topic.qos.size() + e.topic.type_info.size();
    }
  }
  sink = acc;
  round_trip(raw);
}

void one_chunk(ByteSpan in) {
  auto h = format::decode_chunk_header(in, limits());
  if (!h.ok()) return;
  // The header's fields survive encode(decode(x)): a decoder that accepts and an encoder that
  // writes the same layout.
  uint8_t again[format::kChunkHeaderSize];
  format::encode_chunk_header(*h, again);
  auto h2 = format::decode_chunk_header(
      ByteSpan(reinterpret_cast<const std::byte*>(again), sizeof again), limits());
  check(h2.ok() && h2->sequence == h->sequence && h2->stored_size == h->stored_size &&
        h2->raw_size == h->raw_size && h2->record_count == h->record_count &&
        h2->entry_count == h->entry_count && h2->first_recv_ns == h->first_recv_ns &&
        h2->last_recv_ns == h->last_recv_ns && h2->codec == h->codec && h2->flags == h->flags &&
        h2->body_crc == h->body_crc);
  Bytes raw;
  if (!format::decode_chunk_body(*h, in.subspan(format::kChunkHeaderSize), raw, false).ok()) return;
  walk_entries(raw);
  detail::ChunkRow row;
  (void)detail::summarize_chunk(*h, raw, row, limits());
}

void segment(ByteSpan in) {
  MemoryBuffer buf;
  const ByteSpan parts[] = {in};
  (void)buf.write(parts);
  (void)format::decode_segment_header(in);
  Bytes stored, raw;
  detail::ChunkRow row;
  uint64_t pos = format::kSegmentHeaderSize;
  for (int guard = 0; guard < 100000 && pos < buf.size(); ++guard) {
    auto h = detail::read_chunk(buf, pos, stored, &raw, limits());
    if (!h.ok()) break;
    if (detail::summarize_chunk(*h, raw, row, limits()).ok()) walk_entries(raw);
    pos += format::chunk_span(*h);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const ByteSpan in(reinterpret_cast<const std::byte*>(data + 1), size - 1);
  switch (data[0] % 3) {
    case 0:
      one_chunk(in);
      break;
    case 1:
      walk_entries(in);
      break;
    case 2:
      segment(in);
      break;
  }
  return 0;
}
