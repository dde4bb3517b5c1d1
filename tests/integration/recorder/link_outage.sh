#!/usr/bin/env bash
# Links that go away (issue 34, item 3). VENDOR's qos peers (tests/peers: pubsub, or cyclone -
# Cyclone DDS's own writers) in ns 0 write to the recorder in ns 1, one topic per case, all in
# one run (100 samples/s each):
# - Durable: reliable, TRANSIENT_LOCAL, KEEP_ALL, 3000 samples;
# - Volatile: reliable, VOLATILE, KEEP_ALL, 3000 samples;
# - BestEffort: best effort, 3000 samples;
# - Restart (from ns 1, the recorder's own): a writer killed (SIGKILL) after 3 s, and a new
#   process on the same topic that writes 300 samples;
# - Steady: reliable, VOLATILE, KEEP_ALL, 3000 samples, from ns 1: the outage does not touch it,
#   and play uses its recording below.
# About 4 s into the long writers, ns 0's bridge port is set down until 3 s after the recorder
# dropped them (their lease is 10 s), then up again. Checked:
# - the recorder drops each long writer ("gone") and matches it again when the link is back;
# - Durable: libpubsub's writer sends its whole history again (Cyclone's does not): each sample
#   is stored once - sequence numbers exactly 1..3000, in order - and the recorder logs once that
#   it received recorded samples again; 0 lost;
# - Volatile and BestEffort: what was written while the link was down is gone; the recorder
#   counts it as lost exactly: recorded + lost = 3000, the recording's missing sequence numbers
#   are the lost count, and what came after the link was back is recorded (last sequence 3000).
#   A best-effort writer may send its first few samples before the recorder matched it: then
#   recorded + lost = 3000 - those;
# - Restart: two writers in the recording, the first with sequence numbers 1..k, k >= 100, no
#   gap, the second 1..300;
# - Steady: 1..3000, none lost.
# With `play` as the second argument it then also plays the Steady topic (30 s) into a reliable
# volatile reader of VENDOR in ns 0, and takes the link down for 15 s mid-way:
# - play goes on and finishes (exit 0); it says when the reader went away (its lease expired)
#   and when it was matched again, and counts it in its summary;
# - the reader receives samples from before the outage, then, after one gap, every sample up to
#   3000, in order, none twice.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib/netns.sh"
. "$HERE/../lib/ddsperf.sh"
. "$HERE/../lib/peers.sh"
BIN=${BIN:?set BIN to the bin directory of the build}
DOMAIN=12
# Usage: link_outage.sh [pubsub|cyclone] [play]
vendor=${1:-pubsub}
with_play=${2:-}
[ -x "$BIN/${vendor}_qos_peer" ] || { echo "SKIP: no $BIN/${vendor}_qos_peer"; exit 77; }
netns_setup 2
out=$(mktemp -d) || exit 1  # removed on exit: only what this script made
rec="" pids=""
trap 'kill $rec $pids 2>/dev/null; wait 2>/dev/null; netns_cleanup; [ -n "${KEEP_OUT:-}" ] && cp -r "$out" "$KEEP_OUT"; rm -rf "$out"' EXIT
status=0
fail() { echo "FAIL: $*"; status=1; }
link() { ip -n "${NS_PREFIX}br" link set port0 "$1"; echo "link $1 at $(date +%T.%N | cut -c1-12)"; }
long_pub() {  # NS TOPIC QOS... : 3000 samples at 100/s
  local ns=$1 topic=$2
  shift 2
  peer "$ns" "$vendor" pub --topic "$topic" --count 3000 --rate 100 --wait-readers 1 --linger 2 --timeout 90 "$@" \
    >"$out/$topic.out" 2>"$out/$topic.err" &
  pids="$pids $!"
}

cat >"$out/r.json" <<EOF
{"domain": 12, "interface": "veth1", "stats_interval_s": 1,
 "storage": {"path": "$out/rec", "chunk_max_age_ms": 50}}
EOF
netns_spawn 1 150 "$BIN/pubsub-recorder" --config "$out/r.json" >"$out/rec.log" 2>&1
rec=$SPAWNED
wait_for 20 "the recorder's start" grep -q "recording domain 12" "$out/rec.log" || { cat "$out/rec.log"; exit 1; }

