#!/usr/bin/env bash
# Snapshot mode ("mode": "snapshot") against pubsub-perftest publishing 1000 samples/s in a
# namespace: status shows the memory buffer (about before_s of samples); `ctl snapshot brake`
# starts a snapshot, a second trigger 0.5 s later extends it (same directory, "snapshot
# extended"); the snapshot holds exactly the samples from trigger - before_s to the second
# trigger + after_s, continuous (no loss), with both triggers as tags; SIGUSR1 starts the next
# snapshot, which begins right after the first one's last sample (nothing twice); a bad tag is
# refused (exit 1); stop ends the recorder with exit 0; every snapshot verifies.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib/netns.sh"
BIN=${BIN:?set BIN to the bin directory of the build}
netns_setup 2
out=$(mktemp -d) || exit 1  # removed on exit: only what this script made
trap 'kill $rec $pub 2>/dev/null; wait 2>/dev/null; netns_cleanup; rm -rf "$out"' EXIT
rec="" pub=""
status=0
fail() { echo "FAIL: $*"; status=1; }
sock="$out/ctl.sock"
ctl() { "$BIN/pubsub-recorder" ctl --socket "$sock" "$@"; }
field() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }

cat >"$out/r.json" <<EOF
{"domain": 5, "interface": "veth1", "stats_interval_s": 1, "mode": "snapshot",
 "snapshot": {"before_s": 2, "after_s": 1.5, "max_bytes": 67108864},
 "storage": {"path": "$out/snaps", "chunk_max_age_ms": 20},
 "control": {"socket": "$sock"}, "metrics": {"listen": "127.0.0.1:9465"}}
EOF
netns_spawn 1 90 "$BIN/pubsub-recorder" --config "$out/r.json" >"$out/rec.log" 2>&1
rec=$SPAWNED
netns_spawn 0 80 "$BIN/pubsub-perftest" -pub -domain 5 -nic veth0 -datalen 100 -pubRate 1000 \
  -exec 60 -noPrint 2>"$out/pub.err"
pub=$SPAWNED
wait_for 20 "matched writer in the recorder's log" \
  grep -q "writer .* on PubsubPerftest_Data matched" "$out/rec.log" || { tail "$out/rec.log"; exit 1; }
sleep 4

# 1. status: the buffer holds about before_s of samples; nothing written yet.
s=$(ctl status --json) || fail "status exit $?"
[ "$(echo "$s" | field 'd["mode"]')" = snapshot ] || fail "mode: $s"
keys=$(echo "$s" | field 'sorted(d["snapshot"].keys())')
want="['buffered_bytes', 'buffered_samples', 'buffered_seconds', 'dropped_samples', 'last_path', 'max_bytes', 'snapshots', 'writing']"
[ "$keys" = "$want" ] || fail "snapshot keys $keys, expected $want"
[ "$(echo "$s" | field '1.8 <= d["snapshot"]["buffered_seconds"] <= 2.3 and 1500 <= d["snapshot"]["buffered_samples"] <= 2400')" = True ] ||
  fail "buffer after 4 s with before_s 2: $s"
[ "$(echo "$s" | field 'd["snapshot"]["snapshots"] == 0 and d["snapshot"]["dropped_samples"] == 0 and d["snapshot"]["max_bytes"] == 67108864')" = True ] ||
  fail "status: $s"
[ -z "$(ls "$out/snaps" | grep snapshot-)" ] || fail "a snapshot directory before any trigger"
netns_exec 1 curl -sS http://127.0.0.1:9465/metrics >"$out/metrics" || fail "curl /metrics exit $?"
for name in snapshot_buffered_bytes snapshot_buffered_samples snapshot_dropped_samples_total snapshots_total; do
  grep -q "^pubsub_recorder_$name [0-9]" "$out/metrics" || fail "metrics: no pubsub_recorder_$name"
done
grep -q "^pubsub_recorder_snapshots_total 0$" "$out/metrics" || fail "metrics: $(grep snapshots_total "$out/metrics")"

# 2. trigger, a second trigger inside the window (extends), a bad tag.
m1=$(ctl snapshot brake) || fail "snapshot exit $?"
sleep 0.5
m2=$(ctl snapshot) || fail "second snapshot exit $?"
dir1=$(echo "$m1" | sed -n 's/^snapshot: \(.*-brake\) from 20.*Z until 20.*Z$/\1/p')
[ -n "$dir1" ] && [ -d "$dir1" ] || fail "snapshot said '$m1'"
case "$m2" in "snapshot extended: $dir1 from "*) ;; *) fail "second trigger said '$m2'" ;; esac
e=$(ctl snapshot "no/slash" 2>&1); rc=$?
[ $rc = 1 ] && [ "$e" = "pubsub-recorder ctl: snapshot: a snapshot tag has at most 64 characters of A-Z a-z 0-9 . _ -" ] ||
  fail "bad tag: exit $rc, '$e'"
