// XTypes TypeLookup messages (wire/type_lookup.hpp) against Cyclone DDS's own serializer: the
// request we send must be byte for byte what libddsc's dds_stream_write makes of the same
// DDS_Builtin_TypeLookup_Request (XCDR2), and replies libddsc writes must decode to exactly
// their fields. Linked against libddsc (Debian's cyclonedds-dev) for that alone.
#include <catch2/catch.hpp>
#include <cstring>
#include <vector>

#include "wire/type_lookup.hpp"

extern "C" {
#include "dds/dds.h"
#include "dds/ddsi/ddsi_cdrstream.h"
#include "dds/ddsi/ddsi_xt_typelookup.h"
}

using namespace pubsub;

namespace {

Guid test_guid() {
  uint8_t b[16];
  for (int i = 0; i < 12; ++i) b[i] = static_cast<uint8_t>(0x10 + i);
  b[12] = 0x00;
  b[13] = 0x03;
  b[14] = 0x00;
  b[15] = 0xc3;
  return Guid::from_bytes(b);
}

wire::HashedTypeId hashed(uint8_t first) {
  wire::HashedTypeId id{0xf2};
  for (size_t i = 1; i < id.size(); ++i) id[i] = static_cast<uint8_t>(first + i);
  return id;
}

// libddsc's XCDR2 serialization of `sample` (no encapsulation header).
template <typename T>
std::vector<uint8_t> cyclone_xcdr2(const T& sample, const dds_topic_descriptor_t& desc) {
  dds_ostream_t os;
  dds_ostream_init(&os, 0, 2);
  dds_stream_write(&os, reinterpret_cast<const char*>(&sample), desc.m_ops);
  std::vector<uint8_t> out(os.m_buffer, os.m_buffer + os.m_index);
  dds_ostream_fini(&os);
  return out;
}

std::vector<uint8_t> cyclone_request(const Guid& writer, SequenceNumber sn,
                                     std::vector<DDS_XTypes_TypeIdentifier>& ids) {
  DDS_Builtin_TypeLookup_Request req;
  std::memset(&req, 0, sizeof req);
  const auto b = writer.bytes();
  std::memcpy(req.header.requestId.writer_guid.guidPrefix, b.data(), 12);
  std::memcpy(req.header.requestId.writer_guid.entityId.entityKey, b.data() + 12, 3);
  req.header.requestId.writer_guid.entityId.entityKind = b[15];
  req.header.requestId.sequence_number.high = static_cast<int32_t>(sn >> 32);
  req.header.requestId.sequence_number.low = static_cast<uint32_t>(sn);
  req.data._d = DDS_Builtin_TypeLookup_getTypes_HashId;
  req.data._u.getTypes.type_ids._length = static_cast<uint32_t>(ids.size());
  req.data._u.getTypes.type_ids._maximum = static_cast<uint32_t>(ids.size());
  req.data._u.getTypes.type_ids._buffer = ids.data();
  return cyclone_xcdr2(req, DDS_Builtin_TypeLookup_Request_desc);
}

}  // namespace

TEST_CASE("A TypeLookup getTypes request is what Cyclone DDS serializes, byte for byte") {
  for (size_t n : {1u, 2u, 5u}) {
    INFO(n << " type ids");
    std::vector<wire::HashedTypeId> ours;
    std::vector<DDS_XTypes_TypeIdentifier> theirs(n);
    std::memset(theirs.data(), 0, n * sizeof(DDS_XTypes_TypeIdentifier));
    for (size_t i = 0; i < n; ++i) {
      ours.push_back(hashed(static_cast<uint8_t>(0x20 * i)));
      theirs[i]._d = DDS_XTypes_EK_COMPLETE;
      std::memcpy(theirs[i]._u.equivalence_hash, ours.back().data() + 1, 14);
    }
    const SequenceNumber sn = (SequenceNumber{3} << 32) + 77;
    const auto got = wire::encode_type_lookup_get_types(test_guid(), sn, ours);
    const auto want = cyclone_request(test_guid(), sn, theirs);
    REQUIRE(got.size() >= 4);
    CHECK(got[0] == 0x00);
    CHECK(got[1] == 0x07);  // CDR2_LE
    CHECK(got[2] == 0x00);
    const size_t pad = got[3];
    CHECK((4 + want.size() + pad) % 4 == 0);
    CHECK(std::vector<uint8_t>(got.begin() + 4, got.end() - static_cast<long>(pad)) == want);
  }
}

