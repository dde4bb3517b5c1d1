// The CDR decoder: one serialized sample to JSON, driven by the type model (see cdr.hpp for the
// interface and the JSON mapping). The rules are those of DDS-XTypes 1.3, clause 7.4.3
// ("Extended CDR Representation"):
//
// - Encapsulation (7.4.3.4, 7.6.2.1.2 and DDSI-RTPS 10.2): 2 bytes representation id (big
//   endian), 2 bytes options (ignored; their low 2 bits count padding bytes at the end, which
//   the decoder never needs to see). The id gives the XCDR version and the byte order only;
//   PL_/D_ are hints, the type's own extensibility decides how it is laid out. Alignment is
//   relative to the first byte after the encapsulation header; XCDR1 aligns to at most 8
//   (MAXALIGN 8), XCDR2 to at most 4 (7.4.3.4.3).
// - Primitives (7.4.3.5.1 and 7.4.1.1): bool, char, octet, int8/uint8 1 byte, then 2/4/8-byte
//   integers, float32, float64, each aligned to min(size, MAXALIGN). A bool byte other than 0/1
//   is an error.
// - Strings: uint32 length counting the terminating NUL, the bytes, the NUL (a length of 0 is
//   taken as an empty string). Enums: XCDR1 always 4 bytes; XCDR2 by bit_bound (1-8: 1 byte,
//   9-16: 2, 17-32: 4), read as signed. Bitmasks by bit_bound (8/16/32/64-bit unsigned).
// - Sequences: uint32 length, then the elements; arrays: the elements, outermost dimension
//   first. In XCDR2 both carry a DHEADER (uint32 byte size) first when the element type is not
//   primitive (rules for PLAIN_CDR2 collections, 7.4.3.5.3). Enumerations and bitmasks are not
//   primitive types in XTypes 1.3, so a sequence of enums has a DHEADER, as Cyclone DDS writes
//   it (OMG issue DDSXTY14-56 proposes dropping it; some other implementations never write it).
// - Final structs and unions: their members in order (base struct members first). Optional
//   members (7.4.3.5.1, 7.4.1.2.2): XCDR2 a boolean presence byte; XCDR1 a parameter header
//   (uint16 pid, uint16 length; or PID_EXTENDED 0x3f01, length 8, uint32 member id, uint32
//   length) whose length 0 means absent.
// - Appendable (DELIMITED_CDR, 7.4.3.5.2): XCDR2 a DHEADER, then the members as for final
//   ones; members past the end of the DHEADER were not written by the (older) writer and take
//   their defaults (null when optional), bytes left inside the DHEADER after the last known
//   member (a newer writer's members) are skipped. XCDR1 appendable types are plain.
// - Mutable (PL_CDR2, 7.4.3.5.3 and the EMHEADER, 7.4.3.4.2): DHEADER, then per member an
//   EMHEADER (bit 31 must-understand, bits 28-30 length code LC, bits 0-27 member id). LC 0-3:
//   the member is 1/2/4/8 bytes; LC 4: a uint32 NEXTINT with the member's size follows; LC 5/6/7:
//   the member's own first uint32 (its DHEADER or length) is NEXTINT and the member is
//   4 + NEXTINT, 4 + 4 * NEXTINT or 4 + 8 * NEXTINT bytes. Members are matched by id, unknown
//   ids skipped (must-understand or not), members not present are null. One DHEADER covers a
//   struct and its bases. Mutable unions: DHEADER, then the discriminator and the selected
//   member, each behind an EMHEADER (the first member is taken as the discriminator).
// - XCDR1 mutable (PL_CDR, 7.4.1.2): a list of parameters each aligned to 4: uint16 pid (flag
//   0x4000 must-understand, 0x8000 implementation-specific, member id = pid & 0x3fff), uint16
//   length; pid 0x3f01 = PID_EXTENDED (uint32 flags + member id in bits 0-27, uint32 length),
//   0x3f02 = PID_LIST_END (required), 0x3f03-0x3fff are skipped. Alignment inside a parameter
//   value restarts at the value's first byte (what Cyclone DDS writes for XCDR1 optionals).
//   Mutable unions in XCDR1 are read the same way: the first parameter is the discriminator.
// - Unions: the discriminator (integer kinds, char, bool, octet or enum with the enum size
//   rules), then the member of the case whose labels hold the value, else the default case,
//   else nothing.
//
// Not supported (and not in the type model): wchar/wstring, float128, maps, bitsets, @external
// and @try_construct semantics. The must-understand flag is not enforced (unknown members are
// skipped either way), key members are encoded like any other member.
//
// Robustness: every read is checked against the end of the innermost delimited region (the
// sample, a DHEADER, a parameter or member length); lengths are checked against the bytes left
// (length * smallest element size) before anything is reserved; nesting depth and elements per
// collection are limited (DecodeLimits); elements that may take no bytes at all (empty structs)
// and defaults filled in for members an older writer did not send share one budget per sample,
// so a small sample cannot grow into a huge JSON value. The type library is not trusted either:
// a bad type id or an alias loop is an error, not a crash. Errors are reported, never thrown.
#include "types/cdr.hpp"
#include "types/result.hpp"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <exception>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace types {
namespace {

using common::Errc;

constexpr uint16_t kPidMask = 0x3fff;
constexpr uint16_t kPidExtended = 0x3f01;
constexpr uint16_t kPidListEnd = 0x3f02;
constexpr uint16_t kPidReservedFirst = 0x3f00;
constexpr uint32_t kMemberIdMask = 0x0fffffff;  // EMHEADER and PID_EXTENDED member ids
constexpr int kMaxAliasHops = 64;
constexpr int kMaxBaseChain = 64;
constexpr int kMaxMinSizeDepth = 32;
constexpr uint64_t kSizeCap = uint64_t{1} << 40;  // saturation of the smallest-size estimate
constexpr uint64_t kFreeBudget = uint64_t{1} << 20;
constexpr std::string_view kReplacementChar = "\xEF\xBF\xBD";  // U+FFFD

uint16_t byteswap(uint16_t v) {
  return __builtin_bswap16(v);
}
uint32_t byteswap(uint32_t v) {
  return __builtin_bswap32(v);
}
uint64_t byteswap(uint64_t v) {
  return __builtin_bswap64(v);
}

uint64_t sat_add(uint64_t a, uint64_t b) {
  return a + b > kSizeCap ? kSizeCap : a + b;
}
uint64_t sat_mul(uint64_t a, uint64_t b) {
  if (a == 0 || b == 0) return 0;
  return a > kSizeCap / b ? kSizeCap : a * b;
}

size_t primitive_size(Kind k) {
  switch (k) {
    case Kind::kInt16:
    case Kind::kUInt16:
      return 2;
    case Kind::kInt32:
    case Kind::kUInt32:
    case Kind::kFloat32:
      return 4;
    case Kind::kInt64:
    case Kind::kUInt64:
    case Kind::kFloat64:
      return 8;
    default:
      return 1;
  }
}

// Bytes of an enum in XCDR2 by its bit_bound; 0 when the bound is out of range.
size_t enum_size(uint16_t bit_bound) {
  if (bit_bound >= 1 && bit_bound <= 8) return 1;
  if (bit_bound >= 9 && bit_bound <= 16) return 2;
  if (bit_bound >= 17 && bit_bound <= 32) return 4;
  return 0;
}

size_t bitmask_size(uint16_t bit_bound) {
  if (bit_bound >= 33 && bit_bound <= 64) return 8;
  return enum_size(bit_bound);
}

// `n` bytes as UTF-8 text: valid sequences as they are, each maximal invalid subpart replaced by
// U+FFFD (so that the JSON can always be dumped).
std::string utf8_text(const uint8_t* p, size_t n) {
  size_t i = 0;
  while (i < n && p[i] < 0x80) ++i;
  if (i == n) return std::string(reinterpret_cast<const char*>(p), n);
  std::string s(reinterpret_cast<const char*>(p), i);
  s.reserve(n + 8);
  while (i < n) {
    const uint8_t b = p[i];
    if (b < 0x80) {
      s.push_back(static_cast<char>(b));
      ++i;
      continue;
    }
    size_t len = 0;
    uint8_t lo = 0x80, hi = 0xBF;  // range of the second byte (Unicode 15, table 3-7)
    if (b >= 0xC2 && b <= 0xDF) {
      len = 2;
    } else if (b == 0xE0) {
      len = 3, lo = 0xA0;
    } else if ((b >= 0xE1 && b <= 0xEC) || b == 0xEE || b == 0xEF) {
      len = 3;
    } else if (b == 0xED) {
      len = 3, hi = 0x9F;
    } else if (b == 0xF0) {
      len = 4, lo = 0x90;
    } else if (b >= 0xF1 && b <= 0xF3) {
      len = 4;
    } else if (b == 0xF4) {
      len = 4, hi = 0x8F;
    }
    size_t k = 1;
    if (len != 0 && i + 1 < n && p[i + 1] >= lo && p[i + 1] <= hi) {
      k = 2;
      while (k < len && i + k < n && p[i + k] >= 0x80 && p[i + k] <= 0xBF) ++k;
    }
    if (len != 0 && k == len)
      s.append(reinterpret_cast<const char*>(p + i), k);
    else
      s.append(kReplacementChar);
    i += k;
  }
  return s;
}

Json char_json(uint8_t c) {
  return c < 0x80 ? Json(std::string(1, static_cast<char>(c))) : Json(kReplacementChar);
}

// A float as the double with the same shortest decimal form (0.1f -> 0.1, not
// 0.100000001490116).
Json float_json(float f) {
  if (!std::isfinite(f)) return nullptr;
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, f);
  double d = f;
  if (r.ec == std::errc()) std::from_chars(buf, r.ptr, d);
  return d;
}

