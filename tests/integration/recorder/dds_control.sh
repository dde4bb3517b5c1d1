#!/usr/bin/env bash
# pubsub-recorder ctl --dds against a recorder with control.dds in a namespace (no control
# socket), pubsub-perftest publishing 200 samples/s from a third namespace:
# - a client whose address is in control.allow: status (exit 0, the status JSON, no control
#   topics in it), tag, a refusal (exit 1 with the reason), stop (the recorder exits 0);
# - a client in the namespace of the publisher, not in control.allow: exit 1, "participant GUID
#   (ADDRESS) is not in control.allow", and the recorder logs the warning with the same GUID;
# - the recording has the tag and only the perftest topic: no pubsub_recorder/control/* topic
#   (neither the clients' request writers nor the recorder's own reply writer were recorded);
# - a second recorder whose control.allow does not hold the first client's address refuses it;
# - no recorder on the domain: exit 2 "no recorder answers on domain N" within --timeout;
# - --dds with a socket option, --domain without --dds: exit 2.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib/netns.sh"
BIN=${BIN:?set BIN to the bin directory of the build}
netns_setup 3
out=$(mktemp -d) || exit 1  # removed on exit: only what this script made
trap 'kill $rec $pub 2>/dev/null; wait 2>/dev/null; netns_cleanup; rm -rf "$out"' EXIT
rec="" pub=""
status=0
fail() { echo "FAIL: $*"; status=1; }
field() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))' "$@"; }
client=$(netns_addr 0) other=$(netns_addr 2)
# ctl NS ARGS...: pubsub-recorder ctl --dds on domain 7 from namespace NS.
ctl() {
  local ns=$1
  shift
  netns_run "$ns" 30 "$BIN/pubsub-recorder" ctl --dds --domain 7 --interface "veth$ns" --timeout 10 "$@"
}
not_allowed_re() { # the refusal of a participant at address $2 for command $1
  echo "^pubsub-recorder ctl: $1: participant ([0-9a-f]{24}:000001c1) \\(${2//./\\.}\\) is not in control\\.allow\$"
}

cat >"$out/r.json" <<EOF
{"domain": 7, "interface": "veth1", "stats_interval_s": 1,
 "storage": {"path": "$out/rec", "chunk_max_age_ms": 20},
 "control": {"socket": "", "dds": true, "allow": ["$client/32", "127.0.0.1"]}}
EOF
netns_spawn 1 90 "$BIN/pubsub-recorder" --config "$out/r.json" >"$out/rec.log" 2>&1
rec=$SPAWNED
netns_spawn 2 80 "$BIN/pubsub-perftest" -pub -domain 7 -nic veth2 -datalen 100 -pubRate 200 \
  -exec 60 -noPrint 2>"$out/pub.err"
pub=$SPAWNED
wait_for 20 "matched writer in the recorder's log" \
  grep -q "writer .* on PubsubPerftest_Data matched" "$out/rec.log" || { tail "$out/rec.log"; exit 1; }
grep -qE "info DDS control on domain 7 \\(allow $client/32, 127\\.0\\.0\\.1/32\\)$" "$out/rec.log" ||
  fail "no 'DDS control on domain 7 (allow $client/32, 127.0.0.1/32)' line in the log"

# 1. An allowed client: status, tag, a refusal by the command itself.
s=$(ctl 0 status --json 2>"$out/ctl.err"); rc=$?
[ $rc = 0 ] || fail "status exit $rc: $(cat "$out/ctl.err")"
keys=$(echo "$s" | field 'sorted(d.keys())')
want="['armed', 'bytes', 'clock_steps', 'control_refused', 'discovery_refused', 'free_bytes', 'held_back', 'incompatible_qos', 'lost', 'mode', 'path', 'paused', 'queue_fill', 'recording_id', 'samples', 'samples_shm', 'seconds', 'skipped', 'topics', 'wall_clock_offset_s', 'writers', 'writers_elsewhere']"
[ "$keys" = "$want" ] || fail "status keys $keys, expected $want"
[ "$(echo "$s" | field 'sorted(d["topics"].keys())')" = "['PubsubPerftest_Data']" ] ||
  fail "status topics: $s"
[ "$(echo "$s" | field 'd["samples"] > 0 and d["writers"] == 1 and d["path"] == sys.argv[2]' "$out/rec")" = True ] ||
  fail "status: $s"
m=$(ctl 0 tag dds-mark --note "over dds") || fail "tag exit $?"
case "$m" in 'tag "dds-mark" at 20'*Z) ;; *) fail "tag said '$m'" ;; esac
e=$(ctl 0 pause --topic nosuch 2>&1); rc=$?
[ $rc = 1 ] && [ "$e" = 'pubsub-recorder ctl: pause: no topic "nosuch" is recorded' ] ||
  fail "pause --topic nosuch: exit $rc, '$e'"

# 2. A client whose address is not in control.allow: refused, warned, nothing done.
e=$(ctl 2 pause 2>&1); rc=$?
re=$(not_allowed_re pause "$other")
[ $rc = 1 ] && [[ "$e" =~ $re ]] || fail "client at $other: exit $rc, '$e' (expected 1, /$re/)"
guid=${BASH_REMATCH[1]:-none}
wait_for 5 "warning for $guid in the log" grep -qF \
  "warning DDS control: refused {\"cmd\":\"pause\"} from participant $guid ($other): not in control.allow" \
  "$out/rec.log" || status=1
