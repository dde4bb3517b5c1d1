#!/usr/bin/env bash
# Soak: hours of mixed traffic into one recorder, sampling what would grow if something leaked.
# Run as root (it makes and removes two network namespaces). See --help.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
. "$ROOT/tests/integration/lib/netns.sh"
. "$ROOT/tests/integration/lib/ddsperf.sh"
. "$ROOT/tests/integration/lib/peers.sh"

usage() {
  cat <<EOF
usage: perf/soak.sh [--minutes N] [--churn-s S] [--sample-s S] [--retention-mb MB] [--out DIR]
                    [--check] [--bin DIR]

Publishers in namespace 0, pubsub-recorder in namespace 1, for N minutes (default 120):
  Small       libpubsub, reliable, 64 B at 1000/s
  Large       libpubsub, reliable, 256 KiB at 10/s
  Keyed       libpubsub, reliable, 100 instances, 256 B at 500/s
  BestEffort  libpubsub, best effort, 128 B at 200/s
  Cyclone     Cyclone DDS, reliable, 10 instances, 64 B at 100/s
  Churn       a new libpubsub writer process every S s (default 60) that writes for S/2 s and ends
The recorder rolls a segment every S s and keeps the newest MB (default 96) of them
(storage.retention.max_bytes; the recording grows about 5 MB a minute: LZ4 compresses the peers'
payload patterns). Every --sample-s (default 10) it records the recorder's RSS, open
file descriptors, threads, index size (index.sqlite3 with its -wal), segments, samples and lost.

Writes to DIR (default perf/results/soak): soak.csv, soak.png (gnuplot), soak.md (the figures),
recorder.log.tail (the log's last 40 lines). --check (the ctest's short run) exits 1 unless, after the first quarter of the
run (at most 10 minutes), RSS grew by less than 16 MB, the fds and threads did not grow, nothing
reliable was lost, retention removed segments and the recording verifies. --bin: the build's bin directory (default: $BIN,
else build/bin).
EOF
}

minutes=120 churn=60 sample=10 retention_mb=96 outdir=$ROOT/perf/results/soak check=0
BIN=${BIN:-$ROOT/build/bin}  # ctest sets BIN
while [ $# -gt 0 ]; do
  case $1 in
    --minutes) minutes=$2; shift 2 ;;
    --churn-s) churn=$2; shift 2 ;;
    --sample-s) sample=$2; shift 2 ;;
    --retention-mb) retention_mb=$2; shift 2 ;;
    --out) outdir=$2; shift 2 ;;
    --check) check=1; shift ;;
    --bin) BIN=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "soak.sh: unknown argument $1 (--help)" >&2; exit 2 ;;
  esac
done
for v in "$minutes" "$churn" "$sample" "$retention_mb"; do
  [[ $v =~ ^[0-9]+$ ]] && [ "$v" -gt 0 ] || { echo "soak.sh: $v is not a positive integer" >&2; exit 2; }
done
for p in pubsub-recorder pubsub-replay pubsub_qos_peer cyclone_qos_peer; do
  [ -x "$BIN/$p" ] || { echo "soak.sh: $BIN/$p is missing (build first, or --bin DIR)"; exit 2; }
done
DOMAIN=21
secs=$((minutes * 60))
commit=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null)  # at the start: the run's sources
mkdir -p "$outdir" || exit 2
netns_setup 2
work=$(mktemp -d) || exit 1  # the recording: removed at the end, as everything this made
pids="" rec=""
trap 'kill $pids $rec 2>/dev/null; wait 2>/dev/null; netns_cleanup; rm -rf "$work"' EXIT

cat >"$work/r.json" <<EOF
{"domain": $DOMAIN, "interface": "veth1", "stats_interval_s": 60,
 "storage": {"path": "$work/rec", "segment_max_duration_s": $churn,
             "retention": {"max_bytes": $((retention_mb << 20))}}}
