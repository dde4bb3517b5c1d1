// libFuzzer target over types::decode_cdr (untrusted sample bytes from recordings and the
// network). One fixed type library, built once, covers every construct the decoder knows: final,
// appendable and mutable structs (with bases), final, appendable and mutable unions, enums of
// bit_bound 8 and 32, bitmasks of 16 and 64 bits, aliases, optional members, bounded strings,
// sequences of primitives and of structs, multi-dimensional arrays, a struct reachable from
// itself through a sequence (Node), a sequence of structs holding sequences, and empty structs.
// The first input byte selects the top type (low 4 bits) and the limits (bit 7: the defaults,
// else small ones); the rest is the sample, encapsulation header included.
// Invariants beyond "no crash, no over-read": decode_cdr never throws, and every value it returns
// dumps as JSON (strict UTF-8) without throwing. Every input also goes through the key hashers
// (types/key_hash.hpp) of two keyed types - a long key, and a string key after an int64 key (MD5,
// PLAIN_CDR2 alignment) - as a sample and as a key-only payload: an error or 16 bytes, never a
// crash.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include "types/cdr.hpp"
#include "types/key_hash.hpp"

using namespace types;

namespace {

volatile size_t sink;

struct Fixture {
  TypeLibrary lib;
  std::vector<TypeId> tops;
  std::vector<TypeId> keyed;  // the key hashers' types
};

TypeId add(TypeLibrary& lib, Kind kind, auto&& init) {
  Type t;
  t.kind = kind;
  init(t);
  return lib.add(std::move(t));
}

Member mem(std::string name, TypeId type, uint32_t id, bool optional = false) {
  Member m;
  m.name = std::move(name);
  m.type = type;
  m.id = id;
  m.optional = optional;
  return m;
}

UnionCase ucase(std::vector<int64_t> labels, Member m, bool is_default = false) {
  UnionCase c;
  c.labels = std::move(labels);
  c.member = std::move(m);
  c.is_default = is_default;
  return c;
}

TypeId seq_of(TypeLibrary& lib, TypeId element, uint32_t bound = 0) {
  return add(lib, Kind::kSequence, [&](Type& t) { t.element = element, t.bound = bound; });
}

TypeId struct_of(TypeLibrary& lib, std::string name, Extensibility e, std::vector<Member> members,
                 TypeId base = kNoType) {
  return add(lib, Kind::kStruct, [&](Type& t) {
    t.name = std::move(name);
    t.extensibility = e;
    t.members = std::move(members);
    t.base = base;
  });
}

TypeId union_of(TypeLibrary& lib, std::string name, Extensibility e, TypeId disc,
                std::vector<UnionCase> cases) {
  return add(lib, Kind::kUnion, [&](Type& t) {
    t.name = std::move(name);
    t.extensibility = e;
    t.discriminator = disc;
    t.cases = std::move(cases);
  });
}

// The top types, in the order of the selector byte:
//   0 Top (final, every construct)    1 Mut (mutable, base MutBase)   2 Inner (appendable)
//   3 Node (recursive via sequence)   4 Holder (sequence<Inner>)      5 U (final union, enum)
//   6 UM (mutable union)              7 UA (appendable union, char)   8 Pt (final)
//   9 Empties (sequence<Empty>)       10 Derived (appendable, base)   11 Keyed (ddsperf KeyedSeq)
Fixture make_fixture() {
  Fixture f;
  TypeLibrary& lib = f.lib;
  auto p = [&](Kind k) { return lib.primitive(k); };
  const auto fin = Extensibility::kFinal, app = Extensibility::kAppendable,
             mut = Extensibility::kMutable;

  const TypeId e8 = add(lib, Kind::kEnum, [](Type& t) {
    t.name = "m::E8", t.bit_bound = 8, t.literals = {{"A", 0}, {"B", 1}, {"C", 200}};
  });
  const TypeId e32 = add(lib, Kind::kEnum, [](Type& t) {
    t.name = "m::E32", t.literals = {{"X", -1}, {"Y", 7}};
  });
  const TypeId bm16 = add(lib, Kind::kBitmask, [](Type& t) {
    t.name = "m::BM16", t.bit_bound = 16, t.flags = {{"F0", 0}, {"F15", 15}};
  });
  const TypeId bm64 = add(lib, Kind::kBitmask, [](Type& t) {
    t.name = "m::BM64", t.bit_bound = 64, t.flags = {{"H", 63}};
  });
  const TypeId alias =
      add(lib, Kind::kAlias, [&](Type& t) { t.name = "m::Int", t.element = p(Kind::kInt32); });
  const TypeId str8 = add(lib, Kind::kString, [](Type& t) { t.bound = 8; });
  const TypeId str4 = add(lib, Kind::kString, [](Type& t) { t.bound = 4; });

  const TypeId pt =
      struct_of(lib, "m::Pt", fin, {mem("x", p(Kind::kInt16), 0), mem("y", p(Kind::kInt16), 1)});
  const TypeId pt2 = add(lib, Kind::kArray, [&](Type& t) { t.element = pt, t.dims = {2}; });
  const TypeId grid = add(lib, Kind::kArray, [&](Type& t) {
    t.element = p(Kind::kInt16), t.dims = {2, 3};
  });
  const TypeId inner =
      struct_of(lib, "m::Inner", app,
                {mem("a", p(Kind::kInt32), 0), mem("name", str8, 1),
                 mem("d", p(Kind::kFloat64), 2, true), mem("pts", seq_of(lib, pt, 16), 3)});
  const TypeId node = struct_of(lib, "m::Node", fin, {mem("tag", p(Kind::kUInt8), 0)});
  lib.at(node).members.push_back(mem("kids", seq_of(lib, node), 1));
  const TypeId holder = struct_of(lib, "m::Holder", fin, {mem("items", seq_of(lib, inner), 0)});
  const TypeId u =
      union_of(lib, "m::U", fin, e8,
               {ucase({0}, mem("i", p(Kind::kInt32), 1)), ucase({1}, mem("s", p(Kind::kString), 2)),
                ucase({}, mem("p", pt, 3), true)});
  const TypeId um = union_of(lib, "m::UM", mut, p(Kind::kInt16),
                             {ucase({1}, mem("v", p(Kind::kInt64), 1)),
                              ucase({2, 3}, mem("b", seq_of(lib, p(Kind::kUInt8)), 2))});
  const TypeId ua =
      union_of(lib, "m::UA", app, p(Kind::kChar8), {ucase({'a'}, mem("f", p(Kind::kFloat32), 1))});
  const TypeId mut_base = struct_of(lib, "m::MutBase", mut, {mem("id", p(Kind::kInt32), 1)});
  const TypeId mutable_t =
      struct_of(lib, "m::Mut", mut,
                {mem("e", e32, 2), mem("s", p(Kind::kString), 3, true), mem("grid", grid, 4),
                 mem("u", u, 5), mem("bm", bm16, 6), mem("big", p(Kind::kUInt64), 0x4000),
                 mem("in", inner, 7), mem("um", um, 8)},
                mut_base);
  const TypeId empty = struct_of(lib, "m::Empty", fin, {});
  const TypeId empties = struct_of(lib, "m::Empties", fin, {mem("v", seq_of(lib, empty), 0)});
  const TypeId fbase = struct_of(lib, "m::FBase", app, {mem("flag", p(Kind::kBool), 0)});
  const TypeId derived = struct_of(
      lib, "m::Derived", app,
      {mem("c", p(Kind::kChar8), 1), mem("o", p(Kind::kInt32), 2, true), mem("ua", ua, 3)}, fbase);
  const TypeId top = struct_of(lib, "m::Top", fin,
                               {mem("b", p(Kind::kBool), 0),
                                mem("o8", p(Kind::kOctet), 1),
                                mem("i8", p(Kind::kInt8), 2),
                                mem("u8", p(Kind::kUInt8), 3),
                                mem("i16", p(Kind::kInt16), 4),
                                mem("u16", p(Kind::kUInt16), 5),
                                mem("i32", p(Kind::kInt32), 6),
                                mem("u32", p(Kind::kUInt32), 7),
                                mem("i64", p(Kind::kInt64), 8),
                                mem("u64", p(Kind::kUInt64), 9),
                                mem("f", p(Kind::kFloat32), 10),
                                mem("d", p(Kind::kFloat64), 11),
                                mem("c", p(Kind::kChar8), 12),
                                mem("e8", e8, 13),
                                mem("e32", e32, 14),
                                mem("bm16", bm16, 15),
                                mem("bm64", bm64, 16),
                                mem("al", alias, 17),
                                mem("pts", pt2, 18),
                                mem("bs", str4, 19),
                                mem("opt", p(Kind::kInt32), 20, true),
                                mem("node", node, 21),
                                mem("u", u, 22),
                                mem("um", um, 23),
                                mem("ua", ua, 24),
                                mem("mut", mutable_t, 25),
                                mem("holder", holder, 26),
                                mem("empties", empties, 27),
                                mem("derived", derived, 28)});
  Member key = mem("keyval", p(Kind::kUInt32), 1);
  key.key = true;
  const TypeId keyed = struct_of(
      lib, "KeyedSeq", fin,
      {mem("seq", p(Kind::kUInt32), 0), key, mem("baggage", seq_of(lib, p(Kind::kOctet)), 2)});
  Member k64 = mem("id", p(Kind::kInt64), 0);
  k64.key = true;
  Member kname = mem("name", p(Kind::kString), 1);
  kname.key = true;
  const TypeId keyed2 =
      struct_of(lib, "m::Keyed2", fin, {k64, mem("x", p(Kind::kInt16), 2), kname});
  f.tops = {top, mutable_t, inner, node, holder, u, um, ua, pt, empties, derived, keyed, keyed2};
  f.keyed = {keyed, keyed2};
  return f;
}

const Fixture& fixture() {
  static const Fixture f = make_fixture();
  return f;
}

// Built over the fixture in its final place (a KeyHasher points into its library).
const std::vector<KeyHasher>& hashers() {
  static const std::vector<KeyHasher> h = [] {
    std::vector<KeyHasher> v;
    for (TypeId t : fixture().keyed) {
      auto k = KeyHasher::create(fixture().lib, t);
      if (!k) std::abort();  // both keys are of supported kinds
      v.push_back(std::move(*k));
    }
    return v;
  }();
  return h;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const Fixture& f = fixture();
  const TypeId top = f.tops[(data[0] & 0x0f) % f.tops.size()];
  DecodeLimits limits;
  if ((data[0] & 0x80) == 0) {
    limits.max_depth = 24;
    limits.max_elements = 4096;
  }
  const auto r = decode_cdr(f.lib, top, std::span<const uint8_t>(data + 1, size - 1), limits);
  if (r.ok()) {
    sink = r.value().dump().size();  // throws (and so fails) on a string that is not UTF-8
  } else {
    sink = r.error().message.size();
    if (r.error().message.empty()) std::abort();
  }
  const std::span<const uint8_t> sample(data + 1, size - 1);
  for (const KeyHasher& h : hashers()) {
    for (const auto& k : {h.of_sample(sample), h.of_key_payload(sample)}) {
      sink = k.ok() ? k.value()[0] : k.error().message.size();
    }
  }
  return 0;
}
