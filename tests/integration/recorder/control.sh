#!/usr/bin/env bash
# pubsub-recorder ctl against a recorder in a namespace, with pubsub-perftest publishing 2000
# samples/s: status JSON shape; pause stops the counts and resume restarts them (the gap is a
# pause in the index, not loss); split makes a new segment; a tag shows in info and works as
# --start tag:NAME; bad commands exit 1 with the reason; a second recorder on the same socket is
# refused (exit 2, nothing created); an unreachable socket is exit 2; a recorder with
# control.armed matches the writer and records nothing until `ctl start --id`, whose mark is in
# its recording; stop ends the recorder with exit 0 and a recording that verifies. The
# Prometheus endpoint (metrics.listen) is scraped with curl while recording and while paused. The
# recorder's threads carry their names.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib/netns.sh"
BIN=${BIN:?set BIN to the bin directory of the build}
netns_setup 2
out=$(mktemp -d) || exit 1  # removed on exit: only what this script made
trap 'kill $rec $pub $armed 2>/dev/null; wait 2>/dev/null; netns_cleanup; rm -rf "$out"' EXIT
rec="" pub="" armed=""
status=0
fail() { echo "FAIL: $*"; status=1; }
sock="$out/ctl.sock"
ctl() { "$BIN/pubsub-recorder" ctl --socket "$sock" "$@"; }
field() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }

cat >"$out/r.json" <<EOF
{"domain": 4, "interface": "veth1", "stats_interval_s": 1,
 "storage": {"path": "$out/rec", "chunk_max_age_ms": 20},
 "control": {"socket": "$sock"}, "metrics": {"listen": "127.0.0.1:9464"}}
EOF
netns_spawn 1 90 "$BIN/pubsub-recorder" --config "$out/r.json" >"$out/rec.log" 2>&1
rec=$SPAWNED
netns_spawn 0 80 "$BIN/pubsub-perftest" -pub -domain 4 -nic veth0 -datalen 200 -pubRate 2000 \
  -exec 60 -noPrint 2>"$out/pub.err"
pub=$SPAWNED
wait_for 20 "matched writer in the recorder's log" \
  grep -q "writer .* on PubsubPerftest_Data matched" "$out/rec.log" || { tail "$out/rec.log"; exit 1; }
[ "$(stat -c %a "$sock")" = 600 ] || fail "control socket mode $(stat -c %a "$sock"), expected 600"
sleep 1

# 1. status: one JSON object with the documented keys.
s=$(ctl status --json) || fail "status exit $?"
keys=$(echo "$s" | field 'sorted(d.keys())')
want="['armed', 'bytes', 'clock_steps', 'discovery_refused', 'free_bytes', 'held_back', 'incompatible_qos', 'lost', 'mode', 'path', 'paused', 'queue_fill', 'recording_id', 'samples', 'samples_shm', 'seconds', 'skipped', 'topics', 'wall_clock_offset_s', 'writers', 'writers_elsewhere']"
[ "$keys" = "$want" ] || fail "status keys $keys, expected $want"
tkeys=$(echo "$s" | field 'sorted(d["topics"]["PubsubPerftest_Data"].keys())')
[ "$tkeys" = "['bytes', 'lost', 'paused', 'samples', 'skipped', 'writers']" ] || fail "topic keys $tkeys"
[ "$(echo "$s" | field 'd["samples"] > 0 and d["samples"] == d["topics"]["PubsubPerftest_Data"]["samples"]')" = True ] ||
  fail "status samples: $s"
[ "$(echo "$s" | field 'd["paused"]')" = False ] || fail "paused before pause: $s"

# 1b. metrics: the same counters in the Prometheus text format.
scrape() { netns_exec 1 curl -sS -D "$out/headers" "http://127.0.0.1:9464$1"; }
metric() { awk -v n="$1" '$1 == n { print $2 }' "$out/metrics"; }
scrape /metrics >"$out/metrics" || fail "curl /metrics exit $?"
grep -qi '^Content-Type: text/plain; version=0.0.4; charset=utf-8' "$out/headers" || fail "content type: $(cat "$out/headers")"
n1=$(metric pubsub_recorder_samples_total)
t1=$(metric 'pubsub_recorder_topic_samples_total{topic="PubsubPerftest_Data"}')
[ -n "$n1" ] && [ "$n1" -gt 0 ] && [ -n "$t1" ] && [ "$t1" -gt 0 ] || fail "metrics: samples '$n1', topic '$t1'"
[ "$(metric pubsub_recorder_paused)" = 0 ] && [ "$(metric pubsub_recorder_lost_total)" = 0 ] &&
  [ "$(metric pubsub_recorder_writers)" = 1 ] || fail "metrics: $(cat "$out/metrics")"
