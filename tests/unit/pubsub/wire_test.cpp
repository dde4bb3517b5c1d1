// Wire codecs: MessageBuilder -> decode_message round trips for every submessage kind, the exact
// little-endian layout the encoder produces (checked against bytes built by hand from the RTPS
// tables), big-endian submessages, receiver state (INFO_TS, INFO_DST, INFO_SRC), skipping of
// unknown and vendor submessages, Time_t and KeyHash/MD5, parameter lists, and SPDP/SEDP
// discovery data. Malformed input is covered by malformed_test.cpp.
//
// The hidden test "Generate the fuzz seed corpora" [.generate] at the end writes
// tests/fuzz/corpus/{rtps_message,discovery_data}; see tests/fuzz/pubsub.cmake.
#include <array>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "pubsub/basics.hpp"
#include "wire/constants.hpp"
#include "wire/discovery_data.hpp"
#include "wire/message.hpp"
#include "wire/parameter_list.hpp"
#include "wire/type_lookup.hpp"

using namespace pubsub;
using namespace pubsub::wire;
using namespace std::chrono_literals;

namespace {

constexpr GuidPrefix kSrc{0x01, 0x99, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9, 0xaa};
constexpr GuidPrefix kDst{0x01, 0x10, 0xb1, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7, 0xb8, 0xb9, 0xba};
constexpr EntityId kReader{0x00000107};
constexpr EntityId kWriter{0x00000102};

// ---- hand-built bytes -------------------------------------------------------------------------

// Serializes fields in either byte order; entity ids and GUID prefixes are always as written.
class Raw {
 public:
  explicit Raw(bool le = true) : le_(le) {}
  Raw& u8(uint8_t v) {
    b.push_back(v);
    return *this;
  }
  Raw& u16(uint16_t v) {
    return le_ ? u8(static_cast<uint8_t>(v)).u8(static_cast<uint8_t>(v >> 8))
               : u8(static_cast<uint8_t>(v >> 8)).u8(static_cast<uint8_t>(v));
  }
  Raw& u32(uint32_t v) {
    return le_ ? u16(static_cast<uint16_t>(v)).u16(static_cast<uint16_t>(v >> 16))
               : u16(static_cast<uint16_t>(v >> 16)).u16(static_cast<uint16_t>(v));
  }
  Raw& be32(uint32_t v) {  // entity ids
    return u8(static_cast<uint8_t>(v >> 24))
        .u8(static_cast<uint8_t>(v >> 16))
        .u8(static_cast<uint8_t>(v >> 8))
        .u8(static_cast<uint8_t>(v));
  }
  Raw& sn(int64_t v) {
    return u32(static_cast<uint32_t>(static_cast<uint64_t>(v) >> 32)).u32(static_cast<uint32_t>(v));
  }
  Raw& bytes(const uint8_t* p, size_t n) {
    b.insert(b.end(), p, p + n);
    return *this;
  }
  Raw& bytes(const std::vector<uint8_t>& v) { return bytes(v.data(), v.size()); }
  Raw& prefix(const GuidPrefix& p) { return bytes(p.data(), p.size()); }
  Raw& zeros(size_t n) {
    b.insert(b.end(), n, 0);
    return *this;
  }
  // Parameter list pieces: a parameter header, a GUID parameter, a CDR string parameter.
  Raw& param(uint16_t pid, uint16_t length) { return u16(pid).u16(length); }
  Raw& guid(uint16_t pid, const GuidPrefix& p, uint32_t entity) {
    return param(pid, 16).prefix(p).be32(entity);
  }
  Raw& str(uint16_t pid, const std::string& s) {
    const size_t padded = (4 + s.size() + 1 + 3) & ~size_t{3};
    param(pid, static_cast<uint16_t>(padded)).u32(static_cast<uint32_t>(s.size() + 1));
    return bytes(reinterpret_cast<const uint8_t*>(s.data()), s.size()).zeros(padded - 4 - s.size());
  }
  Raw& sentinel() { return param(kPidSentinel, 0); }
  std::vector<uint8_t> b;

 private:
  bool le_;
};

std::vector<uint8_t> rtps_header(const GuidPrefix& prefix = kSrc) {
  Raw r;
  r.u8('R').u8('T').u8('P').u8('S').u8(kProtocolMajor).u8(kProtocolMinor);
  r.u8(kVendorId[0]).u8(kVendorId[1]).prefix(prefix);
  return r.b;
}

// Appends a submessage; octetsToNextHeader is the body size unless given.
void add_sub(std::vector<uint8_t>& msg, uint8_t id, uint8_t flags, const std::vector<uint8_t>& body,
             std::optional<uint16_t> octets = std::nullopt) {
  Raw h(flags & kFlagLittleEndian);
  h.u8(id).u8(flags).u16(octets ? *octets : static_cast<uint16_t>(body.size()));
  msg.insert(msg.end(), h.b.begin(), h.b.end());
  msg.insert(msg.end(), body.begin(), body.end());
}

// ---- MessageBuilder over its own buffer -------------------------------------------------------

class Msg {
 public:
  explicit Msg(size_t capacity = 65536) : buf_(capacity), b_(buf_.data(), capacity) {
    b_.header(kSrc);
  }
  Msg(const Msg&) = delete;
  Msg& operator=(const Msg&) = delete;
  MessageBuilder* operator->() { return &b_; }
  std::vector<uint8_t> bytes() const {
    return {buf_.begin(), buf_.begin() + static_cast<long>(b_.size())};
  }
  // The submessages only (after the 20-byte header).
  std::vector<uint8_t> body() const {
    return {buf_.begin() + kHeaderSize, buf_.begin() + static_cast<long>(b_.size())};
  }

 private:
  std::vector<uint8_t> buf_;
  MessageBuilder b_;
};

// ---- a Visitor that keeps copies of everything --------------------------------------------

struct Recorder final : Visitor {
  std::vector<uint8_t> ids;  // submessage ids in delivery order
  std::vector<ReceiveContext> ctxs;
  std::vector<DataSubmessage> data;
  std::vector<std::vector<uint8_t>> payloads, inline_qos;
  std::vector<DataFragSubmessage> frags;
  std::vector<std::vector<uint8_t>> frag_data;
  std::vector<HeartbeatSubmessage> heartbeats;
  std::vector<AckNackSubmessage> acknacks;
  std::vector<GapSubmessage> gaps;
  std::vector<NackFragSubmessage> nack_frags;
  std::vector<HeartbeatFragSubmessage> hb_frags;

  void seen(uint8_t id, const ReceiveContext& c) {
    ids.push_back(id);
    ctxs.push_back(c);
  }
  void on_data(const ReceiveContext& c, const DataSubmessage& m) override {
    seen(kData, c);
    data.push_back(m);
    payloads.emplace_back(m.payload, m.payload + m.payload_size);
    inline_qos.emplace_back(m.inline_qos, m.inline_qos + m.inline_qos_size);
  }
  void on_data_frag(const ReceiveContext& c, const DataFragSubmessage& m) override {
    seen(kDataFrag, c);
    frags.push_back(m);
    frag_data.emplace_back(m.data, m.data + m.data_size);
  }
  void on_heartbeat(const ReceiveContext& c, const HeartbeatSubmessage& m) override {
    seen(kHeartbeat, c);
    heartbeats.push_back(m);
  }
  void on_acknack(const ReceiveContext& c, const AckNackSubmessage& m) override {
    seen(kAckNack, c);
    acknacks.push_back(m);
  }
  void on_gap(const ReceiveContext& c, const GapSubmessage& m) override {
    seen(kGap, c);
    gaps.push_back(m);
  }
  void on_nack_frag(const ReceiveContext& c, const NackFragSubmessage& m) override {
    seen(kNackFrag, c);
    nack_frags.push_back(m);
  }
  void on_heartbeat_frag(const ReceiveContext& c, const HeartbeatFragSubmessage& m) override {
    seen(kHeartbeatFrag, c);
    hb_frags.push_back(m);
  }
};

DecodeError decode(const std::vector<uint8_t>& msg, Recorder& r, DecodeLimits limits = {}) {
  // An exact-size heap copy, so a sanitizer build catches any read past the end.
  std::unique_ptr<uint8_t[]> copy(new uint8_t[msg.size()]);
  if (!msg.empty()) std::memcpy(copy.get(), msg.data(), msg.size());
  return decode_message(copy.get(), msg.size(), limits, r);
}

std::vector<uint8_t> seq_bytes(size_t n, uint8_t start = 1) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(start + i * 7);
  return v;
}

KeyHash key_hash_of(std::initializer_list<uint8_t> bytes) {
  const std::vector<uint8_t> v(bytes);
  return KeyHash::from_key_cdr_be(Bytes(reinterpret_cast<const std::byte*>(v.data()), v.size()));
}

NumberSet make_set(int64_t base, uint32_t num_bits, std::initializer_list<uint32_t> set_bits) {
  NumberSet s;
  s.base = base;
  s.num_bits = num_bits;
  for (uint32_t i : set_bits) s.set(i);
  return s;
}

void require_same_set(const NumberSet& a, const NumberSet& b) {
  REQUIRE(a.base == b.base);
  REQUIRE(a.num_bits == b.num_bits);
  for (int i = 0; i < 8; ++i) {
    INFO("word " << i);
    REQUIRE(a.bits[i] == b.bits[i]);
  }
}

std::string hex(const std::array<uint8_t, 16>& a) {
  std::string s;
  char buf[3];
  for (uint8_t b : a) {
    std::snprintf(buf, sizeof buf, "%02x", b);
    s += buf;
  }
  return s;
}

// Inline QoS exactly as RTPS 9.6.3 lays it out (little endian PIDs, big endian status info).
std::vector<uint8_t> inline_qos_le(const KeyHash* key, uint32_t status) {
  Raw q;
  if (key) q.u16(kPidKeyHash).u16(16).bytes(key->value.data(), 16);
  if (status) q.u16(kPidStatusInfo).u16(4).be32(status);
  q.u16(kPidSentinel).u16(0);
  return q.b;
}

}  // namespace

// ---- round trips, one submessage kind at a time -------------------------------------------------

TEST_CASE("decode_message accepts a bare header and reports the sender") {
  Recorder r;
  REQUIRE(decode(rtps_header(), r) == DecodeError::kNone);
  REQUIRE(r.ids.empty());
}

TEST_CASE("MessageBuilder DATA without inline QoS round-trips and matches the RTPS layout") {
  const std::vector<uint8_t> encap{0x00, 0x01, 0x00, 0x02};  // CDR_LE, 2 bytes of padding
  const std::vector<uint8_t> body = seq_bytes(6);
  const SequenceNumber sn = (SequenceNumber{5} << 32) | 7;  // exercises the high word
  Msg m;
  REQUIRE(m->data(kReader, kWriter, sn, {}, encap.data(), encap.size(), body.data(), body.size()));

  // The layout, by hand: octets = 20 + 10 payload + 2 padding.
  Raw d;
  d.u16(0).u16(16).be32(kReader.value).be32(kWriter.value).sn(sn).bytes(encap).bytes(body).zeros(2);
  std::vector<uint8_t> expect = rtps_header();
  add_sub(expect, kData, kFlagLittleEndian | kDataFlagData, d.b);
  REQUIRE(m.bytes() == expect);

  Recorder r;
  REQUIRE(decode(m.bytes(), r) == DecodeError::kNone);
  REQUIRE(r.ids == std::vector<uint8_t>{kData});
  const DataSubmessage& got = r.data[0];
  REQUIRE(got.reader_id == kReader);
  REQUIRE(got.writer_id == kWriter);
  REQUIRE(got.sn == sn);
  REQUIRE(got.has_data);
  REQUIRE_FALSE(got.has_key);
  REQUIRE_FALSE(got.qos.has_key_hash);
  REQUIRE(got.qos.status_info == 0);
  REQUIRE(got.inline_qos == nullptr);
  REQUIRE(got.inline_qos_size == 0);
  // The payload view runs to the end of the submessage: the 4-byte alignment padding is part of
  // it (the encapsulation options carry the pad count for the reader to strip).
  std::vector<uint8_t> payload = encap;
  payload.insert(payload.end(), body.begin(), body.end());
  payload.insert(payload.end(), 2, 0);
  REQUIRE(r.payloads[0] == payload);
  REQUIRE(r.ctxs[0].source_prefix == kSrc);
  REQUIRE(r.ctxs[0].source_vendor[0] == kVendorId[0]);
  REQUIRE(r.ctxs[0].source_vendor[1] == kVendorId[1]);
  REQUIRE(r.ctxs[0].source_version[0] == kProtocolMajor);
  REQUIRE(r.ctxs[0].source_version[1] == kProtocolMinor);
  REQUIRE(r.ctxs[0].dest_prefix == GuidPrefix{});
  REQUIRE_FALSE(r.ctxs[0].has_timestamp);
}

