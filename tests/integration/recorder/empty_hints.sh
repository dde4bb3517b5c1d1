#!/usr/bin/env bash
# An empty recording says why (issue 31 item 2). A Cyclone DDS writer publishes Q_RDataKS on domain
# D. A recorder whose topics.include is ["Q_Data*"] records nothing and names the topic it left
# out, at a stats line and at the end; a recorder on domain D+1 says, 3 s in and at the end, that
# it saw no participant on its domain and interface.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib/netns.sh"
. "$HERE/../lib/ddsperf.sh"
. "$HERE/../lib/peers.sh"
BIN=${BIN:?set BIN to the bin directory of the build}
DOMAIN=$((130 + $$ % 50))
OTHER=$((DOMAIN + 1))
netns_setup 2
addr=$(netns_addr 1)
netns_scratch
for name in filtered other; do
  domain=$DOMAIN include='["Q_Data*"]'
  [ $name = other ] && domain=$OTHER include='["*"]'
  echo '{"domain": '"$domain"', "interface": "veth1", "stats_interval_s": 1,
    "topics": {"include": '"$include"'}, "storage": {"path": "'"$out/$name"'"}}' >"$out/$name.json"
  netns_spawn 1 60 "$BIN/pubsub-recorder" --config "$out/$name.json" >"$out/$name.log" 2>&1
  eval "rec_$name=\$SPAWNED"
done
wait_for 10 "recordings" test -e "$out/filtered/index.sqlite3" -a -e "$out/other/index.sqlite3" ||
  fail "no recordings"
peer 0 cyclone pub --topic Q_RDataKS --count 0 --wait-readers 0 --linger 5 >"$out/pub.out" 2>&1 &
pub=$!
sleep 4.5  # past the "no participant" check (3 s) and a few stats lines
for name in filtered other; do
  ip netns exec "${NS_PREFIX}1" "$BIN/pubsub-recorder" ctl --path "$out/$name" stop >/dev/null ||
    fail "ctl stop $name"
  eval "wait \$rec_$name" || fail "$name: recorder exit $?"
done
wait "$pub" || fail "writer exit $?"

left='1 topic discovered and not recorded, left out by topics.include ["Q_Data*"]: Q_RDataKS (QosTest::Sample, 1 writer)'
grep -qF "$left" "$out/filtered.log" || fail "filtered: no left-out line: $(cat "$out/filtered.log")"
end='1 topic seen and not recorded, left out by topics.include ["Q_Data*"]: Q_RDataKS (QosTest::Sample, 1 writer)'
grep -qF "$end" "$out/filtered.log" || fail "filtered: no left-out line at the end"
[ "$(grep -c 'discovered and not recorded' "$out/filtered.log")" = 1 ] ||
  fail "filtered: the left-out topic named more than once"
grep -q "recorded 0 samples" "$out/filtered.log" || fail "filtered: recorded something"
grep -q "no participant seen" "$out/filtered.log" && fail "filtered: claims no participant"

none="no participant seen on domain $OTHER on interface veth1 ($addr) in 3 s: are the publishers on this domain, reachable through this interface, and is multicast allowed? (README: Troubleshooting)"
grep -qF "$none" "$out/other.log" || fail "other: no 3-s warning: $(cat "$out/other.log")"
grep -qE "no participant seen on domain $OTHER on interface veth1 \($addr\) in [4-9] s" \
  "$out/other.log" || fail "other: no warning at the end"
grep -q "not recorded, left out" "$out/other.log" && fail "other: left-out topics on an empty domain"
[ $status -eq 0 ] && { echo "empty recordings:"; grep -hE "not recorded|no participant" "$out"/*.log; }
exit $status
