#!/usr/bin/env bash
# Records `ddsperf pub` (Cyclone DDS, KEYS keys, samples of SIZE bytes) with pubsub-recorder and
# decodes the recording with `pubsub-replay export --decode --idl keyedseq.idl`, as JSON lines
# and as CSV. Every recorded sample must decode (exit 0, no decode_error) into exactly the
# members seq, keyval, baggage; per writer, the value's seq must follow the RTPS sequence number
# one to one (ddsperf counts its writes), keyval must be < KEYS with every key present, and the
# baggage must be SIZE minus the 12 bytes of seq, keyval and the sequence length, every byte 0xee -
# what ddsperf fills it with. The CSV must hold the same values in the columns value.seq,
# value.keyval, value.baggage (its own seq column is the RTPS sequence number),
# and the MCAP export must pass tests/tools/mcap_check (the official MCAP reader, and the same
# values decoded by Foxglove's omgidl libraries). The recorder must have looked KeyedSeq up
# through XTypes TypeLookup (ddsperf announces TypeInformation): `pubsub-replay types` prints
# it, and --decode and the MCAP export without --idl give the same values. Also: an IDL with a
# syntax error is refused with exit 2 and nothing written.
# KEEP_OUT=DIR copies the work directory there at the end (for a look by hand).
# With MODE idl the recorder is given keyedseq.idl (types.idl) instead, and the type stored must
# be that one (source idl, no lookup).
# Usage: ddsperf_decode.sh [SIZE [KEYS [MODE]]]   (MODE: lookup (default) or idl)
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib/netns.sh"
. "$HERE/../lib/ddsperf.sh"
BIN=${BIN:?set BIN to the bin directory of the build}
size=${1:-100} keys=${2:-4} mode=${3:-lookup}
ddsperf_require
for b in pubsub-recorder pubsub-replay recording_summary; do
  [ -x "$BIN/$b" ] || { echo "FAIL: $b not built ($BIN/$b); build it first"; exit 1; }
done
netns_setup 3
out=$(mktemp -d) || exit 1  # removed on exit: only what this script made
trap 'netns_cleanup; [ -n "${KEEP_OUT:-}" ] && cp -r "$out" "$KEEP_OUT"; rm -rf "$out"' EXIT

types='"types": {"idl": []}'
[ "$mode" = idl ] && types='"types": {"idl": ["'"$HERE/keyedseq.idl"'"]}'
echo '{"domain": 0, "interface": "veth1", "topics": {"include": ["DDSPerfRDataKS"]},
       "storage": {"path": "'"$out/rec"'"}, '"$types"'}' >"$out/r.json"
netns_spawn 1 60 "$BIN/pubsub-recorder" --config "$out/r.json" >"$out/rec.log" 2>&1
rec=$SPAWNED
# ddsperf pub waits for a ddsperf sub (-Qminmatch counts ddsperf participants), started once the
# recorder has matched the publisher's writer; the recorder stops once that writer is gone.
netns_run 0 60 env "$(ddsperf_env 0)" ddsperf -D 2 -n "$keys" -Qminmatch:1 -Qinitwait:15 \
  pub 500Hz size "$size" >"$out/pub.out" 2>&1 &
pub=$!
wait_for 10 "'writer ... on DDSPerfRDataKS matched' in the recorder's log" \
  grep -q "on DDSPerfRDataKS matched" "$out/rec.log" || { tail "$out/rec.log"; exit 1; }
w=$(grep -m 1 -o "writer [^ ]* on DDSPerfRDataKS matched" "$out/rec.log" | cut -d " " -f 2)
netns_run 2 60 env "$(ddsperf_env 2)" ddsperf -D 6 -n "$keys" sub >"$out/sub.out" 2>&1 &
sub=$!
wait $pub
pub_rc=$?
wait $sub
sub_rc=$?
wait_for 15 "'writer $w on DDSPerfRDataKS gone' in the recorder's log" \
  grep -q "writer $w on DDSPerfRDataKS gone" "$out/rec.log" || { tail "$out/rec.log"; exit 1; }
