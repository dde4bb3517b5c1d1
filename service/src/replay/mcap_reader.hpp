// McapReader: reads an MCAP file (https://mcap.dev/spec, major version 0) front to back - the
// data section only, record by record - and hands its Header, Schemas, Channels, Messages and
// Metadata to a visitor in file order. The input is untrusted (a file someone hands us): every
// length is checked against what is left, chunks are decompressed (lz4 frame, zstd, or stored
// "") into a buffer of at most options.max_chunk_bytes, and each chunk's CRC-32 is checked when
// it has one. Private to service/src/replay; one thread.
//
// Damage is handled as `verify`/`recover` handle it for our recordings: a chunk whose CRC does
// not match, or that does not decompress or parse, is skipped whole and counted (its messages
// are not delivered); a file cut short ends the read where the cut is, with everything before
// it delivered (McapReadResult::truncated). A chunk compressed with an unknown algorithm is
// refused by name (kUnsupported), as is a file that does not start with the MCAP magic
// (kInvalidArgument). The summary section is not read (it repeats the data section).
#pragma once

#include <cstdint>
#include <istream>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "mcap_writer.hpp"
#include "service/result.hpp"

namespace service::replay::detail {

struct McapMessage {
  uint16_t channel = 0;
  uint32_t sequence = 0;
  uint64_t log_time = 0;
  uint64_t publish_time = 0;
  std::span<const uint8_t> data;  // valid during the visitor's call only
};

class McapVisitor {
 public:
  virtual ~McapVisitor() = default;
  virtual void header(const std::string& profile, const std::string& library) {
    (void)profile;
    (void)library;
  }
  virtual void schema(const McapSchema& s) { (void)s; }
  virtual void channel(const McapChannel& c) { (void)c; }
  // An error stops the read and is returned by read().
  virtual Status message(const McapMessage& m) = 0;
  virtual void metadata(const std::string& name, const std::map<std::string, std::string>& map) {
    (void)name;
    (void)map;
  }
};

struct McapReadOptions {
  uint64_t max_chunk_bytes = 1ull << 30;   // uncompressed; a larger chunk is damaged
  uint64_t max_record_bytes = 1ull << 30;  // a record outside chunks
};

struct McapReadResult {
  std::string profile;
  uint64_t messages = 0;   // delivered
  uint64_t chunks = 0;     // read whole
  uint64_t damaged = 0;    // chunks skipped (CRC, decompression, records that do not parse)
  bool truncated = false;  // the file ends inside a record, or before DataEnd
  uint64_t bytes = 0;      // of the file read (where a truncated one ends)
  std::vector<std::string> problems;  // one line per damaged chunk or cut, with its offset
};

class McapReader {
 public:
  explicit McapReader(McapReadOptions o = {}) : options_(o) {}
  // Reads `in` (positioned at the file's start) to its DataEnd record, its Footer or its end.
  Result<McapReadResult> read(std::istream& in, McapVisitor& v);

 private:
  Status read_chunk(std::span<const uint8_t> content, uint64_t offset, McapVisitor& v,
                    McapReadResult& r);
  // A chunk's records, or one record's content: parsed, and handed to `v` when `deliver`;
  // `ok` false when they do not parse. An error only from the visitor.
  Status records(std::span<const uint8_t> bytes, bool deliver, McapVisitor& v, McapReadResult& r,
                 bool& ok);
  Status record(uint8_t op, std::span<const uint8_t> content, bool deliver, McapVisitor& v,
                McapReadResult& r, bool& ok);

  McapReadOptions options_;
  std::vector<uint8_t> record_;  // the record being read (content)
  std::vector<uint8_t> chunk_;   // a chunk's records, decompressed
};

}  // namespace service::replay::detail
