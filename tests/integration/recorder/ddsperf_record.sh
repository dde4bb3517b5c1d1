#!/usr/bin/env bash
# ddsperf pub to ddsperf sub plus pubsub-recorder: ddsperf sub reports 0 lost, and the
# recording holds every sample ddsperf published (a complete sequence, as many as ddsperf sub
# received).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib/netns.sh"
. "$HERE/../lib/ddsperf.sh"
BIN=${BIN:?set BIN to the bin directory of the build}
size=${1:-32}
ddsperf_require
netns_setup 3
out=$(mktemp -d) || exit 1  # removed on exit: only what this script made
trap 'netns_cleanup; rm -rf "$out"' EXIT
echo '{"domain": 0, "interface": "veth2", "storage": {"path": "'"$out/rec"'"}}' >"$out/r.json"
netns_spawn 2 60 "$BIN/pubsub-recorder" --config "$out/r.json" >"$out/rec.log" 2>&1
rec=$SPAWNED
sleep 1
netns_run 1 60 env "$(ddsperf_env 1)" ddsperf -D 8 sub >"$out/sub.out" 2>&1 &
sub=$!
# The recorder is matched by the time ddsperf sub is (both were up before the publisher).
netns_run 0 60 env "$(ddsperf_env 0)" ddsperf -D 3 -Qminmatch:1 -Qinitwait:10 pub size "$size" \
  >"$out/pub.out" 2>&1
pub_rc=$?
wait $sub
sub_rc=$?
kill -TERM $rec
wait $rec
rec_rc=$?
total=$(ddsperf_total "$out/sub.out")
grep -E "size" "$out/sub.out" | tail -n 2
grep -E "recorded" "$out/rec.log"
[ $pub_rc -eq 0 ] || { echo "FAIL: ddsperf pub exit $pub_rc"; tail "$out/pub.out"; exit 1; }
[ $sub_rc -eq 0 ] || { echo "FAIL: ddsperf sub exit $sub_rc (loss?)"; tail "$out/sub.out"; exit 1; }
[ $rec_rc -eq 0 ] || { echo "FAIL: recorder exit $rec_rc"; exit 1; }
summary=$("$BIN/recording_summary" "$out/rec" --topic DDSPerfRDataKS --verify)
echo "ddsperf sub received $total; recording: $summary" | cut -c1-400
python3 - "$summary" "${total:-0}" <<'PY'
import json, sys
s, total = json.loads(sys.argv[1]), int(sys.argv[2])
bad = []
if s["samples"] != total: bad.append("recorded %d, ddsperf sub received %d" % (s["samples"], total))
if len(s["writers"]) != 1: bad.append("%d data writers recorded" % len(s["writers"]))
for w in s["writers"]:
    if w["first_seq"] != 1 or w["out_of_order"] or w["last_seq"] != w["samples"]:
        bad.append("writer sequence %d..%d for %d samples" % (w["first_seq"], w["last_seq"], w["samples"]))
if s["verify_problems"] or s["gaps"]: bad.append("recording has problems or gaps")
for b in bad: print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
