#!/usr/bin/env node
// Independent check of `pubsub-replay export --format mcap --profile ros2` with third-party
// readers only: @mcap/core (indexed reader, chunk and summary CRCs), @foxglove/rosmsg (every
// ros2msg schema parses) and @foxglove/rosmsg2-serialization (every message decodes), against
// EXPECTED.jsonl = `pubsub-replay export --decode` of the same recording (DDS names).
//
//   node check_ros2.mjs FILE.mcap EXPECTED.jsonl
//
// Checks: Header profile "ros2"; every channel "cdr" with a ROS name ("/chatter" for the DDS
// topic "rt/chatter"), metadata offered_qos_profiles that is a YAML list of the rosbag2 keys;
// every schema "ros2msg" named like "pkg/msg/Name", parsed by rosmsg; the "rosbag2" metadata
// record's serialized_metadata names every channel's topic and type with its message count;
// message i of each channel (log_time order) decodes to the value of the i-th EXPECTED line of
// that topic (integers exact, typed arrays as arrays), with log_time = reception_ns and
// publish_time = source_ns. Prints one line per channel. Exit 0 ok, 1 a difference, 2 usage.
import fs from "node:fs";

import { McapIndexedReader } from "@mcap/core";
import { parse } from "@foxglove/rosmsg";
import { MessageReader } from "@foxglove/rosmsg2-serialization";
import lz4decompress from "@foxglove/wasm-lz4";

import { FileHandleReadable } from "./readable.mjs";

const problems = [];
const problem = (what) => problems.length < 20 && problems.push(what);

// A decoded value in the form our JSON lines use: typed arrays as arrays, BigInt as Number
// when exact (else its text), nested objects alike.
function plain(v) {
  if (typeof v === "bigint") return Number.isSafeInteger(Number(v)) ? Number(v) : String(v);
  if (ArrayBuffer.isView(v)) return Array.from(v, plain);
  if (Array.isArray(v)) return v.map(plain);
  if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
  return v;
}

const QOS_KEYS = ["history", "depth", "reliability", "durability", "deadline", "lifespan", "liveliness",
  "liveliness_lease_duration", "avoid_ros_namespace_conventions"];

async function main(argv) {
  if (argv.length !== 2) {
    console.error("usage: node check_ros2.mjs FILE.mcap EXPECTED.jsonl");
    return 2;
  }
  const [file, expectedFile] = argv;
  const expected = new Map(); // ROS topic -> [lines]
  for (const line of fs.readFileSync(expectedFile, "utf8").split("\n")) {
    if (!line) continue;
    const l = JSON.parse(line);
    // The times as written (19 digits: beyond a Number's exact range).
    l.reception_ns = BigInt(line.match(/"reception_ns":(\d+)/)[1]);
    l.source_ns = BigInt(line.match(/"source_ns":(\d+)/)[1]);
    const ros = "/" + l.topic.slice(3);
    if (!expected.has(ros)) expected.set(ros, []);
    expected.get(ros).push(l);
  }
  await lz4decompress.isLoaded;
  const decompressHandlers = { lz4: (buf, size) => lz4decompress(buf, Number(size)) };
  const fh = await fs.promises.open(file, "r");
  const { size } = await fh.stat();
  const reader = await McapIndexedReader.Initialize({ readable: new FileHandleReadable(fh, size), decompressHandlers });
  if (reader.header.profile !== "ros2") problem(`header profile "${reader.header.profile}"`);

  const readers = new Map(); // channel id -> MessageReader
  for (const [id, ch] of reader.channelsById) {
    const schema = reader.schemasById.get(ch.schemaId);
    if (ch.messageEncoding !== "cdr") problem(`channel ${ch.topic}: encoding ${ch.messageEncoding}`);
    if (!expected.has(ch.topic)) problem(`channel ${ch.topic}: no such topic recorded`);
    if (!schema || schema.encoding !== "ros2msg" || !/^\w+\/msg\/\w+$/.test(schema.name)) {
      problem(`channel ${ch.topic}: schema ${schema && schema.name} ${schema && schema.encoding}`);
      continue;
    }
    const qos = ch.metadata.get("offered_qos_profiles") ?? "";
    const entries = qos.split(/^- /m).filter((e) => e);
    if (entries.length === 0) problem(`channel ${ch.topic}: no offered_qos_profiles`);
    for (const e of entries) {
      const keys = e.split("\n").filter((l) => /^ {0,2}\w+:/.test(l)).map((l) => l.trim().split(":")[0]);
      if (keys.join() !== QOS_KEYS.join()) problem(`channel ${ch.topic}: QoS keys ${keys}`);
    }
    const defs = parse(new TextDecoder().decode(schema.data), { ros2: true });
    readers.set(id, new MessageReader(defs));
  }

  const meta = [];
  for await (const m of reader.readMetadata({ name: "rosbag2" })) meta.push(m);
  const yaml = meta.length === 1 ? meta[0].metadata.get("serialized_metadata") ?? "" : "";
  if (!yaml.startsWith("version: 9\nstorage_identifier: mcap\n")) problem(`rosbag2 metadata: ${meta.length} records`);

  const seen = new Map(); // topic -> count
  for await (const msg of reader.readMessages()) {
    const ch = reader.channelsById.get(msg.channelId);
    const r = readers.get(msg.channelId);
    const i = seen.get(ch.topic) ?? 0;
    seen.set(ch.topic, i + 1);
    const want = (expected.get(ch.topic) ?? [])[i];
    if (!r || !want) {
      problem(`${ch.topic} message ${i}: ${want ? "no reader" : "not in EXPECTED"}`);
      continue;
    }
    const got = JSON.stringify(plain(r.readMessage(msg.data)));
    if (got !== JSON.stringify(want.value)) problem(`${ch.topic} message ${i}: ${got} != ${JSON.stringify(want.value)}`);
    if (msg.logTime !== want.reception_ns || msg.publishTime !== want.source_ns)
      problem(`${ch.topic} message ${i}: times ${msg.logTime}/${msg.publishTime}`);
  }
  for (const [topic, lines] of expected) {
    const n = seen.get(topic) ?? 0;
    if (n !== lines.length) problem(`${topic}: ${n} messages, ${lines.length} expected`);
    const type = [...reader.channelsById.values()].find((c) => c.topic === topic);
    const schema = type && reader.schemasById.get(type.schemaId);
    if (schema && !yaml.includes(`name: ${topic}\n      type: ${schema.name}\n`)) problem(`rosbag2 metadata lacks ${topic}`);
    if (!yaml.includes(`message_count: ${n}\n`)) problem(`rosbag2 metadata: no message_count ${n}`);
    console.log(`${topic}: ${n} messages, ${schema ? schema.name : "?"}, decoded by rosmsg2-serialization`);
  }
  await fh.close();
  for (const p of problems) console.error("FAIL:", p);
  return problems.length ? 1 : 0;
}

process.exitCode = await main(process.argv.slice(2)).catch((e) => {
  console.error("FAIL:", e.message);
  return 1;
});
