#!/usr/bin/env bash
# Writers that go away with samples the recorder still held back: those samples are counted as
# lost and stored as a gap, not dropped in silence. The recorder's registrar is held back 8 s
# (--test-registrar-delay-ms), so each reliable writer's samples wait in the recorder
# unacknowledged. Every writer writes 20 samples:
# - Q_gone_pubsub (libpubsub, pubsub_qos_peer), Q_gone_cyclone (Cyclone DDS, which waits up to
#   1 s for acknowledgements before it deletes a writer) and Q_gone_fastdds (Fast DDS 2.9, whose
#   peer waits for acknowledgements up to --timeout: 1 s here) are deleted 0.5 s later;
# - Q_back (libpubsub, participant lease 2 s) stays; its link goes down until the recorder has
#   dropped it (lease), then up: matched again, it sends its 20 samples again;
# - Q_kept stays 12 s.
# Checked: the recorder logs samples 1 to 20 of Q_gone_* and of Q_back as not recorded, one line
# per departure (libpubsub's own line is left to the listener it told); its last
# line says 40 samples and 60 lost (Q_back's 20 are taken off `lost` when it is back);
# `pubsub-replay info --json` has Q_gone_* with 0 samples and 20 lost each (their gaps 1-20),
# Q_back and Q_kept with 20 and 0; the recorder's storage line at the end agrees with info's chunks,
# segments and bytes; `verify` passes.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib/netns.sh"
. "$HERE/../lib/ddsperf.sh"
. "$HERE/../lib/peers.sh"
BIN=${BIN:?set BIN to the bin directory of the build}
DOMAIN=$((180 + $$ % 50))
GONE=(pubsub cyclone fastdds)
for v in "${GONE[@]}"; do
  [ -x "$BIN/${v}_qos_peer" ] || { echo "SKIP: $BIN/${v}_qos_peer is not built"; exit 77; }
done
netns_setup 2
netns_scratch
rec=$out/rec
netns_spawn 1 60 "$BIN/pubsub-recorder" -o "$rec" -d "$DOMAIN" -i veth1 --stats-interval 1 \
  --test-registrar-delay-ms 8000 >"$out/rec.log" 2>&1
recorder=$SPAWNED
wait_for 10 "recording directory" test -e "$rec/index.sqlite3" || fail "no recording"
gone=()
for v in "${GONE[@]}"; do
  wait_acks=()
  [ "$v" = fastdds ] && wait_acks=(--timeout 1)
  peer 0 "$v" pub --topic "Q_gone_$v" --count 20 --rate 200 --wait-readers 1 --linger 0.5 \
    "${wait_acks[@]}" >"$out/gone_$v.out" 2>&1 &
  gone+=($!)
done
peer 0 pubsub pub --topic Q_back --count 20 --rate 200 --wait-readers 1 --linger 14 \
  --participant-lease 2 >"$out/back.out" 2>&1 &
back=$!
peer 0 pubsub pub --topic Q_kept --count 20 --rate 200 --wait-readers 1 --linger 12 \
  >"$out/kept.out" 2>&1 &
kept=$!
for i in "${!GONE[@]}"; do
  wait "${gone[$i]}" || fail "Q_gone_${GONE[$i]} writer exit $?"
done
for v in "${GONE[@]}"; do
  wait_for 10 "Q_gone_$v's loss logged" grep -q "on Q_gone_$v gone with samples 1 to 20 not recorded" "$out/rec.log" ||
    fail "Q_gone_$v: no loss logged: $(grep "Q_gone_$v" "$out/rec.log")"
done
# Q_back's link down until the recorder drops it (before the registrar is done), then up.
ip -n "${NS_PREFIX}br" link set port0 down
wait_for 6 "Q_back dropped" grep -q "on Q_back gone with samples 1 to 20 not recorded" "$out/rec.log" ||
  fail "Q_back: not dropped with its samples: $(grep Q_back "$out/rec.log")"
ip -n "${NS_PREFIX}br" link set port0 up
wait "$back" || fail "Q_back writer exit $?"
wait "$kept" || fail "Q_kept writer exit $?"
ip netns exec "${NS_PREFIX}1" "$BIN/pubsub-recorder" ctl --path "$rec" stop >/dev/null || fail "ctl stop"
wait "$recorder" || fail "recorder exit $?"
grep -q "recorded 40 samples (.*) from 5 writers on 5 topics in [0-9.]* s, 60 lost," "$out/rec.log" ||
  fail "the recorder's summary: $(grep 'recorded .* samples' "$out/rec.log")"
# One line per departure: the recorder's; libpubsub leaves it to the listener it told.
n=$(grep -c "gone with" "$out/rec.log")
[ "$n" = 4 ] || fail "$n lines with 'gone with', expected 4 (the recorder's, one per departure)"
"$BIN/pubsub-replay" info "$rec" --json >"$out/info.json" || fail "info exit $?"
storage_line=$(grep "storage: wrote" "$out/rec.log")
python3 - "$out/info.json" "$storage_line" <<'PY' || fail "info: $(cat "$out/info.json"), $storage_line"
import json, re, sys
j = json.load(open(sys.argv[1]))
got = sorted((t["name"], t["samples"], t["lost"]) for t in j["topics"])
want = [("Q_back", 20, 0), ("Q_gone_cyclone", 0, 20), ("Q_gone_fastdds", 0, 20),
        ("Q_gone_pubsub", 0, 20), ("Q_kept", 20, 0)]
assert got == want, got
# The recorder's storage line at the end says what the files hold: every chunk indexed, the
# segment files' bytes, and (fsync per chunk) at least one fdatasync.
m = re.search(r"storage: wrote (\d+) chunks \((\d+) with O_DIRECT\) into (\d+) segment files, "
              r"(\d+) bytes; (\d+) fdatasyncs$", sys.argv[2])
assert m, sys.argv[2]
chunks, direct, segments, size, syncs = map(int, m.groups())
assert (chunks, segments, size) == (j["chunks"], j["segments"], j["disk_bytes"]), (m.groups(), j)
assert direct == 0 and syncs >= 1, m.groups()
PY
"$BIN/pubsub-replay" verify "$rec" >"$out/verify.txt" 2>&1 || fail "verify exit $?: $(cat "$out/verify.txt")"
[ $status -eq 0 ] && { echo "what the recorder logged:"; grep "gone with\|matched\|recorded .* samples" "$out/rec.log"; }
exit $status
