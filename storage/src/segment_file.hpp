// Helpers shared by the writer, the reader, recovery and reindex: directory layout, reading one
// chunk from a byte source, and summarising a chunk's entries into an index row. Pure functions;
// no shared state.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "sqlite_index.hpp"
#include "storage/format.hpp"
#include "storage/io.hpp"

namespace storage::detail {

inline std::string index_path(const std::string& dir) {
  return dir + "/index.sqlite3";
}
inline std::string segments_dir(const std::string& dir) {
  return dir + "/segments";
}
// "00000003.seg"
inline std::string segment_name(uint64_t number) {
  char name[32];
  std::snprintf(name, sizeof name, "%08llu.seg", static_cast<unsigned long long>(number));
  return name;
}
inline std::string segment_path(const std::string& dir, uint64_t number) {
  return segments_dir(dir) + "/" + segment_name(number);
}

// Segment numbers of the files in dir/segments, ascending (names that do not parse are skipped).
std::vector<uint64_t> list_segment_files(const std::string& dir);

// Reads the chunk whose header is at `offset`: header, stored body (into `stored`) and, when
// `raw` is non-null, the decoded raw entries (checksum verified). Errors: kTruncated when the
// source ends inside the chunk, kCorrupt for bad magic/checksum/codec data.
Result<format::ChunkHeader> read_chunk(const ByteSource& src, uint64_t offset, Bytes& stored,
                                       Bytes* raw, const format::DecodeLimits& limits = {});

// Decodes all entries of a raw chunk body and fills `row` (topics, writers, gaps, definitions,
// counts). row.info's location fields are left to the caller. Fails on undecodable entries or
// when the counts disagree with the header.
Status summarize_chunk(const format::ChunkHeader& h, ByteSpan raw, ChunkRow& row,
                       const format::DecodeLimits& limits = {});

}  // namespace storage::detail
