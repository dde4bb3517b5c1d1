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
# Total samples received by a ddsperf sub, from its last "total N" line.
ddsperf_total() {
  grep -o 'total [0-9]*' "$1" | tail -n 1 | awk '{print $2}'
}
