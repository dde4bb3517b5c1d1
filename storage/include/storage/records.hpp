// Plain value types shared by the writer, the reader and the chunk codec.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace storage {

using TopicId = uint32_t;   // assigned by SegmentWriter::add_topic, dense from 1; 0 is invalid
using WriterId = uint32_t;  // assigned by SegmentWriter::add_writer, dense from 1; 0 is invalid
using Guid = std::array<uint8_t, 16>;
using KeyHash = std::array<uint8_t, 16>;
using Bytes = std::vector<std::byte>;
using ByteSpan = std::span<const std::byte>;

// Metadata of one stored sample. Times are nanoseconds since the UNIX epoch.
struct RecordMeta {
  TopicId topic = 0;
  WriterId writer = 0;
  int64_t sequence = 0;      // the writer's sequence number
  int64_t source_ns = 0;     // source timestamp
  int64_t reception_ns = 0;  // reception timestamp; records are read back in this order
  uint32_t flags = 0;        // opaque to the store (e.g. dispose/unregister bits)
  bool has_key_hash = false;
  KeyHash key_hash{};  // meaningful only when has_key_hash
};

// A record handed out by a reader: the payload points into a buffer owned by the reader and stays
// valid until the next call that advances the reader.
struct RecordView {
  RecordMeta meta;
  ByteSpan payload;
};

struct TopicDef {
  std::string name;
  std::string type_name;
  bool keyed = false;
  Bytes qos;        // serialized QoS, opaque to the store
  Bytes type_info;  // type information blob (e.g. XTypes TypeInformation), opaque
};

// Where a recorded type definition came from.
enum class TypeSource : uint8_t {
  kIdl = 1,     // an IDL file given to the recorder (types.idl)
  kLookup = 2,  // the writer's participant, through the XTypes TypeLookup service
};

// The definition of one topic data type. Later definitions of the same name and source replace
// earlier ones; where both exist, the IDL one is the one to use.
struct TypeDef {
  std::string type_name;  // the DDS type name, as topics carry it (TopicDef::type_name)
  TypeSource source = TypeSource::kIdl;
  std::string idl;    // IDL text defining type_name and every type it uses
  Bytes type_object;  // kLookup: the TypeLookup reply (XCDR2 getTypes result) as received
};

struct WriterDef {
  TopicId topic = 0;
  Guid guid{};
  Bytes qos;  // the writer's own QoS, opaque to the store (empty before format 5)
};

// A range of sequence numbers a writer sent but the recording does not hold.
struct Gap {
  WriterId writer = 0;
  int64_t first_missing = 0;
  int64_t last_missing = 0;  // inclusive
};

// A named moment in a recording, put there while recording (pubsub-recorder's control commands).
enum class MarkKind : uint8_t {
  kTag = 1,     // a tag: `name`, with an optional `note`
  kPause = 2,   // recording paused from here (name: the topic, or "" for every topic)
  kResume = 3,  // recording resumed from here (name as for kPause)
  // The recorder's wall clock stepped here (format 4 readers before it refuse the entry). name:
  // "wall_clock"; note: the step and the wall clock's distance from reception times after it,
  // "+300.000 s; wall - reception +300.000 s". Reception times follow the monotonic clock.
  kClockStep = 4,
  // The recording is a recording set's member's (pubsub-recorder control.set), put at the start
  // (format 4 readers before it refuse the entry). name: the set; note: "host H, address A".
  kSetMember = 5,
  // An armed recorder (control.armed) started recording here (readers older than this kind
  // refuse the entry). name: the recording id the start command gave ("" none; a recording set's
  // `ctl --set NAME start` gives every member the same one); note: "".
  kStart = 6,
  // A recording set's member measured its clock against another member's (pubsub-recorder
  // control.set; readers older than this kind refuse the entry). name: the other member, as its
  // set_member note names it ("host H, address A"); note: the other clock minus this one and the
  // error bound, "+0.001234567 s, error 0.000210000 s".
  kClockOffset = 7,
};

struct Mark {
  MarkKind kind = MarkKind::kTag;
  int64_t time_ns = 0;  // nanoseconds since the UNIX epoch, the recorder's clock
  std::string name;
  std::string note;
  friend bool operator==(const Mark&, const Mark&) = default;
};

}  // namespace storage
