#!/usr/bin/env bash
# pubsub-perftest -pub to -sub plus pubsub-recorder, each in its own namespace on a bridge,
# reliable multicast. Checks: recorded count = published = received, every writer's sequence
# complete and in order, payload checksums identical; the recorder exits 0 on SIGTERM and the
# recording verifies. With --slow-ms D the recorder's storage is slowed (back-pressure): the
# publisher must block, nothing may be lost, and the recorder's RSS must stay under
# queue_max_bytes + --rss-overhead-mb (default 48). With --same-host the recorder runs in the
# publisher's namespace (its host) and must have read every sample from shared memory. Always:
# the recorder must have looked the data type up (XTypes TypeLookup of pubsub-perftest's
# participant) and stored it, and the first samples must decode with it (also as MCAP, through
# tests/tools/mcap_check). With --registrar-delay-ms D the recorder's registrar waits D ms
# before preparing matched writers: the first samples of the (reliable) writer come before it,
# are refused and offered again; nothing may be lost and no writer prepared on a receive thread.
# Usage: record_perftest.sh [--exec S] [--slow-ms D] [--queue-mb Q] [--rss-overhead-mb M]
#                           [--registrar-delay-ms D] [--same-host] -- PERFTEST ARGS
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib/netns.sh"
BIN=${BIN:?set BIN to the bin directory of the build}
exec_s=3 slow_ms=0 reg_ms=0 queue_mb=64 overhead_mb=48 rec_ns=2 pub_extra=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  case $1 in
    --same-host) rec_ns=0 pub_extra=(-transport SHMEM); shift ;;
    --exec) exec_s=$2; shift 2 ;;
    --slow-ms) slow_ms=$2; shift 2 ;;
    --registrar-delay-ms) reg_ms=$2; shift 2 ;;
    --queue-mb) queue_mb=$2; shift 2 ;;
    --rss-overhead-mb) overhead_mb=$2; shift 2 ;;
    *) echo "unknown option $1"; exit 2 ;;
  esac
done
shift
args=("$@")
netns_setup 3
out=$(mktemp -d) || exit 1  # removed on exit: only what this script made
trap 'netns_cleanup; [ -n "${KEEP_OUT:-}" ] && cp -r "$out" "$KEEP_OUT"; rm -rf "$out"' EXIT
cat >"$out/recorder.json" <<JSON
{"domain": 1, "interface": "veth$rec_ns", "storage": {"path": "$out/rec", "chunk_max_bytes": 1048576},
 "queue_max_bytes": $((queue_mb << 20)), "stats_interval_s": 1}
JSON
slow=()
[ "$slow_ms" != 0 ] && slow=(--test-storage-delay-ms "$slow_ms")
[ "$reg_ms" != 0 ] && slow+=(--test-registrar-delay-ms "$reg_ms")
netns_spawn $rec_ns $((exec_s + 120)) "$BIN/pubsub-recorder" --config "$out/recorder.json" "${slow[@]}" \
  >"$out/recorder.log" 2>&1
rec=$SPAWNED
# Follow the recorder's RSS (the recorder is timeout's child).
( peak=0
  while kill -0 $rec 2>/dev/null; do
    pid=$(pgrep -P $rec | head -n 1)
    if [ -n "$pid" ]; then
      kb=$(awk '/^VmRSS/ {print $2}' /proc/$pid/status 2>/dev/null)
      [ -n "$kb" ] && [ "$kb" -gt "$peak" ] && peak=$kb && echo $peak >"$out/rss_peak_kb"
    fi
    sleep 0.05
  done ) &
monitor=$!
netns_run 1 $((exec_s + 100)) "$BIN/pubsub-perftest" -sub -nic veth1 -noPrint -exec $((exec_s + 90)) \
  -summaryJson "$out/sub.json" "${args[@]}" >"$out/sub.out" 2>"$out/sub.err" &
sub=$!
netns_run 0 $((exec_s + 100)) "$BIN/pubsub-perftest" -pub -nic veth0 -noPrint -exec "$exec_s" \
  -numSubscribers 2 -summaryJson "$out/pub.json" "${args[@]}" "${pub_extra[@]}" 2>"$out/pub.err"