TEST_CASE("MessageBuilder DATA with key hash and status info round-trips") {
  const KeyHash key = key_hash_of({0, 0, 0, 42});
  const std::vector<uint8_t> payload{0x00, 0x01, 0x00, 0x00, 0xde, 0xad, 0xbe, 0xef};

  SECTION("data with a key hash") {
    OutgoingInlineQos q;
    q.key_hash = &key;
    Msg m;
    REQUIRE(m->data(kReader, kWriter, 3, q, payload.data(), payload.size()));
    Raw d;
    d.u16(0).u16(16).be32(kReader.value).be32(kWriter.value).sn(3);
    d.bytes(inline_qos_le(&key, 0)).bytes(payload);
    std::vector<uint8_t> expect = rtps_header();
    add_sub(expect, kData, kFlagLittleEndian | kDataFlagInlineQos | kDataFlagData, d.b);
    REQUIRE(m.bytes() == expect);

    Recorder r;
    REQUIRE(decode(m.bytes(), r) == DecodeError::kNone);
    REQUIRE(r.ids == std::vector<uint8_t>{kData});
    REQUIRE(r.data[0].has_data);
    REQUIRE(r.data[0].qos.has_key_hash);
    REQUIRE(r.data[0].qos.key_hash == key);
    REQUIRE(r.data[0].qos.status_info == 0);
    REQUIRE(r.inline_qos[0] == inline_qos_le(&key, 0));
    REQUIRE(r.payloads[0] == payload);
  }

  SECTION("dispose: key only, key hash and status info") {
    OutgoingInlineQos q;
    q.key_hash = &key;
    q.status_info = kStatusDisposed | kStatusUnregistered;
    Msg m;
    REQUIRE(m->data(kReader, kWriter, 9, q, payload.data(), payload.size(), nullptr, 0,
                    /*key_only=*/true));
    Raw d;
    d.u16(0).u16(16).be32(kReader.value).be32(kWriter.value).sn(9);
    d.bytes(inline_qos_le(&key, 3)).bytes(payload);
    std::vector<uint8_t> expect = rtps_header();
    add_sub(expect, kData, kFlagLittleEndian | kDataFlagInlineQos | kDataFlagKey, d.b);
    REQUIRE(m.bytes() == expect);

    Recorder r;
    REQUIRE(decode(m.bytes(), r) == DecodeError::kNone);
    REQUIRE(r.data[0].sn == 9);
    REQUIRE_FALSE(r.data[0].has_data);
    REQUIRE(r.data[0].has_key);
    REQUIRE(r.data[0].qos.key_hash == key);
    REQUIRE(r.data[0].qos.status_info == 3);
    REQUIRE(r.inline_qos[0].size() == 32);
    REQUIRE(r.payloads[0] == payload);
  }

  SECTION("status info alone, no payload (unregister without key)") {
    OutgoingInlineQos q;
    q.status_info = kStatusUnregistered;
    Msg m;
    REQUIRE(m->data(kReader, kWriter, 2, q, nullptr, 0));
    Recorder r;
    REQUIRE(decode(m.bytes(), r) == DecodeError::kNone);
    REQUIRE_FALSE(r.data[0].has_data);
    REQUIRE_FALSE(r.data[0].has_key);
    REQUIRE_FALSE(r.data[0].qos.has_key_hash);
    REQUIRE(r.data[0].qos.status_info == kStatusUnregistered);
    REQUIRE(r.data[0].payload == nullptr);
    REQUIRE(r.data[0].payload_size == 0);
  }
}

TEST_CASE("MessageBuilder DATA_FRAG round-trips with exactly the fragment bytes") {
  // A 1000-byte sample in 256-byte fragments: 4 fragments, the last one 232 bytes.
  const std::vector<uint8_t> sample = seq_bytes(1000, 3);
  const KeyHash key = key_hash_of({1, 2, 3, 4, 5});

  SECTION("fragments 2..3, no inline QoS") {
    Msg m;
    REQUIRE(m->data_frag(kReader, kWriter, 11, {}, 2, 2, 256, 1000, sample.data() + 256, 512));
    Raw d;
    d.u16(0).u16(28).be32(kReader.value).be32(kWriter.value).sn(11);
    d.u32(2).u16(2).u16(256).u32(1000).bytes(sample.data() + 256, 512);
    std::vector<uint8_t> expect = rtps_header();
    add_sub(expect, kDataFrag, kFlagLittleEndian, d.b);
    REQUIRE(m.bytes() == expect);

    Recorder r;
    REQUIRE(decode(m.bytes(), r) == DecodeError::kNone);
    REQUIRE(r.ids == std::vector<uint8_t>{kDataFrag});
    const DataFragSubmessage& f = r.frags[0];
    REQUIRE(f.reader_id == kReader);
    REQUIRE(f.writer_id == kWriter);
    REQUIRE(f.sn == 11);
    REQUIRE_FALSE(f.has_key);
    REQUIRE_FALSE(f.qos.has_key_hash);
    REQUIRE(f.fragment_start == 2);
    REQUIRE(f.fragments_in_submessage == 2);
    REQUIRE(f.fragment_size == 256);
    REQUIRE(f.sample_size == 1000);
    REQUIRE(r.frag_data[0] == std::vector<uint8_t>(sample.begin() + 256, sample.begin() + 768));
  }

  SECTION("last, short fragment with a key hash: the view excludes the padding") {
    OutgoingInlineQos q;
    q.key_hash = &key;
    Msg m;
    REQUIRE(m->data_frag(kReader, kWriter, 11, q, 4, 1, 256, 1000, sample.data() + 768, 232));
    Raw d;
    d.u16(0).u16(28).be32(kReader.value).be32(kWriter.value).sn(11);
    d.u32(4).u16(1).u16(256).u32(1000).bytes(inline_qos_le(&key, 0));
    d.bytes(sample.data() + 768, 232);
    std::vector<uint8_t> expect = rtps_header();
    add_sub(expect, kDataFrag, kFlagLittleEndian | kDataFragFlagInlineQos, d.b);
    REQUIRE(m.bytes() == expect);

    Recorder r;
    REQUIRE(decode(m.bytes(), r) == DecodeError::kNone);
    REQUIRE(r.frags[0].qos.has_key_hash);
    REQUIRE(r.frags[0].qos.key_hash == key);
    REQUIRE(r.frags[0].fragment_start == 4);
    REQUIRE(r.frags[0].data_size == 232);
    REQUIRE(r.frag_data[0] == std::vector<uint8_t>(sample.begin() + 768, sample.end()));
  }

  SECTION("a 1-byte sample in one fragment") {
    Msg m;
    const uint8_t one = 0x5a;
    REQUIRE(m->data_frag(kReader, kWriter, 1, {}, 1, 1, 1344, 1, &one, 1));
    Recorder r;
    REQUIRE(decode(m.bytes(), r) == DecodeError::kNone);
    REQUIRE(r.frag_data[0] == std::vector<uint8_t>{0x5a});
  }
}

TEST_CASE("MessageBuilder HEARTBEAT round-trips with its flags") {
  const SequenceNumber first = (SequenceNumber{1} << 32) + 1, last = first + 99;
  Msg m;
  REQUIRE(m->heartbeat(kReader, kWriter, first, last, 77, /*final=*/true, /*liveliness=*/true));
  REQUIRE(m->heartbeat(EntityId{0}, kWriter, 1, 0, 78, false));  // empty: first = last + 1
  Raw h1, h2;
  h1.be32(kReader.value).be32(kWriter.value).sn(first).sn(last).u32(77);
  h2.be32(0).be32(kWriter.value).sn(1).sn(0).u32(78);
  std::vector<uint8_t> expect = rtps_header();
  add_sub(expect, kHeartbeat, kFlagLittleEndian | kHeartbeatFlagFinal | kHeartbeatFlagLiveliness,
          h1.b);
  add_sub(expect, kHeartbeat, kFlagLittleEndian, h2.b);
  REQUIRE(m.bytes() == expect);

  Recorder r;
  REQUIRE(decode(m.bytes(), r) == DecodeError::kNone);
  REQUIRE(r.ids == std::vector<uint8_t>{kHeartbeat, kHeartbeat});
  REQUIRE(r.heartbeats[0].reader_id == kReader);
  REQUIRE(r.heartbeats[0].writer_id == kWriter);
  REQUIRE(r.heartbeats[0].first == first);
  REQUIRE(r.heartbeats[0].last == last);
  REQUIRE(r.heartbeats[0].count == 77);
  REQUIRE(r.heartbeats[0].final);
  REQUIRE(r.heartbeats[0].liveliness);
  REQUIRE(r.heartbeats[1].reader_id == EntityId{0});
  REQUIRE(r.heartbeats[1].first == 1);
  REQUIRE(r.heartbeats[1].last == 0);
  REQUIRE(r.heartbeats[1].count == 78);
  REQUIRE_FALSE(r.heartbeats[1].final);
  REQUIRE_FALSE(r.heartbeats[1].liveliness);
}

TEST_CASE("MessageBuilder ACKNACK round-trips sets of 0 to 256 bits") {
  NumberSet full = make_set(1000, 256, {});
  for (uint32_t i = 0; i < 256; i += 3) full.set(i);
  const NumberSet cases[] = {
      make_set(1, 0, {}),               // pre-emptive ACKNACK
      make_set(5, 1, {0}),              // one bit
      make_set(7, 32, {0, 31}),         // one full word
      make_set(9, 33, {0, 32}),         // a second, partial word
      make_set(1ll << 33, 64, {63}),    // high sequence number word
      make_set(2, 256, {0, 128, 255}),  // the largest set
      full,                             // every third bit of 256
  };
  for (const NumberSet& set : cases) {
    INFO("base " << set.base << " num_bits " << set.num_bits);
    Msg m;
    REQUIRE(m->acknack(kReader, kWriter, set, 12, /*final=*/set.num_bits == 0));
    Raw a;
    a.be32(kReader.value).be32(kWriter.value).sn(set.base).u32(set.num_bits);
    for (uint32_t i = 0; i < (set.num_bits + 31) / 32; ++i) a.u32(set.bits[i]);
    a.u32(12);
    std::vector<uint8_t> expect = rtps_header();
    add_sub(expect, kAckNack, kFlagLittleEndian | (set.num_bits == 0 ? kAckNackFlagFinal : 0), a.b);
    REQUIRE(m.bytes() == expect);

    Recorder r;
    REQUIRE(decode(m.bytes(), r) == DecodeError::kNone);
    REQUIRE(r.ids == std::vector<uint8_t>{kAckNack});
    REQUIRE(r.acknacks[0].reader_id == kReader);
    REQUIRE(r.acknacks[0].writer_id == kWriter);
    REQUIRE(r.acknacks[0].count == 12);
    REQUIRE(r.acknacks[0].final == (set.num_bits == 0));
    require_same_set(r.acknacks[0].set, set);
    for (uint32_t i = 0; i < 256; ++i) REQUIRE(r.acknacks[0].set.test(i) == set.test(i));
  }
}

TEST_CASE(
    "An ACKNACK with bitmapBase 0 and no bits (Fast DDS's pre-emptive one) decodes as base 1") {
  for (const bool final : {false, true}) {
    Raw a;
    a.be32(kReader.value).be32(kWriter.value).sn(0).u32(0).u32(3);
    std::vector<uint8_t> bytes = rtps_header();
    add_sub(bytes, kAckNack, kFlagLittleEndian | (final ? kAckNackFlagFinal : 0), a.b);
    Recorder r;
    REQUIRE(decode(bytes, r) == DecodeError::kNone);
    REQUIRE(r.acknacks.size() == 1);
    REQUIRE(r.acknacks[0].set.base == 1);
    REQUIRE(r.acknacks[0].set.num_bits == 0);
    REQUIRE(r.acknacks[0].count == 3);
    REQUIRE(r.acknacks[0].final == final);
  }
}

