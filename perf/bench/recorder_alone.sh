#!/usr/bin/env bash
# The recorder alone against the machine's limits, in one run: a publisher (pubsub-perftest) in
# one network namespace, pubsub-recorder in a second one (veth pair, reliable UDP), samples of
# --size bytes with random (incompressible) and zero (compressible) payloads. Beside them, in
# the same run and on the same disk, `dd if=/dev/zero bs=1M count=2048 conv=fdatasync` (the
# disk's limit for random data, which the recorder must write in full; the better of two runs
# back to back before each random run) and iperf 2's raw UDP
# between the same namespaces (the network's limit for compressible data). With --mode
# snapshot the recorder keeps the samples in memory (snapshot mode, before_s 5, max_bytes 256 MiB,
# no trigger: nothing reaches the disk) and raw UDP is the limit for both payloads.
# Usage (root): perf/bench/recorder_alone.sh [--exec S] [--size B] [--reps N] [--mtu M]
#               [--payload random,zero] [--record-dir DIR] [--fsync none|chunk|segment|interval]
#               [--page-cache drop|keep] [--mode record|snapshot] [--set KEY=VALUE]... [--bin DIR]
# --set passes any other setting to the recorder (its --set), e.g. storage.chunk_max_bytes=1048576.
# Prints one markdown row per run and a median row per payload; exit 0 when every run recorded
# all it was sent (0 lost), 1 otherwise, 2 bad usage, 77 not root.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/integration/lib/netns.sh"
. "$ROOT/perf/lib/dd.sh"
BIN=$ROOT/build-release/bin
exec_s=10 size=63000 reps=1 record_parent=/var/tmp fsync=chunk page_cache= payloads="random zero"
mode=record sets=()
while [ $# -gt 0 ]; do
  case $1 in
    --exec) exec_s=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --payload) payloads=${2//,/ }; shift 2 ;;
    --mtu) NS_MTU=$2; shift 2 ;;
    --record-dir) record_parent=$2; shift 2 ;;
    --fsync) fsync=$2; shift 2 ;;
    --page-cache) page_cache=$2; shift 2 ;;
    --mode) mode=$2; shift 2 ;;
    --set) sets+=(--set "$2"); shift 2 ;;
    --bin) BIN=$2; shift 2 ;;
    -h | --help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown option $1 (see --help)"; exit 2 ;;
  esac
done
[[ $exec_s =~ ^[0-9]+$ && $size =~ ^[0-9]+$ && $reps =~ ^[0-9]+$ ]] || { echo "--exec, --size, --reps take whole numbers"; exit 2; }
for t in pubsub-perftest pubsub-recorder; do
  [ -x "$BIN/$t" ] || { echo "build first: cmake --preset release && cmake --build --preset release"; exit 2; }
done
command -v iperf >/dev/null || { echo "iperf (Debian package iperf, version 2) is missing: scripts/setup.sh"; exit 77; }
for p in $payloads; do [ "$p" = random ] || [ "$p" = zero ] || { echo "--payload: $p is not random or zero"; exit 2; }; done
[ -d "$record_parent" ] || { echo "--record-dir $record_parent is not a directory"; exit 2; }
[ "$mode" = record ] || [ "$mode" = snapshot ] || { echo "--mode: $mode is not record or snapshot"; exit 2; }
netns_setup_pair
# Removed on exit: only the directories this script made (each removal only once it exists).
tmp="" rec_tmp=""
trap 'netns_cleanup; [ -z "$tmp" ] || rm -rf "$tmp"; [ -z "$rec_tmp" ] || rm -rf "$rec_tmp"' EXIT
tmp=$(mktemp -d) || exit 1
rec_tmp=$(mktemp -d -p "$record_parent") || exit 1

# dd_mbs: MB/s of 2 GiB of zeros written with conv=fdatasync next to the recordings; the better
# of two runs back to back (perf/lib/dd.sh).
dd_mbs() {
  local a b
  a=$(dd_write_mbs "$rec_tmp/dd.bin" 2048) b=$(dd_write_mbs "$rec_tmp/dd.bin" 2048)
  echo "dd runs: $a and $b MB/s" >>"$tmp/dd.log"
  awk -v a="${a:-0}" -v b="${b:-0}" 'BEGIN {print (a > b) ? a : b}'
}

# iperf_mbs: MB/s of payload iperf 2 receives from ns 0 in ns 1, datagrams of --size (<= 65507).
iperf_mbs() {
  local s=$size
  [ "$s" -gt 65507 ] && s=65507
  netns_spawn 1 $((exec_s + 30)) iperf -s -u -B "$(netns_addr 1)" -p 5301 -l 65507 -w 4M -e >"$tmp/iperf_s.out" 2>&1
  local srv=$SPAWNED
  sleep 0.5
  netns_run 0 $((exec_s + 20)) iperf -c "$(netns_addr 1)" -p 5301 -u -b 40G -l "$s" -t "$exec_s" -w 4M >/dev/null 2>&1
  sleep 1
  kill -INT "$srv" 2>/dev/null
  wait "$srv" 2>/dev/null
  # The server's whole-run line: "[ 3] 0.00-10.00 sec  X MBytes  Y Mbits/sec ...": bytes / s.
  awk '/ 0\.0+-[0-9.]+ sec/ {for (i = 1; i < NF; i++) if ($(i+1) ~ /bits\/sec$/) { r = $i; u = $(i+1) } }
       END { m = (u ~ /^G/) ? 1000 : (u ~ /^K/) ? 0.001 : 1; printf "%.0f", r * m / 8 }' "$tmp/iperf_s.out"
}

