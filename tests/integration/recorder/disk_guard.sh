#!/usr/bin/env bash
# The recorder's disk guard on a real filesystem: a 64-MiB tmpfs this script mounts (and
# unmounts), storage.min_free_bytes 24 MiB, 4-MiB segments, and two pubsub-perftest publishers
# on the recorder's host (one namespace, shared memory) sending ~50 MB/s of random 64-KiB and
# 1-KiB samples - the disk would fill within a second or two.
#   stop:   the recorder exits 1 with "free space ... is below storage.min_free_bytes ...:
#           recording stopped" on stderr; `pubsub-replay verify` exits 0 (the recording was
#           closed cleanly); the recording holds exactly the samples the recorder says it
#           recorded; free space never fell below the limit minus one segment and the queue
#           (what was accepted before the stop is still written).
#   rotate: publishing goes on for 8 s (several times the disk's size); SIGTERM -> exit 0;
#           verify exits 0; segments were removed (each logged with the space it freed; the
#           first segment is gone); free space, sampled every 20 ms, never fell below the limit
#           minus one segment (and 256 KiB for the index and its WAL, which grow between two
#           checks too: the guard checks at every roll, so what it does not see is at most the
#           one segment being written plus the index's growth meanwhile).
# Usage: disk_guard.sh stop|rotate
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib/netns.sh"
BIN=${BIN:?set BIN to the bin directory of the build}
mode=${1:?usage: disk_guard.sh stop|rotate}
limit=$((24 << 20)) segment=$((4 << 20)) queue=$((8 << 20))
netns_setup 1
out=$(mktemp -d) || exit 1  # removed on exit: only what this script made
mnt=$(mktemp -d) || exit 1
mounted=0
cleanup() {
  [ -n "${pids:-}" ] && kill $pids 2>/dev/null && wait $pids 2>/dev/null
  netns_cleanup
  [ $mounted = 1 ] && { umount "$mnt" || umount -l "$mnt"; }
  rmdir "$mnt"
  [ -n "${KEEP_OUT:-}" ] && cp -r "$out" "$KEEP_OUT"
  rm -rf "$out"
}
trap cleanup EXIT
mount -t tmpfs -o size=64m,mode=0755 pubsub-disk-guard "$mnt" || { echo "SKIP: cannot mount a tmpfs"; exit 77; }
mounted=1
free_bytes() {
  local blocks size
  read -r blocks size < <(stat -f -c '%a %S' "$mnt") && echo $((blocks * size))
}
cat >"$out/recorder.json" <<JSON
{"domain": 7, "interface": "veth0",
 "storage": {"path": "$mnt/rec", "chunk_max_bytes": 1048576, "segment_max_bytes": $segment,
             "min_free_bytes": $limit, "on_low_space": "$mode"},
 "queue_max_bytes": $queue, "stats_interval_s": 1}
JSON
netns_spawn 0 90 "$BIN/pubsub-recorder" --config "$out/recorder.json" >"$out/recorder.log" 2>&1
rec=$SPAWNED
# Free space, every 20 ms, while the recorder runs.
( while kill -0 $rec 2>/dev/null; do free_bytes; sleep 0.02; done >"$out/free.txt" ) &
sampler=$!
wait_for 20 "recorder start" grep -q "recording domain 7" "$out/recorder.log" || { tail "$out/recorder.log"; exit 1; }
exec_s=8
[ "$mode" = stop ] && exec_s=30  # ended by the recorder's stop
common=(-pub -domain 7 -nic veth0 -transport SHMEM -noPrint -payload random -numSubscribers 1
        -exec $exec_s)
netns_spawn 0 60 "$BIN/pubsub-perftest" "${common[@]}" -topic DiskGuard_Big -datalen 65536 \
  -pubRate 700 >"$out/pub_big.out" 2>"$out/pub_big.err"
pub_big=$SPAWNED
netns_spawn 0 60 "$BIN/pubsub-perftest" "${common[@]}" -topic DiskGuard_Small -datalen 1024 \
  -pubRate 4000 >"$out/pub_small.out" 2>"$out/pub_small.err"
pub_small=$SPAWNED
pids="$pub_big $pub_small"
start=$(date +%s.%N)
if [ "$mode" = stop ]; then
  # The recorder ends by itself; then the publishers, which it stopped acknowledging.
  wait $rec
  rec_rc=$?
  kill -TERM $pub_big $pub_small 2>/dev/null
  wait $pub_big $pub_small 2>/dev/null
  pub_rc=0
else
  wait $pub_big
  pub_rc=$?
  wait $pub_small
  pub_rc=$((pub_rc | $?))
  kill -TERM $rec
  wait $rec
  rec_rc=$?
