# play_times REPLAY_STDERR: "X Y" from pubsub-replay play's summary line ("played N samples
# (...) ... in X s (recorded Y s, ..."): play's publishing time and the recording's span.
play_times() {
  sed -n 's/.* in \([0-9.]*\) s (recorded \([0-9.]*\) s.*/\1 \2/p' "$1" | tail -n 1
}

# within_ratio GOT RECORDED MAX_RATIO: GOT <= RECORDED * MAX_RATIO + 0.1 s.
within_ratio() {
  awk -v p="$1" -v r="$2" -v m="$3" 'BEGIN { exit !(p <= r * m + 0.1) }'
}

# check_replay_duration REPLAY_STDERR MAX_RATIO: fails (returns 1, saying why) unless play's own
# publishing time X (from the first sample's due time to the last write done: start-up and
# discovery are not in it) is at most Y * MAX_RATIO + 0.1 s. For subscribers that cannot time
# themselves (ddsperf); check_subscriber_duration times the delivery.
check_replay_duration() {
  local played recorded
  read -r played recorded < <(play_times "$1")
  if [ -z "${played:-}" ]; then
    echo "FAIL: no summary line from pubsub-replay in $1"
    return 1
  fi
  if ! within_ratio "$played" "$recorded" "$2"; then
    echo "FAIL: replay took $played s for a $recorded-s recording (bound ${2}x + 0.1 s)"
    return 1
  fi
  echo "replay took $played s for a $recorded-s recording (bound ${2}x + 0.1 s)"
}

# check_subscriber_duration SUB_JSON REPLAY_STDERR MAX_RATIO: the subscriber's own span, from the
# first sample it received to the last (its -summaryJson "seconds"), must be at most the
# recording's span * MAX_RATIO + 0.1 s.
check_subscriber_duration() {
  local got played recorded
  got=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["seconds"])' "$1") ||
    { echo "FAIL: no \"seconds\" in $1"; return 1; }
  read -r played recorded < <(play_times "$2")
  [ -n "${recorded:-}" ] || { echo "FAIL: no summary line from pubsub-replay in $2"; return 1; }
  if ! within_ratio "$got" "$recorded" "$3"; then
    echo "FAIL: the subscriber received the replay over $got s, the recording spans $recorded s" \
      "(bound ${3}x + 0.1 s)"
    return 1
  fi
  echo "the subscriber received the replay over $got s; the recording spans $recorded s" \
    "(bound ${3}x + 0.1 s)"
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
