#!/usr/bin/env bash
# The recorder stopped mid-run: SIGTERM -> exit 0 and the recording verifies clean; SIGKILL ->
# the recording still opens (its torn tail is handled) and, once recovered, verifies clean.
# Either way the records kept form a complete prefix of the writer's sequence.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib/netns.sh"
BIN=${BIN:?set BIN to the bin directory of the build}
netns_setup 2
out=$(mktemp -d) || exit 1  # removed on exit: only what this script made
trap 'netns_cleanup; rm -rf "$out"' EXIT
status=0
for sig in TERM KILL; do
  rm -rf "$out/rec"
  echo '{"domain": 3, "interface": "veth1", "storage": {"path": "'"$out/rec"'", "chunk_max_age_ms": 20}}' >"$out/r.json"
  netns_spawn 1 60 "$BIN/pubsub-recorder" --config "$out/r.json" >"$out/rec-$sig.log" 2>&1
  rec=$SPAWNED
  netns_spawn 0 40 "$BIN/pubsub-perftest" -pub -domain 3 -nic veth0 -datalen 1024 -exec 6 -noPrint \
    -payload random 2>"$out/pub-$sig.err"
  pub=$SPAWNED
  sleep 3
  pid=$(pgrep -P $rec | head -n 1)
  kill -$sig "$pid"
  wait $rec
  rc=$?
  kill $pub 2>/dev/null
  wait $pub 2>/dev/null
  if [ $sig = TERM ]; then
    [ $rc -eq 0 ] || { echo "FAIL: exit $rc after SIGTERM"; tail "$out/rec-$sig.log"; status=1; }
    summary=$("$BIN/recording_summary" "$out/rec" --verify)
  else
    # Open read-only first (must work on the unrepaired recording), then repair and verify.
    "$BIN/recording_summary" "$out/rec" >/dev/null || { echo "FAIL: unrepaired recording does not open"; status=1; }
    summary=$("$BIN/recording_summary" "$out/rec" --recover --verify)
  fi
  echo "SIG$sig: recorder exit $rc; $summary" | cut -c1-400
  python3 - "$summary" <<'PY' || status=1
import json, sys
s = json.loads(sys.argv[1])
bad = []
if s["samples"] < 1000: bad.append("only %d samples recorded" % s["samples"])
if s["verify_problems"]: bad.append("%d verify problems" % s["verify_problems"])
if len(s["writers"]) != 1: bad.append("%d writers recorded, expected 1" % len(s["writers"]))
for w in s["writers"]:
    if w["out_of_order"] or w["last_seq"] - w["first_seq"] + 1 != w["samples"]:
        bad.append("writer %d: not a complete sequence" % w["id"])
for b in bad: print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
done
exit $status