[ "$(ctl 0 status --json | field 'd["paused"], d["control_refused"]')" = "(False, {'bad_signature': 0, 'not_allowed': 1, 'replayed': 0, 'stale': 0, 'unsigned': 0})" ] ||
  fail "the refused pause paused the recorder, or was not counted: $(ctl 0 status --json)"

# 3. stop over DDS: the reply, then the recorder ends with exit 0.
m=$(ctl 0 stop) && [ "$m" = "stopping: the recording is being closed" ] || fail "stop said '$m'"
wait $rec; rc=$?; rec=""
[ $rc = 0 ] || { fail "recorder exit $rc after ctl --dds stop"; tail "$out/rec.log"; }
kill $pub 2>/dev/null; wait $pub 2>/dev/null; pub=""
! grep -q "on pubsub_recorder/control" "$out/rec.log" ||
  fail "the recorder matched a control topic: $(grep "on pubsub_recorder/control" "$out/rec.log")"

# 4. The recording: the tag, and only the perftest topic.
"$BIN/pubsub-replay" verify "$out/rec" >"$out/verify.txt" || { fail "verify exit $?"; cat "$out/verify.txt"; }
"$BIN/pubsub-replay" info --json "$out/rec" | python3 -c '
import json, sys
d = json.load(sys.stdin)
bad = []
topics = sorted(t["name"] for t in d["topics"])
if topics != ["PubsubPerftest_Data"]: bad.append("topics %r" % topics)
marks = [(m["kind"], m["name"], m["note"]) for m in d["marks"]]
if marks != [("tag", "dds-mark", "over dds")]: bad.append("marks %r" % marks)
for b in bad: print("FAIL: info:", b)
sys.exit(1 if bad else 0)' || status=1

# 5. A recorder whose control.allow does not hold the client's address refuses it.
cat >"$out/r2.json" <<EOF
{"domain": 7, "interface": "veth1",
 "storage": {"path": "$out/rec2"},
 "control": {"socket": "", "dds": true, "allow": ["10.0.0.0/8"]}}
EOF
netns_spawn 1 60 "$BIN/pubsub-recorder" --config "$out/r2.json" >"$out/rec2.log" 2>&1
rec=$SPAWNED
wait_for 20 "DDS control line in the second recorder's log" \
  grep -q "DDS control on domain 7 (allow 10.0.0.0/8)$" "$out/rec2.log" || { tail "$out/rec2.log"; status=1; }
e=$(ctl 0 stop 2>&1); rc=$?
re=$(not_allowed_re stop "$client")
[ $rc = 1 ] && [[ "$e" =~ $re ]] || fail "second recorder: exit $rc, '$e' (expected 1, /$re/)"
guid=${BASH_REMATCH[1]:-none}
wait_for 5 "warning for $guid in the second log" grep -qF \
  "warning DDS control: refused {\"cmd\":\"stop\"} from participant $guid ($client): not in control.allow" \
  "$out/rec2.log" || status=1
kill -0 $rec 2>/dev/null || fail "the refused stop stopped the second recorder"
kill -TERM $rec; wait $rec; rc=$?; rec=""
[ $rc = 0 ] || fail "second recorder exit $rc after SIGTERM"

# 6. No recorder on the domain: exit 2 once --timeout is over.
t0=$(date +%s%N)
e=$(netns_run 0 30 "$BIN/pubsub-recorder" ctl --dds --domain 8 --interface veth0 --timeout 2 status --json 2>&1); rc=$?
took_ms=$((($(date +%s%N) - t0) / 1000000))
[ $rc = 2 ] && [ "$e" = "pubsub-recorder ctl: no recorder answers on domain 8" ] ||
  fail "no recorder: exit $rc, '$e'"
[ $took_ms -ge 2000 ] && [ $took_ms -lt 6000 ] || fail "no recorder: took $took_ms ms with --timeout 2"

# 7. Usage.
e=$("$BIN/pubsub-recorder" ctl --dds --socket "$out/x.sock" status --json 2>&1); rc=$?
[ $rc = 2 ] && [ "$e" = "pubsub-recorder ctl: --dds sends the command over DDS: give no --socket, --path or --config with it" ] ||
  fail "--dds --socket: exit $rc, '$e'"
e=$("$BIN/pubsub-recorder" ctl --domain 7 --socket "$out/x.sock" status --json 2>&1); rc=$?
[ $rc = 2 ] && [ "$e" = "pubsub-recorder ctl: --domain, --interface, --key-file, --set and --members go with --dds" ] ||
  fail "--domain without --dds: exit $rc, '$e'"
e=$("$BIN/pubsub-recorder" ctl --set rig --path "$out" status 2>&1); rc=$?
[ $rc = 2 ] && [ "$e" = "pubsub-recorder ctl: --domain, --interface, --key-file, --set and --members go with --dds" ] ||
  fail "--set without --dds: exit $rc, '$e'"
e=$("$BIN/pubsub-recorder" ctl --dds --members 2 --timeout 1 status 2>&1); rc=$?
[ $rc = 2 ] && [ "$e" = "pubsub-recorder ctl: --members goes with --set" ] ||
  fail "--members without --set: exit $rc, '$e'"
[ $status = 0 ] && echo "dds control: ok (refused participant $guid)"
exit $status
