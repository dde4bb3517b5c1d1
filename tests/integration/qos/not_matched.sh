#!/usr/bin/env bash
# A writer the recorder cannot read is recorded as such, not as nothing: a libpubsub writer that
# offers only the XML data representation (id 1) beside one that offers XCDR1. pubsub-recorder
# records the XCDR1 writer's samples, logs the XML writer as not recorded, counts it in `ctl
# status` ("incompatible_qos") and at the end, and `pubsub-replay info` lists it with the reason
# (text and --json, "writers_not_matched": 1).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib/netns.sh"
. "$HERE/../lib/ddsperf.sh"
. "$HERE/../lib/peers.sh"
BIN=${BIN:?set BIN to the bin directory of the build}
DOMAIN=$((130 + $$ % 50))
netns_setup 2
netns_scratch
rec=$out/rec
echo '{"domain": '"$DOMAIN"', "interface": "veth1", "storage": {"path": "'"$rec"'", "chunk_max_age_ms": 20}}' >"$out/r.json"
netns_spawn 1 60 "$BIN/pubsub-recorder" --config "$out/r.json" >"$out/rec.log" 2>&1
recorder=$SPAWNED
wait_for 10 "recording directory" test -e "$rec/index.sqlite3" || fail "no recording"
# The XML writer waits for no reader (none can match it) and lingers until the recorder saw it.
peer 0 pubsub pub --topic Q_xml --data-representation xml --count 3 --wait-readers 0 \
  --linger 3 >"$out/xml.out" 2>&1 &
xml=$!
peer 0 pubsub pub --topic Q_cdr --count 5 --wait-readers 1 --linger 1 >"$out/cdr.out" 2>&1 &
cdr=$!
wait "$cdr" || fail "XCDR1 writer exit $?"
wait "$xml" || fail "XML writer exit $?"
ctl() { ip netns exec "${NS_PREFIX}1" "$BIN/pubsub-recorder" ctl --path "$rec" "$@"; }
ctl status --json >"$out/status.json" || fail "ctl status --json"
grep -q '"incompatible_qos":{"DATA_REPRESENTATION":1}' "$out/status.json" ||
  fail "ctl status --json does not count the XML writer: $(cat "$out/status.json")"
ctl stop >/dev/null || fail "ctl stop"
wait "$recorder" || fail "recorder exit $?"
grep -q "on Q_xml not recorded: DATA_REPRESENTATION: requested XCDR1|XCDR2, offered XML" \
  "$out/rec.log" || fail "the recorder did not log the XML writer"
grep -q "1 writers not recorded" "$out/rec.log" || fail "the recorder's totals miss the XML writer"

"$BIN/pubsub-replay" info "$rec" >"$out/info.txt" || fail "info exit $?"
"$BIN/pubsub-replay" info "$rec" --json >"$out/info.json" || fail "info --json exit $?"
grep -q "^total: 2 topics, 5 samples, .*, 2 writers (1 not matched), 0 lost" "$out/info.txt" ||
  fail "info totals: $(grep '^total' "$out/info.txt")"
grep -Eq "^Q_xml +[0-9a-f]{32} +0 +not recorded \(DATA_REPRESENTATION: requested XCDR1\|XCDR2, offered XML\); " \
  "$out/info.txt" || fail "info does not list the XML writer as not recorded: $(cat "$out/info.txt")"
python3 - "$out/info.json" <<'PY' || fail "info --json"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["writers_not_matched"] == 1, j["writers_not_matched"]
w = {x["topic"]: x for x in j["recorded_writers"]}
assert w["Q_xml"]["samples"] == 0 and w["Q_xml"]["not_matched"] == \
    "DATA_REPRESENTATION: requested XCDR1|XCDR2, offered XML", w["Q_xml"]
assert w["Q_xml"]["qos"]["data_representation"] == [1], w["Q_xml"]["qos"]
assert w["Q_cdr"]["samples"] == 5 and w["Q_cdr"]["not_matched"] is None, w["Q_cdr"]
PY
[ $status -eq 0 ] && echo "not matched: the XML writer listed with its reason, the XCDR1 writer's 5 samples recorded"
exit $status
