// Matching rules between a writer and a reader (DDS request/offered QoS, partitions, data
// representation, topic and type names) and the glob patterns of raw readers. Pure functions.
#pragma once

#include <string>
#include <string_view>

#include "wire/discovery_data.hpp"

namespace pubsub::discovery {

// Shell-style glob: * any run, ? one character, [abc] / [a-z] / [!a] a class. Whole-name match.
bool glob_match(std::string_view pattern, std::string_view name);
// Empty when the pattern is well formed, else what is wrong with it.
std::string glob_error(std::string_view pattern);

// Empty when the writer and reader match, else the first reason they do not.
std::string match_failure(const wire::EndpointData& writer, const wire::EndpointData& reader);

}  // namespace pubsub::discovery
