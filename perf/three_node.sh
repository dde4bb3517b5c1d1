#!/usr/bin/env bash
# Three-host perf harness: the reference reports' tables (RTI Perftest throughput/latency, RTI
# Recording Service), measured on three network namespaces (publisher, subscriber, third host)
# on one Linux bridge, next to Cyclone DDS's ddsperf and raw UDP multicast (iperf 2) in the same
# run. Run as root. See `perf/three_node.sh --help` and perf/results/three_node.md.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
TN=$HERE/three_node
CMDLINE="perf/three_node.sh"
for a in "$@"; do
  if [[ $a =~ ^[A-Za-z0-9_./:=,+-]+$ ]]; then CMDLINE+=" $a"; else CMDLINE+=" '${a//\'/\'\\\'\'}'"; fi
done

RTI_SIZES="32 64 128 256 512 1024 2048 4096 8192 16384 32768 63000"
REC_SIZES="32 256 1024 4096 63000"

usage() {
  cat <<EOF
usage: perf/three_node.sh [options]            (as root: creates and removes network namespaces)
       perf/three_node.sh --print-commands --nic PUB_ADDR --nic SUB_ADDR --nic THIRD_ADDR [options]

Hosts: publisher (ns 0), subscriber (ns 1) and a third host (ns 2) on a Linux bridge, veth MTU
9000 (--mtu), 198.18.0.0/15, multicast routed. The third host is a second subscriber (a non-storing
reader); with --recorder each throughput point is also measured with pubsub-recorder there
instead, in the same run (interleaved), which gives the "recorder / no recorder" ratio.

Matrix (lists are comma or space separated):
  --sizes "32 64 ..."      sample sizes, 32..67108864 (default: RTI's list $RTI_SIZES;
                           with --recorder: the recorder table's $REC_SIZES; raw UDP stops at 65507)
  --latency-sizes "..."    sizes for --latency (default: the --sizes list)
  --exec SECONDS           length of each run (default 10)
  --reps N                 repetitions of each point; the report takes the median (default 1)
  --reliability be,rel     (default be,rel; with --recorder: rel)
  --keyed                  keyed topic (same as --keying keyed); --instances N (default 1000)
  --keying unkeyed,keyed   both (ddsperf "unkeyed" is its KeyedSeq topic with one key)
  --batch BYTES[,BYTES]    pubsub-perftest -batchSize (default 8192); --no-batch = --batch 0
  --payload zero|random[,random]   pubsub-perftest -payload (ddsperf sends its own constant bytes)
  --recorder               add pubsub-recorder as the third host (next to the second-subscriber runs)
  --peer ddsperf           the same matrix with ddsperf pub/sub (and ddsperf pub/sub + our recorder)
  --iperf                  raw UDP multicast limit per datagram size (iperf 2, pub -> sub + third)
  --latency                ping-pong latency percentiles (ours -latencyTest, ddsperf ping/pong)
  --no-throughput          only --iperf / --latency
  --full                   the committed matrix (perf/results/three_node.md): RTI throughput tables
                           (be/rel, batch 8192 and none), the recorder reference test (rel, keyed and
                           unkeyed, zero and random payload, ours and ddsperf, --recorder-reps
                           repetitions), raw UDP, latency (be/rel); the options above set exec etc.
  --recorder-reps N        repetitions of the recorder test points in --full (default 3)
  --recorder-set KEY=VALUE a configuration setting for pubsub-recorder (its --set), repeatable:
                           e.g. storage.compression=none; with mode=snapshot the samples stay in
                           memory and the recorder's own count is checked (ctl status --json)
  --disk-mb N              with the recorder runs: the disk's limit, measured before the first run
                           with "dd if=/dev/zero bs=1M count=N conv=fdatasync" into DIR (the disk the
                           recordings go to), three times, the best (default 2048; 0 = not measured)
  --floor-seconds S        with the recorder runs: the least CPU storing a sample can cost, measured
                           before the first run by store_floor (in --bin) for each size up to 16 MiB,
                           S seconds per figure, writing 256 MiB into DIR (default 1; 0 = not
                           measured): the report's "least CPU per sample rec / 2nd"
Other:
  --mtu BYTES              MTU of the bridge and veth links, 1280..9000 (default 9000)
  --out DIR                output directory, new or empty (default ./three_node-YYYYmmdd-HHMMSS)
  --bin DIR                pubsub binaries (default build-release/bin if it has them, else build/bin)
  --dry-run                list the runs and the estimated time, run nothing (no root needed)
  --print-commands         print what each of three real hosts must run (with --nic x3), run nothing
  --nic ADDR               with --print-commands: the publisher's, subscriber's, third host's address
Output in DIR: one CSV per scenario in the seed's column layout, results.jsonl (every run),
report.md (tables, ratio columns, method, machine), *.png plots, raw/ (every process's output).
Exit: 0 all runs complete with no loss on reliable topics, 1 some run failed or lost samples,
2 bad usage, 77 cannot run here (not root, iproute2 or a tool missing).
EOF
}

die() { echo "three_node.sh: $*" >&2; exit 2; }
listify() { local s=${*//,/ }; echo $s; }

sizes="" lat_sizes="" exec_s=10 reps=1 rels="" keyings="unkeyed" instances=1000 batches="8192"
payloads="zero" recorder=0 peer="" iperf=0 latency=0 throughput=1 full=0 rec_reps=3
out="" bin="" dry_run=0 print_commands=0 nics=() rec_sets=() disk_mb=2048 floor_s=1
while [ $# -gt 0 ]; do
  case $1 in
    --sizes) sizes=$(listify "${2:?}"); shift 2 ;;
    --latency-sizes) lat_sizes=$(listify "${2:?}"); shift 2 ;;
    --exec) exec_s=${2:?}; shift 2 ;;
    --reps) reps=${2:?}; shift 2 ;;
    --reliability) rels=$(listify "${2:?}"); shift 2 ;;
    --keyed) keyings="keyed"; shift ;;
    --keying) keyings=$(listify "${2:?}"); shift 2 ;;
    --instances) instances=${2:?}; shift 2 ;;
    --batch) batches=$(listify "${2:?}"); shift 2 ;;
    --no-batch) batches="0"; shift ;;
    --payload) payloads=$(listify "${2:?}"); shift 2 ;;
    --recorder) recorder=1; shift ;;
    --peer) peer=${2:?}; shift 2 ;;
    --iperf) iperf=1; shift ;;
    --latency) latency=1; shift ;;
    --no-throughput) throughput=0; shift ;;
    --full) full=1; shift ;;
    --recorder-reps) rec_reps=${2:?}; shift 2 ;;
    --recorder-set) rec_sets+=(--set "${2:?}"); shift 2 ;;
    --disk-mb) disk_mb=${2:?}; shift 2 ;;
    --floor-seconds) floor_s=${2:?}; shift 2 ;;
    --out) out=${2:?}; shift 2 ;;
    --mtu) NS_MTU=${2:?}; shift 2 ;;
    --bin) bin=${2:?}; shift 2 ;;
    --dry-run) dry_run=1; shift ;;
    --print-commands) print_commands=1; shift ;;
    --nic) nics+=($(listify "${2:?}")); shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown option '$1'" ;;
  esac