pub_rc=$?
wait $sub
sub_rc=$?
kill -TERM $rec
wait $rec
rec_rc=$?
wait $monitor
cat "$out/sub.out"
tail -n 1 "$out/pub.err"
grep -E "recorded|error|stopping" "$out/recorder.log" | tail -n 3
[ $pub_rc -eq 0 ] || { echo "FAIL: publisher exit $pub_rc"; tail "$out/pub.err"; exit 1; }
[ $sub_rc -eq 0 ] || { echo "FAIL: subscriber exit $sub_rc"; tail "$out/sub.err"; exit 1; }
[ $rec_rc -eq 0 ] || { echo "FAIL: recorder exit $rec_rc on SIGTERM"; tail "$out/recorder.log"; exit 1; }
"$BIN/recording_summary" "$out/rec" --perftest --verify >"$out/rec.json" || { echo "FAIL: recording_summary cannot read the recording"; exit 1; }
keyed=0
for a in "${args[@]}"; do [ "$a" = "-keyed" ] && keyed=1; done
python3 - "$out/pub.json" "$out/sub.json" "$out/rec.json" "$out/pub.err" "${out}/rss_peak_kb" \
  "$slow_ms" "$queue_mb" "$overhead_mb" "$keyed" "$out/recorder.log" "$rec_ns" <<'PY'
import json, os, re, sys
pub, sub, rec = (json.load(open(f)) for f in sys.argv[1:4])
pub_err = open(sys.argv[4]).read()
rss_file, slow, queue_mb, overhead_mb = sys.argv[5], int(sys.argv[6]), int(sys.argv[7]), int(sys.argv[8])
peak_mb = int(open(rss_file).read()) / 1024 if os.path.exists(rss_file) else 0
bad = []
print(f"published {pub['written']} received {sub['samples']} recorded {rec['samples']}; "
      f"checksums pub {pub['checksum']} sub {sub['checksum']} recording {rec['checksum']}; "
      f"recorder peak RSS {peak_mb:.1f} MB")
if not (pub["written"] == sub["samples"] == rec["samples"]): bad.append("counts differ")
if not (pub["checksum"] == sub["checksum"] == rec["checksum"]): bad.append("checksums differ")
if sub["lost"] or sub["duplicates"]: bad.append("subscriber lost or duplicated samples")
if int(sys.argv[9]) and rec["key_hashes"] != rec["samples"]:
    bad.append(f"keyed topic: {rec['key_hashes']} of {rec['samples']} records kept their key hash")
if rec["gaps"] or rec["verify_problems"]: bad.append(f"recording: {rec['gaps']} gaps, {rec['verify_problems']} verify problems")
for w in rec["writers"]:
    if w["first_seq"] != 1 or w["last_seq"] != w["samples"] or w["out_of_order"]:
        bad.append(f"writer {w['id']}: seq {w['first_seq']}..{w['last_seq']} for {w['samples']} samples, {w['out_of_order']} out of order")
if slow:
    blocked = int(re.search(r"(\d+) blocked writes", pub_err).group(1))
    print(f"publisher blocked {blocked} times; bound {queue_mb + overhead_mb} MB")
    if blocked == 0: bad.append("the publisher never blocked")
    if peak_mb == 0: bad.append("no RSS sample")
    if peak_mb > queue_mb + overhead_mb: bad.append(f"RSS {peak_mb:.1f} MB over {queue_mb} + {overhead_mb} MB")
# The recorder's summary line says which path the samples took.
summary = re.findall(r"recorded (\d+) samples .*; (\d+) samples over shared memory, (\d+) over UDP",
                     open(sys.argv[10]).read())
if not summary:
    bad.append("no summary line in the recorder's log")
else:
    total, shm, udp = map(int, summary[-1])
    print(f"recorder: {total} samples, {shm} over shared memory, {udp} over UDP")
    same_host = sys.argv[11] == "0"
    # The perftest end-of-run marker is recorded too.
    if same_host and (shm != total or udp != 0): bad.append("same host: not every sample came through shared memory")
    if not same_host and shm != 0: bad.append("another host: samples came through shared memory")
