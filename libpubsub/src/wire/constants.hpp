// DDSI-RTPS 2.x wire constants: submessage ids and flags, builtin entity ids, parameter ids,
// encapsulation kinds, port mapping. Values from the OMG DDSI-RTPS specification; the ones
// Cyclone DDS relies on are exercised by tests/integration/interop.
#pragma once

#include <cstdint>

namespace pubsub::wire {

// ---- message header -------------------------------------------------------------------------
inline constexpr uint8_t kProtocolMajor = 2;
inline constexpr uint8_t kProtocolMinor = 3;
// An unassigned vendor id: not Cyclone's 0x0110 (Cyclone treats its own vendor specially).
inline constexpr uint8_t kVendorId[2] = {0x01, 0x99};
// Other vendors' ids (OMG's vendor id list), for what their implementations need of us.
inline constexpr uint8_t kVendorFastDds[2] = {0x01, 0x0f};
inline constexpr uint8_t kVendorCyclone[2] = {0x01, 0x10};
// Whether a participant's vendor id (ParticipantData::vendor) is `id`, one of the above.
inline bool is_vendor(const uint8_t vendor[2], const uint8_t (&id)[2]) {
  return vendor[0] == id[0] && vendor[1] == id[1];
}
inline constexpr size_t kHeaderSize = 20;
inline constexpr size_t kSubmessageHeaderSize = 4;

// ---- submessage ids -------------------------------------------------------------------------
enum SubmessageId : uint8_t {
  kPad = 0x01,
  kAckNack = 0x06,
  kHeartbeat = 0x07,
  kGap = 0x08,
  kInfoTs = 0x09,
  kInfoSrc = 0x0c,
  kInfoReplyIp4 = 0x0d,
  kInfoDst = 0x0e,
  kInfoReply = 0x0f,
  kNackFrag = 0x12,
  kHeartbeatFrag = 0x13,
  kData = 0x15,
  kDataFrag = 0x16,
};

// Flags (bit 0 is endianness in every submessage).
inline constexpr uint8_t kFlagLittleEndian = 0x01;
inline constexpr uint8_t kDataFlagInlineQos = 0x02;
inline constexpr uint8_t kDataFlagData = 0x04;
inline constexpr uint8_t kDataFlagKey = 0x08;
inline constexpr uint8_t kDataFragFlagInlineQos = 0x02;
inline constexpr uint8_t kDataFragFlagKey = 0x04;
inline constexpr uint8_t kHeartbeatFlagFinal = 0x02;
inline constexpr uint8_t kHeartbeatFlagLiveliness = 0x04;
inline constexpr uint8_t kAckNackFlagFinal = 0x02;
inline constexpr uint8_t kInfoTsFlagInvalidate = 0x02;

// ---- entity ids (big-endian values) ---------------------------------------------------------
inline constexpr uint32_t kEntityIdUnknown = 0x00000000;
inline constexpr uint32_t kEntityIdParticipant = 0x000001c1;
inline constexpr uint32_t kEntityIdSpdpWriter = 0x000100c2;
inline constexpr uint32_t kEntityIdSpdpReader = 0x000100c7;
inline constexpr uint32_t kEntityIdSedpPubWriter = 0x000003c2;
inline constexpr uint32_t kEntityIdSedpPubReader = 0x000003c7;
inline constexpr uint32_t kEntityIdSedpSubWriter = 0x000004c2;
inline constexpr uint32_t kEntityIdSedpSubReader = 0x000004c7;
inline constexpr uint32_t kEntityIdPmdWriter = 0x000200c2;
inline constexpr uint32_t kEntityIdPmdReader = 0x000200c7;
inline constexpr uint32_t kEntityIdTypeLookupRequestWriter = 0x000300c3;
inline constexpr uint32_t kEntityIdTypeLookupRequestReader = 0x000300c4;
inline constexpr uint32_t kEntityIdTypeLookupReplyWriter = 0x000301c3;
inline constexpr uint32_t kEntityIdTypeLookupReplyReader = 0x000301c4;

inline constexpr uint8_t kKindWriterWithKey = 0x02;
inline constexpr uint8_t kKindWriterNoKey = 0x03;
inline constexpr uint8_t kKindReaderNoKey = 0x04;
inline constexpr uint8_t kKindReaderWithKey = 0x07;

inline constexpr bool is_writer_kind(uint8_t kind) {
  const uint8_t k = kind & 0x3f;
  return k == 0x02 || k == 0x03;
}

// Builtin endpoint set bits (PID_BUILTIN_ENDPOINT_SET).
inline constexpr uint32_t kBuiltinParticipantAnnouncer = 1u << 0;
inline constexpr uint32_t kBuiltinParticipantDetector = 1u << 1;
inline constexpr uint32_t kBuiltinPublicationsAnnouncer = 1u << 2;
inline constexpr uint32_t kBuiltinPublicationsDetector = 1u << 3;
inline constexpr uint32_t kBuiltinSubscriptionsAnnouncer = 1u << 4;
inline constexpr uint32_t kBuiltinSubscriptionsDetector = 1u << 5;
// DDS-XTypes 1.3, 7.6.3.3.4: the TypeLookup service's builtin endpoints.
inline constexpr uint32_t kBuiltinParticipantMessageWriter = 1u << 10;
inline constexpr uint32_t kBuiltinParticipantMessageReader = 1u << 11;
inline constexpr uint32_t kBuiltinTypeLookupRequestWriter = 1u << 12;
inline constexpr uint32_t kBuiltinTypeLookupRequestReader = 1u << 13;
inline constexpr uint32_t kBuiltinTypeLookupReplyWriter = 1u << 14;
inline constexpr uint32_t kBuiltinTypeLookupReplyReader = 1u << 15;

// ---- parameter ids --------------------------------------------------------------------------
enum ParameterId : uint16_t {
  kPidPad = 0x0000,
  kPidSentinel = 0x0001,
  kPidParticipantLeaseDuration = 0x0002,
  kPidTopicName = 0x0005,
  kPidTypeName = 0x0007,
  kPidDomainId = 0x000f,
  kPidProtocolVersion = 0x0015,
  kPidVendorId = 0x0016,
  kPidReliability = 0x001a,
  kPidDurability = 0x001d,
  kPidHistory = 0x0040,
  kPidResourceLimits = 0x0041,
  kPidUserData = 0x002c,
  kPidPartition = 0x0029,
  kPidMulticastLocator = 0x0030,
  kPidUnicastLocator = 0x002f,
  kPidDefaultUnicastLocator = 0x0031,
  kPidMetatrafficUnicastLocator = 0x0032,
  kPidMetatrafficMulticastLocator = 0x0033,
  kPidExpectsInlineQos = 0x0043,
  kPidDefaultMulticastLocator = 0x0048,
  kPidParticipantGuid = 0x0050,
  kPidBuiltinEndpointSet = 0x0058,
  kPidEndpointGuid = 0x005a,
  kPidKeyHash = 0x0070,
  kPidStatusInfo = 0x0071,
  kPidDataRepresentation = 0x0073,
  kPidTypeInformation = 0x0075,
  // QoS policies (RTPS 2.5 Table 9.12; XTypes 7.6.3.4 for type consistency and representation).
  kPidTimeBasedFilter = 0x0004,
  kPidOwnershipStrength = 0x0006,
  kPidLiveliness = 0x001b,
  kPidDurabilityService = 0x001e,
  kPidOwnership = 0x001f,
  kPidPresentation = 0x0021,
  kPidDeadline = 0x0023,
  kPidDestinationOrder = 0x0025,
  kPidLatencyBudget = 0x0027,
  kPidLifespan = 0x002b,
  kPidGroupData = 0x002d,
  kPidTopicData = 0x002e,
  kPidContentFilterProperty = 0x0035,
  kPidTransportPriority = 0x0049,
  kPidTypeConsistencyEnforcement = 0x0074,
};

inline constexpr uint16_t kPidMustUnderstand = 0x4000;
inline constexpr uint16_t kPidVendorSpecific = 0x8000;
// Ours (vendor 0x0199), in the vendor-specific range: see ShmLocator.
inline constexpr uint16_t kPidPubsubShm = 0x8001;
inline constexpr size_t kMaxShmNameBytes = 255;

// PID_STATUS_INFO bits (last byte, big endian u32).
inline constexpr uint32_t kStatusDisposed = 0x1;
inline constexpr uint32_t kStatusUnregistered = 0x2;

// ---- encapsulation --------------------------------------------------------------------------
inline constexpr uint16_t kEncapCdrBe = 0x0000;
inline constexpr uint16_t kEncapCdrLe = 0x0001;
inline constexpr uint16_t kEncapPlCdrBe = 0x0002;
inline constexpr uint16_t kEncapPlCdrLe = 0x0003;
inline constexpr size_t kEncapsulationSize = 4;

// Data representation ids (PID_DATA_REPRESENTATION).
inline constexpr int16_t kXcdr1 = 0;
inline constexpr int16_t kXml = 1;
inline constexpr int16_t kXcdr2 = 2;

// ---- port mapping (RTPS 9.6.1.1) ------------------------------------------------------------
inline constexpr uint32_t kPortBase = 7400;
inline constexpr uint32_t kDomainGain = 250;
inline constexpr uint32_t kParticipantGain = 2;
inline constexpr uint32_t kOffsetSpdpMulticast = 0;             // d0
inline constexpr uint32_t kOffsetMetaUnicast = 10;              // d1
inline constexpr uint32_t kOffsetUserMulticast = 1;             // d2
inline constexpr uint32_t kOffsetUserUnicast = 11;              // d3
inline constexpr uint32_t kDefaultMulticastGroup = 0xEFFF0001;  // 239.255.0.1

inline constexpr uint32_t spdp_multicast_port(uint32_t domain) {
  return kPortBase + kDomainGain * domain + kOffsetSpdpMulticast;
}
inline constexpr uint32_t user_multicast_port(uint32_t domain) {
  return kPortBase + kDomainGain * domain + kOffsetUserMulticast;
}
inline constexpr uint32_t meta_unicast_port(uint32_t domain, uint32_t participant_id) {
  return kPortBase + kDomainGain * domain + kOffsetMetaUnicast + kParticipantGain * participant_id;
}
inline constexpr uint32_t user_unicast_port(uint32_t domain, uint32_t participant_id) {
  return kPortBase + kDomainGain * domain + kOffsetUserUnicast + kParticipantGain * participant_id;
}

}  // namespace pubsub::wire
