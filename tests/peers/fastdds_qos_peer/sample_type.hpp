// fastdds_qos_peer: the contract's type (tests/peers/qos_test.idl) by hand, as Fast DDS 2.9 has
// no fastddsgen here:
//
//   module QosTest { @final struct Sample { @key long id; long seq; sequence<octet> payload; }; };
//
// Sample is the C++ value; SampleType is its Fast DDS TopicDataType, registered as
// "QosTest::Sample". Fast DDS calls serialize/getKey on the writing thread and deserialize/getKey
// on its reception threads; the type holds no mutable state, so that needs no locking.
#pragma once

#include <cstdint>
#include <vector>

#include <fastdds/dds/topic/TopicDataType.hpp>

namespace qos_peer {

constexpr const char* kTypeName = "QosTest::Sample";

struct Sample {
  int32_t id = 0;
  int32_t seq = 0;
  std::vector<uint8_t> payload;
};

// The contract's deterministic payload: payload[i] = (uint8_t)(id * 31 + seq * 7 + i).
void fill_payload(Sample& s, uint32_t size);
bool payload_matches(const Sample& s);

enum class Encoding { kXcdr1, kXcdr2 };

// Writes plain CDR, little endian: encapsulation CDR_LE {0,1,0,0} (XCDR1) or CDR2_LE {0,7,0,0}
// (XCDR2; for this final struct without 8-byte members the body is the same), then id, seq,
// the payload's length and bytes, padded to 4 (the padding counted in the options' low bits).
// Reads either byte order of both, and a key-only body (just the id, as sent with a dispose).
// The key hash is the id big endian in 4 bytes, then 12 zeros (MD5 of those 4 bytes if asked).
class SampleType final : public eprosima::fastdds::dds::TopicDataType {
 public:
  explicit SampleType(Encoding encoding);

  bool serialize(void* data, eprosima::fastrtps::rtps::SerializedPayload_t* payload) override;
  bool deserialize(eprosima::fastrtps::rtps::SerializedPayload_t* payload, void* data) override;
  std::function<uint32_t()> getSerializedSizeProvider(void* data) override;
  bool getKey(void* data, eprosima::fastrtps::rtps::InstanceHandle_t* handle,
              bool force_md5) override;
  void* createData() override;
  void deleteData(void* data) override;

 private:
  Encoding encoding_;
};

// The id of an instance from its key hash (as getKey makes it and writers send it).
int32_t id_of_key_hash(const eprosima::fastrtps::rtps::InstanceHandle_t& handle);

}  // namespace qos_peer
