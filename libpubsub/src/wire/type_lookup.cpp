// TypeLookup request encoding and reply header decoding (see type_lookup.hpp).
#include "wire/type_lookup.hpp"

#include "wire/byte_io.hpp"

namespace pubsub::wire {
namespace {

constexpr uint8_t kCdr2Be = 0x06, kCdr2Le = 0x07, kDCdr2Be = 0x08, kDCdr2Le = 0x09;
// EMHEADER length code 5: the member's length is the uint32 it starts with (its DHEADER).
constexpr uint32_t kLengthCodeAlsoNextInt = 5u << 28;

void put_guid(ByteWriter& w, const Guid& g) {
  const auto b = g.bytes();
  w.raw(b.data(), b.size());
}

}  // namespace

std::vector<uint8_t> encode_type_lookup_get_types(const Guid& writer, SequenceNumber sn,
                                                  std::span<const HashedTypeId> type_ids) {
  const auto ids = static_cast<uint32_t>(type_ids.size() * sizeof(HashedTypeId));
  std::vector<uint8_t> out(4 + 64 + ids);
  out[0] = 0x00;
  out[1] = kCdr2Le;
  ByteWriter w(out.data() + 4, out.size() - 4);
  put_guid(w, writer);                    // requestId.writer_guid
  w.i32(static_cast<int32_t>(sn >> 32));  // requestId.sequence_number.high
  w.u32(static_cast<uint32_t>(sn));       // .low
  w.u32(1);                               // instanceName: "" (length with the NUL)
  w.u8(0);
  w.align(4);
  // Sizes, innermost first: sequence<TypeIdentifier> (DHEADER, then count and elements: the
  // final union's octet discriminator and the 14-byte hash), the mutable getTypes_In (its
  // DHEADER, then the member's EMHEADER with length code 5: the sequence's DHEADER is its
  // length), the appendable union TypeLookup_Call (DHEADER, discriminator, getTypes_In).
  const uint32_t seq_body = 4 + ids;
  const uint32_t in_body = 4 + 4 + seq_body;
  w.u32(4 + 4 + in_body);  // TypeLookup_Call DHEADER
  w.u32(kTypeLookupGetTypesHashId);
  w.u32(in_body);  // getTypes_In DHEADER
  w.u32(kLengthCodeAlsoNextInt | kTypeLookupTypeIdsMemberId);
  w.u32(seq_body);  // the sequence's DHEADER
  w.u32(static_cast<uint32_t>(type_ids.size()));
  for (const HashedTypeId& id : type_ids) w.raw(id.data(), id.size());
  out.resize(4 + w.size());
  // RTPS payloads are padded to 4 bytes; the padding count goes in the encapsulation options.
  const size_t pad = (4 - out.size() % 4) % 4;
  out.resize(out.size() + pad, 0);
  out[3] = static_cast<uint8_t>(pad);
  return out;
}

std::optional<TypeLookupReplyHeader> decode_type_lookup_reply(const uint8_t* data, size_t size) {
  if (size < 4 || data[0] != 0) return std::nullopt;
  const uint8_t rep = data[1];
  if (rep != kCdr2Be && rep != kCdr2Le && rep != kDCdr2Be && rep != kDCdr2Le) return std::nullopt;
  TypeLookupReplyHeader h;
  h.little_endian = (rep & 1) != 0;
  ByteReader r(data + 4, size - 4, h.little_endian);
  uint8_t guid[16];
  r.bytes(guid, 16);
  h.request_writer = Guid::from_bytes(guid);
  const int32_t high = r.i32();
  const uint32_t low = r.u32();
  h.request_sn = (static_cast<SequenceNumber>(high) << 32) | low;
  h.remote_exception = r.i32();
  (void)r.u32();  // TypeLookup_Return's DHEADER (an appendable union)
  h.operation = r.u32();
  if (!r.ok()) return std::nullopt;
  if (h.remote_exception != 0 || h.operation != kTypeLookupGetTypesHashId) return h;
  (void)r.u32();  // TypeLookup_getTypes_Result's DHEADER
  h.result = r.i32();
  if (!r.ok()) return std::nullopt;
  if (h.result == 0) {
    h.body = r.pos();
    h.body_size = r.remaining();
  }
  return h;
}

}  // namespace pubsub::wire
