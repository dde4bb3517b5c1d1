#!/usr/bin/env bash
# Records pubsub-perftest traffic with pubsub-recorder, then replays the recording with
# pubsub-replay into a fresh pubsub-perftest -sub (three namespaces: publisher, subscriber,
# recorder/replay). The subscriber must get exactly what the publisher wrote: the same count, every
# writer's sequence complete and in order, no duplicates, the same payload checksum, and the end
# of the run (check_json.py --reliable). With --fastdds-sub, the replay's subscriber is
# fastdds_perftest (Fast DDS 2.9, the same topic, type and summary) given only -datalen. With
# --max-ratio R the subscriber must receive the replay, first sample to last, within R times the
# recording's span + 0.1 s (its -summaryJson "seconds", check_subscriber_duration). With
# --impair, the replay (not the recording) goes through impair.sh loss and reordering, both ways.
# With --fastdds-pub the recorded writer is fastdds_perftest's (given only -datalen and -payload,
# for --exec whole seconds, as fast as Fast DDS writes): a fastdds_perftest -sub beside the
# recorder gives the count and checksum the replay's subscriber must match. With --snapshot the
# recorder runs in snapshot mode (a 1-GiB ring, before_s 600) and what is replayed is the
# snapshot `ctl snapshot` writes after the publisher's end: the whole run, nothing dropped.
# Usage: record_play_perftest.sh [--exec S] [--replay "ARGS"] [--fastdds-pub] [--fastdds-sub]
#                                [--snapshot] [--max-ratio R] [--impair LOSS_PCT REORDER_PCT]
#                                -- PERFTEST ARGS
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib/netns.sh"
. "$HERE/../lib/replay_timing.sh"
. "$HERE/../lib/impair.sh"
. "$HERE/../lib/perftest_sub.sh"
BIN=${BIN:?set BIN to the bin directory of the build}
exec_s=2 replay_args="" fastdds_pub=0 fastdds_sub=0 snapshot=0 max_ratio="" impair=""
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  case $1 in
    --exec) exec_s=$2; shift 2 ;;
    --replay) replay_args=$2; shift 2 ;;
    --fastdds-pub) fastdds_pub=1; shift ;;
    --fastdds-sub) fastdds_sub=1; shift ;;
    --snapshot) snapshot=1; shift ;;
    --max-ratio) max_ratio=$2; shift 2 ;;
    --impair) impair="$2 $3"; shift 3 ;;
    *) echo "unknown option $1"; exit 2 ;;
  esac
done
shift
args=("$@")
if [ $fastdds_pub = 1 ]; then
  perftest_sub_for 1 "${args[@]}"
  pub_exe=fastdds_perftest pub_args=("${sub_args[@]}" -numSubscribers 2)
fi
perftest_sub_for "$fastdds_sub" "${args[@]}"
for b in pubsub-recorder pubsub-replay pubsub-perftest $sub_exe; do
  [ -x "$BIN/$b" ] || { echo "FAIL: $b not built ($BIN/$b); build it first"; exit 1; }
done
netns_setup 3

# --snapshot: the snapshot of everything the ring holds, once the publisher has ended; sets
# `recording` to its directory. The ring must have dropped nothing.
take_snapshot() {
  local ctl=("$BIN/pubsub-recorder" ctl --socket "$sock") said dropped
  said=$("${ctl[@]}" snapshot) || { echo "FAIL: ctl snapshot exit $?"; return 1; }
  recording=$(echo "$said" | sed -n 's/^snapshot: \(.*\) from 20.*Z until 20.*Z$/\1/p')
  [ -n "$recording" ] && [ -d "$recording" ] || { echo "FAIL: ctl snapshot said '$said'"; return 1; }
  wait_for 60 "the snapshot written" sh -c "'${ctl[0]}' ctl --socket '$sock' status --json | grep -q '\"snapshots\":1'" ||
    { echo "FAIL: snapshot not written: $("${ctl[@]}" status --json)"; return 1; }
  dropped=$("${ctl[@]}" status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["snapshot"]["dropped_samples"])')
  [ "$dropped" = 0 ] || { echo "FAIL: the ring dropped $dropped samples"; return 1; }
  echo "$said"
}
out=$(mktemp -d) || exit 1  # removed on exit: only what this script made
trap 'netns_cleanup; rm -rf "$out"' EXIT

