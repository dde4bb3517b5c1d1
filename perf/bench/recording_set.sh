#!/usr/bin/env bash
# A recorder per host against one recorder for all (issue 35): three network namespaces ("hosts")
# on one bridge, each with a publisher (pubsub-perftest -pub, reliable, full rate, --size bytes of
# --payload) on the same topic; then, in turn:
#   per-host: a pubsub-recorder in every namespace with --writers local (each stores only its own
#             host's publisher; the others' are matched, acknowledged and dropped),
#   one:      a single pubsub-recorder in namespace 0 with --writers all.
# Same publishers, same machine, one mode after the other, --reps times alternated. Reports per
# mode what the publishers wrote, what was recorded (all recorders together), samples/s, MB/s,
# lost, the recorders' CPU seconds (user + system), and after each per-host run the time of
# `pubsub-replay merge` of its three recordings. On this 2-core machine the namespaces
# share two cores: the figures compare the modes, they do not show what three machines would do.
# Usage (root): perf/bench/recording_set.sh [--exec S] [--size B] [--payload random|zero]
#               [--reps N] [--bin DIR] [--record-dir DIR]
# Exit 0 when every run recorded every sample written (0 lost), 1 otherwise, 2 bad usage,
# 77 not root.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/integration/lib/netns.sh"
BIN=$ROOT/build/bin
exec_s=8 size=1024 payload=random reps=1 record_parent=/var/tmp
while [ $# -gt 0 ]; do
  case $1 in
    --exec) exec_s=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --payload) payload=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --bin) BIN=$2; shift 2 ;;
    --record-dir) record_parent=$2; shift 2 ;;
    -h | --help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown option $1 (see --help)"; exit 2 ;;
  esac
done
[[ $exec_s =~ ^[0-9]+$ && $size =~ ^[0-9]+$ && $reps =~ ^[0-9]+$ ]] ||
  { echo "--exec, --size and --reps take whole numbers"; exit 2; }
[ "$payload" = random ] || [ "$payload" = zero ] || { echo "--payload: $payload is not random or zero"; exit 2; }
[ -d "$record_parent" ] || { echo "--record-dir $record_parent is not a directory"; exit 2; }
for t in pubsub-perftest pubsub-recorder; do
  [ -x "$BIN/$t" ] || { echo "no $BIN/$t: build first (cmake --build --preset dev)"; exit 2; }
done
[ "$(id -u)" = 0 ] || { echo "needs root (network namespaces)"; exit 77; }
netns_setup 3
# Removed on exit: only the directories this script made.
tmp="" rec_tmp=""
trap 'netns_cleanup; [ -z "$tmp" ] || rm -rf "$tmp"; [ -z "$rec_tmp" ] || rm -rf "$rec_tmp"' EXIT
tmp=$(mktemp -d) || exit 1
rec_tmp=$(mktemp -d -p "$record_parent") || exit 1
DOMAIN=$((30 + $$ % 40))

# start_recorder NS WRITERS: a recorder in namespace NS taking WRITERS (local or all), under
# GNU time; its PID in REC_PIDS, its files $tmp/rec-NS.*.
REC_PIDS=()
start_recorder() {
  local ns=$1 writers=$2
  netns_spawn "$ns" $((exec_s + 120)) /usr/bin/time -f "%U %S" -o "$tmp/rec-$ns.cpu" \
    "$BIN/pubsub-recorder" --domain "$DOMAIN" --interface "veth$ns" --writers "$writers" \
    --path "$rec_tmp/rec-$ns" --set 'transports=["udp"]' --set storage.fsync='"none"' \
    >"$tmp/rec-$ns.log" 2>&1
  REC_PIDS+=("$SPAWNED")
  for _ in $(seq 100); do grep -q "recording domain" "$tmp/rec-$ns.log" && break; sleep 0.05; done
}