Json double_json(double d) {
  if (!std::isfinite(d)) return nullptr;
  return d;
}

// The byte cursor: position, end of the innermost delimited region, alignment origin, byte
// order and XCDR version. Offsets count from the byte after the encapsulation header.
struct Cursor {
  const uint8_t* data = nullptr;
  size_t size = 0;       // bytes after the encapsulation header
  size_t pos = 0;        // next byte to read
  size_t end = 0;        // end of the innermost region (sample, DHEADER, parameter, member)
  size_t origin = 0;     // alignment is relative to this (XCDR1 parameter values restart it)
  bool swap = false;     // the data's byte order is not the host's
  bool xcdr2 = false;    // XCDR version 2 (else 1)
  size_t max_align = 8;  // MAXALIGN: 8 for XCDR1, 4 for XCDR2
};

struct Saved {
  size_t end;
  size_t origin;
};

struct PathSeg {
  std::string_view name;  // empty: an index
  uint64_t index = 0;
};

// An XCDR1 parameter header.
struct ParamHeader {
  uint32_t id = 0;
  uint32_t length = 0;
  bool list_end = false;
  bool reserved = false;  // PID_IGNORE and the other reserved pids: skipped
};

class Decoder {
 public:
  Decoder(const TypeLibrary& lib, const DecodeLimits& limits, Cursor c)
      : lib_(lib), limits_(limits), c_(c), budget_(kFreeBudget + c.size) {
    path_.reserve(16);
  }

  bool value(TypeId id, Json& out);
  common::Error error() const { return error_; }
  size_t pos() const { return c_.pos; }

 private:
  // reading
  bool fail_at(size_t offset, Errc code, std::string_view what);
  bool fail(Errc code, std::string_view what) { return fail_at(c_.pos, code, what); }
  Errc overrun_code() const { return c_.end == c_.size ? Errc::kTruncated : Errc::kCorrupt; }
  // "N left" or "N left in the enclosing length": the bytes from `from` to the region's end.
  std::string left(size_t from) const {
    return std::to_string(c_.end - from) + " left" +
           (c_.end == c_.size ? "" : " in the enclosing length");
  }
  bool need(size_t n);
  bool align(size_t n);
  template <class U>
  bool read(U& v);
  Saved narrow(size_t end, size_t origin);
  void restore(Saved s) { c_.end = s.end, c_.origin = s.origin; }
  bool open_dheader(Saved& saved);
  void close_region(Saved saved) {
    c_.pos = c_.end;
    restore(saved);
  }
  bool spend(uint64_t n);