done

# ---- validation ---------------------------------------------------------------------------
is_uint() { [[ $1 =~ ^[0-9]+$ ]]; }
[ -z "$peer" ] || [ "$peer" = ddsperf ] || die "--peer: only 'ddsperf' is supported"
[[ $exec_s =~ ^[0-9]+([.][0-9]+)?$ ]] && awk -v e="$exec_s" 'BEGIN {exit !(e >= 1)}' ||
  die "--exec: '$exec_s' is not a number of seconds >= 1"
exec_i=$(awk -v e="$exec_s" 'BEGIN {printf "%d", e + 0.999}')
is_uint "$reps" && [ "$reps" -ge 1 ] || die "--reps: '$reps' is not a count >= 1"
is_uint "$rec_reps" && [ "$rec_reps" -ge 1 ] || die "--recorder-reps: '$rec_reps' is not a count >= 1"
is_uint "$instances" && [ "$instances" -ge 1 ] || die "--instances: '$instances' is not a count >= 1"
is_uint "$disk_mb" || die "--disk-mb: '$disk_mb' is not a whole number of MiB"
[[ $floor_s =~ ^[0-9]+([.][0-9]+)?$ ]] && awk -v s="$floor_s" 'BEGIN {exit !(s <= 600)}' ||
  die "--floor-seconds: '$floor_s' is not a number of seconds, 0..600"
[ -n "$sizes" ] || { if [ $recorder = 1 ]; then sizes=$REC_SIZES; else sizes=$RTI_SIZES; fi; }
[ -n "$lat_sizes" ] || lat_sizes=$sizes
[ -n "$rels" ] || { if [ $recorder = 1 ]; then rels="rel"; else rels="be rel"; fi; }
for s in $sizes $lat_sizes; do
  is_uint "$s" && [ "$s" -ge 32 ] && [ "$s" -le 67108864 ] || die "size '$s' is not 32..67108864 bytes"
done
for r in $rels; do [ "$r" = be ] || [ "$r" = rel ] || die "--reliability: '$r' is not be or rel"; done
for k in $keyings; do [ "$k" = keyed ] || [ "$k" = unkeyed ] || die "--keying: '$k' is not keyed or unkeyed"; done
for p in $payloads; do [ "$p" = zero ] || [ "$p" = random ] || die "--payload: '$p' is not zero or random"; done
for b in $batches; do is_uint "$b" && [ "$b" -le 65000 ] || die "--batch: '$b' is not 0..65000 bytes"; done
[ -z "${NS_MTU:-}" ] || { is_uint "$NS_MTU" && [ "$NS_MTU" -ge 1280 ] && [ "$NS_MTU" -le 9000 ]; } ||
  die "--mtu: '$NS_MTU' is not 1280..9000 bytes"

