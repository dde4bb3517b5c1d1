#include "aligned_buffer.hpp"

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>

#include "storage/format.hpp"

namespace storage::detail {

size_t AlignedBuffer::usable(size_t size) {
  const size_t a = size >= kHugePage ? kHugePage : format::kDirectAlignment;
  return size == 0 ? a : (size + a - 1) / a * a;
}

AlignedBuffer AlignedBuffer::allocate(size_t size) noexcept {
  AlignedBuffer b;
  const size_t n = usable(size);
  if (n < kHugePage) {
    void* p = std::aligned_alloc(format::kDirectAlignment, n);
    if (!p) return b;
    b.p_ = static_cast<std::byte*>(p);
    b.size_ = n;
    return b;
  }
  // Map one huge page more than needed and trim to a huge-page boundary.
  const size_t span = n + kHugePage;
  void* m = ::mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return b;
  const auto base = reinterpret_cast<uintptr_t>(m);
  const uintptr_t start = (base + kHugePage - 1) / kHugePage * kHugePage;
  if (start > base) ::munmap(m, start - base);
  const uintptr_t end = start + n;
  if (base + span > end) ::munmap(reinterpret_cast<void*>(end), base + span - end);
  (void)::madvise(reinterpret_cast<void*>(start), n, MADV_HUGEPAGE);  // best effort
  b.p_ = reinterpret_cast<std::byte*>(start);
  b.size_ = n;
  b.mapped_ = n;
  return b;
}

AlignedBuffer& AlignedBuffer::operator=(AlignedBuffer&& o) noexcept {
  if (this != &o) {
    release();
    p_ = std::exchange(o.p_, nullptr);
    size_ = std::exchange(o.size_, 0);
    mapped_ = std::exchange(o.mapped_, 0);
  }
  return *this;
}

AlignedBuffer::~AlignedBuffer() {
  release();
}

void AlignedBuffer::release() noexcept {
  if (!p_) return;
  if (mapped_)
    ::munmap(p_, mapped_);
  else
    std::free(p_);
  p_ = nullptr;
  size_ = mapped_ = 0;
}

}  // namespace storage::detail