# 1. Record: perftest -pub (namespace 0) waits for its one reader, the recorder (namespace 2).
sock="$out/ctl.sock"
mode=""
[ $snapshot = 1 ] && mode=', "mode": "snapshot", "control": {"socket": "'$sock'"},
 "snapshot": {"before_s": 600, "after_s": 0, "max_bytes": 1073741824}'
cat >"$out/recorder.json" <<JSON
{"domain": 1, "interface": "veth2", "storage": {"path": "$out/rec"}, "stats_interval_s": 1$mode}
JSON
netns_spawn 2 $((exec_s + 60)) "$BIN/pubsub-recorder" --config "$out/recorder.json" \
  >"$out/recorder.log" 2>&1
rec=$SPAWNED
if [ $fastdds_pub = 1 ]; then
  # The reference reader beside the recorder (namespace 1): what it receives is what was written.
  netns_run 1 $((exec_s + 90)) "$BIN/fastdds_perftest" -sub -nic veth1 -noPrint -exec $((exec_s + 60)) \
    -summaryJson "$out/ref.json" "${pub_args[@]}" >"$out/ref.out" 2>"$out/ref.err" &
  ref=$!
  netns_run 0 $((exec_s + 60)) "$BIN/fastdds_perftest" -pub -nic veth0 -noPrint -exec "$exec_s" \
    "${pub_args[@]}" >"$out/pub.out" 2>"$out/pub.err"
  pub_rc=$?
  wait $ref || { echo "FAIL: reference subscriber exit $?"; tail "$out/ref.err"; exit 1; }
  python3 -c 'import json,sys; r = json.load(open(sys.argv[1]))
json.dump({"written": r["samples"], "checksum": r["checksum"]}, open(sys.argv[2], "w"))' \
    "$out/ref.json" "$out/pub.json" || { echo "FAIL: no reference summary"; exit 1; }
else
  netns_run 0 $((exec_s + 60)) "$BIN/pubsub-perftest" -pub -nic veth0 -noPrint -exec "$exec_s" \
    -summaryJson "$out/pub.json" "${args[@]}" 2>"$out/pub.err"
  pub_rc=$?
fi
recording="$out/rec"
[ $snapshot = 1 ] && { take_snapshot || exit 1; }
kill -TERM $rec
wait $rec
rec_rc=$?
tail -n 1 "$out/pub.err"
[ $pub_rc -eq 0 ] || { echo "FAIL: publisher exit $pub_rc"; tail "$out/pub.err"; exit 1; }
[ $rec_rc -eq 0 ] || { echo "FAIL: recorder exit $rec_rc"; tail "$out/recorder.log"; exit 1; }
"$BIN/pubsub-replay" info "$recording" || { echo "FAIL: pubsub-replay info"; exit 1; }

# 2. Replay into a new subscriber (namespace 1); the replay waits for it.
if [ -n "$impair" ]; then
  # shellcheck disable=SC2086
  { impair_link 1 $impair && impair_link 2 $impair; } || { echo "FAIL: impairment setup"; exit 1; }
fi
netns_run 1 150 "$BIN/$sub_exe" -sub -nic veth1 -noPrint -exec 120 \
  -summaryJson "$out/sub.json" "${sub_args[@]}" >"$out/sub.out" 2>"$out/sub.err" &
sub=$!
# shellcheck disable=SC2086
netns_run 2 150 "$BIN/pubsub-replay" play "$recording" --domain 1 --nic veth2 --wait-readers 1 \
  $replay_args 2>"$out/replay.err"
replay_rc=$?
wait $sub
sub_rc=$?
tail -n 3 "$out/replay.err"
cat "$out/sub.out"
# shellcheck disable=SC2086
if [ -n "$impair" ]; then impair_check $impair 1 2 || exit 1; fi
[ $replay_rc -eq 0 ] || { echo "FAIL: pubsub-replay play exit $replay_rc"; cat "$out/replay.err"; exit 1; }
[ $sub_rc -eq 0 ] || { echo "FAIL: subscriber exit $sub_rc"; tail "$out/sub.err"; exit 1; }
python3 "$HERE/../lib/check_json.py" "$out/pub.json" "$out/sub.json" --reliable || exit 1
if [ -n "$max_ratio" ]; then
  check_subscriber_duration "$out/sub.json" "$out/replay.err" "$max_ratio" || exit 1
fi
