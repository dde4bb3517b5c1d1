#!/usr/bin/env bash
# Check formatting, build everything and run every test: unit, integration (network namespaces,
# as root), the same-host tests under ThreadSanitizer, and the libFuzzer targets for a bounded
# number of runs.
# Usage: scripts/test.sh [ctest args...]
# With CI=true (.ci/run sets it) a skipped test fails the run: CI runs as root with everything
# installed, so a skip there means a test did not test.
set -euo pipefail
cd "$(dirname "$0")/.."
# How many tests the tsan and fuzz presets select (check_selection below): 12 libpubsub unit
# tests (shm, same host, loans), 18 same-host integration tests, 2 recording runs (one with
# its first samples before the registrar), 40 recorder unit tests
# (the segment-hook runner's, ctl --set's and SetClock's among them), 17 storage writer tests;
# one per fuzzer.
TSAN_TESTS=89
FUZZ_TESTS=9
# ctest's slots: four on this 2-core machine, a slot half a core (cmake/test_slots.cmake: a
# namespace test takes all four, a unit test two, a light namespace test one).
SLOTS=4
scripts/setup.sh

# run_ctest ARGS...: ctest, its skipped tests listed at the end; under CI=true they fail the run.
run_ctest() {
  local log rc=0 skipped
  log=$(mktemp) || return 1
  ctest "$@" | tee "$log" || rc=1
  skipped=$(grep -E '^[[:space:]]*[0-9]+ - .*\((Skipped|Not Run)\)$' "$log" || true)
  rm -f "$log"
  if [ -n "$skipped" ]; then
    echo "test.sh: skipped tests:"
    echo "$skipped"
    if [ "${CI:-}" = true ]; then
      echo "test.sh: CI=true and tests were skipped: every precondition holds in CI" >&2
      rc=1
    fi
  fi
  return $rc
}

# check_selection PRESET [EXPECTED]: the tests PRESET's filter selects are all built (no
# *_NOT_BUILT placeholder of a target the preset's build leaves out) and, with EXPECTED, there are
# exactly that many - so a filter that silently matches nothing cannot go unseen - and each names
# its share of the machine. Skipped when the caller narrows the run with ctest arguments.
check_selection() {
  local preset=$1 expected=${2:-} listed count
  [ "$narrowed" = false ] || return 0
  listed=$(ctest --preset "$preset" -N) || return 1
  if grep -q '_NOT_BUILT' <<<"$listed"; then
    echo "test.sh: preset $preset selects tests of a target it does not build:" >&2
    grep '_NOT_BUILT' <<<"$listed" >&2
    return 1
  fi
  # Every test names its share of the machine (PROCESSORS, cmake/test_slots.cmake): one left at
  # ctest's default of one slot (which ctest does not list) would run beside three others unless it
  # is a light namespace test (label "light", scheduling.cmake).
  if ! ctest --preset "$preset" --show-only=json-v1 | python3 -c '
import json, sys
def props(t): return {p["name"]: p["value"] for p in t.get("properties", [])}
unset = [t["name"] for t in json.load(sys.stdin)["tests"]
         if "PROCESSORS" not in props(t) and "light" not in props(t).get("LABELS", [])]
for name in unset: print(name)
sys.exit(1 if unset else 0)' >&2; then
    echo "test.sh: the tests above set no PROCESSORS (PUBSUB_SLOTS_*, cmake/test_slots.cmake)" >&2
    return 1
  fi
  count=$(sed -nE 's/^Total Tests: ([0-9]+)$/\1/p' <<<"$listed")
  if [ -n "$expected" ] && [ "$count" != "$expected" ]; then
    echo "test.sh: preset $preset selects $count tests, expected $expected (a changed filter in" \
      "CMakePresets.json or a test added or renamed: check the list, then the count here)" >&2
    return 1
  fi
  echo "test.sh: preset $preset runs $count tests"
}
narrowed=false
[ $# -eq 0 ] || narrowed=true

# Formatting first: every C/C++ file as clang-format (.clang-format) writes it.
if ! git ls-files -z '*.cpp' '*.hpp' '*.h' '*.c' | xargs -0 clang-format --dry-run -Werror; then
  echo "test.sh: files above are not clang-formatted (run: clang-format -i FILE)" >&2
  exit 1
fi

# The fuzz targets' corpus replays (gcc) are left out here: the fuzz stage below runs them all.
cmake --preset dev -DPUBSUB_FUZZ_STANDALONE=OFF >/dev/null
cmake --build --preset dev
check_selection dev
run_ctest --preset dev -j"$SLOTS" "$@"

# ThreadSanitizer over the same-host paths (shared memory and intra-process): the libpubsub unit
# tests and pubsub-perftest only, and the tests that exercise them.
cmake --preset tsan >/dev/null
cmake --build --preset tsan
check_selection tsan "$TSAN_TESTS"
run_ctest --preset tsan -j"$SLOTS" "$@"

# The fuzzers need clang's libFuzzer; they run from their seed corpus for a bounded count.
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz
check_selection fuzz "$FUZZ_TESTS"
run_ctest --preset fuzz -j"$SLOTS" "$@"
