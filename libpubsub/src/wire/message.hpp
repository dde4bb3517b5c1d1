// RTPS message decoding and encoding: pure functions over byte spans.
//
// Decoding never trusts a length. Every count, size and offset is checked against the datagram
// and against DecodeLimits before it is used, and nothing is allocated: the decoder hands views
// into the caller's buffer to a Visitor, one submessage at a time, in order. The first malformed
// submessage stops the walk and is reported as a DecodeError (what came before it has already
// been delivered, as an RTPS receiver would). This file is the libFuzzer target's entry point.
//
// Encoding writes into a caller-owned fixed buffer (MessageBuilder) and reports overflow instead
// of growing; the packer sizes its datagrams so that overflow means "start a new datagram".
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "pubsub/basics.hpp"
#include "wire/constants.hpp"

namespace pubsub::wire {

struct DecodeLimits {
  uint32_t max_sample_size = 256u << 20;  // DATA_FRAG sampleSize above this is refused
};

enum class DecodeError : uint8_t {
  kNone,
  kTooShort,           // less than an RTPS header
  kBadMagic,           // not "RTPS"
  kBadVersion,         // protocol major version is not 2
  kTruncated,          // a submessage header or body runs past the datagram
  kBadLength,          // octetsToNextHeader not a multiple of 4
  kBadSequenceNumber,  // a sequence number < 1 where one is required, or first > last + 1
  kBadSet,             // numBits > 256, base < 1 (ACKNACK: 0 with no bits is taken), words missing
  kBadFragment,        // fragment numbers past the end, zero sizes, short fragment data
  kSampleTooLarge,     // DATA_FRAG sampleSize over DecodeLimits::max_sample_size
  kBadParameterList,   // missing sentinel, bad parameter length
  kBadFlags,           // contradictory flags (DATA with both D and K)
  kCount
};

const char* to_string(DecodeError e);

// A SequenceNumberSet or FragmentNumberSet: base plus up to 256 bits (bit i means base + i).
struct NumberSet {
  int64_t base = 0;
  uint32_t num_bits = 0;
  uint32_t bits[8] = {};
  bool test(uint32_t i) const { return i < num_bits && (bits[i / 32] >> (31 - i % 32)) & 1u; }
  void set(uint32_t i) {
    if (i >= num_bits) num_bits = i + 1;
    bits[i / 32] |= 1u << (31 - i % 32);
  }
};

// The receiver state while walking one message (RTPS 8.3.4).
struct ReceiveContext {
  GuidPrefix source_prefix{};
  GuidPrefix dest_prefix{};  // all zero: addressed to anyone
  uint8_t source_vendor[2] = {};
  uint8_t source_version[2] = {};
  bool has_timestamp = false;
  Time timestamp;
};

struct InlineQosInfo {
  bool has_key_hash = false;
  KeyHash key_hash;
  uint32_t status_info = 0;  // kStatusDisposed | kStatusUnregistered
};

struct DataSubmessage {
  EntityId reader_id, writer_id;
  SequenceNumber sn = 0;
  bool has_data = false;  // D flag: payload is the serialized data
  bool has_key = false;   // K flag: payload is the serialized key
  InlineQosInfo qos;
  const uint8_t* inline_qos = nullptr;  // raw parameter list (validated), or null
  size_t inline_qos_size = 0;
  const uint8_t* payload = nullptr;  // serialized payload, starting with the encapsulation
  size_t payload_size = 0;
};

struct DataFragSubmessage {
  EntityId reader_id, writer_id;
  SequenceNumber sn = 0;
  bool has_key = false;
  InlineQosInfo qos;
  uint32_t fragment_start = 0;  // 1-based
  uint16_t fragments_in_submessage = 0;
  uint16_t fragment_size = 0;
  uint32_t sample_size = 0;
  const uint8_t* data = nullptr;  // exactly the bytes of the fragments carried
  size_t data_size = 0;
};

struct HeartbeatSubmessage {
  EntityId reader_id, writer_id;
  SequenceNumber first = 0, last = 0;
  uint32_t count = 0;
  bool final = false;
  bool liveliness = false;
};

struct AckNackSubmessage {
  EntityId reader_id, writer_id;
  NumberSet set;  // base: every sn below was received; bits: missing ones
  uint32_t count = 0;
  bool final = false;
};

struct GapSubmessage {
  EntityId reader_id, writer_id;
  SequenceNumber gap_start = 0;
  NumberSet gap_list;  // [gap_start, gap_list.base) irrelevant, plus the set bits
};

struct NackFragSubmessage {
  EntityId reader_id, writer_id;
  SequenceNumber sn = 0;
  NumberSet fragments;
  uint32_t count = 0;
};

struct HeartbeatFragSubmessage {
  EntityId reader_id, writer_id;
  SequenceNumber sn = 0;
  uint32_t last_fragment = 0;
  uint32_t count = 0;
};

class Visitor {
 public:
  virtual ~Visitor() = default;
  virtual void on_data(const ReceiveContext&, const DataSubmessage&) {}
  virtual void on_data_frag(const ReceiveContext&, const DataFragSubmessage&) {}
  virtual void on_heartbeat(const ReceiveContext&, const HeartbeatSubmessage&) {}
  virtual void on_acknack(const ReceiveContext&, const AckNackSubmessage&) {}
  virtual void on_gap(const ReceiveContext&, const GapSubmessage&) {}
  virtual void on_nack_frag(const ReceiveContext&, const NackFragSubmessage&) {}
  virtual void on_heartbeat_frag(const ReceiveContext&, const HeartbeatFragSubmessage&) {}
};

DecodeError decode_message(const uint8_t* data, size_t size, const DecodeLimits& limits,
                           Visitor& visitor);

// Wire Time_t <-> nanoseconds since the epoch.
void time_to_wire(Time t, int32_t& seconds, uint32_t& fraction);
Time time_from_wire(int32_t seconds, uint32_t fraction);

// ---- encoding -------------------------------------------------------------------------------

struct OutgoingInlineQos {
  const KeyHash* key_hash = nullptr;
  uint32_t status_info = 0;
  bool empty() const { return key_hash == nullptr && status_info == 0; }
  size_t encoded_size() const { return (key_hash ? 20 : 0) + (status_info ? 8 : 0) + 4; }
};

// Builds one RTPS message into a fixed buffer. Every append returns false (and appends nothing)
// when the submessage does not fit, so a packer can start a new datagram.
class MessageBuilder {
 public:
  MessageBuilder(uint8_t* buffer, size_t capacity) : buf_(buffer), cap_(capacity) {}

