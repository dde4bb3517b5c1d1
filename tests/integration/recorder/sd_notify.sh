#!/usr/bin/env bash
# The recorder as a systemd service, without systemd (sd_notify.py plays its part): READY=1,
# STATUS= statistics lines, WATCHDOG=1 (only when WATCHDOG_PID is the recorder's) and STOPPING=1
# after SIGTERM. Both runs use one configuration whose storage.path has strftime conversions, as a
# restarted service would: each run records into a directory of its own, named by its start
# time, holding the samples a publisher in a second namespace wrote during that run, and the
# second leaves the first as it was.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib/netns.sh"
BIN=${BIN:?set BIN to the bin directory of the build}
netns_setup 2
out=$(mktemp -d) || exit 1  # removed on exit: only what this script made
trap 'netns_cleanup; rm -rf "$out"' EXIT
status=0
echo '{"domain": 9, "interface": "veth0", "stats_interval_s": 0.5,
       "storage": {"path": "'"$out"'/rec-%Y%m%d-%H%M%S"}}' >"$out/r.json"
run() {
  python3 "$HERE/sd_notify.py" --ns "${NS_PREFIX}0" --recorder "$BIN/pubsub-recorder" \
    --config "$out/r.json" --dir "$out" "$@" || { status=1; tail -n 5 "$out"/recorder-*.log; }
}
# snapshot DIR: every file of a recording with its size and modification time.
snapshot() { (cd "$1" && find . -type f -printf '%p %s %T@\n' | sort); }
# recorded ARGS...: `run ARGS` while pubsub-perftest publishes 500 samples/s from namespace 1.
recorded() {
  netns_spawn 1 30 "$BIN/pubsub-perftest" -pub -domain 9 -nic veth1 -datalen 64 -pubRate 500 \
    -exec 20 -noPrint >/dev/null 2>&1
  local pub=$SPAWNED
  run "$@"
  kill "$pub" 2>/dev/null
  wait "$pub" 2>/dev/null
}
samples() {
  "$BIN/pubsub-replay" info --json "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["samples"])'
}

recorded --watchdog-pid self --seconds 4
first=$(ls -d "$out"/rec-* 2>/dev/null)
before=$(snapshot "$first")
recorded --watchdog-pid 1 --seconds 1.5
dirs=$(ls -d "$out"/rec-* 2>/dev/null)
echo "recordings: $(echo $dirs | sed "s|$out/||g")"
[ "$(echo "$dirs" | wc -l)" -eq 2 ] || { echo "FAIL: expected two recording directories"; status=1; }
for d in $dirs; do
  [[ $(basename "$d") =~ ^rec-20[0-9]{6}-[0-9]{6}$ ]] || { echo "FAIL: $d is not rec-%Y%m%d-%H%M%S"; status=1; }
  "$BIN/pubsub-replay" verify "$d" >/dev/null || { echo "FAIL: pubsub-replay verify $d"; status=1; }
  n=$(samples "$d")
  echo "$(basename "$d"): $n samples"
  [ "${n:-0}" -gt 0 ] || { echo "FAIL: $d recorded no samples"; status=1; }
done
[ "$(snapshot "$first")" = "$before" ] || { echo "FAIL: the second run changed the first recording"; status=1; }
exit $status
