// On-disk format of a recording (this file is its reference), as pure functions over
// byte spans. Nothing here touches files or threads; the writer, the reader, recovery, reindex and
// the fuzz target all go through these functions. Decoding never trusts a length: every count,
// size and varint is checked against the input and against DecodeLimits before use.
//
// All integers are little-endian.
//
// Segment file  = SegmentHeader (48 B) + Chunk*
// SegmentHeader = magic "PSRECSEG" (8) | version u32 | crc32c u32 (of the 48 bytes with this
//                 field zeroed) | recording id (16) | segment number u64 | created_ns i64
// Chunk         = ChunkHeader (64 B) + body (stored_size bytes) + padding (zero bytes)
// ChunkHeader   = magic "PSCK" u32 | header crc32c u32 (of the 64 bytes with this field zeroed) |
//                 chunk sequence u64 | stored_size u32 | raw_size u32 | record_count u32 (data
//                 records) | entry_count u32 (all entries) | first_recv_ns i64 | last_recv_ns i64
//                 (min and max over the data records; 0 when there are none) | codec u8 |
//                 flags u8 | padding u16 | body crc32c u32 (of the stored body) | reserved (8)
// Versions: 2 (written since direct I/O) lets a chunk be followed by `padding` zero bytes, so
// that the next chunk starts at a multiple of kDirectAlignment in the file (a chunk written with
// O_DIRECT must start, end and sit in memory at such a multiple). Version 1 wrote 0 there
// (reserved); readers take both.
// Body          = the raw entries, or their LZ4 block (codec 1) when that saves >= ~2%.
// Entry         = kind byte (low nibble: 0 data, 1 topic definition, 2 writer definition, 3 gap,
//                 4 type definition (version 3), 5 mark (version 4), 6 writer definition with
//                 its QoS (version 5);
//                 bit 4: data record carries a key hash) followed by, for
//   data:   varint topic | varint writer | svarint (seq - previous seq) |
//           svarint (recv - previous recv) | svarint (source - recv) | varint flags |
//           [16 B key hash] | varint payload length | payload
//           ("previous" = the previous data record of the same chunk, 0 for the first one)
//   topic:  varint id | string name | string type name | u8 keyed | bytes qos | bytes type info
//           (string/bytes = varint length + bytes)
//   writer: varint id | varint topic id | 16 B GUID
//   writer with QoS: varint id | varint topic id | 16 B GUID | bytes qos (written instead of
//           kind 2 when the definition has QoS; decoded into the same Entry::writer)
//   gap:    varint writer | svarint first missing | svarint last missing
//   type:   string type name | u8 source (1 idl, 2 lookup) | string idl | bytes type object
//   mark:   u8 kind (1 tag, 2 pause, 3 resume) | svarint time_ns | string name | string note
// varint = unsigned LEB128 (at most 10 bytes); svarint = zigzag + varint.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

#include "storage/records.hpp"
#include "storage/status.hpp"