  // the type library
  const Type* resolved(TypeId id);
  const Type* peek_resolved(TypeId id) const;  // resolved() without reporting
  const Type* base_of(const Type& t, int chain);
  bool needs_dheader(const Type& element) const { return c_.xcdr2 && !is_primitive(element.kind); }
  uint64_t min_size(TypeId id, int depth);
  uint64_t struct_min_size(const Type& t, int depth);

  // values by kind
  bool primitive(Kind k, Json& out);
  bool string_value(const Type& t, Json& out);
  bool read_enum(const Type& t, int64_t& v);
  Json enum_json(const Type& t, int64_t v) const;
  bool bitmask(const Type& t, Json& out);
  bool sequence(const Type& t, Json& out);
  bool array(const Type& t, Json& out);
  bool array_level(const Type& t, size_t level, const Type& et, TypeId elem, Json& out);
  bool elements(TypeId elem, const Type& et, uint64_t count, Json& out);
  bool element(TypeId elem, const Type& et, Json& out) {
    return is_primitive(et.kind) ? primitive(et.kind, out) : value(elem, out);
  }

  // structs
  bool structure(const Type& t, Json& out);
  bool plain_members(const Type& t, Json& obj, bool delimited, int chain);
  bool member(const Member& m, Json& slot);
  bool named(std::string_view name, TypeId type, Json& slot) {
    PathGuard g(path_, PathSeg{name, 0});
    return value(type, slot);
  }
  bool optional_member(const Member& m, Json& slot);
  bool param_header(ParamHeader& h);
  template <class F>
  bool param_list(F&& on_param);
  template <class F>
  bool emheader_list(F&& on_member);
  bool pl_cdr1_struct(const Type& t, Json& obj);
  bool pl_cdr2_struct(const Type& t, Json& obj);
  bool prefill(const Type& t, Json& obj, int chain);
  const Member* find_member(const Type& t, uint32_t id, int chain);

  // unions
  bool union_value(const Type& t, Json& out);
  bool discriminator(const Type& t, int64_t& v, Json& out);
  bool read_scalar(const Type& dt, int64_t& v);
  Json scalar_json(const Type& dt, int64_t v) const;
  const UnionCase* select_case(const Type& t, int64_t v) const;
  bool plain_union(const Type& t, Json& out, bool delimited);
  bool pl_cdr1_union(const Type& t, Json& out);
  bool pl_cdr2_union(const Type& t, Json& out);

  // defaults of members an older writer did not send
  bool default_value(TypeId id, Json& out, uint32_t depth);
  bool default_struct(const Type& t, Json& obj, uint32_t depth, int chain);
  bool default_union(const Type& t, Json& out, uint32_t depth);
  bool default_array(const Type& t, size_t level, Json& out, uint32_t depth);

  std::string path_string() const;

  struct PathGuard {
    PathGuard(std::vector<PathSeg>& p, PathSeg s) : path(p) { path.push_back(s); }
    ~PathGuard() { path.pop_back(); }
    PathGuard(const PathGuard&) = delete;
    PathGuard& operator=(const PathGuard&) = delete;
    std::vector<PathSeg>& path;
  };

  const TypeLibrary& lib_;
  const DecodeLimits& limits_;
  Cursor c_;
  uint64_t budget_;  // elements that take no bytes plus defaults, per sample
  uint32_t depth_ = 0;
  std::vector<PathSeg> path_;
  bool failed_ = false;
  common::Error error_;
};

// ---- reading ----------------------------------------------------------------------------------

std::string Decoder::path_string() const {
  if (path_.empty()) return "(top level)";
  std::string s;
  for (const PathSeg& seg : path_) {
    if (seg.name.empty()) {
      s += '[';
      s += std::to_string(seg.index);
      s += ']';
    } else {
      if (!s.empty()) s += '.';
      s.append(seg.name);
    }
  }
  return s;
}

bool Decoder::fail_at(size_t offset, Errc code, std::string_view what) {
  if (!failed_) {
    failed_ = true;
    std::string msg = "offset " + std::to_string(offset) +
                      " (bytes after the encapsulation header): " + path_string() + ": ";
    msg.append(what);
    error_ = common::make_error(code, std::move(msg));
  }
  return false;
}

bool Decoder::need(size_t n) {
  if (n <= c_.end - c_.pos) return true;
  return fail(overrun_code(), "needs " + std::to_string(n) + " bytes, " + left(c_.pos));
}

bool Decoder::align(size_t n) {
  const size_t a = n < c_.max_align ? n : c_.max_align;
  const size_t rel = (c_.pos - c_.origin) & (a - 1);
  if (rel == 0) return true;
  if (!need(a - rel)) return false;
  c_.pos += a - rel;
  return true;
}

template <class U>
bool Decoder::read(U& v) {
  static_assert(std::is_unsigned_v<U>);
  if (!align(sizeof(U)) || !need(sizeof(U))) return false;
  std::memcpy(&v, c_.data + c_.pos, sizeof(U));
  if constexpr (sizeof(U) > 1) {
    if (c_.swap) v = byteswap(v);
  }
  c_.pos += sizeof(U);
  return true;
}

Saved Decoder::narrow(size_t end, size_t origin) {
  const Saved s{c_.end, c_.origin};
  c_.end = end;
  c_.origin = origin;
  return s;
}

bool Decoder::open_dheader(Saved& saved) {
  uint32_t n = 0;
  if (!read(n)) return false;
  if (n > c_.end - c_.pos)
    return fail_at(c_.pos - 4, overrun_code(),
                   "DHEADER of " + std::to_string(n) + " bytes, " + left(c_.pos));
  saved = narrow(c_.pos + n, c_.origin);
  return true;
}

bool Decoder::spend(uint64_t n) {
  if (n <= budget_) {
    budget_ -= n;
    return true;
  }
  return fail(Errc::kUnsupported,
              "too many values that take no bytes (empty structs, defaults of members the "
              "writer did not send) for a sample of this size");
}

// ---- the type library -------------------------------------------------------------------------

const Type* Decoder::resolved(TypeId id) {
  for (int hops = 0; hops < kMaxAliasHops; ++hops) {
    if (id >= lib_.size()) {
      fail(Errc::kInvalidArgument, "type id " + std::to_string(id) + " not in the library");
      return nullptr;
    }
    const Type& t = lib_.at(id);
    if (t.kind != Kind::kAlias) return &t;
    id = t.element;
  }
  fail(Errc::kInvalidArgument, "alias chain longer than 64 (a loop?)");
  return nullptr;
}

