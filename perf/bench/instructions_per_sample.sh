#!/usr/bin/env bash
# Instructions per sample of the recorder and of a plain subscriber, counted by callgrind: a
# figure that does not depend on what else the machine is doing (this VM's timings spread by
# 30 % from run to run; callgrind's counts repeat). One publisher (pubsub-perftest -pub) in one
# network namespace; in the other, in turn, pubsub-recorder and `pubsub-perftest -sub`, each
# under `valgrind --tool=callgrind`, which slows it some 50x: the reliable publisher waits for
# it, so the batches are as full as at full rate.
#
# Only the sample path is counted (callgrind --toggle-collect): the receive workers' delivery of
# each batch of datagrams (decoding, the reader, the recorder's append or the subscriber's
# count), and the storage writer thread's work per batch of chunks (LZ4, CRC, write, index). The
# kernel's work (recvmmsg, write) is not an instruction callgrind sees.
#
# Usage (root): perf/bench/instructions_per_sample.sh [--size B] [--payload zero|random]
#               [--exec S] [--compression lz4|none] [--set KEY=VALUE]... [--bin DIR] [--keep DIR]
# --compression is the recorder's storage.compression (default lz4, the recorder's default);
# --set passes any other setting to the recorder (its --set), e.g. storage.lz4_acceleration=4.
# Prints a markdown table: samples, instructions and instructions per sample for each, and the
# ratio recorder / subscriber; with --keep DIR the callgrind files stay in DIR (read them with
# callgrind_annotate --inclusive=yes). Exit 0 when both took samples, 1 otherwise, 2 bad usage,
# 77 not root or no valgrind.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/integration/lib/netns.sh"
BIN=$ROOT/build/bin
size=32 payload=zero exec_s=10 keep="" compression=lz4 sets=()
while [ $# -gt 0 ]; do
  case $1 in
    --size) size=$2; shift 2 ;;
    --payload) payload=$2; shift 2 ;;
    --exec) exec_s=$2; shift 2 ;;
    --bin) BIN=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    --compression) compression=$2; shift 2 ;;
    --set) sets+=(--set "$2"); shift 2 ;;
    -h | --help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown option $1 (see --help)"; exit 2 ;;
  esac
done
[[ $exec_s =~ ^[0-9]+$ && $size =~ ^[0-9]+$ ]] || { echo "--exec and --size take whole numbers"; exit 2; }
[ "$payload" = zero ] || [ "$payload" = random ] || { echo "--payload: $payload is not zero or random"; exit 2; }
[ "$compression" = lz4 ] || [ "$compression" = none ] || { echo "--compression: $compression is not lz4 or none"; exit 2; }
for t in pubsub-perftest pubsub-recorder; do
  [ -x "$BIN/$t" ] || { echo "no $BIN/$t: build first (cmake --build --preset dev)"; exit 2; }
done
command -v valgrind >/dev/null && command -v callgrind_annotate >/dev/null ||
  { echo "valgrind is missing (Debian package valgrind)"; exit 77; }
[ -z "$keep" ] || mkdir -p "$keep" || exit 2
netns_setup_pair
tmp=""
trap 'netns_cleanup; [ -z "$tmp" ] || rm -rf "$tmp"' EXIT
tmp=$(mktemp -d) || exit 1

# The functions whose calls are counted, with all they call.
TOGGLES=(--toggle-collect='pubsub::detail::UdpTransport::deliver*'
  --toggle-collect='storage::SegmentWriter::Impl::write_batch*')

# instructions FILE: the total of the counted events (Ir) in a callgrind output file.
instructions() {
  callgrind_annotate "$1" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1; exit}'
}

# run_third WHO: the publisher against WHO (recorder or subscriber) under callgrind; prints
# "samples instructions".
run_third() {
  local who=$1 out="$tmp/cg.$1"
  local vg=(valgrind --tool=callgrind --callgrind-out-file="$out" "${TOGGLES[@]}")
  if [ "$who" = recorder ]; then
    cat >"$tmp/rec.json" <<JSON
{"domain": 13, "interface": "veth1", "transports": ["udp"], "stats_interval_s": 1,
 "storage": {"path": "$tmp/rec", "fsync": "none", "compression": "$compression"}}
JSON
    netns_spawn 1 $((exec_s + 300)) "${vg[@]}" "$BIN/pubsub-recorder" --config "$tmp/rec.json" "${sets[@]}" \
      >"$tmp/rec.log" 2>&1
  else
    netns_spawn 1 $((exec_s + 300)) "${vg[@]}" "$BIN/pubsub-perftest" -sub -nic veth1 -domain 13 \
      -datalen "$size" -exec $((exec_s + 240)) -noPrint -summaryJson "$tmp/sub.json" \
      >"$tmp/sub.log" 2>&1
  fi
  local pid=$SPAWNED
  if [ "$who" = recorder ]; then
    for _ in $(seq 600); do grep -q "recording domain" "$tmp/rec.log" && break; sleep 0.1; done
  else
    sleep 5
  fi
  netns_run 0 $((exec_s + 240)) "$BIN/pubsub-perftest" -pub -nic veth0 -domain 13 \
    -datalen "$size" -payload "$payload" -exec "$exec_s" -noPrint -waitSubscribers 60 \
    >/dev/null 2>"$tmp/pub.err"
  if [ "$who" = recorder ]; then kill -INT "$pid"; fi # the subscriber ends at the end of the run
  wait "$pid"
  local n
  if [ "$who" = recorder ]; then
    n=$(grep -o 'recorded [0-9]* samples' "$tmp/rec.log" | tail -n 1 | awk '{print $2}')
  else
    n=$(python3 -c "import json; d = json.load(open('$tmp/sub.json')); \
print(sum(w['samples'] for w in d['writers']))" 2>/dev/null)
  fi
  [ -z "$keep" ] || cp "$out" "$keep/"
  echo "${n:-0} $(instructions "$out")"
}

echo "# Instructions per sample (callgrind, sample path only): pubsub-perftest -pub -> third reader,"
echo "# $size B $payload payload, reliable UDP, ${exec_s}s of publishing, recorder compression $compression${sets[*]:+ ${sets[*]}}, commit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null)"
echo
echo "| Third reader | Samples | Instructions | Instructions per sample |"
echo "|:--|---:|---:|---:|"
fail=0
declare -A PER
for who in subscriber recorder; do
  read -r n ir < <(run_third "$who")
  if [ "${n:-0}" -gt 0 ] && [ -n "${ir:-}" ]; then
    PER[$who]=$(awk -v i="$ir" -v n="$n" 'BEGIN {printf "%.0f", i / n}')
  else
    PER[$who]=0 fail=1
  fi
  printf '| %s | %s | %s | %s |\n' "$who" "${n:-0}" "${ir:-?}" "${PER[$who]}"
done
echo
awk -v r="${PER[recorder]}" -v s="${PER[subscriber]}" \
  'BEGIN {if (s > 0) printf "recorder / subscriber: %.2f\n", r / s}'
exit $fail