fi
pids=""
end=$(date +%s.%N)
wait $sampler
grep -E "disk guard|free space|recorded|error|stopping" "$out/recorder.log" | head -n 4
grep -c "disk guard: removed segment" "$out/recorder.log" | sed 's/^/segment removals logged: /'
grep -E "disk guard|free space|recorded|stopping" "$out/recorder.log" | tail -n 3
"$BIN/pubsub-replay" verify "$mnt/rec" >"$out/verify.out" 2>&1
verify_rc=$?
tail -n 3 "$out/verify.out"
"$BIN/recording_summary" "$mnt/rec" >"$out/summary.json" || { echo "FAIL: recording_summary cannot read the recording"; exit 1; }
ls "$mnt/rec/segments" >"$out/segments.txt"
[ $pub_rc -eq 0 ] || { echo "FAIL: a publisher exited $pub_rc"; tail -n 3 "$out"/pub_*.err; exit 1; }
python3 - "$mode" "$rec_rc" "$verify_rc" "$out/recorder.log" "$out/summary.json" "$out/free.txt" \
  "$out/segments.txt" "$limit" "$segment" "$queue" "$mnt/rec" "$start" "$end" <<'PY'
import json, re, sys
mode, rec_rc, verify_rc, log_file, summary_file, free_file, segs_file = sys.argv[1:8]
limit, segment, queue = map(int, sys.argv[8:11])
rec_dir, start, end = sys.argv[11], float(sys.argv[12]), float(sys.argv[13])
rec_rc, verify_rc = int(rec_rc), int(verify_rc)
log = open(log_file).read()
summary = json.load(open(summary_file))
free = [int(l) for l in open(free_file) if l.strip()]
segs = open(segs_file).read().split()
bad = []
totals = re.findall(r"recorded (\d+) samples \(([\d.]+) MB\)", log)
if not totals:
    bad.append("no summary line in the recorder's log")
    said, said_mb = -1, 0.0
else:
    said, said_mb = int(totals[-1][0]), float(totals[-1][1])
low = min(free) if free else -1
removals = re.findall(r"disk guard: removed segment (\d+)\.seg \(([\d.]+) MB\) of \S+: free space now ([\d.]+) MB", log)
print(f"{mode}: recorder exit {rec_rc}, verify exit {verify_rc}, {end - start:.1f} s; recorder said "
      f"{said} samples ({said_mb} MB), the recording holds {summary['samples']}; segments left "
      f"{len(segs)} ({segs[0] if segs else '-'} .. {segs[-1] if segs else '-'}); {len(removals)} "
      f"removals logged; lowest free space {low / 1e6:.1f} MB in {len(free)} samples "
      f"(limit {limit / 1e6:.1f} MB)")
if verify_rc != 0: bad.append(f"pubsub-replay verify exit {verify_rc}")
if not free: bad.append("no free-space samples")
if mode == "stop":
    if rec_rc != 1: bad.append(f"recorder exit {rec_rc}, expected 1")
    stop = re.compile(r"^pubsub-recorder: free space [\d.]+ MB on " + re.escape(rec_dir) +
                      r" is below storage\.min_free_bytes 25\.2 MB: recording stopped$", re.M)
    if not stop.search(log): bad.append("no 'recording stopped' line from pubsub-recorder on stderr")
    if "storage failed" in log: bad.append("a storage failure besides the stop")
    if summary["samples"] != said: bad.append(f"the recording holds {summary['samples']} samples, the recorder said {said}")
    if said <= 0: bad.append("nothing recorded")
    if removals: bad.append("segments removed under 'stop'")
    if free and low < limit - segment - queue:
        bad.append(f"free space fell to {low} B, below limit - segment - queue")
else:
    if rec_rc != 0: bad.append(f"recorder exit {rec_rc} on SIGTERM, expected 0")
    if not removals: bad.append("no segment removal logged")
    if "00000001.seg" in segs: bad.append("the first segment is still there")
    if said_mb * 1e6 < 2 * 64 * 2**20: bad.append(f"only {said_mb} MB recorded: the disk never had to be rotated twice over")
    floor = limit - segment - (256 << 10)
    print(f"lowest free space {low - (limit - segment)} B above limit - one segment")
    if free and low < floor: bad.append(f"free space fell to {low} B, below limit - one segment - 256 KiB ({floor} B)")
    for n, mb, now in removals:
        if float(mb) <= 0: bad.append(f"segment {n}: {mb} MB freed")
    if summary["samples"] <= 0 or summary["samples"] >= said: bad.append(f"the recording holds {summary['samples']} of {said} samples")
for b in bad: print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