# The restarted publisher, in ns 1 (away from the outage): killed after 3 s, then a new process.
peer 1 "$vendor" pub --topic Restart --count 100000 --rate 100 --wait-readers 1 --timeout 60 >/dev/null 2>"$out/restart1.err" &
first=$!
long_pub 0 Durable --reliability reliable --durability transient_local --history keep_all
long_pub 0 Volatile --reliability reliable --durability volatile --history keep_all
long_pub 0 BestEffort --reliability best_effort --durability volatile
long_pub 1 Steady --reliability reliable --durability volatile --history keep_all
for t in Durable Volatile BestEffort Restart Steady; do
  wait_for 20 "the writer on $t matched" grep -q "writer .* on $t matched" "$out/rec.log" || { tail "$out/rec.log"; exit 1; }
done
sleep 3
kill -KILL $first
wait $first 2>/dev/null
peer 1 "$vendor" pub --topic Restart --count 300 --rate 100 --wait-readers 1 --linger 1 --timeout 30 >"$out/restart2.out" 2>"$out/restart2.err" &
restart=$!
pids="$pids $restart"
link down
for t in Durable Volatile BestEffort; do
  wait_for 20 "the writer on $t gone (lease)" grep -q "writer .* on $t gone" "$out/rec.log" || status=1
done
sleep 3
link up
for p in $pids; do wait "$p" || fail "publisher $p: exit $?"; done
pids=""
for t in Durable Volatile BestEffort; do
  [ "$(grep -c "writer .* on $t matched" "$out/rec.log")" = 2 ] || fail "the writer on $t was not matched twice"
done
sleep 1  # the long writers linger 2 s after their last sample: it is in by now
kill -INT "$(pgrep -P $rec)"; wait $rec; rc=$?; rec=""
[ $rc = 0 ] || fail "recorder exit $rc"
# libpubsub's writer sends its whole history again on the new match; Cyclone's (measured) sends
# none the recorder has already: the line is required of the first only.
resent_re="writer [0-9a-f]{24}:00000102 on Durable sends samples from [0-9]+ again \(matched again after it was gone\): those up to [0-9]+ are recorded already and not stored twice"
if [ "$vendor" = pubsub ]; then
  grep -qE "$resent_re" "$out/rec.log" || fail "no line about the samples sent again"
fi
"$BIN/pubsub-replay" info --json "$out/rec" >"$out/info.json" || fail "info exit $?"
for t in Durable Volatile BestEffort Restart Steady; do
  "$BIN/recording_summary" "$out/rec" --topic $t --verify >"$out/sum.$t.json" || fail "recording_summary $t exit $?"
done
python3 - "$out" <<'EOF' || status=1
import json, sys
out = sys.argv[1]
info = json.load(open(f"{out}/info.json"))
ok = True
def check(cond, what):
    global ok
    if not cond:
        print("FAIL:", what); ok = False
