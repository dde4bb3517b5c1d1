// File and memory implementations of ByteSink / ByteSource.
#include "storage/io.hpp"
#include "errno_error.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

namespace storage {

Error errno_error(int err, const std::string& what) {
  ErrorCode code = ErrorCode::kIo;
  if (err == ENOSPC || err == EDQUOT) code = ErrorCode::kNoSpace;
  if (err == ENOENT) code = ErrorCode::kNotFound;
  if (err == EEXIST) code = ErrorCode::kAlreadyExists;
  return Error{code, what + ": " + std::strerror(err)};
}

Result<std::unique_ptr<FileSink>> FileSink::open(const std::string& path, bool create,
                                                 bool direct) {
  const int flags = O_WRONLY | O_CLOEXEC | (create ? (O_CREAT | O_EXCL) : 0);
  const int fd = ::open(path.c_str(), flags, 0644);
  if (fd < 0) return errno_error(errno, "open " + path);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return errno_error(err, "stat " + path);
  }
  std::unique_ptr<FileSink> sink(new FileSink(fd, path, static_cast<uint64_t>(st.st_size)));
  if (direct) {
    sink->dfd_ = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_DIRECT);
    if (sink->dfd_ < 0) sink->direct_error_ = std::strerror(errno);
  }
  return sink;
}

FileSink::~FileSink() {
  if (dfd_ >= 0) ::close(dfd_);
  ::close(fd_);
}

Status FileSink::write(std::span<const ByteSpan> parts) {
  // pwritev at the tracked end, looping over short writes.
  std::vector<iovec> iov;
  iov.reserve(parts.size());
  for (const auto& p : parts)
    if (!p.empty()) iov.push_back({const_cast<std::byte*>(p.data()), p.size()});
  size_t first = 0;
  while (first < iov.size()) {
    const int cnt = static_cast<int>(std::min<size_t>(iov.size() - first, IOV_MAX));
    const ssize_t n = ::pwritev(fd_, iov.data() + first, cnt, static_cast<off_t>(size_));
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno_error(errno, "write " + path_);
    }
    if (n == 0) return errno_error(ENOSPC, "write " + path_);
    size_ += static_cast<uint64_t>(n);
    size_t left = static_cast<size_t>(n);
    while (left > 0 && first < iov.size()) {
      if (left >= iov[first].iov_len) {
        left -= iov[first].iov_len;
        ++first;
      } else {
        iov[first].iov_base = static_cast<char*>(iov[first].iov_base) + left;
        iov[first].iov_len -= left;
        left = 0;
      }
    }
  }
  return Status{};
}

Status FileSink::write_direct(const std::byte* data, size_t size) {
  if (dfd_ < 0) return Error{ErrorCode::kUnsupported, "no O_DIRECT descriptor for " + path_};
  ssize_t n;
  do {
    n = ::pwrite(dfd_, data, size, static_cast<off_t>(size_));
  } while (n < 0 && errno == EINTR);
  if (n < 0) return errno_error(errno, "write " + path_);
  if (static_cast<size_t>(n) != size) return errno_error(ENOSPC, "write " + path_);
  size_ += size;
  return Status{};
}

Status FileSink::sync() {
  if (::fdatasync(fd_) != 0) return errno_error(errno, "fdatasync " + path_);
  return Status{};
}

void FileSink::start_writeback(uint64_t offset, uint64_t length) {
#if defined(__linux__)
  // Best effort: errors surface at the next sync().
  (void)::sync_file_range(fd_, static_cast<off_t>(offset), static_cast<off_t>(length),
                          SYNC_FILE_RANGE_WRITE);
#else
  (void)offset;
  (void)length;
#endif
}

void FileSink::drop_cached(uint64_t offset, uint64_t length) {
  // Best effort, like start_writeback: the kernel drops the clean whole pages of the range.
  (void)::posix_fadvise(fd_, static_cast<off_t>(offset), static_cast<off_t>(length),
                        POSIX_FADV_DONTNEED);
}

Status FileSink::truncate(uint64_t size) {
  if (::ftruncate(fd_, static_cast<off_t>(size)) != 0)
    return errno_error(errno, "truncate " + path_);
  size_ = size;
  return Status{};
}

Result<std::unique_ptr<FileSource>> FileSource::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno_error(errno, "open " + path);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return errno_error(err, "stat " + path);
  }
  return std::unique_ptr<FileSource>(new FileSource(fd, path, static_cast<uint64_t>(st.st_size)));
}

FileSource::~FileSource() {
  ::close(fd_);
}

void FileSource::will_need(uint64_t offset, uint64_t length) const {
  // Linux reads at most the device's read-ahead size (read_ahead_kb, 128 KiB by default) per
  // WILLNEED: the range goes in pieces of that default.
  constexpr uint64_t kPiece = 128 << 10;
  const uint64_t end = std::min(offset + length, size_);
  for (uint64_t at = offset; at < end; at += kPiece) {
    (void)::posix_fadvise(fd_, static_cast<off_t>(at),
                          static_cast<off_t>(std::min(kPiece, end - at)), POSIX_FADV_WILLNEED);
  }
}

Status FileSource::read_at(uint64_t offset, std::span<std::byte> out) const {
  size_t done = 0;
  while (done < out.size()) {
    const ssize_t n =
        ::pread(fd_, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno_error(errno, "read " + path_);
    }
    if (n == 0) return Error{ErrorCode::kTruncated, "read past end of " + path_};
    done += static_cast<size_t>(n);
  }
  return Status{};
}

Status MemoryBuffer::write(std::span<const ByteSpan> parts) {
  for (const auto& p : parts) data_.insert(data_.end(), p.begin(), p.end());
  return Status{};
}

Status MemoryBuffer::truncate(uint64_t size) {
  if (size < data_.size()) data_.resize(size);
  return Status{};
}

Status MemoryBuffer::read_at(uint64_t offset, std::span<std::byte> out) const {
  if (offset > data_.size() || out.size() > data_.size() - offset)
    return Error{ErrorCode::kTruncated, "read past end of buffer"};
  if (!out.empty()) std::memcpy(out.data(), data_.data() + offset, out.size());
  return Status{};
}

}  // namespace storage