EOF
netns_spawn 1 $((secs + 120)) "$BIN/pubsub-recorder" --config "$work/r.json" >"$work/recorder.log" 2>&1
rec=$SPAWNED
wait_for 20 "the recorder's start" grep -q "recording domain" "$work/recorder.log" || exit 1
rpid=$(pgrep -P "$rec" -x pubsub-recorder || echo "$rec")
steady() {  # TOPIC RATE VENDOR ARGS...: a writer for the whole run
  local topic=$1 rate=$2 vendor=$3
  shift 3
  peer 0 "$vendor" pub --topic "$topic" --rate "$rate" --count $(((secs + 60) * rate)) \
    --timeout $((secs + 120)) "$@" >/dev/null 2>"$work/$topic.err" &
  pids="$pids $!"
}
steady Small 1000 pubsub --size 64
steady Large 10 pubsub --size 262144
steady Keyed 500 pubsub --keys 100 --size 256
steady BestEffort 200 pubsub --size 128 --reliability best_effort
steady Cyclone 100 cyclone --keys 10 --size 64
(
  child=""
  trap 'kill -INT $child 2>/dev/null; wait $child; exit 0' TERM
  while :; do
    peer 0 pubsub pub --topic Churn --rate 100 --count $((churn * 50)) --linger 0 \
      --timeout $((churn + 30)) >/dev/null 2>>"$work/Churn.err" &
    child=$!
    wait $child
    sleep $((churn - churn / 2)) &
    child=$!
    wait $child
  done
) &
churner=$!
pids="$pids $churner"

echo "t_s,rss_kb,fds,threads,index_bytes,segments,oldest_segment,recording_bytes,samples,lost,writers" >"$outdir/soak.csv"
start=$(date +%s)
while :; do
  now=$(date +%s)
  t=$((now - start))
  [ $t -ge $secs ] && break
  rss=$(awk '/^VmRSS/ {print $2}' "/proc/$rpid/status" 2>/dev/null) || break
  threads=$(awk '/^Threads/ {print $2}' "/proc/$rpid/status")
  fds=$(ls "/proc/$rpid/fd" | wc -l)
  index=$(cat "$work/rec/index.sqlite3" "$work/rec/index.sqlite3-wal" 2>/dev/null | wc -c)
  segs=$(ls "$work/rec/segments" | wc -l)
  oldest=$(ls "$work/rec/segments" | head -1)
  oldest=${oldest%%.*}
  oldest=$((10#${oldest:-0}))  # 00000003.seg -> 3: retention removed 1 and 2; none yet: 0
  bytes=$(du -sb "$work/rec/segments" | cut -f1)
  st=$("$BIN/pubsub-recorder" ctl --path "$work/rec" status --json 2>/dev/null)
  samples=$(echo "$st" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["samples"], d["lost"], d["writers"])' 2>/dev/null)
  set -- $samples
  echo "$t,$rss,$fds,$threads,$index,$segs,$oldest,$bytes,${1:-},${2:-},${3:-}" >>"$outdir/soak.csv"
  [ $check = 1 ] || echo "soak: $t/$secs s  RSS $((rss / 1024)) MB  fds $fds  threads $threads  samples ${1:-?}"
  sleep $((sample - ($(date +%s) - now) > 0 ? sample - ($(date +%s) - now) : 0))
done
kill $churner 2>/dev/null
wait $churner 2>/dev/null
kill -INT $pids 2>/dev/null
for p in $pids; do wait "$p" 2>/dev/null; done
pids=""
kill -INT "$rpid"
wait "$rec"
rc=$?
rec=""
"$BIN/pubsub-replay" verify "$work/rec" >"$work/verify.out" 2>&1
vrc=$?
tail -n 40 "$work/recorder.log" >"$outdir/recorder.log.tail"
"$BIN/pubsub-replay" info --json "$work/rec" >"$work/info.json" 2>/dev/null
python3 "$HERE/soak_report.py" "$outdir" "$work/info.json" "$rc" "$vrc" "$minutes" "$churn" \
  "$retention_mb" "$check" "$commit"
