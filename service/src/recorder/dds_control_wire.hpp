// The DDS control topics' wire form (dds_control.hpp has the IDL and the protocol): CDR bodies
// without the encapsulation header, as Writer::write takes them and SampleCallback hands them
// out. Pure functions of their bytes: the recorder decodes requests from any participant of its
// domain with them (tests/fuzz/control_request_fuzzer.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pubsub/basics.hpp"

namespace service {
namespace dds_control_wire {

struct Request {
  uint64_t id = 0;
  std::string json;
};

struct Reply {
  pubsub::Guid requester;
  uint64_t id = 0;
  std::string json;
};

std::vector<std::byte> encode(const Request& request);  // little endian
std::vector<std::byte> encode(const Reply& reply);      // little endian
// `encapsulation` as SampleInfo has it; nullopt when it is not PLAIN_CDR(2) or the body does not
// hold the struct (short, a string without its NUL, longer than `max_string` bytes).
std::optional<Request> decode_request(pubsub::Bytes body, uint16_t encapsulation,
                                      size_t max_string);
std::optional<Reply> decode_reply(pubsub::Bytes body, uint16_t encapsulation, size_t max_string);

}  // namespace dds_control_wire

}  // namespace service
