#!/usr/bin/env bash
# A ddsperf participant that appears is matched within 2 s; one that is killed (SIGKILL, no
# goodbye) is dropped within its lease; nothing is left behind.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib/netns.sh"
. "$HERE/../lib/ddsperf.sh"
BIN=${BIN:?set BIN to the bin directory of the build}
ddsperf_require
LEASE_S=3
DDSPERF_LEASE=${LEASE_S}s
netns_setup 2
out=$(mktemp -d) || exit 1  # removed on exit: only what this script made
dp=""
trap 'kill -9 $dp 2>/dev/null; netns_cleanup; rm -rf "$out"' EXIT
# The probe's events on stdout; libpubsub's own messages (such as "removed 1 shared-memory
# segment(s) of dead processes", left by another test's SIGKILL) on stderr, shown apart.
netns_run 1 40 "$BIN/discovery_probe" -nic veth1 -domain 0 -seconds 14 >"$out/probe.log" \
  2>"$out/probe.err" &
probe=$!
wait_for 10 "'ready' from discovery_probe" grep -q " ready" "$out/probe.log" ||
  { cat "$out/probe.err"; exit 1; }
start_ms=$(( $(date +%s%N) / 1000000 ))
ip netns exec "${NS_PREFIX}0" env "$(ddsperf_env 0)" ddsperf -D 60 pub 10Hz size 32 >"$out/dp.out" 2>&1 &
dp=$!
wait_for 10 "ddsperf writer matched by discovery_probe" grep -q " writer+ DDSPerfRDataKS " "$out/probe.log" ||
  { cat "$out/probe.log"; exit 1; }
kill -9 $dp || { echo "FAIL: ddsperf (pid $dp) already gone before SIGKILL"; exit 1; }
kill_ms=$(( $(date +%s%N) / 1000000 ))
wait $probe
cat "$out/probe.log" "$out/probe.err"
python3 - "$out/probe.log" "$start_ms" "$kill_ms" "$LEASE_S" "$(( $(date +%s%N) / 1000000 ))" <<'PY'
import sys
log, start, kill, lease, now = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
lines = [l.split() for l in open(log) if l.strip()]
final = [l for l in lines if l[1] == "final"][-1]
end_ms_probe = int(final[0])
offset = now - end_ms_probe          # probe time -> wall-clock ms (within a few ms)
ev = lambda kind, what=None: [int(l[0]) + offset for l in lines if l[1] == kind and (what is None or l[2] == what)]
bad = []
added = ev("writer+", "DDSPerfRDataKS")
joined = [t for l, t in zip(lines, [int(l[0]) + offset for l in lines]) if l[1] == "participant+" and "DDSPerf:" in " ".join(l[3:])]
if not added: bad.append("ddsperf's data writer never matched")
elif added[0] - start > 2000: bad.append(f"matched after {added[0] - start} ms (> 2000)")
else: print(f"ddsperf data writer matched {added[0] - start} ms after ddsperf started")
gone = [int(l[0]) + offset for l in lines if l[1] == "participant-"]
lost = ev("writer-", "DDSPerfRDataKS")
if not gone: bad.append("ddsperf participant never dropped")
else:
    dt = gone[-1] - kill
    print(f"ddsperf participant dropped {dt} ms after SIGKILL (lease {lease} s)")
    if dt > lease * 1000 + 1500: bad.append(f"dropped after {dt} ms, lease is {lease} s")
if not lost: bad.append("data writer never reported lost")
if final[2:] != ["participants=0", "writers=0", "readers=0", "matched=0"]:
    bad.append("left behind: " + " ".join(final[2:]))
for b in bad: print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
