#!/usr/bin/env bash
# Reliable throughput of the four publisher/subscriber pairs of pubsub-perftest
# (-ddsperfCompat) and Cyclone DDS ddsperf, in the same run, on a veth pair (MTU 9000):
# ddsperf->ddsperf, ddsperf->pubsub, pubsub->ddsperf, pubsub->pubsub. The subscriber's rate is
# the figure. With --fastdds, a second table pairs pubsub-perftest with the Fast DDS 2.9 peer
# (perf/peers/fastdds_perftest: the same topic, type and CSV): fastdds->fastdds, fastdds->pubsub,
# pubsub->fastdds, pubsub->pubsub.
# Usage (root): perf/bench/mixed_pairs.sh [--exec S] [--sizes "32 1024 63000"] [--reps N]
#               [--fastdds] [--no-cyclone]
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/integration/lib/netns.sh"
. "$ROOT/tests/integration/lib/ddsperf.sh"
BIN=${BIN:-$ROOT/build-release/bin}
exec_s=5 reps=3 sizes="32 1024 63000" fastdds=0 cyclone=1
while [ $# -gt 0 ]; do
  case $1 in
    --exec) exec_s=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --fastdds) fastdds=1; shift ;;
    --no-cyclone) cyclone=0; shift ;;
    *) echo "unknown option $1"; exit 2 ;;
  esac
done
[ $cyclone = 0 ] || ddsperf_require
if [ $fastdds = 1 ] && [ ! -x "$BIN/fastdds_perftest" ]; then
  echo "no $BIN/fastdds_perftest (needs libfastrtps-dev: scripts/setup.sh)"
  exit 2
fi
netns_setup_pair  # installs its own EXIT trap: ours, set after it, replaces it
tmp=$(mktemp -d) || exit 1  # removed on exit: only what this script made
trap 'netns_cleanup; rm -rf "$tmp"' EXIT
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

# start_sub KIND SIZE: subscriber in namespace 1; run_pub KIND SIZE: publisher in namespace 0.
start_sub() {
  if [ "$1" = ddsperf ]; then
    netns_run 1 $((exec_s + 20)) env "$(ddsperf_env 1)" ddsperf -D $((exec_s + 3)) sub >"$tmp/sub.out" 2>&1 &
  elif [ "$1" = fastdds ] || [ "$1" = pubsub-rtps ]; then  # pubsub-perftest's own protocol
    local exe=$BIN/pubsub-perftest
    [ "$1" = fastdds ] && exe=$BIN/fastdds_perftest
    netns_run 1 $((exec_s + 30)) "$exe" -sub -domain 0 -nic veth1 -noPrint -noOutputHeaders \
      -datalen "$2" -exec $((exec_s + 10)) >"$tmp/sub.out" 2>/dev/null &
  else
    netns_run 1 $((exec_s + 30)) "$BIN/pubsub-perftest" -sub -ddsperfCompat -domain 0 -nic veth1 \
      -noPrint -noOutputHeaders -datalen "$2" -exec $((exec_s + 3)) >"$tmp/sub.out" 2>/dev/null &
  fi
  SUB=$!
}
run_pub() {
  if [ "$1" = ddsperf ]; then
    netns_run 0 $((exec_s + 20)) env "$(ddsperf_env 0)" ddsperf -D "$exec_s" -Qminmatch:1 -Qinitwait:10 \
      pub size "$2" >/dev/null 2>&1
  elif [ "$1" = fastdds ] || [ "$1" = pubsub-rtps ]; then
    local exe=$BIN/pubsub-perftest
    [ "$1" = fastdds ] && exe=$BIN/fastdds_perftest
    netns_run 0 $((exec_s + 30)) "$exe" -pub -domain 0 -nic veth0 -noPrint -datalen "$2" \
      -exec "$exec_s" >/dev/null 2>&1
  else
    netns_run 0 $((exec_s + 30)) "$BIN/pubsub-perftest" -pub -ddsperfCompat -domain 0 -nic veth0 \
      -noPrint -datalen "$2" -exec "$exec_s" 2>/dev/null
  fi
}
sub_rate() {  # samples/s seen by the subscriber
  if [ "$1" = ddsperf ]; then
    grep -o 'rate [0-9.]* kS/s' "$tmp/sub.out" | awk '{print $2 * 1000}' | awk 'NR > 1 && $1 > 0' | median
  else
    cut -d, -f3 "$tmp/sub.out"
  fi
}
# table TITLE PAIR...: one row per size, one column per publisher:subscriber pair.
table() {
  local title=$1 size row pair p s v
  shift
  echo "$title"
  echo
  echo "| Sample (B) |$(for pair in "$@"; do printf ' %s |' "${pair/:/->}"; done)"
  echo "|---:|$(for pair in "$@"; do printf -- '---:|'; done)"
  for size in $sizes; do
    row="| $size |"
    for pair in "$@"; do
      p=${pair%%:*} s=${pair##*:}
      v=$(for r in $(seq "$reps"); do start_sub "$s" "$size"; sleep 0.5; run_pub "$p" "$size"; wait $SUB; sub_rate "$s"; done | median)
      row="$row $(printf '%.0f' "${v:-0}") |"
    done
    echo "$row"
  done
  echo
}
echo "# Mixed pairs, reliable, veth pair MTU $NS_MTU, $(nproc) cores, $(uname -r), exec ${exec_s}s, median of $reps"
echo
[ $cyclone = 0 ] || table "Cyclone DDS (ddsperf; pubsub-perftest -ddsperfCompat):" \
  ddsperf:ddsperf ddsperf:pubsub pubsub:ddsperf pubsub:pubsub
# pubsub-rtps: pubsub-perftest in its own protocol, which fastdds_perftest speaks too.
[ $fastdds = 0 ] || table "Fast DDS 2.9 (perf/peers/fastdds_perftest; pubsub-perftest):" \
  fastdds:fastdds fastdds:pubsub-rtps pubsub-rtps:fastdds pubsub-rtps:pubsub-rtps
