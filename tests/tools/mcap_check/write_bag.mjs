#!/usr/bin/env node
// A rosbag2-style bag written by an independent writer - @mcap/core's McapWriter, messages
// serialized by @foxglove/rosmsg2-serialization from ros2msg schemas parsed by @foxglove/rosmsg -
// for the MCAP-in tests (no ROS 2 in Debian 12). What rosbag2's MCAP storage writes: Header
// profile "ros2", schemas "pkg/msg/Name" in ros2msg (the .msg files' text, comments and default
// values included, dependencies after 80 '=' and "MSG: pkg/Name"), channels "/chatter", "/pose",
// "/imu" with message encoding "cdr" and offered_qos_profiles (Humble's integer form), sequence
// 0, uncompressed chunks, and a "rosbag2" metadata record (serialized_metadata, version 9).
//
//   node write_bag.mjs OUT.mcap EXPECTED.jsonl [COUNT]
//
// COUNT (default 20) messages per topic: /chatter "hello world i" every 10 ms from the start,
// TRANSIENT_LOCAL keep-last 3; /pose and /imu every 200 ms, volatile - the values ros2_talker
// sends. EXPECTED gets one line per message in log-time order, {"topic": DDS name, "value": ...},
// as ros2_listener prints them.
import fs from "node:fs";

import { McapWriter } from "@mcap/core";
import { parse } from "@foxglove/rosmsg";
import { MessageWriter } from "@foxglove/rosmsg2-serialization";

const SEP = "\n" + "=".repeat(80) + "\n";
const TIME = "# Time, as ROS 2 has it\nint32 sec\nuint32 nanosec\n";
const HEADER = "# Standard metadata\nbuiltin_interfaces/Time stamp\nstring frame_id\n";
const POINT = "float64 x\nfloat64 y\nfloat64 z\n";
const QUAT = "float64 x 0\nfloat64 y 0\nfloat64 z 0\nfloat64 w 1\n";
const SCHEMAS = {
  "std_msgs/msg/String": "# a string\nstring data\n",
  "geometry_msgs/msg/PoseStamped":
    "# A Pose with reference coordinate frame and timestamp\n\nstd_msgs/Header header\nPose pose\n" +
    SEP + "MSG: geometry_msgs/Pose\nPoint position\nQuaternion orientation\n" +
    SEP + "MSG: geometry_msgs/Point\n" + POINT + SEP + "MSG: geometry_msgs/Quaternion\n" + QUAT +
    SEP + "MSG: std_msgs/Header\n" + HEADER + SEP + "MSG: builtin_interfaces/Time\n" + TIME,
  "sensor_msgs/msg/Imu":
    "std_msgs/Header header\n\ngeometry_msgs/Quaternion orientation\nfloat64[9] orientation_covariance # row major\n\n" +
    "geometry_msgs/Vector3 angular_velocity\nfloat64[9] angular_velocity_covariance\n\n" +
    "geometry_msgs/Vector3 linear_acceleration\nfloat64[9] linear_acceleration_covariance\n" +
    SEP + "MSG: geometry_msgs/Quaternion\n" + QUAT + SEP + "MSG: geometry_msgs/Vector3\n" + POINT +
    SEP + "MSG: std_msgs/Header\n" + HEADER + SEP + "MSG: builtin_interfaces/Time\n" + TIME,
};
const INF = "    sec: 9223372036\n    nsec: 854775807\n";
const qos = (depth, durability) =>
  `- history: 1\n  depth: ${depth}\n  reliability: 1\n  durability: ${durability}\n  deadline:\n${INF}` +
  `  lifespan:\n${INF}  liveliness: 1\n  liveliness_lease_duration:\n${INF}  avoid_ros_namespace_conventions: false`;

const stamp = (i) => ({ sec: 1700000000 + i, nanosec: i * 1000 + 7 });
const VALUES = {
  "/chatter": (i) => ({ data: `hello world ${i}` }),
  "/pose": (i) => ({
    header: { stamp: stamp(i), frame_id: "map" },
    pose: { position: { x: i * 1.0, y: i * 2.0, z: i * 0.5 }, orientation: { x: 0, y: 0, z: 0, w: 1 } },
  }),
  "/imu": (i) => ({
    header: { stamp: stamp(i), frame_id: "imu_link" },
    orientation: { x: 0, y: 0, z: 0, w: 1 },
    orientation_covariance: [0, 1, 2, 3, 4, 5, 6, 7, 8],
    angular_velocity: { x: 0.25 * i, y: 0, z: -0.25 * i },
    angular_velocity_covariance: [0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5],
    linear_acceleration: { x: 0, y: 0, z: 9.75 },
    linear_acceleration_covariance: [-0, -1, -2, -3, -4, -5, -6, -7, -8],
  }),
};
const TOPICS = [
  { topic: "/chatter", type: "std_msgs/msg/String", every: 10, qos: qos(3, 1) },
  { topic: "/pose", type: "geometry_msgs/msg/PoseStamped", every: 200, qos: qos(10, 2) },
  { topic: "/imu", type: "sensor_msgs/msg/Imu", every: 200, qos: qos(10, 2) },
];

