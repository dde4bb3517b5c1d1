# Network namespaces for multi-process tests (source this file; needs root and iproute2).
#
#   netns_setup 3            # creates namespaces ${NS_PREFIX}0..2 on a bridge, 198.18.N.x/24
#   netns_exec 0 cmd args    # runs cmd inside namespace 0
#   netns_addr 1             # prints the address of namespace 1
# Everything is removed by netns_cleanup, which netns_setup installs as an EXIT trap.
# Addresses come from the benchmarking range 198.18.0.0/15; nothing leaves the namespaces.

NS_PREFIX=${NS_PREFIX:-psr$$-}
NS_SUBNET=${NS_SUBNET:-$(( ($$ % 200) + 10 ))}   # third octet, differs between parallel tests
NS_COUNT=0
NS_MTU=${NS_MTU:-9000}

netns_require_root() {
  if [ "$(id -u)" -ne 0 ]; then
    echo "SKIP: needs root for network namespaces"
    exit 77
  fi
  command -v ip >/dev/null || { echo "SKIP: iproute2 (ip) is missing"; exit 77; }
}

netns_cleanup() {
  local i
  for ((i = 0; i < NS_COUNT; i++)); do
    ip netns del "${NS_PREFIX}$i" 2>/dev/null || true
  done
  ip netns del "${NS_PREFIX}br" 2>/dev/null || true
}

# netns_setup N: N namespaces attached to a bridge living in its own namespace.
netns_setup() {
  netns_require_root
  NS_COUNT=$1
  trap netns_cleanup EXIT
  trap 'exit 130' INT TERM
  ip netns add "${NS_PREFIX}br"
  ip -n "${NS_PREFIX}br" link add br0 type bridge
  ip -n "${NS_PREFIX}br" link set br0 type bridge mcast_snooping 0
  ip -n "${NS_PREFIX}br" link set br0 up mtu "$NS_MTU"
  ip -n "${NS_PREFIX}br" link set lo up
  local i ns
  for ((i = 0; i < NS_COUNT; i++)); do
    ns="${NS_PREFIX}$i"
    ip netns add "$ns"
    ip link add "veth$i" netns "$ns" mtu "$NS_MTU" type veth peer name "port$i" netns "${NS_PREFIX}br" mtu "$NS_MTU"
    ip -n "${NS_PREFIX}br" link set "port$i" master br0 up
    ip -n "$ns" addr add "198.18.$NS_SUBNET.$((i + 1))/24" dev "veth$i"
    ip -n "$ns" link set "veth$i" up
    ip -n "$ns" link set lo up
    ip -n "$ns" route add 224.0.0.0/4 dev "veth$i"
  done
}

# netns_setup_pair: two namespaces joined directly by one veth pair (no bridge), as in the
# two-host benchmarks. Same names and addresses as netns_setup 2.
netns_setup_pair() {
  netns_require_root
  NS_COUNT=2
  trap netns_cleanup EXIT
  trap 'exit 130' INT TERM
  ip netns add "${NS_PREFIX}0"
  ip netns add "${NS_PREFIX}1"
  ip link add veth0 netns "${NS_PREFIX}0" mtu "$NS_MTU" type veth peer name veth1 netns "${NS_PREFIX}1" mtu "$NS_MTU"
  local i
  for i in 0 1; do
    ip -n "${NS_PREFIX}$i" addr add "198.18.$NS_SUBNET.$((i + 1))/24" dev "veth$i"
    ip -n "${NS_PREFIX}$i" link set "veth$i" up
    ip -n "${NS_PREFIX}$i" link set lo up
    ip -n "${NS_PREFIX}$i" route add 224.0.0.0/4 dev "veth$i"
  done
}

# netns_scratch: after netns_setup, sets `out` to a new temporary directory that the EXIT trap
# removes with the namespaces (only what the script made; KEEP=1 keeps it), `status` to 0, and defines
# `fail MESSAGE`, which prints "FAIL: MESSAGE" and sets status to 1 (the script ends with
# `exit $status`).
netns_scratch() {
  out=$(mktemp -d) || exit 1
  [ -n "${KEEP:-}" ] && echo "output in $out (KEEP: not removed)"
  trap 'netns_cleanup; [ -n "${KEEP:-}" ] || rm -rf "$out"' EXIT
  status=0
  fail() {
    echo "FAIL: $*"
    status=1
  }
}

netns_exec() {
  local i=$1
  shift
  ip netns exec "${NS_PREFIX}$i" "$@"
}

netns_addr() { echo "198.18.$NS_SUBNET.$(($1 + 1))"; }
netns_dev() { echo "veth$1"; }

# netns_run I SECONDS cmd...: runs cmd in namespace I, killed (TERM, then KILL) after SECONDS.
netns_run() {
  local i=$1 secs=$2
  shift 2
  timeout -k 5 "$secs" ip netns exec "${NS_PREFIX}$i" "$@"
}

# netns_spawn I SECONDS cmd...: like netns_run, in the background; sets SPAWNED to a PID that
# forwards signals to cmd (timeout's), so `kill -INT $SPAWNED` reaches cmd. (A backgrounded
# shell function would be a subshell that ignores SIGINT.) Redirect the call's output as needed.
netns_spawn() {
  local i=$1 secs=$2
  shift 2
  timeout -k 5 "$secs" ip netns exec "${NS_PREFIX}$i" "$@" &
  SPAWNED=$!
}

# wait_for SECONDS WHAT CMD...: runs CMD every 0.1 s until it succeeds; after SECONDS (a whole
# number) prints "FAIL: no WHAT within SECONDS s" and returns 1. Synchronisation for tests.
wait_for() {
  local secs=$1 what=$2 end
  shift 2
  end=$(($(date +%s) + secs))
  until "$@"; do
    [ "$(date +%s)" -lt $end ] || { echo "FAIL: no $what within $secs s"; return 1; }
    sleep 0.1
  done
}
