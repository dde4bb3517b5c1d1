// Page-aligned memory for the segment writer's chunk buffers, which O_DIRECT writes send to the
// device as they are (FileSink::write_direct): address, length and file offset of such a write
// must be multiples of format::kDirectAlignment.
//
// From kHugePage up a buffer is mapped on its own, aligned to and rounded up to huge pages, and
// asked for transparent huge pages: an O_DIRECT write from 2-MiB pages reaches the device in a
// few large segments - on this project's VM 1.7-1.9 GB/s from such a buffer against 0.7-0.8 GB/s
// from 4-KiB pages, at a tenth of the system time (a 4-MiB write at a time, with one or four in
// flight alike). An AlignedBuffer owns its memory; it is not thread-safe.
#pragma once

#include <cstddef>
#include <utility>

namespace storage::detail {

class AlignedBuffer {
 public:
  static constexpr size_t kHugePage = size_t{2} << 20;
  // Usable size of a buffer asked for `size` bytes (the huge-page rounding).
  static size_t usable(size_t size);

  AlignedBuffer() = default;
  AlignedBuffer(AlignedBuffer&& o) noexcept
      : p_(std::exchange(o.p_, nullptr)),
        size_(std::exchange(o.size_, 0)),
        mapped_(std::exchange(o.mapped_, 0)) {}
  AlignedBuffer& operator=(AlignedBuffer&& o) noexcept;
  ~AlignedBuffer();
  // Null (get() == nullptr) when the memory cannot be had. Not zeroed.
  static AlignedBuffer allocate(size_t size) noexcept;
  std::byte* get() const { return p_; }
  size_t size() const { return size_; }
  explicit operator bool() const { return p_ != nullptr; }

 private:
  void release() noexcept;
  std::byte* p_ = nullptr;
  size_t size_ = 0;    // usable(size asked for)
  size_t mapped_ = 0;  // bytes mmap()ed (0: from aligned_alloc)
};

}  // namespace storage::detail
