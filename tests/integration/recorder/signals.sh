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
  # Killed mid-run: 2 s after the recorder matched the writer, of the publisher's 6.
  if wait_for 20 "'writer ... matched' in the recorder's log" \
      grep -q "writer .* on PubsubPerftest_Data matched" "$out/rec-$sig.log"; then
    sleep 2
    pid=$(pgrep -P $rec -x pubsub-recorder)
  else
    pid=""
  fi
  kill -0 $pub 2>/dev/null || { echo "FAIL: the publisher ended before SIG$sig"; status=1; }
  if [ -z "$pid" ] || ! kill -$sig "$pid"; then
    echo "FAIL: no pubsub-recorder to send SIG$sig (pid '${pid}')"; tail "$out/rec-$sig.log"
    kill $rec $pub 2>/dev/null; wait $rec $pub 2>/dev/null; status=1; continue
  fi
  wait $rec
  rc=$?
  kill $pub 2>/dev/null
  wait $pub 2>/dev/null
  # timeout passes on how its child ended: 0 (the recorder handles TERM), 128 + 9 after KILL.
  want=0
  [ $sig = KILL ] && want=137
  [ $rc -eq $want ] || { echo "FAIL: exit $rc after SIG$sig, expected $want"; tail "$out/rec-$sig.log"; status=1; }
  if [ $sig = TERM ]; then
    summary=$("$BIN/recording_summary" "$out/rec" --verify)
  else
    # Open read-only first (must work on the unrepaired recording), then repair and verify.
    "$BIN/recording_summary" "$out/rec" >/dev/null || { echo "FAIL: unrepaired recording does not open"; status=1; }
    summary=$("$BIN/recording_summary" "$out/rec" --recover --verify)
    # What the killed recorder left besides the recording goes with pubsub-replay recover.
    "$BIN/pubsub-replay" recover "$out/rec" >"$out/recover.out" 2>&1 ||
      { echo "FAIL: recover exit $?"; cat "$out/recover.out"; status=1; }
    grep -qxF "removed $out/rec/control.sock: the control socket of a recorder that is gone" \
      "$out/recover.out" || { echo "FAIL: stale control.sock not removed"; cat "$out/recover.out"; status=1; }
    left=$(ls -A "$out/rec" | grep -E '^control.sock$|-wal$|-shm$|^writer.lock$')
    [ -z "$left" ] || { echo "FAIL: left after recover: $left"; status=1; }
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
    if w["first_seq"] != 1 or w["out_of_order"] or w["last_seq"] != w["samples"]:
        bad.append("writer %d: sequence %d..%d for %d samples, %d out of order: not a complete prefix"
                   % (w["id"], w["first_seq"], w["last_seq"], w["samples"], w["out_of_order"]))
for b in bad: print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
done
exit $status
