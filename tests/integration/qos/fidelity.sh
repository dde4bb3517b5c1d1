#!/usr/bin/env bash
# Fidelity to the system recorded, policy by policy, between two vendors:
#   fidelity.sh FROM TO      FROM, TO: cyclone | fastdds | pubsub (tests/peers/*_qos_peer)
# Namespace 0 runs FROM's writers, one topic per policy (Q_<policy>), each offering that policy;
# namespace 1 runs pubsub-recorder (started before them, except for Q_durable, whose
# TRANSIENT_LOCAL writer has written everything before the recorder starts) and later
# pubsub-replay play; namespace 2 runs TO's readers, each requesting what its writer offered.
# Checked, per policy:
# - recorded: the exact number of samples (Q_durable: the 5 per instance the late recorder got
#   from the writer's history, seq 11..20) and, in `info --json`, the writer's QoS with the
#   policy's exact value;
# - replayed: with no option, every reader matches and gets every sample, payloads intact; the
#   instance states (Q_keyed: 3 disposed, 0 1 2 unregistered); a reader that asks for a
#   shorter deadline than recorded is refused and reports DEADLINE.
# Policies a vendor's peer cannot take are skipped for it, named: Fast DDS 2.9 refuses
# BY_SOURCE_TIMESTAMP destination order.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib/netns.sh"
. "$HERE/../lib/ddsperf.sh"
. "$HERE/../lib/peers.sh"
BIN=${BIN:?set BIN to the bin directory of the build}
FROM=${1:?FROM: cyclone, fastdds or pubsub}
TO=${2:?TO: cyclone, fastdds or pubsub}
DOMAIN=$((20 + $$ % 50))
for p in "$FROM" "$TO"; do
  [ -x "$BIN/${p}_qos_peer" ] || { echo "SKIP: $BIN/${p}_qos_peer is not built"; exit 77; }
done
netns_setup 3
out=$(mktemp -d) || exit 1  # removed on exit (KEEP=1 keeps it): only what this script made
[ -n "${KEEP:-}" ] && echo "output in $out"
trap 'netns_cleanup; [ -n "${KEEP:-}" ] || rm -rf "$out"' EXIT
status=0
fail() {
  echo "FAIL: $*"
  status=1
}


# name | writer's QoS options | reader's QoS options | recorded QoS (JSON subset of the writer's)
POLICIES=(
  "keyed||"'|{"reliability":"reliable"}'
  "best_effort|--reliability best_effort|--reliability best_effort"'|{"reliability":"best_effort"}'
  "ownership|--ownership exclusive:7|--ownership exclusive"'|{"ownership":"exclusive","ownership_strength":7}'
  "deadline|--deadline 2000|--deadline 2000"'|{"deadline_ns":2000000000}'
  "latency_budget|--latency-budget 10|--latency-budget 10"'|{"latency_budget_ns":10000000}'
  "liveliness|--liveliness manual_by_topic:3000|--liveliness manual_by_topic:3000"'|{"liveliness":{"kind":"manual_by_topic","lease_duration_ns":3000000000}}'
  "lifespan|--lifespan 1000|"'|{"lifespan_ns":1000000000}'
  "destination_order|--destination-order source|--destination-order source"'|{"destination_order":"by_source_timestamp"}'
  "presentation|--presentation topic|--presentation topic"'|{"presentation":{"access_scope":"topic","coherent_access":false,"ordered_access":false}}'
  "partition|--partition p1|--partition p1"'|{"partitions":["p1"]}'
  "data|--user-data hi --topic-data td --group-data gd|"'|{"user_data":"6869","topic_data":"7464","group_data":"6764"}'
  "xcdr2|--data-representation xcdr2|--data-representation xcdr2"'|{"data_representation":[2]}'
  "durable|--durability transient_local --history keep_last:5|--durability transient_local"'|{"durability":"transient_local"}'
)
supported() {  # supported POLICY VENDOR
  [ "$1" = destination_order ] && [ "$2" = fastdds ] && return 1
  return 0
}