for t in ("Durable", "Volatile", "BestEffort", "Restart", "Steady"):
    s = json.load(open(f"{out}/sum.{t}.json"))
    ws = [w for w in info["recorded_writers"] if w["topic"] == t]
    lost = sum(w["lost"] for w in ws)
    sw = s["writers"]
    print(f"{t}: recorded {s['samples']}, lost {lost}, writers (first, last, samples, not +1) "
          f"{[(x['first_seq'], x['last_seq'], x['samples'], x['out_of_order']) for x in sw]}")
    check(s["verify_problems"] == 0, f"{t}: verify problems")
    if t == "Restart":
        check(len(sw) == 2 and lost == 0, f"{t}: two writers, none lost")
        if len(sw) == 2:
            a, b = sorted(sw, key=lambda x: x["id"])  # the killed one was recorded first
            check(a["first_seq"] == 1 and a["last_seq"] == a["samples"] and a["samples"] >= 100
                  and a["out_of_order"] == 0, f"{t}: the killed writer's samples 1..k, k >= 100")
            check(b["first_seq"] == 1 and b["last_seq"] == 300 and b["samples"] == 300
                  and b["out_of_order"] == 0, f"{t}: the new writer's samples 1..300")
        continue
    check(len(sw) == 1, f"{t}: one writer")
    if len(sw) != 1: continue
    w = sw[0]
    missing = w["last_seq"] - w["first_seq"] + 1 - w["samples"]
    # A best-effort writer's first samples can go out before the recorder has matched it (it saw
    # the recorder's reader first): never sent to the recorder, and not counted as lost.
    before = w["first_seq"] - 1
    check((before == 0 or (t == "BestEffort" and before < 10)) and w["last_seq"] == 3000,
          f"{t}: sequence numbers 1..3000")
    if t in ("Durable", "Steady"):
        check(s["samples"] == 3000 and w["out_of_order"] == 0 and lost == 0,
              f"{t}: exactly 1..3000 once each, in order, none lost")
    else:
        check(s["samples"] + lost == 3000 - before, f"{t}: recorded + lost = 3000 - {before}")
        check(missing == lost, f"{t}: the missing sequence numbers ({missing}) are the lost count")
        # At 100/s, 15 s down minus what the lease and the match take: at least 500 gone, and
        # the recording holds both sides of the gap.
        check(lost >= 500 and s["samples"] >= 1000, f"{t}: a gap of the outage's size")
sys.exit(0 if ok else 1)
EOF
[ $status = 0 ] || { grep -E "matched|gone|again|recorded [0-9]" "$out/rec.log" | cut -c1-220; exit 1; }
echo "link outage (record): ok"
[ "$with_play" = play ] || exit 0

# play: the Steady topic (30 s, recorded without a hole) into a volatile reader in ns 0; the link
# down 15 s mid-way.
peer 0 "$vendor" sub --topic Steady --count 0 --timeout 60 --reliability reliable \
  --durability volatile --history keep_all >"$out/sub.out" 2>"$out/sub.err" &
sub=$!
pids=$sub
netns_spawn 1 120 "$BIN/pubsub-replay" play --domain 12 --nic veth1 --topics Steady \
  --wait-readers 1 --wait-timeout 20 "$out/rec" >"$out/play.out" 2>"$out/play.err"
play=$SPAWNED
pids="$sub $play"
sleep 6
link down
sleep 15
link up
wait $play; rc=$?
pids=$sub
[ $rc = 0 ] || fail "play exit $rc"
sleep 1
kill -INT $sub  # it ends cleanly (exit 0) on SIGINT
wait $sub || fail "subscriber exit $?"
pids=""
cat "$out/play.err" | tr '\r' '\n' | grep -v "^ *$" | tail -6
grep -qE "warning: reader [0-9a-f]{24}:[0-9a-f]{8} of topic Steady went away at [0-9.]+ s of the recording" "$out/play.err" || fail "play did not say the reader went away"
grep -qE "^pubsub-replay: reader [0-9a-f]{24}:[0-9a-f]{8} of topic Steady matched again at [0-9.]+ s" "$out/play.err" || fail "play did not say the reader came back"
grep -qE "; 1 reader went away while playing \(1 matched again\)$" "$out/play.err" || fail "the summary does not count the reader"
python3 - "$out/sub.out" <<'EOF' || status=1
import json, sys
seqs = [json.loads(l)["seq"] for l in open(sys.argv[1]) if '"sample"' in l]
print(f"the reader received {len(seqs)} samples: {seqs[:1]}..{seqs[-1:]}")
ok = len(seqs) >= 800 and seqs == sorted(seqs) and len(set(seqs)) == len(seqs) and seqs[-1] == 3000
# After the gap, every sample up to 3000.
jumps = [(a, b) for a, b in zip(seqs, seqs[1:]) if b != a + 1]
print(f"gaps in what it received: {jumps}")
ok = ok and len(jumps) == 1 and jumps[0][0] >= 300
if not ok: print("FAIL: expected samples from before the outage, one gap, then every sample to 3000")
sys.exit(0 if ok else 1)
EOF
[ $status = 0 ] && echo "link outage (play): ok"
exit $status
