#!/usr/bin/env node
// Independent check of an MCAP file written by `pubsub-replay export --format mcap`, with
// third-party readers only (@mcap/core, @foxglove/omgidl-parser, @foxglove/omgidl-serialization,
// @foxglove/wasm-lz4), against EXPECTED.jsonl = `pubsub-replay export --decode` of the same
// selection in the same order.
//
//   node check_mcap.mjs [--skip-unsupported] FILE.mcap EXPECTED.jsonl
//
// Exit 0: everything matches; 1: a difference or an unreadable file (messages on stderr);
// 2: usage error. See README.md for what is checked and what the reference decoder cannot do.
import fs from "node:fs";
import zlib from "node:zlib";
import { pathToFileURL } from "node:url";

import { McapIndexedReader, McapStreamReader } from "@mcap/core";
import { parseIDL } from "@foxglove/omgidl-parser";
import { MessageReader } from "@foxglove/omgidl-serialization";
import lz4decompress from "@foxglove/wasm-lz4";

import { FileHandleReadable } from "./readable.mjs";

const MAX_SHOWN = 10;

// ---------------------------------------------------------------- problems
const problems = []; // {where, what}
let problemCount = 0;
function problem(where, what) {
  problemCount++;
  if (problems.length < MAX_SHOWN) problems.push(`${where}: ${what}`);
}
const warnings = [];
function warn(msg) {
  if (!warnings.includes(msg)) warnings.push(msg);
}

// ---------------------------------------------------------------- helpers
function show(v) {
  let s;
  try {
    s = JSON.stringify(v, (_k, x) => {
      if (typeof x === "bigint") return `${x}n`;
      if (ArrayBuffer.isView(x)) return Array.from(x, (e) => (typeof e === "bigint" ? `${e}n` : e));
      if (typeof x === "number" && !Number.isFinite(x)) return String(x);
      if (x === undefined) return "<undefined>";
      return x;
    });
  } catch {
    s = String(v);
  }
  if (s === undefined) s = String(v);
  s = s.replace(/"(-?\d+)n"/g, "$1");
  return s.length > 200 ? s.slice(0, 200) + "..." : s;
}

// JSON parser that keeps integers exact: integer literals become BigInt, others Number.
function parseJsonLossless(text) {
  let i = 0;
  const ws = () => {
    while (i < text.length && " \t\r\n".includes(text[i])) i++;
  };
  const fail = (m) => {
    throw new Error(`${m} at offset ${i}`);
  };
  function value() {
    ws();
    const c = text[i];
    if (c === "{") {
      i++;
      const o = {};
      ws();
      if (text[i] === "}") {
        i++;
        return o;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail("expected key");
        const k = str();
        ws();
        if (text[i++] !== ":") fail("expected ':'");
        o[k] = value();
        ws();
        if (text[i] === ",") {
          i++;
          continue;
        }
        if (text[i] === "}") {
          i++;
          return o;
        }
        fail("expected ',' or '}'");
      }
    }
    if (c === "[") {
      i++;
      const a = [];
      ws();
      if (text[i] === "]") {
        i++;
        return a;
      }
      for (;;) {
        a.push(value());
        ws();
        if (text[i] === ",") {
          i++;
          continue;
        }
        if (text[i] === "]") {
          i++;
          return a;
        }
        fail("expected ',' or ']'");
      }
    }
    if (c === '"') return str();
    if (text.startsWith("true", i)) {
      i += 4;
      return true;
    }
    if (text.startsWith("false", i)) {
      i += 5;
      return false;
    }
    if (text.startsWith("null", i)) {
      i += 4;
      return null;
    }
    const m = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(text.slice(i, i + 400));
    if (!m) fail("unexpected character");
    i += m[0].length;
    return m[2] === undefined && m[3] === undefined ? BigInt(m[0]) : Number(m[0]);
  }
  function str() {
    const start = i;
    i++;
    while (i < text.length && text[i] !== '"') i += text[i] === "\\" ? 2 : 1;
    if (i >= text.length) fail("unterminated string");
    i++;
    return JSON.parse(text.slice(start, i));
  }
  const v = value();
  ws();
  if (i !== text.length) fail("trailing characters");
  return v;
}

