# Cyclone DDS ddsperf helpers (source after netns.sh). Tests that need it skip with exit 77
# and a clear message only when cyclonedds-tools cannot be installed.
ddsperf_require() {
  if ! command -v ddsperf >/dev/null; then
    echo "SKIP: ddsperf (Debian package cyclonedds-tools) is not installed; run scripts/setup.sh"
    exit 77
  fi
}
# ddsperf_env I [RCVBUF]: the CYCLONEDDS_URI for namespace I (its veth, multicast allowed, short
# lease), and with RCVBUF (e.g. 8MB) a socket receive buffer of up to that size instead of
# Cyclone's 1 MB (the kernel grants at most net.core.rmem_max, doubled).
ddsperf_env() {
  local buf=""
  [ -n "${2:-}" ] && buf="<Internal><SocketReceiveBufferSize max=\"$2\"/></Internal>"
  echo "CYCLONEDDS_URI=<General><Interfaces><NetworkInterface name=\"$(netns_dev "$1")\"/></Interfaces><AllowMulticast>true</AllowMulticast></General><Discovery><LeaseDuration>${DDSPERF_LEASE:-10s}</LeaseDuration></Discovery>$buf"
}
# ddsperf_stop_at_total PID OUT N SECS: a ddsperf sub runs its whole -D; once its once-a-second
# line in OUT shows a total of N (within SECS), it is stopped with SIGINT. PID must be the
# process that forwards the signal (netns_spawn's SPAWNED). Sets DDSPERF_RC: ddsperf's exit
# status, 0 when stopped here (it then exits 130 through timeout).
ddsperf_stop_at_total() {
  local pid=$1 out=$2 n=$3 secs=$4
  if wait_for "$secs" "ddsperf sub's total $n" \
    sh -c '[ "$(grep -o "total [0-9]*" "$1" | tail -n 1)" = "total $2" ]' _ "$out" "$n"; then
    kill -INT "$pid"
    wait "$pid"
    DDSPERF_RC=$?
    [ $DDSPERF_RC -eq 130 ] && DDSPERF_RC=0
  else
    wait "$pid"
    DDSPERF_RC=$?
  fi
}
# Total samples received by a ddsperf sub, from its last "total N" line.
ddsperf_total() {
  grep -o 'total [0-9]*' "$1" | tail -n 1 | awk '{print $2}'
}
# ddsperf_check_recording BIN REC SUB_OUT: recording REC of one ddsperf publisher must hold its
# data writer's whole sequence 1..N (DDSPerfRDataKS), without gaps or damage, and N must be what
# the ddsperf sub whose output is SUB_OUT received. Prints both; sets DDSPERF_N to N.
ddsperf_check_recording() {
  local summary
  summary=$("$1/recording_summary" "$2" --topic DDSPerfRDataKS --verify) ||
    { echo "FAIL: recording_summary cannot read the recording"; return 1; }
  echo "ddsperf sub received $(ddsperf_total "$3"); recording: $summary" | cut -c1-400
  DDSPERF_N=$(python3 - "$summary" "$(ddsperf_total "$3")" <<'PY'
import json, sys
s, total = json.loads(sys.argv[1]), int(sys.argv[2] or 0)
bad = []
if s["samples"] != total: bad.append("recorded %d, ddsperf sub received %d" % (s["samples"], total))
if len(s["writers"]) != 1: bad.append("%d data writers recorded" % len(s["writers"]))
for w in s["writers"]:
    if w["first_seq"] != 1 or w["out_of_order"] or w["last_seq"] != w["samples"]:
        bad.append("writer sequence %d..%d for %d samples" % (w["first_seq"], w["last_seq"], w["samples"]))
if s["verify_problems"] or s["gaps"]: bad.append("recording has problems or gaps")
if not s["samples"]: bad.append("nothing recorded")
for b in bad: print("FAIL:", b, file=sys.stderr)
print(s["samples"])
sys.exit(1 if bad else 0)
PY
  )
}