for name in bytes_total held_back_total skipped_total queue_fill_ratio uptime_seconds; do
  grep -q "^# TYPE pubsub_recorder_$name " "$out/metrics" || fail "metrics: no pubsub_recorder_$name"
done
sleep 1
scrape /metrics >"$out/metrics"
n2=$(metric pubsub_recorder_samples_total)
[ "$n2" -ge $((n1 + 1000)) ] || fail "metrics: samples_total $n1 -> $n2 in 1 s at 2000/s"
code=$(netns_exec 1 curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:9464/)
[ "$code" = 404 ] || fail "GET / answered $code, expected 404"

# 1c. threads: each named for its role (README "Threads"), as top -H and perf show them.
names=""
for p in $(pgrep -f "$out/r.json"); do
  [ "$(cat /proc/$p/comm 2>/dev/null)" = pubsub-recorder ] && names=$(cat /proc/$p/task/*/comm | sort | tr '\n' ' ')
done
want="pubsub-events pubsub-recorder pubsub-recv pubsub-recv-uc pubsub-shm rec-control rec-metrics rec-registrar rec-signals storage-sync storage-writer "
[ "$names" = "$want" ] || fail "recorder threads: '$names', expected '$want'"

# 2. pause: the counts stop; a second pause is refused; resume: they grow again.
m=$(ctl pause) && [ "$m" = "paused every topic" ] || fail "pause said '$m'"
sleep 0.3
a=$(ctl status --json | field 'd["samples"]')
sleep 1.5
s=$(ctl status --json)
b=$(echo "$s" | field 'd["samples"]')
[ "$a" = "$b" ] || fail "samples grew while paused: $a -> $b"
[ "$(echo "$s" | field 'd["paused"] and d["skipped"] >= 2000 and d["topics"]["PubsubPerftest_Data"]["paused"]')" = True ] ||
  fail "paused status: $s"
scrape /metrics >"$out/metrics"
[ "$(metric pubsub_recorder_paused)" = 1 ] && [ "$(metric 'pubsub_recorder_topic_paused{topic="PubsubPerftest_Data"}')" = 1 ] ||
  fail "metrics while paused: $(grep paused "$out/metrics")"
e=$(ctl pause 2>&1); rc=$?
[ $rc = 1 ] && [ "$e" = "pubsub-recorder ctl: pause: already paused" ] || fail "second pause: exit $rc, '$e'"
m=$(ctl resume) && [ "$m" = "resumed every topic" ] || fail "resume said '$m'"
sleep 1.5
c=$(ctl status --json | field 'd["samples"]')
[ "$c" -ge $((b + 2000)) ] || fail "samples after resume $c, expected >= $((b + 2000))"
e=$(ctl resume 2>&1); rc=$?
[ $rc = 1 ] && [ "$e" = "pubsub-recorder ctl: resume: not paused" ] || fail "second resume: exit $rc, '$e'"

# 3. split and tag.
m=$(ctl split) && [ "$m" = "recording goes on in segment 2" ] || fail "split said '$m'"
sleep 0.5
m=$(ctl tag engine-start --note "ignition") || fail "tag exit $?"
case "$m" in 'tag "engine-start" at 20'*Z) ;; *) fail "tag said '$m'" ;; esac
sleep 1

# 4. refusals (exit 1, the reason) and an unreachable socket (exit 2).
check_refused() {
  local want=$1 e rc
  shift
  e=$(ctl "$@" 2>&1); rc=$?
  [ $rc = 1 ] && [ "$e" = "$want" ] || fail "ctl $*: exit $rc, '$e' (expected 1, '$want')"
}
check_refused 'pubsub-recorder ctl: pause: no topic "nosuch" is recorded' pause --topic nosuch
check_refused 'pubsub-recorder ctl: tag: a tag name has 1 to 256 bytes' tag ""
check_refused 'pubsub-recorder ctl: snapshot: this recorder is not in snapshot mode ("mode": "snapshot")' snapshot
check_refused 'pubsub-recorder ctl: start: not armed: recording since it started' start
r=$(python3 - "$sock" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
s.sendall(b'not json\n{"cmd":"fly"}\n')
f = s.makefile()
print(f.readline().strip()); print(f.readline().strip())
PY
)
want='{"error":"a request is one JSON object per line, e.g. {\"cmd\":\"status\"}","ok":false}
{"error":"unknown command \"fly\" (commands: status, start, pause, resume, split, tag, snapshot, stop)","ok":false}'
[ "$r" = "$want" ] || fail "raw requests answered '$r'"
e=$("$BIN/pubsub-recorder" ctl --socket "$out/none.sock" status --json 2>&1); rc=$?
[ $rc = 2 ] && [ "$e" = "pubsub-recorder ctl: no recorder is running on $out/none.sock ($out/none.sock: No such file or directory)" ] ||
  fail "unreachable socket: exit $rc, '$e'"

echo '{"storage": {"path": "'"$out"'/rec-%Y%m%d"}}' >"$out/strftime.json"
e=$("$BIN/pubsub-recorder" ctl --config "$out/strftime.json" status --json 2>&1); rc=$?
[ $rc = 2 ] && [ "$e" = "pubsub-recorder ctl: $out/strftime.json: storage.path \"$out/rec-%Y%m%d\" has % conversions, so the socket's directory is known to the running recorder only: give --path DIR, or set control.socket to an absolute path (e.g. /run/pubsub-recorder/NAME/control.sock)" ] ||
  fail "ctl --config with a strftime storage.path: exit $rc, '$e'"
# 5. A second recorder on the same socket: refused before anything is created.
sed "s#$out/rec#$out/rec2#" "$out/r.json" >"$out/r2.json"
e=$(netns_run 1 20 "$BIN/pubsub-recorder" --config "$out/r2.json" 2>&1); rc=$?
[ $rc = 2 ] || fail "second recorder exit $rc, expected 2"
echo "$e" | grep -q "pubsub-recorder: another recorder listens on control socket $sock$" ||
  fail "second recorder said: $e"
[ ! -e "$out/rec2" ] || fail "the refused recorder created $out/rec2"

# 5b. An armed recorder (control.armed) beside it: matched, nothing recorded until start.
asock="$out/armed.sock"
actl() { "$BIN/pubsub-recorder" ctl --socket "$asock" "$@"; }
netns_spawn 1 60 "$BIN/pubsub-recorder" --domain 4 --interface veth1 --path "$out/armed" \
  --set control.armed=true --set "control.socket=\"$asock\"" --set storage.chunk_max_age_ms=20 \
  >"$out/armed.log" 2>&1
armed=$SPAWNED
wait_for 20 "the armed recorder matching the writer" \
  grep -q "writer .* on PubsubPerftest_Data matched" "$out/armed.log" || tail "$out/armed.log"
grep -q "armed: matching writers, recording nothing until a start command" "$out/armed.log" ||
  fail "the armed recorder's log does not say it is armed"
sleep 1
s=$(actl status --json) || fail "armed status exit $?"
[ "$(echo "$s" | field '(d["armed"], d["paused"], d["samples"], d["skipped"] >= 1000, d["recording_id"])')" = "(True, False, 0, True, '')" ] ||
  fail "armed status: $s"
actl status | head -1 | grep -q "; ARMED: nothing is recorded until start$" || fail "armed status text: $(actl status)"
e=$(actl pause 2>&1); rc=$?
[ $rc = 1 ] && [ "$e" = "pubsub-recorder ctl: pause: armed: nothing is recorded until start" ] ||
  fail "pause while armed: exit $rc, '$e'"
e=$(actl start --id "bad id" 2>&1); rc=$?
[ $rc = 1 ] && [ "$e" = "pubsub-recorder ctl: start: a recording id has at most 128 of A-Z a-z 0-9 . _ : -" ] ||
  fail "start with a bad id: exit $rc, '$e'"
m=$(actl start --id run-7) || fail "start exit $?"
case "$m" in 'started recording run-7 at 20'*Z) ;; *) fail "start said '$m'" ;; esac
sleep 1.5
s=$(actl status --json)
[ "$(echo "$s" | field '(d["armed"], d["samples"] >= 2000, d["recording_id"])')" = "(False, True, 'run-7')" ] ||
  fail "status after start: $s"
actl status | grep -qx "recording id run-7" || fail "status text without the recording id"
e=$(actl start 2>&1); rc=$?
[ $rc = 1 ] && [ "$e" = "pubsub-recorder ctl: start: already started" ] || fail "second start: exit $rc, '$e'"
actl stop >/dev/null || fail "stop of the armed recorder"
wait $armed || fail "armed recorder exit $?"
armed=""
"$BIN/pubsub-replay" info --json "$out/armed" >"$out/armed-info.json" || fail "info of the armed recording"
"$BIN/pubsub-replay" export "$out/armed" --format jsonl -o "$out/armed.jsonl" 2>/dev/null ||
  fail "export of the armed recording"
python3 - "$out/armed-info.json" "$out/armed.jsonl" <<'PY' || status=1
import json, sys
d = json.load(open(sys.argv[1]))
marks = [(m["kind"], m["name"], m["note"]) for m in d["marks"]]
times = [json.loads(l)["reception_ns"] for l in open(sys.argv[2])]
bad = []
if marks != [("start", "run-7", "")]:
    bad.append("armed recording marks %r" % marks)
elif not times or min(times) < d["marks"][0]["time_ns"]:
    bad.append("%d samples, the first before the start mark" % len(times))
for b in bad: print("FAIL:", b)
sys.exit(1 if bad else 0)
PY

# 6. stop: exit 0, socket removed, the recording verifies; pause and tag in info; --start tag:.
m=$(ctl stop) && [ "$m" = "stopping: the recording is being closed" ] || fail "stop said '$m'"
wait $rec; rc=$?; rec=""
[ $rc = 0 ] || { fail "recorder exit $rc after ctl stop"; tail "$out/rec.log"; }
[ ! -e "$sock" ] || fail "control socket left behind"
"$BIN/pubsub-replay" verify "$out/rec" >"$out/verify.txt" || { fail "verify exit $?"; cat "$out/verify.txt"; }
info=$("$BIN/pubsub-replay" info --json "$out/rec")
echo "$info" | python3 -c '
import json, sys
d = json.load(sys.stdin)
bad = []
kinds = [(m["kind"], m["name"], m["note"]) for m in d["marks"]]
if kinds != [("pause", "", ""), ("resume", "", ""), ("tag", "engine-start", "ignition")]:
    bad.append("marks %r" % kinds)
if d["lost"] != 0: bad.append("lost %d (a pause is no loss)" % d["lost"])
if d["segments"] != 2: bad.append("%d segments, expected 2" % d["segments"])
for b in bad: print("FAIL:", b)
sys.exit(1 if bad else 0)' || status=1
text=$("$BIN/pubsub-replay" info "$out/rec")
echo "$text" | grep -Eq "^20[^ ]+Z +tag +engine-start +ignition$" || fail "no tag in info's text: $text"
tag_ns=$(echo "$info" | field '[m["time_ns"] for m in d["marks"] if m["kind"] == "tag"][0]')
"$BIN/pubsub-replay" export "$out/rec" --start tag:engine-start --format jsonl -o "$out/after.jsonl" 2>/dev/null ||
  fail "export --start tag:engine-start exit $?"
"$BIN/pubsub-replay" export "$out/rec" --format jsonl -o "$out/all.jsonl" 2>/dev/null || fail "export exit $?"
python3 - "$out/all.jsonl" "$out/after.jsonl" "$tag_ns" <<'PY' || status=1
import json, sys
t = int(sys.argv[3])
all_after = [json.loads(l)["reception_ns"] for l in open(sys.argv[1]) if json.loads(l)["reception_ns"] >= t]
got = [json.loads(l)["reception_ns"] for l in open(sys.argv[2])]
if not got or got != all_after:
    print("FAIL: export --start tag: gave %d samples, %d are at or after the tag" % (len(got), len(all_after)))
    sys.exit(1)
PY
e=$("$BIN/pubsub-replay" export "$out/rec" --start tag:nosuch --format jsonl -o "$out/x.jsonl" 2>&1); rc=$?
[ $rc = 2 ] && [ "$e" = 'pubsub-replay: --start: no tag "nosuch" in the recording (tags: engine-start)' ] ||
  fail "unknown tag: exit $rc, '$e'"
kill $pub 2>/dev/null; wait $pub 2>/dev/null; pub=""
[ $status = 0 ] && echo "control: ok ($c samples at the last status, tag at $tag_ns)"
exit $status
