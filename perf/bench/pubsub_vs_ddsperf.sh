#!/usr/bin/env bash
# Throughput and latency of pubsub-perftest next to Cyclone DDS ddsperf, in the same run, on two
# network namespaces joined by a veth pair (MTU 9000). Reliable. Prints a markdown table.
# Usage (root): perf/bench/pubsub_vs_ddsperf.sh [--exec S] [--sizes "32 1024 8192 63000"]
#               [--latency-sizes "32 63000"] [--reps N]
# Each figure is the median of --reps runs (default 3) of --exec seconds (default 5).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/integration/lib/netns.sh"
. "$ROOT/tests/integration/lib/ddsperf.sh"
BIN=${BIN:-$ROOT/build-release/bin}
exec_s=5 reps=3 sizes="32 1024 8192 63000" lat_sizes="32 63000"
while [ $# -gt 0 ]; do
  case $1 in
    --exec) exec_s=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --latency-sizes) lat_sizes=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    *) echo "unknown option $1"; exit 2 ;;
  esac
done
[ -x "$BIN/pubsub-perftest" ] || { echo "build first: cmake --preset release && cmake --build --preset release"; exit 2; }
ddsperf_require
netns_setup_pair
tmp=$(mktemp -d) || exit 1  # removed on exit: only what this script made
trap 'netns_cleanup; rm -rf "$tmp"' EXIT
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

ours_tput() {  # size -> samples/s
  netns_run 1 $((exec_s + 40)) "$BIN/pubsub-perftest" -sub -nic veth1 -noPrint -noOutputHeaders \
    -datalen "$1" -exec $((exec_s + 30)) >"$tmp/sub.csv" 2>/dev/null &
  local s=$!
  netns_run 0 $((exec_s + 40)) "$BIN/pubsub-perftest" -pub -nic veth0 -noPrint -datalen "$1" \
    -exec "$exec_s" 2>/dev/null
  wait $s
  cut -d, -f3 "$tmp/sub.csv"
}
ddsperf_tput() {  # size -> samples/s (the subscriber's average over the publishing seconds)
  netns_run 1 $((exec_s + 20)) env "$(ddsperf_env 1)" ddsperf -D $((exec_s + 3)) sub >"$tmp/dsub.out" 2>&1 &
  local s=$!
  sleep 0.5
  netns_run 0 $((exec_s + 20)) env "$(ddsperf_env 0)" ddsperf -D "$exec_s" -Qminmatch:1 -Qinitwait:10 \
    pub size "$1" >/dev/null 2>&1
  wait $s
  # Per-second "rate X kS/s" lines; drop the first (ramp-up) and those after the end.
  grep -o 'rate [0-9.]* kS/s' "$tmp/dsub.out" | awk '{print $2 * 1000}' | awk 'NR > 1 && $1 > 0' | median
}
ours_lat() {  # size -> median one-way latency in us
  netns_run 1 $((exec_s + 40)) "$BIN/pubsub-perftest" -sub -latencyTest -nic veth1 -noPrint \
    -datalen "$1" -exec $((exec_s + 30)) >/dev/null 2>&1 &
  local s=$!
  netns_run 0 $((exec_s + 40)) "$BIN/pubsub-perftest" -pub -latencyTest -nic veth0 -noPrint \
    -noOutputHeaders -datalen "$1" -exec "$exec_s" 2>/dev/null | cut -d, -f6
  wait $s
}
ddsperf_lat() {  # size -> median one-way latency in us (ddsperf prints round trip / 2 already)
  netns_run 1 $((exec_s + 20)) env "$(ddsperf_env 1)" ddsperf -D $((exec_s + 3)) pong >/dev/null 2>&1 &
  local s=$!
  netns_run 0 $((exec_s + 20)) env "$(ddsperf_env 0)" ddsperf -D "$exec_s" -Qminmatch:1 -Qinitwait:10 \
    ping size "$1" >"$tmp/ping.out" 2>&1
  wait $s
  grep -o ' 50% [0-9.]*us' "$tmp/ping.out" | awk '{gsub("us","",$2); print $2}' | awk 'NR > 1' | median
}

echo "# pubsub-perftest vs ddsperf: veth pair MTU $NS_MTU, $(nproc) cores, $(uname -r), exec ${exec_s}s, median of $reps"
echo
echo "| Sample (B) | ddsperf samples/s | pubsub samples/s | ratio |"
echo "|---:|---:|---:|---:|"
for size in $sizes; do
  d=$(for r in $(seq "$reps"); do ddsperf_tput "$size"; done | median)
  o=$(for r in $(seq "$reps"); do ours_tput "$size"; done | median)
  printf '| %s | %.0f | %.0f | %.2f |\n' "$size" "$d" "$o" "$(awk -v o="$o" -v d="$d" 'BEGIN {print (d > 0) ? o / d : 0}')"
done
echo
echo "| Sample (B) | ddsperf median latency (us) | pubsub median latency (us) | ratio |"
echo "|---:|---:|---:|---:|"
for size in $lat_sizes; do
  d=$(for r in $(seq "$reps"); do ddsperf_lat "$size"; done | median)
  o=$(for r in $(seq "$reps"); do ours_lat "$size"; done | median)
  printf '| %s | %.1f | %.1f | %.2f |\n' "$size" "$d" "$o" "$(awk -v o="$o" -v d="$d" 'BEGIN {print (d > 0) ? o / d : 0}')"
done
