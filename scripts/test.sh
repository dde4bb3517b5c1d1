#!/usr/bin/env bash
# Build everything and run every test: unit, integration (network namespaces, as root) and the
# libFuzzer targets for a bounded number of runs. Usage: scripts/test.sh [ctest args...]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh

cmake --preset dev >/dev/null
cmake --build --preset dev
ctest --preset dev -j2 "$@"

# The fuzzers need clang's libFuzzer; they run from their seed corpus for a bounded count.
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz
ctest --preset fuzz "$@"
