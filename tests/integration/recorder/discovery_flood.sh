#!/usr/bin/env bash
# Discovery that cannot exhaust memory: pubsub-recorder in ns 1 records a real publisher
# (pubsub-perftest, ns 2, 500 samples/s for 14 s) while discovery_flood in ns 0 announces, from a
# plain UDP socket, FLOOD_PARTICIPANTS participants at one address and FLOOD_ENDPOINTS writers of
# one of them (each on its own topic), re-announcing the participants every second.
# With the recorder's default limits (max_participants_per_address 1024,
# max_endpoints_per_participant 10000):
# - status's discovery_refused: every flood participant past the 1024th refused at each of its
#   announcements, exactly FLOOD_ENDPOINTS - 10000 endpoints refused; the log says each once;
# - the recorder's RSS grows by less than RSS_BOUND_MB during the flood;
# - the real writer is recorded completely: every sample the publisher wrote, in order, with its
#   checksum, 0 lost; and no flood topic beyond the 10000 taken reaches the recording.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib/netns.sh"
BIN=${BIN:?set BIN to the bin directory of the build}
FLOOD_PARTICIPANTS=${FLOOD_PARTICIPANTS:-20000}
FLOOD_ENDPOINTS=${FLOOD_ENDPOINTS:-30000}
RSS_BOUND_MB=${RSS_BOUND_MB:-200}
netns_setup 3
out=$(mktemp -d) || exit 1  # removed on exit: only what this script made
rec="" pub="" monitor=""
trap 'kill $rec $pub $monitor 2>/dev/null; wait 2>/dev/null; netns_cleanup; rm -rf "$out"' EXIT
status=0
fail() { echo "FAIL: $*"; status=1; }
field() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))' "$@"; }
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$(pgrep -P $rec | head -n 1)/status" 2>/dev/null; }

# DISCOVERY='{"max_participants": 1000000, ...}' replaces the default limits (to measure what a
# flood costs without them; the checks below assume the defaults).
cat >"$out/r.json" <<EOF
{"domain": 9, "interface": "veth1", "stats_interval_s": 1, "discovery": ${DISCOVERY:-{\}},
 "storage": {"path": "$out/rec", "chunk_max_age_ms": 50}}
EOF
netns_spawn 1 150 "$BIN/pubsub-recorder" --config "$out/r.json" >"$out/rec.log" 2>&1
rec=$SPAWNED
wait_for 20 "the recorder's start" grep -q "recording domain 9" "$out/rec.log" || { cat "$out/rec.log"; exit 1; }
netns_spawn 2 120 "$BIN/pubsub-perftest" -pub -domain 9 -nic veth2 -datalen 200 -pubRate 500 \
  -exec 14 -noPrint -summaryJson "$out/pub.json" 2>"$out/pub.err"
pub=$SPAWNED
wait_for 20 "the real writer matched" grep -q "writer .* on PubsubPerftest_Data matched" "$out/rec.log" ||
  { tail "$out/rec.log"; exit 1; }
sleep 1
before=$(rss_kb)
( peak=0
  while kill -0 $rec 2>/dev/null; do
    kb=$(rss_kb)
    [ -n "$kb" ] && [ "$kb" -gt "$peak" ] && peak=$kb && echo $peak >"$out/rss_peak_kb"
    sleep 0.1
  done ) &
monitor=$!
netns_run 0 60 "$BIN/discovery_flood" --domain 9 --address "$(netns_addr 0)" \
  --participants "$FLOOD_PARTICIPANTS" --endpoints "$FLOOD_ENDPOINTS" --seconds 6 >"$out/flood.out" ||
  fail "discovery_flood exit $?"
cat "$out/flood.out"
# The recorder works through the flood's backlog after it ended: wait for the endpoint count.
refused_now() { netns_run 1 30 "$BIN/pubsub-recorder" ctl --path "$out/rec" status --json | field 'd["discovery_refused"]'; }
for _ in $(seq 60); do
  refused=$(refused_now)
  [[ "$refused" == *"'endpoints': $((FLOOD_ENDPOINTS - 10000)),"* ]] && break
  sleep 0.5
done
wait $pub || fail "publisher exit $?"
pub=""
kill $monitor 2>/dev/null; wait $monitor 2>/dev/null; monitor=""
peak=$(cat "$out/rss_peak_kb" 2>/dev/null || echo 0)
growth_mb=$(( (peak - before) / 1024 ))
echo "recorder RSS: $((before / 1024)) MB before the flood, peak $((peak / 1024)) MB (+$growth_mb MB); refused: $refused"
[ "$growth_mb" -lt "$RSS_BOUND_MB" ] || fail "RSS grew by $growth_mb MB during the flood (bound $RSS_BOUND_MB MB)"
python3 - "$refused" "$FLOOD_PARTICIPANTS" "$FLOOD_ENDPOINTS" <<'EOF' || status=1
import ast, sys
r = ast.literal_eval(sys.argv[1]); n, m = int(sys.argv[2]), int(sys.argv[3])
bad = []
# Each flood participant past the 1024th is refused at each of its announcements that the
# recorder reads (at least one round; the kernel drops what the busy recorder cannot take).
if r["participants"] < n - 1024: bad.append(f"{r['participants']} participant refusals, expected at least {n - 1024}")
if r["endpoints"] != m - 10000: bad.append(f"{r['endpoints']} endpoint refusals, expected {m - 10000}")
for b in bad: print("FAIL:", b)
sys.exit(1 if bad else 0)
EOF
pat_p="discovery: refused participant f100d00d0{8}[0-9a-f]{8}: 1024 participants known at $(netns_addr 0 | sed 's/\./\\./g') \\(max_participants_per_address 1024\\); further participants over a limit are counted, not logged"
pat_e="discovery: refused writer f100d00d0{16}:[0-9a-f]{8} on flood/[0-9]+: its participant has 10000 endpoints \\(max_endpoints_per_participant 10000\\); further endpoints over a limit are counted, not logged"
[ "$(grep -cE "$pat_p" "$out/rec.log")" = 1 ] || fail "not one participant refusal line: $(grep -c 'discovery: refused participant' "$out/rec.log")"
[ "$(grep -cE "$pat_e" "$out/rec.log")" = 1 ] || fail "not one endpoint refusal line: $(grep 'discovery: refused writer' "$out/rec.log" | head -2)"
kill -TERM $rec; wait $rec; rc=$?; rec=""
[ $rc = 0 ] || fail "recorder exit $rc on SIGTERM"
"$BIN/recording_summary" "$out/rec" --perftest --verify >"$out/rec.json" || fail "recording_summary cannot read the recording"
python3 - "$out/pub.json" "$out/rec.json" <<'EOF' || status=1
import json, sys
pub, rec = (json.load(open(f)) for f in sys.argv[1:3])
print(f"published {pub['written']} recorded {rec['samples']}; checksums {pub['checksum']} {rec['checksum']}")
bad = []
if pub["written"] != rec["samples"] or pub["written"] == 0: bad.append("counts differ")
if pub["checksum"] != rec["checksum"]: bad.append("checksums differ")
if rec["gaps"] or rec["verify_problems"]: bad.append(f"{rec['gaps']} gaps, {rec['verify_problems']} verify problems")
for b in bad: print("FAIL:", b)
sys.exit(1 if bad else 0)
EOF
[ $status = 0 ] && echo "discovery flood: ok"
[ -n "${KEEP_LOG:-}" ] && cp "$out/rec.log" "$KEEP_LOG"
exit $status