TEST_CASE("A TypeLookup reply written by Cyclone DDS decodes to its fields, exactly") {
  DDS_Builtin_TypeLookup_Reply rep;
  std::memset(&rep, 0, sizeof rep);
  const auto b = test_guid().bytes();
  std::memcpy(rep.header.relatedRequestId.writer_guid.guidPrefix, b.data(), 12);
  std::memcpy(rep.header.relatedRequestId.writer_guid.entityId.entityKey, b.data() + 12, 3);
  rep.header.relatedRequestId.writer_guid.entityId.entityKind = b[15];
  rep.header.relatedRequestId.sequence_number.high = 1;
  rep.header.relatedRequestId.sequence_number.low = 9;
  rep.return_data._d = DDS_Builtin_TypeLookup_getTypes_HashId;
  rep.return_data._u.getType._d = 0;  // DDS_RETCODE_OK, an empty result
  std::vector<uint8_t> payload{0x00, 0x07, 0x00, 0x00};
  const auto body = cyclone_xcdr2(rep, DDS_Builtin_TypeLookup_Reply_desc);
  payload.insert(payload.end(), body.begin(), body.end());

  const auto h = wire::decode_type_lookup_reply(payload.data(), payload.size());
  REQUIRE(h);
  CHECK(h->request_writer == test_guid());
  CHECK(h->request_sn == (SequenceNumber{1} << 32) + 9);
  CHECK(h->remote_exception == 0);
  CHECK(h->operation == wire::kTypeLookupGetTypesHashId);
  CHECK(h->result == 0);
  CHECK(h->little_endian);
  // The getTypes_Out starts after the header (24 + 4 bytes), TypeLookup_Return's DHEADER and
  // discriminator and TypeLookup_getTypes_Result's DHEADER and discriminator: at 44.
  REQUIRE(h->body == payload.data() + 4 + 44);
  REQUIRE(h->body_size == payload.size() - 4 - 44);
  // Its DHEADER, then `types` and `complete_to_minimal`, both empty (EMHEADER, DHEADER, count).
  const std::vector<uint8_t> out(h->body, h->body + h->body_size);
  CHECK(out == std::vector<uint8_t>{0x18, 0, 0,    0,    0xd1, 0x4a, 0x80, 0x52, 4, 0, 0, 0, 0, 0,
                                    0,    0, 0x77, 0x65, 0x8e, 0x5b, 4,    0,    0, 0, 0, 0, 0, 0});

  // An exception: no result to read.
  rep.header.remoteEx = DDS_RPC_REMOTE_EX_UNSUPPORTED;
  std::vector<uint8_t> ex{0x00, 0x07, 0x00, 0x00};
  const auto ex_body = cyclone_xcdr2(rep, DDS_Builtin_TypeLookup_Reply_desc);
  ex.insert(ex.end(), ex_body.begin(), ex_body.end());
  const auto he = wire::decode_type_lookup_reply(ex.data(), ex.size());
  REQUIRE(he);
  CHECK(he->remote_exception == DDS_RPC_REMOTE_EX_UNSUPPORTED);
  CHECK(he->body == nullptr);

  // Every truncation before the result is refused; none reads past the end (ASan/fuzzer).
  for (size_t n = 0; n < 4 + 44; ++n) {
    INFO("first " << n << " bytes");
    CHECK_FALSE(wire::decode_type_lookup_reply(payload.data(), n));
  }
  // XCDR1 and parameter-list encapsulations are not replies.
  payload[1] = 0x01;
  CHECK_FALSE(wire::decode_type_lookup_reply(payload.data(), payload.size()));
  payload[1] = 0x0b;
  CHECK_FALSE(wire::decode_type_lookup_reply(payload.data(), payload.size()));
}

namespace {

// KeyedSeq's COMPLETE TypeObject as Cyclone DDS's TypeLookup service sent it (DHEADER first).
std::vector<uint8_t> keyedseq_type_object() {
  const std::string hex =
      "76000000F25101001100000000000000090000004B6579656453657100000000"
      "5600000003000000120000000000000001000700040000007365710000000000"
      "150000000100000031000700070000006B657976616C0000000000001A000000"
      "02000000010080F3010000020800000062616767616765000000";
  std::vector<uint8_t> b;
  for (size_t i = 0; i < hex.size(); i += 2)
    b.push_back(static_cast<uint8_t>(std::stoul(hex.substr(i, 2), nullptr, 16)));
  return b;
}

}  // namespace

