// Byte sinks and sources: the only way the segment code touches storage. Files in production, an
// in-memory buffer in tests. Not thread-safe; each object has one owner at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>

#include "storage/records.hpp"
#include "storage/status.hpp"

namespace storage {

// Append-only destination of bytes.
class ByteSink {
 public:
  virtual ~ByteSink() = default;
  // Appends all parts (gathered write). On failure nothing is guaranteed about a partial write;
  // the caller may truncate() back to the size it had before.
  virtual Status write(std::span<const ByteSpan> parts) = 0;
  // Makes written bytes durable (fdatasync for files).
  virtual Status sync() = 0;
  // Shrinks the sink to `size` bytes.
  virtual Status truncate(uint64_t size) = 0;
  virtual uint64_t size() const = 0;
  // Asks the sink to start writing [offset, offset + length) to stable storage in the background
  // (no waiting), so that a later sync() has less left to do. Default: nothing.
  virtual void start_writeback(uint64_t offset, uint64_t length) {
    (void)offset;
    (void)length;
  }
  // Tells the sink that [offset, offset + length), already synced, will not be read back soon,
  // so a file's page cache may let it go (POSIX_FADV_DONTNEED). Default: nothing.
  virtual void drop_cached(uint64_t offset, uint64_t length) {
    (void)offset;
    (void)length;
  }
};

// Random-access source of bytes.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual uint64_t size() const = 0;
  // Reads exactly out.size() bytes at offset, or fails with kTruncated past the end.
  virtual Status read_at(uint64_t offset, std::span<std::byte> out) const = 0;
  // A hint that [offset, offset + length) will be read soon: a file starts reading it into the
  // page cache in the background. Best effort; the default does nothing.
  virtual void will_need(uint64_t offset, uint64_t length) const {
    (void)offset;
    (void)length;
  }
};

class FileSink final : public ByteSink {
 public:
  // Opens `path` for appending; creates it if `create` (failing if it exists). With `direct` it
  // also opens the file a second time with O_DIRECT, for writes that bypass the page cache
  // (direct_fd(); -1 when the filesystem refuses O_DIRECT, e.g. tmpfs - direct_error() says so).
  static Result<std::unique_ptr<FileSink>> open(const std::string& path, bool create,
                                                bool direct = false);
  ~FileSink() override;
  Status write(std::span<const ByteSpan> parts) override;
  Status sync() override;
  Status truncate(uint64_t size) override;
  uint64_t size() const override { return size_; }
  void start_writeback(uint64_t offset, uint64_t length) override;  // sync_file_range
  void drop_cached(uint64_t offset, uint64_t length) override;      // posix_fadvise
  const std::string& path() const { return path_; }
  int direct_fd() const { return dfd_; }
  const std::string& direct_error() const { return direct_error_; }
  // Appends [data, data + size) through the O_DIRECT descriptor, bypassing the page cache;
  // returns when the device has it (fdatasync still makes the file's size durable). `data`,
  // `size` and size() must be multiples of format::kDirectAlignment. A short write (a full
  // device) is kNoSpace; on failure the caller may truncate() back.
  Status write_direct(const std::byte* data, size_t size);

 private:
  FileSink(int fd, std::string path, uint64_t size)
      : fd_(fd), path_(std::move(path)), size_(size) {}
  int fd_;
  int dfd_ = -1;
  std::string direct_error_;
  std::string path_;
  uint64_t size_;
};

class FileSource final : public ByteSource {
 public:
  static Result<std::unique_ptr<FileSource>> open(const std::string& path);
  ~FileSource() override;
  uint64_t size() const override { return size_; }
  Status read_at(uint64_t offset, std::span<std::byte> out) const override;
  void will_need(uint64_t offset, uint64_t length) const override;  // POSIX_FADV_WILLNEED
  const std::string& path() const { return path_; }

 private:
  FileSource(int fd, std::string path, uint64_t size)
      : fd_(fd), path_(std::move(path)), size_(size) {}
  int fd_;
  std::string path_;
  uint64_t size_;
};

// Both a sink and a source over a byte vector (tests, tools).
class MemoryBuffer final : public ByteSink, public ByteSource {
 public:
  Status write(std::span<const ByteSpan> parts) override;
  Status sync() override { return Status{}; }
  Status truncate(uint64_t size) override;
  uint64_t size() const override { return data_.size(); }
  Status read_at(uint64_t offset, std::span<std::byte> out) const override;
  Bytes& data() { return data_; }

 private:
  Bytes data_;
};

}  // namespace storage