wait_for 10 "the first snapshot written" sh -c "'$BIN/pubsub-recorder' ctl --socket '$sock' status --json | grep -q '\"snapshots\":1'" ||
  fail "first snapshot not finished: $(ctl status --json)"

# 3. SIGUSR1: the next snapshot.
# (timeout's child: ip netns exec execs the recorder)
kill -USR1 "$(pgrep -P "$rec" -x pubsub-recorder)"
wait_for 10 "the second snapshot started" grep -q "snapshot $out/snaps/snapshot-[0-9.-]*: " "$out/rec.log"
wait_for 10 "the second snapshot written" sh -c "'$BIN/pubsub-recorder' ctl --socket '$sock' status --json | grep -q '\"snapshots\":2'" ||
  fail "second snapshot not finished: $(ctl status --json)"
m=$(ctl stop) || fail "stop exit $?"
wait $rec; rc=$?; rec=""
[ $rc = 0 ] || { fail "recorder exit $rc after ctl stop"; tail "$out/rec.log"; }
kill $pub 2>/dev/null; wait $pub 2>/dev/null; pub=""

# 4. The snapshots: verify, windows, tags, continuity.
dirs=$(ls -d "$out"/snaps/snapshot-* 2>/dev/null)
[ "$(echo "$dirs" | wc -l)" = 2 ] || fail "snapshot directories: $dirs"
dir2=$(echo "$dirs" | grep -v -- -brake)
for d in $dirs; do
  "$BIN/pubsub-replay" verify "$d" >"$out/verify.txt" || { fail "verify $d exit $?"; cat "$out/verify.txt"; }
  "$BIN/pubsub-replay" info --json "$d" >"$d.info.json"
  "$BIN/pubsub-replay" export "$d" --format jsonl -o "$d.jsonl" 2>/dev/null || fail "export $d exit $?"
done
python3 - "$dir1" "$dir2" <<'PY' || status=1
import json, sys
d1, d2 = sys.argv[1], sys.argv[2]
bad = []
i1 = json.load(open(d1 + ".info.json"))
s1 = [json.loads(l) for l in open(d1 + ".jsonl")]
s2 = [json.loads(l) for l in open(d2 + ".jsonl")]
tags = [(m["kind"], m["name"]) for m in i1["marks"]]
if tags != [("tag", "brake"), ("tag", "snapshot")]: bad.append("first snapshot's marks %r" % tags)
t1, t2 = [m["time_ns"] for m in i1["marks"]]
first, last = s1[0]["reception_ns"], s1[-1]["reception_ns"]
# The window: [t1 - 2 s, t2 + 1.5 s]; at 1000 samples/s both ends are filled to within 50 ms.
if not (t1 - 2.0e9 <= first <= t1 - 1.95e9): bad.append("first sample %.3f s before the trigger" % ((t1 - first) / 1e9))
if not (t2 + 1.45e9 <= last <= t2 + 1.5e9): bad.append("last sample %.3f s after the second trigger" % ((last - t2) / 1e9))
seqs = [s["seq"] for s in s1]
if seqs != list(range(seqs[0], seqs[0] + len(seqs))): bad.append("first snapshot's sequence numbers are not continuous")
if i1["lost"] != 0: bad.append("first snapshot lost %d" % i1["lost"])
# Its length is 3.5 s plus the time between the two triggers (about half a second, more on a busy
# machine); at 1000 samples/s, sequence numbers continuous (above), the count follows from it.
window_s = (t2 - t1) / 1e9 + 3.5
if not (800 * window_s <= len(s1) <= 1050 * window_s):
    bad.append("first snapshot holds %d samples for a %.3f-s window at 1000/s" % (len(s1), window_s))
# The second begins right after the first (its window starts at the first one's end).
if s2[0]["seq"] != seqs[-1] + 1: bad.append("second snapshot starts at seq %d, the first ended at %d" % (s2[0]["seq"], seqs[-1]))
i2 = json.load(open(d2 + ".info.json"))
if [(m["kind"], m["name"]) for m in i2["marks"]] != [("tag", "snapshot")]: bad.append("second snapshot's marks %r" % i2["marks"])
if i2["lost"] != 0: bad.append("second snapshot lost %d" % i2["lost"])
for b in bad: print("FAIL:", b)
if not bad: print("snapshots: %d samples (%.3f s before to %.3f s after), then %d" % (len(s1), (t1 - first) / 1e9, (last - t2) / 1e9, len(s2)))
sys.exit(1 if bad else 0)
PY
grep -q "snapshot $dir1 written: " "$out/rec.log" || fail "no 'written' line in the log"
[ $status = 0 ] && echo "snapshot: ok"
exit $status
