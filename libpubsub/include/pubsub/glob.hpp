// Topic-name patterns as RawReaderOptions uses them: shell-style globs matched against the
// whole name. * any run of characters, ? one character, [abc] / [a-z] / [!a] a class.
#pragma once

#include <string>
#include <string_view>

namespace pubsub {

bool glob_match(std::string_view pattern, std::string_view name);
// Empty when the pattern is well formed, else what is wrong with it.
std::string glob_error(std::string_view pattern);

}  // namespace pubsub
