#!/usr/bin/env bash
# Same-host delivery, measured in one run: pubsub-perftest over its three paths (INTRA,
# SHMEM with and without loans, UDPv4) next to Fast DDS 2.9 (perf/peers/fastdds_perftest:
# intra-process, SHM transport, data sharing, zero copy, UDPv4), reliable, every process in one
# network namespace (one host). memcpy of the same sizes is the limit beside them. Then the
# recorder on the publisher's host: recorded MB/s over shared memory and over UDP, zero and random
# payloads, against dd conv=fdatasync on the same disk, with the recorder's CPU per GB.
# Cyclone DDS (ddsperf) over iceoryx is the third peer where it applies: its shared memory carries
# only fixed-size types, so at 32 B (ddsperf's K32 topic), KEEP_LAST 16, with -L; next to it the
# same ddsperf over UDP. It needs iox-roudi and no other RouDi running (else the column is skipped).
# Usage (root): perf/bench/same_host.sh [--exec S] [--sizes "..."] [--latency-sizes "..."]
#               [--record-dir DIR] [--fsync none|chunk|segment|interval] [--no-recorder]
#               [--no-fastdds] [--no-cyclone]
# Prints markdown tables; every figure is one run of --exec seconds (default 3).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/integration/lib/netns.sh"
BIN=${BIN:-$ROOT/build-release/bin}
exec_s=3 sizes="32 1024 63000 65536 1048576 4194304" lat_sizes="32 1024 65536 1048576"
record_parent=/var/tmp recorder=1 fastdds=1 fsync=chunk cyclone=1
while [ $# -gt 0 ]; do
  case $1 in
    --exec) exec_s=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --latency-sizes) lat_sizes=$2; shift 2 ;;
    --record-dir) record_parent=$2; shift 2 ;;
    --fsync) fsync=$2; shift 2 ;;
    --no-recorder) recorder=0; shift ;;
    --no-fastdds) fastdds=0; shift ;;
    --no-cyclone) cyclone=0; shift ;;
    *) echo "unknown option $1"; exit 2 ;;
  esac
done
for t in pubsub-perftest pubsub-recorder memcpy_bench; do
  [ -x "$BIN/$t" ] || { echo "build first: cmake --preset release && cmake --build --preset release"; exit 2; }
done
if [ $fastdds = 1 ] && [ ! -x "$BIN/fastdds_perftest" ]; then
  echo "no $BIN/fastdds_perftest (needs libfastrtps-dev: scripts/setup.sh); or pass --no-fastdds"
  exit 2
fi
netns_setup 1
tmp=$(mktemp -d) || exit 1  # removed on exit: only what this script made
rec_tmp=
roudi_pid= roudi_shm=()
trap 'cyclone_stop; netns_cleanup; rm -rf "$tmp"; [ -n "$rec_tmp" ] && rm -rf "$rec_tmp"' EXIT
run() { netns_run 0 $((exec_s + 60)) "$@"; }

# perftest_cmd TOOL MODE SIZE [-latencyTest]: sets EXE and ARGS for one side of a run. TOOL:
# ours|fastdds; MODE: INTRA, INTRA+zc, SHMEM, SHMEM+zc, SHMEM+ds (Fast DDS data sharing), UDPv4.
perftest_cmd() {
  local tool=$1 mode=$2 size=$3 dom=11
  shift 3
  EXE=$BIN/pubsub-perftest
  [ "$tool" = fastdds ] && EXE=$BIN/fastdds_perftest dom=57
  TRANSPORT=${mode%%+*}
  ARGS=("$@" -transport "$TRANSPORT" -datalen "$size" -domain $dom -noPrint -noOutputHeaders)
  case $mode in
    *+zc) ARGS+=(-zeroCopy) ;;
    *+ds) ARGS+=(-dataSharing) ;;
  esac
  # Fast DDS takes -nic for its UDPv4 transport only; ours uses it for discovery everywhere.
  if [ "$tool" = ours ] || [ "$TRANSPORT" = UDPv4 ]; then ARGS+=(-nic veth0); fi
}
# One run; prints CSV column COL of the row: the subscriber's (throughput, col 3 = samples/s) or
# the publisher's (latency, col 6 = median us).
run_pair() {
  local col=$1
  shift
  perftest_cmd "$@"
  local sub_out=/dev/null pub_out=$tmp/pub.csv
  [ "$col" = 3 ] && sub_out=$tmp/sub.csv pub_out=/dev/null
  if [ "$TRANSPORT" = INTRA ]; then
    run "$EXE" "${ARGS[@]}" -exec "$exec_s" 2>>"$tmp/err" | tail -n 1 | cut -d, -f"$col"
    return
  fi
  run "$EXE" -sub "${ARGS[@]}" -exec $((exec_s + 40)) >"$sub_out" 2>>"$tmp/err" &
  local s=$!
  run "$EXE" -pub "${ARGS[@]}" -exec "$exec_s" >"$pub_out" 2>>"$tmp/err"
  wait $s
  if [ "$col" = 3 ]; then cut -d, -f3 "$tmp/sub.csv"; else tail -n 1 "$tmp/pub.csv" | cut -d, -f6; fi
}
tput() { run_pair 3 "$@"; }
lat() { run_pair 6 "$@" -latencyTest; }
fmt() {  # samples/s size -> "N (G Gbit/s)"
  awk -v r="${1:-0}" -v s="$2" 'BEGIN { if (r == "") r = 0;
    if (s >= 16384) printf "%.0f (%.1f Gbit/s)", r, r * s * 8 / 1e9; else printf "%.0f", r }'
}
ratio() { awk -v a="${1:-0}" -v b="${2:-0}" 'BEGIN { printf "%.2f", (b > 0) ? a / b : 0 }'; }