kill -TERM $rec
wait $rec
rec_rc=$?
[ $pub_rc -eq 0 ] || { echo "FAIL: ddsperf pub exit $pub_rc"; tail "$out/pub.out"; exit 1; }
[ $sub_rc -eq 0 ] || { echo "FAIL: ddsperf sub exit $sub_rc"; tail "$out/sub.out"; exit 1; }
[ $rec_rc -eq 0 ] || { echo "FAIL: recorder exit $rec_rc"; tail "$out/rec.log"; exit 1; }
summary=$("$BIN/recording_summary" "$out/rec" --topic DDSPerfRDataKS --verify) ||
  { echo "FAIL: recording_summary cannot read the recording"; exit 1; }

"$BIN/pubsub-replay" export "$out/rec" --decode --idl "$HERE/keyedseq.idl" -o "$out/values.jsonl" \
  2>"$out/export.err"
rc=$?
cat "$out/export.err"
[ $rc -eq 0 ] || { echo "FAIL: export --decode exit $rc"; exit 1; }
"$BIN/pubsub-replay" export "$out/rec" --format csv --decode --idl "$HERE/keyedseq.idl" \
  -o "$out/values.csv" 2>"$out/export_csv.err"
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: export --format csv --decode exit $rc"; cat "$out/export_csv.err"; exit 1; }