// ---------------------------------------------------------------- IDL preprocessing
// pubsub-replay writes MCAP schemas in the dialect the omgidl-parser grammar reads
// (types::IdlDialect::kFoxglove: no inheritance, bitmasks as integer typedefs, Enum::LITERAL
// labels, uint8 for char/octet discriminators, no leading "::", no forward declarations), so
// those are parsed as written: a schema in another form fails here as it would in Foxglove.
// Only these are rewritten (IDL from elsewhere, e.g. --idl files, may have them):
//  - @extensibility(K) becomes @final/@appendable/@mutable (the serializer only knows those);
//  - hex literals become decimal; #-lines and comments are removed; @bit_bound is dropped (the
//    enum sizes it gives are applied after parsing);
//  - struct inheritance "struct D : B" (user IDL) is removed and B's members are prepended.
function stripComments(s) {
  return s.replace(/\/\*[\s\S]*?\*\//g, " ").replace(/\/\/[^\n]*/g, "");
}

function scanScopes(text) {
  // Returns declarations with their fully qualified names and enclosing scope.
  const out = { enums: new Map(), bitmasks: new Map(), bases: new Map(), unionSwitch: new Map() };
  const re =
    /((?:@\w+(?:\s*\([^)]*\))?\s*)*)\b(module|struct|union|enum|bitmask)\s+(\w+)\s*([^{};]*)\{|\{|\}/g;
  const stack = []; // names (null for anonymous braces)
  let m;
  while ((m = re.exec(text))) {
    if (m[0] === "}") {
      stack.pop();
      continue;
    }
    if (m[0] === "{") {
      stack.push(null);
      continue;
    }
    const [, annots, kind, name, rest] = m;
    const scope = stack.filter((x) => x !== null);
    const fq = [...scope, name].join("::");
    const bb = /@bit_bound\s*\(\s*(\d+)\s*\)/.exec(annots);
    const bitBound = bb ? Number(bb[1]) : 32;
    if (kind === "enum" || kind === "bitmask") {
      const close = text.indexOf("}", re.lastIndex);
      const body = text.slice(re.lastIndex, close);
      const literals = body
        .split(",")
        .map((x) => x.replace(/@\w+\s*(\([^)]*\))?/g, "").trim())
        .filter(Boolean);
      (kind === "enum" ? out.enums : out.bitmasks).set(fq, { scope, literals, bitBound });
      re.lastIndex = close + 1;
      continue;
    }
    if (kind === "struct") {
      const b = /^:\s*([\w:]+)/.exec(rest.trim());
      if (b) out.bases.set(fq, { scope, ref: b[1] });
    }
    if (kind === "union") {
      const s = /switch\s*\(\s*([\w: ]+?)\s*\)/.exec(rest);
      if (s) out.unionSwitch.set(fq, { scope, ref: s[1] });
    }
    stack.push(name);
  }
  return out;
}

function resolveRef(ref, scope, exists) {
  for (let i = scope.length; i >= 0; i--) {
    const cand = [...scope.slice(0, i), ref].join("::");
    if (exists(cand)) return cand;
  }
  return undefined;
}

function holderType(bitBound, signed) {
  const bits = bitBound <= 8 ? 8 : bitBound <= 16 ? 16 : bitBound <= 32 ? 32 : 64;
  return `${signed ? "int" : "uint"}${bits}`;
}

