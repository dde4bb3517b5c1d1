#!/usr/bin/env bash
# Signed DDS control (control.key_file, ctl --dds --key-file) between network namespaces: the
# recorder in ns 1, clients in ns 0, pubsub-perftest publishing from ns 2.
# - a key file others may read: the recorder does not start (exit 2, the chmod in the message,
#   no recording directory), --check-config says the same, ctl --key-file refuses it too;
# - ctl with the key: status (control_refused all 0), tag, and finally stop (recorder exit 0);
# - without the key, with another key, and with the key but a clock 90 s behind (libfaketime on
#   ctl only): exit 1 with the exact reasons, nothing done, each counted in control_refused;
# - five unsigned requests at once: all counted; the log's "not signed" warnings plus the
#   "(and N more like it not logged)" counts and the line at the end add up to the counter;
# - the recording verifies and holds the one tag.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib/netns.sh"
BIN=${BIN:?set BIN to the bin directory of the build}
FAKETIME_LIB=/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1
[ -f "$FAKETIME_LIB" ] || { echo "SKIP: libfaketime is missing (scripts/setup.sh)"; exit 77; }
netns_setup 3
out=$(mktemp -d) || exit 1  # removed on exit: only what this script made
rec="" pub=""
trap 'kill $rec $pub 2>/dev/null; wait 2>/dev/null; netns_cleanup; rm -rf "$out"' EXIT
status=0
fail() { echo "FAIL: $*"; status=1; }
field() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))' "$@"; }
client=$(netns_addr 0)
# ctl ARGS...: pubsub-recorder ctl --dds on domain 7 from namespace 0.
ctl() { netns_run 0 30 "$BIN/pubsub-recorder" ctl --dds --domain 7 --interface veth0 --timeout 10 "$@"; }
refused() { # the refusals counted so far, as the status reports them
  ctl --key-file "$out/key" status --json | field 'd["control_refused"]'
}

head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$out/key"
chmod 644 "$out/key"
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$out/other.key"
chmod 600 "$out/other.key"
cat >"$out/r.json" <<EOF
{"domain": 7, "interface": "veth1", "stats_interval_s": 1,
 "storage": {"path": "$out/rec", "chunk_max_age_ms": 20},
 "control": {"socket": "", "dds": true, "allow": ["$client/32"], "key_file": "$out/key"}}
EOF

# 1. A key file of mode 644: refused everywhere, nothing created.
too_open="control key file $out/key has mode 0644: others than its owner may read or write it (chmod 600 $out/key)"
e=$(netns_run 1 30 "$BIN/pubsub-recorder" --config "$out/r.json" 2>&1); rc=$?
[ $rc = 2 ] && [[ "$e" == *"$too_open"* ]] || fail "mode 644: recorder exit $rc, '$e'"
[ ! -e "$out/rec" ] || fail "mode 644: the recorder created $out/rec"
e=$(netns_run 1 30 "$BIN/pubsub-recorder" --config "$out/r.json" --check-config 2>&1); rc=$?
[ $rc = 2 ] && [[ "$e" == *"/control/key_file: $too_open"* ]] || fail "mode 644: --check-config exit $rc, '$e'"
e=$(ctl --key-file "$out/key" status 2>&1); rc=$?
[ $rc = 2 ] && [ "$e" = "pubsub-recorder ctl: $too_open" ] || fail "mode 644: ctl exit $rc, '$e'"
chmod 600 "$out/key"

# 2. The recorder with the key.
netns_spawn 1 120 "$BIN/pubsub-recorder" --config "$out/r.json" >"$out/rec.log" 2>&1
rec=$SPAWNED
netns_spawn 2 110 "$BIN/pubsub-perftest" -pub -domain 7 -nic veth2 -datalen 100 -pubRate 200 \
  -exec 100 -noPrint 2>"$out/pub.err"
pub=$SPAWNED
wait_for 20 "matched writer in the recorder's log" \
  grep -q "writer .* on PubsubPerftest_Data matched" "$out/rec.log" || { tail "$out/rec.log"; exit 1; }
line="info DDS control on domain 7 (allow $client/32; requests signed with the key in $out/key, clocks within 30 s)"
grep -qF "$line" "$out/rec.log" || fail "no '$line' in the log"