const Type* Decoder::peek_resolved(TypeId id) const {
  for (int hops = 0; hops < kMaxAliasHops && id < lib_.size(); ++hops) {
    const Type& t = lib_.at(id);
    if (t.kind != Kind::kAlias) return &t;
    id = t.element;
  }
  return nullptr;
}

const Type* Decoder::base_of(const Type& t, int chain) {
  if (t.base == kNoType) return nullptr;
  if (chain >= kMaxBaseChain) {
    fail(Errc::kInvalidArgument, "base struct chain longer than 64 (a loop?)");
    return nullptr;
  }
  const Type* b = resolved(t.base);
  if (b != nullptr && b->kind != Kind::kStruct) {
    fail(Errc::kInvalidArgument, "base type of '" + t.name + "' is not a struct");
    return nullptr;
  }
  return b;
}

// A lower bound of the bytes a value of type `id` takes (0 when it may take none, or when the
// type library is malformed: the decoder reports that when it gets there).
uint64_t Decoder::min_size(TypeId id, int depth) {
  const Type* resolved_type = depth > kMaxMinSizeDepth ? nullptr : peek_resolved(id);
  if (resolved_type == nullptr) return 0;
  const Type& t = *resolved_type;
  if (is_primitive(t.kind)) return primitive_size(t.kind);
  switch (t.kind) {
    case Kind::kString:
      return 4;
    case Kind::kEnum:
      return c_.xcdr2 ? enum_size(t.bit_bound) : 4;
    case Kind::kBitmask:
      return bitmask_size(t.bit_bound);
    case Kind::kSequence:
      return c_.xcdr2 ? 8 : 4;  // (XCDR2: at most a DHEADER more; 4 is safe too)
    case Kind::kArray: {
      uint64_t n = 1;
      for (uint32_t d : t.dims) n = sat_mul(n, d);
      return sat_mul(n, min_size(t.element, depth + 1));
    }
    case Kind::kStruct:
      return struct_min_size(t, depth);
    case Kind::kUnion:
      if (c_.xcdr2 && t.extensibility != Extensibility::kFinal) return 4;
      if (!c_.xcdr2 && t.extensibility == Extensibility::kMutable) return 4;
      return min_size(t.discriminator, depth + 1);
    default:
      return 0;
  }
}

uint64_t Decoder::struct_min_size(const Type& t, int depth) {
  if (c_.xcdr2 && t.extensibility != Extensibility::kFinal) return 4;     // DHEADER
  if (!c_.xcdr2 && t.extensibility == Extensibility::kMutable) return 4;  // PID_LIST_END
  uint64_t sum = 0;
  const Type* cur = &t;
  for (int chain = 0; cur != nullptr && chain < kMaxBaseChain; ++chain) {
    for (const Member& m : cur->members)
      sum = sat_add(sum, m.optional ? (c_.xcdr2 ? 1 : 4) : min_size(m.type, depth + 1));
    cur = cur->base == kNoType ? nullptr : peek_resolved(cur->base);
    if (cur != nullptr && cur->kind != Kind::kStruct) break;
  }
  return sum;
}

// ---- values -----------------------------------------------------------------------------------

bool Decoder::value(TypeId id, Json& out) {
  const Type* t = resolved(id);
  if (t == nullptr) return false;
  if (is_primitive(t->kind)) return primitive(t->kind, out);
  switch (t->kind) {
    case Kind::kString:
      return string_value(*t, out);
    case Kind::kEnum: {
      int64_t v = 0;
      if (!read_enum(*t, v)) return false;
      out = enum_json(*t, v);
      return true;
    }
    case Kind::kBitmask:
      return bitmask(*t, out);
    default:
      break;
  }
  if (depth_ >= limits_.max_depth)
    return fail(Errc::kUnsupported,
                "nested deeper than " + std::to_string(limits_.max_depth) + " levels");
  ++depth_;
  bool ok = false;
  switch (t->kind) {
    case Kind::kSequence:
      ok = sequence(*t, out);
      break;
    case Kind::kArray:
      ok = array(*t, out);
      break;
    case Kind::kStruct:
      ok = structure(*t, out);
      break;
    case Kind::kUnion:
      ok = union_value(*t, out);
      break;
    default:
      ok = fail(Errc::kInvalidArgument, "type of an unknown kind");
      break;
  }
  --depth_;
  return ok;
}

bool Decoder::primitive(Kind k, Json& out) {
  switch (k) {
    case Kind::kBool: {
      uint8_t v = 0;
      if (!read(v)) return false;
      if (v > 1)
        return fail_at(c_.pos - 1, Errc::kCorrupt,
                       "boolean byte " + std::to_string(v) + " is neither 0 nor 1");
      out = v != 0;
      return true;
    }
    case Kind::kChar8: {
      uint8_t v = 0;
      if (!read(v)) return false;
      out = char_json(v);
      return true;
    }
    case Kind::kOctet:
    case Kind::kUInt8: {
      uint8_t v = 0;
      if (!read(v)) return false;
      out = v;
      return true;
    }
    case Kind::kInt8: {
      uint8_t v = 0;
      if (!read(v)) return false;
      out = static_cast<int8_t>(v);
      return true;
    }
    case Kind::kInt16:
    case Kind::kUInt16: {
      uint16_t v = 0;
      if (!read(v)) return false;
      out = k == Kind::kInt16 ? Json(static_cast<int16_t>(v)) : Json(v);
      return true;
    }
    case Kind::kInt32:
    case Kind::kUInt32:
    case Kind::kFloat32: {
      uint32_t v = 0;
      if (!read(v)) return false;
      if (k == Kind::kFloat32)
        out = float_json(std::bit_cast<float>(v));
      else
        out = k == Kind::kInt32 ? Json(static_cast<int32_t>(v)) : Json(v);
      return true;
    }
    default: {  // kInt64, kUInt64, kFloat64
      uint64_t v = 0;
      if (!read(v)) return false;
      if (k == Kind::kFloat64)
        out = double_json(std::bit_cast<double>(v));
      else
        out = k == Kind::kInt64 ? Json(static_cast<int64_t>(v)) : Json(v);
      return true;
    }
  }
}