# ---- the run list -------------------------------------------------------------------------
# One run per line: kind tool rel keying payload batch third size rep
#   kind thr|lat|raw; tool ours|ddsperf|iperf; third sub2|rec|none.
RUNS=()
# add_thr TOOLS RELS KEYINGS PAYLOADS BATCHES THIRDS SIZES REPS: the cross product, ordered so
# that what is compared (tools, third hosts) runs back to back for each size and repetition.
# ddsperf has neither payload nor batching choice: it runs once per (rel, keying, third).
add_thr() {
  local tools=$1 rl=$2 kl=$3 pl=$4 bl=$5 thirds=$6 sl=$7 n=$8 r k p b s i t th first_pb
  for r in $rl; do for k in $kl; do
    first_pb=1
    for p in $pl; do for b in $bl; do
      for s in $sl; do for ((i = 1; i <= n; i++)); do for t in $tools; do for th in $thirds; do
        if [ "$t" = ddsperf ]; then
          [ $first_pb = 1 ] && RUNS+=("thr ddsperf $r $k const - $th $s $i")
        else
          RUNS+=("thr ours $r $k $p $b $th $s $i")
        fi
      done; done; done; done
      first_pb=0
    done; done
  done; done
}
add_raw() {  # UDP datagrams stop at 65507 bytes: larger sizes have no raw figure
  local s i
  for s in $1; do
    [ "$s" -le 65507 ] || continue
    for ((i = 1; i <= $2; i++)); do RUNS+=("raw iperf - - - - sub2 $s $i"); done
  done
}
add_lat() {
  local tools=$1 rl=$2 kl=$3 sl=$4 n=$5 r k s i t
  for r in $rl; do for k in $kl; do for s in $sl; do for ((i = 1; i <= n; i++)); do for t in $tools; do
    RUNS+=("lat $t $r $k zero 0 none $s $i")
  done; done; done; done; done
}
tools="ours"
[ "$peer" = ddsperf ] && tools="ours ddsperf"
if [ $full = 1 ]; then
  # The RTI Perftest batching seed: be/rel, batching 8192 and none, unkeyed, two subscribers.
  add_thr "ours ddsperf" "be rel" "unkeyed" "zero" "8192 0" "sub2" "$RTI_SIZES" "$reps"
  # The recorder reference test (Recording Service seed + issue): reliable, keyed and unkeyed,
  # compressible and random payloads, ours and ddsperf, recorder vs second subscriber.
  add_thr "ours ddsperf" "rel" "unkeyed keyed" "zero random" "8192" "sub2 rec" "$REC_SIZES" "$rec_reps"
  add_raw "$RTI_SIZES" "$reps"
  add_lat "ours ddsperf" "be rel" "unkeyed" "$RTI_SIZES" "$reps"
else
  thirds="sub2"
  [ $recorder = 1 ] && thirds="sub2 rec"
  [ $throughput = 1 ] && add_thr "$tools" "$rels" "$keyings" "$payloads" "$batches" "$thirds" "$sizes" "$reps"
  [ $iperf = 1 ] && add_raw "$sizes" "$reps"
  [ $latency = 1 ] && add_lat "$tools" "$rels" "$keyings" "$lat_sizes" "$reps"