# run MODE: one run; prints "written recorded lost cpu".
run() {
  local mode=$1 ns written=0 recorded=0 lost=0 cpu=0 n l pubs=() readers=1
  [ "$mode" = per-host ] && readers=3  # each publisher waits for every recorder before it writes
  REC_PIDS=()
  rm -rf "$rec_tmp"/rec-*
  if [ "$mode" = per-host ]; then
    for ns in 0 1 2; do start_recorder "$ns" local; done
  else
    start_recorder 0 all
  fi
  sleep 1  # discovery between the recorders and the namespaces
  for ns in 0 1 2; do
    netns_spawn "$ns" $((exec_s + 60)) "$BIN/pubsub-perftest" -pub -nic "veth$ns" -domain "$DOMAIN" \
      -datalen "$size" -payload "$payload" -exec "$exec_s" -numSubscribers "$readers" -noPrint \
      -summaryJson "$tmp/pub-$ns.json" \
      >/dev/null 2>"$tmp/pub-$ns.err"
    pubs+=("$SPAWNED")
  done
  for p in "${pubs[@]}"; do wait "$p"; done
  sleep 1
  for p in "${REC_PIDS[@]}"; do kill -INT "$p" 2>/dev/null; done  # GNU time passes it on
  for p in "${REC_PIDS[@]}"; do wait "$p"; done
  if [ "$mode" = per-host ]; then  # what merging the three costs, into the same directory
    /usr/bin/time -f "%e %U %S" -o "$tmp/merge.time" "$BIN/pubsub-replay" merge -q \
      "$rec_tmp"/rec-0 "$rec_tmp"/rec-1 "$rec_tmp"/rec-2 -o "$rec_tmp/merged" >"$tmp/merge.out" 2>&1
    echo "per-host run: $(grep '^merged' "$tmp/merge.out" | sed 's/ in [0-9.]* s$//'); wall, user, system s: $(cat "$tmp/merge.time")" >>"$tmp/merges"
    rm -rf "$rec_tmp/merged"
  fi
  for ns in 0 1 2; do
    n=$(python3 -c "import json; print(json.load(open('$tmp/pub-$ns.json'))['written'])" 2>/dev/null)
    written=$((written + ${n:-0}))
    [ -f "$tmp/rec-$ns.log" ] || continue
    n=$(grep -o 'recorded [0-9]* samples' "$tmp/rec-$ns.log" | tail -n 1 | awk '{print $2}')
    l=$(grep -o ', [0-9]* lost' "$tmp/rec-$ns.log" | tail -n 1 | tr -dc '0-9')
    recorded=$((recorded + ${n:-0})) lost=$((lost + ${l:-0}))
    cpu=$(awk -v c="$cpu" '{print c + $1 + $2}' "$tmp/rec-$ns.cpu")
    rm -f "$tmp/rec-$ns.log"
  done
  echo "$written $recorded $lost $cpu"
}

echo "# Recording set: 3 publishers (pubsub-perftest -pub, $size B $payload, reliable UDP, full rate)"
echo "# in 3 namespaces, ${exec_s} s per run; per-host = 3 recorders --writers local, one = 1 recorder"
echo "# --writers all; $(nproc) cores, $(uname -r), commit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null), bin $BIN"
echo
echo "| Run | Mode | Written | Recorded | Lost | Recorded samples/s | Recorded MB/s | Recorders' CPU s | CPU s per million |"
echo "|---:|:--|---:|---:|---:|---:|---:|---:|---:|"
fail=0
for r in $(seq "$reps"); do
  for mode in per-host one; do
    read -r w n l c <<<"$(run "$mode")"
    # pubsub-perftest counts in "written" all but its last sample per publisher.
    [ "$l" = 0 ] && [ "$n" -ge "$w" ] && [ "$w" -gt 0 ] || fail=1
    awk -v r="$r" -v m="$mode" -v w="$w" -v n="$n" -v l="$l" -v c="$c" -v e="$exec_s" -v s="$size" \
      'BEGIN {printf "| %d | %s | %d | %d | %d | %.0f | %.1f | %.1f | %.2f |\n", r, m, w, n, l,
              n / e, n * s / e / 1e6, c, n ? c / n * 1e6 : 0}'
  done
done
echo
[ -f "$tmp/merges" ] && sed 's/^/- /' "$tmp/merges"
exit $fail