# --- record ------------------------------------------------------------------------------------
rec=$out/rec
# Q_durable first: its writer writes 20 samples on 2 instances (keep_last 5) before any reader.
peer 0 "$FROM" pub --topic Q_durable --durability transient_local --history keep_last:5 --keys 2 \
  --count 20 --rate 200 --linger 30 >"$out/pub-durable.out" 2>&1 &
durable_pub=$!
wait_for 10 "the durable writer's 'written' line" grep -q '"written"' "$out/pub-durable.out" ||
  { fail "durable writer did not write"; cat "$out/pub-durable.out"; }
echo '{"domain": '"$DOMAIN"', "interface": "veth1", "storage": {"path": "'"$rec"'", "chunk_max_age_ms": 20}}' >"$out/r.json"
netns_spawn 1 120 "$BIN/pubsub-recorder" --config "$out/r.json" >"$out/rec.log" 2>&1
recorder=$SPAWNED
wait_for 10 "recording directory" test -e "$rec/index.sqlite3" || fail "no recording"
pubs=()
for entry in "${POLICIES[@]}"; do
  IFS='|' read -r name wargs rargs want <<<"$entry"
  [ "$name" = durable ] && continue
  supported "$name" "$FROM" || { echo "n/a: $name from $FROM"; continue; }
  extra=""
  [ "$name" = keyed ] && extra="--keys 4 --dispose 3 --unregister-rest"
  # shellcheck disable=SC2086
  peer 0 "$FROM" pub --topic "Q_$name" $wargs --count 20 --rate 100 --wait-readers 1 --timeout 30 \
    --linger 2 $extra >"$out/pub-$name.out" 2>&1 &
  pubs+=($!)
done
for p in "${pubs[@]}"; do wait "$p" || fail "a writer exited $? ($(grep -l '"ok":false' "$out"/pub-*.out))"; done
sleep 1
ip netns exec "${NS_PREFIX}1" "$BIN/pubsub-recorder" ctl --path "$rec" stop >/dev/null ||
  fail "ctl stop failed"
wait "$recorder" || fail "recorder exit $?"
kill "$durable_pub" 2>/dev/null
wait "$durable_pub" 2>/dev/null

