#!/usr/bin/env bash
# ddsperf pub to ddsperf sub plus pubsub-recorder: ddsperf sub reports 0 lost, and the
# recording holds every sample ddsperf published: its writer's complete sequence from 1, recorded
# until the writer left (Cyclone deletes a writer once its readers acknowledged everything), and
# as many samples as ddsperf sub received. (ddsperf pub itself does not count what it wrote.)
# With --registrar-delay-ms D the recorder's registrar waits D ms before preparing matched
# writers: the Cyclone writer's first samples come before it and are held back unacknowledged
# (the log must say so), and must all be recorded once Cyclone sends them again.
# Usage: ddsperf_record.sh [--registrar-delay-ms D] [SIZE]
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib/netns.sh"
. "$HERE/../lib/ddsperf.sh"
BIN=${BIN:?set BIN to the bin directory of the build}
reg_ms=0
if [ "${1:-}" = --registrar-delay-ms ]; then
  reg_ms=$2
  shift 2
fi
size=${1:-32}
delay=()
[ "$reg_ms" != 0 ] && delay=(--test-registrar-delay-ms "$reg_ms")
ddsperf_require
netns_setup 3
out=$(mktemp -d) || exit 1  # removed on exit: only what this script made
trap 'netns_cleanup; rm -rf "$out"' EXIT
echo '{"domain": 0, "interface": "veth2", "storage": {"path": "'"$out/rec"'"}}' >"$out/r.json"
netns_spawn 2 60 "$BIN/pubsub-recorder" --config "$out/r.json" "${delay[@]}" >"$out/rec.log" 2>&1
rec=$SPAWNED
# The publisher waits for ddsperf sub (-Qminmatch:1), which starts once the recorder has matched
# the publisher's data writer: the recorder is known to it before the first sample.
netns_run 0 60 env "$(ddsperf_env 0)" ddsperf -D 3 -Qminmatch:1 -Qinitwait:15 pub size "$size" \
  >"$out/pub.out" 2>&1 &
pub=$!
wait_for 10 "'writer ... on DDSPerfRDataKS matched' in the recorder's log" \
  grep -q "on DDSPerfRDataKS matched" "$out/rec.log" || { tail "$out/rec.log"; exit 1; }
w=$(grep -m 1 -o "writer [^ ]* on DDSPerfRDataKS matched" "$out/rec.log" | cut -d " " -f 2)
netns_run 1 60 env "$(ddsperf_env 1)" ddsperf -D 8 sub >"$out/sub.out" 2>&1 &
sub=$!
wait $pub
pub_rc=$?
wait $sub
sub_rc=$?
# ddsperf sub has a DDSPerfRDataKS writer as well: the publisher's is the one matched first.
wait_for 15 "'writer $w on DDSPerfRDataKS gone' in the recorder's log" \
  grep -q "writer $w on DDSPerfRDataKS gone" "$out/rec.log" || { tail "$out/rec.log"; exit 1; }
kill -TERM $rec
wait $rec
rec_rc=$?
grep -E "size" "$out/sub.out" | tail -n 2
grep -E "recorded" "$out/rec.log"
[ $pub_rc -eq 0 ] || { echo "FAIL: ddsperf pub exit $pub_rc"; tail "$out/pub.out"; exit 1; }
[ $sub_rc -eq 0 ] || { echo "FAIL: ddsperf sub exit $sub_rc (loss?)"; tail "$out/sub.out"; exit 1; }
[ $rec_rc -eq 0 ] || { echo "FAIL: recorder exit $rec_rc"; exit 1; }
if [ "$reg_ms" != 0 ]; then
  grep -q "$w on DDSPerfRDataKS: its first sample came before the registrar had prepared it; held back until it has" \
    "$out/rec.log" || { echo "FAIL: no sample of $w came before the registrar"; exit 1; }
  echo "the Cyclone writer's first samples waited for the registrar (${reg_ms} ms)"
fi
ddsperf_check_recording "$BIN" "$out/rec" "$out/sub.out"
