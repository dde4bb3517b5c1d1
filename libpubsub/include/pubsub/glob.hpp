// Topic-name patterns as RawReaderOptions uses them (common/glob.hpp): shell-style globs matched
// against the whole name. * any run of characters, ? one character, [abc] / [a-z] / [!a] a class.
#pragma once

#include "common/glob.hpp"

namespace pubsub {

using common::check_glob;
using common::glob_match;

}  // namespace pubsub
