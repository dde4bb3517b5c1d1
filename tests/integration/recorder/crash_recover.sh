#!/usr/bin/env bash
# pubsub-recorder killed with SIGKILL at random moments while it records random 4096-B samples,
# ROUNDS times (default 20). After each kill: `info --json` says "unclean"; `verify` exits 3
# (not closed cleanly, torn tail only); a restart of the recorder on the directory is refused
# with a message naming `pubsub-replay recover`; `recover` exits 0 and keeps what it cuts in
# DIR/recovered/; then `verify` exits 0, `info --json` says "recovered" with at least the samples
# it showed before, the writer's sequence is contiguous from 1 (nothing lost at the start either),
# and a second `recover` changes nothing.
# With storage.direct_io "off" (every chunk through the page cache) a kill inside a chunk's write
# leaves a torn tail: every second round kills the recorder while it is inside such a write
# (lib/kill_in_write.py watches its threads' system calls), and at least one round must have cut a
# torn tail; with "auto" (large chunks written with O_DIRECT, which a kill does not tear) torn
# tails are counted, not required.
# Usage: crash_recover.sh [ROUNDS] [auto|off]
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib/netns.sh"
BIN=${BIN:?set BIN to the bin directory of the build}
rounds=${1:-20}
direct_io=${2:-off}
[ "$direct_io" = auto ] || [ "$direct_io" = off ] || { echo "direct_io: auto or off"; exit 2; }
netns_setup 2
out=$(mktemp -d) || exit 1  # removed on exit: only what this script made
trap 'netns_cleanup; rm -rf "$out"' EXIT
status=0
fail() {
  echo "FAIL round $i: $*"
  status=1
}
json_field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$@"; }