bool Decoder::string_value(const Type& t, Json& out) {
  uint32_t n = 0;
  if (!read(n)) return false;
  const size_t at = c_.pos - 4;
  if (n == 0) {  // not valid CDR (the NUL is counted), but unambiguous
    out = "";
    return true;
  }
  if (t.bound != 0 && n - 1 > t.bound)
    return fail_at(at, Errc::kCorrupt,
                   "string of " + std::to_string(n - 1) + " characters exceeds its bound " +
                       std::to_string(t.bound));
  if (!need(n)) return false;
  const uint8_t* p = c_.data + c_.pos;
  if (p[n - 1] != 0)
    return fail_at(c_.pos + n - 1, Errc::kCorrupt, "string not terminated by a NUL");
  out = utf8_text(p, n - 1);
  c_.pos += n;
  return true;
}

bool Decoder::read_enum(const Type& t, int64_t& v) {
  const size_t size = c_.xcdr2 ? enum_size(t.bit_bound) : 4;
  if (size == 0)
    return fail(Errc::kInvalidArgument,
                "enum '" + t.name + "' has bit_bound " + std::to_string(t.bit_bound));
  if (size == 1) {
    uint8_t u = 0;
    if (!read(u)) return false;
    v = static_cast<int8_t>(u);
  } else if (size == 2) {
    uint16_t u = 0;
    if (!read(u)) return false;
    v = static_cast<int16_t>(u);
  } else {
    uint32_t u = 0;
    if (!read(u)) return false;
    v = static_cast<int32_t>(u);
  }
  return true;
}

// The literal's name; a 1- or 2-byte value also matches a literal by its unsigned reading (a
// bit_bound 8 enum with a literal 200 is written as the byte 0xc8).
Json Decoder::enum_json(const Type& t, int64_t v) const {
  const size_t size = c_.xcdr2 ? enum_size(t.bit_bound) : 4;
  const int64_t unsigned_v = size == 1 ? (v & 0xff) : size == 2 ? (v & 0xffff) : v;
  for (const EnumLiteral& lit : t.literals)
    if (lit.value == v || lit.value == unsigned_v) return lit.name;
  return v;
}

bool Decoder::bitmask(const Type& t, Json& out) {
  switch (bitmask_size(t.bit_bound)) {
    case 1: {
      uint8_t v = 0;
      if (!read(v)) return false;
      out = v;
      return true;
    }
    case 2: {
      uint16_t v = 0;
      if (!read(v)) return false;
      out = v;
      return true;
    }
    case 4: {
      uint32_t v = 0;
      if (!read(v)) return false;
      out = v;
      return true;
    }
    case 8: {
      uint64_t v = 0;
      if (!read(v)) return false;
      out = v;
      return true;
    }
    default:
      return fail(Errc::kInvalidArgument,
                  "bitmask '" + t.name + "' has bit_bound " + std::to_string(t.bit_bound));
  }
}

// ---- collections ------------------------------------------------------------------------------

bool Decoder::sequence(const Type& t, Json& out) {
  const Type* et = resolved(t.element);
  if (et == nullptr) return false;
  Saved saved{};
  const bool dheader = needs_dheader(*et);
  if (dheader && !open_dheader(saved)) return false;
  uint32_t n = 0;
  if (!read(n)) return false;
  if (t.bound != 0 && n > t.bound)
    return fail_at(
        c_.pos - 4, Errc::kCorrupt,
        "sequence length " + std::to_string(n) + " exceeds its bound " + std::to_string(t.bound));
  if (!elements(t.element, *et, n, out)) return false;
  if (dheader) close_region(saved);
  return true;
}

// Checks that `count` elements can be there before anything is reserved.
bool Decoder::elements(TypeId elem, const Type& et, uint64_t count, Json& out) {
  if (count > limits_.max_elements)
    return fail(Errc::kUnsupported, std::to_string(count) + " elements, more than the limit " +
                                        std::to_string(limits_.max_elements));
  const uint64_t min = min_size(elem, 0);
  if (min == 0) {
    if (!spend(count)) return false;
  } else if (count > (c_.end - c_.pos) / min) {
    return fail(overrun_code(), std::to_string(count) + " elements of at least " +
                                    std::to_string(min) + " bytes, " +
                                    std::to_string(c_.end - c_.pos) + " bytes left" +
                                    (c_.end == c_.size ? "" : " in the enclosing length"));
  }
  out = Json::array();
  Json::array_t& arr = out.get_ref<Json::array_t&>();
  arr.reserve(static_cast<size_t>(count));
  PathGuard g(path_, PathSeg{{}, 0});
  for (uint64_t i = 0; i < count; ++i) {
    path_.back().index = i;
    arr.emplace_back();
    if (!element(elem, et, arr.back())) return false;
  }
  return true;
}

bool Decoder::array(const Type& t, Json& out) {
  if (t.dims.empty()) return fail(Errc::kInvalidArgument, "array type without dimensions");
  uint64_t total = 1;
  for (uint32_t d : t.dims) {
    total = sat_mul(total, d);
    if (total > limits_.max_elements)
      return fail(Errc::kUnsupported,
                  "array of more elements than the limit " + std::to_string(limits_.max_elements));
  }
  const Type* et = resolved(t.element);
  if (et == nullptr) return false;
  Saved saved{};
  const bool dheader = needs_dheader(*et);
  if (dheader && !open_dheader(saved)) return false;
  const uint64_t min = min_size(t.element, 0);
  if (min == 0) {
    if (!spend(total)) return false;
  } else if (total > (c_.end - c_.pos) / min) {
    return fail(overrun_code(), "array of " + std::to_string(total) + " elements of at least " +
                                    std::to_string(min) + " bytes, " +
                                    std::to_string(c_.end - c_.pos) + " bytes left" +
                                    (c_.end == c_.size ? "" : " in the enclosing length"));
  }
  if (!array_level(t, 0, *et, t.element, out)) return false;
  if (dheader) close_region(saved);
  return true;
}