function prepareSchema(idlText, rootName) {
  let t = idlText.replace(/^[ \t]*#.*$/gm, "");
  t = stripComments(t);
  t = t.replace(/@extensibility\s*\(\s*(FINAL|APPENDABLE|MUTABLE)\s*\)/gi, (_m, k) => `@${k.toLowerCase()}`);
  t = t.replace(/\b0[xX]([0-9a-fA-F]+)\b/g, (_m, h) => BigInt("0x" + h).toString());

  const sc = scanScopes(t);
  t = t.replace(/@bit_bound\s*\(\s*\d+\s*\)/g, "");
  t = t.replace(/\b(struct\s+\w+)\s*:\s*[\w:]+\s*\{/g, "$1 {");

  const defs = parseIDL(t);
  const byName = new Map(defs.map((d) => [d.name ?? "", d]));

  // inheritance: prepend the base's (flattened) members
  const done = new Set();
  const flatten = (name, depth = 0) => {
    const d = byName.get(name);
    if (!d || done.has(name) || depth > 64) return d;
    const b = sc.bases.get(name);
    if (b) {
      const baseName = resolveRef(b.ref, b.scope, (n) => byName.get(n)?.aggregatedKind === "struct");
      if (!baseName) throw new Error(`base ${b.ref} of ${name} not found`);
      const base = flatten(baseName, depth + 1);
      d.definitions = [...base.definitions, ...d.definitions];
      const ext = ["final", "appendable", "mutable"];
      if (!ext.some((k) => d.annotations && k in d.annotations) && base.annotations) {
        for (const k of ext) if (k in base.annotations) d.annotations = { ...(d.annotations ?? {}), [k]: base.annotations[k] };
      }
    }
    done.add(name);
    return d;
  };
  for (const name of byName.keys()) flatten(name);

  const root = byName.get(rootName);
  if (!root) throw new Error(`schema name "${rootName}" is not a type of its IDL`);
  if (root.aggregatedKind === "module") throw new Error(`schema name "${rootName}" is not a struct or union`);

  // enum name -> {value -> literal}, literal -> value
  const enums = new Map();
  for (const [fq, e] of sc.enums) {
    const d = byName.get(fq);
    const byValue = new Map();
    const byLiteral = new Map();
    for (const c of d?.definitions ?? []) {
      if (!byValue.has(Number(c.value))) byValue.set(Number(c.value), c.name);
      byLiteral.set(c.name, Number(c.value));
    }
    enums.set(fq, { byValue, byLiteral, bitBound: e.bitBound });
  }
  const unionSwitchEnum = new Map();
  for (const [fq, u] of sc.unionSwitch) {
    const en = resolveRef(u.ref, u.scope, (n) => enums.has(n));
    if (en) unionSwitchEnum.set(fq, en);
  }

  const schema = { defs, byName, root, enums, unionSwitchEnum, readers: new Map() };
  return schema;
}

// Definitions as the XCDR version needs them: in XCDR2 an enum is 1/2/4 bytes by bit_bound.
function definitionsFor(schema, xcdr2) {
  const defs = structuredClone(schema.defs);
  if (!xcdr2) return defs;
  for (const d of defs) {
    if (d.aggregatedKind === "struct") {
      for (const f of d.definitions) {
        const e = f.enumType && schema.enums.get(f.enumType);
        if (e && !f.isConstant) f.type = holderType(e.bitBound, true);
      }
    } else if (d.aggregatedKind === "union") {
      const en = schema.unionSwitchEnum.get(d.name);
      const e = en && schema.enums.get(en);
      if (e) d.switchType = holderType(e.bitBound, true);
      for (const c of [...d.cases.map((x) => x.type), ...(d.defaultCase ? [d.defaultCase] : [])]) {
        const ce = c.enumType && schema.enums.get(c.enumType);
        if (ce) c.type = holderType(ce.bitBound, true);
      }
    }
  }
  return defs;
}

// What the reference decoder (omgidl-serialization 1.0.x) cannot read correctly.
function unsupportedReasons(defs, xcdr2) {
  const reasons = [];
  for (const d of defs) {
    const fields =
      d.aggregatedKind === "struct"
        ? d.definitions
        : d.aggregatedKind === "union"
          ? [...d.cases.map((c) => c.type), ...(d.defaultCase ? [d.defaultCase] : [])]
          : [];
    for (const f of fields) {
      if (f.isConstant) continue;
      if (f.annotations && "optional" in f.annotations) reasons.push(`@optional member ${d.name}.${f.name}`);
      if (["wchar", "wstring"].includes(f.type)) reasons.push(`${f.type} member ${d.name}.${f.name}`);
      if (xcdr2 && f.isArray && (f.isComplex || f.type === "string" || f.enumType))
        reasons.push(`XCDR2 collection of non-primitive elements (DHEADER not read) ${d.name}.${f.name}`);
    }
  }
  return reasons;
}

function rootExtensibility(def) {
  const a = def.annotations ?? {};
  if ("mutable" in a) return "mutable";
  if ("appendable" in a) return "appendable";
  return "final";
}

// omgidl-serialization 1.0.x returns a union as {member: value} and drops the discriminator.
// This subclass repeats its readUnionType (same steps, same CdrReader calls) and keeps the
// discriminator as "$discriminator", so it can be compared exactly.
class DiscriminatingMessageReader extends MessageReader {
  readUnionType(unionDef, reader, options) {
    const a = unionDef.annotations ?? {};
    const readMemberHeader = options.usesMemberHeader && "mutable" in a;
    const readers = {
      bool: () => Boolean(reader.int8()),
      int8: () => reader.int8(),
      uint8: () => reader.uint8(),
      int16: () => reader.int16(),
      uint16: () => reader.uint16(),
      int32: () => reader.int32(),
      uint32: () => reader.uint32(),
      int64: () => reader.int64(),
      uint64: () => reader.uint64(),
    };
    const read = readers[unionDef.switchType];
    if (!read) throw new Error(`Unrecognized switch discriminator type ${unionDef.switchType}`);
    if (readMemberHeader) reader.emHeader();
    let d = read();
    if (typeof d === "bigint") d = Number(d);
    let kase;
    for (const c of unionDef.cases) if (c.predicates.some((p) => p === d)) kase = c.type;
    if (!kase) kase = unionDef.defaultCase;
    const msg = { $discriminator: d };
    if (kase) {
      msg[kase.name] = this.readMemberFieldValue(
        kase,
        reader,
        { readMemberHeader, parentName: unionDef.name },
        options,
      );
    }
    return msg;
  }
}

// ---------------------------------------------------------------- value comparison
const INT_TYPES = new Set(["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]);

function isInt(x) {
  return typeof x === "bigint" || (typeof x === "number" && Number.isInteger(x));
}

function compareAggregate(ctx, typeName, dec, exp, path) {
  const def = ctx.byName.get(typeName);
  if (!def) return problem(path, `type ${typeName} not in schema`);
  if (exp === null || typeof exp !== "object" || Array.isArray(exp))
    return problem(path, `expected ${show(exp)}, decoded ${show(dec)}`);
  if (dec === null || typeof dec !== "object") return problem(path, `decoded ${show(dec)}, expected ${show(exp)}`);
  if (def.aggregatedKind === "struct") {
    const fields = def.definitions.filter((f) => !f.isConstant);
    const names = fields.map((f) => f.name);
    for (const f of fields) {
      if (!(f.name in exp)) {
        problem(`${path}.${f.name}`, `missing in expected, decoded ${show(dec[f.name])}`);
        continue;
      }
      compareField(ctx, f, dec[f.name], exp[f.name], `${path}.${f.name}`);
    }
    const extra = Object.keys(exp).filter((k) => !names.includes(k));
    if (extra.length) problem(path, `expected has members not in the type: ${extra.join(", ")}`);
    else {
      const order = Object.keys(exp);
      if (order.join(",") !== names.join(",")) problem(path, `member order ${order.join(",")} != IDL ${names.join(",")}`);
    }
    return;
  }
  if (def.aggregatedKind === "union") {
    if (!("$discriminator" in exp)) return problem(path, `expected union has no $discriminator: ${show(exp)}`);
    let d = exp.$discriminator;
    if (typeof d === "string") {
      const en = ctx.unionSwitchEnum.get(typeName);
      const e = en && ctx.enums.get(en);
      if (e && e.byLiteral.has(d)) d = e.byLiteral.get(d);
      else if (d.length === 1 && !e) d = d.charCodeAt(0);
      else return problem(`${path}.$discriminator`, `cannot map ${show(d)} to a value`);
    }
    if (typeof d === "bigint") d = Number(d);
    let kase;
    for (const c of def.cases) if (c.predicates.some((p) => p === d)) kase = c.type;
    if (!kase) kase = def.defaultCase;
    if (dec.$discriminator !== undefined && dec.$discriminator !== d)
      problem(`${path}.$discriminator`, `decoded ${show(dec.$discriminator)}, expected ${show(exp.$discriminator)} (${d})`);
    const expMembers = Object.keys(exp).filter((k) => k !== "$discriminator");
    const decMembers = Object.keys(dec).filter((k) => k !== "$discriminator");
    if (!kase) {
      if (expMembers.length) problem(path, `discriminator ${d} selects no case, expected has ${expMembers.join(",")}`);
      return;
    }
    if (expMembers.length !== 1 || expMembers[0] !== kase.name)
      return problem(path, `discriminator ${d} selects ${kase.name}, expected has ${expMembers.join(",") || "no member"}`);
    if (decMembers.length !== 1 || decMembers[0] !== kase.name)
      return problem(path, `discriminator ${d} selects ${kase.name}, decoded ${decMembers.join(",")}`);
    compareField(ctx, kase, dec[kase.name], exp[kase.name], `${path}.${kase.name}`);
    return;
  }
  problem(path, `unexpected definition kind ${def.aggregatedKind}`);
}

function compareField(ctx, f, dec, exp, path) {
  if (f.isArray) {
    const dims = f.arrayLengths ? f.arrayLengths.length : 1;
    return compareArray(ctx, f, dec, exp, path, dims);
  }
  compareScalar(ctx, f, dec, exp, path);
}

function compareArray(ctx, f, dec, exp, path, dims) {
  if (!Array.isArray(exp)) return problem(path, `expected ${show(exp)}, decoded array ${show(dec)}`);
  if (!Array.isArray(dec) && !ArrayBuffer.isView(dec)) return problem(path, `decoded ${show(dec)}, expected array`);
  if (dec.length !== exp.length)
    return problem(path, `length: decoded ${dec.length}, expected ${exp.length} (decoded ${show(dec)}, expected ${show(exp)})`);
  for (let i = 0; i < exp.length; i++) {
    if (dims > 1) compareArray(ctx, f, dec[i], exp[i], `${path}[${i}]`, dims - 1);
    else compareScalar(ctx, f, dec[i], exp[i], `${path}[${i}]`);
    if (problems.length >= MAX_SHOWN && problemCount > 10 * MAX_SHOWN) return;
  }
}

function compareScalar(ctx, f, dec, exp, path) {
  if (f.isComplex) return compareAggregate(ctx, f.type, dec, exp, path);
  const t = f.type;
  if (dec === undefined) return problem(path, `decoded nothing, expected ${show(exp)}`);
  if (t === "bool" || t === "string") {
    if (dec !== exp) problem(path, `decoded ${show(dec)}, expected ${show(exp)}`);
    return;
  }
  if (t === "float32" || t === "float64") {
    if (exp === null) {
      if (Number.isFinite(dec)) problem(path, `decoded ${show(dec)}, expected null (NaN/inf)`);
      return;
    }
    if (typeof exp !== "number" && typeof exp !== "bigint") return problem(path, `decoded ${show(dec)}, expected ${show(exp)}`);
    const n = Number(exp);
    const ok = t === "float32" ? Math.fround(n) === Math.fround(dec) : n === dec;
    if (!ok) problem(path, `decoded ${show(dec)}, expected ${show(exp)}`);
    return;
  }
  if (INT_TYPES.has(t)) {
    if (!isInt(dec)) return problem(path, `decoded non-integer ${show(dec)} for ${t}`);
    const e = f.enumType && ctx.enums.get(f.enumType);
    if (e) {
      const name = e.byValue.get(Number(dec));
      if (typeof exp === "string") {
        if (exp !== name) problem(path, `enum ${f.enumType}: decoded ${show(dec)} (${name ?? "no literal"}), expected ${show(exp)}`);
      } else if (!isInt(exp) || BigInt(exp) !== BigInt(dec) || name !== undefined) {
        problem(path, `enum ${f.enumType}: decoded ${show(dec)} (${name ?? "no literal"}), expected ${show(exp)}`);
      }
      return;
    }
    if (typeof exp === "string") {
      // char (the parser maps char to uint8): a 1-character string
      if (t !== "uint8" || exp.length !== 1 || exp.charCodeAt(0) !== Number(dec))
        problem(path, `decoded ${show(dec)}, expected ${show(exp)}`);
      return;
    }
    if (!isInt(exp) || BigInt(exp) !== BigInt(dec)) problem(path, `decoded ${show(dec)}, expected ${show(exp)}`);
    return;
  }
  problem(path, `unhandled primitive type ${t}`);
}

// ---------------------------------------------------------------- main
async function main(argv) {
  const args = argv.filter((a) => !a.startsWith("--"));
  const flags = argv.filter((a) => a.startsWith("--"));
  const known = new Set(["--skip-unsupported"]);
  if (args.length !== 2 || flags.some((f) => !known.has(f))) {
    console.error("usage: node check_mcap.mjs [--skip-unsupported] FILE.mcap EXPECTED.jsonl");
    return 2;
  }
  const skipUnsupported = flags.includes("--skip-unsupported");
  const [mcapPath, expectedPath] = args;
  for (const p of [mcapPath, expectedPath]) {
    if (!fs.existsSync(p) || !fs.statSync(p).isFile()) {
      console.error(`check_mcap: no such file: ${p}`);
      return 2;
    }
  }
  await lz4decompress.isLoaded;
  const decompressHandlers = { lz4: (buf, size) => lz4decompress(buf, Number(size)) };

  // --- EXPECTED
  const expected = [];
  const expLines = fs.readFileSync(expectedPath, "utf8").split("\n");
  for (let i = 0; i < expLines.length; i++) {
    if (expLines[i].trim() === "") continue;
    try {
      expected.push(parseJsonLossless(expLines[i]));
    } catch (e) {
      console.error(`check_mcap: ${expectedPath}:${i + 1}: not JSON: ${e.message}`);
      return 1;
    }
  }

  // --- indexed reader
  const fh = await fs.promises.open(mcapPath, "r");
  const fileSize = (await fh.stat()).size;
  let reader;
  const messages = [];
  try {
    reader = await McapIndexedReader.Initialize({ readable: new FileHandleReadable(fh, fileSize), decompressHandlers });
    for await (const m of reader.readMessages({ validateCrcs: true })) messages.push(m);
  } catch (e) {
    console.error(`check_mcap: indexed reader failed: ${e.message}`);
    await fh.close();
    return 1;
  }
  await fh.close();

  // --- stream reader over the whole file
  const counts = new Map();
  const streamMsgsPerChannel = new Map();
  let streamHeader;
  let streamDataEnd;
  const streamChunks = [];
  let messageIndexEntries = 0;
  const file = fs.readFileSync(mcapPath);
  try {
    const sr = new McapStreamReader({ includeChunks: true, validateCrcs: true, decompressHandlers });
    const step = 1 << 20;
    for (let off = 0; off < file.length; off += step) {
      sr.append(new Uint8Array(file.buffer, file.byteOffset + off, Math.min(step, file.length - off)));
      for (let r; (r = sr.nextRecord()); ) {
        counts.set(r.type, (counts.get(r.type) ?? 0) + 1);
        if (r.type === "Header") streamHeader = r;
        else if (r.type === "Message") streamMsgsPerChannel.set(r.channelId, (streamMsgsPerChannel.get(r.channelId) ?? 0) + 1);
        else if (r.type === "Chunk") streamChunks.push(r);
        else if (r.type === "MessageIndex") messageIndexEntries += r.records.length;
        else if (r.type === "DataEnd") streamDataEnd = r;
      }
    }
    if (!sr.done()) problem("stream", `reader did not reach the end magic (${sr.bytesRemaining()} bytes left)`);
  } catch (e) {
    console.error(`check_mcap: stream reader failed: ${e.message}`);
    return 1;
  }

  // --- records that must be present
  const required = ["Header", "DataEnd", "Statistics", "SummaryOffset", "Footer", "Channel"];
  if (messages.length > 0) required.push("Message", "Chunk", "MessageIndex", "ChunkIndex");
  if ([...reader.channelsById.values()].some((c) => c.schemaId !== 0)) required.push("Schema");
  for (const r of required) if (!counts.get(r)) problem("records", `no ${r} record seen by the stream reader`);
  for (const r of counts.keys())
    if (!["Header", "Footer", "Schema", "Channel", "Message", "Chunk", "MessageIndex", "ChunkIndex", "Statistics", "SummaryOffset", "DataEnd", "Metadata", "MetadataIndex", "Attachment", "AttachmentIndex"].includes(r))
      problem("records", `unexpected record type ${r}`);
  if (streamHeader && streamHeader.profile !== "") problem("Header", `profile ${show(streamHeader.profile)}, expected ""`);
  if (reader.header.profile !== "") problem("Header", `indexed reader: profile ${show(reader.header.profile)}`);

  // --- CRCs the readers do not check: data section (DataEnd) and chunk CRC presence
  const dataEndOffset = Number(reader.dataEndOffset);
  if (streamDataEnd && streamDataEnd.dataSectionCrc !== 0) {
    const withMagic = zlib.crc32(file.subarray(0, dataEndOffset));
    if (withMagic !== streamDataEnd.dataSectionCrc)
      problem("DataEnd", `data_section_crc ${streamDataEnd.dataSectionCrc} != CRC-32 of bytes [0, ${dataEndOffset}) = ${withMagic}`);
  } else if (streamDataEnd) problem("DataEnd", "data_section_crc is 0 (not computed)");
  // Our writer computes every CRC: 0 (the spec's "not computed") is a failure, not a warning.
  const zeroCrcChunks = streamChunks.filter((c) => c.uncompressedCrc === 0).length;
  if (zeroCrcChunks) problem("Chunk", `${zeroCrcChunks} chunk(s) with uncompressed_crc 0 (not computed)`);
  if (reader.footer.summaryCrc === 0) problem("Footer", "summary_crc is 0 (not computed)");
  // Chunks stored uncompressed: their records are the payload; CRC-32 recomputed here (both
  // readers check it too, lz4 chunks after decompression).
  for (const [i, c] of streamChunks.entries()) {
    if (c.compression !== "" || c.uncompressedCrc === 0) continue;
    if (BigInt(c.records.length) !== c.uncompressedSize)
      problem("Chunk", `chunk ${i} (""): ${c.records.length} bytes of records, uncompressed_size ${c.uncompressedSize}`);
    const crc = zlib.crc32(c.records);
    if (crc !== c.uncompressedCrc) problem("Chunk", `chunk ${i} (""): uncompressed_crc ${c.uncompressedCrc} != CRC-32 of its records ${crc}`);
  }

  // --- summary
  const st = reader.statistics;
  let minT;
  let maxT;
  const perChannel = new Map();
  for (const m of messages) {
    if (minT === undefined || m.logTime < minT) minT = m.logTime;
    if (maxT === undefined || m.logTime > maxT) maxT = m.logTime;
    perChannel.set(m.channelId, (perChannel.get(m.channelId) ?? 0) + 1);
  }
  const streamMsgTotal = [...streamMsgsPerChannel.values()].reduce((a, b) => a + b, 0);
  if (streamMsgTotal !== messages.length) problem("messages", `stream reader saw ${streamMsgTotal}, indexed reader ${messages.length}`);
  if (messageIndexEntries !== messages.length) problem("MessageIndex", `${messageIndexEntries} entries for ${messages.length} messages`);
  if (!st) problem("Statistics", "missing from the summary");
  else {
    if (st.messageCount !== BigInt(messages.length)) problem("Statistics", `message_count ${st.messageCount}, read ${messages.length}`);
    if (st.channelCount !== reader.channelsById.size) problem("Statistics", `channel_count ${st.channelCount}, channels ${reader.channelsById.size}`);
    if (st.schemaCount !== reader.schemasById.size) problem("Statistics", `schema_count ${st.schemaCount}, schemas ${reader.schemasById.size}`);
    if (st.chunkCount !== reader.chunkIndexes.length) problem("Statistics", `chunk_count ${st.chunkCount}, chunk indexes ${reader.chunkIndexes.length}`);
    if (st.chunkCount !== streamChunks.length) problem("Statistics", `chunk_count ${st.chunkCount}, chunks in the data section ${streamChunks.length}`);
    if (messages.length > 0) {
      if (st.messageStartTime !== minT) problem("Statistics", `message_start_time ${st.messageStartTime}, min log_time ${minT}`);
      if (st.messageEndTime !== maxT) problem("Statistics", `message_end_time ${st.messageEndTime}, max log_time ${maxT}`);
    }
    const ids = new Set([...st.channelMessageCounts.keys(), ...perChannel.keys()]);
    for (const id of ids) {
      const a = st.channelMessageCounts.get(id) ?? 0n;
      const b = BigInt(perChannel.get(id) ?? 0);
      if (a !== b) problem("Statistics", `channel ${id}: channel_message_counts ${a}, read ${b}`);
    }
  }
  // Chunks are "lz4", or "" (stored as they are) where LZ4 did not shrink them; each Chunk Index
  // (in file order) says what its chunk says, and an uncompressed one's sizes are equal.
  const compressionCounts = new Map();
  for (const c of streamChunks) {
    compressionCounts.set(c.compression, (compressionCounts.get(c.compression) ?? 0) + 1);
    if (c.compression !== "lz4" && c.compression !== "") problem("Chunk", `compression ${show(c.compression)}, expected "lz4" or ""`);
  }
  const chunkIndexes = [...reader.chunkIndexes].sort((a, b) => (a.chunkStartOffset < b.chunkStartOffset ? -1 : 1));
  for (const [i, ci] of chunkIndexes.entries()) {
    const c = streamChunks[i];
    if (c && ci.compression !== c.compression)
      problem("ChunkIndex", `chunk at ${ci.chunkStartOffset}: compression ${show(ci.compression)}, its Chunk says ${show(c.compression)}`);
    if (ci.compression === "" && ci.compressedSize !== ci.uncompressedSize)
      problem("ChunkIndex", `chunk at ${ci.chunkStartOffset}: compression "" with compressed_size ${ci.compressedSize} != uncompressed_size ${ci.uncompressedSize}`);
  }
  const msgIndexRecords = reader.chunkIndexes.reduce((a, ci) => a + ci.messageIndexOffsets.size, 0);
  if ((counts.get("MessageIndex") ?? 0) !== msgIndexRecords)
    problem("MessageIndex", `${counts.get("MessageIndex") ?? 0} records, chunk indexes point to ${msgIndexRecords}`);
  for (const [op, so] of reader.summaryOffsetsByOpcode) {
    const start = Number(so.groupStart);
    if (start + Number(so.groupLength) > file.length || file[start] !== op)
      problem("SummaryOffset", `group of opcode ${op} at ${start}: first record has opcode ${file[start]}`);
  }
  for (const [op, name] of [[3, "Schema"], [4, "Channel"], [8, "ChunkIndex"], [11, "Statistics"]]) {
    if ((name !== "Schema" || reader.schemasById.size) && (name !== "ChunkIndex" || reader.chunkIndexes.length))
      if (!reader.summaryOffsetsByOpcode.has(op)) problem("SummaryOffset", `no summary offset for ${name} records`);
  }

  // --- schemas and channels
  const channelInfo = new Map(); // channelId -> {channel, schema?: prepared, skip?: reason}
  let schemaZeroChannels = 0;
  const preparedBySchema = new Map();
  for (const [id, ch] of reader.channelsById) {
    if (ch.messageEncoding !== "cdr") problem(`channel ${id} (${ch.topic})`, `message_encoding ${show(ch.messageEncoding)}, expected "cdr"`);
    if (ch.schemaId === 0) {
      schemaZeroChannels++;
      channelInfo.set(id, { channel: ch });
      continue;
    }
    const sch = reader.schemasById.get(ch.schemaId);
    if (!sch) {
      problem(`channel ${id} (${ch.topic})`, `schema ${ch.schemaId} not in the summary`);
      channelInfo.set(id, { channel: ch, error: "no schema" });
      continue;
    }
    if (!preparedBySchema.has(sch.id)) {
      let prepared;
      if (sch.encoding !== "omgidl") {
        problem(`schema ${sch.id} (${sch.name})`, `encoding ${show(sch.encoding)}, expected "omgidl"`);
        prepared = { error: `encoding ${sch.encoding}` };
      } else {
        try {
          prepared = prepareSchema(new TextDecoder().decode(sch.data), sch.name);
        } catch (e) {
          const msg = `IDL not usable by omgidl-parser: ${String(e.message).split("\n")[0]}`;
          if (skipUnsupported) warn(`schema ${sch.id} (${sch.name}): ${msg}; values not compared`);
          else problem(`schema ${sch.id} (${sch.name})`, msg);
          prepared = { error: msg };
        }
      }
      preparedBySchema.set(sch.id, prepared);
    }
    channelInfo.set(id, { channel: ch, schemaRecord: sch, prepared: preparedBySchema.get(sch.id) });
  }

  // --- reader for a schema and XCDR version (cached)
  function readerFor(info, xcdr2) {
    const p = info.prepared;
    const key = xcdr2 ? 2 : 1;
    if (!p.readers.has(key)) {
      const defs = definitionsFor(p, xcdr2);
      const reasons = unsupportedReasons(defs, xcdr2);
      if (reasons.length) {
        const msg = `not decodable by omgidl-serialization (XCDR${key}): ${reasons.slice(0, 3).join("; ")}`;
        if (skipUnsupported) warn(`schema ${info.schemaRecord.name}: ${msg}; values not compared`);
        else problem(`schema ${info.schemaRecord.name}`, msg);
        p.readers.set(key, { error: msg });
      } else {
        p.readers.set(key, {
          reader: new DiscriminatingMessageReader(p.root.name, defs),
          byName: new Map(defs.map((d) => [d.name ?? "", d])),
        });
      }
    }
    return p.readers.get(key);
  }

  // --- pair messages with EXPECTED lines (ties in log_time may come in either order)
  if (expected.length !== messages.length)
    problem("EXPECTED", `${expected.length} lines, ${messages.length} messages in the MCAP file`);
  const n = Math.min(expected.length, messages.length);
  const pairOf = new Array(n); // message index -> expected index
  for (let i = 0; i < n; ) {
    let j = i;
    while (j + 1 < n && messages[j + 1].logTime === messages[i].logTime) j++;
    if (j === i) pairOf[i] = i;
    else {
      const used = new Set();
      for (let k = i; k <= j; k++) {
        const m = messages[k];
        const topic = reader.channelsById.get(m.channelId)?.topic;
        let found;
        for (let q = i; q <= j; q++) {
          const e = expected[q];
          if (used.has(q)) continue;
          if (e.topic === topic && isInt(e.seq) && BigInt.asUintN(32, BigInt(e.seq)) === BigInt(m.sequence) && isInt(e.source_ns) && BigInt(e.source_ns) === m.publishTime) {
            found = q;
            break;
          }
        }
        if (found === undefined) for (let q = i; q <= j; q++) if (!used.has(q)) { found = q; break; }
        used.add(found);
        pairOf[k] = found;
      }
    }
    i = j + 1;
  }

  // --- compare messages
  let decoded = 0;
  let notDecoded = 0;
  const encapsCounts = new Map();
  for (let i = 0; i < messages.length; i++) {
    if (i > 0 && messages[i].logTime < messages[i - 1].logTime) problem(`message ${i}`, "log_time goes backwards");
  }
  for (let i = 0; i < n; i++) {
    const m = messages[i];
    const e = expected[pairOf[i]];
    const where = `message ${i} / EXPECTED line ${pairOf[i] + 1}`;
    const info = channelInfo.get(m.channelId);
    if (!info) {
      problem(where, `channel ${m.channelId} not in the summary`);
      continue;
    }
    const topic = info.channel.topic;
    if (e.topic !== topic) problem(where, `topic ${show(topic)}, expected ${show(e.topic)}`);
    if (!isInt(e.reception_ns) || BigInt(e.reception_ns) !== m.logTime) problem(where, `log_time ${m.logTime}, expected reception_ns ${show(e.reception_ns)}`);
    if (!isInt(e.source_ns) || BigInt(e.source_ns) !== m.publishTime) problem(where, `publish_time ${m.publishTime}, expected source_ns ${show(e.source_ns)}`);
    if (!isInt(e.seq) || BigInt.asUintN(32, BigInt(e.seq)) !== BigInt(m.sequence)) problem(where, `sequence ${m.sequence}, expected seq ${show(e.seq)} (mod 2^32)`);
    if (info.channel.schemaId === 0) {
      if (e.value !== null) problem(where, `channel without schema, expected value ${show(e.value)} (should be null)`);
      notDecoded++;
      continue;
    }
    if (!info.prepared || info.prepared.error) {
      notDecoded++;
      continue;
    }
    const data = m.data;
    if (data.length < 4 || data[0] !== 0) {
      problem(where, `no RTPS encapsulation header: ${show(Array.from(data.subarray(0, 4)))}`);
      continue;
    }
    const kind = data[1];
    encapsCounts.set(kind, (encapsCounts.get(kind) ?? 0) + 1);
    let xcdr2;
    if (kind <= 3) xcdr2 = false;
    else if (kind >= 6 && kind <= 0x0b) xcdr2 = true;
    else {
      problem(where, `encapsulation id 0x${kind.toString(16).padStart(4, "0")} is not an XCDR1/XCDR2 RTPS id`);
      continue;
    }
    const ext = rootExtensibility(info.prepared.root);
    const wantKinds = xcdr2
      ? { final: [6, 7], appendable: [8, 9], mutable: [10, 11] }[ext]
      : ext === "mutable" ? [2, 3] : [0, 1];
    if (!wantKinds.includes(kind))
      problem(where, `encapsulation id 0x${kind.toString(16).padStart(4, "0")} does not fit the ${ext} type ${info.prepared.root.name}`);
    const r = readerFor(info, xcdr2);
    if (r.error) {
      notDecoded++;
      continue;
    }
    // omgidl-serialization reads the 4-byte header itself but only reads DHEADERs / EMHEADERs when
    // the header's id says the top-level type has them; the type's own extensibility must decide
    // for nested types, so the id is turned into the PL_ one of the same version and byte order.
    const copy = new Uint8Array(data);
    copy[1] = xcdr2 ? 0x0a | (kind & 1) : 0x02 | (kind & 1);
    let value;
    try {
      value = r.reader.readMessage(copy);
    } catch (err) {
      problem(where, `omgidl-serialization could not decode the sample: ${err.message}`);
      continue;
    }
    decoded++;
    const ctx = { byName: r.byName, enums: info.prepared.enums, unionSwitchEnum: info.prepared.unionSwitchEnum };
    compareAggregate(ctx, info.prepared.root.name, value, e.value, `${where} value`);
  }

  // --- report
  const recs = [...counts.entries()].map(([k, v]) => `${k}=${v}`).join(" ");
  const enc = [...encapsCounts.entries()].map(([k, v]) => `0x${k.toString(16).padStart(4, "0")}=${v}`).join(" ");
  for (const w of warnings) console.error(`check_mcap: warning: ${w}`);
  if (problemCount) {
    for (const p of problems) console.error(`check_mcap: FAIL ${p}`);
    if (problemCount > problems.length) console.error(`check_mcap: ... and ${problemCount - problems.length} more difference(s)`);
    console.error(`check_mcap: FAILED, ${problemCount} difference(s); records: ${recs}`);
    return 1;
  }
  console.log(
    `check_mcap: OK ${mcapPath}: records ${recs}; messages ${messages.length} (decoded ${decoded}, not decoded ${notDecoded}); ` +
      `channels ${reader.channelsById.size} (without schema ${schemaZeroChannels}); schemas ${reader.schemasById.size}; chunks ${reader.chunkIndexes.length} (lz4 ${compressionCounts.get("lz4") ?? 0}, uncompressed ${compressionCounts.get("") ?? 0})` +
      (enc ? `; encapsulations ${enc}` : ""),
  );
  return 0;
}

export { prepareSchema, definitionsFor, unsupportedReasons, parseJsonLossless };

if (process.argv[1] && import.meta.url === pathToFileURL(fs.realpathSync(process.argv[1])).href) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e) => {
      console.error(`check_mcap: error: ${e.stack ?? e}`);
      process.exit(1);
    },
  );
}
