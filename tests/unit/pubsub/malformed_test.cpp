// Bad input, from the decoder up to a running participant.
//
// One table of malformed datagrams (truncated headers, octetsToNextHeader past the end or not a
// multiple of 4, numBits over 256, DATA_FRAG with sampleSize over the limit or fragment numbers
// past the end, parameter lists without a sentinel, ...) drives two levels of tests:
// - decode_message returns exactly the expected DecodeError, and the Visitor saw exactly the
//   submessages before the bad one, and nothing after it;
// - a Participant on a FakeNetwork that is sent every datagram of the table drops each one and
//   counts it once, under its reason (ParticipantStats::malformed_by_reason), and still works.
// Then the sample-size limit: a DATA_FRAG announcing more than ParticipantOptions::max_sample_size
// never reaches a reader (nothing is allocated for it).
#include <atomic>
#include <catch2/catch.hpp>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "pubsub/participant.hpp"
#include "test_util.hpp"
#include "wire/constants.hpp"
#include "wire/message.hpp"

using namespace pubsub;
using namespace pubsub::wire;
using namespace std::chrono_literals;

namespace {

constexpr GuidPrefix kSrc{0x01, 0x99, 0xc1, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7, 0xc8, 0xc9, 0xca};
constexpr uint32_t kReaderId = 0x00000107;
constexpr uint32_t kWriterId = 0x00000102;

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
  Raw& be32(uint32_t v) {
    return u8(static_cast<uint8_t>(v >> 24))
        .u8(static_cast<uint8_t>(v >> 16))
        .u8(static_cast<uint8_t>(v >> 8))
        .u8(static_cast<uint8_t>(v));
  }
  Raw& sn(int64_t v) {
    return u32(static_cast<uint32_t>(static_cast<uint64_t>(v) >> 32)).u32(static_cast<uint32_t>(v));
  }
  Raw& bytes(const std::vector<uint8_t>& v) {
    b.insert(b.end(), v.begin(), v.end());
    return *this;
  }
  Raw& fill(size_t n, uint8_t value = 0) {
    b.insert(b.end(), n, value);
    return *this;
  }
  std::vector<uint8_t> b;

 private:
  bool le_;
};

std::vector<uint8_t> header(const GuidPrefix& prefix = kSrc, uint8_t major = 2) {
  Raw r;
  r.u8('R').u8('T').u8('P').u8('S').u8(major).u8(3).u8(kVendorId[0]).u8(kVendorId[1]);
  r.b.insert(r.b.end(), prefix.begin(), prefix.end());
  return r.b;
}

// A submessage: header (octetsToNextHeader = body size unless given) + body.
std::vector<uint8_t> sub(uint8_t id, uint8_t flags, const std::vector<uint8_t>& body,
                         std::optional<uint16_t> octets = std::nullopt) {
  Raw r(flags & kFlagLittleEndian);
  r.u8(id).u8(flags).u16(octets ? *octets : static_cast<uint16_t>(body.size())).bytes(body);
  return r.b;
}

std::vector<uint8_t> cat(std::initializer_list<std::vector<uint8_t>> parts) {
  std::vector<uint8_t> v;
  for (const auto& p : parts) v.insert(v.end(), p.begin(), p.end());
  return v;
}

// ---- bodies of well-formed submessages, and knobs to break them ---------------------------------

std::vector<uint8_t> heartbeat_body(int64_t first = 1, int64_t last = 2, bool le = true) {
  return Raw(le).be32(0).be32(kWriterId).sn(first).sn(last).u32(1).b;
}
std::vector<uint8_t> heartbeat(int64_t first = 1, int64_t last = 2) {
  return sub(kHeartbeat, kFlagLittleEndian, heartbeat_body(first, last));
}

std::vector<uint8_t> data_body(int64_t sn = 1, uint16_t to_qos = 16,
                               const std::vector<uint8_t>& qos = {}) {
  Raw r;
  r.u16(0).u16(to_qos).be32(0).be32(kWriterId).sn(sn).bytes(qos);
  r.u8(0).u8(1).u8(0).u8(0).u32(0xdeadbeef);  // CDR_LE payload
  return r.b;
}
std::vector<uint8_t> data(int64_t sn = 1) {
  return sub(kData, kFlagLittleEndian | kDataFlagData, data_body(sn));
}

