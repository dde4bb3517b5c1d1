#include "wire/parameter_list.hpp"

namespace pubsub::wire {

size_t parameter_list_size(const uint8_t* data, size_t size, bool little_endian) {
  ByteReader r(data, size, little_endian);
  while (r.remaining() >= 4) {
    const uint16_t pid = r.u16();
    const uint16_t len = r.u16();
    if (pid == kPidSentinel) return r.offset();
    if (len % 4 != 0 || len > r.remaining()) return 0;
    r.skip(len);
  }
  return 0;
}

void ParameterListWriter::put_u16(uint16_t v) {
  out_.push_back(static_cast<uint8_t>(v));
  out_.push_back(static_cast<uint8_t>(v >> 8));
}

void ParameterListWriter::put_u32(uint32_t v) {
  put_u16(static_cast<uint16_t>(v));
  put_u16(static_cast<uint16_t>(v >> 16));
}

void ParameterListWriter::u32(uint16_t pid, uint32_t v) {
  put_u16(pid);
  put_u16(4);
  put_u32(v);
}

void ParameterListWriter::raw(uint16_t pid, const void* data, size_t n) {
  const size_t padded = (n + 3) & ~size_t{3};
  put_u16(pid);
  put_u16(static_cast<uint16_t>(padded));
  const auto* p = static_cast<const uint8_t*>(data);
  out_.insert(out_.end(), p, p + n);
  out_.insert(out_.end(), padded - n, 0);
}

void ParameterListWriter::string(uint16_t pid, const std::string& s) {
  const size_t n = s.size() + 1;
  const size_t padded = (4 + n + 3) & ~size_t{3};
  put_u16(pid);
  put_u16(static_cast<uint16_t>(padded));
  put_u32(static_cast<uint32_t>(n));
  out_.insert(out_.end(), s.begin(), s.end());
  out_.insert(out_.end(), padded - 4 - s.size(), 0);
}

void ParameterListWriter::sentinel() {
  put_u16(kPidSentinel);
  put_u16(0);
}

bool read_cdr_string(const Parameter& p, bool little_endian, std::string& out) {
  ByteReader r(p.value, p.length, little_endian);
  const uint32_t n = r.u32();
  if (!r.ok() || n == 0 || n > r.remaining()) return false;
  const uint8_t* s = r.take(n);
  if (s[n - 1] != 0) return false;
  out.assign(reinterpret_cast<const char*>(s), n - 1);
  return true;
}

}  // namespace pubsub::wire
