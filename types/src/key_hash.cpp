// KeyHasher (key_hash.hpp): key members found once per type; per sample, decode (cdr.hpp), pick
// the key values, write them as PLAIN_CDR2 big endian, pad or hash.
#include "types/key_hash.hpp"
#include "types/result.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "common/md5.hpp"
#include "types/cdr.hpp"

namespace types {
namespace {

using common::Errc;
using common::Error;

constexpr uint64_t kUnbounded = std::numeric_limits<uint64_t>::max();

size_t primitive_size(Kind k) {
  switch (k) {
    case Kind::kBool:
    case Kind::kChar8:
    case Kind::kOctet:
    case Kind::kInt8:
    case Kind::kUInt8:
      return 1;
    case Kind::kInt16:
    case Kind::kUInt16:
      return 2;
    case Kind::kInt32:
    case Kind::kUInt32:
    case Kind::kFloat32:
      return 4;
    default:
      return 8;
  }
}

size_t bits_size(uint16_t bit_bound, bool bitmask) {
  if (bit_bound <= 8) return 1;
  if (bit_bound <= 16) return 2;
  return bit_bound <= 32 || !bitmask ? 4 : 8;
}

// PLAIN_CDR2 big endian: alignment to the size, at most 4, from the start of the key.
class Writer {
 public:
  void align(size_t n) {
    n = std::min<size_t>(n, 4);
    while (out.size() % n) out.push_back(0);
  }
  void uint(uint64_t v, size_t n) {
    align(n);
    for (size_t i = n; i-- > 0;) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  std::vector<uint8_t> out;
};

// Largest serialized size of a value of `id` starting at offset `at` (kUnbounded: no bound).
uint64_t max_size(const TypeLibrary& lib, TypeId id, uint64_t at);

uint64_t max_struct_size(const TypeLibrary& lib, const Type& t, uint64_t at) {
  if (t.base != kNoType) at = max_size(lib, t.base, at);
  bool any_key = false;
  for (const auto& m : t.members) any_key = any_key || m.key;
  for (const auto& m : t.members) {
    if (any_key && !m.key) continue;
    at = max_size(lib, m.type, at);
    if (at == kUnbounded) return at;
  }
  return at;
}

uint64_t max_size(const TypeLibrary& lib, TypeId id, uint64_t at) {
  const Type& t = lib.at(lib.resolve(id));
  auto aligned = [&](uint64_t n) {
    return (at + std::min<uint64_t>(n, 4) - 1) / std::min<uint64_t>(n, 4) *
           std::min<uint64_t>(n, 4);
  };
  if (is_primitive(t.kind)) {
    const size_t n = primitive_size(t.kind);
    return aligned(n) + n;
  }
  switch (t.kind) {
    case Kind::kEnum:
    case Kind::kBitmask: {
      const size_t n = bits_size(t.bit_bound, t.kind == Kind::kBitmask);
      return aligned(n) + n;
    }
    case Kind::kString:
      return t.bound == 0 ? kUnbounded : aligned(4) + 4 + t.bound + 1;
    case Kind::kArray: {  // of primitives (supported())
      uint64_t count = 1;
      for (uint32_t d : t.dims) count *= d;
      const size_t one = primitive_size(lib.at(lib.resolve(t.element)).kind);
      return aligned(one) + count * one;
    }
    case Kind::kSequence: {
      const size_t one = primitive_size(lib.at(lib.resolve(t.element)).kind);
      return t.bound == 0 ? kUnbounded : aligned(4) + 4 + t.bound * one;
    }
    case Kind::kStruct:
      return max_struct_size(lib, t, at);
    default:
      return kUnbounded;
  }
}

// Whether the key type `id` is one KeyHasher writes.
bool supported(const TypeLibrary& lib, TypeId id, int depth) {
  if (depth > 32) return false;
  const Type& t = lib.at(lib.resolve(id));
  if (is_primitive(t.kind) || t.kind == Kind::kEnum || t.kind == Kind::kBitmask ||
      t.kind == Kind::kString) {
    return true;
  }
  if (t.kind == Kind::kArray || t.kind == Kind::kSequence) {
    return is_primitive(lib.at(lib.resolve(t.element)).kind);
  }
  if (t.kind != Kind::kStruct || t.extensibility != Extensibility::kFinal) return false;
  if (t.base != kNoType && !supported(lib, t.base, depth + 1)) return false;
  for (const auto& m : t.members) {
    if (!supported(lib, m.type, depth + 1)) return false;
  }
  return true;
}

void write_primitive(Writer& w, Kind k, const Json& v) {
  const size_t n = primitive_size(k);
  switch (k) {
    case Kind::kBool:
      return w.uint(v.is_boolean() && v.get<bool>() ? 1 : 0, 1);
    case Kind::kChar8: {
      const std::string s = v.is_string() ? v.get<std::string>() : std::string();
      return w.uint(s.empty() ? 0 : static_cast<uint8_t>(s[0]), 1);
    }
    case Kind::kFloat32: {
      const float f = v.is_number() ? v.get<float>() : std::nanf("");
      uint32_t b;
      std::memcpy(&b, &f, 4);
      return w.uint(b, 4);
    }
    case Kind::kFloat64: {
      const double d = v.is_number() ? v.get<double>() : std::nan("");
      uint64_t b;
      std::memcpy(&b, &d, 8);
      return w.uint(b, 8);
    }
    default:
      break;
  }
  const uint64_t x = v.is_number_unsigned()  ? v.get<uint64_t>()
                     : v.is_number_integer() ? static_cast<uint64_t>(v.get<int64_t>())
                                             : 0;
  w.uint(x, n);
}

Result<void> write_value(const TypeLibrary& lib, TypeId id, const Json& v, Writer& w);

Result<void> write_struct(const TypeLibrary& lib, const Type& t, const Json& v, Writer& w) {
  if (t.base != kNoType) {
    if (auto r = write_value(lib, t.base, v, w); !r) return r;
  }
  bool any_key = false;
  for (const auto& m : t.members) any_key = any_key || m.key;
  for (const auto& m : t.members) {
    if (any_key && !m.key) continue;
    if (!v.is_object() || !v.contains(m.name)) {
      return Error{Errc::kCorrupt, "key member " + m.name + " missing from the decoded sample"};
    }
    if (auto r = write_value(lib, m.type, v.at(m.name), w); !r) return r;
  }
  return {};
}

Result<void> write_value(const TypeLibrary& lib, TypeId id, const Json& v, Writer& w) {
  const Type& t = lib.at(lib.resolve(id));
  if (is_primitive(t.kind)) {
    write_primitive(w, t.kind, v);
    return {};
  }
  switch (t.kind) {
    case Kind::kEnum: {
      int64_t value = v.is_number_integer() ? v.get<int64_t>() : 0;
      if (v.is_string()) {
        for (const auto& l : t.literals) {
          if (l.name == v.get<std::string>()) value = l.value;
        }
      }
      w.uint(static_cast<uint64_t>(value), bits_size(t.bit_bound, false));
      return {};
    }
    case Kind::kBitmask:
      w.uint(v.is_number() ? v.get<uint64_t>() : 0, bits_size(t.bit_bound, true));
      return {};
    case Kind::kString: {
      const std::string s = v.is_string() ? v.get<std::string>() : std::string();
      w.uint(s.size() + 1, 4);
      w.out.insert(w.out.end(), s.begin(), s.end());
      w.out.push_back(0);
      return {};
    }
    case Kind::kArray:
    case Kind::kSequence: {
      if (!v.is_array()) return Error{Errc::kCorrupt, "key collection is not an array"};
      if (t.kind == Kind::kSequence) w.uint(v.size(), 4);
      const Kind ek = lib.at(lib.resolve(t.element)).kind;
      // A multi-dimensional array decodes as nested arrays, outermost first: row-major order.
      auto each = [&](auto&& self, const Json& a) -> void {
        for (const auto& e : a) {
          if (e.is_array()) {
            self(self, e);
          } else {
            write_primitive(w, ek, e);
          }
        }
      };
      each(each, v);
      return {};
    }
    case Kind::kStruct:
      return write_struct(lib, t, v, w);
    default:
      return Error{Errc::kUnsupported, "key of an unsupported kind"};
  }
}

}  // namespace

Result<KeyHasher> KeyHasher::create(const TypeLibrary& lib, TypeId top) {
  const TypeId id = lib.resolve(top);
  const Type& t = lib.at(id);
  if (t.kind != Kind::kStruct) return Error{Errc::kUnsupported, "not a struct"};
  KeyHasher h;
  h.lib_ = &lib;
  h.top_ = id;
  // Key members, base first (one level of base per struct, as the model holds it).
  std::vector<const Member*> keys;
  if (t.base != kNoType) {
    for (const auto& m : lib.at(lib.resolve(t.base)).members)
      if (m.key) keys.push_back(&m);
  }
  for (const auto& m : t.members)
    if (m.key) keys.push_back(&m);
  if (keys.empty()) return Error{Errc::kUnsupported, t.name + " has no key"};
  uint64_t size = 0;
  bool flat = true;  // no nested struct: key-only payloads decode as the key members alone
  for (const Member* m : keys) {
    if (!supported(lib, m->type, 0)) {
      return Error{Errc::kUnsupported, t.name + ": key member " + m->name +
                                           " is of a kind "
                                           "key hashes are not computed for"};
    }
    h.keys_.push_back({{m->name}, m->type});
    if (size != kUnbounded) size = max_size(lib, m->type, size);
    flat = flat && lib.at(lib.resolve(m->type)).kind != Kind::kStruct;
  }
  h.fits_16_ = size <= 16;
  if (flat && t.extensibility == Extensibility::kFinal && t.base == kNoType) {
    h.key_only_ = lib;
    Type k;
    k.kind = Kind::kStruct;
    k.name = t.name + "$key";
    for (const Member* m : keys) k.members.push_back(*m);
    h.key_only_top_ = h.key_only_.add(std::move(k));
  }
  return h;
}

Result<std::vector<uint8_t>> KeyHasher::serialized_key(std::span<const uint8_t> sample) const {
  auto v = decode_cdr(*lib_, top_, sample);
  if (!v) return v.error();
  Writer w;
  for (const auto& k : keys_) {
    if (!v->contains(k.path[0]))
      return Error{Errc::kCorrupt, "key member " + k.path[0] + " missing"};
    if (auto r = write_value(*lib_, k.type, v->at(k.path[0]), w); !r) return r.error();
  }
  return std::move(w.out);
}

namespace {
KeyHashBytes finish(const std::vector<uint8_t>& key, bool fits_16) {
  KeyHashBytes h{};
  if (fits_16 && key.size() <= 16) {
    std::memcpy(h.data(), key.data(), key.size());
    return h;
  }
  return common::md5(key);
}
}  // namespace

Result<KeyHashBytes> KeyHasher::of_sample(std::span<const uint8_t> sample) const {
  auto key = serialized_key(sample);
  if (!key) return key.error();
  return finish(*key, fits_16_);
}

Result<KeyHashBytes> KeyHasher::of_key_payload(std::span<const uint8_t> payload) const {
  if (key_only_top_ == kNoType) {
    return Error{Errc::kUnsupported, "key-only payloads of this type are not decoded"};
  }
  auto v = decode_cdr(key_only_, key_only_top_, payload);
  if (!v) return v.error();
  Writer w;
  for (const auto& k : keys_) {
    if (auto r = write_value(key_only_, k.type, v->at(k.path[0]), w); !r) return r.error();
  }
  return finish(w.out, fits_16_);
}

}  // namespace types
