#!/usr/bin/env bash
# The replay tools on a recording that is still being written (issue: `verify` told the user to run
# `recover` on a live recording, and `recover`/`reindex` then cut half of it away).
# While pubsub-recorder records pubsub-perftest (1024 B, random, 5000/s for 6 s), 3 s in:
# - `info` exits 0 and says "live: being written by pubsub-recorder (pid N)"; `info --json` has
#   "state": "live" and the recorder's pid;
# - `verify` exits 4 with "state: live (being written by pubsub-recorder (pid N))" and no
#   problem line (the growing tail is not damage), and never suggests recover;
# - `recover` and `reindex` exit 4 with "DIR is being written by pubsub-recorder (pid N); nothing
#   changed: ..." and touch nothing (no DIR/recovered, the same index.sqlite3 inode, no
#   index.sqlite3.reindex).
# Then the recorder ends on its own (--duration) with exit 0, its lock file is gone, `verify`
# exits 0 and every sample is there: one writer, sequence 1..N with no hole, N = the recorder's own
# count in its last line.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib/netns.sh"
BIN=${BIN:?set BIN to the bin directory of the build}
netns_setup 2
netns_scratch
dir=$out/rec
echo '{"domain": 6, "interface": "veth1", "storage": {"path": "'"$dir"'", "chunk_max_age_ms": 20}}' \
  >"$out/r.json"
netns_spawn 1 60 "$BIN/pubsub-recorder" --config "$out/r.json" --duration 9 >"$out/rec.log" 2>&1
rec=$SPAWNED
wait_for 10 "recording directory" test -e "$dir/index.sqlite3" || fail "no recording created"
netns_spawn 0 40 "$BIN/pubsub-perftest" -pub -domain 6 -nic veth0 -datalen 1024 -pubRate 5000 \
  -exec 6 -noPrint -payload random 2>"$out/pub.err"
pub=$SPAWNED
wait_for 20 "'writer ... matched' in the recorder's log" \
  grep -q "writer .* on PubsubPerftest_Data matched" "$out/rec.log" || fail "no writer matched"
sleep 3
recorder_pid=$(pgrep -P "$rec" -x pubsub-recorder)
[ -n "$recorder_pid" ] || fail "no pubsub-recorder under $rec"
who="pubsub-recorder (pid $recorder_pid)"
inode_before=$(stat -c %i "$dir/index.sqlite3")

"$BIN/pubsub-replay" info "$dir" >"$out/info.txt" 2>&1
rc=$?
[ $rc -eq 0 ] || fail "info exit $rc on a live recording, expected 0"
head -1 "$out/info.txt" | grep -qF ", live: being written by $who (read up to the last chunk" ||
  { fail "info does not say live"; head -1 "$out/info.txt"; }
grep -q "recover" "$out/info.txt" && fail "info suggests recover on a live recording"
"$BIN/pubsub-replay" info --json "$dir" >"$out/info.json" || fail "info --json failed"
python3 - "$out/info.json" "$recorder_pid" <<'PY' || fail "info --json: $(head -c 300 "$out/info.json")"
import json, sys
j = json.load(open(sys.argv[1]))
ok = (j["state"] == "live" and j["writer_process"]["pid"] == int(sys.argv[2])
      and j["writer_process"]["program"] == "pubsub-recorder" and j["samples"] > 0)
sys.exit(0 if ok else 1)
PY

"$BIN/pubsub-replay" verify "$dir" >"$out/verify.txt" 2>&1
rc=$?
[ $rc -eq 4 ] || fail "verify exit $rc on a live recording, expected 4"
grep -qxF "state: live (being written by $who)" "$out/verify.txt" || fail "verify state line"
grep -qx "result: live; no damage in what is written so far (verify again when the recording has ended)" \
  "$out/verify.txt" || fail "verify result line"
grep -q "^problem:\|recover" "$out/verify.txt" && fail "verify reports problems or suggests recover"
[ $status -eq 0 ] || cat "$out/verify.txt"

for cmd in recover reindex; do
  "$BIN/pubsub-replay" "$cmd" "$dir" >"$out/$cmd.txt" 2>&1
  rc=$?
  [ $rc -eq 4 ] || fail "$cmd exit $rc on a live recording, expected 4"
  grep -qxF "pubsub-replay: $dir is being written by $who; nothing changed: $cmd works only on a recording no process writes (stop the recorder, or let it end, first)" \
    "$out/$cmd.txt" || { fail "$cmd message"; cat "$out/$cmd.txt"; }
done
[ -e "$dir/recovered" ] && fail "recover made $dir/recovered"
[ -e "$dir/index.sqlite3.reindex" ] && fail "reindex left index.sqlite3.reindex"
[ "$(stat -c %i "$dir/index.sqlite3")" = "$inode_before" ] || fail "reindex replaced the index"

wait "$rec"
rc=$?
kill "$pub" 2>/dev/null
wait "$pub" 2>/dev/null
[ $rc -eq 0 ] || { fail "recorder exit $rc, expected 0"; tail -5 "$out/rec.log"; }
[ -e "$dir/writer.lock" ] && fail "the recorder left $dir/writer.lock"
recorded=$(sed -n 's/.*recorded \([0-9]*\) samples.*/\1/p' "$out/rec.log" | tail -1)
"$BIN/pubsub-replay" verify "$dir" >"$out/verify-end.txt" 2>&1
rc=$?
[ $rc -eq 0 ] || { fail "verify exit $rc after the recorder ended"; cat "$out/verify-end.txt"; }
summary=$("$BIN/recording_summary" "$dir" --verify)
echo "recorder counted ${recorded:-?}; $summary" | cut -c1-300
python3 - "$summary" "${recorded:-0}" <<'PY' || fail "not every sample is in the recording"
import json, sys
s = json.loads(sys.argv[1])
n = int(sys.argv[2])
w = s["writers"]
ok = (n > 3000 and s["samples"] == n and s["verify_problems"] == 0 and len(w) == 1
      and w[0]["first_seq"] == 1 and w[0]["last_seq"] == n and not w[0]["out_of_order"])
sys.exit(0 if ok else 1)
PY
exit $status