std::vector<uint8_t> info_ts() {
  return sub(kInfoTs, kFlagLittleEndian, Raw().u32(1'700'000'000).u32(0x80000000u).b);
}

struct Frag {
  int64_t sn = 1;
  uint16_t to_qos = 28;
  uint32_t start = 1;
  uint16_t count = 1;
  uint16_t size = 512;
  uint32_t sample = 2000;
  size_t data_bytes = 512;
  std::vector<uint8_t> qos;
};
std::vector<uint8_t> data_frag(const Frag& f) {
  Raw r;
  r.u16(0).u16(f.to_qos).be32(0).be32(kWriterId).sn(f.sn);
  r.u32(f.start).u16(f.count).u16(f.size).u32(f.sample).bytes(f.qos).fill(f.data_bytes, 0x5a);
  while (r.b.size() % 4) r.u8(0);
  return sub(kDataFrag, kFlagLittleEndian | (f.qos.empty() ? 0 : kDataFragFlagInlineQos), r.b);
}

std::vector<uint8_t> acknack_body(int64_t base, uint32_t num_bits, size_t words, bool count) {
  Raw r;
  r.be32(kReaderId).be32(kWriterId).sn(base).u32(num_bits);
  for (size_t i = 0; i < words; ++i) r.u32(0xffffffffu);
  if (count) r.u32(1);
  return r.b;
}
std::vector<uint8_t> acknack(int64_t base, uint32_t num_bits, size_t words, bool count = true) {
  return sub(kAckNack, kFlagLittleEndian, acknack_body(base, num_bits, words, count));
}

std::vector<uint8_t> gap(int64_t start, int64_t base, uint32_t num_bits, size_t words) {
  Raw r;
  r.be32(kReaderId).be32(kWriterId).sn(start).sn(base).u32(num_bits);
  for (size_t i = 0; i < words; ++i) r.u32(0x80000000u);
  return sub(kGap, kFlagLittleEndian, r.b);
}

std::vector<uint8_t> nack_frag(int64_t sn, uint32_t base, uint32_t num_bits, size_t words) {
  Raw r;
  r.be32(kReaderId).be32(kWriterId).sn(sn).u32(base).u32(num_bits);
  for (size_t i = 0; i < words; ++i) r.u32(0x80000000u);
  r.u32(1);
  return sub(kNackFrag, kFlagLittleEndian, r.b);
}

std::vector<uint8_t> heartbeat_frag(int64_t sn, uint32_t last_fragment) {
  return sub(kHeartbeatFrag, kFlagLittleEndian,
             Raw().be32(kReaderId).be32(kWriterId).sn(sn).u32(last_fragment).u32(1).b);
}

Raw key_hash_param(uint16_t len = 16) {
  Raw r;
  r.u16(kPidKeyHash).u16(len).fill(len, 0x11);
  return r;
}
std::vector<uint8_t> sentinel() {
  return Raw().u16(kPidSentinel).u16(0).b;
}

// ---- the table ------------------------------------------------------------------------------

struct Case {
  std::string name;
  std::vector<uint8_t> bytes;
  DecodeError error;
  std::vector<uint8_t> delivered;  // submessage ids the Visitor must have seen, in order
};

// Well-formed submessages before the bad one (delivered) and after it (never reached).
std::vector<uint8_t> around(const std::vector<uint8_t>& bad, bool trailing = true) {
  return cat({header(), info_ts(), data(1), heartbeat(), bad,
              trailing ? heartbeat() : std::vector<uint8_t>{}});
}
const std::vector<uint8_t> kBefore{kData, kHeartbeat};

std::vector<Case> malformed_cases() {
  std::vector<Case> c;
  const std::vector<uint8_t> good = cat({header(), heartbeat()});

  // Message header.
  c.push_back({"empty datagram", {}, DecodeError::kTooShort, {}});
  c.push_back({"19-byte header",
               std::vector<uint8_t>(good.begin(), good.begin() + 19),
               DecodeError::kTooShort,
               {}});
  {
    auto b = good;
    b[3] = 'X';
    c.push_back({"not RTPS", b, DecodeError::kBadMagic, {}});
  }
  c.push_back(
      {"protocol version 1", cat({header(kSrc, 1), heartbeat()}), DecodeError::kBadVersion, {}});
  c.push_back(
      {"protocol version 3", cat({header(kSrc, 3), heartbeat()}), DecodeError::kBadVersion, {}});

  // Submessage headers and octetsToNextHeader.
  c.push_back({"truncated submessage header",
               cat({header(), heartbeat(), {kHeartbeat, 0x01, 28}}),
               DecodeError::kTruncated,
               {kHeartbeat}});
  c.push_back(
      {"one stray byte after the header", cat({header(), {0x07}}), DecodeError::kTruncated, {}});
  c.push_back({"octetsToNextHeader past the end",
               around(sub(kData, kFlagLittleEndian | kDataFlagData, data_body(2), 40), false),
               DecodeError::kTruncated, kBefore});
  c.push_back({"octetsToNextHeader 0xfffc past the end",
               around(sub(kAckNack, kFlagLittleEndian, acknack_body(1, 0, 0, true), 0xfffc), false),
               DecodeError::kTruncated, kBefore});
  c.push_back({"octetsToNextHeader not a multiple of 4",
               around(sub(kHeartbeat, kFlagLittleEndian, heartbeat_body(), 26)),
               DecodeError::kBadLength, kBefore});
  c.push_back({"octetsToNextHeader not a multiple of 4, big endian",
               around(sub(kHeartbeat, 0, heartbeat_body(1, 2, false), 30)), DecodeError::kBadLength,
               kBefore});
  c.push_back({"octetsToNextHeader not a multiple of 4 on a vendor submessage",
               around(sub(0x80, kFlagLittleEndian, {1, 2, 3, 4, 5, 6, 7, 8}, 5)),
               DecodeError::kBadLength, kBefore});
  c.push_back({"octetsToNextHeader not a multiple of 4 first",
               cat({header(), sub(kAckNack, kFlagLittleEndian, acknack_body(1, 0, 0, true), 17),
                    heartbeat()}),
               DecodeError::kBadLength,
               {}});

  // Bodies too short for their fields.
  {
    std::vector<uint8_t> short_hb = heartbeat_body();
    short_hb.resize(24);  // no count
    c.push_back({"HEARTBEAT body shorter than its fields",
                 around(sub(kHeartbeat, kFlagLittleEndian, short_hb)), DecodeError::kTruncated,
                 kBefore});
  }
  c.push_back({"INFO_TS body of 4 bytes", around(sub(kInfoTs, kFlagLittleEndian, {1, 0, 0, 0})),
               DecodeError::kTruncated, kBefore});
  c.push_back({"INFO_DST body of 8 bytes",
               around(sub(kInfoDst, kFlagLittleEndian, Raw().fill(8).b)), DecodeError::kTruncated,
               kBefore});
  c.push_back({"INFO_SRC body of 16 bytes",
               around(sub(kInfoSrc, kFlagLittleEndian, Raw().fill(16).b)), DecodeError::kTruncated,
               kBefore});
  c.push_back({"ACKNACK without its count", around(acknack(1, 32, 1, false)),
               DecodeError::kTruncated, kBefore});

  // Sequence numbers.
  c.push_back(
      {"HEARTBEAT firstSN 0", around(heartbeat(0, 2)), DecodeError::kBadSequenceNumber, kBefore});
  c.push_back({"HEARTBEAT lastSN below firstSN - 1", around(heartbeat(5, 3)),
               DecodeError::kBadSequenceNumber, kBefore});
  c.push_back({"DATA writerSN 0", around(data(0)), DecodeError::kBadSequenceNumber, kBefore});
  c.push_back(
      {"DATA negative writerSN", around(data(-1)), DecodeError::kBadSequenceNumber, kBefore});
  c.push_back(
      {"GAP gapStart 0", around(gap(0, 1, 1, 1)), DecodeError::kBadSequenceNumber, kBefore});
  c.push_back({"NACK_FRAG writerSN 0", around(nack_frag(0, 1, 1, 1)),
               DecodeError::kBadSequenceNumber, kBefore});

  // Sets: numBits over 256, base 0, missing words.
  c.push_back({"ACKNACK numBits 257", around(acknack(1, 257, 9)), DecodeError::kBadSet, kBefore});
  c.push_back({"ACKNACK numBits 0xffffffff", around(acknack(1, 0xffffffffu, 8)),
               DecodeError::kBadSet, kBefore});
  c.push_back({"ACKNACK numBits 257 first",
               cat({header(), acknack(1, 257, 9), heartbeat()}),
               DecodeError::kBadSet,
               {}});
  c.push_back({"ACKNACK bitmap words missing", around(acknack(1, 256, 3, false)),
               DecodeError::kBadSet, kBefore});
  c.push_back(
      {"ACKNACK bitmapBase 0 with a bit", around(acknack(0, 1, 1)), DecodeError::kBadSet, kBefore});
  c.push_back({"GAP numBits 300", around(gap(1, 2, 300, 10)), DecodeError::kBadSet, kBefore});
  c.push_back(
      {"GAP gapList base below gapStart", around(gap(5, 4, 1, 1)), DecodeError::kBadSet, kBefore});
  c.push_back(
      {"NACK_FRAG numBits 257", around(nack_frag(1, 1, 257, 9)), DecodeError::kBadSet, kBefore});
  c.push_back(
      {"NACK_FRAG fragment base 0", around(nack_frag(1, 0, 1, 1)), DecodeError::kBadSet, kBefore});

  // DATA flags, octetsToInlineQos and inline QoS parameter lists.
  c.push_back({"DATA with both D and K",
               around(sub(kData, kFlagLittleEndian | kDataFlagData | kDataFlagKey, data_body())),
               DecodeError::kBadFlags, kBefore});
  c.push_back({"DATA octetsToInlineQos 12",
               around(sub(kData, kFlagLittleEndian | kDataFlagData, data_body(2, 12))),
               DecodeError::kTruncated, kBefore});
  c.push_back({"DATA octetsToInlineQos past the submessage",
               around(sub(kData, kFlagLittleEndian | kDataFlagData, data_body(2, 200))),
               DecodeError::kTruncated, kBefore});
  c.push_back({"DATA inline QoS without a sentinel",
               around(sub(kData, kFlagLittleEndian | kDataFlagInlineQos | kDataFlagData,
                          data_body(2, 16, key_hash_param().b))),
               DecodeError::kBadParameterList, kBefore});
  // octetsToNextHeader 0 (to the end): the list stops 2 bytes into the sentinel.
  c.push_back(
      {"DATA inline QoS cut inside the sentinel",
       around(sub(kData, kFlagLittleEndian | kDataFlagInlineQos,
                  Raw().u16(0).u16(16).be32(0).be32(kWriterId).sn(2).u16(kPidSentinel).b, 0),
              false),
       DecodeError::kBadParameterList, kBefore});
  c.push_back({"DATA inline QoS length not a multiple of 4",
               around(sub(kData, kFlagLittleEndian | kDataFlagInlineQos | kDataFlagData,
                          data_body(2, 16, cat({Raw().u16(0x8001).u16(6).fill(8).b, sentinel()})))),
               DecodeError::kBadParameterList, kBefore});
  c.push_back({"DATA inline QoS parameter past the end",
               around(sub(kData, kFlagLittleEndian | kDataFlagInlineQos | kDataFlagData,
                          data_body(2, 16, Raw().u16(kPidKeyHash).u16(0x1000).fill(16).b)),
                      false),
               DecodeError::kBadParameterList, kBefore});
  c.push_back({"DATA inline key hash of 8 bytes",
               around(sub(kData, kFlagLittleEndian | kDataFlagInlineQos | kDataFlagData,
                          data_body(2, 16, cat({key_hash_param(8).b, sentinel()})))),
               DecodeError::kBadParameterList, kBefore});
  c.push_back({"DATA inline status info of 0 bytes",
               around(sub(kData, kFlagLittleEndian | kDataFlagInlineQos | kDataFlagData,
                          data_body(2, 16, cat({Raw().u16(kPidStatusInfo).u16(0).b, sentinel()})))),
               DecodeError::kBadParameterList, kBefore});

  // DATA_FRAG: sample size over the limit, fragment numbers past the end, zero sizes.
  c.push_back({"DATA_FRAG sampleSize 4 GiB - 1",
               around(data_frag({.size = 1024, .sample = 0xffffffffu, .data_bytes = 1024})),
               DecodeError::kSampleTooLarge, kBefore});
  c.push_back({"DATA_FRAG sampleSize one over the default limit",
               around(data_frag({.size = 1024, .sample = (256u << 20) + 1, .data_bytes = 1024})),
               DecodeError::kSampleTooLarge, kBefore});
  c.push_back({"DATA_FRAG first fragment past the last",
               around(data_frag({.start = 5, .data_bytes = 512})), DecodeError::kBadFragment,
               kBefore});
  c.push_back({"DATA_FRAG fragments run past the last",
               around(data_frag({.start = 4, .count = 2, .data_bytes = 464})),
               DecodeError::kBadFragment, kBefore});
  c.push_back({"DATA_FRAG start + count overflows 32 bits",
               around(data_frag(
                   {.start = 0xffffffffu, .count = 2, .size = 1, .sample = 100, .data_bytes = 2})),
               DecodeError::kBadFragment, kBefore});
  c.push_back({"DATA_FRAG fragmentStartingNum 0", around(data_frag({.start = 0})),
               DecodeError::kBadFragment, kBefore});
  c.push_back({"DATA_FRAG 0 fragments in the submessage", around(data_frag({.count = 0})),
               DecodeError::kBadFragment, kBefore});
  c.push_back({"DATA_FRAG fragmentSize 0", around(data_frag({.size = 0})),
               DecodeError::kBadFragment, kBefore});
  c.push_back({"DATA_FRAG sampleSize 0", around(data_frag({.sample = 0})),
               DecodeError::kBadFragment, kBefore});
  c.push_back({"DATA_FRAG data shorter than its fragments",
               around(data_frag({.count = 2, .data_bytes = 600})), DecodeError::kBadFragment,
               kBefore});
  c.push_back({"DATA_FRAG last fragment 4 bytes short",  // needs 2000 - 3 * 512 = 464
               around(data_frag({.start = 4, .data_bytes = 460})), DecodeError::kBadFragment,
               kBefore});
  c.push_back({"DATA_FRAG octetsToInlineQos 24", around(data_frag({.to_qos = 24})),
               DecodeError::kTruncated, kBefore});
  c.push_back({"DATA_FRAG header cut short",
               around(sub(kDataFrag, kFlagLittleEndian,
                          Raw().u16(0).u16(28).be32(0).be32(kWriterId).sn(1).u32(1).b)),
               DecodeError::kTruncated, kBefore});
  c.push_back({"DATA_FRAG inline QoS without a sentinel",
               around(data_frag({.qos = key_hash_param().b})), DecodeError::kBadParameterList,
               kBefore});
  c.push_back({"HEARTBEAT_FRAG lastFragmentNum 0", around(heartbeat_frag(1, 0)),
               DecodeError::kBadFragment, kBefore});
  return c;
}

struct Recorder final : Visitor {
  std::vector<uint8_t> ids;
  uint64_t checksum = 0;  // touches every byte of every view
  void touch(const uint8_t* p, size_t n) {
    for (size_t i = 0; i < n; ++i) checksum += p[i];
  }
  void on_data(const ReceiveContext&, const DataSubmessage& m) override {
    ids.push_back(kData);
    touch(m.inline_qos, m.inline_qos_size);
    touch(m.payload, m.payload_size);
  }
  void on_data_frag(const ReceiveContext&, const DataFragSubmessage& m) override {
    ids.push_back(kDataFrag);
    touch(m.data, m.data_size);
  }
  void on_heartbeat(const ReceiveContext&, const HeartbeatSubmessage&) override {
    ids.push_back(kHeartbeat);
  }
  void on_acknack(const ReceiveContext&, const AckNackSubmessage&) override {
    ids.push_back(kAckNack);
  }
  void on_gap(const ReceiveContext&, const GapSubmessage&) override { ids.push_back(kGap); }
  void on_nack_frag(const ReceiveContext&, const NackFragSubmessage&) override {
    ids.push_back(kNackFrag);
  }
  void on_heartbeat_frag(const ReceiveContext&, const HeartbeatFragSubmessage&) override {
    ids.push_back(kHeartbeatFrag);
  }
};

DecodeError decode(const std::vector<uint8_t>& msg, Recorder& r, DecodeLimits limits = {}) {
  std::unique_ptr<uint8_t[]> copy(new uint8_t[msg.size()]);  // exact size, for ASan
  if (!msg.empty()) std::memcpy(copy.get(), msg.data(), msg.size());
  return decode_message(copy.get(), msg.size(), limits, r);
}

// A transport that only sends (its receiver ignores whatever reaches it).
struct NullReceiver final : TransportReceiver {
  void on_datagram(unsigned, const uint8_t*, size_t) override {}
  void on_receive_batch_end(unsigned) override {}
};

struct Body {
  std::mutex mu;
  std::vector<std::vector<uint8_t>> got;
  size_t size() {
    std::lock_guard lk(mu);
    return got.size();
  }
};

}  // namespace

TEST_CASE("Each malformed datagram gives its DecodeError after delivering what came before") {
  const auto cases = malformed_cases();
  REQUIRE(cases.size() >= 50);
  for (const Case& c : cases) {
    INFO(c.name);
    REQUIRE(c.error != DecodeError::kNone);
    Recorder r;
    REQUIRE(decode(c.bytes, r) == c.error);
    REQUIRE(r.ids == c.delivered);
  }
}

TEST_CASE("The well-formed parts of the malformed table decode cleanly") {
  // Guards the table: each case is malformed only where it says.
  Recorder r;
  REQUIRE(decode(around({}), r) == DecodeError::kNone);
  REQUIRE(r.ids == std::vector<uint8_t>{kData, kHeartbeat, kHeartbeat});
  for (const auto& ok :
       {data_frag({}), data_frag({.start = 4, .data_bytes = 464}),
        data_frag({.qos = cat({key_hash_param().b, sentinel()})}), acknack(1, 256, 8),
        gap(1, 2, 256, 8), nack_frag(1, 1, 256, 8), heartbeat_frag(1, 1), heartbeat(1, 0)}) {
    Recorder ro;
    REQUIRE(decode(around(ok), ro) == DecodeError::kNone);
    REQUIRE(ro.ids.size() == 4);
  }
}

TEST_CASE("DATA_FRAG sampleSize is checked against DecodeLimits::max_sample_size") {
  const auto frag = [](uint32_t sample) {
    return cat({header(), data_frag({.size = 1024, .sample = sample, .data_bytes = 1024})});
  };
  DecodeLimits one_mib;
  one_mib.max_sample_size = 1u << 20;
  Recorder r;
  REQUIRE(decode(frag(1u << 20), r, one_mib) == DecodeError::kNone);
  REQUIRE(r.ids == std::vector<uint8_t>{kDataFrag});
  REQUIRE(decode(frag((1u << 20) + 1), r, one_mib) == DecodeError::kSampleTooLarge);
  REQUIRE(decode(frag(100u << 20), r, one_mib) == DecodeError::kSampleTooLarge);
  REQUIRE(decode(frag(0xffffffffu), r, DecodeLimits{}) == DecodeError::kSampleTooLarge);
  REQUIRE(r.ids.size() == 1);  // none of the refused ones reached the Visitor
}

TEST_CASE("A participant drops and counts every malformed datagram, and keeps working") {
  auto net = FakeNetwork::create();
  auto target = Participant::create(test::fake_options(net));
  auto peer = Participant::create(test::fake_options(net));
  REQUIRE(target);
  REQUIRE(peer);
  NullReceiver sink;
  auto raw = net->make_transport();
  REQUIRE(raw->start(sink).ok());
  const Locator to = target.value()->unicast_locator();

  const auto cases = malformed_cases();
  uint64_t expect_by_reason[16] = {};
  for (const Case& c : cases) expect_by_reason[static_cast<size_t>(c.error)]++;
  // Well-formed datagrams (header only, skipped submessages, data for nobody) are not counted.
  const std::vector<std::vector<uint8_t>> fine = {
      header(), cat({header(), sub(0x80, kFlagLittleEndian, {1, 2, 3, 4})}), around({})};

  const ParticipantStats before = target.value()->stats();
  REQUIRE(before.malformed_messages == 0);
  for (const Case& c : cases) {
    const ConstBuffer part{c.bytes.data(), c.bytes.size()};
    raw->send({&to, 1}, {&part, 1});
  }
  for (const auto& f : fine) {
    const ConstBuffer part{f.data(), f.size()};
    raw->send({&to, 1}, {&part, 1});
  }
  REQUIRE(test::eventually(
      [&] { return target.value()->stats().malformed_messages >= cases.size(); }, 10s));

  // The participant still discovers, matches and delivers.
  TopicDescription topic{"AfterGarbage", "test::Blob"};
  Body got;
  auto reader = target.value()->create_reader(topic, ReaderQos{}, [&](const SampleInfo&, Bytes b) {
    std::lock_guard lk(got.mu);
    got.got.emplace_back(reinterpret_cast<const uint8_t*>(b.data()),
                         reinterpret_cast<const uint8_t*>(b.data()) + b.size());
  });
  REQUIRE(reader);
  auto writer = peer.value()->create_writer(topic);
  REQUIRE(writer);
  REQUIRE(writer.value()->wait_for_readers(1, 10s));
  const auto sample = test::pattern(7, 100);
  REQUIRE(writer.value()->write(test::as_bytes(sample)).ok());
  REQUIRE(test::eventually([&] { return got.size() == 1; }, 10s));
  {
    std::lock_guard lk(got.mu);
    REQUIRE(got.got[0] == sample);
  }

  // Exactly one count per malformed datagram, each under its reason; nothing else counted.
  const ParticipantStats after = target.value()->stats();
  REQUIRE(after.malformed_messages == cases.size());
  for (size_t i = 0; i < 16; ++i) {
    INFO("reason " << i << " (" << to_string(static_cast<DecodeError>(i)) << ")");
    REQUIRE(after.malformed_by_reason[i] - before.malformed_by_reason[i] == expect_by_reason[i]);
  }
  REQUIRE(after.malformed_by_reason[static_cast<size_t>(DecodeError::kNone)] == 0);
  REQUIRE(after.malformed_by_reason[static_cast<size_t>(DecodeError::kSampleTooLarge)] == 2);
  REQUIRE(peer.value()->stats().malformed_messages == 0);
  raw->stop();
}

TEST_CASE("A DATA_FRAG over max_sample_size never reaches the reader") {
  auto net = FakeNetwork::create();
  ParticipantOptions small = test::fake_options(net);
  small.max_sample_size = 1u << 20;
  auto sub_p = Participant::create(small);
  auto pub_p = Participant::create(test::fake_options(net));
  REQUIRE(sub_p);
  REQUIRE(pub_p);
  TopicDescription topic{"Big", "test::Blob"};
  Body got;
  auto reader = sub_p.value()->create_reader(topic, ReaderQos{}, [&](const SampleInfo&, Bytes b) {
    std::lock_guard lk(got.mu);
    got.got.emplace_back(reinterpret_cast<const uint8_t*>(b.data()),
                         reinterpret_cast<const uint8_t*>(b.data()) + b.size());
  });
  REQUIRE(reader);
  auto writer = pub_p.value()->create_writer(topic);
  REQUIRE(writer);
  REQUIRE(writer.value()->wait_for_readers(1, 10s));
  REQUIRE(reader.value()->matched_writers() == 1);

  NullReceiver sink;
  auto raw = net->make_transport();
  REQUIRE(raw->start(sink).ok());
  const Locator to = sub_p.value()->unicast_locator();
  // Well-formed DATA_FRAGs in the name of the matched writer, first fragment of a sample of the
  // announced size. Sequence numbers far ahead, so they cannot disturb the real samples.
  const Guid w = writer.value()->guid();
  auto forged = [&](SequenceNumber sn, uint32_t sample_size) {
    std::vector<uint8_t> buf(4096);
    MessageBuilder b(buf.data(), buf.size());
    b.header(w.prefix);
    const std::vector<uint8_t> first(1024, 0x77);
    REQUIRE(b.data_frag(EntityId{0}, w.entity, sn, {}, 1, 1, 1024, sample_size, first.data(),
                        first.size()));
    buf.resize(b.size());
    return buf;
  };
  const ParticipantStats before = sub_p.value()->stats();
  const auto too_large = static_cast<size_t>(DecodeError::kSampleTooLarge);
  for (const auto& [sn, size] : {std::pair<SequenceNumber, uint32_t>{1000, 100u << 20},
                                 {1001, (1u << 20) + 1},
                                 {1002, 0xffffffffu}}) {
    const auto d = forged(sn, size);
    const ConstBuffer part{d.data(), d.size()};
    raw->send({&to, 1}, {&part, 1});
  }
  REQUIRE(test::eventually(
      [&] { return sub_p.value()->stats().malformed_by_reason[too_large] == 3; }, 10s));
  const ParticipantStats after = sub_p.value()->stats();
  REQUIRE(after.malformed_messages - before.malformed_messages == 3);
  // The decoder stopped them: the reader saw no fragment and holds no reassembly buffer.
  ReaderStats rs = reader.value()->stats();
  REQUIRE(rs.fragments_received == 0);
  REQUIRE(rs.too_large_drops == 0);
  REQUIRE(rs.buffered_bytes == 0);

  // Exactly the limit passes the decoder and is buffered by the reader (bounded by it).
  {
    const auto d = forged(1003, 1u << 20);
    const ConstBuffer part{d.data(), d.size()};
    raw->send({&to, 1}, {&part, 1});
  }
  REQUIRE(test::eventually([&] { return reader.value()->stats().fragments_received == 1; }, 10s));
  rs = reader.value()->stats();
  // The sample's bytes plus a small fixed bookkeeping charge per partial sample.
  REQUIRE(rs.buffered_bytes >= (1u << 20));
  REQUIRE(rs.buffered_bytes < (1u << 20) + 1024);
  REQUIRE(rs.too_large_drops == 0);
  REQUIRE(sub_p.value()->stats().malformed_messages - before.malformed_messages == 3);

  // Real samples below the limit, fragmented or not, still arrive intact.
  const auto small_sample = test::pattern(1, 64);
  const auto frag_sample = test::pattern(2, 600'000);
  REQUIRE(writer.value()->write(test::as_bytes(small_sample)).ok());
  REQUIRE(writer.value()->write(test::as_bytes(frag_sample)).ok());
  REQUIRE(test::eventually([&] { return got.size() == 2; }, 10s));
  {
    std::lock_guard lk(got.mu);
    REQUIRE(got.got[0] == small_sample);
    REQUIRE(got.got[1] == frag_sample);
  }
  raw->stop();
}

TEST_CASE("Forged partial samples cannot pile up beyond the reader's resource limits") {
  // Thousands of tiny first fragments in a matched writer's name: each would start a
  // reassembly. The reader must hold at most max_samples of them (and their bookkeeping).
  auto net = FakeNetwork::create();
  auto sub_p = Participant::create(test::fake_options(net));
  auto pub_p = Participant::create(test::fake_options(net));
  REQUIRE(sub_p);
  REQUIRE(pub_p);
  TopicDescription topic{"Flood", "test::Blob"};
  ReaderQos rq;
  rq.resource_limits.max_samples = 16;
  auto reader = sub_p.value()->create_reader(topic, rq, nullptr);
  REQUIRE(reader);
  auto writer = pub_p.value()->create_writer(topic);
  REQUIRE(writer);
  REQUIRE(writer.value()->wait_for_readers(1, 10s));

  NullReceiver sink;
  auto raw = net->make_transport();
  REQUIRE(raw->start(sink).ok());
  const Locator to = sub_p.value()->unicast_locator();
  const Guid w = writer.value()->guid();
  constexpr int kForged = 5000;
  for (int i = 0; i < kForged; ++i) {
    std::vector<uint8_t> buf(256);
    MessageBuilder b(buf.data(), buf.size());
    b.header(w.prefix);
    const uint8_t frag[8] = {};
    REQUIRE(b.data_frag(EntityId{0}, w.entity, 100000 + i, {}, 1, 1, 8, 16, frag, 8));
    const ConstBuffer part{buf.data(), b.size()};
    raw->send({&to, 1}, {&part, 1});
  }
  REQUIRE(
      test::eventually([&] { return reader.value()->stats().fragments_received == kForged; }, 20s));
  const ReaderStats rs = reader.value()->stats();
  INFO("buffer_full_drops " << rs.buffer_full_drops << " buffered_bytes " << rs.buffered_bytes);
  REQUIRE(rs.buffer_full_drops == kForged - 16);
  REQUIRE(rs.buffered_bytes <= 16 * (16 + 256));
}
