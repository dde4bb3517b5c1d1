// libFuzzer target over the storage decoders (untrusted bytes from segment files). The first
// input byte selects what the rest is:
//   0: one chunk (64-byte header + body; body checksum not enforced so mutations reach the LZ4
//      and entry decoders), decoded and summarised like reindex does
//   1: a raw entry stream (records, definitions, gaps)
//   2: a whole segment file, walked chunk by chunk like recovery does
// Every decoded payload byte is read, so an out-of-bounds view shows up under ASan.
#include <cstddef>
#include <cstdint>
#include <cstring>

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

void walk_entries(ByteSpan raw) {
  format::EntryDecoder dec(raw, limits());
  format::Entry e;
  uint64_t acc = 0;
  for (int guard = 0; guard < 1000000; ++guard) {
    auto more = dec.next(e);
    if (!more.is_ok() || !*more) break;
    if (e.kind == format::EntryKind::kData) {
      for (std::byte b : e.record.payload) acc += static_cast<uint8_t>(b);
      acc += static_cast<uint64_t>(e.record.meta.sequence);
    } else if (e.kind == format::EntryKind::kTopic) {
      acc += e.topic.name.size() + e.topic.qos.size() + e.topic.type_info.size();
    }
  }
  sink = acc;
}

void one_chunk(ByteSpan in) {
  auto h = format::decode_chunk_header(in, limits());
  if (!h.is_ok()) return;
  Bytes raw;
  if (!format::decode_chunk_body(*h, in.subspan(format::kChunkHeaderSize), raw, false).is_ok())
    return;
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
    if (!h.is_ok()) break;
    if (detail::summarize_chunk(*h, raw, row, limits()).is_ok()) walk_entries(raw);
    pos += format::kChunkHeaderSize + h->stored_size;
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