TEST_CASE("decode_message clears set bits past numBits") {
  NumberSet set = make_set(10, 33, {});
  set.bits[0] = 0x80000001u;
  set.bits[1] = 0xffffffffu;  // only the first bit of this word is inside the set
  Msg m;
  REQUIRE(m->acknack(kReader, kWriter, set, 1, false));
  Recorder r;
  REQUIRE(decode(m.bytes(), r) == DecodeError::kNone);
  REQUIRE(r.acknacks[0].set.bits[0] == 0x80000001u);
  REQUIRE(r.acknacks[0].set.bits[1] == 0x80000000u);
  REQUIRE(r.acknacks[0].set.test(32));
  REQUIRE_FALSE(r.acknacks[0].set.test(33));
}

TEST_CASE("MessageBuilder GAP, NACK_FRAG and HEARTBEAT_FRAG round-trip") {
  const NumberSet gap_list = make_set(20, 40, {0, 5, 39});
  const NumberSet frags = make_set(3, 70, {0, 1, 69});
  Msg m;
  REQUIRE(m->gap(kReader, kWriter, 15, gap_list));
  REQUIRE(m->nack_frag(kReader, kWriter, 8, frags, 4));
  REQUIRE(m->heartbeat_frag(kReader, kWriter, 8, 31, 5));

  Raw g, nf, hf;
  g.be32(kReader.value).be32(kWriter.value).sn(15).sn(20).u32(40).u32(gap_list.bits[0]);
  g.u32(gap_list.bits[1]);
  nf.be32(kReader.value).be32(kWriter.value).sn(8).u32(3).u32(70);
  nf.u32(frags.bits[0]).u32(frags.bits[1]).u32(frags.bits[2]).u32(4);
  hf.be32(kReader.value).be32(kWriter.value).sn(8).u32(31).u32(5);
  std::vector<uint8_t> expect = rtps_header();
  add_sub(expect, kGap, kFlagLittleEndian, g.b);
  add_sub(expect, kNackFrag, kFlagLittleEndian, nf.b);
  add_sub(expect, kHeartbeatFrag, kFlagLittleEndian, hf.b);
  REQUIRE(m.bytes() == expect);

  Recorder r;
  REQUIRE(decode(m.bytes(), r) == DecodeError::kNone);
  REQUIRE(r.ids == std::vector<uint8_t>{kGap, kNackFrag, kHeartbeatFrag});
  REQUIRE(r.gaps[0].reader_id == kReader);
  REQUIRE(r.gaps[0].writer_id == kWriter);
  REQUIRE(r.gaps[0].gap_start == 15);
  require_same_set(r.gaps[0].gap_list, gap_list);
  REQUIRE(r.nack_frags[0].sn == 8);
  REQUIRE(r.nack_frags[0].count == 4);
  require_same_set(r.nack_frags[0].fragments, frags);
  REQUIRE(r.hb_frags[0].reader_id == kReader);
  REQUIRE(r.hb_frags[0].writer_id == kWriter);
  REQUIRE(r.hb_frags[0].sn == 8);
  REQUIRE(r.hb_frags[0].last_fragment == 31);
  REQUIRE(r.hb_frags[0].count == 5);
}

TEST_CASE("INFO_TS and INFO_DST set the receiver state of the submessages after them") {
  const Time t{1'700'000'000'123'456'789};
  const std::vector<uint8_t> payload{0x00, 0x01, 0x00, 0x00, 1, 2, 3, 4};
  Msg m;
  REQUIRE(m->heartbeat(kReader, kWriter, 1, 0, 1, false));  // before any INFO_*
  REQUIRE(m->info_dst(kDst));
  REQUIRE(m->info_ts(t));
  REQUIRE(m->data(kReader, kWriter, 1, {}, payload.data(), payload.size()));

  int32_t s = 0;
  uint32_t f = 0;
  time_to_wire(t, s, f);
  Raw dst, ts;
  dst.prefix(kDst);
  ts.u32(static_cast<uint32_t>(s)).u32(f);
  const std::vector<uint8_t> bytes = m.bytes();
  // INFO_DST and INFO_TS laid out as in the spec, right after the 32-byte HEARTBEAT.
  std::vector<uint8_t> expect_info;
  add_sub(expect_info, kInfoDst, kFlagLittleEndian, dst.b);
  add_sub(expect_info, kInfoTs, kFlagLittleEndian, ts.b);
  REQUIRE(std::vector<uint8_t>(bytes.begin() + 20 + 32, bytes.begin() + 20 + 32 + 28) ==
          expect_info);

  Recorder r;
  REQUIRE(decode(bytes, r) == DecodeError::kNone);
  REQUIRE(r.ids == std::vector<uint8_t>{kHeartbeat, kData});
  REQUIRE_FALSE(r.ctxs[0].has_timestamp);
  REQUIRE(r.ctxs[0].dest_prefix == GuidPrefix{});
  REQUIRE(r.ctxs[1].has_timestamp);
  REQUIRE(r.ctxs[1].timestamp == t);  // Time_t keeps nanoseconds exactly (see below)
  REQUIRE(r.ctxs[1].dest_prefix == kDst);
}

