#!/usr/bin/env bash
# MANUAL_BY_TOPIC liveliness through a replay's gaps (Cyclone DDS): a writer with a 1-s lease
# writes a sample every 2 s and asserts its liveliness every 300 ms in between; pubsub-recorder
# records it. Replayed, the writer's gaps are longer than its lease: a Cyclone reader asking for
# MANUAL_BY_TOPIC with a 1-s lease must get every sample and never see the writer lose its
# liveliness (no "not_alive":1), because the replay writer asserts it each third of the lease.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib/netns.sh"
. "$HERE/../lib/ddsperf.sh"
. "$HERE/../lib/peers.sh"
BIN=${BIN:?set BIN to the bin directory of the build}
DOMAIN=$((130 + $$ % 50))
netns_setup 3
out=$(mktemp -d) || exit 1  # removed on exit: only what this script made
trap 'netns_cleanup; rm -rf "$out"' EXIT
status=0
fail() {
  echo "FAIL: $*"
  status=1
}
rec=$out/rec
echo '{"domain": '"$DOMAIN"', "interface": "veth1", "storage": {"path": "'"$rec"'", "chunk_max_age_ms": 20}}' >"$out/r.json"
netns_spawn 1 60 "$BIN/pubsub-recorder" --config "$out/r.json" >"$out/rec.log" 2>&1
recorder=$SPAWNED
wait_for 10 "recording directory" test -e "$rec/index.sqlite3" || fail "no recording"
peer 0 cyclone pub --topic Q_live --liveliness manual_by_topic:1000 --assert-every 300 --count 4 \
  --rate 0.5 --wait-readers 1 --linger 1 >"$out/pub.out" 2>&1 &
pub=$!
wait "$pub" || fail "writer exit $?"
ip netns exec "${NS_PREFIX}1" "$BIN/pubsub-recorder" ctl --path "$rec" stop >/dev/null || fail "ctl stop"
wait "$recorder" || fail "recorder exit $?"

peer 2 cyclone sub --topic Q_live --liveliness manual_by_topic:1000 --count 4 --timeout 30 \
  >"$out/sub.out" 2>&1 &
sub=$!
ip netns exec "${NS_PREFIX}1" "$BIN/pubsub-replay" play "$rec" --domain "$DOMAIN" --nic veth1 \
  --wait-readers 1 --wait-timeout 20 -q >"$out/play.out" 2>&1 || fail "play exit $?"
wait "$sub" || fail "reader exit $?"
grep -q '"event":"done","samples":4,"ok":true' "$out/sub.out" || fail "not 4 intact samples"
grep -q '"not_alive":1' "$out/sub.out" &&
  { fail "the reader saw the replayed writer lose its liveliness"; grep liveliness "$out/sub.out"; }
[ $status -eq 0 ] && echo "liveliness: $(grep -c '"event":"sample"' "$out/sub.out") samples replayed, the writer alive throughout"
exit $status
