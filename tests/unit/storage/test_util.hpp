// Helpers for the storage tests: temporary directories, deterministic payloads, and a model of
// the records a test wrote, to compare a Recording against.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "storage/recording.hpp"
#include "storage/segment_writer.hpp"

namespace storage_test {

class TempDir {
 public:
  explicit TempDir(const std::string& tag = "storage",
                   const std::filesystem::path& parent = std::filesystem::temp_directory_path()) {
    std::string tmpl = (parent / (tag + "-XXXXXX")).string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string sub(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline uint64_t splitmix(uint64_t& s) {
  uint64_t z = (s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Deterministic payload for (seed, size): random bytes, or mostly zeros when `compressible`.
inline storage::Bytes make_payload(uint64_t seed, size_t size, bool compressible = false) {
  storage::Bytes b(size);
  uint64_t s = seed;
  if (compressible) {
    for (size_t i = 0; i < size; i += 97) b[i] = static_cast<std::byte>(splitmix(s));
    return b;
  }
  size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    const uint64_t v = splitmix(s);
    std::memcpy(b.data() + i, &v, 8);
  }
  for (; i < size; ++i) b[i] = static_cast<std::byte>(splitmix(s));
  return b;
}

struct Rec {
  storage::RecordMeta meta;
  storage::Bytes payload;
};

inline bool same_meta(const storage::RecordMeta& a, const storage::RecordMeta& b) {
  return a.topic == b.topic && a.writer == b.writer && a.sequence == b.sequence &&
         a.source_ns == b.source_ns && a.reception_ns == b.reception_ns && a.flags == b.flags &&
         a.has_key_hash == b.has_key_hash && (!a.has_key_hash || a.key_hash == b.key_hash);
}

inline bool same_payload(storage::ByteSpan a, const storage::Bytes& b) {
  return a.size() == b.size() && (b.empty() || std::memcmp(a.data(), b.data(), b.size()) == 0);
}

// Reads everything a query returns into a vector (copies).
inline std::vector<Rec> read_all(storage::Recording& rec, const storage::Query& q = {},
                                 uint64_t* problems = nullptr) {
  std::vector<Rec> out;
  auto c = rec.query(q);
  if (!c) return out;
  while (const storage::RecordView* v = c->next())
    out.push_back({v->meta, storage::Bytes(v->payload.begin(), v->payload.end())});
  if (problems) *problems = c->problems();
  return out;
}

inline uint64_t file_size(const std::string& p) {
  return std::filesystem::file_size(p);
}

}  // namespace storage_test