namespace storage::format {

// written (3: type definitions, 4: marks, 5: writers' QoS)
inline constexpr uint32_t kFormatVersion = 5;
inline constexpr uint32_t kMinFormatVersion = 1;  // oldest read
// Offsets and sizes of chunks written with direct I/O are multiples of this (the page size, a
// multiple of every block device's logical block size).
inline constexpr size_t kDirectAlignment = 4096;
inline constexpr size_t kSegmentHeaderSize = 48;
inline constexpr size_t kChunkHeaderSize = 64;
inline constexpr char kSegmentMagic[8] = {'P', 'S', 'R', 'E', 'C', 'S', 'E', 'G'};
inline constexpr uint32_t kChunkMagic = 0x4b435350;  // "PSCK"
// Upper bound of the encoded metadata of one data record (kind, ids, varints, key hash, length).
inline constexpr size_t kMaxRecordOverhead = 1 + 5 + 5 + 10 + 10 + 10 + 5 + 16 + 10;

enum class Codec : uint8_t { kRaw = 0, kLz4 = 1 };
enum class EntryKind : uint8_t {
  kData = 0,
  kTopic = 1,
  kWriter = 2,
  kGap = 3,
  kType = 4,
  kMark = 5,
  kWriterQos = 6,  // decoded as kWriter
};
inline constexpr uint8_t kChunkFlagRecvSorted = 1;  // reception times never decrease in the chunk
inline constexpr uint8_t kEntryHasKeyHash = 0x10;

// The chunk writers' (SegmentWriter, SnapshotRing) default LZ4_compress_fast acceleration (1 =
// LZ4's own default; higher is faster, compresses less). On the recorder's chunks of 32-B random
// samples (46-B records) callgrind counted 13.7, 11.2, 8.3, 7.3, 6.3 and 5.7 instructions per byte
// at 1, 2, 4, 8, 16 and 32, saving 47, 46, 35, 32, 32 and 30 %; on compressible chunks (zero
// payloads) every value from 1 to 32 saves the same within 1.5 points at the same speed
// (perf/RESULTS.md, issue 32).
inline constexpr int kDefaultLz4Acceleration = 16;

// When a chunk writer (SegmentWriter, SnapshotRing) tries LZ4: after a chunk that LZ4 could not
// shrink enough (random payloads), the next 1, 2, 4 ... 64 chunks are stored raw without trying;
// a chunk that compresses resets it.
class Lz4Backoff {
 public:
  // Whether to try the next chunk (false: store it raw, one chunk of the backoff spent).
  bool try_next() {
    if (skip_ == 0) return true;
    --skip_;
    return false;
  }
  void failed() {
    backoff_ = backoff_ == 0 ? 1 : (backoff_ < 64 ? backoff_ * 2 : 64);
    skip_ = backoff_;
  }
  void succeeded() { backoff_ = 0; }
  // The next chunk will be stored raw without trying.
  bool skipping() const { return skip_ > 0; }

 private:
  uint32_t skip_ = 0, backoff_ = 0;
};

// Limits applied while decoding untrusted bytes.
struct DecodeLimits {
  uint32_t max_raw_chunk_bytes = 1u << 30;  // largest accepted raw (uncompressed) chunk body
  uint32_t max_record_bytes = 1u << 30;     // largest accepted payload or definition blob
};

struct SegmentHeader {
  uint32_t version = kFormatVersion;
  std::array<uint8_t, 16> recording_id{};
  uint64_t segment_number = 0;
  int64_t created_ns = 0;
};

struct ChunkHeader {
  uint64_t sequence = 0;  // chunk sequence number, increasing through the recording
  uint32_t stored_size = 0;
  uint32_t raw_size = 0;
  uint32_t record_count = 0;
  uint32_t entry_count = 0;
  int64_t first_recv_ns = 0;
  int64_t last_recv_ns = 0;
  Codec codec = Codec::kRaw;
  uint8_t flags = 0;
  uint16_t padding = 0;  // zero bytes after the body (version 2)
  uint32_t body_crc = 0;
};

// Bytes from a chunk's header to the next chunk (or the end of the segment).
inline uint64_t chunk_span(const ChunkHeader& h) {
  return kChunkHeaderSize + uint64_t{h.stored_size} + h.padding;
}

// CRC-32C (Castagnoli) of `size` bytes, continuing from `crc` (the CRC of what came before, 0
// for none): ISA-L's, which uses the CPU's CRC or carry-less multiply instructions.
uint32_t crc32c(const void* data, size_t size, uint32_t crc = 0);

void encode_segment_header(const SegmentHeader& h, uint8_t out[kSegmentHeaderSize]);
Result<SegmentHeader> decode_segment_header(ByteSpan bytes);
void encode_chunk_header(const ChunkHeader& h, uint8_t out[kChunkHeaderSize]);
// Checks magic and header checksum, and that sizes are within limits.
Result<ChunkHeader> decode_chunk_header(ByteSpan bytes, const DecodeLimits& limits = {});
// Verifies the body checksum (when verify_crc) and produces the raw entries in `out` (resized to
// header.raw_size). For a raw chunk `out` receives a copy; use body_is_raw() to avoid it.
Status decode_chunk_body(const ChunkHeader& header, ByteSpan stored, Bytes& out,
                         bool verify_crc = true);

// ---- entry encoding (hot path: inline, memcpy and shifts only) ----

// The varint primitives of the encoders below (not part of the API).
namespace detail {

inline uint8_t* put_varint(uint8_t* p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<uint8_t>(v) | 0x80;
    v >>= 7;
  }
  *p++ = static_cast<uint8_t>(v);
  return p;
}
inline uint64_t zigzag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
inline uint8_t* put_svarint(uint8_t* p, int64_t v) {
  return put_varint(p, zigzag(v));
}

}  // namespace detail

