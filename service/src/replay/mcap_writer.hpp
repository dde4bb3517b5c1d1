// McapWriter: writes an MCAP file (https://mcap.dev/spec, major version 0, magic "\x89MCAP0\r\n")
// to a std::ostream, with messages in Chunk records (LZ4 frame compressed or uncompressed),
// Message Index records after every chunk, and a summary section (Schema, Channel, Statistics,
// Chunk Index records) with Summary Offset records. Private to service/src/replay; one thread.
//
// Compression is decided per chunk: with options.lz4 a chunk is stored "lz4" only when LZ4 saves
// at least options.lz4_min_saving of it, else uncompressed (""), and after such a chunk the next
// 1, 2, 4 ... 64 chunks are stored "" without trying (reset by the next chunk that compresses),
// as storage does. Every chunk carries its CRC-32, DataEnd the data section's, the Footer the
// summary's.
//
// Usage: construct (writes the magic and Header), add_schema / add_channel, add_message in the
// order the messages are to appear (log_time order is the caller's job), then finish(). A writer
// that is destroyed without finish() leaves a file without summary and Footer (not valid MCAP).
// Misuse (an unknown channel, a schema id of 0, a channel naming an unknown schema, two
// different definitions under one id, a call after finish) and stream failures are sticky: later
// calls do nothing and finish() reports the first error.
#pragma once

#include <cstdint>
#include <map>
#include <ostream>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "common/expected.hpp"
#include "service/result.hpp"

namespace service::replay::detail {

struct McapSchema {
  uint16_t id = 0;  // >= 1
  std::string name;
  std::string encoding;
  std::string data;
  bool operator==(const McapSchema&) const = default;
};

struct McapChannel {
  uint16_t id = 0;
  uint16_t schema_id = 0;  // 0 = no schema
  std::string topic;
  std::string message_encoding;
  std::map<std::string, std::string> metadata;
  bool operator==(const McapChannel&) const = default;
};

struct McapWriterOptions {
  uint64_t chunk_size = 4 << 20;  // uncompressed bytes per chunk before it is closed
  bool lz4 = true;  // try chunk compression "lz4" (LZ4 frame format); else every chunk ""
  double lz4_min_saving = 0.02;  // LZ4 output above (1 - this) x input: the chunk is stored ""
  std::string profile;           // Header.profile ("" for DDS/CDR)
  std::string library = "pubsub-replay";
};

class McapWriter {
 public:
  // Writes the magic and the Header record at once.
  explicit McapWriter(std::ostream& out, McapWriterOptions o = {});
  McapWriter(const McapWriter&) = delete;
  McapWriter& operator=(const McapWriter&) = delete;

  // Registers a schema. Its record goes into every chunk that carries a message of a channel
  // using it (before that channel's record), and into the summary. An identical re-add is a no-op.
  void add_schema(const McapSchema& schema);
  // Registers a channel (its schema, if not 0, must have been added). Its record goes into
  // every chunk that carries one of its messages (before the first one), and into the summary.
  void add_channel(const McapChannel& channel);
  // A Metadata record (name, key-value map), written by finish() at the end of the data section
  // and indexed in the summary (Metadata Index).
  void add_metadata(std::string name, std::map<std::string, std::string> map) {
    metadata_.push_back({std::move(name), std::move(map)});
  }
  // Appends a Message record to the open chunk; closes the chunk once its uncompressed records
  // reach options.chunk_size. Times are nanoseconds.
  void add_message(uint16_t channel, uint32_t sequence, uint64_t log_time, uint64_t publish_time,
                   std::span<const uint8_t> data);
  // Closes the last chunk, writes DataEnd, the summary, the Summary Offset records, the Footer
  // and the closing magic, and flushes. Errors: kInvalidArgument for misuse (see above), kIo when
  // the stream failed (or, never expected, LZ4 compression failed).
  Status finish();

