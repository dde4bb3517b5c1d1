#!/usr/bin/env bash
# ROS 2 users (issue 36, items 2 and 3): a rosbag2-style bag written by an independent writer
# (tests/tools/mcap_check/write_bag.mjs: @mcap/core, messages serialized by
# @foxglove/rosmsg2-serialization; std_msgs/String on /chatter TRANSIENT_LOCAL keep-last 3,
# geometry_msgs/PoseStamped on /pose and sensor_msgs/Imu on /imu) taken by pubsub-replay:
# - `import` makes a recording of it: exact closing line, 60 messages on 3 topics, all typed;
# - `info bag.mcap` names the DDS topics and types; `export bag.mcap --decode` gives the bag's
#   values (the .msg schemas turned into types);
# - `play bag.mcap` into Cyclone DDS readers of the idlc types (ros2_listener, another
#   namespace; the replayed writers announce the TypeInformation made from the .msg schemas):
#   every value equal to the bag's, in order; a TRANSIENT_LOCAL reader joining a second into the
#   replay, long after /chatter's last message, gets exactly the last 3 (its offered depth);
# - round trip: the imported recording exported again with --profile ros2 passes check_ros2.mjs
#   against the same values, and imported once more gives the same export --decode output (times,
#   sequence numbers, values; the writer GUIDs import makes up from channel ids aside).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib/netns.sh"
. "$HERE/../lib/ddsperf.sh"
BIN=${BIN:?set BIN to the bin directory of the build}
N=20
for b in pubsub-replay ros2_listener; do
  [ -x "$BIN/$b" ] || { echo "FAIL: $b not built ($BIN/$b); build it first"; exit 1; }
done
tools=$HERE/../../tools/mcap_check
[ -d "$tools/node_modules/@foxglove/rosmsg2-serialization" ] ||
  { echo "FAIL: $tools/node_modules lacks the ROS 2 packages: run scripts/setup.sh"; exit 1; }
netns_setup 2
out=$(mktemp -d) || exit 1  # removed on exit: only what this script made
trap 'netns_cleanup; [ -n "${KEEP_OUT:-}" ] && cp -r "$out" "$KEEP_OUT"; rm -rf "$out"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

node "$tools/write_bag.mjs" "$out/bag.mcap" "$out/bag.jsonl" $N || fail "write_bag.mjs exit $?"

# import: exit 0 and its line.
"$BIN/pubsub-replay" import "$out/bag.mcap" -o "$out/rec" -q >"$out/import.out" 2>&1 ||
  { cat "$out/import.out"; fail "import exit $?"; }
grep -q "^imported $((3 * N)) messages on 3 topics (0 without a type, 0 channels left out) from $out/bag.mcap into $out/rec, " \
  "$out/import.out" || { cat "$out/import.out"; fail "import line"; }
cat "$out/import.out"
"$BIN/pubsub-replay" import "$out/bag.mcap" -o "$out/rec" >"$out/again.out" 2>&1
[ $? -eq 2 ] && grep -q "exists and is not empty" "$out/again.out" || fail "import into a full DIR: $(cat "$out/again.out")"

# info and export --decode of the file itself.
"$BIN/pubsub-replay" info "$out/bag.mcap" >"$out/info.out" 2>&1 || { cat "$out/info.out"; fail "info bag.mcap exit $?"; }
for t in "rt/chatter.*std_msgs::msg::dds_::String_" "rt/pose.*geometry_msgs::msg::dds_::PoseStamped_" \
  "rt/imu.*sensor_msgs::msg::dds_::Imu_"; do
  grep -q "$t" "$out/info.out" || { cat "$out/info.out"; fail "info bag.mcap lacks $t"; }
done
"$BIN/pubsub-replay" export "$out/bag.mcap" --decode -q -o "$out/decoded.jsonl" 2>"$out/export.err" ||
  { cat "$out/export.err"; fail "export bag.mcap --decode exit $?"; }
