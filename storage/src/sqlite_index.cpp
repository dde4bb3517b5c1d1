// SQLite index implementation; see index.hpp for ownership and threading.
#include "sqlite_index.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace storage::detail {
namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS topics(id INTEGER PRIMARY KEY, name TEXT NOT NULL,
  type_name TEXT NOT NULL, keyed INTEGER NOT NULL, qos BLOB, type_info BLOB);
CREATE TABLE IF NOT EXISTS writers(id INTEGER PRIMARY KEY, topic_id INTEGER NOT NULL,
  guid BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS segments(id INTEGER PRIMARY KEY, created_ns INTEGER NOT NULL,
  closed INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS chunks(id INTEGER PRIMARY KEY, segment_id INTEGER NOT NULL,
  offset INTEGER NOT NULL, stored_size INTEGER NOT NULL, raw_size INTEGER NOT NULL,
  codec INTEGER NOT NULL, record_count INTEGER NOT NULL, entry_count INTEGER NOT NULL,
  first_recv INTEGER NOT NULL, last_recv INTEGER NOT NULL, min_seq INTEGER NOT NULL,
  max_seq INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS chunks_by_time ON chunks(first_recv);
CREATE INDEX IF NOT EXISTS chunks_by_segment ON chunks(segment_id, offset);
CREATE TABLE IF NOT EXISTS chunk_topics(chunk_id INTEGER NOT NULL, topic_id INTEGER NOT NULL,
  count INTEGER NOT NULL, bytes INTEGER NOT NULL, first_recv INTEGER NOT NULL,
  last_recv INTEGER NOT NULL, PRIMARY KEY(chunk_id, topic_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS chunk_writers(chunk_id INTEGER NOT NULL, writer_id INTEGER NOT NULL,
  count INTEGER NOT NULL, bytes INTEGER NOT NULL, first_recv INTEGER NOT NULL,
  last_recv INTEGER NOT NULL, min_seq INTEGER NOT NULL, max_seq INTEGER NOT NULL,
  PRIMARY KEY(chunk_id, writer_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS gaps(chunk_id INTEGER NOT NULL, writer_id INTEGER NOT NULL,
  first_seq INTEGER NOT NULL, last_seq INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS gaps_by_chunk ON gaps(chunk_id);
CREATE TABLE IF NOT EXISTS types(type_name TEXT NOT NULL, source INTEGER NOT NULL,
  idl TEXT NOT NULL, type_object BLOB, PRIMARY KEY(type_name, source)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS marks(chunk_id INTEGER NOT NULL, kind INTEGER NOT NULL,
  time_ns INTEGER NOT NULL, name TEXT NOT NULL, note TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS marks_by_chunk ON marks(chunk_id);
CREATE TABLE IF NOT EXISTS writer_qos(writer_id INTEGER PRIMARY KEY, qos BLOB NOT NULL);
)sql";

enum StmtId {
  kSetMeta,
  kGetMeta,
  kPutTopic,
  kPutWriter,
  kPutWriterQos,
  kPutType,
  kPutSegment,
  kSetClosed,
  kPutChunk,
  kPutChunkTopic,
  kPutChunkWriter,
  kPutGap,
  kPutMark,
  kDelChunkTopics,
  kDelChunkWriters,
  kDelGaps,
  kDelMarks,
  kDelChunk,
  kStmtCount
};

}  // namespace

Stmt::Stmt(sqlite3* db, const char* sql) {
  if (sqlite3_prepare_v2(db, sql, -1, &s_, nullptr) != SQLITE_OK) s_ = nullptr;
}
Stmt::~Stmt() {
  sqlite3_finalize(s_);
}
Stmt& Stmt::reset() {
  sqlite3_reset(s_);
  sqlite3_clear_bindings(s_);
  return *this;
}
Stmt& Stmt::bind(int i, int64_t v) {
  sqlite3_bind_int64(s_, i, v);
  return *this;
}
Stmt& Stmt::bind(int i, const std::string& v) {
  sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  return *this;
}
Stmt& Stmt::bind_blob(int i, const void* data, size_t n) {
  sqlite3_bind_blob(s_, i, n ? data : "", static_cast<int>(n), SQLITE_TRANSIENT);
  return *this;
}
int Stmt::step() {
  return sqlite3_step(s_);
}
std::string Stmt::text(int col) const {
  const auto* t = sqlite3_column_text(s_, col);
  return t ? std::string(reinterpret_cast<const char*>(t),
                         static_cast<size_t>(sqlite3_column_bytes(s_, col)))
           : std::string();
}
Bytes Stmt::blob(int col) const {
  const auto* b = static_cast<const std::byte*>(sqlite3_column_blob(s_, col));
  const int n = sqlite3_column_bytes(s_, col);
  return b ? Bytes(b, b + n) : Bytes();
}

Error Index::error(const char* what) {
  const int rc = sqlite3_extended_errcode(db_);
  const int sys = sqlite3_system_errno(db_);
  std::string msg = std::string(what) + ": " + sqlite3_errmsg(db_);
  if ((rc & 0xff) == SQLITE_FULL || sys == ENOSPC || sys == EDQUOT) {
    return Error{ErrorCode::kNoSpace, msg + " (index.sqlite3: " + std::strerror(ENOSPC) + ")"};
  }
  if (sys != 0) msg += std::string(" (") + std::strerror(sys) + ")";
  return Error{ErrorCode::kIndex, msg};
}

Status Index::exec(const char* sql) {
  if (sqlite3_exec(db_, sql, nullptr, nullptr, nullptr) != SQLITE_OK) return error(sql);
  return Status{};
}

Result<std::unique_ptr<Index>> Index::open(const std::string& path, Mode mode) {
  int flags = SQLITE_OPEN_NOMUTEX;
  if (mode == Mode::kReadOnly) flags |= SQLITE_OPEN_READONLY;
  if (mode == Mode::kReadWrite) flags |= SQLITE_OPEN_READWRITE;
  if (mode == Mode::kCreate) flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = "open " + path + ": " + (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
    sqlite3_close(db);
    return Error{rc == SQLITE_CANTOPEN ? ErrorCode::kNotFound : ErrorCode::kIndex, msg};
  }
  std::unique_ptr<Index> idx(new Index(db));
  sqlite3_busy_timeout(db, 5000);
  if (mode != Mode::kReadOnly) {
    if (auto s = idx->exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"); !s)
      return s.error();
    if (auto s = idx->init_schema(); !s) return s.error();
  } else {
    // Fail early with a clear error when the file is not an index.
    Stmt probe(db, "SELECT value FROM meta WHERE key='format_version'");
    if (!probe.ok()) return idx->error(("open index " + path).c_str());
  }
  return idx;
}

Result<std::unique_ptr<Index>> Index::open_memory_copy(const std::string& path) {
  auto src = open(path, Mode::kReadOnly);
  if (!src) return src.error();
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr) !=
      SQLITE_OK) {
    sqlite3_close(db);
    return Error{ErrorCode::kIndex, "open in-memory index"};
  }
  std::unique_ptr<Index> idx(new Index(db));
  sqlite3_backup* b = sqlite3_backup_init(db, "main", (*src)->db_, "main");
  if (!b) return idx->error("backup index");
  sqlite3_backup_step(b, -1);
  if (sqlite3_backup_finish(b) != SQLITE_OK) return idx->error("backup index");
  if (auto s = idx->init_schema(); !s) return s.error();
  return idx;
}

Index::~Index() {
  stmts_.clear();
  sqlite3_close(db_);
}

Status Index::init_schema() {
  return exec(kSchema);
}

Stmt& Index::stmt(int which, const char* sql) {
  if (stmts_.size() < kStmtCount) stmts_.resize(kStmtCount);
  auto& s = stmts_[static_cast<size_t>(which)];
  if (!s) s = std::make_unique<Stmt>(db_, sql);
  return s->reset();
}

Status Index::begin() {
  return exec("BEGIN IMMEDIATE");
}
Status Index::commit() {
  return exec("COMMIT");
}
void Index::rollback() {
  sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

#define STEP_DONE(st, what) \
  if ((st).step() != SQLITE_DONE) return error(what)

Status Index::set_meta(const std::string& key, const std::string& value) {
  auto& s = stmt(kSetMeta, "INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)");
  s.bind(1, key).bind(2, value);
  STEP_DONE(s, "set meta");
  return Status{};
}

std::optional<std::string> Index::meta(const std::string& key) {
  auto& s = stmt(kGetMeta, "SELECT value FROM meta WHERE key = ?");
  s.bind(1, key);
  if (s.step() != SQLITE_ROW) return std::nullopt;
  std::string value = s.text(0);
  s.reset();  // ends the statement's read transaction (journal_mode cannot change within one)
  return value;
}

Status Index::put_topic(TopicId id, const TopicDef& def) {
  auto& s = stmt(kPutTopic,
                 "INSERT OR IGNORE INTO topics(id, name, type_name, keyed, qos, type_info) "
                 "VALUES(?, ?, ?, ?, ?, ?)");
  s.bind(1, id).bind(2, def.name).bind(3, def.type_name).bind(4, def.keyed ? 1 : 0);
  s.bind_blob(5, def.qos.data(), def.qos.size())
      .bind_blob(6, def.type_info.data(), def.type_info.size());
  STEP_DONE(s, "insert topic");
  return Status{};
}

Status Index::put_writer(WriterId id, const WriterDef& def) {
  auto& s = stmt(kPutWriter, "INSERT OR IGNORE INTO writers(id, topic_id, guid) VALUES(?, ?, ?)");
  s.bind(1, id).bind(2, def.topic).bind_blob(3, def.guid.data(), 16);
  STEP_DONE(s, "insert writer");
  if (def.qos.empty()) return Status{};
  auto& q = stmt(kPutWriterQos, "INSERT OR IGNORE INTO writer_qos(writer_id, qos) VALUES(?, ?)");
  q.bind(1, id).bind_blob(2, def.qos.data(), def.qos.size());
  STEP_DONE(q, "insert writer QoS");
  return Status{};
}

Status Index::put_type(const TypeDef& def) {
  auto& s = stmt(kPutType,
                 "INSERT OR REPLACE INTO types(type_name, source, idl, type_object) "
                 "VALUES(?, ?, ?, ?)");
  s.bind(1, def.type_name).bind(2, static_cast<int64_t>(def.source)).bind(3, def.idl);
  s.bind_blob(4, def.type_object.data(), def.type_object.size());
  STEP_DONE(s, "insert type");
  return Status{};
}

Status Index::put_segment(uint64_t number, int64_t created_ns) {
  auto& s = stmt(kPutSegment, "INSERT OR IGNORE INTO segments(id, created_ns) VALUES(?, ?)");
  s.bind(1, static_cast<int64_t>(number)).bind(2, created_ns);
  STEP_DONE(s, "insert segment");
  return Status{};
}

Status Index::set_segment_closed(uint64_t number, bool closed) {
  auto& s = stmt(kSetClosed, "UPDATE segments SET closed = ? WHERE id = ?");
  s.bind(1, closed ? 1 : 0).bind(2, static_cast<int64_t>(number));
  STEP_DONE(s, "close segment");
  return Status{};
}

Status Index::put_chunk(const ChunkRow& row) {
  for (const auto& [id, def] : row.topic_defs)
    if (auto st = put_topic(id, def); !st) return st;
  for (const auto& [id, def] : row.writer_defs)
    if (auto st = put_writer(id, def); !st) return st;
  for (const TypeDef& def : row.type_defs)
    if (auto st = put_type(def); !st) return st;
  const ChunkInfo& c = row.info;
  auto& s = stmt(kPutChunk,
                 "INSERT OR REPLACE INTO chunks(id, segment_id, offset, stored_size, raw_size, "
                 "codec, record_count, entry_count, first_recv, last_recv, min_seq, max_seq) "
                 "VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  s.bind(1, static_cast<int64_t>(c.sequence)).bind(2, static_cast<int64_t>(c.segment));
  s.bind(3, static_cast<int64_t>(c.offset)).bind(4, c.stored_size).bind(5, c.raw_size);
  s.bind(6, c.codec).bind(7, c.record_count).bind(8, c.entry_count);
  s.bind(9, c.first_recv_ns).bind(10, c.last_recv_ns).bind(11, c.min_seq).bind(12, c.max_seq);
  STEP_DONE(s, "insert chunk");
  if (c.record_count > 0) {
    const int64_t span = c.last_recv_ns - c.first_recv_ns;
    if (span > max_chunk_span()) {
      max_span_ = span;
      if (auto st = set_meta("max_chunk_span_ns", std::to_string(span)); !st) return st;
    }
  }
  for (const auto& t : row.topics) {
    auto& q = stmt(kPutChunkTopic,
                   "INSERT OR REPLACE INTO chunk_topics(chunk_id, topic_id, count, bytes, "
                   "first_recv, last_recv) VALUES(?, ?, ?, ?, ?, ?)");
    q.bind(1, static_cast<int64_t>(c.sequence)).bind(2, t.topic);
    q.bind(3, static_cast<int64_t>(t.count)).bind(4, static_cast<int64_t>(t.bytes));
    q.bind(5, t.first_recv_ns).bind(6, t.last_recv_ns);
    STEP_DONE(q, "insert chunk topic");
  }
  for (const auto& w : row.writers) {
    auto& q = stmt(kPutChunkWriter,
                   "INSERT OR REPLACE INTO chunk_writers(chunk_id, writer_id, count, bytes, "
                   "first_recv, last_recv, min_seq, max_seq) VALUES(?, ?, ?, ?, ?, ?, ?, ?)");
    q.bind(1, static_cast<int64_t>(c.sequence)).bind(2, w.writer);
    q.bind(3, static_cast<int64_t>(w.count)).bind(4, static_cast<int64_t>(w.bytes));
    q.bind(5, w.first_recv_ns).bind(6, w.last_recv_ns).bind(7, w.min_seq).bind(8, w.max_seq);
    STEP_DONE(q, "insert chunk writer");
  }
  for (const auto& g : row.gaps) {
    auto& q = stmt(kPutGap,
                   "INSERT INTO gaps(chunk_id, writer_id, first_seq, last_seq) VALUES(?, ?, ?, ?)");
    q.bind(1, static_cast<int64_t>(c.sequence)).bind(2, g.writer);
    q.bind(3, g.first_missing).bind(4, g.last_missing);
    STEP_DONE(q, "insert gap");
  }
  for (const Mark& mk : row.marks) {
    auto& q = stmt(kPutMark,
                   "INSERT INTO marks(chunk_id, kind, time_ns, name, note) VALUES(?, ?, ?, ?, ?)");
    q.bind(1, static_cast<int64_t>(c.sequence)).bind(2, static_cast<int64_t>(mk.kind));
    q.bind(3, mk.time_ns).bind(4, mk.name).bind(5, mk.note);
    STEP_DONE(q, "insert mark");
  }
  return Status{};
}

Status Index::delete_chunk(uint64_t sequence) {
  const auto id = static_cast<int64_t>(sequence);
  auto& a = stmt(kDelChunkTopics, "DELETE FROM chunk_topics WHERE chunk_id = ?");
  a.bind(1, id);
  STEP_DONE(a, "delete chunk topics");
  auto& b = stmt(kDelChunkWriters, "DELETE FROM chunk_writers WHERE chunk_id = ?");
  b.bind(1, id);
  STEP_DONE(b, "delete chunk writers");
  auto& c = stmt(kDelGaps, "DELETE FROM gaps WHERE chunk_id = ?");
  c.bind(1, id);
  STEP_DONE(c, "delete gaps");
  auto& e = stmt(kDelMarks, "DELETE FROM marks WHERE chunk_id = ?");
  e.bind(1, id);
  STEP_DONE(e, "delete marks");
  auto& d = stmt(kDelChunk, "DELETE FROM chunks WHERE id = ?");
  d.bind(1, id);
  STEP_DONE(d, "delete chunk");
  return Status{};
}

Status Index::delete_segment(uint64_t number) {
  auto chunks = chunks_of_segment(number);
  if (!chunks) return chunks.error();
  for (const auto& c : *chunks)
    if (auto s = delete_chunk(c.sequence); !s) return s;
  Stmt s(db_, "DELETE FROM segments WHERE id = ?");
  s.bind(1, static_cast<int64_t>(number));
  STEP_DONE(s, "delete segment");
  return Status{};
}

Result<std::vector<SegmentInfo>> Index::segments() {
  Stmt s(db_,
         "SELECT s.id, s.created_ns, s.closed, COUNT(c.id), IFNULL(SUM(c.record_count), 0), "
         "IFNULL(MAX(c.offset + 64 + c.stored_size), 48), "
         "IFNULL(MIN(CASE WHEN c.record_count > 0 THEN c.first_recv END), 0), "
         "IFNULL(MAX(CASE WHEN c.record_count > 0 THEN c.last_recv END), 0) "
         "FROM segments s LEFT JOIN chunks c ON c.segment_id = s.id GROUP BY s.id ORDER BY s.id");
  if (!s.ok()) return error("query segments");
  std::vector<SegmentInfo> out;
  int rc;
  while ((rc = s.step()) == SQLITE_ROW) {
    SegmentInfo g;
    g.number = static_cast<uint64_t>(s.i64(0));
    g.created_ns = s.i64(1);
    g.closed = s.i64(2) != 0;
    g.chunk_count = static_cast<uint64_t>(s.i64(3));
    g.record_count = static_cast<uint64_t>(s.i64(4));
    g.end_offset = static_cast<uint64_t>(s.i64(5));
    g.first_recv_ns = s.i64(6);
    g.last_recv_ns = s.i64(7);
    out.push_back(g);
  }
  if (rc != SQLITE_DONE) return error("query segments");
  return out;
}

namespace {
ChunkInfo chunk_from(const Stmt& s, int col) {
  ChunkInfo c;
  c.sequence = static_cast<uint64_t>(s.i64(col + 0));
  c.segment = static_cast<uint64_t>(s.i64(col + 1));
  c.offset = static_cast<uint64_t>(s.i64(col + 2));
  c.stored_size = static_cast<uint32_t>(s.i64(col + 3));
  c.raw_size = static_cast<uint32_t>(s.i64(col + 4));
  c.codec = static_cast<uint8_t>(s.i64(col + 5));
  c.record_count = static_cast<uint32_t>(s.i64(col + 6));
  c.entry_count = static_cast<uint32_t>(s.i64(col + 7));
  c.first_recv_ns = s.i64(col + 8);
  c.last_recv_ns = s.i64(col + 9);
  c.min_seq = s.i64(col + 10);
  c.max_seq = s.i64(col + 11);
  return c;
}
}  // namespace

Result<std::vector<ChunkInfo>> Index::chunks_of_segment(uint64_t number) {
  Stmt s(db_,
         "SELECT id, segment_id, offset, stored_size, raw_size, codec, record_count, entry_count, "
         "first_recv, last_recv, min_seq, max_seq FROM chunks WHERE segment_id = ? ORDER BY "
         "offset");
  s.bind(1, static_cast<int64_t>(number));
  std::vector<ChunkInfo> out;
  int rc;
  while ((rc = s.step()) == SQLITE_ROW) out.push_back(chunk_from(s, 0));
  if (rc != SQLITE_DONE) return error("query chunks");
  return out;
}

Result<std::vector<ChunkTopicStat>> Index::chunk_topics(uint64_t sequence) {
  Stmt s(db_,
         "SELECT topic_id, count, bytes, first_recv, last_recv FROM chunk_topics WHERE chunk_id = "
         "? ORDER BY topic_id");
  s.bind(1, static_cast<int64_t>(sequence));
  std::vector<ChunkTopicStat> out;
  int rc;
  while ((rc = s.step()) == SQLITE_ROW)
    out.push_back({static_cast<TopicId>(s.i64(0)), static_cast<uint64_t>(s.i64(1)),
                   static_cast<uint64_t>(s.i64(2)), s.i64(3), s.i64(4)});
  if (rc != SQLITE_DONE) return error("query chunk topics");
  return out;
}

Result<std::vector<TopicInfo>> Index::topics() {
  Stmt s(db_,
         "SELECT t.id, t.name, t.type_name, t.keyed, t.qos, t.type_info, "
         "IFNULL(SUM(ct.count), 0), IFNULL(SUM(ct.bytes), 0), IFNULL(MIN(ct.first_recv), 0), "
         "IFNULL(MAX(ct.last_recv), 0), (SELECT IFNULL(SUM(g.last_seq - g.first_seq + 1), 0) "
         "FROM gaps g JOIN writers w ON w.id = g.writer_id WHERE w.topic_id = t.id) "
         "FROM topics t LEFT JOIN chunk_topics ct ON ct.topic_id = t.id GROUP BY t.id "
         "ORDER BY t.id");
  if (!s.ok()) return error("query topics");
  std::vector<TopicInfo> out;
  int rc;
  while ((rc = s.step()) == SQLITE_ROW) {
    TopicInfo t;
    t.id = static_cast<TopicId>(s.i64(0));
    t.def.name = s.text(1);
    t.def.type_name = s.text(2);
    t.def.keyed = s.i64(3) != 0;
    t.def.qos = s.blob(4);
    t.def.type_info = s.blob(5);
    t.count = static_cast<uint64_t>(s.i64(6));
    t.bytes = static_cast<uint64_t>(s.i64(7));
    t.first_recv_ns = s.i64(8);
    t.last_recv_ns = s.i64(9);
    t.lost = static_cast<uint64_t>(s.i64(10));
    out.push_back(std::move(t));
  }
  if (rc != SQLITE_DONE) return error("query topics");
  return out;
}

Result<std::vector<WriterInfo>> Index::writers() {
  Stmt s(db_,
         "SELECT w.id, w.topic_id, w.guid, IFNULL(SUM(cw.count), 0), IFNULL(SUM(cw.bytes), 0), "
         "IFNULL(MIN(cw.first_recv), 0), IFNULL(MAX(cw.last_recv), 0), IFNULL(MIN(cw.min_seq), 0), "
         "IFNULL(MAX(cw.max_seq), 0), (SELECT IFNULL(SUM(g.last_seq - g.first_seq + 1), 0) FROM "
         "gaps g WHERE g.writer_id = w.id) FROM writers w LEFT JOIN chunk_writers cw ON "
         "cw.writer_id = w.id GROUP BY w.id ORDER BY w.id");
  if (!s.ok()) return error("query writers");
  std::vector<WriterInfo> out;
  int rc;
  while ((rc = s.step()) == SQLITE_ROW) {
    WriterInfo w;
    w.id = static_cast<WriterId>(s.i64(0));
    w.def.topic = static_cast<TopicId>(s.i64(1));
    const Bytes g = s.blob(2);
    if (g.size() == 16) std::memcpy(w.def.guid.data(), g.data(), 16);
    w.count = static_cast<uint64_t>(s.i64(3));
    w.bytes = static_cast<uint64_t>(s.i64(4));
    w.first_recv_ns = s.i64(5);
    w.last_recv_ns = s.i64(6);
    w.min_seq = s.i64(7);
    w.max_seq = s.i64(8);
    w.lost = static_cast<uint64_t>(s.i64(9));
    out.push_back(w);
  }
  if (rc != SQLITE_DONE) return error("query writers");
  if (auto q = writer_qos(out); !q) return q.error();
  return out;
}

Status Index::writer_qos(std::vector<WriterInfo>& writers) {
  Stmt s(db_, "SELECT writer_id, qos FROM writer_qos");
  if (!s.ok()) {  // an index older than format 5 opened read-only has no writer_qos table
    Stmt t(db_, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'writer_qos'");
    if (t.ok() && t.step() == SQLITE_DONE) return Status{};
    return error("query writer QoS");
  }
  int rc;
  while ((rc = s.step()) == SQLITE_ROW) {
    const auto id = static_cast<WriterId>(s.i64(0));
    auto it = std::lower_bound(writers.begin(), writers.end(), id,
                               [](const WriterInfo& w, WriterId i) { return w.id < i; });
    if (it != writers.end() && it->id == id) it->def.qos = s.blob(1);
  }
  if (rc != SQLITE_DONE) return error("query writer QoS");
  return Status{};
}

Result<std::vector<Gap>> Index::gaps() {
  Stmt s(db_,
         "SELECT writer_id, first_seq, last_seq FROM gaps ORDER BY writer_id, first_seq, "
         "last_seq");
  std::vector<Gap> out;
  int rc;
  while ((rc = s.step()) == SQLITE_ROW)
    out.push_back({static_cast<WriterId>(s.i64(0)), s.i64(1), s.i64(2)});
  if (rc != SQLITE_DONE) return error("query gaps");
  return out;
}

Result<std::vector<TypeDef>> Index::types() {
  std::vector<TypeDef> out;
  Stmt s(db_, "SELECT type_name, source, idl, type_object FROM types ORDER BY type_name, source");
  if (!s.ok()) {  // an index of format 1 or 2 opened read-only has no types table
    Stmt t(db_, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'types'");
    if (t.ok() && t.step() == SQLITE_DONE) return out;
    return error("query types");
  }
  int rc;
  while ((rc = s.step()) == SQLITE_ROW)
    out.push_back({s.text(0), static_cast<TypeSource>(s.i64(1)), s.text(2), s.blob(3)});
  if (rc != SQLITE_DONE) return error("query types");
  return out;
}

Result<std::vector<Mark>> Index::marks() {
  std::vector<Mark> out;
  Stmt s(db_, "SELECT kind, time_ns, name, note FROM marks ORDER BY time_ns, chunk_id, rowid");
  if (!s.ok()) {  // an index older than format 4 opened read-only has no marks table
    Stmt t(db_, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'marks'");
    if (t.ok() && t.step() == SQLITE_DONE) return out;
    return error("query marks");
  }
  int rc;
  while ((rc = s.step()) == SQLITE_ROW)
    out.push_back({static_cast<MarkKind>(s.i64(0)), s.i64(1), s.text(2), s.text(3)});
  if (rc != SQLITE_DONE) return error("query marks");
  return out;
}

Result<uint64_t> Index::max_chunk_sequence() {
  Stmt s(db_, "SELECT IFNULL(MAX(id), 0) FROM chunks");
  if (s.step() != SQLITE_ROW) return error("query max chunk");
  return static_cast<uint64_t>(s.i64(0));
}

int64_t Index::max_chunk_span() {
  if (max_span_ < 0) {
    auto v = meta("max_chunk_span_ns");
    max_span_ = v ? std::strtoll(v->c_str(), nullptr, 10) : 0;
  }
  return max_span_;
}

}  // namespace storage::detail