// Dimension `level` of a (multi-dimensional) array: nested JSON arrays, outermost first.
bool Decoder::array_level(const Type& t, size_t level, const Type& et, TypeId elem, Json& out) {
  const uint32_t n = t.dims[level];
  const bool last = level + 1 == t.dims.size();
  out = Json::array();
  Json::array_t& arr = out.get_ref<Json::array_t&>();
  arr.reserve(n);
  PathGuard g(path_, PathSeg{{}, 0});
  for (uint32_t i = 0; i < n; ++i) {
    path_.back().index = i;
    arr.emplace_back();
    if (!(last ? element(elem, et, arr.back()) : array_level(t, level + 1, et, elem, arr.back())))
      return false;
  }
  return true;
}

// ---- structs ----------------------------------------------------------------------------------

bool Decoder::structure(const Type& t, Json& out) {
  out = Json::object();
  if (!c_.xcdr2) {
    if (t.extensibility == Extensibility::kMutable) return pl_cdr1_struct(t, out);
    return plain_members(t, out, false, 0);  // final and appendable: PLAIN_CDR
  }
  if (t.extensibility == Extensibility::kFinal) return plain_members(t, out, false, 0);
  Saved saved{};
  if (!open_dheader(saved)) return false;
  const bool ok = t.extensibility == Extensibility::kMutable ? pl_cdr2_struct(t, out)
                                                             : plain_members(t, out, true, 0);
  if (ok) close_region(saved);
  return ok;
}

// The members of `t` (its bases' first) one after the other. `delimited`: inside an XCDR2
// DHEADER, where members the writer did not send (the region ended) take their defaults.
bool Decoder::plain_members(const Type& t, Json& obj, bool delimited, int chain) {
  if (t.base != kNoType) {
    const Type* b = base_of(t, chain);
    if (b == nullptr || !plain_members(*b, obj, delimited, chain + 1)) return false;
  }
  for (const Member& m : t.members) {
    Json& slot = obj[m.name];
    if (delimited && c_.pos >= c_.end) {
      if (m.optional) continue;  // null already
      PathGuard g(path_, PathSeg{m.name, 0});
      if (!default_value(m.type, slot, depth_)) return false;
      continue;
    }
    if (!member(m, slot)) return false;
  }
  return true;
}

bool Decoder::member(const Member& m, Json& slot) {
  PathGuard g(path_, PathSeg{m.name, 0});
  return m.optional ? optional_member(m, slot) : value(m.type, slot);
}

// An optional member of a final or appendable struct.
bool Decoder::optional_member(const Member& m, Json& slot) {
  if (c_.xcdr2) {
    uint8_t present = 0;
    if (!read(present)) return false;
    if (present > 1)
      return fail_at(c_.pos - 1, Errc::kCorrupt,
                     "presence flag " + std::to_string(present) + " is neither 0 nor 1");
    if (present == 0) return true;  // null
    return value(m.type, slot);
  }
  ParamHeader h;
  if (!param_header(h)) return false;
  if (h.list_end || h.reserved)
    return fail_at(c_.pos - 4, Errc::kCorrupt,
                   "a PID_LIST_END or reserved parameter id where an optional member's "
                   "parameter header belongs");
  if (h.length == 0) return true;  // absent
  if (h.length > c_.end - c_.pos)
    return fail(overrun_code(),
                "optional member of " + std::to_string(h.length) + " bytes, " + left(c_.pos));
  const size_t start = c_.pos;
  const Saved saved = narrow(start + h.length, start);
  const bool ok = value(m.type, slot);
  restore(saved);
  c_.pos = start + h.length;
  return ok;
}

// An XCDR1 parameter header (aligned to 4): short (pid, length) or PID_EXTENDED.
bool Decoder::param_header(ParamHeader& h) {
  uint16_t pid = 0, len = 0;
  if (!align(4) || !read(pid) || !read(len)) return false;
  const uint16_t id = pid & kPidMask;
  h = ParamHeader{};
  if (id == kPidExtended) {
    uint32_t long_id = 0, long_len = 0;
    if (!read(long_id) || !read(long_len)) return false;
    h.id = long_id & kMemberIdMask;
    h.length = long_len;
  } else if (id == kPidListEnd) {
    h.list_end = true;
  } else {
    h.reserved = id >= kPidReservedFirst;
    h.id = id;
    h.length = len;
  }
  return true;
}

// Walks an XCDR1 parameter list up to PID_LIST_END; on_param(header) decodes a value (with
// the cursor narrowed to it and alignment restarting at its first byte) or skips it.
template <class F>
bool Decoder::param_list(F&& on_param) {
  for (;;) {
    ParamHeader h;
    if (!param_header(h)) return false;
    if (h.list_end) return true;
    const size_t start = c_.pos;
    if (h.length > c_.end - start)
      return fail(overrun_code(),
                  "parameter of " + std::to_string(h.length) + " bytes, " + left(start));
    if (!h.reserved) {
      const Saved saved = narrow(start + h.length, start);
      const bool ok = on_param(h);
      restore(saved);
      if (!ok) return false;
    }
    c_.pos = start + h.length;
  }
}

// Walks the EMHEADER-prefixed members of an XCDR2 mutable type up to the end of the current
// DHEADER region; on_member(id) decodes a member (the cursor narrowed to it) or skips it.
template <class F>
bool Decoder::emheader_list(F&& on_member) {
  while (c_.pos < c_.end) {
    uint32_t em = 0;
    if (!read(em)) return false;
    const uint32_t lc = (em >> 28) & 7, id = em & kMemberIdMask;
    uint64_t size = 0;
    if (lc <= 3) {
      size = uint64_t{1} << lc;
    } else if (lc == 4) {
      uint32_t next = 0;
      if (!read(next)) return false;
      size = next;
    } else {  // LC 5-7: NEXTINT is the member's own first word
      if (!need(4)) return false;
      uint32_t next = 0;
      std::memcpy(&next, c_.data + c_.pos, 4);
      if (c_.swap) next = byteswap(next);
      size = 4 + (uint64_t{next} << (lc == 5 ? 0 : lc - 4));
    }
    const size_t start = c_.pos;
    if (size > c_.end - start)
      return fail(overrun_code(), "member " + std::to_string(id) + " of " + std::to_string(size) +
                                      " bytes (length code " + std::to_string(lc) + "), " +
                                      left(start));
    const Saved saved = narrow(start + static_cast<size_t>(size), c_.origin);
    const bool ok = on_member(id);
    restore(saved);
    if (!ok) return false;
    c_.pos = start + static_cast<size_t>(size);
  }
  return true;
}