// rosbag2's serialized_metadata (BagMetadata version 9, as Jazzy writes it), Humble's QoS text
// nested as the list it is.
function bagMetadata(out, messages, count) {
  const start = messages[0].time, end = messages[messages.length - 1].time;
  const file = out.split("/").pop();
  const topics = TOPICS.map((t) =>
    `  - topic_metadata:\n      name: ${t.topic}\n      type: ${t.type}\n      serialization_format: cdr\n` +
    `      offered_qos_profiles:\n${t.qos.replace(/^/gm, "        ")}\n      type_description_hash: ""\n` +
    `    message_count: ${count}`).join("\n");
  return `version: 9\nstorage_identifier: mcap\nduration:\n  nanoseconds: ${end - start}\n` +
    `starting_time:\n  nanoseconds_since_epoch: ${start}\nmessage_count: ${messages.length}\n` +
    `topics_with_message_count:\n${topics}\ncompression_format: ""\ncompression_mode: ""\n` +
    `relative_file_paths:\n  - ${file}\nfiles:\n  - path: ${file}\n    starting_time:\n` +
    `      nanoseconds_since_epoch: ${start}\n    duration:\n      nanoseconds: ${end - start}\n` +
    `    message_count: ${messages.length}\ncustom_data: ~\nros_distro: ""`;
}

class FileWritable {
  constructor(fd) {
    this.fd = fd;
    this.pos = 0n;
  }
  async write(buffer) {
    fs.writeSync(this.fd, buffer);
    this.pos += BigInt(buffer.byteLength);
  }
  position() {
    return this.pos;
  }
}

async function main([out, expectedFile, countArg]) {
  if (!out || !expectedFile) {
    console.error("usage: node write_bag.mjs OUT.mcap EXPECTED.jsonl [COUNT]");
    return 2;
  }
  const count = Number(countArg ?? 20);
  const fd = fs.openSync(out, "w");
  const w = new McapWriter({ writable: new FileWritable(fd), chunkSize: 64 * 1024 });
  await w.start({ profile: "ros2", library: "write_bag.mjs (@mcap/core)" });
  const t0 = 1800000000000000000n;
  const messages = [];
  for (const t of TOPICS) {
    const schemaId = await w.registerSchema({ name: t.type, encoding: "ros2msg", data: new TextEncoder().encode(SCHEMAS[t.type]) });
    const channelId = await w.registerChannel({
      topic: t.topic, schemaId, messageEncoding: "cdr", metadata: new Map([["offered_qos_profiles", t.qos]]),
    });
    const writer = new MessageWriter(parse(SCHEMAS[t.type], { ros2: true }));
    for (let i = 0; i < count; i++) {
      const value = VALUES[t.topic](i);
      const time = t0 + BigInt(i * t.every) * 1000000n;
      messages.push({ time, channelId, data: writer.writeMessage(value), line: { topic: "rt" + t.topic, value } });
    }
  }
  messages.sort((a, b) => (a.time < b.time ? -1 : a.time > b.time ? 1 : 0));
  const lines = [];
  for (const m of messages) {
    await w.addMessage({ channelId: m.channelId, sequence: 0, logTime: m.time, publishTime: m.time, data: m.data });
    lines.push(JSON.stringify(m.line));
  }
  await w.addMetadata({ name: "rosbag2", metadata: new Map([["serialized_metadata", bagMetadata(out, messages, count)]]) });
  await w.end();
  fs.closeSync(fd);
  fs.writeFileSync(expectedFile, lines.join("\n") + "\n");
  console.log(`wrote ${messages.length} messages on ${TOPICS.length} channels to ${out}`);
  return 0;
}

process.exitCode = await main(process.argv.slice(2)).catch((e) => {
  console.error("write_bag.mjs:", e.message);
  return 1;
});