# 3. With the key: status and tag.
s=$(ctl --key-file "$out/key" status --json 2>"$out/ctl.err"); rc=$?
[ $rc = 0 ] || fail "signed status exit $rc: $(cat "$out/ctl.err")"
[ "$(echo "$s" | field 'd["control_refused"], d["writers"]')" = "({'bad_signature': 0, 'not_allowed': 0, 'replayed': 0, 'stale': 0, 'unsigned': 0}, 1)" ] ||
  fail "signed status: $s"
m=$(ctl --key-file "$out/key" tag signed-mark) || fail "signed tag exit $?"
case "$m" in 'tag "signed-mark" at 20'*Z) ;; *) fail "signed tag said '$m'" ;; esac

# 4. Without the key, with another key, with a clock 90 s behind: refused, exact reasons.
not_signed="request not signed: this recorder carries out only requests signed with its control.key_file (pubsub-recorder ctl --dds --key-file FILE)"
e=$(ctl tag unsigned-mark 2>&1); rc=$?
[ $rc = 1 ] && [ "$e" = "pubsub-recorder ctl: tag: $not_signed" ] || fail "unsigned: exit $rc, '$e'"
e=$(ctl --key-file "$out/other.key" stop 2>&1); rc=$?
[ $rc = 1 ] && [ "$e" = "pubsub-recorder ctl: stop: bad signature: not signed with this recorder's key" ] ||
  fail "other key: exit $rc, '$e'"
e=$(LD_PRELOAD=$FAKETIME_LIB FAKETIME="-90s" ctl --key-file "$out/key" stop 2>&1); rc=$?
re='^pubsub-recorder ctl: stop: request time is (8[5-9]|9[0-5])\.[0-9] s behind this recorder.s clock \(control\.max_clock_skew_s 30\)$'
[ $rc = 1 ] && [[ "$e" =~ $re ]] || fail "clock 90 s behind: exit $rc, '$e' (expected /$re/)"
[ "$(refused)" = "{'bad_signature': 1, 'not_allowed': 0, 'replayed': 0, 'stale': 1, 'unsigned': 1}" ] ||
  fail "control_refused after one of each: $(refused)"

# 5. Five unsigned requests at once: counted; the log is rate-limited but loses no count.
burst=()
for i in 1 2 3 4 5; do ctl pause >/dev/null 2>&1 & burst+=($!); done
for p in "${burst[@]}"; do wait "$p" || [ $? = 1 ] || fail "an unsigned pause did not end with exit 1"; done
[ "$(refused)" = "{'bad_signature': 1, 'not_allowed': 0, 'replayed': 0, 'stale': 1, 'unsigned': 6}" ] ||
  fail "control_refused after six unsigned: $(refused)"
[ "$(ctl --key-file "$out/key" status --json | field 'd["paused"]')" = False ] || fail "an unsigned pause paused the recorder"

# 6. stop with the key; the recording.
m=$(ctl --key-file "$out/key" stop) && [ "$m" = "stopping: the recording is being closed" ] || fail "signed stop said '$m'"
wait $rec; rc=$?; rec=""
[ $rc = 0 ] || { fail "recorder exit $rc after a signed stop"; tail "$out/rec.log"; }
# The unsigned refusals in the log: the lines, what "(and N more like it not logged)" adds, and
# the line at the end for those after the last one, together six.
logged=$(python3 - "$out/rec.log" <<'EOF'
import re, sys
log = open(sys.argv[1]).read().splitlines()
lines = [l for l in log if "warning DDS control: refused" in l and "request not signed" in l]
more = sum(int(m.group(1)) for l in lines for m in [re.search(r"\(and (\d+) more like it not logged\)", l)] if m)
end = sum(int(m.group(1)) for l in log for m in [re.search(r"DDS control: (\d+) more refusals \(unsigned\) were not logged$", l)] if m)
print(len(lines), len(lines) + more + end)
EOF
)
set -- $logged
[ "${2:-0}" = 6 ] && [ "${1:-0}" -lt 6 ] ||
  fail "unsigned warnings: ${1:-?} lines standing for ${2:-?} refusals, expected fewer than 6 lines for 6"
"$BIN/pubsub-replay" verify "$out/rec" >"$out/verify.txt" || { fail "verify exit $?"; cat "$out/verify.txt"; }
marks=$("$BIN/pubsub-replay" info --json "$out/rec" | field '[(m["kind"], m["name"]) for m in d["marks"]]')
[ "$marks" = "[('tag', 'signed-mark')]" ] || fail "marks $marks"
[ $status = 0 ] && echo "signed dds control: ok"
exit $status
