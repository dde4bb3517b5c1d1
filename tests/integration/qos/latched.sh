#!/usr/bin/env bash
# Latched state in a replay:  latched.sh [FROM [TO]]  (peers: cyclone (default), fastdds, pubsub)
# A TRANSIENT_LOCAL writer of FROM (KEEP_LAST 3, two instances) writes 30 samples in its first second, while a volatile writer on Q_clock goes on for
# 7 s; pubsub-recorder records both. Then:
# 1. `play --start 2` (after the durable writer's last sample): a TRANSIENT_LOCAL reader gets its
#    latched state first - exactly the last 3 samples of each instance, seq 25..30 - although none
#    of its samples lies in the range; Q_clock is played from 2 s on.
# 2. `play` from the start, and a TRANSIENT_LOCAL reader that joins 3.5 s into it, long after the
#    durable writer's samples went out: it gets exactly seq 25..30 from the replay writer's history,
#    as a late joiner of the original would have; a volatile reader joining then gets none.
# The readers are TO's. (FROM fastdds is not a case: Fast DDS 2.9 announces no history depth.)
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib/netns.sh"
. "$HERE/../lib/ddsperf.sh"
. "$HERE/../lib/peers.sh"
BIN=${BIN:?set BIN to the bin directory of the build}
FROM=${1:-cyclone}
TO=${2:-cyclone}
DOMAIN=$((70 + $$ % 50))
for p in "$FROM" "$TO"; do
  [ -x "$BIN/${p}_qos_peer" ] || { echo "SKIP: $BIN/${p}_qos_peer is not built"; exit 77; }
done
netns_setup 3
netns_scratch
seqs() {  # the seq of every sample line of a peer's output, sorted
  grep -o '"event":"sample","id":[0-9]*,"seq":[0-9]*' "$1" | sed 's/.*"seq"://' | sort -n | xargs
}

rec=$out/rec
echo '{"domain": '"$DOMAIN"', "interface": "veth1", "storage": {"path": "'"$rec"'", "chunk_max_age_ms": 20}}' >"$out/r.json"
netns_spawn 1 60 "$BIN/pubsub-recorder" --config "$out/r.json" >"$out/rec.log" 2>&1
recorder=$SPAWNED
wait_for 10 "recording directory" test -e "$rec/index.sqlite3" || fail "no recording"
peer 0 "$FROM" pub --topic Q_tl --durability transient_local --history keep_last:3 --keys 2 --count 30 \
  --rate 30 --wait-readers 1 --linger 1 >"$out/pub-tl.out" 2>&1 &
tl=$!
peer 0 "$FROM" pub --topic Q_clock --count 70 --rate 10 --wait-readers 1 --linger 1 >"$out/pub-clock.out" 2>&1 &
clock=$!
wait "$tl" || fail "durable writer exit $?"
wait "$clock" || fail "clock writer exit $?"
ip netns exec "${NS_PREFIX}1" "$BIN/pubsub-recorder" ctl --path "$rec" stop >/dev/null || fail "ctl stop"
wait "$recorder" || fail "recorder exit $?"

# 1. play --start 2: the latched state first.
peer 2 "$TO" sub --topic Q_tl --durability transient_local --count 6 --timeout 30 --linger 1 \
  >"$out/sub1.out" 2>&1 &
s1=$!
peer 2 "$TO" sub --topic Q_clock --count 0 --timeout 12 >"$out/clock1.out" 2>&1 &
c1=$!
ip netns exec "${NS_PREFIX}1" "$BIN/pubsub-replay" play "$rec" --domain "$DOMAIN" --nic veth1 \
  --start 2 --wait-readers 1 --wait-timeout 20 -q >"$out/play1.out" 2>&1 || fail "play --start exit $?"
wait "$s1" || fail "durable reader (play --start) exit $?"
got=$(seqs "$out/sub1.out")
[ "$got" = "25 26 27 28 29 30" ] || fail "play --start 2: durable reader got seq '$got', expected 25..30"
grep -q "latched state at the start: 6 samples" "$out/play1.out" ||
  { fail "play did not report the latched state"; cat "$out/play1.out"; }
wait "$c1"
first_clock=$(seqs "$out/clock1.out" | awk '{print $1}')
[ -n "$first_clock" ] && [ "$first_clock" -ge 15 ] ||
  fail "Q_clock from --start 2 began at seq '$first_clock' (expected about 20, not the start)"

# 2. A durable reader joining a running replay long after the durable samples went out.
ip netns exec "${NS_PREFIX}1" "$BIN/pubsub-replay" play "$rec" --domain "$DOMAIN" --nic veth1 -q \
  >"$out/play2.out" 2>&1 &
play=$!
sleep 3.5
peer 2 "$TO" sub --topic Q_tl --durability transient_local --count 6 --timeout 20 --linger 1 \
  >"$out/sub2.out" 2>&1 &
s2=$!
peer 2 "$TO" sub --topic Q_tl --count 0 --timeout 4 >"$out/vol2.out" 2>&1 &
v2=$!
wait "$s2" || fail "late durable reader exit $?"
got=$(seqs "$out/sub2.out")
[ "$got" = "25 26 27 28 29 30" ] || fail "late durable reader got seq '$got', expected 25..30"
wait "$v2"
[ -z "$(seqs "$out/vol2.out")" ] || fail "late volatile reader got history: $(seqs "$out/vol2.out")"
wait "$play" || fail "play exit $?"
echo "latched ($FROM -> $TO): --start gave $(seqs "$out/sub1.out" | wc -w) samples, a late joiner $(seqs "$out/sub2.out" | wc -w)"
exit $status