fi
[ ${#RUNS[@]} -gt 0 ] || die "nothing to run (--no-throughput without --iperf or --latency)"
OVERHEAD_S=2  # per run beyond --exec: discovery, recorder start/close, process start/exit
estimate_s=$(( ${#RUNS[@]} * (exec_i + OVERHEAD_S) ))
fmt_time() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

if [ $print_commands = 1 ]; then
  [ ${#nics[@]} -eq 3 ] || die "--print-commands needs three addresses: --nic PUB --nic SUB --nic THIRD"
  printf '%s\n' "${RUNS[@]}" | python3 "$TN/print_commands.py" --exec "$exec_s" \
    --instances "$instances" --nic "${nics[0]}" --nic "${nics[1]}" --nic "${nics[2]}" \
    --cmdline "$CMDLINE"
  exit $?
fi
if [ $dry_run = 1 ]; then
  printf '%s\n' "${RUNS[@]}"
  echo "${#RUNS[@]} runs, about $(fmt_time $estimate_s)" >&2
  exit 0
fi

# ---- requirements -------------------------------------------------------------------------
need() { command -v "$1" >/dev/null || { echo "three_node.sh: $2" >&2; exit 77; }; }
[ "$(id -u)" -eq 0 ] || { echo "three_node.sh: must run as root (it creates network namespaces, a bridge and veth links)" >&2; exit 77; }
need ip "iproute2 is missing ('ip' not found): apt-get install iproute2"
need python3 "python3 is missing (the report is made by perf/three_node/*.py)"
need timeout "coreutils 'timeout' is missing"
if [ -z "$bin" ]; then
  bin=$ROOT/build/bin
  [ -x "$ROOT/build-release/bin/pubsub-perftest" ] && [ -x "$ROOT/build-release/bin/pubsub-recorder" ] &&
    [ -x "$ROOT/build-release/bin/pubsub-replay" ] && bin=$ROOT/build-release/bin
fi
bin=$(cd "$bin" 2>/dev/null && pwd) || die "--bin: no such directory"
for r in "${RUNS[@]}"; do
  set -- $r
  case $2 in
    ours) need "$bin/pubsub-perftest" "$bin/pubsub-perftest is missing: cmake --preset release && cmake --build --preset release --target pubsub-perftest pubsub-recorder pubsub-replay" ;;
    ddsperf) need ddsperf "ddsperf is missing (Debian package cyclonedds-tools) but --peer ddsperf asked for it" ;;
    iperf) need iperf "iperf (Debian package iperf, version 2) is missing but --iperf asked for it" ;;
  esac
  if [ "$7" = rec ]; then
    need "$bin/pubsub-recorder" "$bin/pubsub-recorder is missing (needed by --recorder)"
    need "$bin/pubsub-replay" "$bin/pubsub-replay is missing (counts what the recorder stored)"
  fi
done

# ---- namespaces and cleanup ---------------------------------------------------------------
NS_PREFIX="tn$$-"
. "$ROOT/tests/integration/lib/netns.sh"
. "$ROOT/tests/integration/lib/ddsperf.sh"
. "$ROOT/perf/lib/dd.sh"
PIDS=()
CURRENT_REC=""
cleanup() {
  local rc=$? p
  trap - EXIT INT TERM
  [ "$NS_COUNT" -gt 0 ] && ns_signal TERM 0 1 2  # the programs first: GNU time then exits too
  for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
  for p in "${PIDS[@]}"; do
    for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$p" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$p" 2>/dev/null
    wait "$p" 2>/dev/null
  done
  [ "$NS_COUNT" -gt 0 ] && ns_signal KILL 0 1 2
  netns_cleanup
  [ -n "$CURRENT_REC" ] && rm -rf "$CURRENT_REC"
  if [ $rc -eq 130 ]; then
    echo >&2
    echo "three_node.sh: interrupted; namespaces and processes removed" >&2
    if [ -s "${out:-/nonexistent}/results.jsonl" ]; then
      python3 "$TN/report.py" "$out" && echo "three_node.sh: partial report: $out/report.md" >&2
    fi
  fi
  exit $rc
}
# Results go into a new or empty directory: what is there already is not ours to overwrite (the
# default name too: two runs started in the same second must not share one).
[ -n "$out" ] || out=./three_node-$(date +%Y%m%d-%H%M%S)
if [ -e "$out" ] && [ -n "$(ls -A "$out" 2>/dev/null)" ]; then
  die "--out $out is not empty; give a new or empty directory"
fi
out_given=$out
out=""
netns_setup 3
trap cleanup EXIT
trap 'exit 130' INT TERM
if ! ip -n "${NS_PREFIX}2" link show veth2 >/dev/null 2>&1 ||
   ! ip -n "${NS_PREFIX}br" link show br0 >/dev/null 2>&1; then
  echo "three_node.sh: could not create the namespaces, bridge and veth links (kernel without veth/bridge support, or not allowed here)" >&2
  exit 77
fi
out=$out_given
MTU=$(ip -n "${NS_PREFIX}0" -o link show veth0 | sed -n 's/.* mtu \([0-9]*\).*/\1/p')

mkdir -p "$out/raw" || die "cannot create $out"
out=$(cd "$out" && pwd)
: >"$out/results.jsonl"

# spawn NS LIMIT OUTFILE ERRFILE cmd...: runs cmd in namespace NS in the background, killed
# after LIMIT seconds; SPAWNED is timeout's PID (waited for with finish). With CPUF set (and GNU
# time installed) the command's user+system CPU seconds go to the file $CPUF.
TIME_BIN=""
[ -x /usr/bin/time ] && /usr/bin/time -f "%U %S" -o /dev/null true 2>/dev/null && TIME_BIN=/usr/bin/time
spawn() {
  local ns=$1 limit=$2 o=$3 e=$4
  shift 4
  if [ -n "${CPUF:-}" ] && [ -n "$TIME_BIN" ]; then
    set -- "$TIME_BIN" -f "%U %S" -o "$CPUF" "$@"
  fi
  if [ "$o" = "$e" ]; then
    timeout -k 5 "$limit" ip netns exec "${NS_PREFIX}$ns" "$@" >"$o" 2>&1 &
  else
    timeout -k 5 "$limit" ip netns exec "${NS_PREFIX}$ns" "$@" >"$o" 2>"$e" &
  fi
  SPAWNED=$!
  PIDS+=("$SPAWNED")
}
# finish PID: waits for it (in this shell: it is our child); RC is its exit status.
finish() {
  wait "$1"
  RC=$?
}
# ns_signal SIG NS...: sends SIG to the programs running in our namespaces NS (not to GNU time,
# which then reports their CPU time when they exit).
ns_signal() {
  local sig=$1 ns p
  shift
  for ns in "$@"; do
    for p in $(ip netns pids "${NS_PREFIX}$ns" 2>/dev/null); do
      [ "$(cat /proc/$p/comm 2>/dev/null)" = time ] || kill -"$sig" "$p" 2>/dev/null
    done
  done
}

python3 - "$out/env.json" "$CMDLINE" "$bin" "$MTU" "$NS_PREFIX" "$ROOT" "${#RUNS[@]}" "$exec_s" <<'PY'
import json, os, platform, re, subprocess, sys, time
path, cmdline, bindir, mtu, prefix, root, nruns, exec_s = sys.argv[1:9]
def sh(*a):
    try:
        r = subprocess.run(a, capture_output=True, text=True, timeout=10)
        return (r.stdout + r.stderr).strip()
    except Exception:
        return ""
cpu = ""
for line in sh("lscpu").splitlines():
    if line.startswith("Model name:"):
        cpu = line.split(":", 1)[1].strip()
build_type = ""
cache = os.path.join(os.path.dirname(bindir), "CMakeCache.txt")
if os.path.exists(cache):
    for line in open(cache):
        if line.startswith("CMAKE_BUILD_TYPE:"):
            build_type = line.split("=", 1)[1].strip()
mem_kb = 0
for line in open("/proc/meminfo"):
    if line.startswith("MemTotal:"):
        mem_kb = int(line.split()[1])
# Committed reports name files relative to the repository: no machine paths.
cmdline = re.sub(r"(--out[ =])\S+", r"\1DIR", cmdline)
def shown(p):  # a path inside the repository, relative to it
    a = os.path.abspath(p)
    return os.path.relpath(a, root) if a.startswith(os.path.abspath(root) + os.sep) else p
cmdline = re.sub(r"(--bin[ =])(\S+)", lambda m: m.group(1) + shown(m.group(2)), cmdline)
bin_shown = shown(bindir)
env = {
    "cmdline": cmdline, "started": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "start_ts": time.time(),
    "nproc": os.cpu_count(), "cpu": cpu, "kernel": platform.release(), "mem_gb": round(mem_kb / 2**20, 1),
    "mtu": mtu, "namespaces": prefix, "bin": bin_shown, "build_type": build_type,
    "git": sh("git", "-C", root, "describe", "--always", "--dirty", "--tags"),
    "git_commit": sh("git", "-C", root, "rev-parse", "HEAD"),
    "git_date": sh("git", "-C", root, "log", "-1", "--format=%ci"),
    "ddsperf": sh("dpkg-query", "-W", "-f", "${Version}", "cyclonedds-tools"),
    "iperf": sh("iperf", "-v").split(" (")[0],
    "gnuplot": sh("gnuplot", "--version"),
    "runs": int(nruns), "exec_s": float(exec_s),
    "loadavg_start": open("/proc/loadavg").read().split()[:3],
    "bin_built": time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(max(
        os.path.getmtime(os.path.join(bindir, b)) for b in
        ("pubsub-perftest", "pubsub-recorder", "pubsub-replay")
        if os.path.exists(os.path.join(bindir, b))))),
}
json.dump(env, open(path, "w"), indent=1)
PY

# ---- the disk's limit (only before recorder runs) -----------------------------------------
# (dd_write_mbs: perf/lib/dd.sh)
has_rec=0
for r in "${RUNS[@]}"; do
  set -- $r
  [ "$7" = rec ] && has_rec=1
done
if [ $has_rec = 1 ] && [ "$disk_mb" -gt 0 ]; then
  echo "three_node.sh: the disk's limit for the recorder: dd of $disk_mb MiB with fdatasync into $out, three times" >&2
  # Three runs back to back, the best counts: on this VM the first often runs at a third of the
  # next (the page cache it fills is memory the guest has not touched yet), and the next two at
  # 0.7-1.2 GB/s.
  dd1=$(dd_write_mbs "$out/dd.bin" "$disk_mb")
  dd2=$(dd_write_mbs "$out/dd.bin" "$disk_mb")
  dd3=$(dd_write_mbs "$out/dd.bin" "$disk_mb")
  python3 - "$out/env.json" "$disk_mb" "$dd1" "$dd2" "$dd3" <<'PY'
import json, sys
path, mib, runs = sys.argv[1], int(sys.argv[2]), [int(x) for x in sys.argv[3:] if x]
env = json.load(open(path))
env["disk_mib"], env["disk_runs_mbs"] = mib, runs
env["disk_mbs"] = max(runs) if runs else None
json.dump(env, open(path, "w"), indent=1)
if not runs:
    print("three_node.sh: dd into the output directory failed: no disk limit in the report", file=sys.stderr)
PY
fi

# ---- the least CPU storing a sample can cost (only before recorder runs) -----------------
floor_sizes=$(for s in $sizes; do [ "$s" -le 16777216 ] && echo "$s"; done | paste -sd, -)
if [ $has_rec = 1 ] && [ "$floor_s" != 0 ] && awk -v s="$floor_s" 'BEGIN {exit !(s > 0)}' &&
   [ -n "$floor_sizes" ]; then
  if [ ! -x "$bin/store_floor" ]; then
    echo "three_node.sh: $bin/store_floor is missing: no floor in the report (cmake --build --preset release --target store_floor)" >&2
  else
    echo "three_node.sh: the least CPU storing a sample can cost: store_floor --sizes $floor_sizes --seconds $floor_s into $out" >&2
    if "$bin/store_floor" --sizes "$floor_sizes" --seconds "$floor_s" --write-dir "$out" \
         --write-mb 256 >"$out/store_floor.csv" 2>"$out/store_floor.err"; then
      python3 - "$out/env.json" "$out/store_floor.csv" "$floor_s" <<'PY'
import csv, json, sys
path, floor_csv, secs = sys.argv[1], sys.argv[2], float(sys.argv[3])
env = json.load(open(path))
env["store_floor_seconds"] = secs
env["store_floor"] = {r["size"]: {k: float(r[k + "_ns"]) for k in ("crc", "copy", "write")}
                      for r in csv.DictReader(open(floor_csv))}
json.dump(env, open(path, "w"), indent=1)
PY
    else
      echo "three_node.sh: store_floor failed: no floor in the report: $(cat "$out/store_floor.err")" >&2
    fi
  fi
fi

# ---- runs ---------------------------------------------------------------------------------
RECCFG=$out/raw/recorder-d1.json  # ours: domain 1 (pubsub-perftest's default)
# write_meta DIR key=value...
write_meta() {
  local d=$1
  shift
  printf '%s\n' "$@" >"$d/meta.txt"
}
rec_config() {  # DOMAIN PATH -> config file
  local f=$out/raw/recorder-d$1.json
  cat >"$f" <<JSON
{"domain": $1, "interface": "veth2", "storage": {"path": "$2"}, "stats_interval_s": 1}
JSON
  echo "$f"
}
# start_recorder DIR DOMAIN: pubsub-recorder in ns 2 recording into DIR/rec.
start_recorder() {
  local d=$1 cfg
  cfg=$(rec_config "$2" "$d/rec")
  CURRENT_REC=$d/rec
  CPUF=$d/cpu_third spawn 2 $((exec_i + 200)) "$d/rec.log" "$d/rec.log" "$bin/pubsub-recorder" \
    --config "$cfg" --path "$d/rec" "${rec_sets[@]}"
  REC_PID=$SPAWNED
  # It has joined the domain when it logs "recording domain ..." (well under a second).
  for _ in $(seq 100); do
    grep -q "recording domain" "$d/rec.log" 2>/dev/null && break
    sleep 0.05
  done
}
# recorder_threads_cpu NS: the CPU seconds (user + system) each named thread of pubsub-recorder
# in namespace NS has used so far (README "Threads"), one "NAME SECONDS" line per name.
recorder_threads_cpu() {
  local p t
  for p in $(ip netns pids "${NS_PREFIX}$1" 2>/dev/null); do
    [ "$(cat /proc/"$p"/comm 2>/dev/null)" = pubsub-recorder ] || continue
    for t in /proc/"$p"/task/*; do
      echo "$(cat "$t"/comm 2>/dev/null) $(awk '{print $14 + $15}' "$t"/stat 2>/dev/null)"
    done
  done | awk -v hz="$(getconf CLK_TCK)" 'NF == 2 {s[$1] += $2}
    END {for (n in s) printf "%s %.2f\n", n, s[n] / hz}' | sort
}
# stop_recorder DIR: its threads' CPU, its own counts per topic (`ctl status --json`: what
# snapshot mode, which writes nothing, is checked against), SIGTERM, wait, count what it stored,
# remove the recording.
stop_recorder() {
  local d=$1 rc
  recorder_threads_cpu 2 >"$d/rec_threads.txt"
  timeout 20 "$bin/pubsub-recorder" ctl --path "$d/rec" status --json >"$d/rec_status.json" \
    2>"$d/rec_status.err"
  ns_signal TERM 2
  finish "$REC_PID"
  echo "rec_rc=$RC" >>"$d/meta.txt"
  timeout 120 "$bin/pubsub-replay" info "$d/rec" --json >"$d/rec_info.json" 2>"$d/rec_info.err"
  echo "rec_info_rc=$?" >>"$d/meta.txt"
  du -sk "$d/rec" 2>/dev/null | awk '{print "rec_kb=" $1}' >>"$d/meta.txt"
  rm -rf "$d/rec"
  CURRENT_REC=""
}

ours_flags() {  # rel keying -> common perftest flags
  local f=()
  [ "$1" = be ] && f+=(-best)
  [ "$2" = keyed ] && f+=(-keyed -instances "$instances")
  printf '%s ' "${f[@]}"
}
ddsperf_flags() {
  local f=()
  [ "$1" = be ] && f+=(-u)
  [ "$2" = keyed ] && f+=(-n "$instances")
  printf '%s ' "${f[@]}"  # not echo: it would take "-n" for itself
}

run_thr_ours() {  # dir rel keying payload batch third size
  local d=$1 rel=$2 k=$3 p=$4 b=$5 third=$6 s=$7 f
  f=$(ours_flags "$rel" "$k")
  local lim=$((exec_i + 120)) sub3
  if [ "$third" = rec ]; then
    start_recorder "$d" 1
  else
    CPUF=$d/cpu_third spawn 2 $lim "$d/sub2.csv" "$d/sub2.err" "$bin/pubsub-perftest" -sub -nic veth2 -noPrint \
      -noOutputHeaders -datalen "$s" -exec $((exec_i + 90)) $f
    sub3=$SPAWNED
  fi
  CPUF=$d/cpu_sub spawn 1 $lim "$d/sub.csv" "$d/sub.err" "$bin/pubsub-perftest" -sub -nic veth1 -noPrint \
    -noOutputHeaders -datalen "$s" -exec $((exec_i + 90)) $f
  local sub=$SPAWNED
  CPUF=$d/cpu_pub spawn 0 $lim /dev/null "$d/pub.err" "$bin/pubsub-perftest" -pub -nic veth0 -noPrint -datalen "$s" \
    -exec "$exec_s" -numSubscribers 2 -batchSize "$b" -payload "$p" -summaryJson "$d/pub.json" $f
  local pub=$SPAWNED
  finish "$pub"; echo "pub_rc=$RC" >>"$d/meta.txt"
  finish "$sub"; echo "sub_rc=$RC" >>"$d/meta.txt"
  if [ "$third" = rec ]; then
    stop_recorder "$d"
  else
    finish "$sub3"; echo "sub2_rc=$RC" >>"$d/meta.txt"
  fi
}

run_thr_ddsperf() {  # dir rel keying third size
  local d=$1 rel=$2 k=$3 third=$4 s=$5 f
  f=$(ddsperf_flags "$rel" "$k")
  local lim=$((exec_i + 60)) sub3 minmatch=2
  if [ "$third" = rec ]; then
    start_recorder "$d" 0
    minmatch=1  # the recorder is no ddsperf participant; it joined before the publisher
  else
    CPUF=$d/cpu_third spawn 2 $lim "$d/sub2.out" "$d/sub2.out" env "$(ddsperf_env 2)" ddsperf -D $((exec_i + 15)) $f sub
    sub3=$SPAWNED
  fi
  CPUF=$d/cpu_sub spawn 1 $lim "$d/sub.out" "$d/sub.out" env "$(ddsperf_env 1)" ddsperf -D $((exec_i + 15)) $f sub
  local sub=$SPAWNED
  sleep 0.3
  CPUF=$d/cpu_pub spawn 0 $lim "$d/pub.out" "$d/pub.out" env "$(ddsperf_env 0)" ddsperf -D "$exec_s" \
    -Qminmatch:$minmatch -Qinitwait:10 $f pub size "$s"
  local pub=$SPAWNED
  finish "$pub"; echo "pub_rc=$RC" >>"$d/meta.txt"
  # ddsperf sub runs until -D; once the publisher is gone (its last repairs included) SIGTERM
  # ends it early, and it still checks for loss and sets its exit status as at -D.
  sleep 1.5
  ns_signal TERM 1
  [ "$third" = rec ] || ns_signal TERM 2
  finish "$sub"; echo "sub_rc=$RC" >>"$d/meta.txt"
  if [ "$third" = rec ]; then
    stop_recorder "$d"
  else
    finish "$sub3"; echo "sub2_rc=$RC" >>"$d/meta.txt"
  fi
}

IPERF_GROUP=239.255.77.1 IPERF_PORT=5301  # not DDS's 239.255.0.1:7400/7401
run_raw_iperf() {  # dir size
  local d=$1 s=$2 lim=$((exec_i + 30))
  spawn 1 $lim "$d/server1.out" "$d/server1.out" iperf -s -u -B $IPERF_GROUP -p $IPERF_PORT -i 1 -e -l 65507 -w 4M
  local s1=$SPAWNED
  spawn 2 $lim "$d/server2.out" "$d/server2.out" iperf -s -u -B $IPERF_GROUP -p $IPERF_PORT -i 1 -e -l 65507 -w 4M
  local s2=$SPAWNED
  sleep 0.5
  spawn 0 $lim "$d/client.out" "$d/client.out" iperf -c $IPERF_GROUP -p $IPERF_PORT -u -b 40G -l "$s" \
    -t "$exec_s" -T 1 -e -w 4M
  finish "$SPAWNED"; echo "client_rc=$RC" >>"$d/meta.txt"
  sleep 1
  ns_signal INT 1 2
  finish "$s1"
  finish "$s2"
}

run_lat_ours() {  # dir rel keying size
  local d=$1 f lim=$((exec_i + 120))
  f=$(ours_flags "$2" "$3")
  spawn 1 $lim /dev/null "$d/sub.err" "$bin/pubsub-perftest" -sub -latencyTest -nic veth1 -noPrint \
    -datalen "$4" -exec $((exec_i + 90)) $f
  local sub=$SPAWNED
  spawn 0 $lim "$d/lat.csv" "$d/pub.err" "$bin/pubsub-perftest" -pub -latencyTest -nic veth0 -noPrint \
    -noOutputHeaders -datalen "$4" -exec "$exec_s" $f
  finish "$SPAWNED"; echo "pub_rc=$RC" >>"$d/meta.txt"
  finish "$sub"; echo "sub_rc=$RC" >>"$d/meta.txt"
}

run_lat_ddsperf() {  # dir rel keying size
  local d=$1 f lim=$((exec_i + 60))
  f=$(ddsperf_flags "$2" "$3")
  spawn 1 $lim "$d/pong.out" "$d/pong.out" env "$(ddsperf_env 1)" ddsperf -D $((exec_i + 15)) $f pong
  local pong=$SPAWNED
  sleep 0.3
  spawn 0 $lim "$d/ping.out" "$d/ping.out" env "$(ddsperf_env 0)" ddsperf -D "$exec_s" -Qminmatch:1 \
    -Qinitwait:10 $f ping size "$4"
  finish "$SPAWNED"; echo "pub_rc=$RC" >>"$d/meta.txt"
  ns_signal TERM 1
  finish "$pong"; echo "sub_rc=$RC" >>"$d/meta.txt"
}

progress() {  # i n label
  local i=$1 n=$2 label=$3 now el left
  now=$(date +%s)
  el=$((now - T0))
  if [ "$i" -gt 1 ]; then left=$((el * (n - i + 1) / (i - 1))); else left=$estimate_s; fi
  local line
  line=$(printf '[%3d/%d] %s | %s elapsed, ~%s left' "$i" "$n" "$label" "$(fmt_time $el)" "$(fmt_time $left)")
  if [ -t 2 ]; then printf '\r\033[K%s' "$line" >&2; else echo "$line" >&2; fi
}

echo "three_node.sh: ${#RUNS[@]} runs of ${exec_s} s (about $(fmt_time $estimate_s)); namespaces ${NS_PREFIX}0..2, MTU $MTU; binaries $bin; output $out" >&2
T0=$(date +%s)
failed=0
n=${#RUNS[@]}
for ((ri = 0; ri < n; ri++)); do
  set -- ${RUNS[$ri]}
  kind=$1 tool=$2 rel=$3 keying=$4 payload=$5 batch=$6 third=$7 size=$8 rep=$9
  case $kind in
    thr) label="thr $tool $rel $keying"
         [ "$tool" = ours ] && label+=" $payload batch $batch"
         [ "$third" = rec ] && label+=" +recorder" || label+=" +2nd sub" ;;
    raw) label="raw UDP (iperf)" ;;
    lat) label="latency $tool $rel $keying" ;;
  esac
  label+=" | size $size B"
  [ "$kind" = raw ] || [ $reps -gt 1 ] || [ $full = 1 ] && label+=" rep $rep"
  progress $((ri + 1)) "$n" "$label"
  d=$(printf '%s/raw/%04d-%s-%s-%s-%s-%s-%s-%s-%s-%s' "$out" $((ri + 1)) "$kind" "$tool" "$rel" "$keying" \
        "$payload" "$batch" "$third" "$size" "$rep")
  mkdir -p "$d"
  write_meta "$d" kind=$kind tool=$tool rel=$rel keying=$keying payload=$payload batch=$batch \
    third=$third size=$size rep=$rep exec=$exec_s instances=$instances mtu=$MTU
  PIDS=()
  case $kind-$tool in
    thr-ours) run_thr_ours "$d" "$rel" "$keying" "$payload" "$batch" "$third" "$size" ;;
    thr-ddsperf) run_thr_ddsperf "$d" "$rel" "$keying" "$third" "$size" ;;
    raw-iperf) run_raw_iperf "$d" "$size" ;;
    lat-ours) run_lat_ours "$d" "$rel" "$keying" "$size" ;;
    lat-ddsperf) run_lat_ddsperf "$d" "$rel" "$keying" "$size" ;;
  esac
  if ! python3 "$TN/collect.py" "$d" "$out" >>"$out/results.jsonl"; then
    failed=$((failed + 1))
    [ -t 2 ] && echo >&2
    echo "three_node.sh: run $((ri + 1)) ($label) failed or lost samples: see $d" >&2
  fi
done
[ -t 2 ] && echo >&2
python3 - "$out/env.json" <<'PY'
import json, sys, time
env = json.load(open(sys.argv[1]))
env["finished"] = time.strftime("%Y-%m-%d %H:%M:%S %Z")
env["duration_s"] = round(time.time() - env["start_ts"])
env["loadavg_end"] = open("/proc/loadavg").read().split()[:3]
json.dump(env, open(sys.argv[1], "w"), indent=1)
PY
python3 "$TN/report.py" "$out" || { echo "three_node.sh: report generation failed" >&2; exit 1; }
echo "three_node.sh: $n runs in $(fmt_time $(($(date +%s) - T0))), $failed with problems; report: $out/report.md" >&2
[ $failed -eq 0 ]
