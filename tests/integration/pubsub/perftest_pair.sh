#!/usr/bin/env bash
# pubsub-perftest -pub in one network namespace to -sub in another; checks the summaries.
# Usage: perftest_pair.sh [--impair LOSS_PCT REORDER_PCT] [--exec S] [--min N] -- PERFTEST ARGS
# Without --best, the run must be complete, exactly once, in order (check_json.py --reliable).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib/netns.sh"
. "$HERE/../lib/impair.sh"
BIN=${BIN:?set BIN to the bin directory of the build}
loss=0 reorder=0 exec_s=3 min=1
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  case $1 in
    --impair) loss=$2 reorder=$3; shift 3 ;;
    --exec) exec_s=$2; shift 2 ;;
    --min) min=$2; shift 2 ;;
    *) echo "unknown option $1"; exit 2 ;;
  esac
done
shift
args=("$@")
reliable=--reliable
for a in "${args[@]}"; do [ "$a" = "-best" ] && reliable=; done

netns_setup 2
if [ "$loss" != 0 ] || [ "$reorder" != 0 ]; then
  impair_link 0 "$loss" "$reorder" && impair_link 1 "$loss" "$reorder" || { echo "FAIL: impairment setup"; exit 1; }
fi
out=$(mktemp -d)
trap 'netns_cleanup; rm -rf "$out"' EXIT
netns_run 1 $((exec_s + 60)) "$BIN/pubsub-perftest" -sub -nic veth1 -noPrint -exec $((exec_s + 50)) \
  -summaryJson "$out/sub.json" "${args[@]}" >"$out/sub.out" 2>"$out/sub.err" &
sub=$!
netns_run 0 $((exec_s + 60)) "$BIN/pubsub-perftest" -pub -nic veth0 -noPrint -exec "$exec_s" \
  -summaryJson "$out/pub.json" "${args[@]}" 2>"$out/pub.err"
pub_rc=$?
wait $sub
sub_rc=$?
cat "$out/sub.out"
tail -n 2 "$out/pub.err" "$out/sub.err"
if [ "$loss" != 0 ]; then echo "impairment dropped $(impair_drops 0) + $(impair_drops 1) packets"; fi
[ $pub_rc -eq 0 ] || { echo "FAIL: publisher exit $pub_rc"; exit 1; }
[ $sub_rc -eq 0 ] || { echo "FAIL: subscriber exit $sub_rc"; exit 1; }
python3 "$HERE/../lib/check_json.py" "$out/pub.json" "$out/sub.json" $reliable --min "$min"
