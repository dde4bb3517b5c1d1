// libFuzzer target: the SPDP/SEDP payload decoders (decode_participant_data, decode_endpoint_data,
// decode_endpoint_key) and the TypeLookup decoders (decode_type_lookup_request and _reply), all on
// every input.
//
// Beyond "no crash, no read past the end": whatever decodes must survive a round trip through
// the encoder - encode(decode(x)) decodes again to the same values - so an encoder that writes
// something its own decoder reads differently is a crash too.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "wire/discovery_data.hpp"
#include "wire/type_lookup.hpp"

namespace {

using namespace pubsub;
using namespace pubsub::wire;

void check(bool ok) {
  if (!ok) std::abort();
}

// Duration_t cannot tell 0x7fffffff.0 s (rounded up from 0x7ffffffe.ffffffff) from infinite.
Duration saturate(Duration d) {
  return d >= std::chrono::seconds(0x7fffffff) ? Duration::max() : d;
}

void same(const ParticipantData& a, const ParticipantData& b) {
  check(a.guid_prefix == b.guid_prefix);
  check(std::memcmp(a.vendor, b.vendor, 2) == 0 && std::memcmp(a.version, b.version, 2) == 0);
  check(a.domain_id == b.domain_id && a.builtin_endpoints == b.builtin_endpoints);
  check(saturate(a.lease_duration) == saturate(b.lease_duration));
  check(a.default_unicast == b.default_unicast && a.default_multicast == b.default_multicast);
  check(a.metatraffic_unicast == b.metatraffic_unicast);
  check(a.metatraffic_multicast == b.metatraffic_multicast);
  check(a.user_data == b.user_data);
}

void same(const EndpointData& a, const EndpointData& b) {
  check(a.guid == b.guid && a.topic_name == b.topic_name && a.type_name == b.type_name);
  check(a.reliability == b.reliability && a.durability == b.durability);
  check(saturate(a.max_blocking_time) == saturate(b.max_blocking_time));
  check(a.history.kind == b.history.kind && a.history.depth == b.history.depth);
  check(a.unicast == b.unicast && a.multicast == b.multicast);
  check(a.partitions == b.partitions && a.data_representation == b.data_representation);
  check(a.type_information == b.type_information);
  // expects_inline_qos is read from remote readers but never announced by ours.
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::unique_ptr<uint8_t[]> copy(new uint8_t[size == 0 ? 1 : size]);  // exact size for ASan
  if (size) std::memcpy(copy.get(), data, size);
  const uint8_t* p = copy.get();

  ParticipantData part;
  if (decode_participant_data(p, size, part)) {
    const auto bytes = encode_participant_data(part);
    ParticipantData again;
    check(decode_participant_data(bytes.data(), bytes.size(), again));
    same(part, again);
  }
  for (const bool writer_defaults : {true, false}) {
    EndpointData ep;
    if (decode_endpoint_data(p, size, writer_defaults, ep)) {
      const auto bytes = encode_endpoint_data(ep);
      EndpointData again;
      check(decode_endpoint_data(bytes.data(), bytes.size(), writer_defaults, again));
      same(ep, again);
      Guid key;
      check(decode_endpoint_key(bytes.data(), bytes.size(), key) && key == ep.guid);
    }
  }
  Guid key;
  (void)decode_endpoint_key(p, size, key);
  // TypeLookup replies (builtin traffic from any participant): the body handed on lies within
  // the input.
  if (auto h = decode_type_lookup_reply(p, size); h && h->body) {
    check(h->body >= p && h->body + h->body_size == p + size);
    uint64_t sum = 0;
    for (size_t i = 0; i < h->body_size; ++i) sum += h->body[i];
    check(sum <= 255 * h->body_size);
  }
  // TypeLookup requests: whatever decodes re-encodes (as getTypes of its hashed ids) and decodes
  // to the same identity and ids.
  if (auto q = decode_type_lookup_request(p, size);
      q && q->operation == kTypeLookupGetTypesHashId) {
    const auto bytes = encode_type_lookup_get_types(q->writer, q->sn, q->type_ids);
    const auto again = decode_type_lookup_request(bytes.data(), bytes.size());
    check(again && again->writer == q->writer && again->sn == q->sn &&
          again->type_ids == q->type_ids);
  }
  return 0;
}
