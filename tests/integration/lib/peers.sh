# The test peers of tests/peers (source after netns.sh and ddsperf.sh; needs BIN and DOMAIN).
#   peer NS VENDOR ARGS... &   runs VENDOR's peer (cyclone, fastdds, pubsub) in namespace NS on
#                              its veth, on domain DOMAIN; `exec`, so $! is the peer itself
peer() {
  local ns=$1 vendor=$2
  shift 2
  case $vendor in
    cyclone) exec ip netns exec "${NS_PREFIX}$ns" env "$(ddsperf_env "$ns")" \
      "$BIN/cyclone_qos_peer" "$@" --domain "$DOMAIN" ;;
    *) exec ip netns exec "${NS_PREFIX}$ns" "$BIN/${vendor}_qos_peer" "$@" --domain "$DOMAIN" \
      --nic "veth$ns" ;;
  esac
}
