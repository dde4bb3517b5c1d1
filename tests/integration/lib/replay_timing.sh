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

# check_replay_late REPLAY_STDERR MAX_MS: fails (returns 1, saying why) unless the p99 of how late
# pubsub-replay play sent its samples (its summary line's "late ... p99 N us") is at most MAX_MS.
check_replay_late() {
  local p99
  p99=$(sed -n 's/^pubsub-replay: played .* p99 \([0-9]*\) us.*/\1/p' "$1" | tail -n 1)
  if [ -z "${p99:-}" ]; then
    echo "FAIL: no late p99 in pubsub-replay's summary line in $1"
    return 1
  fi
  if [ "$p99" -gt $(($2 * 1000)) ]; then
    echo "FAIL: late p99 $p99 us (bound $2 ms)"
    return 1
  fi
  echo "late p99 $p99 us (bound $2 ms)"
}
