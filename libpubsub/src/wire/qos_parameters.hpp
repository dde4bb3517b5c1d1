// The standard QoS policies of an SEDP announcement as parameters (RTPS 2.5 9.6.2.2, Table 9.12;
// XTypes 7.6.3.4): pure functions over one parameter, nothing trusted. Durations are RTPS
// Duration_t {i32 seconds, u32 fraction}; {0x7fffffff, 0xffffffff} is DURATION_INFINITE.
//
// put_policies() writes only the policies that differ from DDS's defaults (an absent parameter
// means the default, RTPS 9.6.2.2), so an endpoint that sets nothing announces nothing more than
// before. decode_policy() recognises one parameter: kNotPolicy leaves it to the caller (which
// keeps what no one interprets in Policies::other), kBad rejects the announcement.
#pragma once

#include <cstdint>

#include "pubsub/qos.hpp"
#include "wire/byte_io.hpp"
#include "wire/parameter_list.hpp"

namespace pubsub::wire {

// Duration_t on the wire; Duration::max() and anything from 0x7fffffff s up is infinite.
void duration_to_wire(Duration d, int32_t& seconds, uint32_t& fraction);
void put_duration(ParameterListWriter& w, uint16_t pid, Duration d);
Duration read_duration(ByteReader& r);

// Appends the parameters of `p` that differ from DDS's defaults.
void put_policies(ParameterListWriter& w, const Policies& p);

enum class PolicyDecode { kNotPolicy, kDecoded, kBad };
PolicyDecode decode_policy(const Parameter& param, bool little_endian, Policies& out);

}  // namespace pubsub::wire
