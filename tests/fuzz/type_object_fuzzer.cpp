// libFuzzer target over types/type_object.hpp (TypeInformation and TypeObjects come from the
// network: discovery and TypeLookup replies). The first input byte selects what the rest is
// (low 2 bits: 0 TypeInformation, 1 TypeMapping, 2 getTypes_Out, 3 TypeMapping whose pairs are
// decoded from every complete hash) and the byte order (bit 7: big endian); the rest is the
// XCDR2 bytes. A parsed set is decoded from its first complete hash (or from each).
// Invariants beyond "no crash, no over-read": nothing throws, every error has a message, and
// every library decoded holds together well enough for to_idl to write it.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "types/idl_writer.hpp"
#include "types/type_object.hpp"

using namespace types;

namespace {

volatile size_t sink;

template <class T>
void check_error(const common::Expected<T>& r) {
  if (!r.ok() && r.error().message.empty()) std::abort();
}

void decode_from(const TypeObjectSet& set, const EquivalenceHash& hash) {
  const auto d = decode_type_objects(set.pairs, hash);
  check_error(d);
  if (d.ok()) sink = to_idl(d->library, d->top).size();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint8_t mode = data[0] & 3;
  const ByteOrder order = (data[0] & 0x80) ? ByteOrder::kBig : ByteOrder::kLittle;
  const std::span<const uint8_t> bytes(data + 1, size - 1);
  if (mode == 0) {
    const auto info = decode_type_information(bytes, order);
    check_error(info);
    if (info.ok()) sink = info->complete_dependencies.size();
    return 0;
  }
  const auto set = mode == 2 ? parse_get_types_out(bytes, order) : parse_type_mapping(bytes, order);
  check_error(set);
  if (!set.ok()) return 0;
  for (const TypeObjectPair& p : set->pairs) {
    if (p.equivalence_kind != kEkComplete) continue;
    decode_from(*set, p.hash);
    if (mode != 3) break;
  }
  return 0;
}