TEST_CASE("INFO_TS with the invalidate flag and INFO_SRC reset the receiver state") {
  Raw ts, src, hb;
  ts.u32(100).u32(0x80000000u);
  src.u32(0).u8(2).u8(1).u8(0x01).u8(0x10).prefix(kDst);
  hb.be32(0).be32(kWriter.value).sn(1).sn(2).u32(1);
  std::vector<uint8_t> msg = rtps_header();
  add_sub(msg, kInfoDst, kFlagLittleEndian, Raw().prefix(kDst).b);
  add_sub(msg, kInfoTs, kFlagLittleEndian, ts.b);
  add_sub(msg, kHeartbeat, kFlagLittleEndian, hb.b);                     // [0] ts + dst
  add_sub(msg, kInfoTs, kFlagLittleEndian | kInfoTsFlagInvalidate, {});  // no timestamp
  add_sub(msg, kHeartbeat, kFlagLittleEndian, hb.b);                     // [1] no ts
  add_sub(msg, kInfoTs, kFlagLittleEndian, ts.b);
  add_sub(msg, kInfoSrc, kFlagLittleEndian, src.b);   // new source; resets ts and dst
  add_sub(msg, kHeartbeat, kFlagLittleEndian, hb.b);  // [2]

  Recorder r;
  REQUIRE(decode(msg, r) == DecodeError::kNone);
  REQUIRE(r.ids == std::vector<uint8_t>{kHeartbeat, kHeartbeat, kHeartbeat});
  REQUIRE(r.ctxs[0].has_timestamp);
  REQUIRE(r.ctxs[0].timestamp == Time{100'500'000'000});
  REQUIRE(r.ctxs[0].dest_prefix == kDst);
  REQUIRE_FALSE(r.ctxs[1].has_timestamp);
  REQUIRE(r.ctxs[1].dest_prefix == kDst);
  REQUIRE(r.ctxs[1].source_prefix == kSrc);
  REQUIRE_FALSE(r.ctxs[2].has_timestamp);
  REQUIRE(r.ctxs[2].dest_prefix == GuidPrefix{});
  REQUIRE(r.ctxs[2].source_prefix == kDst);
  REQUIRE(r.ctxs[2].source_vendor[0] == 0x01);
  REQUIRE(r.ctxs[2].source_vendor[1] == 0x10);
  REQUIRE(r.ctxs[2].source_version[0] == 2);
  REQUIRE(r.ctxs[2].source_version[1] == 1);
}

// ---- big endian -----------------------------------------------------------------------------

TEST_CASE("Big-endian submessages decode to the same values as little-endian ones") {
  const KeyHash key = key_hash_of({9, 8, 7, 6, 5, 4, 3, 2, 1});
  const std::vector<uint8_t> payload = seq_bytes(12);
  const std::vector<uint8_t> sample = seq_bytes(300, 9);
  const NumberSet set = make_set(40, 35, {0, 2, 34});
  const NumberSet frags = make_set(2, 3, {1});
  const SequenceNumber big_sn = (SequenceNumber{3} << 32) | 0x01020304;

  OutgoingInlineQos q;
  q.key_hash = &key;
  q.status_info = kStatusDisposed;
  Msg le;
  REQUIRE(le->info_ts(Time{1'000'000'000'250'000'000}));
  REQUIRE(le->data(kReader, kWriter, big_sn, q, payload.data(), payload.size()));
  REQUIRE(le->data_frag(kReader, kWriter, 4, q, 2, 1, 128, 300, sample.data() + 128, 128));
  REQUIRE(le->heartbeat(kReader, kWriter, 2, big_sn, 99, true));
  REQUIRE(le->acknack(kReader, kWriter, set, 5, false));
  REQUIRE(le->gap(kReader, kWriter, 38, set));
  REQUIRE(le->nack_frag(kReader, kWriter, 4, frags, 6));
  REQUIRE(le->heartbeat_frag(kReader, kWriter, 4, 3, 7));

  // The same submessages by hand in big endian (E flag clear). Entity ids, the key hash and the
  // status info are big endian in both; the parameter list follows the submessage's order.
  Raw qos(false);
  qos.u16(kPidKeyHash).u16(16).bytes(key.value.data(), 16);
  qos.u16(kPidStatusInfo).u16(4).be32(kStatusDisposed).u16(kPidSentinel).u16(0);
  Raw ts(false), d(false), df(false), hb(false), an(false), gp(false), nf(false), hf(false);
  ts.u32(1'000'000'000).u32(0x40000000u);
  d.u16(0).u16(16).be32(kReader.value).be32(kWriter.value).sn(big_sn).bytes(qos.b).bytes(payload);
  df.u16(0).u16(28).be32(kReader.value).be32(kWriter.value).sn(4);
  df.u32(2).u16(1).u16(128).u32(300).bytes(qos.b).bytes(sample.data() + 128, 128);
  hb.be32(kReader.value).be32(kWriter.value).sn(2).sn(big_sn).u32(99);
  an.be32(kReader.value).be32(kWriter.value).sn(40).u32(35).u32(set.bits[0]).u32(set.bits[1]);
  an.u32(5);
  gp.be32(kReader.value).be32(kWriter.value).sn(38).sn(40).u32(35).u32(set.bits[0]);
  gp.u32(set.bits[1]);
  nf.be32(kReader.value).be32(kWriter.value).sn(4).u32(2).u32(3).u32(frags.bits[0]).u32(6);
  hf.be32(kReader.value).be32(kWriter.value).sn(4).u32(3).u32(7);
  std::vector<uint8_t> be = rtps_header();
  add_sub(be, kInfoTs, 0, ts.b);
  add_sub(be, kData, kDataFlagInlineQos | kDataFlagData, d.b);
  add_sub(be, kDataFrag, kDataFragFlagInlineQos, df.b);
  add_sub(be, kHeartbeat, kHeartbeatFlagFinal, hb.b);
  add_sub(be, kAckNack, 0, an.b);
  add_sub(be, kGap, 0, gp.b);
  add_sub(be, kNackFrag, 0, nf.b);
  add_sub(be, kHeartbeatFrag, 0, hf.b);

  Recorder a, b;
  REQUIRE(decode(le.bytes(), a) == DecodeError::kNone);
  REQUIRE(decode(be, b) == DecodeError::kNone);
  const std::vector<uint8_t> ids{kData, kDataFrag, kHeartbeat,    kAckNack,
                                 kGap,  kNackFrag, kHeartbeatFrag};
  REQUIRE(a.ids == ids);
  REQUIRE(b.ids == ids);
  for (const Recorder* r : {&a, &b}) {
    REQUIRE(r->ctxs[0].has_timestamp);
    REQUIRE(r->ctxs[0].timestamp == Time{1'000'000'000'250'000'000});
    const DataSubmessage& m = r->data[0];
    REQUIRE(m.reader_id == kReader);
    REQUIRE(m.writer_id == kWriter);
    REQUIRE(m.sn == big_sn);
    REQUIRE(m.has_data);
    REQUIRE(m.qos.has_key_hash);
    REQUIRE(m.qos.key_hash == key);
    REQUIRE(m.qos.status_info == kStatusDisposed);
    REQUIRE(m.inline_qos_size == 32);
    REQUIRE(r->payloads[0] == payload);
    const DataFragSubmessage& f = r->frags[0];
    REQUIRE(f.sn == 4);
    REQUIRE(f.fragment_start == 2);
    REQUIRE(f.fragments_in_submessage == 1);
    REQUIRE(f.fragment_size == 128);
    REQUIRE(f.sample_size == 300);
    REQUIRE(f.qos.key_hash == key);
    REQUIRE(f.qos.status_info == kStatusDisposed);
    REQUIRE(r->frag_data[0] == std::vector<uint8_t>(sample.begin() + 128, sample.begin() + 256));
    REQUIRE(r->heartbeats[0].first == 2);
    REQUIRE(r->heartbeats[0].last == big_sn);
    REQUIRE(r->heartbeats[0].count == 99);
    REQUIRE(r->heartbeats[0].final);
    require_same_set(r->acknacks[0].set, set);
    REQUIRE(r->acknacks[0].count == 5);
    REQUIRE(r->gaps[0].gap_start == 38);
    require_same_set(r->gaps[0].gap_list, set);
    REQUIRE(r->nack_frags[0].sn == 4);
    require_same_set(r->nack_frags[0].fragments, frags);
    REQUIRE(r->nack_frags[0].count == 6);
    REQUIRE(r->hb_frags[0].last_fragment == 3);
    REQUIRE(r->hb_frags[0].count == 7);
  }
}

// ---- message walk -----------------------------------------------------------------------------

TEST_CASE("octetsToNextHeader 0 extends the last submessage to the end of the message") {
  const std::vector<uint8_t> payload = seq_bytes(37);  // not a multiple of 4: nothing pads it
  Raw d;
  d.u16(0).u16(16).be32(kReader.value).be32(kWriter.value).sn(6).bytes(payload);
  Raw hb;
  hb.be32(0).be32(kWriter.value).sn(1).sn(6).u32(3);

  SECTION("DATA") {
    std::vector<uint8_t> msg = rtps_header();
    add_sub(msg, kHeartbeat, kFlagLittleEndian, hb.b);
    add_sub(msg, kData, kFlagLittleEndian | kDataFlagData, d.b, /*octets=*/0);
    Recorder r;
    REQUIRE(decode(msg, r) == DecodeError::kNone);
    REQUIRE(r.ids == std::vector<uint8_t>{kHeartbeat, kData});
    REQUIRE(r.data[0].sn == 6);
    REQUIRE(r.payloads[0] == payload);
  }
  SECTION("HEARTBEAT, big endian") {
    Raw hb_be(false);
    hb_be.be32(0).be32(kWriter.value).sn(1).sn(6).u32(3);
    std::vector<uint8_t> msg = rtps_header();
    add_sub(msg, kHeartbeat, 0, hb_be.b, 0);
    Recorder r;
    REQUIRE(decode(msg, r) == DecodeError::kNone);
    REQUIRE(r.heartbeats.size() == 1);
    REQUIRE(r.heartbeats[0].last == 6);
  }
  SECTION("PAD with 0 is empty, not 'to the end'") {
    std::vector<uint8_t> msg = rtps_header();
    add_sub(msg, kPad, kFlagLittleEndian, {}, 0);
    add_sub(msg, kHeartbeat, kFlagLittleEndian, hb.b);
    add_sub(msg, kPad, kFlagLittleEndian, {0, 0, 0, 0, 0, 0, 0, 0});
    add_sub(msg, kHeartbeat, kFlagLittleEndian, hb.b);
    Recorder r;
    REQUIRE(decode(msg, r) == DecodeError::kNone);
    REQUIRE(r.ids == std::vector<uint8_t>{kHeartbeat, kHeartbeat});
  }
  SECTION("INFO_TS with 0 is empty: without the invalidate flag it is truncated") {
    std::vector<uint8_t> msg = rtps_header();
    add_sub(msg, kHeartbeat, kFlagLittleEndian, hb.b);
    add_sub(msg, kInfoTs, kFlagLittleEndian | kInfoTsFlagInvalidate, {}, 0);
    add_sub(msg, kHeartbeat, kFlagLittleEndian, hb.b);
    add_sub(msg, kInfoTs, kFlagLittleEndian, Raw().u32(1).u32(2).b, 0);
    Recorder r;
    REQUIRE(decode(msg, r) == DecodeError::kTruncated);
    REQUIRE(r.ids == std::vector<uint8_t>{kHeartbeat, kHeartbeat});
  }
}

TEST_CASE("Unknown and vendor-specific submessages are skipped") {
  Raw hb;
  hb.be32(0).be32(kWriter.value).sn(1).sn(2).u32(1);
  std::vector<uint8_t> msg = rtps_header();
  add_sub(msg, 0x02, kFlagLittleEndian, {1, 2, 3, 4});          // unassigned standard id
  add_sub(msg, 0x7f, 0, {0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0});  // unassigned, big endian
  add_sub(msg, kInfoReply, kFlagLittleEndian, seq_bytes(28));   // not used by the receiver
  add_sub(msg, kInfoReplyIp4, kFlagLittleEndian, seq_bytes(8));
  add_sub(msg, kHeartbeat, kFlagLittleEndian, hb.b);
  add_sub(msg, 0x80, kFlagLittleEndian, seq_bytes(16));  // vendor specific
  add_sub(msg, 0xff, 0, seq_bytes(4));
  add_sub(msg, 0xa5, kFlagLittleEndian, seq_bytes(12));
  add_sub(msg, kHeartbeat, kFlagLittleEndian, hb.b);
  add_sub(msg, 0x81, kFlagLittleEndian, seq_bytes(20), 0);  // vendor, to the end
  Recorder r;
  REQUIRE(decode(msg, r) == DecodeError::kNone);
  REQUIRE(r.ids == std::vector<uint8_t>{kHeartbeat, kHeartbeat});
}

// ---- Time_t ---------------------------------------------------------------------------------

TEST_CASE("Time_t conversion: known values") {
  struct Case {
    int64_t ns;
    int32_t s;
    uint32_t f;
  };
  const Case cases[] = {
      {0, 0, 0},
      {250'000'000, 0, 0x40000000u},
      {1'500'000'000, 1, 0x80000000u},
      {-1, -1, 0xfffffffbu},  // floor(999999999 * 2^32 / 1e9)
      {-500'000'000, -1, 0x80000000u},
      {1'700'000'000'000'000'000, 1'700'000'000, 0},
      {123'456'789, 0, 530242871u},
  };
  for (const auto& c : cases) {
    INFO("ns " << c.ns);
    int32_t s = 0;
    uint32_t f = 0;
    time_to_wire(Time{c.ns}, s, f);
    REQUIRE(s == c.s);
    REQUIRE(f == c.f);
    REQUIRE(time_from_wire(c.s, c.f) == Time{c.ns});
  }
  // Fractions round to the nearest nanosecond.
  REQUIRE(time_from_wire(0, 1) == Time{0});
  REQUIRE(time_from_wire(0, 5) == Time{1});  // 1.16 ns
  REQUIRE(time_from_wire(0, 0xffffffffu) == Time{1'000'000'000});
  REQUIRE(time_from_wire(-5, 0) == Time{-5'000'000'000});
}

TEST_CASE("Time_t conversion round-trips every nanosecond value in the int32 seconds range") {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int64_t> secs(INT32_MIN, INT32_MAX);
  std::uniform_int_distribution<int64_t> nanos(0, 999'999'999);
  for (int i = 0; i < 200000; ++i) {
    const Time t{secs(rng) * 1'000'000'000 + nanos(rng)};
    int32_t s = 0;
    uint32_t f = 0;
    time_to_wire(t, s, f);
    const Time back = time_from_wire(s, f);
    if (back != t) FAIL("ns " << t.ns << " came back as " << back.ns);
  }
}

// ---- key hash -------------------------------------------------------------------------------

TEST_CASE("KeyHash::from_key_cdr_be zero-pads keys up to 16 bytes and hashes longer ones") {
  auto hash = [](const std::vector<uint8_t>& v) {
    return KeyHash::from_key_cdr_be(Bytes(reinterpret_cast<const std::byte*>(v.data()), v.size()));
  };
  REQUIRE(hash({}).value == std::array<uint8_t, 16>{});
  REQUIRE(hash({0, 0, 0, 42}).value ==
          std::array<uint8_t, 16>{0, 0, 0, 42, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
  std::vector<uint8_t> sixteen(16), seventeen(17), thousand(1000);
  for (size_t i = 0; i < 16; ++i) sixteen[i] = static_cast<uint8_t>(i + 1);
  for (size_t i = 0; i < 17; ++i) seventeen[i] = static_cast<uint8_t>(i);
  for (size_t i = 0; i < 1000; ++i) thousand[i] = static_cast<uint8_t>(i * 7 + 3);
  std::array<uint8_t, 16> same{};
  std::copy(sixteen.begin(), sixteen.end(), same.begin());
  REQUIRE(hash(sixteen).value == same);  // exactly 16 bytes: the bytes themselves
  REQUIRE(hex(hash(seventeen).value) == "1bdd36b0a024c90db383512607293692");  // md5 of 00..10
  REQUIRE(hex(hash(thousand).value) == "10046f077f2082ac19676b8079f1cb1a");
  // 16 bytes of zeros and an empty key collide by design; 17 zero bytes do not.
  REQUIRE(hash(std::vector<uint8_t>(16, 0)) == hash({}));
  REQUIRE_FALSE(hash(std::vector<uint8_t>(17, 0)) == hash({}));
}

// ---- parameter lists ----------------------------------------------------------------------

TEST_CASE("Parameter lists: size, iteration, PAD, and what makes them malformed") {
  Raw good;
  good.u16(0x0070).u16(4).u32(1).u16(kPidPad).u16(4).u32(0).u16(0x8001).u16(0);
  good.u16(kPidSentinel).u16(0).zeros(8);  // bytes after the sentinel are not part of it
  REQUIRE(parameter_list_size(good.b.data(), good.b.size(), true) == 24);
  std::vector<uint16_t> pids;
  REQUIRE(for_each_parameter(good.b.data(), good.b.size(), true, [&](const Parameter& p) {
    pids.push_back(p.pid);
    return true;
  }));
  REQUIRE(pids == std::vector<uint16_t>{0x0070, 0x8001});  // PAD is skipped
  REQUIRE_FALSE(for_each_parameter(good.b.data(), good.b.size(), true,
                                   [](const Parameter& p) { return p.pid != 0x8001; }));

  Raw be(false);
  be.u16(0x0070).u16(4).u32(7).u16(kPidSentinel).u16(0);
  REQUIRE(parameter_list_size(be.b.data(), be.b.size(), false) == 12);
  REQUIRE(parameter_list_size(be.b.data(), be.b.size(), true) == 0);  // wrong order: len 0x400

  const std::vector<uint8_t> no_sentinel = Raw().u16(0x0070).u16(4).u32(1).b;
  const std::vector<uint8_t> odd_length = Raw().u16(0x0070).u16(3).u32(1).u16(1).u16(0).b;
  const std::vector<uint8_t> past_end = Raw().u16(0x0070).u16(8).u32(1).u16(1).u16(0).b;
  const std::vector<uint8_t> short_sentinel = Raw().u16(0x0070).u16(0).u16(1).b;
  for (const auto* bad : {&no_sentinel, &odd_length, &past_end, &short_sentinel}) {
    REQUIRE(parameter_list_size(bad->data(), bad->size(), true) == 0);
    REQUIRE_FALSE(
        for_each_parameter(bad->data(), bad->size(), true, [](const Parameter&) { return true; }));
  }
  REQUIRE(parameter_list_size(nullptr, 0, true) == 0);
}

TEST_CASE("ParameterListWriter and read_cdr_string agree on CDR strings") {
  for (const std::string s : {"", "a", "abc", "abcd", "DDSPerfRDataKS"}) {
    INFO("'" << s << "'");
    std::vector<uint8_t> out;
    ParameterListWriter w(out);
    w.string(kPidTopicName, s);
    w.sentinel();
    REQUIRE(out.size() % 4 == 0);
    REQUIRE(out.size() == 4 + ((4 + s.size() + 1 + 3) & ~size_t{3}) + 4);
    std::string got = "unset";
    REQUIRE(for_each_parameter(out.data(), out.size(), true, [&](const Parameter& p) {
      return p.pid == kPidTopicName && read_cdr_string(p, true, got);
    }));
    REQUIRE(got == s);
  }
  std::string out;
  const std::vector<uint8_t> no_nul = Raw().u32(3).u8('a').u8('b').u8('c').u8('d').b;
  const std::vector<uint8_t> zero_len = Raw().u32(0).b;
  const std::vector<uint8_t> too_long = Raw().u32(9).u8('a').u8(0).zeros(2).b;
  for (const auto* v : {&no_nul, &zero_len, &too_long}) {
    const Parameter p{kPidTopicName, static_cast<uint16_t>(v->size()), v->data()};
    REQUIRE_FALSE(read_cdr_string(p, true, out));
  }
}

// ---- discovery data -------------------------------------------------------------------------

namespace {

ParticipantData sample_participant() {
  ParticipantData p;
  p.guid_prefix = kSrc;
  p.vendor[0] = kVendorId[0];
  p.vendor[1] = kVendorId[1];
  p.version[0] = 2;
  p.version[1] = 3;
  p.domain_id = 7;
  p.builtin_endpoints = 0x0000fc3f;
  p.lease_duration = 12'345'678'901ns;
  p.default_unicast = {Locator::udp_v4(0xC6120001, 7411), Locator::udp_v4(0x7f000001, 7413)};
  p.default_multicast = {Locator::udp_v4(kDefaultMulticastGroup, 7401)};
  p.metatraffic_unicast = {Locator::udp_v4(0xC6120001, 7410)};
  p.metatraffic_multicast = {Locator::udp_v4(kDefaultMulticastGroup, 7400)};
  p.user_data = {'r', 'e', 'c', 'o', 'r', 'd', 'e', 'r'};
  p.user_data.push_back(0);  // 9 bytes: padded on the wire, exact after decoding
  return p;
}

void require_same(const ParticipantData& a, const ParticipantData& b) {
  REQUIRE(a.guid_prefix == b.guid_prefix);
  REQUIRE(a.vendor[0] == b.vendor[0]);
  REQUIRE(a.vendor[1] == b.vendor[1]);
  REQUIRE(a.version[0] == b.version[0]);
  REQUIRE(a.version[1] == b.version[1]);
  REQUIRE(a.domain_id == b.domain_id);
  REQUIRE(a.builtin_endpoints == b.builtin_endpoints);
  REQUIRE(a.lease_duration == b.lease_duration);
  REQUIRE(a.default_unicast == b.default_unicast);
  REQUIRE(a.default_multicast == b.default_multicast);
  REQUIRE(a.metatraffic_unicast == b.metatraffic_unicast);
  REQUIRE(a.metatraffic_multicast == b.metatraffic_multicast);
  REQUIRE(a.user_data == b.user_data);
}

EndpointData sample_endpoint(bool writer) {
  EndpointData e;
  e.guid.prefix = kSrc;
  e.guid.entity = writer ? EntityId{0x00001202} : EntityId{0x00001307};
  e.topic_name = "DDSPerfRDataKS";
  e.type_name = "KeyedSeq";
  e.reliability = ReliabilityKind::kReliable;
  e.max_blocking_time = 10s;
  e.durability = DurabilityKind::kTransientLocal;
  e.history = {HistoryKind::kKeepAll, 10000};
  e.unicast = {Locator::udp_v4(0xC6120002, 7411)};
  e.multicast = {Locator::udp_v4(kDefaultMulticastGroup, 7401)};
  e.partitions = {"", "a", "sensors/*", "abcd"};  // lengths 1, 2, 10, 5: every alignment
  e.data_representation = {kXcdr2, kXcdr1, 7};    // odd count: padded
  e.type_information = seq_bytes(36, 0x40);
  return e;
}

// An endpoint with every standard policy away from its default.
EndpointData policies_endpoint() {
  EndpointData e = sample_endpoint(true);
  Policies& p = e.policies;
  p.deadline = 2s;
  p.latency_budget = 5ms;
  p.liveliness = {LivelinessKind::kManualByTopic, 1500ms};
  p.lifespan = 30s;
  p.destination_order = DestinationOrderKind::kBySourceTimestamp;
  p.presentation = {PresentationScope::kGroup, true, false};
  p.ownership = OwnershipKind::kExclusive;
  p.ownership_strength = -7;
  p.time_based_filter = 100ms;
  p.transport_priority = 3;
  p.resource_limits = {1000, 10, 100};
  p.durability_service = {1s, HistoryKind::kKeepLast, 5, {50, 10, 5}};
  p.user_data = {'a', 'p', 'p'};
  p.topic_data = {1, 2, 3, 4, 5};
  p.group_data = {9};
  p.type_consistency = TypeConsistencyQos{
      TypeConsistencyQos::Kind::kDisallowTypeCoercion, false, true, true, false, true};
  p.content_filter =
      ContentFilterQos{"cft", "DDSPerfRDataKS", "DDSSQL", "seq > %0 AND seq < %1", {"10", "20"}};
  return e;
}

void require_same(const EndpointData& a, const EndpointData& b) {
  REQUIRE(a.guid == b.guid);
  REQUIRE(a.topic_name == b.topic_name);
  REQUIRE(a.type_name == b.type_name);
  REQUIRE(a.reliability == b.reliability);
  REQUIRE(a.max_blocking_time == b.max_blocking_time);
  REQUIRE(a.durability == b.durability);
  REQUIRE(a.history.kind == b.history.kind);
  REQUIRE(a.history.depth == b.history.depth);
  REQUIRE(a.unicast == b.unicast);
  REQUIRE(a.multicast == b.multicast);
  REQUIRE(a.expects_inline_qos == b.expects_inline_qos);
  REQUIRE(a.partitions == b.partitions);
  REQUIRE(a.data_representation == b.data_representation);
  REQUIRE(a.type_information == b.type_information);
  REQUIRE(a.policies == b.policies);
}

// A PL_CDR_LE payload from raw parameters.
std::vector<uint8_t> pl_payload(const std::vector<uint8_t>& params, bool le = true) {
  std::vector<uint8_t> out{0x00, static_cast<uint8_t>(le ? kEncapPlCdrLe : kEncapPlCdrBe), 0, 0};
  out.insert(out.end(), params.begin(), params.end());
  return out;
}

// Finds a parameter's value in a PL_CDR_LE payload (empty when absent).
std::vector<uint8_t> find_param(const std::vector<uint8_t>& payload, uint16_t pid) {
  std::vector<uint8_t> v;
  (void)for_each_parameter(payload.data() + 4, payload.size() - 4, true, [&](const Parameter& p) {
    if (p.pid == pid) v.assign(p.value, p.value + p.length);
    return true;
  });
  return v;
}

}  // namespace

TEST_CASE("encode_participant_data / decode_participant_data round-trip") {
  const ParticipantData p = sample_participant();
  const std::vector<uint8_t> bytes = encode_participant_data(p);
  REQUIRE(bytes[0] == 0x00);
  REQUIRE(bytes[1] == kEncapPlCdrLe);
  REQUIRE(bytes.size() % 4 == 0);
  // The required parameters are there, with the participant's GUID.
  const std::vector<uint8_t> guid = find_param(bytes, kPidParticipantGuid);
  REQUIRE(guid.size() == 16);
  REQUIRE(Guid::from_bytes(guid.data()) == Guid{kSrc, EntityId{kEntityIdParticipant}});
  REQUIRE(find_param(bytes, kPidBuiltinEndpointSet) == Raw().u32(0x0000fc3f).b);
  REQUIRE(find_param(bytes, kPidDomainId) == Raw().u32(7).b);
  REQUIRE(find_param(bytes, kPidUserData) ==
          Raw().u32(9).bytes(p.user_data).zeros(3).b);  // sequence<octet>, padded

  ParticipantData got;
  REQUIRE(decode_participant_data(bytes.data(), bytes.size(), got));
  require_same(got, p);

  SECTION("minimal data keeps the defaults") {
    ParticipantData m;
    m.guid_prefix = kDst;
    const auto b = encode_participant_data(m);
    ParticipantData g;
    REQUIRE(decode_participant_data(b.data(), b.size(), g));
    require_same(g, m);
    REQUIRE_FALSE(g.domain_id.has_value());
    REQUIRE(g.lease_duration == 100s);
    REQUIRE(find_param(b, kPidUserData).empty());
  }
}

TEST_CASE("decode_participant_data reads big-endian PL_CDR and ignores unknown parameters") {
  Raw be(false);
  be.u16(kPidParticipantGuid).u16(16).prefix(kDst).be32(kEntityIdParticipant);
  be.u16(kPidBuiltinEndpointSet).u16(4).u32(0x3f);
  be.u16(kPidParticipantLeaseDuration).u16(8).u32(20).u32(0x80000000u);
  be.u16(kPidDomainId | kPidMustUnderstand).u16(4).u32(3);
  be.u16(0x8007).u16(8).u32(1).u32(2);  // vendor parameter
  be.u16(kPidMetatrafficUnicastLocator).u16(24).u32(1).u32(7410).zeros(12).u8(10).u8(0).u8(0).u8(1);
  be.u16(kPidUserData).u16(8).u32(3).u8('x').u8('y').u8('z').u8(0);
  be.u16(kPidSentinel).u16(0);
  const auto payload = pl_payload(be.b, false);
  ParticipantData got;
  REQUIRE(decode_participant_data(payload.data(), payload.size(), got));
  REQUIRE(got.guid_prefix == kDst);
  REQUIRE(got.builtin_endpoints == 0x3f);
  REQUIRE(got.lease_duration == 20'500'000'000ns);
  REQUIRE(got.domain_id == std::optional<uint32_t>(3));
  REQUIRE(got.metatraffic_unicast == std::vector<Locator>{Locator::udp_v4(0x0a000001, 7410)});
  REQUIRE(got.user_data == std::vector<uint8_t>{'x', 'y', 'z'});
}

TEST_CASE("decode_participant_data rejects payloads without a GUID or with bad parameters") {
  const Raw guid = Raw().u16(kPidParticipantGuid).u16(16).prefix(kDst).be32(kEntityIdParticipant);
  auto with = [&](const std::vector<uint8_t>& extra, bool sentinel = true) {
    Raw r = guid;
    r.bytes(extra);
    if (sentinel) r.u16(kPidSentinel).u16(0);
    return pl_payload(r.b);
  };
  ParticipantData out;
  const auto ok = with({});
  REQUIRE(decode_participant_data(ok.data(), ok.size(), out));

  const auto no_guid =
      pl_payload(Raw().u16(kPidBuiltinEndpointSet).u16(4).u32(0x3f).u16(1).u16(0).b);
  const auto no_sentinel = with({}, false);
  const auto short_guid =
      pl_payload(Raw().u16(kPidParticipantGuid).u16(8).zeros(8).u16(1).u16(0).b);
  const auto short_locator = with(Raw().u16(kPidDefaultUnicastLocator).u16(20).zeros(20).b);
  const auto short_domain = with(Raw().u16(kPidDomainId).u16(0).b);
  const auto user_data_overrun = with(Raw().u16(kPidUserData).u16(8).u32(5).zeros(4).b);
  const std::vector<uint8_t> cdr_le = [&] {
    std::vector<uint8_t> v = ok;
    v[1] = kEncapCdrLe;  // not a parameter list encapsulation
    return v;
  }();
  const std::vector<uint8_t> three_bytes{0x00, 0x03, 0x00};
  for (const auto* bad : {&no_guid, &no_sentinel, &short_guid, &short_locator, &short_domain,
                          &user_data_overrun, &cdr_le, &three_bytes}) {
    ParticipantData o;
    REQUIRE_FALSE(decode_participant_data(bad->data(), bad->size(), o));
  }
}

TEST_CASE("encode_endpoint_data / decode_endpoint_data round-trip") {
  for (const bool writer : {true, false}) {
    INFO((writer ? "writer" : "reader"));
    const EndpointData e = sample_endpoint(writer);
    REQUIRE(e.is_writer() == writer);
    REQUIRE(e.keyed());
    const std::vector<uint8_t> bytes = encode_endpoint_data(e);
    REQUIRE(bytes.size() % 4 == 0);
    // The type information blob goes on the wire byte for byte.
    REQUIRE(find_param(bytes, kPidTypeInformation) == e.type_information);
    REQUIRE(find_param(bytes, kPidReliability) ==
            Raw().u32(2).u32(10).u32(0).b);  // RELIABLE, max_blocking_time 10 s
    REQUIRE(find_param(bytes, kPidDataRepresentation) ==
            Raw().u32(3).u16(2).u16(0).u16(7).zeros(2).b);
    EndpointData got;
    REQUIRE(decode_endpoint_data(bytes.data(), bytes.size(), writer, got));
    require_same(got, e);

    Guid key;
    REQUIRE(decode_endpoint_key(bytes.data(), bytes.size(), key));
    REQUIRE(key == e.guid);
  }

  SECTION("defaults: no partitions, XCDR1 only, no type information; best-effort reader") {
    EndpointData e;
    e.guid = Guid{kSrc, EntityId{0x00000104}};
    e.topic_name = "t";
    e.type_name = "T";
    REQUIRE_FALSE(e.keyed());
    const auto bytes = encode_endpoint_data(e);
    REQUIRE(find_param(bytes, kPidPartition).empty());
    REQUIRE(find_param(bytes, kPidDataRepresentation).empty());
    REQUIRE(find_param(bytes, kPidTypeInformation).empty());
    EndpointData got;
    REQUIRE(decode_endpoint_data(bytes.data(), bytes.size(), false, got));
    require_same(got, e);
  }

  SECTION("a type information blob that is not a multiple of 4 comes back zero-padded") {
    EndpointData e = sample_endpoint(true);
    e.type_information = seq_bytes(37);
    const auto bytes = encode_endpoint_data(e);
    EndpointData got;
    REQUIRE(decode_endpoint_data(bytes.data(), bytes.size(), true, got));
    std::vector<uint8_t> padded = e.type_information;
    padded.insert(padded.end(), 3, 0);
    REQUIRE(got.type_information == padded);
    // ... which re-encodes to the same bytes: what the peer sent is what a replay re-sends.
    REQUIRE(encode_endpoint_data(got) == bytes);
  }
}

TEST_CASE("Every standard policy round-trips, and only those off their default are sent") {
  const EndpointData e = policies_endpoint();
  const std::vector<uint8_t> bytes = encode_endpoint_data(e);
  EndpointData got;
  REQUIRE(decode_endpoint_data(bytes.data(), bytes.size(), true, got));
  require_same(got, e);
  // Exact values of a few: Duration_t {seconds, fraction}, kinds as u32, booleans as octets.
  CHECK(find_param(bytes, kPidDeadline) == Raw().u32(2).u32(0).b);
  CHECK(find_param(bytes, kPidLiveliness) == Raw().u32(2).u32(1).u32(0x80000000u).b);
  CHECK(find_param(bytes, kPidOwnership) == Raw().u32(1).b);
  CHECK(find_param(bytes, kPidOwnershipStrength) == Raw().u32(0xfffffff9u).b);
  CHECK(find_param(bytes, kPidPresentation) == Raw().u32(2).u8(1).u8(0).zeros(2).b);
  CHECK(find_param(bytes, kPidDestinationOrder) == Raw().u32(1).b);
  CHECK(find_param(bytes, kPidUserData) == Raw().u32(3).u8('a').u8('p').u8('p').zeros(1).b);
  CHECK(find_param(bytes, kPidResourceLimits) == Raw().u32(1000).u32(10).u32(100).b);
  CHECK(find_param(bytes, kPidTypeConsistencyEnforcement) ==
        Raw().u16(0).u8(0).u8(1).u8(1).u8(0).u8(1).zeros(1).b);
  // Defaults are not sent: an endpoint that sets nothing announces none of these.
  EndpointData plain = sample_endpoint(true);
  const auto pb = encode_endpoint_data(plain);
  for (uint16_t pid :
       {kPidDeadline, kPidLatencyBudget, kPidLiveliness, kPidLifespan, kPidDestinationOrder,
        kPidPresentation, kPidOwnership, kPidOwnershipStrength, kPidTimeBasedFilter,
        kPidResourceLimits, kPidDurabilityService, kPidUserData, kPidTopicData, kPidGroupData,
        kPidTypeConsistencyEnforcement, kPidContentFilterProperty}) {
    INFO("pid " << pid);
    CHECK(find_param(pb, pid).empty());
  }
}

TEST_CASE("decode_endpoint_data applies the writer or reader reliability default") {
  Raw params;
  params.guid(kPidEndpointGuid, kSrc, 0x00000102).str(kPidTopicName, "t").str(kPidTypeName, "T");
  const auto payload = pl_payload(params.sentinel().b);
  EndpointData w, r;
  REQUIRE(decode_endpoint_data(payload.data(), payload.size(), true, w));
  REQUIRE(decode_endpoint_data(payload.data(), payload.size(), false, r));
  REQUIRE(w.reliability == ReliabilityKind::kReliable);
  REQUIRE(r.reliability == ReliabilityKind::kBestEffort);
  REQUIRE(w.topic_name == "t");
  REQUIRE(w.type_name == "T");
  REQUIRE(w.durability == DurabilityKind::kVolatile);
  REQUIRE(w.history.kind == HistoryKind::kKeepLast);
  REQUIRE(w.history.depth == 1);
  REQUIRE(w.partitions.empty());
  REQUIRE(w.data_representation.empty());
}

TEST_CASE("decode_endpoint_data rejects payloads missing a required parameter") {
  const std::vector<uint8_t> guid =
      Raw().u16(kPidEndpointGuid).u16(16).prefix(kSrc).be32(0x00000102).b;
  const std::vector<uint8_t> topic =
      Raw().u16(kPidTopicName).u16(8).u32(2).u8('t').u8(0).zeros(2).b;
  const std::vector<uint8_t> type = Raw().u16(kPidTypeName).u16(8).u32(2).u8('T').u8(0).zeros(2).b;
  const std::vector<uint8_t> sentinel = Raw().u16(kPidSentinel).u16(0).b;
  auto cat = [](std::initializer_list<const std::vector<uint8_t>*> parts) {
    std::vector<uint8_t> v;
    for (const auto* p : parts) v.insert(v.end(), p->begin(), p->end());
    return pl_payload(v);
  };
  EndpointData out;
  const auto all = cat({&guid, &topic, &type, &sentinel});
  REQUIRE(decode_endpoint_data(all.data(), all.size(), true, out));

  const auto no_guid = cat({&topic, &type, &sentinel});
  const auto no_topic = cat({&guid, &type, &sentinel});
  const auto no_type = cat({&guid, &topic, &sentinel});
  const auto no_sentinel = cat({&guid, &topic, &type});
  const std::vector<uint8_t> topic_no_nul =
      Raw().u16(kPidTopicName).u16(8).u32(4).u8('a').u8('b').u8('c').u8('d').b;
  const auto bad_topic = cat({&guid, &topic_no_nul, &type, &sentinel});
  const std::vector<uint8_t> short_guid_param = Raw().u16(kPidEndpointGuid).u16(12).zeros(12).b;
  const auto short_guid = cat({&short_guid_param, &topic, &type, &sentinel});
  const std::vector<uint8_t> many = Raw().u16(kPidPartition).u16(8).u32(1000).u32(0).b;
  const auto partition_count = cat({&guid, &topic, &type, &many, &sentinel});
  const std::vector<uint8_t> overrun =
      Raw().u16(kPidPartition).u16(12).u32(1).u32(9).u8('a').u8(0).zeros(2).b;
  const auto partition_overrun = cat({&guid, &topic, &type, &overrun, &sentinel});
  const std::vector<uint8_t> reprs =
      Raw().u16(kPidDataRepresentation).u16(8).u32(3).u16(0).u16(2).b;
  const auto repr_overrun = cat({&guid, &topic, &type, &reprs, &sentinel});
  const std::vector<uint8_t> rel0 = Raw().u16(kPidReliability).u16(0).b;
  const auto empty_reliability = cat({&guid, &topic, &type, &rel0, &sentinel});
  std::vector<uint8_t> cdr = all;
  cdr[1] = kEncapCdrLe;
  struct Bad {
    const char* what;
    const std::vector<uint8_t>* bytes;
  };
  for (const Bad& b :
       {Bad{"no guid", &no_guid}, Bad{"no topic", &no_topic}, Bad{"no type", &no_type},
        Bad{"no sentinel", &no_sentinel}, Bad{"topic without NUL", &bad_topic},
        Bad{"12-byte guid", &short_guid}, Bad{"partition count", &partition_count},
        Bad{"partition string overrun", &partition_overrun},
        Bad{"data representation overrun", &repr_overrun},
        Bad{"empty reliability", &empty_reliability}, Bad{"CDR_LE", &cdr}}) {
    INFO(b.what);
    EndpointData o;
    REQUIRE_FALSE(decode_endpoint_data(b.bytes->data(), b.bytes->size(), true, o));
  }
}

TEST_CASE("decode_endpoint_key reads the GUID of a key-only SEDP payload") {
  const auto key_only =
      pl_payload(Raw().u16(kPidEndpointGuid).u16(16).prefix(kDst).be32(0x00000203).u16(1).u16(0).b);
  Guid g;
  REQUIRE(decode_endpoint_key(key_only.data(), key_only.size(), g));
  REQUIRE(g == Guid{kDst, EntityId{0x00000203}});
  const auto no_guid =
      pl_payload(Raw().u16(kPidTopicName).u16(8).u32(2).u8('t').u8(0).zeros(2).u16(1).u16(0).b);
  const auto no_sentinel =
      pl_payload(Raw().u16(kPidEndpointGuid).u16(16).prefix(kDst).be32(0x00000203).b);
  Guid o;
  REQUIRE_FALSE(decode_endpoint_key(no_guid.data(), no_guid.size(), o));
  REQUIRE_FALSE(decode_endpoint_key(no_sentinel.data(), no_sentinel.size(), o));
  REQUIRE_FALSE(decode_endpoint_key(key_only.data(), 3, o));
}

TEST_CASE("Infinite durations are encoded as DURATION_INFINITE and decode back") {
  const std::vector<uint8_t> infinite = Raw().u32(0x7fffffffu).u32(0xffffffffu).b;
  ParticipantData p = sample_participant();
  p.lease_duration = Duration::max();
  const auto pb = encode_participant_data(p);
  REQUIRE(find_param(pb, kPidParticipantLeaseDuration) == infinite);
  ParticipantData pg;
  REQUIRE(decode_participant_data(pb.data(), pb.size(), pg));
  REQUIRE(pg.lease_duration == Duration::max());

  EndpointData e = sample_endpoint(true);
  e.max_blocking_time = Duration::max();
  const auto eb = encode_endpoint_data(e);
  REQUIRE(find_param(eb, kPidReliability) == Raw().u32(2).bytes(infinite).b);
  EndpointData eg;
  REQUIRE(decode_endpoint_data(eb.data(), eb.size(), true, eg));
  REQUIRE(eg.max_blocking_time == Duration::max());

  // The largest finite Duration_t still travels as itself.
  p.lease_duration = std::chrono::seconds(0x7ffffffe);
  const auto fb = encode_participant_data(p);
  REQUIRE(find_param(fb, kPidParticipantLeaseDuration) == Raw().u32(0x7ffffffe).u32(0).b);
}

TEST_CASE("decode_endpoint_data rejects a partition name without its terminating NUL") {
  const std::vector<uint8_t> base = Raw()
                                        .guid(kPidEndpointGuid, kSrc, 0x00000102)
                                        .str(kPidTopicName, "t")
                                        .str(kPidTypeName, "T")
                                        .b;
  auto with_partition = [&](const std::vector<uint8_t>& name_bytes) {
    Raw r;
    r.bytes(base);
    Raw seq;
    seq.u32(1).u32(static_cast<uint32_t>(name_bytes.size())).bytes(name_bytes);
    while (seq.b.size() % 4) seq.u8(0);
    r.u16(kPidPartition).u16(static_cast<uint16_t>(seq.b.size())).bytes(seq.b);
    r.u16(kPidSentinel).u16(0);
    return pl_payload(r.b);
  };
  EndpointData ok;
  const auto good = with_partition({'a', 'b', 'c', 0});
  REQUIRE(decode_endpoint_data(good.data(), good.size(), true, ok));
  REQUIRE(ok.partitions == std::vector<std::string>{"abc"});
  // "abc" without its NUL must not become the partition "ab".
  EndpointData bad;
  const auto no_nul = with_partition({'a', 'b', 'c'});
  REQUIRE_FALSE(decode_endpoint_data(no_nul.data(), no_nul.size(), true, bad));
}

// ---- fuzz seed corpora ----------------------------------------------------------------------

namespace {

using Seeds = std::vector<std::pair<std::string, std::vector<uint8_t>>>;

std::filesystem::path corpus_root() {
  if (const char* dir = std::getenv("PUBSUB_CORPUS_DIR")) return dir;
  return std::filesystem::path(__FILE__).parent_path().parent_path().parent_path() / "fuzz" /
         "corpus";
}

// Well-formed messages from MessageBuilder (ok_*) plus hand-made malformed ones (bad_*).
Seeds rtps_seeds() {
  Seeds s;
  auto add = [&](const std::string& name, const Msg& m) { s.emplace_back(name, m.bytes()); };
  const std::vector<uint8_t> encap{0x00, 0x01, 0x00, 0x00};
  const std::vector<uint8_t> body = seq_bytes(16);
  const KeyHash key4 = key_hash_of({0, 0, 0, 7});
  std::vector<uint8_t> long_key(20);
  for (size_t i = 0; i < long_key.size(); ++i) long_key[i] = static_cast<uint8_t>(i);
  const KeyHash key_md5 =
      KeyHash::from_key_cdr_be(Bytes(reinterpret_cast<const std::byte*>(long_key.data()), 20));
  const Time t{1'700'000'000'123'456'789};
  const std::vector<uint8_t> sample = seq_bytes(2000, 5);
  {
    Msg m;
    m->info_ts(t);
    m->data(EntityId{0}, kWriter, 1, {}, encap.data(), 4, body.data(), body.size());
    m->heartbeat(EntityId{0}, kWriter, 1, 1, 1, false);
    add("ok_data_small", m);
  }
  {
    Msg m;
    OutgoingInlineQos q;
    q.key_hash = &key4;
    m->info_dst(kDst);
    m->info_ts(t);
    m->data(kReader, kWriter, 2, q, encap.data(), 4, body.data(), 8);
    add("ok_data_keyhash", m);
  }
  {
    Msg m;
    OutgoingInlineQos q;
    q.key_hash = &key4;
    q.status_info = kStatusDisposed | kStatusUnregistered;
    m->data(kReader, kWriter, 3, q, encap.data(), 4, body.data(), 4, true);
    add("ok_data_dispose", m);
  }
  {
    Msg m;
    OutgoingInlineQos q;
    q.key_hash = &key_md5;
    m->info_ts(t);
    m->data(kReader, kWriter, 4, q, encap.data(), 4, long_key.data(), long_key.size());
    add("ok_data_md5key", m);
  }
  {
    Msg m;
    m->info_ts(t);
    m->data_frag(kReader, kWriter, 5, {}, 1, 2, 512, 2000, sample.data(), 1024);
    add("ok_data_frag_first", m);
  }
  {
    Msg m;
    OutgoingInlineQos q;
    q.key_hash = &key4;
    m->data_frag(kReader, kWriter, 5, q, 4, 1, 512, 2000, sample.data() + 1536, 464);
    m->heartbeat_frag(kReader, kWriter, 5, 4, 2);
    add("ok_data_frag_last", m);
  }
  {
    Msg m;
    m->heartbeat(kReader, kWriter, 3, 90, 17, true, true);
    add("ok_heartbeat", m);
  }
  {
    Msg m;
    m->heartbeat(EntityId{0}, kWriter, 1, 0, 1, false);
    add("ok_heartbeat_empty", m);
  }
  {
    Msg m;
    m->info_dst(kDst);
    m->acknack(kReader, kWriter, make_set(1, 0, {}), 1, false);
    add("ok_acknack_preemptive", m);
  }
  {
    NumberSet set = make_set(100, 256, {});
    for (uint32_t i = 0; i < 256; i += 5) set.set(i);
    Msg m;
    m->acknack(kReader, kWriter, set, 9, true);
    add("ok_acknack_256", m);
  }
  {
    Msg m;
    m->acknack(kReader, kWriter, make_set(7, 33, {0, 32}), 3, false);
    add("ok_acknack_33", m);
  }
  {
    Msg m;
    m->gap(kReader, kWriter, 4, make_set(9, 40, {0, 3, 39}));
    m->heartbeat(kReader, kWriter, 1, 50, 4, false);
    add("ok_gap", m);
  }
  {
    Msg m;
    m->info_dst(kDst);
    m->nack_frag(kReader, kWriter, 5, make_set(2, 3, {0, 2}), 1);
    m->acknack(kReader, kWriter, make_set(5, 1, {0}), 4, false);
    add("ok_nack_frag", m);
  }
  {
    Msg m;
    m->info_ts(t);
    for (SequenceNumber sn = 1; sn <= 20; ++sn) {
      m->data(EntityId{0}, kWriter, sn, {}, encap.data(), 4, body.data(), 4 + sn % 5);
    }
    m->heartbeat(EntityId{0}, kWriter, 1, 20, 2, false);
    add("ok_batch", m);
  }
  {
    const auto spdp = encode_participant_data(sample_participant());
    const KeyHash k = key_hash_of(
        {0x01, 0x99, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9, 0xaa, 0, 0, 1, 0xc1});
    OutgoingInlineQos q;
    q.key_hash = &k;
    Msg m;
    m->info_ts(t);
    m->data(EntityId{0}, EntityId{kEntityIdSpdpWriter}, 1, q, spdp.data(), spdp.size());
    add("ok_spdp", m);
  }
  {
    const auto sedp = encode_endpoint_data(sample_endpoint(true));
    Msg m;
    m->info_dst(kDst);
    m->info_ts(t);
    m->data(EntityId{kEntityIdSedpPubReader}, EntityId{kEntityIdSedpPubWriter}, 1, {}, sedp.data(),
            sedp.size());
    m->heartbeat(EntityId{kEntityIdSedpPubReader}, EntityId{kEntityIdSedpPubWriter}, 1, 1, 1,
                 false);
    add("ok_sedp_pub", m);
  }
  {
    const auto guid = Guid{kSrc, EntityId{0x00001307}}.bytes();
    KeyHash k;
    std::copy(guid.begin(), guid.end(), k.value.begin());
    OutgoingInlineQos q;
    q.key_hash = &k;
    q.status_info = kStatusDisposed | kStatusUnregistered;
    Msg m;
    m->data(EntityId{kEntityIdSedpSubReader}, EntityId{kEntityIdSedpSubWriter}, 2, q, nullptr, 0);
    add("ok_sedp_dispose", m);
  }
  {
    Raw hb(false), an(false), d(false);
    hb.be32(kReader.value).be32(kWriter.value).sn(1).sn(3).u32(5);
    an.be32(kReader.value).be32(kWriter.value).sn(2).u32(2).u32(0xc0000000u).u32(6);
    d.u16(0).u16(16).be32(kReader.value).be32(kWriter.value).sn(3);
    d.u16(kPidKeyHash).u16(16).bytes(key4.value.data(), 16).u16(kPidSentinel).u16(0);
    d.u8(0).u8(0).u8(0).u8(0).bytes(body);  // CDR_BE
    std::vector<uint8_t> msg = rtps_header();
    add_sub(msg, kData, kDataFlagInlineQos | kDataFlagData, d.b);
    add_sub(msg, kHeartbeat, kHeartbeatFlagFinal, hb.b);
    add_sub(msg, kAckNack, 0, an.b);
    s.emplace_back("ok_be_mixed", msg);
  }
  {
    Raw df(false);
    df.u16(0).u16(28).be32(kReader.value).be32(kWriter.value).sn(8);
    df.u32(2).u16(2).u16(100).u32(250).bytes(sample.data() + 100, 150).zeros(2);
    std::vector<uint8_t> msg = rtps_header();
    add_sub(msg, kInfoTs, 0, Raw(false).u32(5).u32(6).b);
    add_sub(msg, kDataFrag, 0, df.b);
    s.emplace_back("ok_be_data_frag", msg);
  }
  {
    Raw src, hb;
    src.u32(0).u8(2).u8(1).u8(0x01).u8(0x10).prefix(kDst);
    hb.be32(0).be32(kWriter.value).sn(1).sn(2).u32(1);
    std::vector<uint8_t> msg = rtps_header();
    add_sub(msg, kInfoSrc, kFlagLittleEndian, src.b);
    add_sub(msg, kInfoTs, kFlagLittleEndian | kInfoTsFlagInvalidate, {});
    add_sub(msg, kHeartbeat, kFlagLittleEndian, hb.b);
    s.emplace_back("ok_info_src", msg);
  }
  {
    Raw hb;
    hb.be32(0).be32(kWriter.value).sn(1).sn(2).u32(1);
    std::vector<uint8_t> msg = rtps_header();
    add_sub(msg, kPad, kFlagLittleEndian, {}, 0);
    add_sub(msg, 0x80, kFlagLittleEndian, seq_bytes(8));
    add_sub(msg, 0x7f, 0, seq_bytes(4));
    add_sub(msg, kHeartbeat, kFlagLittleEndian, hb.b);
    add_sub(msg, 0xff, kFlagLittleEndian, seq_bytes(12), 0);
    s.emplace_back("ok_pad_vendor_unknown", msg);
  }
  {
    Raw d;
    d.u16(0).u16(16).be32(kReader.value).be32(kWriter.value).sn(6).bytes(seq_bytes(37));
    std::vector<uint8_t> msg = rtps_header();
    add_sub(msg, kData, kFlagLittleEndian | kDataFlagData, d.b, 0);
    s.emplace_back("ok_octets_zero", msg);
  }
  {
    OutgoingInlineQos q;
    q.key_hash = &key4;
    q.status_info = kStatusDisposed;
    Msg m;
    m->info_dst(kDst);
    m->info_ts(t);
    m->data(kReader, kWriter, 1, q, encap.data(), 4, body.data(), 5);
    m->data_frag(kReader, kWriter, 2, q, 1, 1, 64, 100, sample.data(), 64);
    m->heartbeat(kReader, kWriter, 1, 2, 1, true);
    m->acknack(kReader, kWriter, make_set(2, 2, {1}), 1, false);
    m->gap(kReader, kWriter, 1, make_set(2, 0, {}));
    m->nack_frag(kReader, kWriter, 2, make_set(2, 1, {0}), 1);
    m->heartbeat_frag(kReader, kWriter, 2, 2, 1);
    add("ok_all_kinds", m);
  }
  // Malformed.
  {
    Msg m;
    m->heartbeat(kReader, kWriter, 1, 2, 1, false);
    std::vector<uint8_t> b = m.bytes();
    s.emplace_back("bad_too_short", std::vector<uint8_t>(b.begin(), b.begin() + 12));
    b[3] = 'X';
    s.emplace_back("bad_magic", b);
    b[3] = 'S';
    b[4] = 1;
    s.emplace_back("bad_version", b);
    b[4] = 2;
    b[22] = 60;  // octetsToNextHeader 60, 28 bytes present
    s.emplace_back("bad_octets_past_end", b);
    b[22] = 26;
    s.emplace_back("bad_octets_not_mult4", b);
  }
  {
    Raw a;
    a.be32(kReader.value).be32(kWriter.value).sn(1).u32(257);
    for (int i = 0; i < 9; ++i) a.u32(0xffffffffu);
    a.u32(1);
    std::vector<uint8_t> msg = rtps_header();
    add_sub(msg, kAckNack, kFlagLittleEndian, a.b);
    s.emplace_back("bad_numbits_257", msg);
  }
  {
    Msg m;
    m->data_frag(kReader, kWriter, 1, {}, 1, 1, 1024, 0xffffffffu, sample.data(), 1024);
    s.emplace_back("bad_frag_sample_4g", m.bytes());
  }
  {
    Msg m;
    m->data_frag(kReader, kWriter, 1, {}, 5, 1, 512, 2000, sample.data(), 512);
    s.emplace_back("bad_frag_past_end", m.bytes());
  }
  {
    Raw d;
    d.u16(0).u16(16).be32(kReader.value).be32(kWriter.value).sn(1);
    d.u16(kPidKeyHash).u16(16).bytes(key4.value.data(), 16).bytes(encap).bytes(body);
    std::vector<uint8_t> msg = rtps_header();
    add_sub(msg, kData, kFlagLittleEndian | kDataFlagInlineQos | kDataFlagData, d.b);
    s.emplace_back("bad_inline_qos_no_sentinel", msg);
  }
  {
    Msg m;
    m->data(kReader, kWriter, 1, {}, encap.data(), 4, body.data(), 8);
    std::vector<uint8_t> b = m.bytes();
    b[21] |= kDataFlagKey;  // D and K together
    s.emplace_back("bad_data_dk", b);
  }
  return s;
}

Seeds discovery_seeds() {
  Seeds s;
  s.emplace_back("ok_participant_full", encode_participant_data(sample_participant()));
  {
    ParticipantData p;
    p.guid_prefix = kDst;
    s.emplace_back("ok_participant_min", encode_participant_data(p));
  }
  {
    Raw be(false);
    be.u16(kPidParticipantGuid).u16(16).prefix(kDst).be32(kEntityIdParticipant);
    be.u16(kPidProtocolVersion).u16(4).u8(2).u8(1).zeros(2);
    be.u16(kPidVendorId).u16(4).u8(0x01).u8(0x10).zeros(2);
    be.u16(kPidBuiltinEndpointSet).u16(4).u32(0x0000fc3f);
    be.u16(kPidParticipantLeaseDuration).u16(8).u32(20).u32(0);
    be.u16(kPidDomainId).u16(4).u32(0);
    be.u16(kPidDefaultUnicastLocator).u16(24).u32(1).u32(7411).zeros(12).u8(10).u8(0).u8(0).u8(2);
    be.param(kPidMetatrafficUnicastLocator, 24).u32(1).u32(7410).zeros(12).be32(0x0a000002);
    be.u16(kPidUserData).u16(12).u32(8).bytes(seq_bytes(8));
    be.u16(0x8007).u16(4).u32(0x12345678);  // vendor specific
    be.u16(kPidSentinel).u16(0);
    s.emplace_back("ok_participant_be", pl_payload(be.b, false));
  }
  s.emplace_back("ok_writer_full", encode_endpoint_data(sample_endpoint(true)));
  s.emplace_back("ok_writer_policies", encode_endpoint_data(policies_endpoint()));
  {
    Raw be(false);
    be.u16(kPidEndpointGuid).u16(16).prefix(kDst).be32(0x00000102);
    be.u16(kPidTopicName).u16(8).u32(2).u8('t').u8(0).zeros(2);
    be.u16(kPidTypeName).u16(8).u32(2).u8('T').u8(0).zeros(2);
    be.u16(kPidDeadline).u16(8).u32(2).u32(0);
    be.u16(kPidLiveliness).u16(12).u32(1).u32(0x7fffffffu).u32(0xffffffffu);
    be.u16(kPidOwnership).u16(4).u32(1);
    be.u16(kPidOwnershipStrength).u16(4).u32(12);
    be.u16(kPidPresentation).u16(8).u32(1).u8(1).u8(1).zeros(2);
    be.u16(0x0062).u16(8).u32(3).u8('w').u8('1').u8(0).zeros(1);  // PID_ENTITY_NAME: kept
    be.u16(kPidSentinel).u16(0);
    s.emplace_back("ok_endpoint_policies_be", pl_payload(be.b, false));
    Raw bad;
    bad.guid(kPidEndpointGuid, kSrc, 0x00001202).str(kPidTopicName, "t").str(kPidTypeName, "T");
    bad.param(kPidLiveliness, 12).u32(3).u32(1).u32(0).sentinel();  // no liveliness kind 3
    s.emplace_back("bad_liveliness_kind", pl_payload(bad.b));
  }
  s.emplace_back("ok_reader_full", encode_endpoint_data(sample_endpoint(false)));
  {
    EndpointData e;
    e.guid = Guid{kDst, EntityId{0x00000103}};
    e.topic_name = "t";
    e.type_name = "T";
    s.emplace_back("ok_endpoint_min", encode_endpoint_data(e));
    e.type_information = seq_bytes(37);
    e.data_representation = {kXcdr2};
    e.partitions = {"*"};
    s.emplace_back("ok_endpoint_typeinfo", encode_endpoint_data(e));
  }
  {
    Raw be(false);
    be.u16(kPidEndpointGuid).u16(16).prefix(kDst).be32(0x00000207);
    be.u16(kPidTopicName).u16(12).u32(5).u8('a').u8('b').u8('c').u8('d').u8(0).zeros(3);
    be.u16(kPidTypeName).u16(8).u32(2).u8('T').u8(0).zeros(2);
    be.u16(kPidReliability).u16(12).u32(2).u32(0x7fffffffu).u32(0xffffffffu);  // infinite
    be.u16(kPidDurability).u16(4).u32(1);
    be.u16(kPidHistory).u16(8).u32(1).u32(100);
    be.u16(kPidPartition).u16(20).u32(2).u32(2).u8('p').u8(0).zeros(2).u32(1).u8(0).zeros(3);
    be.u16(kPidDataRepresentation).u16(8).u32(2).u16(0).u16(2);
    be.u16(kPidExpectsInlineQos).u16(4).u8(1).zeros(3);
    be.u16(kPidSentinel).u16(0);
    s.emplace_back("ok_endpoint_be", pl_payload(be.b, false));
  }
  s.emplace_back("ok_key_endpoint",
                 pl_payload(Raw().guid(kPidEndpointGuid, kSrc, 0x00001202).sentinel().b));
  {
    std::vector<uint8_t> b = encode_participant_data(sample_participant());
    s.emplace_back("bad_no_sentinel", std::vector<uint8_t>(b.begin(), b.end() - 4));
    b[1] = kEncapCdrLe;
    s.emplace_back("bad_encapsulation", b);
  }
  {
    Raw no_guid;
    no_guid.param(kPidBuiltinEndpointSet, 4).u32(0x3f).str(kPidTopicName, "t").sentinel();
    s.emplace_back("bad_no_guid", pl_payload(no_guid.b));
    Raw no_nul;
    no_nul.guid(kPidEndpointGuid, kSrc, 0x00001202);
    no_nul.param(kPidTopicName, 8).u32(4).u8('a').u8('b').u8('c').u8('d');
    no_nul.str(kPidTypeName, "T").sentinel();
    s.emplace_back("bad_topic_no_nul", pl_payload(no_nul.b));
    Raw count;
    count.guid(kPidEndpointGuid, kSrc, 0x00001202).param(kPidPartition, 8).u32(0xffffffffu);
    count.u32(0).sentinel();
    s.emplace_back("bad_partition_count", pl_payload(count.b));
  }
  s.emplace_back("bad_short", std::vector<uint8_t>{0x00, 0x03, 0x00});
  // A TypeLookup reply as Cyclone DDS 0.10's serializer writes it (getTypes, OK, no types).
  {
    const std::vector<HashedTypeId> ids{{0xf2, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}};
    s.emplace_back("ok_typelookup_request",
                   encode_type_lookup_get_types(Guid{kSrc, EntityId{0x000300c3}}, 7, ids));
  }
  s.emplace_back("ok_typelookup_reply_empty",
                 std::vector<uint8_t>{
                     0x00, 0x07, 0x00, 0x00, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18,
                     0x19, 0x1a, 0x1b, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07, 0x00,
                     0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x28, 0x00, 0x00, 0x00, 0xd3, 0x52, 0x82,
                     0x01, 0x20, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x18, 0x00, 0x00, 0x00,
                     0xd1, 0x4a, 0x80, 0x52, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x77,
                     0x65, 0x8e, 0x5b, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00});
  return s;
}

std::vector<uint8_t> read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

bool starts_with(const std::string& s, const char* prefix) {
  return s.rfind(prefix, 0) == 0;
}

}  // namespace

TEST_CASE("Generate the fuzz seed corpora", "[.generate]") {
  for (const auto& [dir, seeds] :
       {std::pair{"rtps_message", rtps_seeds()}, std::pair{"discovery_data", discovery_seeds()}}) {
    const auto path = corpus_root() / dir;
    std::filesystem::create_directories(path);
    for (const auto& entry : std::filesystem::directory_iterator(path)) {
      std::filesystem::remove(entry.path());
    }
    for (const auto& [name, bytes] : seeds) {
      std::ofstream out(path / name, std::ios::binary);
      out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<long>(bytes.size()));
      REQUIRE(out.good());
    }
    WARN("wrote " << seeds.size() << " seeds to " << path.string());
  }
}

TEST_CASE("The committed RTPS seed corpus decodes as its file names say") {
  const auto dir = corpus_root() / "rtps_message";
  REQUIRE(std::filesystem::is_directory(dir));
  size_t ok = 0, bad = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    INFO(name);
    const auto bytes = read_file(entry.path());
    REQUIRE(bytes.size() <= 8192);
    Recorder r;
    const DecodeError e = decode(bytes, r);
    if (starts_with(name, "ok_")) {
      REQUIRE(e == DecodeError::kNone);
      ++ok;
    } else {
      REQUIRE(starts_with(name, "bad_"));
      REQUIRE(e != DecodeError::kNone);
      ++bad;
    }
  }
  REQUIRE(ok + bad == rtps_seeds().size());
  REQUIRE(ok >= 20);
}

TEST_CASE("Big-endian policies decode, and unknown parameters are kept byte for byte") {
  const auto seeds = discovery_seeds();
  const auto it = std::find_if(seeds.begin(), seeds.end(),
                               [](const auto& s) { return s.first == "ok_endpoint_policies_be"; });
  REQUIRE(it != seeds.end());
  EndpointData e;
  REQUIRE(decode_endpoint_data(it->second.data(), it->second.size(), true, e));
  CHECK(e.policies.deadline == 2s);
  CHECK(e.policies.liveliness.kind == LivelinessKind::kManualByParticipant);
  CHECK(e.policies.liveliness.lease_duration == kInfinite);
  CHECK(e.policies.ownership == OwnershipKind::kExclusive);
  CHECK(e.policies.ownership_strength == 12);
  CHECK(e.policies.presentation == PresentationQos{PresentationScope::kTopic, true, true});
  REQUIRE(e.policies.other.size() == 1);
  CHECK(e.policies.other[0].pid == 0x0062);
  CHECK_FALSE(e.policies.other[0].little_endian);
  CHECK(e.policies.other[0].value == Raw(false).u32(3).u8('w').u8('1').u8(0).zeros(1).b);
  // Durabilities beyond TRANSIENT_LOCAL are kept as announced; an unknown one is malformed.
  for (uint32_t kind : {2u, 3u, 4u}) {
    Raw r;
    r.guid(kPidEndpointGuid, kSrc, 0x00001202).str(kPidTopicName, "t").str(kPidTypeName, "T");
    r.param(kPidDurability, 4).u32(kind).sentinel();
    const auto b = pl_payload(r.b);
    EndpointData d;
    CHECK(decode_endpoint_data(b.data(), b.size(), true, d) == (kind <= 3));
    if (kind <= 3) CHECK(d.durability == static_cast<DurabilityKind>(kind));
  }
}

TEST_CASE("The committed discovery seed corpus decodes as its file names say") {
  const auto dir = corpus_root() / "discovery_data";
  REQUIRE(std::filesystem::is_directory(dir));
  size_t n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    INFO(name);
    const auto b = read_file(entry.path());
    REQUIRE(b.size() <= 8192);
    ParticipantData p;
    EndpointData e;
    Guid g;
    if (starts_with(name, "ok_participant_")) {
      REQUIRE(decode_participant_data(b.data(), b.size(), p));
    } else if (starts_with(name, "ok_writer_") || starts_with(name, "ok_reader_") ||
               starts_with(name, "ok_endpoint_")) {
      REQUIRE(decode_endpoint_data(b.data(), b.size(), true, e));
      REQUIRE(decode_endpoint_key(b.data(), b.size(), g));
      REQUIRE(g == e.guid);
    } else if (starts_with(name, "ok_key_")) {
      REQUIRE(decode_endpoint_key(b.data(), b.size(), g));
    } else if (starts_with(name, "ok_typelookup_request")) {
      const auto q = decode_type_lookup_request(b.data(), b.size());
      REQUIRE(q);
      REQUIRE(q->type_ids.size() == 1);
    } else if (starts_with(name, "ok_typelookup_reply_")) {
      const auto h = decode_type_lookup_reply(b.data(), b.size());
      REQUIRE(h);
      REQUIRE(h->body != nullptr);
    } else {
      REQUIRE(starts_with(name, "bad_"));
      REQUIRE_FALSE(decode_participant_data(b.data(), b.size(), p));
      REQUIRE_FALSE(decode_endpoint_data(b.data(), b.size(), true, e));
    }
    ++n;
  }
  REQUIRE(n == discovery_seeds().size());
}