torn_rounds=0 total_cut=0 in_write=0
for i in $(seq 1 "$rounds"); do
  dir=$out/r$i
  echo '{"domain": 5, "interface": "veth1", "storage": {"path": "'"$dir"'", "chunk_max_age_ms": 20,
    "direct_io": "'"$direct_io"'"}}' >"$out/r.json"
  netns_spawn 1 60 "$BIN/pubsub-recorder" --config "$out/r.json" >"$out/rec$i.log" 2>&1
  rec=$SPAWNED
  # The recording exists before the publisher starts.
  wait_for 10 "$dir/index.sqlite3" test -e "$dir/index.sqlite3" || fail "no recording created"
  netns_spawn 0 40 "$BIN/pubsub-perftest" -pub -domain 5 -nic veth0 -datalen 4096 -exec 30 \
    -noPrint -payload random 2>"$out/pub$i.err"
  pub=$SPAWNED
  # The recorder has the topic and is storing, then dies at a random moment 0-1.5 s later.
  wait_for 10 "'writer ... matched' in the recorder's log" grep -q " matched" "$out/rec$i.log" ||
    fail "the recorder never matched the writer"
  # ... and has written its first chunk of samples (the writer starts sending only once it has
  # matched the recorder's reader in turn: a kill right after "matched" could find nothing).
  wait_for 10 "a first chunk of samples in $dir/segments" \
    sh -c 'stat -c %s "$1"/segments/*.seg 2>/dev/null | awk "{s += \$1} END {exit !(s > 65536)}"' \
    _ "$dir" ||
    fail "nothing written 10 s after the writer matched"
  sleep "0.$((RANDOM % 10))$((RANDOM % 10))"
  sleep "$((RANDOM % 2))"
  recorder_pid=$(pgrep -P "$rec" -x pubsub-recorder)
  if [ -z "$recorder_pid" ]; then
    fail "no recorder process under timeout $rec to kill"
    kill "$pub" 2>/dev/null
    wait "$pub" "$rec" 2>/dev/null
    continue
  fi
  if [ "$direct_io" = off ] && [ $((i % 2)) -eq 0 ]; then
    kind=$(python3 "$HERE/../lib/kill_in_write.py" "$recorder_pid" "$dir" 5) ||
      fail "kill_in_write.py found no process $recorder_pid"
    [ "$kind" = in-write ] && in_write=$((in_write + 1))
  else
    kill -KILL "$recorder_pid" || fail "kill -KILL $recorder_pid failed"
  fi
  wait "$rec"
  rc=$?
  kill "$pub" 2>/dev/null
  wait "$pub" 2>/dev/null
  [ $rc -eq 137 ] || fail "recorder exit status $rc, expected 137 (SIGKILL)"

  "$BIN/pubsub-replay" info --json "$dir" >"$out/info-before.json" ||
    { fail "info on the killed recording failed"; continue; }
  before=$(json_field "$out/info-before.json" samples)
  state=$(json_field "$out/info-before.json" state)
  [ "$state" = unclean ] || fail "state '$state' after SIGKILL, expected unclean"
  "$BIN/pubsub-replay" verify "$dir" >"$out/verify-before.txt" 2>&1
  rc=$?
  [ $rc -eq 3 ] || { fail "verify exit $rc before recover, expected 3"; cat "$out/verify-before.txt"; }
  grep -q "run 'pubsub-replay recover $dir'" "$out/verify-before.txt" ||
    fail "verify does not say to run recover"
  grep -q "torn tail" "$out/verify-before.txt" && torn_rounds=$((torn_rounds + 1))

  if [ "$i" -eq 1 ]; then  # a restart on the killed recording is refused, nothing appended
    size_before=$(du -sb "$dir" | cut -f1)
    ip netns exec "${NS_PREFIX}1" "$BIN/pubsub-recorder" --config "$out/r.json" --duration 1 \
      >"$out/restart.log" 2>&1
    rc=$?
    [ $rc -eq 2 ] || fail "restart on an unclean recording: exit $rc, expected 2"
    grep -q "not closed cleanly.*pubsub-replay recover $dir" "$out/restart.log" ||
      { fail "restart message does not name recover"; cat "$out/restart.log"; }
    [ "$(du -sb "$dir" | cut -f1)" = "$size_before" ] || fail "the refused restart changed $dir"
  fi

  "$BIN/pubsub-replay" recover "$dir" >"$out/recover.txt" 2>&1
  rc=$?
  [ $rc -eq 0 ] || { fail "recover exit $rc"; cat "$out/recover.txt"; continue; }
  cut_bytes=$(sed -n 's/^recovered .*, \([0-9]*\) bytes moved to .*/\1/p' "$out/recover.txt")
  [ -n "$cut_bytes" ] || { fail "recover printed no summary"; cat "$out/recover.txt"; }
  total_cut=$((total_cut + ${cut_bytes:-0}))
  saved=$(cat "$dir"/recovered/* 2>/dev/null | wc -c)
  [ "${cut_bytes:-0}" -eq "$saved" ] ||
    fail "recover cut $cut_bytes bytes but kept $saved in $dir/recovered"
  "$BIN/pubsub-replay" verify "$dir" >"$out/verify-after.txt" 2>&1
  rc=$?
  [ $rc -eq 0 ] || { fail "verify exit $rc after recover"; cat "$out/verify-after.txt"; }
  grep -qx "state: recovered" "$out/verify-after.txt" || fail "verify does not say recovered"
  "$BIN/pubsub-replay" info --json "$dir" >"$out/info-after.json" || fail "info after recover"
  after=$(json_field "$out/info-after.json" samples)
  [ "$(json_field "$out/info-after.json" state)" = recovered ] || fail "state after recover"
  [ "$after" -ge "$before" ] || fail "$after samples after recover, $before before"
  [ "$after" -gt 0 ] || fail "nothing recorded before the kill"
  summary=$("$BIN/recording_summary" "$dir" --verify)
  python3 - "$summary" <<'PY' || fail "recording is not a contiguous sequence: $summary"
import json, sys
s = json.loads(sys.argv[1])
ok = s["verify_problems"] == 0 and len(s["writers"]) > 0 and all(
    not w["out_of_order"] and w["first_seq"] == 1
    and w["last_seq"] - w["first_seq"] + 1 == w["samples"]
    for w in s["writers"])
sys.exit(0 if ok else 1)
PY
  "$BIN/pubsub-replay" recover "$dir" >"$out/again.txt" 2>&1 || fail "second recover failed"
  grep -q "is recovered; nothing to recover" "$out/again.txt" || fail "second recover did something"
  echo "round $i: $before samples before recover, $after after, ${cut_bytes:-?} bytes cut"
  rm -rf "$dir"
done
echo "$rounds kills ($in_write inside a segment write), $torn_rounds with a torn tail," \
  "$total_cut bytes cut in all"
if [ "$direct_io" = off ] && [ $torn_rounds -eq 0 ]; then
  echo "FAIL: no kill left a torn tail: the test exercised no cut"
  status=1
fi
exit $status
