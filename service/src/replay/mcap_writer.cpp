// McapWriter - an MCAP file writer (https://mcap.dev/spec, major version 0).
//
// The file it produces, with every offset counted from the first byte of the file:
//
//   Magic "\x89MCAP0\r\n"
//   Header          (profile, library)                               written by the constructor
//   -- data section --
//   Chunk           (start/end log_time, uncompressed_size, uncompressed_crc, "lz4" or "",
//                    compressed_size, records)                       by close_chunk()
//                   "lz4" when LZ4 saves enough, else "" (with a backoff, see the header)
//     records:  [Schema] Channel  ... Message ...  - a channel's record (and its schema's, if
//               any) precede its first message in every chunk that carries its messages
//   MessageIndex    one per channel of the chunk: channel_id, (log_time, offset of the
//                   Message record in the uncompressed records)...  by write_message_indexes()
//   ... more Chunk + MessageIndex groups ...
//   Schema, Channel records never used by a message (so the data section holds every
//                   definition the summary repeats)                  by write_unused_definitions()
//   Metadata        (name, map) per add_metadata() call              by write_metadata()
//   DataEnd         (data_section_crc = CRC-32 of every byte before this record)
//   -- summary section (records grouped by opcode) --                by write_summary()
//   Schema...  Channel...  Statistics  ChunkIndex...  MetadataIndex...
//   -- summary offset section --
//   SummaryOffset   (group_opcode, group_start, group_length) per group above
//   Footer          (summary_start, summary_offset_start, summary_crc = CRC-32 from
//                    summary_start through the Footer's summary_offset_start field)
//   Magic
//
// Records are <opcode u8><content length u64><content>, integers little endian, strings and byte
// fields u32-length-prefixed, maps u32-byte-length-prefixed. CRC-32 is zlib's polynomial,
// computed with libdeflate (carry-less multiplication); chunk compression is the LZ4 frame format.
//
// Calls: the exporter constructs the writer (magic + Header), registers schemas and channels,
// feeds add_message() in log_time order and calls finish(). add_message() is the hot path: it
// appends the record to chunk_ (amortized growth only) and a (log_time, offset) pair to the
// channel's index vector, and brings the chunk's CRC up to date every 64 KiB, while the bytes
// just copied are still in cache; close_chunk() runs when chunk_ reaches options.chunk_size and
// once more from finish(). Everything reaches the stream through emit(), which keeps offset_ and
// the running CRC of the section being written: a chunk stored uncompressed is not read again
// for it - its CRC is folded in with crc32_combine - so that each byte is checksummed once.
#include "mcap_writer.hpp"
#include "mcap_format.hpp"

#include <libdeflate.h>
#include <lz4frame.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <string_view>
#include <utility>