bool Decoder::pl_cdr1_struct(const Type& t, Json& obj) {
  if (!prefill(t, obj, 0)) return false;
  return param_list([&](const ParamHeader& h) {
    const Member* m = find_member(t, h.id, 0);
    if (failed_) return false;
    if (m == nullptr || (m->optional && h.length == 0)) return true;
    return named(m->name, m->type, obj[m->name]);
  });
}

bool Decoder::pl_cdr2_struct(const Type& t, Json& obj) {
  if (!prefill(t, obj, 0)) return false;
  return emheader_list([&](uint32_t id) {
    const Member* m = find_member(t, id, 0);
    if (failed_) return false;
    if (m == nullptr) return true;
    return named(m->name, m->type, obj[m->name]);  // optional members: absent by omission
  });
}

// Every member (bases' first) as null: the members of a mutable type may come in any order.
bool Decoder::prefill(const Type& t, Json& obj, int chain) {
  if (t.base != kNoType) {
    const Type* b = base_of(t, chain);
    if (b == nullptr || !prefill(*b, obj, chain + 1)) return false;
  }
  for (const Member& m : t.members) obj[m.name] = nullptr;
  return true;
}

const Member* Decoder::find_member(const Type& t, uint32_t id, int chain) {
  for (const Member& m : t.members)
    if (m.id == id) return &m;
  if (t.base == kNoType) return nullptr;
  const Type* b = base_of(t, chain);
  return b == nullptr ? nullptr : find_member(*b, id, chain + 1);
}

// ---- unions -----------------------------------------------------------------------------------

bool Decoder::union_value(const Type& t, Json& out) {
  out = Json::object();
  if (!c_.xcdr2)
    return t.extensibility == Extensibility::kMutable ? pl_cdr1_union(t, out)
                                                      : plain_union(t, out, false);
  if (t.extensibility == Extensibility::kFinal) return plain_union(t, out, false);
  Saved saved{};
  if (!open_dheader(saved)) return false;
  const bool ok = t.extensibility == Extensibility::kMutable ? pl_cdr2_union(t, out)
                                                             : plain_union(t, out, true);
  if (ok) close_region(saved);
  return ok;
}

bool Decoder::discriminator(const Type& t, int64_t& v, Json& out) {
  PathGuard g(path_, PathSeg{"$discriminator", 0});
  const Type* dt = resolved(t.discriminator);
  if (dt == nullptr || !read_scalar(*dt, v)) return false;
  out = scalar_json(*dt, v);
  return true;
}

// A discriminator value: integer kinds, bool, char, octet or enum.
bool Decoder::read_scalar(const Type& dt, int64_t& v) {
  if (dt.kind == Kind::kEnum) return read_enum(dt, v);
  if (!is_primitive(dt.kind) || dt.kind == Kind::kFloat32 || dt.kind == Kind::kFloat64)
    return fail(Errc::kInvalidArgument,
                "union discriminator type is not an integer, char, "
                "boolean or enum");
  switch (primitive_size(dt.kind)) {
    case 1: {
      uint8_t u = 0;
      if (!read(u)) return false;
      if (dt.kind == Kind::kBool && u > 1)
        return fail_at(c_.pos - 1, Errc::kCorrupt,
                       "boolean byte " + std::to_string(u) + " is neither 0 nor 1");
      v = dt.kind == Kind::kInt8 ? int64_t{static_cast<int8_t>(u)} : int64_t{u};
      return true;
    }
    case 2: {
      uint16_t u = 0;
      if (!read(u)) return false;
      v = dt.kind == Kind::kInt16 ? int64_t{static_cast<int16_t>(u)} : int64_t{u};
      return true;
    }
    case 4: {
      uint32_t u = 0;
      if (!read(u)) return false;
      v = dt.kind == Kind::kInt32 ? int64_t{static_cast<int32_t>(u)} : int64_t{u};
      return true;
    }
    default: {
      uint64_t u = 0;
      if (!read(u)) return false;
      v = static_cast<int64_t>(u);
      return true;
    }
  }
}

Json Decoder::scalar_json(const Type& dt, int64_t v) const {
  switch (dt.kind) {
    case Kind::kEnum:
      return enum_json(dt, v);
    case Kind::kBool:
      return v != 0;
    case Kind::kChar8:
      return char_json(static_cast<uint8_t>(v));
    case Kind::kOctet:
    case Kind::kUInt8:
    case Kind::kUInt16:
    case Kind::kUInt32:
    case Kind::kUInt64:
      return static_cast<uint64_t>(v);
    default:
      return v;
  }
}

const UnionCase* Decoder::select_case(const Type& t, int64_t v) const {
  const UnionCase* def = nullptr;
  for (const UnionCase& c : t.cases) {
    for (int64_t label : c.labels)
      if (label == v) return &c;
    if (c.is_default) def = &c;
  }
  return def;
}

bool Decoder::plain_union(const Type& t, Json& out, bool delimited) {
  int64_t v = 0;
  if (!discriminator(t, v, out["$discriminator"])) return false;
  const UnionCase* c = select_case(t, v);
  if (c == nullptr) return true;
  Json& slot = out[c->member.name];
  if (delimited && c_.pos >= c_.end) {
    PathGuard g(path_, PathSeg{c->member.name, 0});
    return default_value(c->member.type, slot, depth_);
  }
  return member(c->member, slot);
}

bool Decoder::pl_cdr1_union(const Type& t, Json& out) {
  bool have_disc = false;
  const UnionCase* c = nullptr;
  out["$discriminator"] = nullptr;
  return param_list([&](const ParamHeader& h) {
    if (!have_disc) {
      have_disc = true;
      int64_t v = 0;
      if (!discriminator(t, v, out["$discriminator"])) return false;
      c = select_case(t, v);
      if (c != nullptr) out[c->member.name] = nullptr;
      return true;
    }
    if (c == nullptr || h.id != c->member.id) return true;
    return named(c->member.name, c->member.type, out[c->member.name]);
  });
}

