#include "wire/discovery_data.hpp"

#include <cstring>

#include "wire/byte_io.hpp"
#include "wire/constants.hpp"
#include "wire/message.hpp"
#include "wire/parameter_list.hpp"
#include "wire/qos_parameters.hpp"

namespace pubsub::wire {

bool EndpointData::is_writer() const {
  return is_writer_kind(guid.entity.kind());
}

bool EndpointData::keyed() const {
  const uint8_t k = guid.entity.kind() & 0x3f;
  return k == kKindWriterWithKey || k == kKindReaderWithKey;
}

namespace {

void put_locator(ParameterListWriter& w, uint16_t pid, const Locator& l) {
  uint8_t buf[24];
  int32_t kind = l.kind;
  std::memcpy(buf, &kind, 4);
  std::memcpy(buf + 4, &l.port, 4);
  std::memcpy(buf + 8, l.address.data(), 16);
  w.raw(pid, buf, 24);
}

bool read_locator(const Parameter& p, bool le, Locator& l) {
  if (p.length < 24) return false;
  ByteReader r(p.value, p.length, le);
  l.kind = r.i32();
  l.port = r.u32();
  r.bytes(l.address.data(), 16);
  return r.ok();
}

std::vector<uint8_t> start_payload() {
  // PL_CDR_LE encapsulation, options 0.
  return std::vector<uint8_t>{0x00, 0x03, 0x00, 0x00};
}

// Checks the encapsulation header and returns the parameter list's byte order.
bool pl_encapsulation(const uint8_t* payload, size_t size, bool& le) {
  if (size < kEncapsulationSize) return false;
  const uint16_t kind = static_cast<uint16_t>(payload[0] << 8 | payload[1]);
  if (kind == kEncapPlCdrLe) {
    le = true;
  } else if (kind == kEncapPlCdrBe) {
    le = false;
  } else {
    return false;
  }
  return true;
}

}  // namespace

std::vector<uint8_t> encode_participant_data(const ParticipantData& p) {
  std::vector<uint8_t> out = start_payload();
  ParameterListWriter w(out);
  uint8_t guid[16];
  std::memcpy(guid, p.guid_prefix.data(), 12);
  const uint32_t pe = __builtin_bswap32(kEntityIdParticipant);
  std::memcpy(guid + 12, &pe, 4);
  w.raw(kPidParticipantGuid, guid, 16);
  w.raw(kPidProtocolVersion, p.version, 2);
  w.raw(kPidVendorId, p.vendor, 2);
  if (p.domain_id) w.u32(kPidDomainId, *p.domain_id);
  w.u32(kPidBuiltinEndpointSet, p.builtin_endpoints);
  put_duration(w, kPidParticipantLeaseDuration, p.lease_duration);
  for (const auto& l : p.default_unicast) put_locator(w, kPidDefaultUnicastLocator, l);
  for (const auto& l : p.default_multicast) put_locator(w, kPidDefaultMulticastLocator, l);
  for (const auto& l : p.metatraffic_unicast) put_locator(w, kPidMetatrafficUnicastLocator, l);
  for (const auto& l : p.metatraffic_multicast) put_locator(w, kPidMetatrafficMulticastLocator, l);
  if (!p.user_data.empty()) {
    std::vector<uint8_t> seq(4 + p.user_data.size());
    const uint32_t n = static_cast<uint32_t>(p.user_data.size());
    std::memcpy(seq.data(), &n, 4);
    std::memcpy(seq.data() + 4, p.user_data.data(), p.user_data.size());
    w.raw(kPidUserData, seq.data(), seq.size());
  }
  w.sentinel();
  return out;
}

bool decode_participant_data(const uint8_t* payload, size_t size, ParticipantData& out) {
  bool le = true;
  if (!pl_encapsulation(payload, size, le)) return false;
  bool have_guid = false;
  const bool ok = for_each_parameter(payload + kEncapsulationSize, size - kEncapsulationSize, le,
                                     [&](const Parameter& p) {
                                       ByteReader r(p.value, p.length, le);
                                       Locator l;
                                       switch (p.pid & ~kPidMustUnderstand) {
                                         case kPidParticipantGuid:
                                           if (p.length < 16) return false;
                                           std::memcpy(out.guid_prefix.data(), p.value, 12);
                                           have_guid = true;
                                           break;
                                         case kPidProtocolVersion:
                                           if (p.length < 2) return false;
                                           std::memcpy(out.version, p.value, 2);
                                           break;
                                         case kPidVendorId:
                                           if (p.length < 2) return false;
                                           std::memcpy(out.vendor, p.value, 2);
                                           break;
                                         case kPidDomainId:
                                           out.domain_id = r.u32();
                                           break;
                                         case kPidBuiltinEndpointSet:
                                           out.builtin_endpoints = r.u32();
                                           break;
                                         case kPidParticipantLeaseDuration:
                                           out.lease_duration = read_duration(r);
                                           break;
                                         case kPidDefaultUnicastLocator:
                                           if (!read_locator(p, le, l)) return false;
                                           out.default_unicast.push_back(l);
                                           break;
                                         case kPidDefaultMulticastLocator:
                                           if (!read_locator(p, le, l)) return false;
                                           out.default_multicast.push_back(l);
                                           break;
                                         case kPidMetatrafficUnicastLocator:
                                           if (!read_locator(p, le, l)) return false;
                                           out.metatraffic_unicast.push_back(l);
                                           break;
                                         case kPidMetatrafficMulticastLocator:
                                           if (!read_locator(p, le, l)) return false;
                                           out.metatraffic_multicast.push_back(l);
                                           break;
                                         case kPidUserData: {
                                           const uint32_t n = r.u32();
                                           if (!r.ok() || n > r.remaining()) return false;
                                           const uint8_t* d = r.take(n);
                                           out.user_data.assign(d, d + n);
                                           break;
                                         }
                                         default:
                                           break;
                                       }
                                       return r.ok();
                                     });
  return ok && have_guid;
}

std::vector<uint8_t> encode_endpoint_data(const EndpointData& e) {
  std::vector<uint8_t> out = start_payload();
  ParameterListWriter w(out);
  const auto guid = e.guid.bytes();
  w.raw(kPidEndpointGuid, guid.data(), 16);
  uint8_t participant[16];
  std::memcpy(participant, guid.data(), 12);
  const uint32_t pe = __builtin_bswap32(kEntityIdParticipant);
  std::memcpy(participant + 12, &pe, 4);
  w.raw(kPidParticipantGuid, participant, 16);
  w.string(kPidTopicName, e.topic_name);
  w.string(kPidTypeName, e.type_name);
  {
    uint8_t rel[12];
    const uint32_t kind = e.reliability == ReliabilityKind::kReliable ? 2 : 1;
    int32_t s;
    uint32_t f;
    duration_to_wire(e.max_blocking_time, s, f);
    std::memcpy(rel, &kind, 4);
    std::memcpy(rel + 4, &s, 4);
    std::memcpy(rel + 8, &f, 4);
    w.raw(kPidReliability, rel, 12);
  }
  w.u32(kPidDurability, static_cast<uint32_t>(e.durability));
  {
    uint8_t hist[8];
    const uint32_t kind = e.history.kind == HistoryKind::kKeepAll ? 1 : 0;
    const int32_t depth = e.history.depth;
    std::memcpy(hist, &kind, 4);
    std::memcpy(hist + 4, &depth, 4);
    w.raw(kPidHistory, hist, 8);
  }
  for (const auto& l : e.unicast) put_locator(w, kPidUnicastLocator, l);
  for (const auto& l : e.multicast) put_locator(w, kPidMulticastLocator, l);
  if (!e.partitions.empty()) {
    std::vector<uint8_t> seq;
    const uint32_t n = static_cast<uint32_t>(e.partitions.size());
    seq.insert(seq.end(), reinterpret_cast<const uint8_t*>(&n),
               reinterpret_cast<const uint8_t*>(&n) + 4);
    for (const auto& s : e.partitions) {
      const uint32_t len = static_cast<uint32_t>(s.size() + 1);
      seq.insert(seq.end(), reinterpret_cast<const uint8_t*>(&len),
                 reinterpret_cast<const uint8_t*>(&len) + 4);
      seq.insert(seq.end(), s.begin(), s.end());
      seq.push_back(0);
      while (seq.size() % 4) seq.push_back(0);
    }
    w.raw(kPidPartition, seq.data(), seq.size());
  }
  if (!e.data_representation.empty()) {
    std::vector<uint8_t> seq(4 + 2 * e.data_representation.size());
    const uint32_t n = static_cast<uint32_t>(e.data_representation.size());
    std::memcpy(seq.data(), &n, 4);
    std::memcpy(seq.data() + 4, e.data_representation.data(), 2 * e.data_representation.size());
    w.raw(kPidDataRepresentation, seq.data(), seq.size());
  }
  if (!e.type_information.empty()) {
    w.raw(kPidTypeInformation, e.type_information.data(), e.type_information.size());
  }
  put_policies(w, e.policies);
  if (e.shm && e.shm->name.size() <= kMaxShmNameBytes) {
    std::vector<uint8_t> v(e.shm->host.begin(), e.shm->host.end());
    const uint32_t len = static_cast<uint32_t>(e.shm->name.size() + 1);
    v.insert(v.end(), reinterpret_cast<const uint8_t*>(&len),
             reinterpret_cast<const uint8_t*>(&len) + 4);
    v.insert(v.end(), e.shm->name.begin(), e.shm->name.end());
    v.push_back(0);
    while (v.size() % 4) v.push_back(0);
    w.raw(kPidPubsubShm, v.data(), v.size());
  }
  w.sentinel();
  return out;
}

namespace {

// Parameters kept in Policies::other per endpoint, at most (an announcement is at most 64 KiB).
constexpr size_t kMaxOtherParameters = 256;

bool read_shm_locator(const Parameter& p, bool le, ShmLocator& out) {
  if (p.length < 20) return false;
  std::memcpy(out.host.data(), p.value, 16);
  ByteReader r(p.value + 16, p.length - 16, le);
  const uint32_t len = r.u32();
  if (!r.ok() || len == 0 || len > kMaxShmNameBytes + 1 || len > r.remaining()) return false;
  const uint8_t* s = r.take(len);
  if (s[len - 1] != 0) return false;
  out.name.assign(reinterpret_cast<const char*>(s), len - 1);
  return out.name.find('\0') == std::string::npos;
}

// A parameter the switch of decode_endpoint_data() did not take: a policy, bookkeeping that
// matching does not need, or one kept byte for byte in Policies::other.
bool other_parameter(const Parameter& p, bool le, Policies& policies) {
  switch (decode_policy(p, le, policies)) {
    case PolicyDecode::kDecoded:
      return true;
    case PolicyDecode::kBad:
      return false;
    case PolicyDecode::kNotPolicy:
      break;
  }
  switch (p.pid & ~kPidMustUnderstand) {
    case kPidParticipantGuid:
    case kPidProtocolVersion:
    case kPidVendorId:
    case kPidKeyHash:
    case kPidStatusInfo:
      return true;
    default:
      break;
  }
  if (policies.other.size() < kMaxOtherParameters) {
    policies.other.push_back(
        RawParameter{p.pid, le, std::vector<uint8_t>(p.value, p.value + p.length)});
  }
  return true;
}

}  // namespace

bool decode_endpoint_data(const uint8_t* payload, size_t size, bool writer_defaults,
                          EndpointData& out) {
  bool le = true;
  if (!pl_encapsulation(payload, size, le)) return false;
  out.reliability = writer_defaults ? ReliabilityKind::kReliable : ReliabilityKind::kBestEffort;
  bool have_guid = false, have_topic = false, have_type = false;
  const bool ok = for_each_parameter(
      payload + kEncapsulationSize, size - kEncapsulationSize, le, [&](const Parameter& p) {
        ByteReader r(p.value, p.length, le);
        Locator l;
        switch (p.pid & ~kPidMustUnderstand) {
          case kPidEndpointGuid:
            if (p.length < 16) return false;
            out.guid = Guid::from_bytes(p.value);
            have_guid = true;
            break;
          case kPidTopicName:
            if (!read_cdr_string(p, le, out.topic_name)) return false;
            have_topic = true;
            break;
          case kPidTypeName:
            if (!read_cdr_string(p, le, out.type_name)) return false;
            have_type = true;
            break;
          case kPidReliability: {
            const uint32_t kind = r.u32();
            out.reliability = kind == 2 ? ReliabilityKind::kReliable : ReliabilityKind::kBestEffort;
            if (p.length >= 12) out.max_blocking_time = read_duration(r);
            break;
          }
          case kPidDurability: {
            const uint32_t kind = r.u32();
            if (kind > static_cast<uint32_t>(DurabilityKind::kPersistent)) return false;
            out.durability = static_cast<DurabilityKind>(kind);
            break;
          }
          case kPidHistory:
            out.history.kind = r.u32() == 1 ? HistoryKind::kKeepAll : HistoryKind::kKeepLast;
            out.history.depth = r.i32();
            break;
          case kPidUnicastLocator:
            if (!read_locator(p, le, l)) return false;
            out.unicast.push_back(l);
            break;
          case kPidMulticastLocator:
            if (!read_locator(p, le, l)) return false;
            out.multicast.push_back(l);
            break;
          case kPidExpectsInlineQos:
            out.expects_inline_qos = p.length >= 1 && p.value[0] != 0;
            break;
          case kPidPartition: {
            const uint32_t n = r.u32();
            if (!r.ok() || n > p.length / 4) return false;
            for (uint32_t i = 0; i < n; ++i) {
              r.align(4);
              const uint32_t len = r.u32();
              if (!r.ok() || len == 0 || len > r.remaining()) return false;
              const uint8_t* s = r.take(len);
              if (s[len - 1] != 0) return false;  // a CDR string ends with its NUL
              out.partitions.emplace_back(reinterpret_cast<const char*>(s), len - 1);
            }
            break;
          }
          case kPidDataRepresentation: {
            const uint32_t n = r.u32();
            if (!r.ok() || n > r.remaining() / 2) return false;
            for (uint32_t i = 0; i < n; ++i) out.data_representation.push_back(r.get<int16_t>());
            break;
          }
          case kPidTypeInformation:
            out.type_information.assign(p.value, p.value + p.length);
            break;
          case kPidPubsubShm: {
            // Vendor-specific: another vendor may use the same id for something else, so a
            // value that is not ours is ignored, never an error (discovery also drops it
            // unless the participant's vendor id is ours).
            ShmLocator loc;
            if (read_shm_locator(p, le, loc)) out.shm = std::move(loc);
            break;
          }
          default:
            return other_parameter(p, le, out.policies);
        }
        return r.ok();
      });
  return ok && have_guid && have_topic && have_type;
}

bool decode_endpoint_key(const uint8_t* payload, size_t size, Guid& out) {
  bool le = true;
  if (!pl_encapsulation(payload, size, le)) return false;
  bool found = false;
  const bool ok = for_each_parameter(
      payload + kEncapsulationSize, size - kEncapsulationSize, le, [&](const Parameter& p) {
        if ((p.pid & ~kPidMustUnderstand) == kPidEndpointGuid && p.length >= 16) {
          out = Guid::from_bytes(p.value);
          found = true;
        }
        return true;
      });
  return ok && found;
}

}  // namespace pubsub::wire
