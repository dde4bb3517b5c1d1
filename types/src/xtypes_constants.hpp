// XTypes 1.3 constants shared by the TypeObject decoder (type_object.cpp) and encoder
// (type_object_writer.cpp): TypeKinds and TypeIdentifier discriminators (7.3.4.2 and annex B),
// MemberFlag and TypeFlag bits (7.3.4.3). Private to the types library.
#pragma once

#include <cstdint>

namespace types::xtypes {

// TypeKinds and TypeIdentifier discriminators.
constexpr uint8_t kTkNone = 0x00;
constexpr uint8_t kTkBoolean = 0x01;
constexpr uint8_t kTkByte = 0x02;
constexpr uint8_t kTkInt16 = 0x03;
constexpr uint8_t kTkInt32 = 0x04;
constexpr uint8_t kTkInt64 = 0x05;
constexpr uint8_t kTkUInt16 = 0x06;
constexpr uint8_t kTkUInt32 = 0x07;
constexpr uint8_t kTkUInt64 = 0x08;
constexpr uint8_t kTkFloat32 = 0x09;
constexpr uint8_t kTkFloat64 = 0x0a;
constexpr uint8_t kTkFloat128 = 0x0b;
constexpr uint8_t kTkInt8 = 0x0c;
constexpr uint8_t kTkUInt8 = 0x0d;
constexpr uint8_t kTkChar8 = 0x10;
constexpr uint8_t kTkChar16 = 0x11;
constexpr uint8_t kTkAlias = 0x30;
constexpr uint8_t kTkEnum = 0x40;
constexpr uint8_t kTkBitmask = 0x41;
constexpr uint8_t kTkAnnotation = 0x50;
constexpr uint8_t kTkStructure = 0x51;
constexpr uint8_t kTkUnion = 0x52;
constexpr uint8_t kTkBitset = 0x53;
constexpr uint8_t kTkSequence = 0x60;
constexpr uint8_t kTkArray = 0x61;
constexpr uint8_t kTkMap = 0x62;
constexpr uint8_t kTiString8Small = 0x70;
constexpr uint8_t kTiString8Large = 0x71;
constexpr uint8_t kTiString16Small = 0x72;
constexpr uint8_t kTiString16Large = 0x73;
constexpr uint8_t kTiSeqSmall = 0x80;
constexpr uint8_t kTiSeqLarge = 0x81;
constexpr uint8_t kTiArraySmall = 0x90;
constexpr uint8_t kTiArrayLarge = 0x91;
constexpr uint8_t kTiMapSmall = 0xa0;
constexpr uint8_t kTiMapLarge = 0xa1;
constexpr uint8_t kTiScc = 0xb0;

// MemberFlag and TypeFlag bits (7.3.4.3).
constexpr uint16_t kIsOptional = 1u << 3;
constexpr uint16_t kIsMustUnderstand = 1u << 4;
constexpr uint16_t kIsKey = 1u << 5;
constexpr uint16_t kIsDefault = 1u << 6;
constexpr uint16_t kIsFinal = 1u << 0;
constexpr uint16_t kIsAppendable = 1u << 1;
constexpr uint16_t kIsMutable = 1u << 2;
constexpr uint16_t kIsNested = 1u << 3;
constexpr uint16_t kIsAutoidHash = 1u << 4;
constexpr uint16_t kTryConstruct1 = 1u << 0;  // TRY_CONSTRUCT DISCARD, Cyclone's default

// EquivalenceKind of a plain collection whose element needs no hash (7.3.4.6.1).
constexpr uint8_t kEkBoth = 0xf3;

// TypeInformation member ids (@id).
constexpr uint32_t kMinimalInfoId = 0x1001;
constexpr uint32_t kCompleteInfoId = 0x1002;

}  // namespace types::xtypes