# same(A, B): the same topics and values, in order (numbers compared as floats).
same() {
  python3 - "$1" "$2" <<'PY'
import json, sys
def load(p): return [(l["topic"], l["value"]) for l in map(json.loads, open(p)) if l]
def norm(v):
    if isinstance(v, dict): return {k: norm(x) for k, x in v.items()}
    if isinstance(v, list): return [norm(x) for x in v]
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v
a, b = load(sys.argv[1]), load(sys.argv[2])
if [(t, norm(v)) for t, v in a] != [(t, norm(v)) for t, v in b]:
    first = next((i for i, (x, y) in enumerate(zip(a, b)) if (x[0], norm(x[1])) != (y[0], norm(y[1]))), min(len(a), len(b)))
    print("differ at line %d of %d/%d: %r vs %r" % (first, len(a), len(b), a[first:first+1], b[first:first+1]))
    sys.exit(1)
PY
}
same "$out/decoded.jsonl" "$out/bag.jsonl" || fail "export --decode of the bag differs from its values"

# play into Cyclone DDS readers; a durable late joiner on /chatter.
env_cy=$(ddsperf_env 1)
for t in chatter pose imu; do
  netns_spawn 1 60 env "$env_cy" "$BIN/ros2_listener" --topic rt/$t --count $N --timeout 40 \
    >"$out/$t.jsonl" 2>"$out/$t.err"
  eval "pid_$t=\$SPAWNED"
done
netns_spawn 0 60 "$BIN/pubsub-replay" play "$out/bag.mcap" --nic veth0 --wait-readers 1 \
  --wait-timeout 30 >"$out/play.out" 2>&1
play=$SPAWNED
wait_for 30 "the replay of /pose a second in" sh -c "[ \$(wc -l <'$out/pose.jsonl') -ge 5 ]" ||
  { cat "$out/play.out"; fail "no /pose samples"; }
netns_run 1 30 env "$env_cy" "$BIN/ros2_listener" --topic rt/chatter --transient-local --keep-last 3 \
  --count 3 --timeout 10 >"$out/late.jsonl" 2>"$out/late.err" || { cat "$out/late.err"; fail "late joiner exit $?"; }
wait "$play" || { cat "$out/play.out"; fail "play exit $?"; }
for t in chatter pose imu; do
  eval "wait \$pid_$t" || { cat "$out/$t.err"; fail "listener rt/$t exit $?"; }
  grep "\"rt/$t\"" "$out/bag.jsonl" >"$out/want_$t.jsonl"
  same "$out/$t.jsonl" "$out/want_$t.jsonl" || fail "rt/$t: the Cyclone reader's values differ from the bag's"
done
grep "\"rt/chatter\"" "$out/bag.jsonl" | tail -3 >"$out/want_late.jsonl"
same "$out/late.jsonl" "$out/want_late.jsonl" || fail "the late TRANSIENT_LOCAL reader did not get the last 3"
echo "played into Cyclone readers: $N samples on each of 3 topics, a late durable reader the last 3"

# Round trip: export the import with --profile ros2, check it, import it again.
"$BIN/pubsub-replay" export "$out/rec" --format mcap --profile ros2 -q -o "$out/again.mcap" ||
  fail "export --profile ros2 of the import exit $?"
node "$tools/check_ros2.mjs" "$out/again.mcap" "$out/decoded.jsonl" || fail "check_ros2.mjs of the round trip"
"$BIN/pubsub-replay" export "$out/again.mcap" --decode -q -o "$out/decoded2.jsonl" 2>"$out/e2" ||
  { cat "$out/e2"; fail "export --decode of the round trip exit $?"; }
# The same lines but for the writer GUIDs, which import makes up from the channel ids.
cmp <(sed 's/"writer":"[0-9a-f]*",//' "$out/decoded.jsonl") <(sed 's/"writer":"[0-9a-f]*",//' "$out/decoded2.jsonl") ||
  fail "the round trip changed the decoded output"
echo PASS