TEST_CASE("Our getTypes reply is read by Cyclone DDS's deserializer, field for field") {
  const auto tobj = keyedseq_type_object();
  REQUIRE(tobj.size() == 4 + 0x76);
  wire::HashedTypeId id{0xf2, 0xc6, 0xe6, 0x28, 0x5a, 0x68, 0xc8, 0xf6,
                        0xcd, 0x7c, 0x42, 0x03, 0xc4, 0x6c, 0xb2};
  const std::vector<wire::TypeObjectRef> refs{{id, tobj}, {hashed(0x40), tobj}};
  auto payload = wire::encode_type_lookup_get_types_reply(test_guid(), 41, refs);
  REQUIRE(payload[1] == 0x07);
  std::vector<char> body(payload.begin() + 4, payload.end() - payload[3]);
  uint32_t off = 0;
  REQUIRE(dds_stream_normalize_data(body.data(), &off, static_cast<uint32_t>(body.size()), false, 2,
                                    DDS_Builtin_TypeLookup_Reply_desc.m_ops) != nullptr);
  CHECK(off == body.size());
  DDS_Builtin_TypeLookup_Reply rep;
  std::memset(&rep, 0, sizeof rep);
  dds_istream_t is;
  dds_istream_init(&is, static_cast<uint32_t>(body.size()), body.data(), 2);
  dds_stream_read(&is, reinterpret_cast<char*>(&rep), DDS_Builtin_TypeLookup_Reply_desc.m_ops);
  dds_istream_fini(&is);
  CHECK(rep.header.relatedRequestId.sequence_number.low == 41);
  CHECK(std::memcmp(rep.header.relatedRequestId.writer_guid.guidPrefix, test_guid().bytes().data(),
                    12) == 0);
  CHECK(rep.return_data._d == static_cast<int32_t>(DDS_Builtin_TypeLookup_getTypes_HashId));
  CHECK(rep.return_data._u.getType._d == 0);
  const auto& types = rep.return_data._u.getType._u.result.types;
  REQUIRE(types._length == 2);
  CHECK(types._buffer[0].type_identifier._d == DDS_XTypes_EK_COMPLETE);
  CHECK(std::memcmp(types._buffer[0].type_identifier._u.equivalence_hash, id.data() + 1, 14) == 0);
  CHECK(types._buffer[0].type_object._d == DDS_XTypes_EK_COMPLETE);
  CHECK(std::string(
            types._buffer[0].type_object._u.complete._u.struct_type.header.detail.type_name) ==
        "KeyedSeq");
  CHECK(types._buffer[0].type_object._u.complete._u.struct_type.member_seq._length == 3);
  CHECK(std::memcmp(types._buffer[1].type_identifier._u.equivalence_hash, hashed(0x40).data() + 1,
                    14) == 0);
  CHECK(rep.return_data._u.getType._u.result.complete_to_minimal._length == 0);
  dds_stream_free_sample(reinterpret_cast<char*>(&rep), DDS_Builtin_TypeLookup_Reply_desc.m_ops);
}

TEST_CASE("A getTypes request Cyclone DDS serializes decodes to its identity and type ids") {
  std::vector<DDS_XTypes_TypeIdentifier> theirs(3);
  std::memset(theirs.data(), 0, 3 * sizeof(DDS_XTypes_TypeIdentifier));
  std::vector<wire::HashedTypeId> want;
  for (size_t i = 0; i < 3; ++i) {
    want.push_back(hashed(static_cast<uint8_t>(0x11 * i)));
    want.back()[0] = i == 1 ? 0xf1 : 0xf2;
    theirs[i]._d = want.back()[0];
    std::memcpy(theirs[i]._u.equivalence_hash, want.back().data() + 1, 14);
  }
  const SequenceNumber sn = (SequenceNumber{2} << 32) + 5;
  std::vector<uint8_t> payload{0x00, 0x07, 0x00, 0x00};
  const auto body = cyclone_request(test_guid(), sn, theirs);
  payload.insert(payload.end(), body.begin(), body.end());
  const auto q = wire::decode_type_lookup_request(payload.data(), payload.size());
  REQUIRE(q);
  CHECK(q->writer == test_guid());
  CHECK(q->sn == sn);
  CHECK(q->operation == wire::kTypeLookupGetTypesHashId);
  CHECK(q->type_ids == want);
  // And our own request decodes the same.
  const auto ours = wire::encode_type_lookup_get_types(test_guid(), sn, want);
  const auto q2 = wire::decode_type_lookup_request(ours.data(), ours.size());
  REQUIRE(q2);
  CHECK(q2->type_ids == want);
  // Truncations never read past the end, and lose the ids they cut.
  for (size_t n = 0; n < payload.size(); ++n) {
    const auto t = wire::decode_type_lookup_request(payload.data(), n);
    if (t) CHECK(t->type_ids.size() < 3);
  }
}
