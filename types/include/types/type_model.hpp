// The type model: what pubsub-replay knows of a topic's data type, whichever way it learned it
// (an IDL file today; XTypes TypeObjects later). One TypeLibrary holds every named type of a
// recording or an IDL file plus the anonymous ones they use (sequences, arrays, bounded
// strings); types refer to each other by TypeId, an index into the library, so recursive and
// forward-declared types need no pointers. Consumers: the CDR decoder (cdr.hpp) and the IDL
// writer (idl_writer.hpp). Plain data, no threads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace types {

using TypeId = uint32_t;
constexpr TypeId kNoType = UINT32_MAX;

enum class Kind : uint8_t {
  // primitives
  kBool,
  kChar8,  // IDL char
  kOctet,  // IDL octet (uint8 without arithmetic meaning)
  kInt8,
  kUInt8,
  kInt16,
  kUInt16,
  kInt32,
  kUInt32,
  kInt64,
  kUInt64,
  kFloat32,
  kFloat64,
  // constructed
  kString,    // string<bound> (bound 0 = unbounded)
  kEnum,      // literals, bit_bound
  kBitmask,   // flags, bit_bound
  kAlias,     // typedef: element
  kSequence,  // sequence<element, bound>
  kArray,     // element[dims...]
  kStruct,    // members (after those of base)
  kUnion,     // discriminator, cases
};

// Is k one of the primitive kinds (kBool .. kFloat64)?
constexpr bool is_primitive(Kind k) {
  return k <= Kind::kFloat64;
}

enum class Extensibility : uint8_t { kFinal, kAppendable, kMutable };

struct Member {
  std::string name;
  TypeId type = kNoType;
  uint32_t id = 0;  // member id (@id, or by @autoid: SEQUENTIAL from 0, or HASH)
  bool key = false;
  bool optional = false;
  bool must_understand = false;
};

struct UnionCase {
  std::vector<int64_t> labels;  // discriminator values selecting this case
  bool is_default = false;
  Member member;
};

struct EnumLiteral {
  std::string name;  // unqualified
  int32_t value = 0;
};

struct BitFlag {
  std::string name;
  uint16_t position = 0;
};

struct Type {
  Kind kind = Kind::kStruct;
  std::string name;  // fully qualified ("pkg::Pose") for named types; empty for anonymous ones
  Extensibility extensibility = Extensibility::kFinal;  // struct, union (enum/bitmask: final)
  uint32_t bound = 0;              // string, sequence: max length (0 = unbounded)
  std::vector<uint32_t> dims;      // array: dimensions, outermost first
  TypeId element = kNoType;        // sequence, array, alias
  TypeId base = kNoType;           // struct: base struct (kNoType = none)
  TypeId discriminator = kNoType;  // union: discriminator type (integer, char, bool or enum)
  // union: the alias the discriminator was declared with ("switch (Tag)"), which `discriminator`
  // is resolved from; kNoType when it was not declared through a typedef. For XTypes
  // TypeObjects, which refer to the alias.
  TypeId discriminator_typedef = kNoType;
  uint16_t bit_bound = 32;            // enum (default 32), bitmask (default 32)
  std::vector<Member> members;        // struct: its own members, in declaration order
  std::vector<UnionCase> cases;       // union
  std::vector<EnumLiteral> literals;  // enum, in declaration order
  std::vector<BitFlag> flags;         // bitmask
  bool nested = false;                // struct/union: @nested / @topic(false)
  bool autoid_hash = false;  // struct/union: @autoid(HASH) (XTypes IS_AUTOID_HASH; ids in members)
};

class TypeLibrary {
 public:
  TypeLibrary();  // holds the primitive types already, see primitive()

  // The id of a primitive kind (kBool .. kFloat64) or an unbounded string; k must be one
  // (asserted: a caller's bug, not bad input).
  TypeId primitive(Kind k) const;
  TypeId add(Type t);  // appends; returns its id (no de-duplication)
  const Type& at(TypeId id) const { return types_.at(id); }
  Type& at(TypeId id) { return types_.at(id); }
  size_t size() const { return types_.size(); }
  // A named type by its fully qualified name, with or without a leading "::".
  std::optional<TypeId> find(std::string_view qualified_name) const;
  // Follows aliases to the type they stand for.
  TypeId resolve(TypeId id) const;
  // Named struct and union types, in the order they were added (for `types` listings).
  std::vector<TypeId> named() const;

 private:
  std::vector<Type> types_;
};

}  // namespace types
