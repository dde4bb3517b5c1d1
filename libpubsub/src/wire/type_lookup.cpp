// TypeLookup request encoding and reply header decoding (see type_lookup.hpp).
#include "wire/type_lookup.hpp"

#include <cstring>

#include "wire/byte_io.hpp"

namespace pubsub::wire {
namespace {

constexpr uint8_t kCdr2Be = 0x06, kCdr2Le = 0x07, kDCdr2Be = 0x08, kDCdr2Le = 0x09;
// EMHEADER length code 5: the member's length is the uint32 it starts with (its DHEADER).
constexpr uint32_t kLengthCodeAlsoNextInt = 5u << 28;

// Pads `out` to 4 bytes and notes the padding in the encapsulation options (RTPS payloads are
// multiples of 4).
void finish_payload(std::vector<uint8_t>& out) {
  const size_t pad = (4 - out.size() % 4) % 4;
  out.resize(out.size() + pad, 0);
  out[3] = static_cast<uint8_t>(pad);
}

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
  finish_payload(out);
  return out;
}

namespace {

// The members of the mutable TypeLookup_getTypes_In that starts at r (its DHEADER): the hashed
// identifiers of `type_ids`. False for bytes that do not hold together.
bool read_get_types_in(ByteReader& r, std::vector<HashedTypeId>& ids) {
  const uint32_t size = r.u32();
  if (!r.ok() || size > r.remaining()) return false;
  const size_t end = r.offset() + size;
  while (r.ok() && r.offset() + 4 <= end) {
    const uint32_t em = r.u32();
    const uint32_t lc = (em >> 28) & 7, id = em & 0x0fffffff;
    uint32_t len = lc < 4 ? 1u << lc : r.u32();  // 4: NEXTINT; 5-7: the member's own u32 ...
    const size_t at = r.offset() - (lc >= 5 ? 4 : 0);
    if (lc == 6) len = len * 4 + 4;  // ... times 4 or 8 (its element count), plus itself
    if (lc == 7) len = len * 8 + 4;
    if (lc == 5) len += 4;
    if (!r.ok() || len > end - at) return false;
    if (id == kTypeLookupTypeIdsMemberId) {
      ByteReader m(r.pos() - (r.offset() - at), len, r.little_endian());
      if (lc == 4 || lc == 5) (void)m.u32();  // the sequence's DHEADER
      const uint32_t n = m.u32();
      for (uint32_t i = 0; i < n && m.remaining() >= sizeof(HashedTypeId); ++i) {
        HashedTypeId t;
        m.bytes(t.data(), t.size());
        if (t[0] != 0xf1 && t[0] != 0xf2) break;  // not a hash: its size is not known here
        ids.push_back(t);
      }
    }
    r.skip(at + len - r.offset());
    if (r.offset() < end) r.align(4);  // the next EMHEADER; the struct may end unaligned
  }
  return r.ok();
}

}  // namespace

std::optional<TypeLookupRequest> decode_type_lookup_request(const uint8_t* data, size_t size) {
  if (size < 4 || data[0] != 0) return std::nullopt;
  const uint8_t rep = data[1];
  if (rep != kCdr2Be && rep != kCdr2Le && rep != kDCdr2Be && rep != kDCdr2Le) return std::nullopt;
  ByteReader r(data + 4, size - 4, (rep & 1) != 0);
  TypeLookupRequest q;
  uint8_t guid[16] = {};  // stays zero when the input ends early (r reports it)
  r.bytes(guid, 16);
  q.writer = Guid::from_bytes(guid);
  const int32_t high = r.i32();
  q.sn = (static_cast<SequenceNumber>(high) << 32) | r.u32();
  const uint32_t name = r.u32();  // instanceName: string<255>, its NUL included
  if (!r.ok() || name > 256) return std::nullopt;
  r.skip(name);
  r.align(4);
  (void)r.u32();  // TypeLookup_Call's DHEADER
  q.operation = r.u32();
  if (!r.ok()) return std::nullopt;
  if (q.operation == kTypeLookupGetTypesHashId && !read_get_types_in(r, q.type_ids))
    return std::nullopt;
  return q;
}

std::vector<uint8_t> encode_type_lookup_get_types_reply(const Guid& request_writer,
                                                        SequenceNumber sn,
                                                        std::span<const TypeObjectRef> types) {
  size_t cap = 4 + 96;
  for (const auto& t : types) cap += sizeof(HashedTypeId) + 3 + t.type_object.size();
  std::vector<uint8_t> out(cap);
  out[1] = kCdr2Le;
  ByteWriter w(out.data() + 4, out.size() - 4);
  put_guid(w, request_writer);  // relatedRequestId
  w.i32(static_cast<int32_t>(sn >> 32));
  w.u32(static_cast<uint32_t>(sn));
  w.i32(0);  // remoteEx: REMOTE_EX_OK
  // DHEADERs are filled in at the end, when the sizes are known: offsets of each.
  const size_t return_dh = w.size();
  w.u32(0);  // TypeLookup_Return
  w.u32(kTypeLookupGetTypesHashId);
  const size_t result_dh = w.size();
  w.u32(0);  // TypeLookup_getTypes_Result
  w.i32(0);  // DDS_RETCODE_OK
  const size_t out_dh = w.size();
  w.u32(0);  // TypeLookup_getTypes_Out
  w.u32(kLengthCodeAlsoNextInt | kTypeLookupTypesMemberId);
  const size_t types_dh = w.size();
  w.u32(0);  // sequence<TypeIdentifierTypeObjectPair>
  w.u32(static_cast<uint32_t>(types.size()));
  for (const auto& t : types) {
    w.raw(t.id.data(), t.id.size());  // TypeIdentifier: the final union, 15 bytes
    w.align(4);                       // the TypeObject starts with its DHEADER
    w.raw(t.type_object.data(), t.type_object.size());
  }
  const size_t types_end = w.size();
  w.align(4);
  w.u32(kLengthCodeAlsoNextInt | kTypeLookupCompleteToMinimalMemberId);
  w.u32(4);  // sequence<TypeIdentifierPair>: DHEADER, then its count, 0
  w.u32(0);
  const size_t end = w.size();
  auto set = [&](size_t at, size_t to) {
    const auto v = static_cast<uint32_t>(to - at - 4);
    std::memcpy(w.at(at), &v, 4);  // little endian host (ByteWriter's u32 assumes it too)
  };
  set(return_dh, end);
  set(result_dh, end);
  set(out_dh, end);
  set(types_dh, types_end);
  out.resize(4 + end);
  finish_payload(out);
  return out;
}

std::optional<TypeLookupReplyHeader> decode_type_lookup_reply(const uint8_t* data, size_t size) {
  if (size < 4 || data[0] != 0) return std::nullopt;
  const uint8_t rep = data[1];
  if (rep != kCdr2Be && rep != kCdr2Le && rep != kDCdr2Be && rep != kDCdr2Le) return std::nullopt;
  TypeLookupReplyHeader h;
  h.little_endian = (rep & 1) != 0;
  ByteReader r(data + 4, size - 4, h.little_endian);
  uint8_t guid[16] = {};  // stays zero when the input ends early (r reports it)
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