for b in bad: print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
[ $? -eq 0 ] || exit 1
best=0
for a in "${args[@]}"; do [ "$a" = "-best" ] && best=1; done
held="its first sample came before the registrar had prepared it; held back until it has"
early="its first sample came before the registrar had prepared it (best effort: prepared on the receive thread)"
if [ "$reg_ms" != 0 ] && [ "$best" = 0 ]; then
  grep -q "$held" "$out/recorder.log" || { echo "FAIL: no sample came before the registrar"; exit 1; }
  ! grep -q "prepared on the receive thread" "$out/recorder.log" ||
    { echo "FAIL: a reliable writer was prepared on a receive thread"; exit 1; }
  echo "the writer's first samples waited for the registrar (${reg_ms} ms), nothing lost"
elif [ "$reg_ms" != 0 ]; then
  # Best effort: a refused sample would be lost, so the writer is prepared where it arrives.
  [ "$(grep -c "$early" "$out/recorder.log")" = 1 ] ||
    { echo "FAIL: the best-effort writer was not prepared on its first sample's thread once"; exit 1; }
  echo "the best-effort writer's first sample came before the registrar (${reg_ms} ms): prepared on the receive thread, nothing lost"
fi

# The type: pubsub-perftest's writer announces TypeInformation and its participant answers
# TypeLookup; the recorder must have stored the type it got, and the first 50 ms of samples
# must decode with it (value.seq is the writer's sequence number).
type=pubsub::perftest::Sample
[ "$keyed" = 1 ] && type=pubsub::perftest::KeyedSample
grep -q "type $type: looked up from participant" "$out/recorder.log" ||
  { echo "FAIL: $type not looked up"; grep -i "type" "$out/recorder.log" | head; exit 1; }
if [ ! -x "$BIN/pubsub-replay" ]; then
  # The ThreadSanitizer build has the recorder only; the dev build runs the checks below.
  echo "type $type looked up (pubsub-replay not in $BIN: the stored type is checked by the dev build)"
  exit 0
fi
"$BIN/pubsub-replay" types "$out/rec" >"$out/types.idl" || { echo "FAIL: types exit $?"; exit 1; }
head -n 1 "$out/types.idl" | grep -qx "// type $type, from lookup; topics: PubsubPerftest_Data" ||
  { echo "FAIL: types output:"; cat "$out/types.idl"; exit 1; }
datalen=0
for ((i = 0; i + 1 < ${#args[@]}; i++)); do [ "${args[i]}" = -datalen ] && datalen=${args[i + 1]}; done
if [ "$datalen" -le 65536 ]; then
  "$BIN/pubsub-replay" export "$out/rec" --decode --end 0.05 -o "$out/first.jsonl" 2>"$out/decode.err" ||
    { echo "FAIL: export --decode exit $?"; cat "$out/decode.err"; exit 1; }
  python3 - "$out/first.jsonl" "$datalen" <<'PY' || exit 1
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
n = int(sys.argv[2]) - 20
bad = [l["seq"] for l in lines if l["value"]["seq"] != l["seq"] or len(l["value"].get("payload", [])) != max(n, 0)]
print("decoded %d samples with the looked-up type, %d mismatched" % (len(lines), len(bad)))
sys.exit(1 if bad or not lines else 0)
PY
  # The same samples as MCAP, read by the official reader and decoded by Foxglove's libraries.
  check=$HERE/../../tools/mcap_check
  "$BIN/pubsub-replay" export "$out/rec" --format mcap --end 0.05 -o "$out/first.mcap" 2>/dev/null ||
    { echo "FAIL: export --format mcap exit $?"; exit 1; }
  node "$check/check_mcap.mjs" "$out/first.mcap" "$out/first.jsonl" >"$out/mcap_check.out" 2>&1 ||
    { echo "FAIL: MCAP check"; cat "$out/mcap_check.out"; exit 1; }
  cut -c1-200 "$out/mcap_check.out"
fi
echo "type $type looked up and stored"

