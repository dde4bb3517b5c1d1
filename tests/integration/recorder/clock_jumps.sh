#!/usr/bin/env bash
# Clocks that jump (issue 34, item 4). Never the machine's clock: libfaketime steps one process's
# wall clock from a file it rereads each second (FAKETIME_TIMESTAMP_FILE, CLOCK_MONOTONIC left
# alone, as a real step leaves it).
# - The recorder (ns 1; segments rolled every second) records two writers at 100 samples/s for
#   10 s from ns 0: Plain (Cyclone DDS's writer), and Jumpy (libpubsub's), whose publisher's own
#   wall clock (its source timestamps) steps back 120 s after about 4 s.
# - About 3 s in, the recorder's wall clock steps forward 300 s; about 6 s in, back 600 s.
# Checked:
# - the recorder logs each step and counts it (status: clock_steps 2, wall_clock_offset_s -300);
#   the recording holds two clock_step marks with the steps;
# - reception times: every sample in reception order with no jump (2000 samples within 9-12 s,
#   no gap over 1 s), so the index stays ordered;
# - segment rolls by duration go on through the steps (at least 8 segments);
# - Jumpy's source timestamps are kept as sent: one step back of about 120 s;
# - play paces by the reception times (10 s, not minutes), says what it did about the steps,
#   and a reader receives Jumpy's samples with the recorded source timestamps.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib/netns.sh"
. "$HERE/../lib/ddsperf.sh"
. "$HERE/../lib/peers.sh"
BIN=${BIN:?set BIN to the bin directory of the build}
DOMAIN=13
FAKETIME_LIB=/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1
[ -f "$FAKETIME_LIB" ] || { echo "SKIP: libfaketime is missing (scripts/setup.sh)"; exit 77; }
netns_setup 2
out=$(mktemp -d) || exit 1  # removed on exit: only what this script made
rec="" pids=""
trap 'kill $rec $pids 2>/dev/null; wait 2>/dev/null; netns_cleanup; [ -n "${KEEP_OUT:-}" ] && cp -r "$out" "$KEEP_OUT"; rm -rf "$out"' EXIT
status=0
fail() { echo "FAIL: $*"; status=1; }
# faked NS FILE PROGRAM ARGS...: PROGRAM in namespace NS with its wall clock offset by FILE's
# content ("+300" is 300 s ahead), reread every second.
faked() {
  local ns=$1 file=$2
  shift 2
  exec ip netns exec "${NS_PREFIX}$ns" env LD_PRELOAD="$FAKETIME_LIB" FAKETIME_TIMESTAMP_FILE="$file" \
    FAKETIME_CACHE_DURATION=1 FAKETIME_DONT_FAKE_MONOTONIC=1 "$@"
}
echo "+0" >"$out/rec.clock"
echo "+0" >"$out/pub.clock"

cat >"$out/r.json" <<EOF
{"domain": $DOMAIN, "interface": "veth1", "stats_interval_s": 1,
 "storage": {"path": "$out/rec", "chunk_max_age_ms": 50, "segment_max_duration_s": 1}}
EOF
faked 1 "$out/rec.clock" "$BIN/pubsub-recorder" --config "$out/r.json" >"$out/rec.log" 2>&1 &
rec=$!
wait_for 20 "the recorder's start" grep -q "recording domain $DOMAIN" "$out/rec.log" || { cat "$out/rec.log"; exit 1; }
peer 0 cyclone pub --topic Plain --count 1000 --rate 100 --wait-readers 1 --linger 1 --timeout 40 \
  >"$out/plain.out" 2>&1 &
pids="$!"
faked 0 "$out/pub.clock" "$BIN/pubsub_qos_peer" pub --topic Jumpy --count 1000 --rate 100 \
  --wait-readers 1 --linger 1 --timeout 40 --domain $DOMAIN --nic veth0 >"$out/jumpy.out" 2>&1 &
pids="$pids $!"
for t in Plain Jumpy; do
  wait_for 20 "the writer on $t matched" grep -q "writer .* on $t matched" "$out/rec.log" || { tail "$out/rec.log"; exit 1; }
done
sleep 3
echo "+300" >"$out/rec.clock"
sleep 1
echo "-120" >"$out/pub.clock"
sleep 2
echo "-300" >"$out/rec.clock"
for p in $pids; do wait "$p" || fail "publisher $p: exit $?"; done
pids=""
sleep 1
ctl() { "$BIN/pubsub-recorder" ctl --path "$out/rec" "$@"; }
ctl status --json >"$out/status.json" || fail "status exit $?"
kill -INT $rec; wait $rec; rc=$?; rec=""
[ $rc = 0 ] || fail "recorder exit $rc"
grep -E "wall clock stepped" "$out/rec.log" | cut -c1-200
grep -qE "warn.* the wall clock stepped \+300\.[0-9]{3} s: reception times go on from the monotonic clock" "$out/rec.log" ||
  fail "no line about the step forward"