  // Messages added so far: in all, on one channel; the lowest and highest log_time (0 before
  // the first message).
  uint64_t message_count() const { return message_count_; }
  uint64_t message_count(uint16_t channel) const {
    auto it = channels_.find(channel);
    return it == channels_.end() ? 0 : it->second.message_count;
  }
  uint64_t start_time() const { return start_time_; }
  uint64_t end_time() const { return end_time_; }
  // Bytes handed to the stream so far (the file offset of the next record).
  uint64_t bytes_written() const { return offset_; }

 private:
  struct IndexEntry {
    uint64_t log_time;
    uint64_t offset;  // of the Message record in the uncompressed chunk records
  };
  struct SchemaState {
    McapSchema def;
    uint64_t chunk_written = 0;  // number (1-based) of the last chunk that holds its record
    bool in_data = false;        // its record is somewhere in the data section
  };
  struct ChannelState {
    McapChannel def;
    uint64_t chunk_written = 0;
    bool in_data = false;
    uint64_t message_count = 0;
    std::vector<IndexEntry> index;  // this channel's messages in the open chunk
  };
  struct ChunkInfo {  // what the Chunk Index record of a closed chunk needs
    uint64_t start_time, end_time, start_offset, length;
    std::vector<std::pair<uint16_t, uint64_t>> message_index_offsets;
    uint64_t message_index_length, compressed_size, uncompressed_size;
    bool lz4;
  };

  void fail(Errc code, std::string message);
  void emit(std::span<const uint8_t> bytes);  // to the stream; advances offset_ and crc_
  void emit(std::span<const uint8_t> bytes, uint32_t bytes_crc);  // same, CRC-32 of bytes known
  void update_chunk_crc();  // chunk_crc_ over chunk_[chunk_crc_end_, end)
  bool compress_chunk();    // LZ4 of chunk_ into compressed_ when it saves enough (see top)
  void open_channel_in_chunk(ChannelState& ch);
  void close_chunk();
  void write_message_indexes(ChunkInfo& info);
  void write_unused_definitions();
  void write_metadata();
  void put_statistics(std::vector<uint8_t>& b) const;
  void put_chunk_index(std::vector<uint8_t>& b, const ChunkInfo& info) const;
  void write_summary();
  void write_footer(uint64_t summary_start, uint64_t summary_offset_start);

  std::ostream& out_;
  McapWriterOptions options_;
  Status status_;
  bool finished_ = false;
  uint64_t offset_ = 0;
  uint32_t crc_ = 0;  // running CRC-32 of the section being written (data, then summary)

  std::map<uint16_t, SchemaState> schemas_;
  std::map<uint16_t, ChannelState> channels_;

  // The open chunk.
  uint64_t chunk_number_ = 1;
  std::vector<uint8_t> chunk_;  // uncompressed records
  uint32_t chunk_crc_ = 0;      // CRC-32 of chunk_[0, chunk_crc_end_), kept up while the bytes
  size_t chunk_crc_end_ = 0;    // are still in cache
  uint32_t lz4_skip_ = 0;       // chunks still to store "" without trying LZ4
  uint32_t lz4_backoff_ = 0;    // the last skip (0 after a chunk LZ4 shrank)
  std::vector<ChannelState*> chunk_channels_;  // channels with messages, in first-use order
  uint64_t chunk_messages_ = 0;
  uint64_t chunk_start_time_ = 0, chunk_end_time_ = 0;
  std::vector<uint8_t> compressed_;  // reused compression output
  size_t compressed_size_ = 0;       // of the last compress_chunk() that succeeded
  std::vector<uint8_t> scratch_;     // reused record header / small record buffer

  // Whole file.
  struct MetadataState {
    std::string name;
    std::map<std::string, std::string> map;
    uint64_t offset = 0, length = 0;  // of its record, once written
  };
  std::vector<MetadataState> metadata_;
  std::vector<ChunkInfo> chunks_;
  uint64_t message_count_ = 0;
  uint64_t start_time_ = 0, end_time_ = 0;
};

}  // namespace service::replay::detail
