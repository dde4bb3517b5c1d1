#include "wire/message.hpp"

#include <cstring>

#include "wire/byte_io.hpp"
#include "wire/parameter_list.hpp"

namespace pubsub::wire {

const char* to_string(DecodeError e) {
  switch (e) {
    case DecodeError::kNone:
      return "ok";
    case DecodeError::kTooShort:
      return "shorter than an RTPS header";
    case DecodeError::kBadMagic:
      return "not an RTPS message";
    case DecodeError::kBadVersion:
      return "unsupported protocol version";
    case DecodeError::kTruncated:
      return "submessage runs past the end of the message";
    case DecodeError::kBadLength:
      return "octetsToNextHeader is not a multiple of 4";
    case DecodeError::kBadSequenceNumber:
      return "invalid sequence number";
    case DecodeError::kBadSet:
      return "invalid sequence or fragment number set";
    case DecodeError::kBadFragment:
      return "invalid fragment numbers or sizes";
    case DecodeError::kSampleTooLarge:
      return "sample size over the limit";
    case DecodeError::kBadParameterList:
      return "malformed parameter list";
    case DecodeError::kBadFlags:
      return "contradictory submessage flags";
    case DecodeError::kCount:
      break;
  }
  return "unknown";
}

void time_to_wire(Time t, int32_t& seconds, uint32_t& fraction) {
  int64_t s = t.ns / 1'000'000'000;
  int64_t ns = t.ns % 1'000'000'000;
  if (ns < 0) {
    ns += 1'000'000'000;
    s -= 1;
  }
  seconds = static_cast<int32_t>(s);
  fraction = static_cast<uint32_t>((static_cast<uint64_t>(ns) << 32) / 1'000'000'000u);
}

Time time_from_wire(int32_t seconds, uint32_t fraction) {
  const uint64_t ns = (static_cast<uint64_t>(fraction) * 1'000'000'000u + (1ull << 31)) >> 32;
  return Time{static_cast<int64_t>(seconds) * 1'000'000'000 + static_cast<int64_t>(ns)};
}

namespace {

SequenceNumber read_sn(ByteReader& r) {
  const int32_t high = r.i32();
  const uint32_t low = r.u32();
  return (static_cast<int64_t>(high) << 32) | low;
}

// SequenceNumberSet / FragmentNumberSet body after the base.
bool read_set_bits(ByteReader& r, NumberSet& set) {
  set.num_bits = r.u32();
  if (!r.ok() || set.num_bits > 256) return false;
  const uint32_t words = (set.num_bits + 31) / 32;
  for (uint32_t i = 0; i < words; ++i) set.bits[i] = r.u32();
  if (!r.ok()) return false;
  // Bits past num_bits are meaningless; clear them so test() and iteration can trust the words.
  if (set.num_bits % 32) set.bits[words - 1] &= ~0u << (32 - set.num_bits % 32);
  return true;
}

// Inline QoS: validates the list and picks out what the protocol uses.
bool read_inline_qos(const uint8_t* p, size_t n, bool le, InlineQosInfo& out, size_t& used) {
  used = parameter_list_size(p, n, le);
  if (used == 0) return false;
  return for_each_parameter(p, used, le, [&](const Parameter& param) {
    const uint16_t pid = param.pid & ~kPidMustUnderstand;
    if (pid == kPidKeyHash) {
      if (param.length < 16) return false;
      out.has_key_hash = true;
      std::memcpy(out.key_hash.value.data(), param.value, 16);
    } else if (pid == kPidStatusInfo) {
      if (param.length < 4) return false;
      out.status_info = static_cast<uint32_t>(param.value[3]);  // big endian, flags in last byte
    }
    return true;
  });
}

class Walker {
 public:
  Walker(const uint8_t* data, size_t size, const DecodeLimits& limits, Visitor& v)
      : data_(data), size_(size), limits_(limits), v_(v) {}

  DecodeError run() {
    if (size_ < kHeaderSize) return DecodeError::kTooShort;
    if (std::memcmp(data_, "RTPS", 4) != 0) return DecodeError::kBadMagic;
    if (data_[4] != 2) return DecodeError::kBadVersion;
    ctx_.source_version[0] = data_[4];
    ctx_.source_version[1] = data_[5];
    ctx_.source_vendor[0] = data_[6];
    ctx_.source_vendor[1] = data_[7];
    std::memcpy(ctx_.source_prefix.data(), data_ + 8, 12);

    size_t off = kHeaderSize;
    while (off < size_) {
      if (size_ - off < kSubmessageHeaderSize) return DecodeError::kTruncated;
      const uint8_t id = data_[off];
      const uint8_t flags = data_[off + 1];
      const bool le = flags & kFlagLittleEndian;
      uint16_t octets;
      std::memcpy(&octets, data_ + off + 2, 2);
      if (le != (std::endian::native == std::endian::little)) octets = byteswap(octets);
      off += kSubmessageHeaderSize;
      size_t body = octets;
      if (octets == 0 && id != kPad && id != kInfoTs) {
        body = size_ - off;  // "extends to the end of the message"
      } else {
        if (octets % 4 != 0) return DecodeError::kBadLength;
        if (body > size_ - off) return DecodeError::kTruncated;
      }
      const DecodeError e = submessage(id, flags, le, data_ + off, body);
      if (e != DecodeError::kNone) return e;
      off += body;
    }
    return DecodeError::kNone;
  }

 private:
  DecodeError submessage(uint8_t id, uint8_t flags, bool le, const uint8_t* p, size_t n) {
    ByteReader r(p, n, le);
    switch (id) {
      case kData:
        return data(flags, r, p, n, le);
      case kDataFrag:
        return data_frag(flags, r, p, n, le);
      case kHeartbeat:
        return heartbeat(flags, r);
      case kAckNack:
        return acknack(flags, r);
      case kGap:
        return gap(r);
      case kNackFrag:
        return nack_frag(r);
      case kHeartbeatFrag:
        return heartbeat_frag(r);
      case kInfoTs:
        return info_ts(flags, r);
      case kInfoDst:
        return info_dst(p, n);
      case kInfoSrc:
        return info_src(p, n);
      default:
        return DecodeError::kNone;  // PAD, INFO_REPLY, unknown and vendor submessages: skipped
    }
  }

  DecodeError heartbeat(uint8_t flags, ByteReader& r) {
    HeartbeatSubmessage m;
    m.reader_id.value = r.u32_be();
    m.writer_id.value = r.u32_be();
    m.first = read_sn(r);
    m.last = read_sn(r);
    m.count = r.u32();
    if (!r.ok()) return DecodeError::kTruncated;
    if (m.first < 1 || m.last < m.first - 1) return DecodeError::kBadSequenceNumber;
    m.final = flags & kHeartbeatFlagFinal;
    m.liveliness = flags & kHeartbeatFlagLiveliness;
    v_.on_heartbeat(ctx_, m);
    return DecodeError::kNone;
  }

  DecodeError acknack(uint8_t flags, ByteReader& r) {
    AckNackSubmessage m;
    m.reader_id.value = r.u32_be();
    m.writer_id.value = r.u32_be();
    m.set.base = read_sn(r);
    if (!r.ok()) return DecodeError::kTruncated;
    if (!read_set_bits(r, m.set)) return DecodeError::kBadSet;
    // bitmapBase 0 with no bits is the pre-emptive ACKNACK of Fast DDS's (and RTI Connext's)
    // readers: the base-1 one it stands for.
    if (m.set.base == 0 && m.set.num_bits == 0) m.set.base = 1;
    if (m.set.base < 1) return DecodeError::kBadSet;
    m.count = r.u32();
    if (!r.ok()) return DecodeError::kTruncated;
    m.final = flags & kAckNackFlagFinal;
    v_.on_acknack(ctx_, m);
    return DecodeError::kNone;
  }

  DecodeError gap(ByteReader& r) {
    GapSubmessage m;
    m.reader_id.value = r.u32_be();
    m.writer_id.value = r.u32_be();
    m.gap_start = read_sn(r);
    m.gap_list.base = read_sn(r);
    if (!r.ok()) return DecodeError::kTruncated;
    if (m.gap_start < 1) return DecodeError::kBadSequenceNumber;
    if (m.gap_list.base < m.gap_start || !read_set_bits(r, m.gap_list)) {
      return DecodeError::kBadSet;
    }
    v_.on_gap(ctx_, m);
    return DecodeError::kNone;
  }

  DecodeError nack_frag(ByteReader& r) {
    NackFragSubmessage m;
    m.reader_id.value = r.u32_be();
    m.writer_id.value = r.u32_be();
    m.sn = read_sn(r);
    m.fragments.base = r.u32();
    if (!r.ok()) return DecodeError::kTruncated;
    if (m.sn < 1) return DecodeError::kBadSequenceNumber;
    if (m.fragments.base < 1 || !read_set_bits(r, m.fragments)) return DecodeError::kBadSet;
    m.count = r.u32();
    if (!r.ok()) return DecodeError::kTruncated;
    v_.on_nack_frag(ctx_, m);
    return DecodeError::kNone;
  }

  DecodeError heartbeat_frag(ByteReader& r) {
    HeartbeatFragSubmessage m;
    m.reader_id.value = r.u32_be();
    m.writer_id.value = r.u32_be();
    m.sn = read_sn(r);
    m.last_fragment = r.u32();
    m.count = r.u32();
    if (!r.ok()) return DecodeError::kTruncated;
    if (m.sn < 1) return DecodeError::kBadSequenceNumber;
    if (m.last_fragment < 1) return DecodeError::kBadFragment;
    v_.on_heartbeat_frag(ctx_, m);
    return DecodeError::kNone;
  }

  DecodeError info_ts(uint8_t flags, ByteReader& r) {
    if (flags & kInfoTsFlagInvalidate) {
      ctx_.has_timestamp = false;
      return DecodeError::kNone;
    }
    const int32_t s = r.i32();
    const uint32_t f = r.u32();
    if (!r.ok()) return DecodeError::kTruncated;
    ctx_.has_timestamp = true;
    ctx_.timestamp = time_from_wire(s, f);
    return DecodeError::kNone;
  }

  DecodeError info_dst(const uint8_t* p, size_t n) {
    if (n < 12) return DecodeError::kTruncated;
    std::memcpy(ctx_.dest_prefix.data(), p, 12);
    return DecodeError::kNone;
  }

  DecodeError info_src(const uint8_t* p, size_t n) {
    if (n < 20) return DecodeError::kTruncated;
    ctx_.source_version[0] = p[4];
    ctx_.source_version[1] = p[5];
    ctx_.source_vendor[0] = p[6];
    ctx_.source_vendor[1] = p[7];
    std::memcpy(ctx_.source_prefix.data(), p + 8, 12);
    ctx_.has_timestamp = false;
    ctx_.dest_prefix = {};
    return DecodeError::kNone;
  }

  // Common prefix of DATA and DATA_FRAG: extraFlags, octetsToInlineQos, ids, writerSN.
  DecodeError data_prefix(ByteReader& r, EntityId& reader, EntityId& writer, SequenceNumber& sn,
                          uint16_t& to_inline_qos) {
    r.u16();  // extraFlags
    to_inline_qos = r.u16();
    reader.value = r.u32_be();
    writer.value = r.u32_be();
    sn = read_sn(r);
    if (!r.ok()) return DecodeError::kTruncated;
    if (sn < 1) return DecodeError::kBadSequenceNumber;
    return DecodeError::kNone;
  }

  DecodeError data(uint8_t flags, ByteReader& r, const uint8_t* p, size_t n, bool le) {
    DataSubmessage m;
    uint16_t to_qos = 0;
    if (auto e = data_prefix(r, m.reader_id, m.writer_id, m.sn, to_qos); e != DecodeError::kNone) {
      return e;
    }
    m.has_data = flags & kDataFlagData;
    m.has_key = flags & kDataFlagKey;
    if (m.has_data && m.has_key) return DecodeError::kBadFlags;
    // octetsToInlineQos counts from the byte after itself (offset 4 of the body).
    size_t off = 4 + static_cast<size_t>(to_qos);
    if (to_qos < 16 || off > n) return DecodeError::kTruncated;
    if (flags & kDataFlagInlineQos) {
      size_t used = 0;
      if (!read_inline_qos(p + off, n - off, le, m.qos, used)) {
        return DecodeError::kBadParameterList;
      }
      m.inline_qos = p + off;
      m.inline_qos_size = used;
      off += used;
    }
    if (m.has_data || m.has_key) {
      m.payload = p + off;
      m.payload_size = n - off;
    }
    v_.on_data(ctx_, m);
    return DecodeError::kNone;
  }

  DecodeError data_frag(uint8_t flags, ByteReader& r, const uint8_t* p, size_t n, bool le) {
    DataFragSubmessage m;
    uint16_t to_qos = 0;
    if (auto e = data_prefix(r, m.reader_id, m.writer_id, m.sn, to_qos); e != DecodeError::kNone) {
      return e;
    }
    m.fragment_start = r.u32();
    m.fragments_in_submessage = r.u16();
    m.fragment_size = r.u16();
    m.sample_size = r.u32();
    if (!r.ok()) return DecodeError::kTruncated;
    m.has_key = flags & kDataFragFlagKey;
    if (m.sample_size > limits_.max_sample_size) return DecodeError::kSampleTooLarge;
    if (m.fragment_start < 1 || m.fragments_in_submessage < 1 || m.fragment_size < 1 ||
        m.sample_size < 1) {
      return DecodeError::kBadFragment;
    }
    const uint64_t total_frags = (uint64_t{m.sample_size} + m.fragment_size - 1) / m.fragment_size;
    const uint64_t last = uint64_t{m.fragment_start} + m.fragments_in_submessage - 1;
    if (last > total_frags) return DecodeError::kBadFragment;
    size_t off = 4 + static_cast<size_t>(to_qos);
    if (to_qos < 28 || off > n) return DecodeError::kTruncated;
    if (flags & kDataFragFlagInlineQos) {
      size_t used = 0;
      if (!read_inline_qos(p + off, n - off, le, m.qos, used)) {
        return DecodeError::kBadParameterList;
      }
      off += used;
    }
    const uint64_t begin = uint64_t{m.fragment_start - 1} * m.fragment_size;
    const uint64_t end = std::min<uint64_t>(last * m.fragment_size, m.sample_size);
    const uint64_t expect = end - begin;
    if (n - off < expect) return DecodeError::kBadFragment;
    m.data = p + off;
    m.data_size = static_cast<size_t>(expect);
    v_.on_data_frag(ctx_, m);
    return DecodeError::kNone;
  }

  const uint8_t* data_;
  size_t size_;
  const DecodeLimits& limits_;
  Visitor& v_;
  ReceiveContext ctx_;
};

}  // namespace

DecodeError decode_message(const uint8_t* data, size_t size, const DecodeLimits& limits,
                           Visitor& visitor) {
  return Walker(data, size, limits, visitor).run();
}

// ---- encoding -------------------------------------------------------------------------------

namespace {

inline void put16(uint8_t* p, uint16_t v) {
  std::memcpy(p, &v, 2);
}
inline void put32(uint8_t* p, uint32_t v) {
  std::memcpy(p, &v, 4);
}
inline void put32_be(uint8_t* p, uint32_t v) {
  v = __builtin_bswap32(v);
  std::memcpy(p, &v, 4);
}
inline void put_sn(uint8_t* p, SequenceNumber sn) {
  put32(p, static_cast<uint32_t>(static_cast<uint64_t>(sn) >> 32));
  put32(p + 4, static_cast<uint32_t>(sn));
}

// Inline QoS parameter list; returns bytes written (qos.encoded_size()).
size_t put_inline_qos(uint8_t* p, const OutgoingInlineQos& qos) {
  uint8_t* start = p;
  if (qos.key_hash) {
    put16(p, kPidKeyHash);
    put16(p + 2, 16);
    std::memcpy(p + 4, qos.key_hash->value.data(), 16);
    p += 20;
  }
  if (qos.status_info) {
    put16(p, kPidStatusInfo);
    put16(p + 2, 4);
    put32_be(p + 4, qos.status_info);
    p += 8;
  }
  put16(p, kPidSentinel);
  put16(p + 2, 0);
  p += 4;
  return static_cast<size_t>(p - start);
}

size_t put_set(uint8_t* p, const NumberSet& set, bool sequence) {
  size_t n = 0;
  if (sequence) {
    put_sn(p, set.base);
    n = 8;
  } else {
    put32(p, static_cast<uint32_t>(set.base));
    n = 4;
  }
  put32(p + n, set.num_bits);
  n += 4;
  const uint32_t words = (set.num_bits + 31) / 32;
  for (uint32_t i = 0; i < words; ++i, n += 4) put32(p + n, set.bits[i]);
  return n;
}

}  // namespace

static_assert(std::endian::native == std::endian::little, "encoder writes native little endian");

void MessageBuilder::header(const GuidPrefix& prefix) {
  std::memcpy(buf_, "RTPS", 4);
  buf_[4] = kProtocolMajor;
  buf_[5] = kProtocolMinor;
  buf_[6] = kVendorId[0];
  buf_[7] = kVendorId[1];
  std::memcpy(buf_ + 8, prefix.data(), 12);
  size_ = kHeaderSize;
}

uint8_t* MessageBuilder::begin_submessage(uint8_t id, uint8_t flags, size_t body_size) {
  if (body_size % 4 != 0 || body_size > 0xffff || cap_ - size_ < 4 + body_size) return nullptr;
  uint8_t* p = buf_ + size_;
  p[0] = id;
  p[1] = flags | kFlagLittleEndian;
  put16(p + 2, static_cast<uint16_t>(body_size));
  size_ += 4 + body_size;
  return p + 4;
}

bool MessageBuilder::info_dst(const GuidPrefix& prefix) {
  uint8_t* p = begin_submessage(kInfoDst, 0, 12);
  if (!p) return false;
  std::memcpy(p, prefix.data(), 12);
  return true;
}

bool MessageBuilder::info_ts(Time t) {
  uint8_t* p = begin_submessage(kInfoTs, 0, 8);
  if (!p) return false;
  int32_t s;
  uint32_t f;
  time_to_wire(t, s, f);
  put32(p, static_cast<uint32_t>(s));
  put32(p + 4, f);
  return true;
}

size_t MessageBuilder::data_overhead(const OutgoingInlineQos& qos) {
  return 12 /* INFO_TS */ + 4 + 20 + (qos.empty() ? 0 : qos.encoded_size()) + 3 /* pad */;
}

bool MessageBuilder::data_header(EntityId reader, EntityId writer, SequenceNumber sn,
                                 const OutgoingInlineQos& qos, size_t payload, bool key_only) {
  const size_t qos_size = qos.empty() ? 0 : qos.encoded_size();
  const size_t body = 20 + qos_size + payload + padding(payload);
  uint8_t flags = qos_size ? kDataFlagInlineQos : 0;
  if (payload) flags |= key_only ? kDataFlagKey : kDataFlagData;
  // Room for the header part only; the payload is the caller's.
  if (body % 4 != 0 || body > 0xffff || cap_ - size_ < 4 + 20 + qos_size) return false;
  uint8_t* p = buf_ + size_;
  p[0] = kData;
  p[1] = flags | kFlagLittleEndian;
  put16(p + 2, static_cast<uint16_t>(body));
  p += 4;
  put16(p, 0);
  put16(p + 2, 16);
  put32_be(p + 4, reader.value);
  put32_be(p + 8, writer.value);
  put_sn(p + 12, sn);
  p += 20;
  if (qos_size) put_inline_qos(p, qos);
  size_ += 4 + 20 + qos_size;
  return true;
}

bool MessageBuilder::data(EntityId reader, EntityId writer, SequenceNumber sn,
                          const OutgoingInlineQos& qos, const uint8_t* p1, size_t n1,
                          const uint8_t* p2, size_t n2, bool key_only) {
  const size_t payload = n1 + n2;
  const size_t before = size_;
  if (payload + padding(payload) > remaining() ||
      !data_header(reader, writer, sn, qos, payload, key_only)) {
    return false;
  }
  if (cap_ - size_ < payload + padding(payload)) {
    size_ = before;
    return false;
  }
  uint8_t* p = buf_ + size_;
  if (n1) std::memcpy(p, p1, n1);
  if (n2) std::memcpy(p + n1, p2, n2);
  std::memset(p + payload, 0, padding(payload));
  size_ += payload + padding(payload);
  return true;
}

bool MessageBuilder::data_frag_header(EntityId reader, EntityId writer, SequenceNumber sn,
                                      const OutgoingInlineQos& qos, uint32_t fragment_start,
                                      uint16_t fragment_count, uint16_t fragment_size,
                                      uint32_t sample_size, size_t size) {
  const size_t qos_size = qos.empty() ? 0 : qos.encoded_size();
  const size_t body = 32 + qos_size + size + padding(size);
  if (body > 0xffff || cap_ - size_ < 4 + 32 + qos_size) return false;
  uint8_t* p = buf_ + size_;
  p[0] = kDataFrag;
  p[1] = (qos_size ? kDataFragFlagInlineQos : 0) | kFlagLittleEndian;
  put16(p + 2, static_cast<uint16_t>(body));
  p += 4;
  put16(p, 0);
  put16(p + 2, 28);
  put32_be(p + 4, reader.value);
  put32_be(p + 8, writer.value);
  put_sn(p + 12, sn);
  put32(p + 20, fragment_start);
  put16(p + 24, fragment_count);
  put16(p + 26, fragment_size);
  put32(p + 28, sample_size);
  p += 32;
  if (qos_size) put_inline_qos(p, qos);
  size_ += 4 + 32 + qos_size;
  return true;
}

bool MessageBuilder::data_frag(EntityId reader, EntityId writer, SequenceNumber sn,
                               const OutgoingInlineQos& qos, uint32_t fragment_start,
                               uint16_t fragment_count, uint16_t fragment_size,
                               uint32_t sample_size, const uint8_t* data, size_t size) {
  const size_t before = size_;
  if (!data_frag_header(reader, writer, sn, qos, fragment_start, fragment_count, fragment_size,
                        sample_size, size)) {
    return false;
  }
  if (cap_ - size_ < size + padding(size)) {
    size_ = before;
    return false;
  }
  uint8_t* p = buf_ + size_;
  if (size) std::memcpy(p, data, size);
  std::memset(p + size, 0, padding(size));
  size_ += size + padding(size);
  return true;
}

bool MessageBuilder::heartbeat(EntityId reader, EntityId writer, SequenceNumber first,
                               SequenceNumber last, uint32_t count, bool final, bool liveliness) {
  uint8_t flags = (final ? kHeartbeatFlagFinal : 0) | (liveliness ? kHeartbeatFlagLiveliness : 0);
  uint8_t* p = begin_submessage(kHeartbeat, flags, 28);
  if (!p) return false;
  put32_be(p, reader.value);
  put32_be(p + 4, writer.value);
  put_sn(p + 8, first);
  put_sn(p + 16, last);
  put32(p + 24, count);
  return true;
}

bool MessageBuilder::acknack(EntityId reader, EntityId writer, const NumberSet& set, uint32_t count,
                             bool final) {
  const size_t body = 8 + 12 + 4 * ((set.num_bits + 31) / 32) + 4;
  uint8_t* p = begin_submessage(kAckNack, final ? kAckNackFlagFinal : 0, body);
  if (!p) return false;
  put32_be(p, reader.value);
  put32_be(p + 4, writer.value);
  const size_t n = put_set(p + 8, set, true);
  put32(p + 8 + n, count);
  return true;
}

bool MessageBuilder::gap(EntityId reader, EntityId writer, SequenceNumber start,
                         const NumberSet& list) {
  const size_t body = 8 + 8 + 12 + 4 * ((list.num_bits + 31) / 32);
  uint8_t* p = begin_submessage(kGap, 0, body);
  if (!p) return false;
  put32_be(p, reader.value);
  put32_be(p + 4, writer.value);
  put_sn(p + 8, start);
  put_set(p + 16, list, true);
  return true;
}

bool MessageBuilder::nack_frag(EntityId reader, EntityId writer, SequenceNumber sn,
                               const NumberSet& frags, uint32_t count) {
  const size_t body = 8 + 8 + 8 + 4 * ((frags.num_bits + 31) / 32) + 4;
  uint8_t* p = begin_submessage(kNackFrag, 0, body);
  if (!p) return false;
  put32_be(p, reader.value);
  put32_be(p + 4, writer.value);
  put_sn(p + 8, sn);
  const size_t n = put_set(p + 16, frags, false);
  put32(p + 16 + n, count);
  return true;
}

bool MessageBuilder::heartbeat_frag(EntityId reader, EntityId writer, SequenceNumber sn,
                                    uint32_t last_fragment, uint32_t count) {
  uint8_t* p = begin_submessage(kHeartbeatFrag, 0, 24);
  if (!p) return false;
  put32_be(p, reader.value);
  put32_be(p + 4, writer.value);
  put_sn(p + 8, sn);
  put32(p + 16, last_fragment);
  put32(p + 20, count);
  return true;
}

}  // namespace pubsub::wire
