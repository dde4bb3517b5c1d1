// Matching rules between a writer and a reader (DDS request/offered QoS, partitions, data
// representation, topic and type names). Pure functions. Glob patterns: common/glob.hpp.
#pragma once

#include <string>
#include <string_view>

#include "wire/discovery_data.hpp"

namespace pubsub::discovery {

// Empty when the writer and reader match, else the first reason they do not.
std::string match_failure(const wire::EndpointData& writer, const wire::EndpointData& reader);

}  // namespace pubsub::discovery