# ---- Cyclone DDS over iceoryx ----------------------------------------------------------------
# Each iceoryx run gets a RouDi of our own, started fresh (one left behind by ddsperf's SIGTERM exit
# does not serve the next run). Left out, with the reason, when a RouDi is running already or its
# shared memory is there: not ours to touch.
cyclone_check() {
  local f
  [ $cyclone = 1 ] || return 0
  if ! command -v ddsperf >/dev/null || ! command -v iox-roudi >/dev/null; then
    echo "(Cyclone columns left out: no ddsperf or iox-roudi; scripts/setup.sh installs them)"
    cyclone=0 && return 0
  fi
  if pgrep -x -r R,S,D,T,t iox-roudi >/dev/null; then  # zombies aside
    echo "(Cyclone columns left out: an iox-roudi this script did not start is running)"
    cyclone=0 && return 0
  fi
  for f in iceoryx_mgmt "$(id -un)"; do
    if [ -e "/dev/shm/$f" ]; then
      echo "(Cyclone columns left out: /dev/shm/$f exists and is not this script's)"
      cyclone=0 && return 0
    fi
  done
  roudi_shm=(/dev/shm/iceoryx_mgmt "/dev/shm/$(id -un)")  # checked absent above
  for f in shm udp; do
    {
      echo '<CycloneDDS><Domain id="any">'
      [ $f = shm ] && echo '<SharedMemory><Enable>true</Enable><LogLevel>warn</LogLevel></SharedMemory>'
      echo '<General><Interfaces><NetworkInterface name="veth0"/></Interfaces></General>'
      echo '</Domain></CycloneDDS>'
    } >"$tmp/cyclone-$f.xml"
  done
}
roudi_start() {
  local i
  iox-roudi -l warning >"$tmp/roudi.log" 2>&1 &
  roudi_pid=$!
  for ((i = 0; i < 100; i++)); do
    grep -q "RouDi is ready" "$tmp/roudi.log" && break
    sleep 0.1
  done
}
# RouDi is ours: stopped by PID (killed if it hangs), and the shared memory it created removed if
# it did not remove it itself (it aborts at times on shutdown).
cyclone_stop() {
  local i
  [ -n "$roudi_pid" ] || return 0
  kill -TERM "$roudi_pid" 2>/dev/null
  for ((i = 0; i < 50; i++)); do kill -0 "$roudi_pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$roudi_pid" 2>/dev/null
  wait "$roudi_pid" 2>/dev/null
  rm -f "${roudi_shm[@]}"
  roudi_pid=
}
# cyclone_run shm|udp ROLE_A ROLE_B: ddsperf ROLE_B (sub|pong) started first, then ROLE_A
# (pub|ping) once it is matched; K32, KEEP_LAST 16, -L as over iceoryx it needs. ddsperf ends
# itself with SIGTERM at the end of -D over iceoryx, so its exit status is not used; ROLE_B is
# stopped by PID (timeout's, which forwards the signal and kills it 5 s later if it hangs).
cyclone_run() {
  local path=$1 a=$2 b=$3
  local cmd=(env "CYCLONEDDS_URI=file://$tmp/cyclone-$path.xml" ddsperf -L -i 61 -T K32 -k 16)
  [ "$path" = shm ] && roudi_start
  netns_spawn 0 $((exec_s + 30)) "${cmd[@]}" "$b" >"$tmp/cyc-$b.log" 2>&1
  local pid_b=$SPAWNED
  run "${cmd[@]}" -Qminmatch:1 -Qinitwait:10 -D "$exec_s" "$a" >"$tmp/cyc-$a.log" 2>&1
  kill -TERM "$pid_b" 2>/dev/null
  wait "$pid_b" 2>/dev/null
  [ "$path" = shm ] && cyclone_stop
}
# Throughput: "N (lost L)" = samples ddsperf sub received / exec seconds, and its lost count.
cyclone_tput() {
  cyclone_run "$1" pub sub
  grep -o 'size 32 total [0-9]* lost [0-9]*' "$tmp/cyc-sub.log" | tail -n 1 |
    awk -v s="$exec_s" '{printf "%.0f (lost %d)", $4 / s, $6}'
}
# Latency: one-way median (us) = ddsperf ping's 50% round trip to the pong process / 2.
cyclone_lat() {
  cyclone_run "$1" ping pong
  local pong_pid
  pong_pid=$(grep -o '^\[[0-9]*\]' "$tmp/cyc-pong.log" | head -n 1 | tr -d '[]')
  grep "vm:$pong_pid size 32 " "$tmp/cyc-ping.log" | tail -n 1 |
    awk '{for (i = 1; i < NF; i++) if ($i == "50%") {sub("us", "", $(i+1)); printf "%.1f", $(i+1) / 2}}'
}