python3 - "$out/values.jsonl" "$out/values.csv" "$summary" "$size" "$keys" <<'PY' || exit 1
import csv, json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
reader = csv.DictReader(open(sys.argv[2]))
rows = list(reader)
summary, size, keys = json.loads(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
bad = []
if len(lines) != summary["samples"] or not lines:
    bad.append("exported %d values, recorded %d" % (len(lines), summary["samples"]))
offset = {}
seen_keys = set()
for l in lines:
    v = l.get("value")
    if not isinstance(v, dict) or list(v) != ["seq", "keyval", "baggage"] or "decode_error" in l:
        bad.append("seq %d: value %r" % (l["seq"], str(v)[:80])); break
    d = offset.setdefault(l["writer"], l["seq"] - v["seq"])
    if l["seq"] - v["seq"] != d:
        bad.append("writer %s: value seq %d at RTPS seq %d" % (l["writer"], v["seq"], l["seq"])); break
    if not 0 <= v["keyval"] < keys: bad.append("keyval %d" % v["keyval"]); break
    seen_keys.add(v["keyval"])
    if v["baggage"] != [0xee] * (size - 12):
        bad.append("seq %d: baggage of %d bytes, expected %d bytes 0xee" % (l["seq"], len(v["baggage"]), size - 12)); break
if seen_keys != set(range(keys)): bad.append("keys seen %s" % sorted(seen_keys))
header = ["topic", "writer", "seq", "source_time", "reception_time", "value.seq", "value.keyval", "value.baggage", "decode_error"]
if reader.fieldnames != header: bad.append("csv header %r" % reader.fieldnames)
if len(rows) != len(lines): bad.append("csv has %d rows, jsonl %d" % (len(rows), len(lines)))
else:
    for r, l in zip(rows, lines):
        if (int(r["seq"]), int(r["value.seq"]), int(r["value.keyval"]), json.loads(r["value.baggage"]), r["decode_error"]) != (l["seq"], l["value"]["seq"], l["value"]["keyval"], l["value"]["baggage"], ""):
            bad.append("csv row for RTPS seq %s differs: %r" % (r["seq"], list(r.values())[:6])); break
for b in bad: print("FAIL:", b)
print("decoded %d samples of %d writer(s), keys %s, baggage %d bytes" % (len(lines), len(offset), sorted(seen_keys), size - 12))
sys.exit(1 if bad else 0)
PY

# MCAP: the same samples in an MCAP file, read back by the official MCAP reader (@mcap/core,
# CRCs checked) and decoded by Foxglove's omgidl-serialization, whose values must equal ours.
check=$HERE/../../tools/mcap_check
[ -d "$check/node_modules" ] || { echo "FAIL: $check/node_modules missing: run scripts/setup.sh"; exit 1; }
"$BIN/pubsub-replay" export "$out/rec" --format mcap --idl "$HERE/keyedseq.idl" -o "$out/rec.mcap" \
  2>"$out/export_mcap.err"
rc=$?
cat "$out/export_mcap.err"
[ $rc -eq 0 ] || { echo "FAIL: export --format mcap exit $rc"; exit 1; }
grep -q "^pubsub-replay: exported $(wc -l <"$out/values.jsonl") samples on 1 channels (0 without a type)" \
  "$out/export_mcap.err" || { echo "FAIL: export --format mcap summary line"; exit 1; }
node "$check/check_mcap.mjs" "$out/rec.mcap" "$out/values.jsonl" || { echo "FAIL: MCAP check"; exit 1; }

# XTypes TypeLookup: the recorder asked ddsperf's participant for KeyedSeq's TypeObject and
# stored it; `types` prints it as IDL, info names its source, and --decode needs no --idl:
# the values must be the same as with keyedseq.idl, and so must the MCAP check's.
if [ "$mode" = idl ]; then
  logged="type KeyedSeq from $HERE/keyedseq.idl"
else
  logged="type KeyedSeq: looked up from participant"
fi
grep -q "$logged" "$out/rec.log" ||
  { echo "FAIL: no '$logged' in the recorder's log"; grep -i type "$out/rec.log"; exit 1; }
"$BIN/pubsub-replay" types "$out/rec" >"$out/types.idl" || { echo "FAIL: types exit $?"; exit 1; }
printf '%s\n' "// type KeyedSeq, from $mode; topics: DDSPerfRDataKS" '@final' 'struct KeyedSeq {' \
  '  unsigned long seq;' '  @key unsigned long keyval;' '  sequence<octet> baggage;' '};' >"$out/types.want"
diff "$out/types.want" "$out/types.idl" || { echo "FAIL: types output differs"; exit 1; }
"$BIN/pubsub-replay" info "$out/rec" --json | python3 -c '
import json, sys; t = json.load(sys.stdin)["topics"][0]
sys.exit(0 if t["type_source"] == sys.argv[1] else "FAIL: info type_source %r" % t["type_source"])' "$mode" || exit 1
"$BIN/pubsub-replay" export "$out/rec" --decode -o "$out/looked_up.jsonl" 2>"$out/e1" ||
  { echo "FAIL: --decode without --idl: exit $?, $(cat "$out/e1")"; exit 1; }
cmp "$out/values.jsonl" "$out/looked_up.jsonl" ||
  { echo "FAIL: values decoded with the looked-up type differ from those with keyedseq.idl"; exit 1; }
"$BIN/pubsub-replay" export "$out/rec" --format mcap -o "$out/looked_up.mcap" 2>"$out/e3" ||
  { echo "FAIL: export --format mcap (looked-up type) exit $?"; cat "$out/e3"; exit 1; }
node "$check/check_mcap.mjs" "$out/looked_up.mcap" "$out/values.jsonl" ||
  { echo "FAIL: MCAP check (looked-up type)"; exit 1; }
echo "stored type ($mode): KeyedSeq printed, decoded without --idl: identical values"

# Refusal: exit 2, nothing written.
printf 'struct KeyedSeq {\n  unsigned long seq;\n  unsigned long keyval\n};\n' >"$out/bad.idl"
"$BIN/pubsub-replay" export "$out/rec" --decode --idl "$out/bad.idl" -o "$out/none2.jsonl" 2>"$out/e2"
rc=$?
grep -q "^pubsub-replay: $out/bad.idl:4:" "$out/e2" && [ $rc -eq 2 ] && [ ! -e "$out/none2.jsonl" ] ||
  { echo "FAIL: IDL syntax error: exit $rc, $(cat "$out/e2")"; exit 1; }
echo "refusal: $(head -c 200 "$out/e2")"
echo PASS
