// fastdds_qos_peer: the QosTest::Sample type support, CDR by plain byte copies (sample_type.hpp).
//
// Called by Fast DDS on the writing thread (serialize, getKey) and on its reception threads
// (deserialize, getKey for changes that came without a key hash); stateless, so no locking.
#include "sample_type.hpp"

#include <cstring>

#include <fastdds/rtps/common/SerializedPayload.h>
#include <fastrtps/utils/md5.h>

namespace qos_peer {
namespace {

namespace frtps = eprosima::fastrtps::rtps;

constexpr uint32_t kHeader = 4;      // encapsulation kind (2 bytes, big endian) and options
constexpr uint32_t kFixedBody = 12;  // id, seq, the payload's length
constexpr uint8_t kCdrBe = 0x00;     // XCDR1 plain CDR
constexpr uint8_t kCdrLe = 0x01;
constexpr uint8_t kCdr2Be = 0x06;  // XCDR2 plain CDR
constexpr uint8_t kCdr2Le = 0x07;

uint32_t padding(uint32_t payload_len) {
  return (4 - (kFixedBody + payload_len) % 4) % 4;
}
uint32_t serialized_size(const Sample& s) {
  const auto n = static_cast<uint32_t>(s.payload.size());
  return kHeader + kFixedBody + n + padding(n);
}

void put_le32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
uint32_t get32(const uint8_t* p, bool little_endian) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) {
    const uint32_t byte = little_endian ? p[i] : p[3 - i];
    v |= byte << (8 * i);
  }
  return v;
}

}  // namespace

void fill_payload(Sample& s, uint32_t size) {
  s.payload.resize(size);
  const uint32_t base = static_cast<uint32_t>(s.id) * 31u + static_cast<uint32_t>(s.seq) * 7u;
  for (uint32_t i = 0; i < size; ++i) s.payload[i] = static_cast<uint8_t>(base + i);
}

bool payload_matches(const Sample& s) {
  const uint32_t base = static_cast<uint32_t>(s.id) * 31u + static_cast<uint32_t>(s.seq) * 7u;
  for (size_t i = 0; i < s.payload.size(); ++i) {
    if (s.payload[i] != static_cast<uint8_t>(base + static_cast<uint32_t>(i))) return false;
  }
  return true;
}

SampleType::SampleType(Encoding encoding) : encoding_(encoding) {
  setName(kTypeName);
  // Unbounded (sequence<octet>): not a limit, only the size Fast DDS reserves per sample at
  // first (its memory policy reallocates for bigger ones); fastddsgen's estimate, 100 octets.
  m_typeSize = kHeader + kFixedBody + 100;
  m_isGetKeyDefined = true;
  // No type object or type information: matching by type name, as with Cyclone's 0.10 peers.
  auto_fill_type_object(false);
  auto_fill_type_information(false);
}

bool SampleType::serialize(void* data, frtps::SerializedPayload_t* payload) {
  const auto& s = *static_cast<const Sample*>(data);
  const uint32_t size = serialized_size(s);
  if (payload->max_size < size) return false;  // Fast DDS reserved what the size provider said
  const auto n = static_cast<uint32_t>(s.payload.size());
  uint8_t* p = payload->data;
  p[0] = 0x00;
  p[1] = encoding_ == Encoding::kXcdr2 ? kCdr2Le : kCdrLe;
  p[2] = 0x00;
  p[3] = static_cast<uint8_t>(padding(n));
  put_le32(p + 4, static_cast<uint32_t>(s.id));
  put_le32(p + 8, static_cast<uint32_t>(s.seq));
  put_le32(p + 12, n);
  if (n) std::memcpy(p + 16, s.payload.data(), n);
  std::memset(p + 16 + n, 0, padding(n));
  payload->length = size;
  payload->encapsulation = p[1];
  return true;
}

bool SampleType::deserialize(frtps::SerializedPayload_t* payload, void* data) {
  auto& s = *static_cast<Sample*>(data);
  if (payload->length < kHeader + 4) return false;
  const uint8_t* p = payload->data;
  const uint8_t kind = p[1];
  if (p[0] != 0 || (kind != kCdrBe && kind != kCdrLe && kind != kCdr2Be && kind != kCdr2Le)) {
    return false;
  }
  const bool le = (kind & 1) != 0;
  const uint8_t* body = p + kHeader;
  const uint32_t body_len = payload->length - kHeader;
  s.id = static_cast<int32_t>(get32(body, le));
  if (body_len < kFixedBody) {  // a serialized key: only the id
    s.seq = 0;
    s.payload.clear();
    return true;
  }
  s.seq = static_cast<int32_t>(get32(body + 4, le));
  const uint32_t n = get32(body + 8, le);
  if (n > body_len - kFixedBody) return false;
  s.payload.assign(body + kFixedBody, body + kFixedBody + n);
  return true;
}

std::function<uint32_t()> SampleType::getSerializedSizeProvider(void* data) {
  return [size = serialized_size(*static_cast<const Sample*>(data))] { return size; };
}

bool SampleType::getKey(void* data, frtps::InstanceHandle_t* handle, bool force_md5) {
  const auto id = static_cast<uint32_t>(static_cast<const Sample*>(data)->id);
  const uint8_t be[4] = {static_cast<uint8_t>(id >> 24), static_cast<uint8_t>(id >> 16),
                         static_cast<uint8_t>(id >> 8), static_cast<uint8_t>(id)};
  uint8_t hash[16] = {};
  if (force_md5) {
    MD5 md5;
    md5.update(be, 4);
    md5.finalize();
    std::memcpy(hash, md5.digest, 16);
  } else {
    std::memcpy(hash, be, 4);
  }
  for (size_t i = 0; i < 16; ++i) handle->value[i] = hash[i];
  return true;
}

void* SampleType::createData() {
  return new Sample();
}
void SampleType::deleteData(void* data) {
  delete static_cast<Sample*>(data);
}

int32_t id_of_key_hash(const frtps::InstanceHandle_t& handle) {
  uint8_t be[4];
  for (size_t i = 0; i < 4; ++i) be[i] = handle.value[i];
  return static_cast<int32_t>(get32(be, false));
}

}  // namespace qos_peer