bool Decoder::pl_cdr2_union(const Type& t, Json& out) {
  bool have_disc = false;
  const UnionCase* c = nullptr;
  out["$discriminator"] = nullptr;
  return emheader_list([&](uint32_t id) {
    if (!have_disc) {
      have_disc = true;
      int64_t v = 0;
      if (!discriminator(t, v, out["$discriminator"])) return false;
      c = select_case(t, v);
      if (c != nullptr) out[c->member.name] = nullptr;
      return true;
    }
    if (c == nullptr || id != c->member.id) return true;
    return named(c->member.name, c->member.type, out[c->member.name]);
  });
}

// ---- defaults ---------------------------------------------------------------------------------

bool Decoder::default_value(TypeId id, Json& out, uint32_t depth) {
  if (depth >= limits_.max_depth)
    return fail(Errc::kUnsupported,
                "nested deeper than " + std::to_string(limits_.max_depth) + " levels");
  const Type* t = resolved(id);
  if (t == nullptr || !spend(1)) return false;
  switch (t->kind) {
    case Kind::kBool:
      out = false;
      return true;
    case Kind::kChar8:
      out = std::string(1, '\0');
      return true;
    case Kind::kFloat32:
    case Kind::kFloat64:
      out = 0.0;
      return true;
    case Kind::kString:
      out = "";
      return true;
    case Kind::kEnum:
      out = t->literals.empty() ? Json(0) : Json(t->literals.front().name);
      return true;
    case Kind::kSequence:
      out = Json::array();
      return true;
    case Kind::kArray:
      if (t->dims.empty()) return fail(Errc::kInvalidArgument, "array type without dimensions");
      return default_array(*t, 0, out, depth + 1);
    case Kind::kStruct:
      out = Json::object();
      return default_struct(*t, out, depth + 1, 0);
    case Kind::kUnion:
      return default_union(*t, out, depth + 1);
    default:
      if (!is_primitive(t->kind)) return fail(Errc::kInvalidArgument, "type of an unknown kind");
      out = (t->kind == Kind::kInt8 || t->kind == Kind::kInt16 || t->kind == Kind::kInt32 ||
             t->kind == Kind::kInt64)
                ? Json(0)
                : Json(0u);
      return true;
  }
}

bool Decoder::default_struct(const Type& t, Json& obj, uint32_t depth, int chain) {
  if (t.base != kNoType) {
    const Type* b = base_of(t, chain);
    if (b == nullptr || !default_struct(*b, obj, depth, chain + 1)) return false;
  }
  for (const Member& m : t.members) {
    Json& slot = obj[m.name];
    if (!m.optional && !default_value(m.type, slot, depth)) return false;
  }
  return true;
}

bool Decoder::default_union(const Type& t, Json& out, uint32_t depth) {
  const Type* dt = resolved(t.discriminator);
  if (dt == nullptr) return false;
  const int64_t v =
      dt->kind == Kind::kEnum && !dt->literals.empty() ? dt->literals.front().value : 0;
  out = Json::object();
  out["$discriminator"] = scalar_json(*dt, v);
  const UnionCase* c = select_case(t, v);
  return c == nullptr || default_value(c->member.type, out[c->member.name], depth);
}

bool Decoder::default_array(const Type& t, size_t level, Json& out, uint32_t depth) {
  const uint32_t n = t.dims[level];
  if (!spend(n)) return false;
  out = Json::array();
  Json::array_t& arr = out.get_ref<Json::array_t&>();
  arr.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    arr.emplace_back();
    const bool ok = level + 1 < t.dims.size() ? default_array(t, level + 1, arr.back(), depth)
                                              : default_value(t.element, arr.back(), depth);
    if (!ok) return false;
  }
  return true;
}

}  // namespace

// The bytes of the body after `pos` that are neither the declared padding nor up to 3 zero
// bytes that end the body at a multiple of 4.
static size_t unread_bytes(const Cursor& c, size_t pos, size_t declared_padding) {
  size_t left = c.size > pos ? c.size - pos : 0;
  left -= std::min(left, declared_padding);
  if (left > 0 && left < 4 && (pos + left) % 4 == 0) {
    bool zeros = true;
    for (size_t i = pos; i < pos + left; ++i) zeros = zeros && c.data[i] == 0;
    if (zeros) left = 0;
  }
  return left;
}

Result<Json> decode_cdr(const TypeLibrary& lib, TypeId top, std::span<const uint8_t> sample,
                        const DecodeLimits& limits, size_t* trailing) {
  if (sample.size() < 4)
    return common::make_error(Errc::kTruncated, "sample of " + std::to_string(sample.size()) +
                                                    " bytes has no 4-byte encapsulation header");
  const unsigned rep = unsigned{sample[0]} << 8 | sample[1];
  Cursor c;
  switch (rep) {
    case 0x0000:  // CDR_BE
    case 0x0001:  // CDR_LE
    case 0x0002:  // PL_CDR_BE
    case 0x0003:  // PL_CDR_LE
      c.xcdr2 = false;
      c.max_align = 8;
      break;
    case 0x0006:  // CDR2_BE
    case 0x0007:  // CDR2_LE
    case 0x000a:  // PL_CDR2_BE
    case 0x000b:  // PL_CDR2_LE
    case 0x0008:  // D_CDR2_BE
    case 0x0009:  // D_CDR2_LE
      c.xcdr2 = true;
      c.max_align = 4;
      break;
    default: {
      char hex[8];
      const auto r = std::to_chars(hex, hex + sizeof hex, rep, 16);
      return common::make_error(Errc::kUnsupported, "encapsulation header: representation id 0x" +
                                                        std::string(hex, r.ptr) +
                                                        " is not a CDR encoding");
    }
  }
  const bool big_endian = (rep & 1) == 0;
  c.swap = big_endian != (std::endian::native == std::endian::big);
  c.data = sample.data() + 4;
  c.size = sample.size() - 4;
  c.end = c.size;
  try {
    Decoder d(lib, limits, c);
    Json out;
    if (!d.value(top, out)) return d.error();
    if (trailing) *trailing = unread_bytes(c, d.pos(), sample[3] & 3u);
    return out;
  } catch (const std::exception& e) {  // std::bad_alloc, in practice
    return common::make_error(Errc::kUnsupported, std::string("decoding failed: ") + e.what());
  }
}

}  // namespace types
