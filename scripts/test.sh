#!/usr/bin/env bash
# Check formatting, build everything and run every test: unit, integration (network namespaces,
# as root), the same-host tests under ThreadSanitizer, and the libFuzzer targets for a bounded
# number of runs.
# Usage: scripts/test.sh [ctest args...]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh

# Formatting first: every C/C++ file as clang-format (.clang-format) writes it.
if ! git ls-files -z '*.cpp' '*.hpp' '*.h' '*.c' | xargs -0 clang-format --dry-run -Werror; then
  echo "test.sh: files above are not clang-formatted (run: clang-format -i FILE)" >&2
  exit 1
fi

cmake --preset dev >/dev/null
cmake --build --preset dev
ctest --preset dev -j2 "$@"

# ThreadSanitizer over the same-host paths (shared memory and intra-process): the libpubsub unit
# tests and pubsub-perftest only, and the tests that exercise them.
cmake --preset tsan >/dev/null
cmake --build --preset tsan
ctest --preset tsan "$@"

# The fuzzers need clang's libFuzzer; they run from their seed corpus for a bounded count.
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz
ctest --preset fuzz "$@"
