// Parameter lists (RTPS 9.4.2.11): {u16 pid, u16 length} + value, ..., PID_SENTINEL. Used for
// inline QoS and for the PL_CDR payloads of SPDP and SEDP.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "wire/byte_io.hpp"
#include "wire/constants.hpp"

namespace pubsub::wire {

struct Parameter {
  uint16_t pid;
  uint16_t length;
  const uint8_t* value;
};

// Calls f(const Parameter&) for each parameter up to the sentinel. Returns false if the list is
// malformed: a length that is not a multiple of 4 or runs past the end, or no sentinel. f may
// return false to reject a parameter's contents, which also makes the list malformed.
template <class F>
bool for_each_parameter(const uint8_t* data, size_t size, bool little_endian, F&& f) {
  ByteReader r(data, size, little_endian);
  while (r.remaining() >= 4) {
    const uint16_t pid = r.u16();
    const uint16_t len = r.u16();
    if (pid == kPidSentinel) return true;
    if (len % 4 != 0 || len > r.remaining()) return false;
    const uint8_t* value = r.take(len);
    if (pid == kPidPad) continue;
    if (!f(Parameter{pid, len, value})) return false;
  }
  return false;  // ran out of bytes before the sentinel
}

// Length of a parameter list including its sentinel, or 0 if malformed.
size_t parameter_list_size(const uint8_t* data, size_t size, bool little_endian);

// Builds a little-endian parameter list into a growable buffer (discovery data only; the
// per-sample inline QoS is written by MessageBuilder without allocation).
class ParameterListWriter {
 public:
  explicit ParameterListWriter(std::vector<uint8_t>& out) : out_(out) {}
  void u32(uint16_t pid, uint32_t v);
  void raw(uint16_t pid, const void* data, size_t n);  // padded to 4
  void string(uint16_t pid, const std::string& s);     // CDR string: length incl. NUL
  void sentinel();

 private:
  void put_u16(uint16_t v);
  void put_u32(uint32_t v);
  std::vector<uint8_t>& out_;
};

// CDR string value (u32 length including the terminating NUL, then the characters).
bool read_cdr_string(const Parameter& p, bool little_endian, std::string& out);

}  // namespace pubsub::wire
