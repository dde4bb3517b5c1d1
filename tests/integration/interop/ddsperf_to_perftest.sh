#!/usr/bin/env bash
# ddsperf publishes to pubsub-perftest -sub -ddsperfCompat across two namespaces.
# Usage: ddsperf_to_perftest.sh SIZE [KEYS] [--impair LOSS REORDER]
# Passes when the subscriber saw the writer's run end and its whole stream: one writer, its
# samples numbered 0..N-1 (ddsperf's KeyedSeq.seq counts from 0, across keys), N received, 0 lost.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib/netns.sh"
. "$HERE/../lib/impair.sh"
. "$HERE/../lib/ddsperf.sh"
BIN=${BIN:?set BIN to the bin directory of the build}
size=$1 keys=${2:-1}
ddsperf_require
netns_setup 2
if [ "${3:-}" = "--impair" ]; then impair_link 0 "$4" "$5" && impair_link 1 "$4" "$5" || exit 1; fi
out=$(mktemp -d) || exit 1  # removed on exit: only what this script made
trap 'netns_cleanup; rm -rf "$out"' EXIT
netns_run 1 60 "$BIN/pubsub-perftest" -sub -ddsperfCompat -domain 0 -nic veth1 -instances "$keys" \
  -exec 45 -noPrint -summaryJson "$out/sub.json" >"$out/sub.out" 2>"$out/sub.err" &
sub=$!
netns_run 0 60 env "$(ddsperf_env 0)" ddsperf -D 3 -n "$keys" -Qminmatch:1 -Qinitwait:10 \
  pub size "$size" >"$out/pub.out" 2>&1
pub_rc=$?
wait $sub
sub_rc=$?
cat "$out/sub.out"
tail -n 3 "$out/pub.out" "$out/sub.err"
[ $pub_rc -eq 0 ] || { echo "FAIL: ddsperf pub exit $pub_rc"; exit 1; }
[ $sub_rc -eq 0 ] || { echo "FAIL: pubsub-perftest -sub exit $sub_rc"; exit 1; }
if [ "${3:-}" = "--impair" ]; then impair_check "$4" "$5" 0 1 || exit 1; fi
python3 - "$out/sub.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
bad = []
if not s["completed"]: bad.append("run did not complete")
if s["samples"] < 10: bad.append(f"only {s['samples']} samples")
if s["lost"]: bad.append(f"{s['lost']} lost")
if len(s["writers"]) != 1: bad.append(f"{len(s['writers'])} writers, expected ddsperf's one")
for w in s["writers"]:
    print(f"writer {w['guid']}: {w['samples']} samples, seq {w['first_seq']}..{w['last_seq']}, lost {w['lost']}")
    if w["first_seq"] != 0 or w["last_seq"] != w["samples"] - 1 or w["lost"]:
        bad.append(f"seq {w['first_seq']}..{w['last_seq']} for {w['samples']} samples, expected 0..{w['samples'] - 1}")
for b in bad: print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