ours_modes="INTRA INTRA+zc SHMEM SHMEM+zc UDPv4"
fast_modes="INTRA SHMEM SHMEM+ds SHMEM+zc UDPv4"
[ $fastdds = 1 ] || fast_modes=""
cyclone_check
cyc_modes="iceoryx UDPv4"
[ $cyclone = 1 ] || cyc_modes=""
# cyc_cell tput|lat MODE SIZE: Cyclone's figure at 32 B, "-" elsewhere (no fixed-size type).
cyc_cell() {
  [ "$3" = 32 ] || { echo "-"; return; }
  local path=shm
  [ "$2" = UDPv4 ] && path=udp
  "cyclone_$1" $path
}
echo "# Same host: pubsub vs Fast DDS 2.9, reliable, $(nproc) cores, $(uname -r), exec ${exec_s}s, commit $(git -C "$ROOT" rev-parse --short HEAD)"
echo
echo "Throughput, samples/s (Gbit/s of payload from 16 KiB). zc = loans (-zeroCopy: the publisher"
echo "writes only the 20-byte header into the loan, so past a few KiB the rate is the notification"
echo "rate and the Gbit/s is nominal), ds = Fast DDS data sharing. memcpy = one copy of the sample"
echo "into a 64 MiB ring (perf/memcpy_bench), the cost every non-loaned write pays once."
echo
header="| Size (B) | memcpy copies/s (GB/s)"
for m in $ours_modes; do header+=" | ours $m"; done
for m in $fast_modes; do header+=" | Fast DDS $m"; done
for m in $cyc_modes; do header+=" | Cyclone $m (K32)"; done
echo "$header |"
echo "|---:|---:$(for m in $ours_modes $fast_modes $cyc_modes; do printf '|---:'; done)|"
declare -A R
for size in $sizes; do
  mc=$("$BIN/memcpy_bench" "$size" 1)
  line="| $size | $(echo "$mc" | awk -F, '{printf "%.0f (%.1f)", $2, $3}')"
  for m in $ours_modes; do R[ours,$m,$size]=$(tput ours "$m" "$size"); line+=" | $(fmt "${R[ours,$m,$size]}" "$size")"; done
  for m in $fast_modes; do R[fast,$m,$size]=$(tput fastdds "$m" "$size"); line+=" | $(fmt "${R[fast,$m,$size]}" "$size")"; done
  for m in $cyc_modes; do line+=" | $(cyc_cell tput "$m" "$size")"; done
  echo "$line |"
done
echo
if [ $fastdds = 1 ]; then
  echo "Ratios (same run): ours SHMEM / Fast DDS SHMEM, ours SHMEM+zc / best of Fast DDS data sharing"
  echo "and zero copy, ours SHMEM / ours UDPv4, ours INTRA / Fast DDS INTRA."
  echo
  echo "| Size (B) | SHMEM / Fast SHMEM | SHMEM+zc / Fast best(ds, zc) | SHMEM / our UDPv4 | INTRA / Fast INTRA |"
  echo "|---:|---:|---:|---:|---:|"
  for size in $sizes; do
    best=$(awk -v a="${R[fast,SHMEM+ds,$size]:-0}" -v b="${R[fast,SHMEM+zc,$size]:-0}" 'BEGIN {print (a > b) ? a : b}')
    echo "| $size | $(ratio "${R[ours,SHMEM,$size]}" "${R[fast,SHMEM,$size]}") | $(ratio "${R[ours,SHMEM+zc,$size]}" "$best") | $(ratio "${R[ours,SHMEM,$size]}" "${R[ours,UDPv4,$size]}") | $(ratio "${R[ours,INTRA,$size]}" "${R[fast,INTRA,$size]}") |"
  done
  echo
