#!/usr/bin/env bash
# Records `ddsperf pub` with pubsub-recorder, then replays the recording with
# `pubsub-replay play --wait-readers 1` into `ddsperf -Qsamples:N sub`, N = the recorded sample
# count. ddsperf sub exits 1 on any loss (a sequence jump per publication and key) and fails when it
# received fewer than N: it must exit 0 and count exactly N. With MAX_RATIO, the replay (rate 1)
# must also end within MAX_RATIO times the recorded duration, plus a second to start up. With
# --impair, the replay (not the recording) goes through impair.sh loss and reordering, both ways.
# --play-arg ARG (repeatable) passes ARG to pubsub-replay play. --sub-rcvbuf SIZE gives the
# replay's ddsperf sub a socket receive buffer of SIZE bytes (ddsperf_env; the kernel grants at
# most twice net.core.rmem_max, so a smaller limit is raised for the run and restored at the
# end); --max-late-ms MS also
# bounds the p99 of how late the replay sent its samples.
# Usage: ddsperf_replay.sh [--impair LOSS_PCT REORDER_PCT] [--play-arg ARG]... [--sub-rcvbuf SIZE]
#                          [--max-late-ms MS] [SIZE [RATE_HZ [KEYS [MAX_RATIO]]]]
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib/netns.sh"
. "$HERE/../lib/replay_timing.sh"
. "$HERE/../lib/ddsperf.sh"
. "$HERE/../lib/impair.sh"
BIN=${BIN:?set BIN to the bin directory of the build}
impair=""
play_args=()
sub_rcvbuf=""
max_late=""
while [ $# -gt 0 ]; do
  case $1 in
    --impair) impair="$2 $3"; shift 3 ;;
    --play-arg) play_args+=("$2"); shift 2 ;;
    --sub-rcvbuf) sub_rcvbuf=$2; shift 2 ;;
    --max-late-ms) max_late=$2; shift 2 ;;
    *) break ;;
  esac
done
size=${1:-64} rate=${2:-5000} keys=${3:-1} max_ratio=${4:-}
ddsperf_require
for b in pubsub-recorder pubsub-replay recording_summary; do
  [ -x "$BIN/$b" ] || { echo "FAIL: $b not built ($BIN/$b); build it first"; exit 1; }
done
rmem_restore=""
if [ -n "$sub_rcvbuf" ] && [ $(($(cat /proc/sys/net/core/rmem_max) * 2)) -lt "$sub_rcvbuf" ]; then
  rmem_restore=$(cat /proc/sys/net/core/rmem_max)
  echo "raising net.core.rmem_max from $rmem_restore to $((sub_rcvbuf / 2)) for this run"
  sysctl -qw net.core.rmem_max=$((sub_rcvbuf / 2)) || { echo "FAIL: cannot raise net.core.rmem_max"; exit 1; }
fi
netns_setup 3
out=$(mktemp -d) || exit 1  # removed on exit: only what this script made
trap 'netns_cleanup; rm -rf "$out"; [ -z "$rmem_restore" ] || sysctl -qw net.core.rmem_max="$rmem_restore"' EXIT

# 1. Record: ddsperf pub (namespace 0) to ddsperf sub (namespace 2) and the recorder (namespace 1).
#    The publisher waits for ddsperf sub (-Qminmatch), started once the recorder has matched the
#    publisher's data writer; the recorder stops once that writer is gone (all acknowledged).
echo '{"domain": 0, "interface": "veth1", "topics": {"include": ["DDSPerfRDataKS"]},
       "storage": {"path": "'"$out/rec"'"}}' >"$out/r.json"
netns_spawn 1 60 "$BIN/pubsub-recorder" --config "$out/r.json" >"$out/rec.log" 2>&1
rec=$SPAWNED
netns_run 0 60 env "$(ddsperf_env 0)" ddsperf -D 3 -n "$keys" -Qminmatch:1 -Qinitwait:15 \
  pub "${rate}Hz" size "$size" >"$out/pub.out" 2>&1 &
