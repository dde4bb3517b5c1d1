// Bounds-checked readers and writers of integers in either byte order over byte spans. The
// reader never throws and never reads past its span: a short read sets a sticky failure flag
// that the caller checks once at the end of a structure.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

namespace pubsub::wire {

template <class T>
inline T byteswap(T v) {
  if constexpr (sizeof(T) == 1) {
    return v;
  } else if constexpr (sizeof(T) == 2) {
    return static_cast<T>(__builtin_bswap16(static_cast<uint16_t>(v)));
  } else if constexpr (sizeof(T) == 4) {
    return static_cast<T>(__builtin_bswap32(static_cast<uint32_t>(v)));
  } else {
    return static_cast<T>(__builtin_bswap64(static_cast<uint64_t>(v)));
  }
}

class ByteReader {
 public:
  ByteReader(const uint8_t* data, size_t size, bool little_endian)
      : p_(data), end_(data + size), begin_(data), le_(little_endian) {}

  template <class T>
  T get() {
    T v{};
    if (static_cast<size_t>(end_ - p_) < sizeof(T)) {
      failed_ = true;
      p_ = end_;
      return v;
    }
    std::memcpy(&v, p_, sizeof(T));
    p_ += sizeof(T);
    if (le_ != (std::endian::native == std::endian::little)) v = byteswap(v);
    return v;
  }
  uint8_t u8() { return get<uint8_t>(); }
  uint16_t u16() { return get<uint16_t>(); }
  uint32_t u32() { return get<uint32_t>(); }
  int32_t i32() { return get<int32_t>(); }
  uint32_t u32_be() {  // fields defined big endian whatever the submessage's order (entity ids)
    uint32_t v = 0;
    if (!bytes(reinterpret_cast<uint8_t*>(&v), 4)) return 0;
    return byteswap(v);
  }
  bool bytes(uint8_t* out, size_t n) {
    if (static_cast<size_t>(end_ - p_) < n) {
      failed_ = true;
      p_ = end_;
      return false;
    }
    std::memcpy(out, p_, n);
    p_ += n;
    return true;
  }
  // A view of the next n bytes, advancing past them.
  const uint8_t* take(size_t n) {
    if (static_cast<size_t>(end_ - p_) < n) {
      failed_ = true;
      p_ = end_;
      return nullptr;
    }
    const uint8_t* at = p_;
    p_ += n;
    return at;
  }
  void skip(size_t n) { take(n); }
  // CDR alignment relative to the start of the reader's span.
  void align(size_t a) {
    const size_t off = static_cast<size_t>(p_ - begin_);
    const size_t pad = (a - off % a) % a;
    if (pad) skip(pad);
  }
  size_t remaining() const { return static_cast<size_t>(end_ - p_); }
  size_t offset() const { return static_cast<size_t>(p_ - begin_); }
  const uint8_t* pos() const { return p_; }
  bool ok() const { return !failed_; }
  bool little_endian() const { return le_; }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
  const uint8_t* begin_;
  bool le_;
  bool failed_ = false;
};

// Writes little endian into a caller-owned buffer; fails (sticky) instead of overflowing.
class ByteWriter {
 public:
  ByteWriter(uint8_t* data, size_t capacity) : begin_(data), p_(data), end_(data + capacity) {}

  template <class T>
  void put(T v) {
    if constexpr (std::endian::native != std::endian::little) v = byteswap(v);
    raw(&v, sizeof(T));
  }
  void u8(uint8_t v) { put(v); }
  void u16(uint16_t v) { put(v); }
  void u32(uint32_t v) { put(v); }
  void i32(int32_t v) { put(v); }
  void u32_be(uint32_t v) {
    const uint32_t be = std::endian::native == std::endian::little ? byteswap(v) : v;
    raw(&be, 4);
  }
  void raw(const void* src, size_t n) {
    if (static_cast<size_t>(end_ - p_) < n) {
      failed_ = true;
      return;
    }
    if (n) std::memcpy(p_, src, n);
    p_ += n;
  }
  void zeros(size_t n) {
    if (static_cast<size_t>(end_ - p_) < n) {
      failed_ = true;
      return;
    }
    std::memset(p_, 0, n);
    p_ += n;
  }
  void align(size_t a, size_t base_offset = 0) {
    const size_t off = size() - base_offset;
    zeros((a - off % a) % a);
  }
  uint8_t* at(size_t offset) { return begin_ + offset; }
  size_t size() const { return static_cast<size_t>(p_ - begin_); }
  size_t remaining() const { return static_cast<size_t>(end_ - p_); }
  bool ok() const { return !failed_; }

 private:
  uint8_t* begin_;
  uint8_t* p_;
  uint8_t* end_;
  bool failed_ = false;
};

}  // namespace pubsub::wire
