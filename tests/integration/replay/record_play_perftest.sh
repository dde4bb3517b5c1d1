#!/usr/bin/env bash
# Records pubsub-perftest traffic with pubsub-recorder, then replays the recording with
# pubsub-replay into a fresh pubsub-perftest -sub (three namespaces: publisher, subscriber,
# recorder/replay). The subscriber must get exactly what the publisher wrote: the same count, every
# writer's sequence complete and in order, no duplicates, the same payload checksum, and the end
# of the run (check_json.py --reliable).
# Usage: record_play_perftest.sh [--exec S] [--replay "ARGS"] -- PERFTEST ARGS
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib/netns.sh"
BIN=${BIN:?set BIN to the bin directory of the build}
exec_s=2 replay_args=""
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  case $1 in
    --exec) exec_s=$2; shift 2 ;;
    --replay) replay_args=$2; shift 2 ;;
    *) echo "unknown option $1"; exit 2 ;;
  esac
done
shift
args=("$@")
for b in pubsub-recorder pubsub-replay pubsub-perftest; do
  [ -x "$BIN/$b" ] || { echo "FAIL: $b not built ($BIN/$b); build it first"; exit 1; }
done
netns_setup 3
out=$(mktemp -d)
trap 'netns_cleanup; rm -rf "$out"' EXIT

# 1. Record: perftest -pub (namespace 0) waits for its one reader, the recorder (namespace 2).
cat >"$out/recorder.json" <<JSON
{"domain": 1, "interface": "veth2", "storage": {"path": "$out/rec"}, "stats_interval_s": 1}
JSON
netns_spawn 2 $((exec_s + 60)) "$BIN/pubsub-recorder" --config "$out/recorder.json" \
  >"$out/recorder.log" 2>&1
rec=$SPAWNED
netns_run 0 $((exec_s + 60)) "$BIN/pubsub-perftest" -pub -nic veth0 -noPrint -exec "$exec_s" \
  -summaryJson "$out/pub.json" "${args[@]}" 2>"$out/pub.err"
pub_rc=$?
kill -TERM $rec
wait $rec
rec_rc=$?
tail -n 1 "$out/pub.err"
[ $pub_rc -eq 0 ] || { echo "FAIL: publisher exit $pub_rc"; tail "$out/pub.err"; exit 1; }
[ $rec_rc -eq 0 ] || { echo "FAIL: recorder exit $rec_rc"; tail "$out/recorder.log"; exit 1; }
"$BIN/pubsub-replay" info "$out/rec" || { echo "FAIL: pubsub-replay info"; exit 1; }

# 2. Replay into a new subscriber (namespace 1); the replay waits for it.
netns_run 1 150 "$BIN/pubsub-perftest" -sub -nic veth1 -noPrint -exec 120 \
  -summaryJson "$out/sub.json" "${args[@]}" >"$out/sub.out" 2>"$out/sub.err" &
sub=$!
# shellcheck disable=SC2086
netns_run 2 150 "$BIN/pubsub-replay" play "$out/rec" --domain 1 --nic veth2 --wait-readers 1 \
  $replay_args 2>"$out/replay.err"
replay_rc=$?
wait $sub
sub_rc=$?
tail -n 3 "$out/replay.err"
cat "$out/sub.out"
[ $replay_rc -eq 0 ] || { echo "FAIL: pubsub-replay play exit $replay_rc"; cat "$out/replay.err"; exit 1; }
[ $sub_rc -eq 0 ] || { echo "FAIL: subscriber exit $sub_rc"; tail "$out/sub.err"; exit 1; }
python3 "$HERE/../lib/check_json.py" "$out/pub.json" "$out/sub.json" --reliable