// Running state of the data-record delta encoding within one chunk.
struct DeltaState {
  int64_t prev_seq = 0;
  int64_t prev_recv = 0;
};

// Encodes the metadata of one data record whose payload of `payload_size` bytes the caller writes
// right after the returned pointer. `out` needs room for kMaxRecordOverhead + payload size.
inline uint8_t* encode_data_header(uint8_t* out, const RecordMeta& m, uint64_t payload_size,
                                   DeltaState& st) {
  uint8_t* p = out;
  *p++ = static_cast<uint8_t>(EntryKind::kData) | (m.has_key_hash ? kEntryHasKeyHash : 0);
  p = detail::put_varint(p, m.topic);
  p = detail::put_varint(p, m.writer);
  p = detail::put_svarint(p, static_cast<int64_t>(static_cast<uint64_t>(m.sequence) -
                                                  static_cast<uint64_t>(st.prev_seq)));
  p = detail::put_svarint(p, static_cast<int64_t>(static_cast<uint64_t>(m.reception_ns) -
                                                  static_cast<uint64_t>(st.prev_recv)));
  p = detail::put_svarint(p, static_cast<int64_t>(static_cast<uint64_t>(m.source_ns) -
                                                  static_cast<uint64_t>(m.reception_ns)));
  p = detail::put_varint(p, m.flags);
  if (m.has_key_hash) {
    std::memcpy(p, m.key_hash.data(), 16);
    p += 16;
  }
  p = detail::put_varint(p, payload_size);
  st.prev_seq = m.sequence;
  st.prev_recv = m.reception_ns;
  return p;
}

// Encodes one data record at `out` (room: kMaxRecordOverhead + payload size); returns its end.
inline uint8_t* encode_data_record(uint8_t* out, const RecordMeta& m, ByteSpan payload,
                                   DeltaState& st) {
  uint8_t* p = encode_data_header(out, m, payload.size(), st);
  if (!payload.empty()) std::memcpy(p, payload.data(), payload.size());
  return p + payload.size();
}

// Definition and gap entries (rare; allocate freely).
void append_topic_entry(Bytes& out, TopicId id, const TopicDef& def);
void append_writer_entry(Bytes& out, WriterId id, const WriterDef& def);
void append_gap_entry(Bytes& out, const Gap& gap);
void append_type_entry(Bytes& out, const TypeDef& def);
void append_mark_entry(Bytes& out, const Mark& mark);

// One decoded entry. For kData, `record.payload` points into the decoder's input.
struct Entry {
  EntryKind kind = EntryKind::kData;
  RecordView record;
  TopicId topic_id = 0;    // kTopic
  TopicDef topic;          // kTopic
  WriterId writer_id = 0;  // kWriter
  WriterDef writer;        // kWriter
  Gap gap;                 // kGap
  TypeDef type;            // kType
  Mark mark;               // kMark
};

// Walks the raw entries of one chunk body.
class EntryDecoder {
 public:
  explicit EntryDecoder(ByteSpan raw, const DecodeLimits& limits = {})
      : p_(reinterpret_cast<const uint8_t*>(raw.data())), end_(p_ + raw.size()), limits_(limits) {}
  // Decodes the next entry into `e`. Returns false at the clean end of input; an error status for
  // bad bytes (the decoder then stays at the failing position).
  Result<bool> next(Entry& e);
  size_t remaining() const { return static_cast<size_t>(end_ - p_); }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
  DecodeLimits limits_;
  DeltaState st_;
};

}  // namespace storage::format
