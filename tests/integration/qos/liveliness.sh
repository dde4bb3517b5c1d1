#!/usr/bin/env bash
# Liveliness through a replay's gaps (Cyclone DDS): MANUAL_BY_TOPIC and MANUAL_BY_PARTICIPANT
# writers with a 1-s lease write a sample every 2 s and assert their liveliness every 300 ms in
# between, and an AUTOMATIC writer with a 1-s lease writes a sample every 2 s; pubsub-recorder
# records the three. Replayed, the writers' gaps are longer than their leases: Cyclone readers
# asking for the same kind and lease must get every sample and never see a writer lose its
# liveliness (no "not_alive":1) - the replay writer asserts MANUAL_BY_TOPIC each third of the
# lease with a liveliness HEARTBEAT, the replay's participant MANUAL_BY_PARTICIPANT with a
# participant message, and announces itself twice per the shortest AUTOMATIC lease.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib/netns.sh"
. "$HERE/../lib/ddsperf.sh"
. "$HERE/../lib/peers.sh"
BIN=${BIN:?set BIN to the bin directory of the build}
DOMAIN=$((130 + $$ % 50))
netns_setup 3
netns_scratch
rec=$out/rec
echo '{"domain": '"$DOMAIN"', "interface": "veth1", "storage": {"path": "'"$rec"'", "chunk_max_age_ms": 20}}' >"$out/r.json"
netns_spawn 1 60 "$BIN/pubsub-recorder" --config "$out/r.json" >"$out/rec.log" 2>&1
recorder=$SPAWNED
wait_for 10 "recording directory" test -e "$rec/index.sqlite3" || fail "no recording"
peer 0 cyclone pub --topic Q_live --liveliness manual_by_topic:1000 --assert-every 300 --count 4 \
  --rate 0.5 --wait-readers 1 --linger 1 >"$out/pub.out" 2>&1 &
pub=$!
peer 0 cyclone pub --topic Q_auto --liveliness automatic:1000 --count 4 --rate 0.5 \
  --wait-readers 1 --linger 1 >"$out/pub-auto.out" 2>&1 &
auto=$!
peer 0 cyclone pub --topic Q_part --liveliness manual_by_participant:1000 --assert-every 300 \
  --count 4 --rate 0.5 --wait-readers 1 --linger 1 >"$out/pub-part.out" 2>&1 &
part=$!
wait "$pub" || fail "writer exit $?"
wait "$part" || fail "participant-liveliness writer exit $?"
wait "$auto" || fail "automatic writer exit $?"
ip netns exec "${NS_PREFIX}1" "$BIN/pubsub-recorder" ctl --path "$rec" stop >/dev/null || fail "ctl stop"
wait "$recorder" || fail "recorder exit $?"

peer 2 cyclone sub --topic Q_live --liveliness manual_by_topic:1000 --count 4 --timeout 30 \
  >"$out/sub.out" 2>&1 &
sub=$!
peer 2 cyclone sub --topic Q_auto --liveliness automatic:1000 --count 4 --timeout 30 \
  >"$out/sub-auto.out" 2>&1 &
sub_auto=$!
peer 2 cyclone sub --topic Q_part --liveliness manual_by_participant:1000 --count 4 --timeout 30 \
  >"$out/sub-part.out" 2>&1 &
sub_part=$!
ip netns exec "${NS_PREFIX}1" "$BIN/pubsub-replay" play "$rec" --domain "$DOMAIN" --nic veth1 \
  --wait-readers 1 --wait-timeout 20 -q >"$out/play.out" 2>&1 || fail "play exit $?"
wait "$sub" || fail "reader exit $?"
wait "$sub_auto" || fail "automatic reader exit $?"
wait "$sub_part" || fail "participant-liveliness reader exit $?"
for f in sub sub-auto sub-part; do
  grep -q '"event":"done","samples":4,"ok":true' "$out/$f.out" || fail "$f: not 4 intact samples"
  grep -q '"not_alive":1' "$out/$f.out" &&
    { fail "$f: the reader saw the replayed writer lose its liveliness"; grep liveliness "$out/$f.out"; }
done
[ $status -eq 0 ] && echo "liveliness: $(cat "$out"/sub*.out | grep -c '"event":"sample"') samples replayed, the three writers alive throughout"
exit $status