  void header(const GuidPrefix& prefix);
  bool info_dst(const GuidPrefix& prefix);
  bool info_ts(Time t);
  // DATA whose serialized payload is gathered from two pieces (e.g. the encapsulation header
  // and the body); key_only sends it as a serialized key (K flag) instead of data (D flag).
  bool data(EntityId reader, EntityId writer, SequenceNumber sn, const OutgoingInlineQos& qos,
            const uint8_t* p1, size_t n1, const uint8_t* p2 = nullptr, size_t n2 = 0,
            bool key_only = false);
  // DATA / DATA_FRAG up to the payload, declaring payload_size bytes that the caller gathers
  // after these bytes, followed by pad_to_4(payload_size) zero bytes.
  bool data_header(EntityId reader, EntityId writer, SequenceNumber sn,
                   const OutgoingInlineQos& qos, size_t payload_size, bool key_only = false);
  bool data_frag_header(EntityId reader, EntityId writer, SequenceNumber sn,
                        const OutgoingInlineQos& qos, uint32_t fragment_start,
                        uint16_t fragment_count, uint16_t fragment_size, uint32_t sample_size,
                        size_t data_size);
  static size_t padding(size_t n) { return ((n + 3) & ~size_t{3}) - n; }

  bool data_frag(EntityId reader, EntityId writer, SequenceNumber sn, const OutgoingInlineQos& qos,
                 uint32_t fragment_start, uint16_t fragment_count, uint16_t fragment_size,
                 uint32_t sample_size, const uint8_t* data, size_t size);
  bool heartbeat(EntityId reader, EntityId writer, SequenceNumber first, SequenceNumber last,
                 uint32_t count, bool final, bool liveliness = false);
  bool acknack(EntityId reader, EntityId writer, const NumberSet& set, uint32_t count, bool final);
  bool gap(EntityId reader, EntityId writer, SequenceNumber start, const NumberSet& list);
  bool nack_frag(EntityId reader, EntityId writer, SequenceNumber sn, const NumberSet& frags,
                 uint32_t count);
  bool heartbeat_frag(EntityId reader, EntityId writer, SequenceNumber sn, uint32_t last_fragment,
                      uint32_t count);

  size_t size() const { return size_; }
  size_t remaining() const { return cap_ - size_; }
  const uint8_t* data() const { return buf_; }
  void truncate(size_t n) { size_ = n; }

  // Bytes a DATA submessage (with INFO_TS before it) takes for a given payload size.
  static size_t data_overhead(const OutgoingInlineQos& qos);

 private:
  uint8_t* begin_submessage(uint8_t id, uint8_t flags, size_t body_size);
  uint8_t* buf_;
  size_t cap_;
  size_t size_ = 0;
};

}  // namespace pubsub::wire