"$BIN/pubsub-replay" info --json "$rec" >"$out/info.json" || fail "info --json failed"
check_recorded() {  # check_recorded NAME WANT_JSON SAMPLES
  python3 - "$out/info.json" "Q_$1" "$2" "$3" <<'PY'
import json, sys
info = json.load(open(sys.argv[1]))
topic, want, samples = sys.argv[2], json.loads(sys.argv[3]), int(sys.argv[4])
ws = [w for w in info["recorded_writers"] if w["topic"] == topic]
if len(ws) != 1:
    sys.exit(f"{topic}: {len(ws)} writers recorded, expected 1")
w = ws[0]
bad = [f"{k}={w['qos'].get(k)!r}, expected {v!r}" for k, v in want.items() if w["qos"].get(k) != v]
if w["samples"] != samples:
    bad.append(f"{w['samples']} samples recorded, expected {samples}")
if w["qos_from"] != "writer":
    bad.append("QoS not recorded per writer")
if bad:
    sys.exit(f"{topic}: " + "; ".join(bad))
PY
}
# A best-effort writer cannot know when the recorder has matched it (no acknowledgement): it
# waits until it has matched the recorder's reader, and its first samples may leave before the
# recorder has processed its announcement. They are neither recorded nor lost (DDS discovery);
# what is recorded must be the whole tail, from seq 1..9 on to 20, and it is replayed exactly.
seqs=$("$BIN/pubsub-replay" export "$rec" --topics Q_best_effort | python3 -c '
import json, sys
print(" ".join(str(json.loads(l)["seq"]) for l in sys.stdin))')
be_first=${seqs%% *}
be_n=$((21 - ${be_first:-21}))
if [ "$seqs" != "$(seq -s ' ' "${be_first:-1}" 20)" ] || [ "$be_n" -lt 12 ]; then
  fail "Q_best_effort recorded seq '$seqs', expected k..20 with k <= 9"
fi
[ "$be_n" -lt 20 ] && echo "note: the best-effort writer's first $((20 - be_n)) samples preceded the recorder's match"
for entry in "${POLICIES[@]}"; do
  IFS='|' read -r name wargs rargs want <<<"$entry"
  supported "$name" "$FROM" || continue
  n=20
  [ "$name" = best_effort ] && n=$be_n
  [ "$name" = keyed ] && n=24      # 20 samples, a dispose, three unregisters
  [ "$name" = durable ] && n=10    # the late recorder got the history: 5 per instance
  check_recorded "$name" "$want" "$n" || fail "recorded from $FROM: $name"
done
seqs=$("$BIN/pubsub-replay" export "$rec" --topics Q_durable | python3 -c '
import json, sys
print(" ".join(str(json.loads(l)["seq"]) for l in sys.stdin))')
[ "$seqs" = "11 12 13 14 15 16 17 18 19 20" ] || fail "Q_durable recorded seq '$seqs', expected 11..20"

# --- replay ------------------------------------------------------------------------------------
subs=()
for entry in "${POLICIES[@]}"; do
  IFS='|' read -r name wargs rargs want <<<"$entry"
  supported "$name" "$FROM" || continue
  # A reader that cannot ask for the policy asks for the default, which the writer satisfies.
  supported "$name" "$TO" || { echo "n/a: $name requested by $TO: a default reader"; rargs=""; }
  n=20
  [ "$name" = durable ] && n=10
  [ "$name" = best_effort ] && n=$be_n
  # shellcheck disable=SC2086
  peer 2 "$TO" sub --topic "Q_$name" $rargs --count "$n" --timeout 60 --linger 1 \
    >"$out/sub-$name.out" 2>"$out/sub-$name.err" &
  subs+=("$name:$!")
done
# A reader asking for a shorter deadline than the recorded writer offered: never matched.
peer 2 "$TO" sub --topic Q_deadline --deadline 1000 --count 0 --timeout 25 \
  >"$out/sub-deadline-strict.out" 2>&1 &
strict=$!
sleep 2
ip netns exec "${NS_PREFIX}1" "$BIN/pubsub-replay" play "$rec" --domain "$DOMAIN" --nic veth1 \
  --wait-readers 1 --wait-timeout 40 -q >"$out/play.out" 2>&1
rc=$?
[ $rc -eq 0 ] || { fail "play exit $rc"; tail -5 "$out/play.out"; }
for s in "${subs[@]}"; do
  name=${s%%:*}
  wait "${s#*:}" || { fail "into $TO: $name: reader exit $?"; tail -n 3 "$out/sub-$name.out" "$out/sub-$name.err"; }
  n=20
  [ "$name" = durable ] && n=10
  [ "$name" = best_effort ] && n=$be_n
  grep -q "\"event\":\"done\",\"samples\":$n,\"ok\":true" "$out/sub-$name.out" ||
    { fail "into $TO: $name: not $n intact samples"; tail -2 "$out/sub-$name.out"; }
done
for id in 0 1 2; do
  grep -q "\"event\":\"instance\",\"id\":$id,\"state\":\"unregistered\"" "$out/sub-keyed.out" ||
    fail "into $TO: instance $id not unregistered"
done
grep -q '"event":"instance","id":3,"state":"disposed"' "$out/sub-keyed.out" ||
  fail "into $TO: instance 3 not disposed"
# The stricter reader would wait out its --timeout 25: once it has reported the incompatibility
# (at discovery, during the replay) it is stopped.
wait_for 10 "the stricter deadline reader's incompatible_qos event" \
  grep -q '"event":"incompatible_qos"' "$out/sub-deadline-strict.out"
kill -TERM "$strict" 2>/dev/null
wait "$strict"
grep -q '"event":"incompatible_qos","policy":"DEADLINE"' "$out/sub-deadline-strict.out" ||
  { fail "into $TO: the stricter deadline reader reported no DEADLINE incompatibility"; cat "$out/sub-deadline-strict.out"; }
grep -q '"event":"sample"' "$out/sub-deadline-strict.out" &&
  fail "into $TO: the stricter deadline reader got samples"
echo "$FROM -> $TO: $(grep -c '"event":"sample"' "$out"/sub-*.out | awk -F: '{s+=$2} END {print s}') samples replayed into $TO readers"
exit $status