namespace service::replay::detail {

namespace {

using namespace mcap;  // kMagic, Op

constexpr uint64_t kRecordPrefix = 1 + 8;  // opcode + content length

void put_u8(std::vector<uint8_t>& b, uint8_t v) {
  b.push_back(v);
}

template <class T>
void put_le(std::vector<uint8_t>& b, T v) {
  for (size_t i = 0; i < sizeof(T); ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void put_u16(std::vector<uint8_t>& b, uint16_t v) {
  put_le(b, v);
}
void put_u32(std::vector<uint8_t>& b, uint32_t v) {
  put_le(b, v);
}
void put_u64(std::vector<uint8_t>& b, uint64_t v) {
  put_le(b, v);
}

void put_bytes(std::vector<uint8_t>& b, const void* p, size_t n) {
  const auto* bytes = static_cast<const uint8_t*>(p);
  b.insert(b.end(), bytes, bytes + n);
}

// String, or "uint32 length-prefixed Bytes".
void put_str(std::vector<uint8_t>& b, std::string_view s) {
  put_u32(b, static_cast<uint32_t>(s.size()));
  put_bytes(b, s.data(), s.size());
}

// Starts a record: the opcode and a content length patched by end_record(). Returns its position.
size_t begin_record(std::vector<uint8_t>& b, uint8_t op) {
  size_t pos = b.size();
  put_u8(b, op);
  put_u64(b, 0);
  return pos;
}

void end_record(std::vector<uint8_t>& b, size_t pos) {
  uint64_t len = b.size() - pos - kRecordPrefix;
  for (size_t i = 0; i < 8; ++i) b[pos + 1 + i] = static_cast<uint8_t>(len >> (8 * i));
}

void put_schema(std::vector<uint8_t>& b, const McapSchema& s) {
  size_t pos = begin_record(b, kSchema);
  put_u16(b, s.id);
  put_str(b, s.name);
  put_str(b, s.encoding);
  put_str(b, s.data);
  end_record(b, pos);
}

// Map<string, string>: its byte length, then key and value strings.
void put_map(std::vector<uint8_t>& b, const std::map<std::string, std::string>& m) {
  uint64_t map_len = 0;
  for (const auto& [k, v] : m) map_len += 4 + k.size() + 4 + v.size();
  put_u32(b, static_cast<uint32_t>(map_len));
  for (const auto& [k, v] : m) {
    put_str(b, k);
    put_str(b, v);
  }
}

void put_channel(std::vector<uint8_t>& b, const McapChannel& c) {
  size_t pos = begin_record(b, kChannel);
  put_u16(b, c.id);
  put_u16(b, c.schema_id);
  put_str(b, c.topic);
  put_str(b, c.message_encoding);
  put_map(b, c.metadata);
  end_record(b, pos);
}

// CRC-32 (zlib's: reflected 0xEDB88320, pre- and post-inverted) continued over p[0, n).
uint32_t crc_update(uint32_t crc, const uint8_t* p, size_t n) {
  return libdeflate_crc32(crc, p, n);
}

// The CRC-32 of A followed by B, from crc(A), crc(B) and |B| (zlib; O(log |B|)).
uint32_t crc_combine(uint32_t crc_a, uint32_t crc_b, uint64_t len_b) {
  return static_cast<uint32_t>(crc32_combine(crc_a, crc_b, static_cast<z_off_t>(len_b)));
}

// chunk_crc_ is brought up to date once this many bytes were appended since the last update.
constexpr size_t kCrcStep = 64 << 10;

}  // namespace

McapWriter::McapWriter(std::ostream& out, McapWriterOptions o) : out_(out), options_(std::move(o)) {
  chunk_.reserve(static_cast<size_t>(std::min<uint64_t>(options_.chunk_size, 16u << 20)) + 64);
  emit(kMagic);
  scratch_.clear();
  size_t pos = begin_record(scratch_, kHeader);
  put_str(scratch_, options_.profile);
  put_str(scratch_, options_.library);
  end_record(scratch_, pos);
  emit(scratch_);
}

void McapWriter::fail(Errc code, std::string message) {
  if (status_.ok()) status_ = common::make_error(code, "MCAP: " + std::move(message));
}

void McapWriter::emit(std::span<const uint8_t> bytes) {
  if (!status_.ok() || bytes.empty()) return;
  out_.write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
  if (!out_) {
    fail(Errc::kIo, "write failed at offset " + std::to_string(offset_));
    return;
  }
  crc_ = crc_update(crc_, bytes.data(), bytes.size());
  offset_ += bytes.size();
}

void McapWriter::emit(std::span<const uint8_t> bytes, uint32_t bytes_crc) {
  if (!status_.ok() || bytes.empty()) return;
  out_.write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
  if (!out_) {
    fail(Errc::kIo, "write failed at offset " + std::to_string(offset_));
    return;
  }
  crc_ = crc_combine(crc_, bytes_crc, bytes.size());
  offset_ += bytes.size();
}

void McapWriter::update_chunk_crc() {
  chunk_crc_ =
      crc_update(chunk_crc_, chunk_.data() + chunk_crc_end_, chunk_.size() - chunk_crc_end_);
  chunk_crc_end_ = chunk_.size();
}

void McapWriter::add_schema(const McapSchema& schema) {
  if (finished_) return fail(Errc::kInvalidArgument, "add_schema after finish");
  if (schema.id == 0) return fail(Errc::kInvalidArgument, "schema id 0 is reserved");
  auto [it, inserted] = schemas_.try_emplace(schema.id);
  if (inserted) {
    it->second.def = schema;
  } else if (!(it->second.def == schema)) {
    fail(Errc::kInvalidArgument, "two different schemas with id " + std::to_string(schema.id));
  }
}

void McapWriter::add_channel(const McapChannel& channel) {
  if (finished_) return fail(Errc::kInvalidArgument, "add_channel after finish");
  if (channel.schema_id != 0 && schemas_.count(channel.schema_id) == 0) {
    return fail(Errc::kInvalidArgument, "channel " + std::to_string(channel.id) +
                                            " names unknown schema " +
                                            std::to_string(channel.schema_id));
  }
  auto [it, inserted] = channels_.try_emplace(channel.id);
  if (inserted) {
    it->second.def = channel;
  } else if (!(it->second.def == channel)) {
    fail(Errc::kInvalidArgument, "two different channels with id " + std::to_string(channel.id));
  }
}

// The first message of a channel in the open chunk: its schema's record (once per chunk) and its
// own record go into the chunk before the message.
void McapWriter::open_channel_in_chunk(ChannelState& ch) {
  if (ch.def.schema_id != 0) {
    SchemaState& s = schemas_.at(ch.def.schema_id);  // checked by add_channel
    if (s.chunk_written != chunk_number_) {
      put_schema(chunk_, s.def);
      s.chunk_written = chunk_number_;
      s.in_data = true;
    }
  }
  put_channel(chunk_, ch.def);
  ch.chunk_written = chunk_number_;
  ch.in_data = true;
  chunk_channels_.push_back(&ch);
}

void McapWriter::add_message(uint16_t channel, uint32_t sequence, uint64_t log_time,
                             uint64_t publish_time, std::span<const uint8_t> data) {
  if (!status_.ok()) return;
  if (finished_) return fail(Errc::kInvalidArgument, "add_message after finish");
  auto it = channels_.find(channel);
  if (it == channels_.end()) {
    return fail(Errc::kInvalidArgument, "message on unknown channel " + std::to_string(channel));
  }
  ChannelState& ch = it->second;
  if (ch.chunk_written != chunk_number_) open_channel_in_chunk(ch);

  bool first_in_chunk = chunk_messages_ == 0;
  chunk_start_time_ = first_in_chunk ? log_time : std::min(chunk_start_time_, log_time);
  chunk_end_time_ = first_in_chunk ? log_time : std::max(chunk_end_time_, log_time);
  start_time_ = message_count_ == 0 ? log_time : std::min(start_time_, log_time);
  end_time_ = message_count_ == 0 ? log_time : std::max(end_time_, log_time);

  ch.index.push_back(IndexEntry{log_time, chunk_.size()});
  // The record header (opcode, length, channel, sequence, times) in one piece, then the data.
  std::array<uint8_t, kRecordPrefix + 2 + 4 + 8 + 8> head;
  uint8_t* h = head.data();
  auto le = [&h](uint64_t v, size_t n) {
    for (size_t i = 0; i < n; ++i) *h++ = static_cast<uint8_t>(v >> (8 * i));
  };
  le(kMessage, 1);
  le(2 + 4 + 8 + 8 + data.size(), 8);
  le(channel, 2);
  le(sequence, 4);
  le(log_time, 8);
  le(publish_time, 8);
  put_bytes(chunk_, head.data(), head.size());
  put_bytes(chunk_, data.data(), data.size());
  ++ch.message_count;
  ++chunk_messages_;
  ++message_count_;
  if (chunk_.size() - chunk_crc_end_ >= kCrcStep) update_chunk_crc();
  if (chunk_.size() >= options_.chunk_size) close_chunk();
}

// LZ4 of the open chunk into compressed_ (compressed_size_ bytes); false when not tried (backing
// off) or when it does not save options.lz4_min_saving of the chunk (then the backoff grows).
bool McapWriter::compress_chunk() {
  if (!options_.lz4 || chunk_.size() < 64) return false;
  if (lz4_skip_ > 0) {
    --lz4_skip_;
    return false;
  }
  const size_t bound = LZ4F_compressFrameBound(chunk_.size(), nullptr);
  if (compressed_.size() < bound) compressed_.resize(bound);
  const size_t n = LZ4F_compressFrame(compressed_.data(), compressed_.size(), chunk_.data(),
                                      chunk_.size(), nullptr);
  if (LZ4F_isError(n)) {
    fail(Errc::kIo, std::string("LZ4 compression of a chunk failed: ") + LZ4F_getErrorName(n));
    return false;
  }
  if (static_cast<double>(n) >
      static_cast<double>(chunk_.size()) * (1.0 - options_.lz4_min_saving)) {
    lz4_backoff_ = std::min<uint32_t>(lz4_backoff_ == 0 ? 1 : lz4_backoff_ * 2, 64);
    lz4_skip_ = lz4_backoff_;
    return false;
  }
  lz4_backoff_ = 0;
  compressed_size_ = n;
  return true;
}

// Compresses and writes the open chunk and its Message Index records; a chunk without messages
// is not written.
void McapWriter::close_chunk() {
  if (chunk_messages_ == 0 || !status_.ok()) return;
  update_chunk_crc();
  const uint32_t crc = chunk_crc_;
  const bool lz4 = compress_chunk();
  if (!status_.ok()) return;
  const std::span<const uint8_t> payload =
      lz4 ? std::span<const uint8_t>(compressed_.data(), compressed_size_)
          : std::span<const uint8_t>(chunk_);
  const std::string_view compression = lz4 ? "lz4" : "";

  ChunkInfo info{};
  info.start_time = chunk_start_time_;
  info.end_time = chunk_end_time_;
  info.start_offset = offset_;
  info.compressed_size = payload.size();
  info.uncompressed_size = chunk_.size();
  info.lz4 = lz4;
  scratch_.clear();
  put_u8(scratch_, kChunk);
  put_u64(scratch_, 8 + 8 + 8 + 4 + 4 + compression.size() + 8 + payload.size());
  put_u64(scratch_, chunk_start_time_);
  put_u64(scratch_, chunk_end_time_);
  put_u64(scratch_, chunk_.size());
  put_u32(scratch_, crc);
  put_str(scratch_, compression);
  put_u64(scratch_, payload.size());
  emit(scratch_);
  if (lz4) {
    emit(payload);
  } else {
    emit(payload, crc);  // the records as they are: their CRC is known
  }
  info.length = offset_ - info.start_offset;
  write_message_indexes(info);
  chunks_.push_back(std::move(info));

  chunk_.clear();
  chunk_crc_ = 0;
  chunk_crc_end_ = 0;
  chunk_channels_.clear();
  chunk_messages_ = 0;
  ++chunk_number_;
}

// One Message Index record per channel of the chunk just written, in first-use order.
void McapWriter::write_message_indexes(ChunkInfo& info) {
  const uint64_t start = offset_;
  info.message_index_offsets.reserve(chunk_channels_.size());
  for (ChannelState* ch : chunk_channels_) {
    scratch_.clear();
    size_t pos = begin_record(scratch_, kMessageIndex);
    put_u16(scratch_, ch->def.id);
    put_u32(scratch_, static_cast<uint32_t>(ch->index.size() * 16));
    for (const IndexEntry& e : ch->index) {
      put_u64(scratch_, e.log_time);
      put_u64(scratch_, e.offset);
    }
    end_record(scratch_, pos);
    info.message_index_offsets.emplace_back(ch->def.id, offset_);
    emit(scratch_);
    ch->index.clear();
  }
  info.message_index_length = offset_ - start;
}

// Schemas and channels no message used go into the data section too, outside chunks, so that
// the summary's copies duplicate records of the data section (schemas first: a channel's schema
// must come before it).
void McapWriter::write_metadata() {
  for (MetadataState& m : metadata_) {
    scratch_.clear();
    size_t pos = begin_record(scratch_, kMetadata);
    put_str(scratch_, m.name);
    put_map(scratch_, m.map);
    end_record(scratch_, pos);
    m.offset = offset_;
    m.length = scratch_.size();
    emit(scratch_);
  }
}

void McapWriter::write_unused_definitions() {
  scratch_.clear();
  for (auto& [id, s] : schemas_) {
    if (!s.in_data) put_schema(scratch_, s.def);
    s.in_data = true;
  }
  for (auto& [id, c] : channels_) {
    if (!c.in_data) put_channel(scratch_, c.def);
    c.in_data = true;
  }
  emit(scratch_);
}

Status McapWriter::finish() {
  if (finished_) {
    fail(Errc::kInvalidArgument, "finish called twice");
    return status_;
  }
  close_chunk();
  write_unused_definitions();
  write_metadata();
  const uint32_t data_section_crc = crc_;
  scratch_.clear();
  size_t pos = begin_record(scratch_, kDataEnd);
  put_u32(scratch_, data_section_crc);
  end_record(scratch_, pos);
  emit(scratch_);
  write_summary();
  emit(kMagic);
  finished_ = true;
  if (status_.ok() && !out_.flush()) fail(Errc::kIo, "flush failed");
  return status_;
}

void McapWriter::put_statistics(std::vector<uint8_t>& b) const {
  size_t pos = begin_record(b, kStatistics);
  put_u64(b, message_count_);
  put_u16(b, static_cast<uint16_t>(schemas_.size()));
  put_u32(b, static_cast<uint32_t>(channels_.size()));
  put_u32(b, 0);  // attachment_count
  put_u32(b, static_cast<uint32_t>(metadata_.size()));
  put_u32(b, static_cast<uint32_t>(chunks_.size()));
  put_u64(b, start_time_);
  put_u64(b, end_time_);
  size_t counted = 0;
  for (const auto& [id, c] : channels_) counted += c.message_count != 0 ? 1 : 0;
  put_u32(b, static_cast<uint32_t>(counted * (2 + 8)));
  for (const auto& [id, c] : channels_) {
    if (c.message_count == 0) continue;
    put_u16(b, id);
    put_u64(b, c.message_count);
  }
  end_record(b, pos);
}

void McapWriter::put_chunk_index(std::vector<uint8_t>& b, const ChunkInfo& info) const {
  size_t pos = begin_record(b, kChunkIndex);
  put_u64(b, info.start_time);
  put_u64(b, info.end_time);
  put_u64(b, info.start_offset);
  put_u64(b, info.length);
  put_u32(b, static_cast<uint32_t>(info.message_index_offsets.size() * (2 + 8)));
  for (const auto& [channel, offset] : info.message_index_offsets) {
    put_u16(b, channel);
    put_u64(b, offset);
  }
  put_u64(b, info.message_index_length);
  put_str(b, info.lz4 ? "lz4" : "");
  put_u64(b, info.compressed_size);
  put_u64(b, info.uncompressed_size);
  end_record(b, pos);
}

// The summary section, grouped by opcode (Schema, Channel, Statistics, Chunk Index), then one
// Summary Offset record per group, then the Footer.
void McapWriter::write_summary() {
  crc_ = 0;  // summary_crc starts at summary_start
  const uint64_t summary_start = offset_;
  struct Group {
    uint8_t op;
    uint64_t start, length;
  };
  std::vector<Group> groups;
  auto flush_group = [&](uint8_t op) {
    if (scratch_.empty()) return;
    groups.push_back(Group{op, offset_, scratch_.size()});
    emit(scratch_);
    scratch_.clear();
  };
  scratch_.clear();
  for (const auto& [id, s] : schemas_) put_schema(scratch_, s.def);
  flush_group(kSchema);
  for (const auto& [id, c] : channels_) put_channel(scratch_, c.def);
  flush_group(kChannel);
  put_statistics(scratch_);
  flush_group(kStatistics);
  for (const ChunkInfo& info : chunks_) put_chunk_index(scratch_, info);
  flush_group(kChunkIndex);
  for (const MetadataState& m : metadata_) {
    size_t pos = begin_record(scratch_, kMetadataIndex);
    put_u64(scratch_, m.offset);
    put_u64(scratch_, m.length);
    put_str(scratch_, m.name);
    end_record(scratch_, pos);
  }
  flush_group(kMetadataIndex);

  const uint64_t summary_offset_start = offset_;
  for (const Group& g : groups) {
    size_t pos = begin_record(scratch_, kSummaryOffset);
    put_u8(scratch_, g.op);
    put_u64(scratch_, g.start);
    put_u64(scratch_, g.length);
    end_record(scratch_, pos);
  }
  emit(scratch_);
  write_footer(summary_start, summary_offset_start);
}

// summary_crc covers summary_start up to and including the Footer's summary_offset_start field.
void McapWriter::write_footer(uint64_t summary_start, uint64_t summary_offset_start) {
  scratch_.clear();
  put_u8(scratch_, kFooter);
  put_u64(scratch_, 8 + 8 + 4);
  put_u64(scratch_, summary_start);
  put_u64(scratch_, summary_offset_start);
  put_u32(scratch_, crc_update(crc_, scratch_.data(), scratch_.size()));
  emit(scratch_);
}

}  // namespace service::replay::detail
