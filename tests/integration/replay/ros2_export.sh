#!/usr/bin/env bash
# ROS 2 users (issue 36, item 1): a ROS 2 node's traffic - ros2_talker, a Cyclone DDS application
# with ROS 2's names on the wire (rt/chatter std_msgs/msg/String, rt/pose PoseStamped, rt/imu
# Imu), TRANSIENT_LOCAL - and a plain DDS writer (cyclone_qos_peer on topic Square) recorded by
# pubsub-recorder, which looks the types up through TypeLookup. Then
# `pubsub-replay export --format mcap --profile ros2` must:
# - leave Square out and name it (exit 0, "topic Square (QosTest::Sample) left out" and "1
#   topics left out" in the summary line), three channels, none without a type;
# - pass tests/tools/mcap_check/check_ros2.mjs: @mcap/core reads it with CRCs and indexes,
#   @foxglove/rosmsg parses every ros2msg schema, @foxglove/rosmsg2-serialization decodes every
#   message to the value `export --decode` prints (the talker's values, checked here too);
# - carry offered_qos_profiles "durability: 1" (transient_local) and depth 0 (keep-all);
# - refuse --profile without --format mcap and an unknown profile (exit 2, nothing written).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib/netns.sh"
. "$HERE/../lib/ddsperf.sh"
BIN=${BIN:?set BIN to the bin directory of the build}
N=20
for b in pubsub-recorder pubsub-replay ros2_talker cyclone_qos_peer; do
  [ -x "$BIN/$b" ] || { echo "FAIL: $b not built ($BIN/$b); build it first"; exit 1; }
done
check=$HERE/../../tools/mcap_check
[ -d "$check/node_modules/@foxglove/rosmsg2-serialization" ] ||
  { echo "FAIL: $check/node_modules lacks the ROS 2 packages: run scripts/setup.sh"; exit 1; }
netns_setup 2
out=$(mktemp -d) || exit 1  # removed on exit: only what this script made
trap 'netns_cleanup; [ -n "${KEEP_OUT:-}" ] && cp -r "$out" "$KEEP_OUT"; rm -rf "$out"' EXIT

echo '{"domain": 0, "interface": "veth1", "storage": {"path": "'"$out/rec"'"}}' >"$out/r.json"
netns_spawn 1 60 "$BIN/pubsub-recorder" --config "$out/r.json" >"$out/rec.log" 2>&1
rec=$SPAWNED
netns_run 0 40 env "$(ddsperf_env 0)" "$BIN/ros2_talker" --count $N --transient-local \
  --timeout 30 >"$out/talker.out" 2>&1 &
talker=$!
netns_run 0 40 env "$(ddsperf_env 0)" "$BIN/cyclone_qos_peer" pub --topic Square --count 5 \
  --wait-readers 1 --linger 1 >"$out/square.out" 2>&1 &
square=$!
wait $talker || { echo "FAIL: ros2_talker exit $?"; cat "$out/talker.out"; tail "$out/rec.log"; exit 1; }
wait $square || { echo "FAIL: cyclone_qos_peer exit $?"; tail "$out/square.out"; exit 1; }
grep -qx "written $N" "$out/talker.out" || { echo "FAIL: talker: $(cat "$out/talker.out")"; exit 1; }
wait_for 15 "three types looked up" \
  sh -c "[ \$(grep -c 'looked up from participant' '$out/rec.log') -ge 3 ]" || { grep -i type "$out/rec.log"; exit 1; }
kill -TERM $rec
wait $rec || { echo "FAIL: recorder exit $?"; tail "$out/rec.log"; exit 1; }

"$BIN/pubsub-replay" export "$out/rec" --topics 'rt/*' --decode -o "$out/values.jsonl" \
  2>"$out/decode.err" || { echo "FAIL: export --decode exit $?"; cat "$out/decode.err"; exit 1; }
python3 - "$out/values.jsonl" "$N" <<'PY' || exit 1
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
n = int(sys.argv[2])
by = {}
for l in lines: by.setdefault(l["topic"], []).append(l["value"])
def stamp(i): return {"sec": 1700000000 + i, "nanosec": i * 1000 + 7}
want = {
  "rt/chatter": [{"data": "hello world %d" % i} for i in range(n)],
  "rt/pose": [{"header": {"stamp": stamp(i), "frame_id": "map"},
               "pose": {"position": {"x": i * 1.0, "y": i * 2.0, "z": i * 0.5},
                        "orientation": {"x": 0.0, "y": 0.0, "z": 0.0, "w": 1.0}}} for i in range(n)],
  "rt/imu": [{"header": {"stamp": stamp(i), "frame_id": "imu_link"},
              "orientation": {"x": 0.0, "y": 0.0, "z": 0.0, "w": 1.0},
              "orientation_covariance": [float(k) for k in range(9)],
              "angular_velocity": {"x": 0.25 * i, "y": 0.0, "z": -0.25 * i},
              "angular_velocity_covariance": [k + 0.5 for k in range(9)],
              "linear_acceleration": {"x": 0.0, "y": 0.0, "z": 9.75},
              "linear_acceleration_covariance": [-float(k) for k in range(9)]} for i in range(n)],
}
bad = [t for t in want if by.get(t) != want[t]]
for t in bad: print("FAIL: %s: %d values, first %r" % (t, len(by.get(t, [])), (by.get(t) or [None])[0]))
print("decoded the talker's values: %s" % ", ".join("%s %d" % (t, len(by.get(t, []))) for t in sorted(want)))
sys.exit(1 if bad else 0)
PY

"$BIN/pubsub-replay" export "$out/rec" --format mcap --profile ros2 -o "$out/ros2.mcap" \
  2>"$out/ros2.err" || { echo "FAIL: export --profile ros2 exit $?"; cat "$out/ros2.err"; exit 1; }
cat "$out/ros2.err"
grep -q "^pubsub-replay: warning: topic Square (QosTest::Sample) left out: not a ROS 2 topic" "$out/ros2.err" &&
  grep -q "^pubsub-replay: exported $((3 * N)) samples on 3 channels (0 without a type), 1 topics left out to $out/ros2.mcap" \
    "$out/ros2.err" || { echo "FAIL: export --profile ros2 lines"; exit 1; }
node "$check/check_ros2.mjs" "$out/ros2.mcap" "$out/values.jsonl" || { echo "FAIL: ROS 2 MCAP check"; exit 1; }
strings "$out/ros2.mcap" | grep -q "^  durability: 1$" ||
  { echo "FAIL: no transient_local (durability: 1) in offered_qos_profiles"; exit 1; }

for args in "--profile ros2 -o $out/x.jsonl" "--format mcap --profile ros1 -o $out/x.mcap"; do
  # shellcheck disable=SC2086
  "$BIN/pubsub-replay" export "$out/rec" $args 2>"$out/e"
  rc=$?
  [ $rc -eq 2 ] && [ ! -e "$out/x.jsonl" ] && [ ! -e "$out/x.mcap" ] ||
    { echo "FAIL: export $args: exit $rc, $(cat "$out/e")"; exit 1; }
  echo "refused: $args: $(head -1 "$out/e")"
done
echo PASS
