// SQLite index of a recording (index.sqlite3, WAL mode). OVERVIEW:
// - Owned by exactly one object at a time: the SegmentWriter's background thread (read-write),
//   or a Recording (read-only, or a private in-memory copy when the tail needed recovery).
//   Not thread-safe; the owner serialises all calls.
// - Everything in it can be rebuilt from the segment files (reindex), so it is written with
//   synchronous=NORMAL: a power loss may lose the last transactions, recovery re-adds them.
// - The writer commits one transaction per flush of one or more chunks, never per record.
#pragma once

#include <sqlite3.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "storage/index.hpp"
#include "storage/records.hpp"
#include "storage/status.hpp"

namespace storage::detail {

// Everything the index stores about one chunk.
struct ChunkRow {
  ChunkInfo info;
  std::vector<ChunkTopicStat> topics;
  std::vector<ChunkWriterStat> writers;
  std::vector<Gap> gaps;
  std::vector<std::pair<TopicId, TopicDef>> topic_defs;
  std::vector<std::pair<WriterId, WriterDef>> writer_defs;
  std::vector<TypeDef> type_defs;
  std::vector<Mark> marks;
};

class Stmt;

class Index {
 public:
  enum class Mode { kCreate, kReadWrite, kReadOnly };
  static Result<std::unique_ptr<Index>> open(const std::string& path, Mode mode);
  // A private in-memory copy of the index at `path` (read-only source), writable; used to recover
  // a crashed recording's index without modifying files.
  static Result<std::unique_ptr<Index>> open_memory_copy(const std::string& path);
  ~Index();
  Index(const Index&) = delete;
  Index& operator=(const Index&) = delete;

  Status begin();
  Status commit();
  void rollback();

  Status set_meta(const std::string& key, const std::string& value);
  std::optional<std::string> meta(const std::string& key);
  Status put_topic(TopicId id, const TopicDef& def);
  Status put_writer(WriterId id, const WriterDef& def);
  Status put_type(const TypeDef& def);  // replaces the one of the same name and source
  Status put_segment(uint64_t number, int64_t created_ns);
  Status set_segment_closed(uint64_t number, bool closed);
  Status put_chunk(const ChunkRow& row);  // also its topics, writers, gaps and definitions
  Status delete_chunk(uint64_t sequence);
  Status delete_segment(uint64_t number);  // and all its chunks

  Result<std::vector<SegmentInfo>> segments();
  Result<std::vector<ChunkInfo>> chunks_of_segment(uint64_t number);
  Result<std::vector<ChunkTopicStat>> chunk_topics(uint64_t sequence);
  Result<std::vector<TopicInfo>> topics();
  Result<std::vector<WriterInfo>> writers();
  Result<std::vector<Gap>> gaps();
  Result<std::vector<TypeDef>> types();   // by name, then source; none in a format-1/2 index
  Result<std::vector<Mark>> marks();      // by time; none in an index older than format 4
  Result<uint64_t> max_chunk_sequence();  // 0 when empty
  int64_t max_chunk_span();               // max(last_recv - first_recv) over chunks

  sqlite3* db() { return db_; }
  Status exec(const char* sql);
  Error error(const char* what);

 private:
  // Fills WriterInfo::def.qos from the writer_qos table (absent before format 5).
  Status writer_qos(std::vector<WriterInfo>& writers);
  explicit Index(sqlite3* db) : db_(db) {}
  Status init_schema();
  Stmt& stmt(int which, const char* sql);

  sqlite3* db_;
  std::vector<std::unique_ptr<Stmt>> stmts_;
  int64_t max_span_ = -1;
};

// Thin RAII prepared statement.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql);
  ~Stmt();
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  bool ok() const { return s_ != nullptr; }
  Stmt& reset();
  Stmt& bind(int i, int64_t v);
  Stmt& bind(int i, const std::string& v);
  Stmt& bind_blob(int i, const void* data, size_t n);
  int step();  // SQLITE_ROW, SQLITE_DONE or an error code
  int64_t i64(int col) const { return sqlite3_column_int64(s_, col); }
  bool is_null(int col) const { return sqlite3_column_type(s_, col) == SQLITE_NULL; }
  std::string text(int col) const;
  Bytes blob(int col) const;
  sqlite3_stmt* raw() { return s_; }

 private:
  sqlite3_stmt* s_ = nullptr;
};

}  // namespace storage::detail
