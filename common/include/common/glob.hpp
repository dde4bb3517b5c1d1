// Topic-name patterns as raw readers, the recorder's configuration and pubsub-replay use them:
// shell-style globs matched against the whole name. * any run of characters, ? one character,
// [abc] / [a-z] / [!a] (or [^a]) a class; a ']' right after '[' (or '[!') is a member, a lone '['
// matches itself.
#pragma once

#include <string_view>

#include "common/expected.hpp"

namespace common {

bool glob_match(std::string_view pattern, std::string_view name);
// Success when the pattern is well formed, else kInvalidArgument saying what is wrong with it
// ("empty pattern", "unterminated '[' at position 3").
Expected<void> check_glob(std::string_view pattern);

}  // namespace common
