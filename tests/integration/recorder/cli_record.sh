#!/usr/bin/env bash
# Recording from the command line alone (issue 31 item 4): no configuration file, every setting
# a flag - the recording directory, domain, interface, topics as globs, an exclusion and a regular
# expression. Writers on Q_a1, Q_ab, Q_b and Q_a1x: only Q_a1 is recorded ('Q_a*' takes Q_a1, Q_ab
# and Q_a1x, -x Q_ab leaves Q_ab out, --regex 'Q_a[0-9]' matches Q_a1 as a whole, not Q_a1x). `ctl status` is text for a person (`--json` for
# programs), and once the recorder is gone `ctl` says that no recorder is running. The writers are
# Cyclone DDS applications.
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
netns_spawn 1 60 "$BIN/pubsub-recorder" -o "$rec" -d "$DOMAIN" -i veth1 'Q_a*' -x Q_ab \
  --regex 'Q_a[0-9]' --stats-interval 1 >"$out/rec.log" 2>&1
recorder=$SPAWNED
wait_for 10 "recording directory" test -e "$rec/index.sqlite3" || fail "no recording"
pids=()
for t in Q_a1 Q_ab Q_b Q_a1x; do
  readers=0
  [ $t = Q_a1 ] && readers=1  # the recorder: every sample; no one reads the others
  peer 0 cyclone pub --topic $t --count 5 --wait-readers $readers --rate 10 --linger 2 \
    >"$out/$t.out" 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || fail "writer exit $?"; done
ctl() { ip netns exec "${NS_PREFIX}1" "$BIN/pubsub-recorder" ctl --path "$rec" "$@"; }
wait_for 10 "5 samples recorded" sh -c "'$BIN/pubsub-recorder' ctl --path '$rec' status --json | grep -q '\"samples\":5,'" ||
  fail "not 5 samples: $(ctl status --json)"
ctl status >"$out/status.txt" || fail "ctl status exit $?"
grep -qE "^recording $rec, [0-9.]+ s: 5 samples, 0\.0 MB, 0 lost, 0 held back by back-pressure, 0 skipped while paused; [01] writers matched; queue [0-9]+% full$" \
  "$out/status.txt" || fail "status text: $(cat "$out/status.txt")"
grep -qE "^  TOPIC +SAMPLES +MB +LOST +WRITERS$" "$out/status.txt" || fail "status: no topic table"
grep -qE "^  Q_a1 +5 +0\.0 +0 +1$" "$out/status.txt" || fail "status: no Q_a1 line"
[ "$(grep -c '^  Q_' "$out/status.txt")" = 1 ] || fail "status: other topics than Q_a1"
ctl stop >/dev/null || fail "ctl stop"
wait "$recorder" || fail "recorder exit $?"
"$BIN/pubsub-replay" info "$rec" --json >"$out/info.json" || fail "info exit $?"
python3 - "$out/info.json" <<'PY' || fail "info: $(cat "$out/info.json")"
import json, sys
j = json.load(open(sys.argv[1]))
assert [(t["name"], t["samples"]) for t in j["topics"]] == [("Q_a1", 5)], j["topics"]
PY
grep -q "recording domain $DOMAIN on 198.18.[0-9]*.2:[0-9]* into $rec (topics Q_a\*, excluding some)" \
  "$out/rec.log" || fail "the recorder's first line: $(head -3 "$out/rec.log")"
e=$(ctl status 2>&1); rc=$?
[ $rc = 2 ] && [ "$e" = "pubsub-recorder ctl: no recorder is running on $rec ($rec/control.sock: No such file or directory)" ] ||
  fail "ctl after the end: exit $rc, '$e'"
[ $status -eq 0 ] && { echo "recorded from the command line; ctl status was:"; cat "$out/status.txt"; }
exit $status