pub=$!
wait_for 10 "'writer ... on DDSPerfRDataKS matched' in the recorder's log" \
  grep -q "on DDSPerfRDataKS matched" "$out/rec.log" || { tail "$out/rec.log"; exit 1; }
w=$(grep -m 1 -o "writer [^ ]* on DDSPerfRDataKS matched" "$out/rec.log" | cut -d " " -f 2)
netns_run 2 60 env "$(ddsperf_env 2)" ddsperf -D 8 -n "$keys" sub >"$out/sub0.out" 2>&1 &
sub0=$!
wait $pub
pub_rc=$?
wait $sub0
sub0_rc=$?
# ddsperf sub has a DDSPerfRDataKS writer as well: the publisher's is the one matched first.
wait_for 15 "'writer $w on DDSPerfRDataKS gone' in the recorder's log" \
  grep -q "writer $w on DDSPerfRDataKS gone" "$out/rec.log" || { tail "$out/rec.log"; exit 1; }
kill -TERM $rec
wait $rec
rec_rc=$?
[ $pub_rc -eq 0 ] || { echo "FAIL: ddsperf pub exit $pub_rc"; tail "$out/pub.out"; exit 1; }
[ $sub0_rc -eq 0 ] || { echo "FAIL: ddsperf sub (recording) exit $sub0_rc"; tail "$out/sub0.out"; exit 1; }
[ $rec_rc -eq 0 ] || { echo "FAIL: recorder exit $rec_rc"; tail "$out/rec.log"; exit 1; }
"$BIN/pubsub-replay" info "$out/rec"
ddsperf_check_recording "$BIN" "$out/rec" "$out/sub0.out" || exit 1
n=$DDSPERF_N

# 2. Replay (namespace 1) into ddsperf sub (namespace 2), started first; replay waits for it.
if [ -n "$impair" ]; then
  # shellcheck disable=SC2086
  { impair_link 1 $impair && impair_link 2 $impair; } || { echo "FAIL: impairment setup"; exit 1; }
fi
netns_spawn 2 90 env "$(ddsperf_env 2 "$sub_rcvbuf")" ddsperf -D 20 -n "$keys" -Qsamples:"$n" sub \
  >"$out/sub.out" 2>&1
sub=$SPAWNED
netns_run 1 60 "$BIN/pubsub-replay" play "$out/rec" --nic veth1 --topics DDSPerfRDataKS \
  --wait-readers 1 "${play_args[@]}" 2>"$out/replay.err"
replay_rc=$?
# ddsperf sub would run its whole -D 20: stopped once it shows every sample (else it runs out
# on its own, and exits 1 if -Qsamples was not met).
if [ $replay_rc -eq 0 ]; then
  ddsperf_stop_at_total "$sub" "$out/sub.out" "$n" 20
  sub_rc=$DDSPERF_RC
else
  wait "$sub"
  sub_rc=$?
fi
tail -n 2 "$out/replay.err"
grep -E "size|lost" "$out/sub.out" | tail -n 2
total=$(ddsperf_total "$out/sub.out")
echo "recorded $n samples; ddsperf sub received ${total:-none}, exit $sub_rc"
# shellcheck disable=SC2086
if [ -n "$impair" ]; then impair_check $impair 1 2 || exit 1; fi
[ $replay_rc -eq 0 ] || { echo "FAIL: pubsub-replay play exit $replay_rc"; cat "$out/replay.err"; exit 1; }
[ $sub_rc -eq 0 ] || { echo "FAIL: ddsperf sub exit $sub_rc"; tail -n 25 "$out/sub.out"; exit 1; }
[ "${total:-0}" = "$n" ] || { echo "FAIL: ddsperf sub received ${total:-0} of $n"; exit 1; }
if [ -n "$max_ratio" ]; then
  check_replay_duration "$out/replay.err" "$max_ratio" || exit 1
fi
if [ -n "$max_late" ]; then
  check_replay_late "$out/replay.err" "$max_late" || exit 1
fi