grep -qE "warn.* the wall clock stepped -600\.[0-9]{3} s: .* are now 300\.[0-9]{3} s ahead of the wall clock" "$out/rec.log" ||
  fail "no line about the step back"
"$BIN/pubsub-replay" info --json "$out/rec" >"$out/info.json" || fail "info exit $?"
"$BIN/pubsub-replay" export -q "$out/rec" >"$out/all.jsonl" || fail "export exit $?"
nseg=$(ls "$out/rec/segments" | wc -l)
python3 - "$out" "$nseg" <<'EOF' || status=1
import json, sys
out, nseg = sys.argv[1], int(sys.argv[2])
ok = True
def check(cond, what):
    global ok
    if not cond:
        print("FAIL:", what); ok = False
st = json.load(open(f"{out}/status.json"))
print(f"status: clock_steps {st['clock_steps']}, wall_clock_offset_s {st['wall_clock_offset_s']:.3f}")
check(st["clock_steps"] == 2 and abs(st["wall_clock_offset_s"] + 300) < 1, "status: 2 steps, -300 s")
info = json.load(open(f"{out}/info.json"))
steps = [m for m in info["marks"] if m["kind"] == "clock_step"]
print("clock_step marks:", [(m["name"], m["note"]) for m in steps])
check(len(steps) == 2 and steps[0]["note"].startswith("+300.") and steps[1]["note"].startswith("-600."),
      "two clock_step marks, +300 then -600")
rows = [json.loads(l) for l in open(f"{out}/all.jsonl")]
recv = [r["reception_ns"] for r in rows]
span = (recv[-1] - recv[0]) / 1e9
biggest = max(b - a for a, b in zip(recv, recv[1:])) / 1e9
print(f"{len(rows)} samples, reception span {span:.2f} s, largest step between two {biggest:.3f} s, "
      f"{nseg} segments")
check(len(rows) == 2000, "2000 samples")
check(recv == sorted(recv), "reception times in order")
check(9 <= span <= 12 and biggest < 1, "reception times without a jump")
check(nseg >= 8, "segments rolled every second through the steps")
src = [r["source_ns"] for r in rows if r["topic"] == "Jumpy"]
back = [(b - a) / 1e9 for a, b in zip(src, src[1:]) if b < a]
print(f"Jumpy's source timestamps step back: {[round(x, 1) for x in back]} s")
check(len(back) == 1 and -121 < back[0] < -119, "Jumpy's source timestamps kept as sent (one step back of 120 s)")
sys.exit(0 if ok else 1)
EOF

# play: paced by reception times; Jumpy's source timestamps as recorded.
peer 0 pubsub sub --topic Jumpy --count 1000 --timeout 40 >"$out/sub.out" 2>&1 &
sub=$!
pids=$sub
start=$(date +%s.%N)
ip netns exec "${NS_PREFIX}1" "$BIN/pubsub-replay" play --domain $DOMAIN --nic veth1 --wait-readers 1 \
  --topics Jumpy "$out/rec" >"$out/play.out" 2>"$out/play.err" || fail "play exit $?"
took=$(python3 -c "import sys; print(float(sys.argv[2]) - float(sys.argv[1]))" "$start" "$(date +%s.%N)")
wait $sub || fail "subscriber exit $?"
pids=""
grep -v "samples/s" "$out/play.err"
[ "$(grep -cE "^pubsub-replay: the recorder's wall clock stepped (\+300|-600)\.[0-9]{3} s at [0-9.]+ s of the recording; its reception times, which play paces by, went on from its monotonic clock" "$out/play.err")" = 2 ] ||
  fail "play did not say what it did about the two steps"
python3 - "$out" "$took" <<'EOF' || status=1
import json, sys
out, took = sys.argv[1], float(sys.argv[2])
rec = [json.loads(l)["source_ns"] for l in open(f"{out}/all.jsonl") if '"Jumpy"' in l]
got = [json.loads(l)["source_ts"] for l in open(f"{out}/sub.out") if '"sample"' in l]
print(f"play took {took:.1f} s; the reader got {len(got)} samples")
ok = len(got) == 1000 and got == rec and took < 20
if not ok: print("FAIL: expected 1000 samples with the recorded source timestamps, within 20 s")
sys.exit(0 if ok else 1)
EOF
[ $status = 0 ] && echo "clock jumps: ok"
exit $status
