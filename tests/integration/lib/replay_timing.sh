# check_replay_duration REPLAY_STDERR MAX_RATIO: reads pubsub-replay play's summary line
# ("played N samples (...) ... in X s (recorded Y s, ...") and fails (returns 1, saying why)
# unless X <= Y * MAX_RATIO + 1 s (the second: discovery and start-up).
check_replay_duration() {
  local played recorded
  read -r played recorded < <(sed -n 's/.* in \([0-9.]*\) s (recorded \([0-9.]*\) s.*/\1 \2/p' \
    "$1" | tail -n 1)
  if [ -z "${played:-}" ]; then
    echo "FAIL: no summary line from pubsub-replay in $1"
    return 1
  fi
  if ! awk -v p="$played" -v r="$recorded" -v m="$2" 'BEGIN { exit !(p <= r * m + 1) }'; then
    echo "FAIL: replay took $played s for a $recorded-s recording (bound ${2}x + 1 s)"
    return 1
  fi
  echo "replay took $played s for a $recorded-s recording (bound ${2}x + 1 s)"
}