fi
echo "Latency, one-way median (us) = round trip / 2, one ping at a time."
echo
header="| Size (B)"
for m in INTRA SHMEM SHMEM+zc UDPv4; do header+=" | ours $m"; done
for m in $fast_modes; do header+=" | Fast DDS $m"; done
for m in $cyc_modes; do header+=" | Cyclone $m (K32)"; done
echo "$header |"
echo "|---:$(for m in INTRA SHMEM SHMEM+zc UDPv4 $fast_modes $cyc_modes; do printf '|---:'; done)|"
for size in $lat_sizes; do
  line="| $size"
  for m in INTRA SHMEM SHMEM+zc UDPv4; do line+=" | $(lat ours "$m" "$size")"; done
  for m in $fast_modes; do line+=" | $(lat fastdds "$m" "$size")"; done
  for m in $cyc_modes; do line+=" | $(cyc_cell lat "$m" "$size")"; done
  echo "$line |"
done

[ $recorder = 1 ] || exit 0
# ---- the recorder on the publisher's host ----------------------------------------------------
rec_tmp=$(mktemp -d -p "$record_parent") || exit 1
echo
echo "Recorder on the publisher's host, 1 MiB samples, ${exec_s}s, recording in $(df --output=source "$rec_tmp" | tail -n 1) ($(df --output=fstype "$rec_tmp" | tail -n 1)); storage.fsync \"$fsync\""
echo
dd_out=$(dd if=/dev/zero of="$rec_tmp/dd.bin" bs=1M count=1024 conv=fdatasync 2>&1 | tail -n 1)
rm -f "$rec_tmp/dd.bin"
dd_mbs=$(echo "$dd_out" | awk '{for (i = 1; i < NF; i++) if ($(i+1) ~ /^[MG]B\/s$/) print ($(i+1) == "GB/s") ? $i * 1000 : $i}')
echo "dd if=/dev/zero bs=1M count=1024 conv=fdatasync: $dd_out"
echo
echo "| Path | Payload | Published | Recorded | Lost | Recorded MB/s | dd MB/s | Recorder CPU s | CPU s per GB |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|"
for path in shm udp; do
  for payload in zero random; do
    dir="$rec_tmp/rec-$path-$payload"
    cat >"$tmp/rec.json" <<JSON
{"domain": 12, "interface": "veth0", "transports": ["$path"], "stats_interval_s": 60,
 "storage": {"path": "$dir", "fsync": "$fsync"}}
JSON
    # The recorder stops by itself (--duration), so GNU time can report its CPU.
    netns_spawn 0 $((exec_s + 120)) /usr/bin/time -f "%U %S" -o "$tmp/cpu" "$BIN/pubsub-recorder" \
      --config "$tmp/rec.json" --duration $((exec_s + 5)) >"$tmp/rec.log" 2>&1
    recpid=$SPAWNED
    tr=SHMEM
    [ "$path" = udp ] && tr=UDPv4
    run "$BIN/pubsub-perftest" -pub -transport $tr -nic veth0 -domain 12 -datalen 1048576 \
      -payload $payload -exec "$exec_s" -noPrint -summaryJson "$tmp/pub.json" 2>/dev/null
    written=$(python3 -c "import json; print(json.load(open('$tmp/pub.json'))['written'])")
    wait $recpid
    summary=$(grep -o 'recorded [0-9]* samples .* [0-9]* lost' "$tmp/rec.log" | tail -n 1)
    n=$(echo "$summary" | awk '{print $2}')
    lost=$(echo "$summary" | awk '{print $(NF-1)}')
    bytes=$(du -sb "$dir" | cut -f1)
    cpu=$(awk '{print $1 + $2}' "$tmp/cpu")
    gb=$(awk -v n="${n:-0}" 'BEGIN {print n * 1048576 / 1e9}')
    # The publisher's seconds are the recording's: throughput = bytes recorded / exec seconds.
    printf '| %s | %s | %s | %s | %s | %.0f | %s | %.2f | %.2f |\n' "$path" "$payload" "$written" \
      "${n:-?}" "${lost:-?}" "$(awk -v n="${n:-0}" -v s="$exec_s" 'BEGIN {print n * 1.048576 / s}')" \
      "$dd_mbs" "$cpu" "$(awk -v c="$cpu" -v g="$gb" 'BEGIN {print (g > 0) ? c / g : 0}')"
    rm -rf "$dir"
  done
done
