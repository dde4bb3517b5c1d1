#!/usr/bin/env bash
# pubsub-perftest -pub -ddsperfCompat publishes to `ddsperf -Qsamples:N sub`, which exits 1 on
# any loss it detects (reliable). Usage: perftest_to_ddsperf.sh SIZE [best|reliable] [KEYS]
#   [--impair LOSS REORDER]. Reliable: ddsperf must also report exactly the samples written.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib/netns.sh"
. "$HERE/../lib/impair.sh"
. "$HERE/../lib/ddsperf.sh"
BIN=${BIN:?set BIN to the bin directory of the build}
size=$1 mode=${2:-reliable} keys=${3:-1}
ddsperf_require
netns_setup 2
if [ "${4:-}" = "--impair" ]; then impair_link 0 "$5" "$6" && impair_link 1 "$5" "$6" || exit 1; fi
out=$(mktemp -d) || exit 1  # removed on exit: only what this script made
trap 'netns_cleanup; rm -rf "$out"' EXIT
best=() u=()
if [ "$mode" = best ]; then best=(-best) u=(-u); fi
# Best effort: ddsperf sub runs out its -D (the 3 s of publishing start within a second of it).
dur=10
[ "$mode" = best ] && dur=6
netns_spawn 1 60 env "$(ddsperf_env 1)" ddsperf "${u[@]}" -D $dur -n "$keys" -Qsamples:10 sub \
  >"$out/sub.out" 2>&1
sub=$SPAWNED
netns_run 0 60 "$BIN/pubsub-perftest" -pub -ddsperfCompat -domain 0 -nic veth0 -datalen "$size" \
  -instances "$keys" -exec 3 -noPrint "${best[@]}" -summaryJson "$out/pub.json" 2>"$out/pub.err"
pub_rc=$?
written=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['written'])" "$out/pub.json")
if [ $pub_rc -eq 0 ] && [ "$mode" = reliable ]; then
  # Reliable: every sample written arrives, and then ddsperf sub need not run out its -D 10.
  ddsperf_stop_at_total "$sub" "$out/sub.out" "$written" 10
  sub_rc=$DDSPERF_RC
else
  wait $sub
  sub_rc=$?
fi
tail -n 2 "$out/pub.err"
grep -E "size|lost|error|fail" "$out/sub.out" | tail -n 3
total=$(ddsperf_total "$out/sub.out")
echo "written $written, ddsperf received ${total:-none}"
[ $pub_rc -eq 0 ] || { echo "FAIL: pubsub-perftest -pub exit $pub_rc"; exit 1; }
[ $sub_rc -eq 0 ] || { echo "FAIL: ddsperf sub exit $sub_rc"; tail -n 25 "$out/sub.out"; exit 1; }
if [ "${4:-}" = "--impair" ]; then impair_check "$5" "$6" 0 1 || exit 1; fi
if [ "$mode" = reliable ] && [ "$total" != "$written" ]; then
  echo "FAIL: ddsperf received $total of $written samples"
  exit 1
fi
# ddsperf's own loss count (what its exit status reports when it runs out its -D).
lost=$(grep -o "total [0-9]* lost [0-9]*" "$out/sub.out" | tail -n 1 | awk '{print $4}')
if [ "$mode" = reliable ] && [ "${lost:-x}" != 0 ]; then
  echo "FAIL: ddsperf sub counted ${lost:-no} lost samples"
  exit 1
fi
[ "${total:-0}" -gt 0 ] || { echo "FAIL: ddsperf received nothing"; exit 1; }