# record PAYLOAD: one publisher -> recorder run; prints "written recorded lost cpu_s mb_s peak%".
record() {
  local p=$1 dir="$rec_tmp/rec-$1" pc_json=""
  [ -n "$page_cache" ] && pc_json=", \"page_cache\": \"$page_cache\""
  local mode_json=""
  [ "$mode" = snapshot ] &&
    mode_json=', "mode": "snapshot", "snapshot": {"before_s": 5}'
  cat >"$tmp/rec.json" <<JSON
{"domain": 13, "interface": "veth1", "transports": ["udp"], "stats_interval_s": 1,
 "storage": {"path": "$dir", "fsync": "$fsync"$pc_json}$mode_json}
JSON
  netns_spawn 1 $((exec_s + 120)) /usr/bin/time -f "%U %S" -o "$tmp/cpu" "$BIN/pubsub-recorder" \
    --config "$tmp/rec.json" "${sets[@]}" >"$tmp/rec.log" 2>&1
  local rec=$SPAWNED
  for _ in $(seq 100); do grep -q "recording domain" "$tmp/rec.log" && break; sleep 0.05; done
  netns_run 0 $((exec_s + 60)) "$BIN/pubsub-perftest" -pub -nic veth0 -domain 13 -datalen "$size" \
    -payload "$p" -exec "$exec_s" -noPrint -summaryJson "$tmp/pub.json" >/dev/null 2>"$tmp/pub.err"
  kill -INT "$rec" # GNU time ignores SIGINT while it waits; the recorder stops on it
  wait "$rec"
  cp "$tmp/rec.log" "$tmp/rec-$p-$(date +%s).log"
  local written summary n lost cpu peak
  written=$(python3 -c "import json; print(json.load(open('$tmp/pub.json'))['written'])" 2>/dev/null)
  summary=$(grep -o 'recorded [0-9]* samples .* [0-9]* lost' "$tmp/rec.log" | tail -n 1)
  n=$(echo "$summary" | awk '{print $2}')
  lost=$(echo "$summary" | awk '{print $(NF-1)}')
  cpu=$(awk '{print $1 + $2}' "$tmp/cpu")
  peak=$(grep -o 'queue [0-9]*%' "$tmp/rec.log" | tr -dc '0-9\n' | sort -n | tail -n 1)
  rm -rf "$dir"
  # The publisher's -exec seconds are the recording's: MB/s = samples written x size / exec.
  echo "${written:-0} ${n:-0} ${lost:-?} ${cpu:-0} $(awk -v w="${written:-0}" -v s="$size" -v e="$exec_s" \
    'BEGIN {printf "%.0f", w * s / e / 1e6}') ${peak:-?}"
}

echo "# Recorder alone ($mode mode): pubsub-perftest -pub -> pubsub-recorder, $size B, reliable UDP, MTU $NS_MTU,"
echo "# ${exec_s}s per run, storage.fsync \"$fsync\", page_cache ${page_cache:-default}, recording in $(df --output=source "$rec_tmp" | tail -n 1)"
echo "# ($(df --output=fstype "$rec_tmp" | tail -n 1)), $(nproc) cores, $(uname -r), commit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null)"
echo
echo "| Run | Payload | Written | Recorded | Lost | Recorded MB/s | Limit MB/s | Ratio | Recorder CPU s | CPU s per GB | Queue peak |"
echo "|---:|:--|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
fail=0
declare -A RATIOS
for ((r = 1; r <= reps; r++)); do
  for p in $payloads; do
    if [ "$p" = random ] && [ "$mode" = record ]; then lim=$(dd_mbs) lim_name=dd; else lim=$(iperf_mbs) lim_name="raw UDP"; fi
    read -r written n lost cpu mbs peak < <(record "$p")
    # "recorded" includes the publisher's end-of-run marker.
    [ "$lost" = 0 ] && [ "$n" -ge "$written" ] && [ "$written" -gt 0 ] || fail=1
    ratio=$(awk -v a="$mbs" -v b="${lim:-0}" 'BEGIN {printf "%.2f", (b > 0) ? a / b : 0}')
    RATIOS[$p]+="$ratio "
    printf '| %d | %s | %s | %s | %s | %s | %s (%s) | %s | %.1f | %.2f | %s%% |\n' "$r" "$p" "$written" "$n" \
      "$lost" "$mbs" "${lim:-?}" "$lim_name" "$ratio" "$cpu" \
      "$(awk -v c="$cpu" -v n="$written" -v s="$size" 'BEGIN {print (n > 0) ? c / (n * s / 1e9) : 0}')" "$peak"
  done
done
echo
[ -f "$tmp/dd.log" ] && sed 's/^/# /' "$tmp/dd.log"
for p in $payloads; do
  echo "median ratio, $p: $(echo "${RATIOS[$p]}" | tr ' ' '\n' | grep . | sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}')"
done
exit $fail
