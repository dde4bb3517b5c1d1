// What the SQLite index (index.sqlite3) knows about a recording, as plain structs. The index
// itself is private (src/sqlite_index.hpp); Recording hands these out.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "storage/records.hpp"

namespace storage {

// Statistics of one topic over the whole recording.
struct TopicInfo {
  TopicId id = 0;
  TopicDef def;
  uint64_t count = 0;         // records stored
  uint64_t bytes = 0;         // payload bytes stored
  int64_t first_recv_ns = 0;  // 0 when count == 0
  int64_t last_recv_ns = 0;
  uint64_t lost = 0;  // sequence numbers missing (gaps) over the topic's writers
};

struct WriterInfo {
  WriterId id = 0;
  WriterDef def;
  uint64_t count = 0;
  uint64_t bytes = 0;
  int64_t first_recv_ns = 0;
  int64_t last_recv_ns = 0;
  int64_t min_seq = 0;
  int64_t max_seq = 0;
  uint64_t lost = 0;  // sum of the sizes of this writer's gaps
};

// Per-topic counts of one chunk.
struct ChunkTopicStat {
  TopicId topic = 0;
  uint64_t count = 0;
  uint64_t bytes = 0;
  int64_t first_recv_ns = 0;
  int64_t last_recv_ns = 0;
};

// Per-writer counts and sequence range of one chunk.
struct ChunkWriterStat {
  WriterId writer = 0;
  uint64_t count = 0;
  uint64_t bytes = 0;
  int64_t first_recv_ns = 0;
  int64_t last_recv_ns = 0;
  int64_t min_seq = 0;
  int64_t max_seq = 0;
};

// Where a chunk lives and what it holds.
struct ChunkInfo {
  uint64_t sequence = 0;  // chunk sequence number (unique in the recording)
  uint64_t segment = 0;   // segment number (file segments/NNNNNNNN.seg)
  uint64_t offset = 0;    // offset of the chunk header in the segment file
  uint32_t stored_size = 0;
  uint32_t raw_size = 0;
  uint8_t codec = 0;
  uint32_t record_count = 0;
  uint32_t entry_count = 0;
  int64_t first_recv_ns = 0;
  int64_t last_recv_ns = 0;
  int64_t min_seq = 0;
  int64_t max_seq = 0;
};

struct SegmentInfo {
  uint64_t number = 0;
  int64_t created_ns = 0;
  bool closed = false;  // the writer finished the segment cleanly
  uint64_t chunk_count = 0;
  uint64_t record_count = 0;
  uint64_t end_offset = 0;  // end of the last indexed chunk
  int64_t first_recv_ns = 0;
  int64_t last_recv_ns = 0;
};

}  // namespace storage
