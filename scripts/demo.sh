#!/usr/bin/env bash
# The main job, end to end on one machine: three hosts (network namespaces on a bridge), three
# publishers on three topics, pubsub-recorder recording them for a few seconds, then
# `pubsub-recorder ctl` status and a tag while recording, `pubsub-replay info` and a replay of the
# recording into subscribers that count what they get.
# Needs root (namespaces). Output: demo-out/ (the recording and logs), kept after the run.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
if [ "$(id -u)" -ne 0 ]; then
  echo "demo.sh: needs root (network namespaces, package installation): sudo scripts/demo.sh" >&2
  exit 1
fi
scripts/setup.sh
cmake --preset dev >/dev/null
cmake --build --preset dev --target pubsub-recorder pubsub-replay pubsub-perftest
BIN=$ROOT/build/bin
OUT=$ROOT/demo-out
# The previous run's output is replaced; anything else by that name is left alone.
if [ -e "$OUT" ]; then
  if [ ! -f "$OUT/.pubsub-demo" ]; then
    echo "demo.sh: $OUT exists and was not made by demo.sh; move it away first" >&2
    exit 1
  fi
  rm -rf "$OUT"
fi
mkdir -p "$OUT"
: >"$OUT/.pubsub-demo"

. tests/integration/lib/netns.sh
# Host 0: publishers and, later, the replay. Host 1: the recorder. Host 2: replay subscribers.
netns_setup 3
echo "== three hosts: $(netns_addr 0) (publishers), $(netns_addr 1) (recorder), $(netns_addr 2) (subscribers)"

echo "== recording with config/examples/recorder.json into $OUT/recording"
netns_spawn 1 120 "$BIN/pubsub-recorder" --config config/examples/recorder.json \
  --path "$OUT/recording" >"$OUT/recorder.log" 2>&1
recorder=$SPAWNED
sleep 1

# Three topics, as a robot might publish them: a lidar scan (63 kB, 20 Hz), an IMU (keyed by
# sensor, 4 sensors, 1 kHz), and a best-effort status topic (10 Hz). Each waits for its reader
# (the recorder) before it starts, so the recording holds every sample.
pub() {
  netns_run 0 60 "$BIN/pubsub-perftest" -pub -domain 0 -noPrint -exec 4 -numSubscribers 1 "$@"
}
pids=()
pub -topic Lidar -datalen 63000 -pubRate 20 -payload random 2>"$OUT/pub-lidar.log" & pids+=($!)
pub -topic Imu -datalen 64 -keyed -instances 4 -pubRate 1000 2>"$OUT/pub-imu.log" & pids+=($!)
pub -topic Status -datalen 32 -best -pubRate 10 2>"$OUT/pub-status.log" & pids+=($!)
# Remote control while recording: the running recorder's status, and a tag marking this moment
# (pubsub-recorder ctl talks to control.sock in the recording directory).
sleep 2
echo "== pubsub-recorder ctl --path $OUT/recording status | tag demo-midpoint"
"$BIN/pubsub-recorder" ctl --path "$OUT/recording" status | sed 's/^/   /'
echo "   $("$BIN/pubsub-recorder" ctl --path "$OUT/recording" tag demo-midpoint --note "2 s in")"
wait "${pids[@]}" || true
for t in lidar imu status; do
  echo "   publisher $t: $(grep -o 'wrote [0-9]* samples' "$OUT/pub-$t.log")"
done
sleep 0.5
kill -INT "$recorder"
wait "$recorder"
echo "== recorder:"
grep -E "topic |recorded" "$OUT/recorder.log" | sed 's/^/   /'

echo "== pubsub-replay info $OUT/recording"
"$BIN/pubsub-replay" info "$OUT/recording"

echo "== replaying into three subscribers on host 2 (original timing)"
sub() {
  netns_run 2 60 "$BIN/pubsub-perftest" -sub -domain 0 -noPrint -noOutputHeaders -exec 30 "$@"
}
pids=()
sub -topic Lidar -datalen 63000 -summaryJson "$OUT/sub-lidar.json" >/dev/null 2>&1 & pids+=($!)
sub -topic Imu -datalen 64 -keyed -instances 4 -summaryJson "$OUT/sub-imu.json" >/dev/null 2>&1 & pids+=($!)
sub -topic Status -datalen 32 -best -summaryJson "$OUT/sub-status.json" >/dev/null 2>&1 & pids+=($!)
netns_run 0 60 "$BIN/pubsub-replay" play "$OUT/recording" --domain 0 --wait-readers 1
wait "${pids[@]}" || true
for t in lidar imu status; do
  python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print("   subscriber %-6s received %6d samples, lost %d" % (sys.argv[2], s["samples"], s["lost"]))' \
    "$OUT/sub-$t.json" "$t" 2>/dev/null || echo "   subscriber $t: no summary"
done
echo "== done: recording and logs in $OUT"
