#!/usr/bin/env bash
# A recorder per host with topics.writers "local" (issue 35, item 1): three namespaces, each a
# host with its own publishers and its own pubsub-recorder (--writers local):
#   namespace 0: libpubsub writers (read by the recorder through shared memory),
#   namespace 1: Cyclone DDS writers (local by their address),
#   namespace 2: libpubsub writers without shared memory (PUBSUB_SHM=off: by their address),
# each on topic Shared (the same topic on every host) and on Only<N>, 200 reliable samples each.
# Every writer waits until the three recorders have matched it, so each recorder sees all six.
# Checked: each recording holds exactly its host's two writers (Shared and Only<N>, 200 samples
# each, none lost); over the three every writer is recorded once; each recorder's `ctl status`
# says 4 writers elsewhere; the libpubsub host's 400 samples came through shared memory.
# The three are a recording set (control.set rig, control.armed) driven from namespace 0 with
# `ctl --dds --set rig --members 3`: status shows three armed members; one start starts all three
# with one recording id (in each recording's start mark and status), a second start is refused by
# each; status is a row per member; tag and split reach all three (the mark is
# in each recording); a participant that announces the set and never answers is named (exit 3);
# --members 5 of 3 and a request for another set find too few (exit 2); stop ends all three.
# Clocks: host 2's recorder runs 5 s ahead (libfaketime); each recording holds clock_offset marks
# for the two other members, each within its error bound of the truth (0 or 5 s); merge moves
# host 2's times onto host 0's clock (every sample then received after its source time, less
# the bound), and with --no-clock-correction keeps the samples exactly as recorded. A fourth
# member that joins and is killed (SIGKILL) is named by status and stop; the three go on.
# Not Fast DDS: Debian's Fast DDS 2.9 (built with assertions) aborts in its statistics
# (OutputTrafficManager::set_statistics_message_data) when a reader on its own host announces the
# address its interface whitelist (the peer's --nic) names.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib/netns.sh"
. "$HERE/../lib/ddsperf.sh"
. "$HERE/../lib/peers.sh"
BIN=${BIN:?set BIN to the bin directory of the build}
DOMAIN=$((20 + $$ % 50))
VENDORS=(pubsub cyclone pubsub)
for v in "${VENDORS[@]}"; do
  [ -x "$BIN/${v}_qos_peer" ] || { echo "SKIP: $BIN/${v}_qos_peer is not built"; exit 77; }
done
netns_setup 3
netns_scratch  # $out (KEEP=1 keeps it), status, fail

FAKETIME_LIB=/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1
[ -f "$FAKETIME_LIB" ] || { echo "SKIP: libfaketime is missing (scripts/setup.sh)"; exit 77; }
# Host 2's recorder runs 5 s ahead (libfaketime: its wall clock only, CLOCK_MONOTONIC left).
clock_of=("" "" "env LD_PRELOAD=$FAKETIME_LIB FAKETIME=+5 FAKETIME_DONT_FAKE_MONOTONIC=1")
recorders=()
for i in 0 1 2; do
  # shellcheck disable=SC2086 # clock_of: a command prefix, split on purpose
  netns_spawn "$i" 90 ${clock_of[$i]} "$BIN/pubsub-recorder" --domain "$DOMAIN" --interface "veth$i" \
    --writers local --path "$out/rec$i" --set storage.chunk_max_age_ms=20 \
    --set control.dds=true --set 'control.allow=["198.18.0.0/15"]' --set control.set=rig \
    --set control.armed=true >"$out/rec$i.log" 2>&1
  recorders+=("$SPAWNED")
done
for i in 0 1 2; do
  wait_for 10 "recording $i" test -e "$out/rec$i/index.sqlite3" || fail "recorder $i did not start"
done

# The recording set, from namespace 0.
set_ctl() {  # set_ctl NAME OUTFILE ARGS...: ctl --dds --set NAME; exit status as ctl's
  local name=$1 file=$2
  shift 2
  ip netns exec "${NS_PREFIX}0" "$BIN/pubsub-recorder" ctl --dds --domain "$DOMAIN" \
    --interface veth0 --set "$name" "$@" >"$file" 2>"$file.err"
}
# Armed (control.armed): every member idle until one start, which gives them one recording id.
set_ctl rig "$out/set-armed.txt" --members 3 --timeout 20 status
rc=$?
[ $rc = 0 ] && [ "$(grep -c ' armed ' "$out/set-armed.txt")" = 3 ] ||
  { fail "set status before start: exit $rc, not three armed rows"; cat "$out/set-armed.txt"*; }
set_ctl rig "$out/set-start.txt" --members 3 --timeout 20 start
rc=$?
ids=$(sed -n 's/^.*: started recording \(rig-[0-9]\{8\}T[0-9]\{6\}Z-[0-9a-f]\{4\}\) at 20.*Z$/\1/p' \
  "$out/set-start.txt" | sort -u)
[ $rc = 0 ] && [ "$(grep -c ': started recording ' "$out/set-start.txt")" = 3 ] &&
  [ "$(echo "$ids" | wc -w)" = 1 ] ||
  { fail "set start: exit $rc, not three members started with one id"; cat "$out/set-start.txt"*; }
set_ctl rig "$out/set-start2.txt" --members 3 --timeout 20 start
rc=$?
[ $rc = 1 ] && [ "$(grep -c ': start: .*: already started$' "$out/set-start2.txt.err")" = 3 ] ||
  { fail "a second set start: exit $rc, expected 1 and three refusals"; cat "$out/set-start2.txt"*; }

pubs=()
for i in 0 1 2; do
  for topic in Shared "Only$i"; do
    shm=on
    [ "$i" = 2 ] && shm=off
    PUBSUB_SHM=$shm peer "$i" "${VENDORS[$i]}" pub --topic "$topic" --count 200 --rate 200 --wait-readers 3 \
      --timeout 40 --linger 2 >"$out/pub-$i-$topic.out" 2>&1 &
    pubs+=($!)
  done
done
for p in "${pubs[@]}"; do wait "$p" || fail "a writer exited $?"; done
sleep 1

for i in 0 1 2; do
  ip netns exec "${NS_PREFIX}$i" "$BIN/pubsub-recorder" ctl --path "$out/rec$i" status --json \
    >"$out/status$i.json" || fail "ctl status $i failed"
  ip netns exec "${NS_PREFIX}$i" "$BIN/pubsub-recorder" ctl --path "$out/rec$i" status \
    >"$out/status$i.txt" || fail "ctl status (text) $i failed"
done

set_ctl rig "$out/set-status.txt" --members 3 --timeout 20 status
rc=$?
[ $rc = 0 ] || { fail "set status: exit $rc"; cat "$out/set-status.txt.err"; }
[ "$(grep -c ' recording ' "$out/set-status.txt")" = 3 ] &&
  grep -q "^3 of 3 members of set rig answered$" "$out/set-status.txt" ||
  { fail "set status: not three recording rows"; cat "$out/set-status.txt"; }
set_ctl rig "$out/set-tag.txt" --members 3 --timeout 20 tag all-hosts --note "one command"
rc=$?
[ $rc = 0 ] && [ "$(grep -c ': tag "all-hosts" at ' "$out/set-tag.txt")" = 3 ] ||
  { fail "set tag: exit $rc"; cat "$out/set-tag.txt" "$out/set-tag.txt.err"; }
set_ctl rig "$out/set-split.txt" --members 3 --timeout 20 split
rc=$?
[ $rc = 0 ] && [ "$(grep -c ': recording goes on in segment 2$' "$out/set-split.txt")" = 3 ] ||
  { fail "set split: exit $rc"; cat "$out/set-split.txt" "$out/set-split.txt.err"; }
set_ctl other "$out/set-other.txt" --timeout 4 status
rc=$?
[ $rc = 2 ] && grep -q "no recorder of set other on domain $DOMAIN" "$out/set-other.txt.err" ||
  { fail "a set with no member: exit $rc, expected 2"; cat "$out/set-other.txt.err"; }
# A fourth "member" that never answers: a participant announcing the set with no DDS control.
# It lives 11 s and then leaves cleanly (the members drop it at once, not after its lease).
netns_spawn 2 30 "$BIN/discovery_probe" -nic veth2 -domain "$DOMAIN" -seconds 11 \
  -user-data "pubsub-recorder set=rig" >"$out/probe.out" 2>&1
probe=$SPAWNED
set_ctl rig "$out/set-mute.txt" --members 4 --timeout 6 status
rc=$?
wait "$probe" || fail "the mute member exit $?"
[ $rc = 3 ] || fail "set status with a member that does not answer: exit $rc, expected 3"
grep -q "^3 of 4 members of set rig answered$" "$out/set-mute.txt" &&
  grep -q "^pubsub-recorder ctl: status: participant [0-9a-f]* ($(netns_addr 2)) of set rig did not answer$" \
    "$out/set-mute.txt.err" ||
  { fail "the member that did not answer is not named"; cat "$out/set-mute.txt"*; }
set_ctl rig "$out/set-five.txt" --members 5 --timeout 3 status
rc=$?
[ $rc = 2 ] && grep -q "only 3 of 5 recorders of set rig on domain $DOMAIN" "$out/set-five.txt.err" ||
  { fail "--members 5 of 3: exit $rc, expected 2"; cat "$out/set-five.txt.err"; }
# A fourth recorder joins the set on host 1, answers, and is killed (SIGKILL): a new ctl never
# discovers it, but the three still see it (until its 10-s lease runs out) and say so in their
# replies, so status names it and the three answer; stop reaches the three and names it.
netns_spawn 1 60 "$BIN/pubsub-recorder" --domain "$DOMAIN" --interface veth1 --writers local \
  --path "$out/rec-killed" --set control.dds=true --set 'control.allow=["198.18.0.0/15"]' \
  --set control.set=rig --set control.socket=\"\" >"$out/rec-killed.log" 2>&1
killed=$SPAWNED
set_ctl rig "$out/set-four.txt" --members 4 --timeout 20 status
rc=$?
[ $rc = 0 ] && [ "$(grep -c ' recording ' "$out/set-four.txt")" = 4 ] ||
  { fail "set status with a fourth member: exit $rc"; cat "$out/set-four.txt"*; }
killed_pid=$(pgrep -P "$killed" -x pubsub-recorder)  # ip netns exec execs the recorder
[ -n "$killed_pid" ] && kill -KILL "$killed_pid" || fail "no process of the fourth recorder to kill"
wait "$killed" 2>/dev/null
set_ctl rig "$out/set-killed.txt" --timeout 8 status
rc=$?
[ $rc = 3 ] && [ "$(grep -c ' recording ' "$out/set-killed.txt")" = 3 ] &&
  grep -q "^3 of 4 members of set rig answered$" "$out/set-killed.txt" &&
  grep -q "^pubsub-recorder ctl: status: participant [0-9a-f]* ($(netns_addr 1)) of set rig did not answer$" \
    "$out/set-killed.txt.err" || { fail "status with a killed member: exit $rc, expected 3"; cat "$out/set-killed.txt"*; }
set_ctl rig "$out/set-stop.txt" --timeout 8 stop
rc=$?
[ $rc = 3 ] && [ "$(grep -c ': stopping' "$out/set-stop.txt")" = 3 ] &&
  grep -q "^pubsub-recorder ctl: stop: participant [0-9a-f]* ($(netns_addr 1)) of set rig did not answer$" \
    "$out/set-stop.txt.err" || { fail "set stop: exit $rc, expected 3"; cat "$out/set-stop.txt" "$out/set-stop.txt.err"; }
for i in 0 1 2; do
  wait "${recorders[$i]}" || fail "recorder $i exit $?"
  "$BIN/pubsub-replay" info --json "$out/rec$i" >"$out/info$i.json" || fail "info $i failed"
  grep -q "writers on other hosts matched and not recorded here (topics.writers local)" \
    "$out/status$i.txt" || { fail "status $i does not name the writers elsewhere"; cat "$out/status$i.txt"; }
  grep -q "4 writers on other hosts not recorded here (topics.writers local)" "$out/rec$i.log" ||
    fail "recorder $i's last lines do not count 4 writers elsewhere"
done

python3 - "$out" "$NS_SUBNET" "$ids" <<'PY' || fail "recordings"
import json, sys
out = sys.argv[1]
guids, bad = {}, []
hosts = []  # each member's host name, as its set_member mark says
for k in range(3):
    marks = json.load(open(f"{out}/info{k}.json"))["marks"]
    note = [m["note"] for m in marks if m["kind"] == "set_member"]
    hosts.append(note[0].split(",")[0].removeprefix("host ") if note else "?")
for i in range(3):
    info = json.load(open(f"{out}/info{i}.json"))
    st = json.load(open(f"{out}/status{i}.json"))
    ws = info["recorded_writers"]
    got = sorted((w["topic"], w["samples"], w["lost"]) for w in ws)
    want = sorted([("Shared", 200, 0), (f"Only{i}", 200, 0)])
    if got != want:
        bad.append(f"recording {i}: writers {got}, expected {want}")
    if st["writers_elsewhere"] != 4:
        bad.append(f"recorder {i}: writers_elsewhere {st['writers_elsewhere']}, expected 4")
    if st["samples"] != 400:
        bad.append(f"recorder {i}: {st['samples']} samples, expected 400")
    if info["segments"] != 2:
        bad.append(f"recording {i}: {info['segments']} segments, expected 2 (the set's split)")
    tags = [(m["name"], m["note"]) for m in info["marks"] if m["kind"] == "tag"]
    if tags != [("all-hosts", "one command")]:
        bad.append(f"recording {i}: tags {tags}, expected the set's all-hosts")
    member = [(m["name"], m["note"]) for m in info["marks"] if m["kind"] == "set_member"]
    addr = f"198.18.{sys.argv[2]}.{i + 1}"
    if len(member) != 1 or member[0][0] != "rig" or not member[0][1].endswith(f", address {addr}"):
        bad.append(f"recording {i}: set_member marks {member}, expected rig at {addr}")
    starts = [(m["name"], m["note"]) for m in info["marks"] if m["kind"] == "start"]
    if starts != [(sys.argv[3], "")]:
        bad.append(f"recording {i}: start marks {starts}, expected the set's {sys.argv[3]}")
    if st["recording_id"] != sys.argv[3]:
        bad.append(f"recorder {i}: recording_id {st['recording_id']!r}, expected {sys.argv[3]}")
    # Clock offsets to the two others (host 2 is 5 s ahead): within the error bound of the truth.
    for j in range(3):
        if j == i:
            continue
        name = f"host {hosts[j]}, address 198.18.{sys.argv[2]}.{j + 1}"
        ms = [m["note"] for m in info["marks"] if m["kind"] == "clock_offset" and m["name"] == name]
        truth = 5e9 * ((j == 2) - (i == 2))
        for note in ms:
            off, err = note.split(" s, error ")
            off, err = float(off) * 1e9, float(err.removesuffix(" s")) * 1e9
            if abs(off - truth) > err + 1e6:
                bad.append(f"recording {i}: offset to member {j} {note}, truth {truth / 1e9:+.0f} s")
        if not ms:
            bad.append(f"recording {i}: no clock_offset mark for member {j} ({name})")
    for w in ws:
        guids.setdefault(w["guid"], []).append(i)
    print(f"recording {i}: {got}, {st['writers_elsewhere']} writers elsewhere, "
          f"{st['samples_shm']} samples over shared memory")
shm0 = json.load(open(f"{out}/status0.json"))["samples_shm"]
if shm0 != 400:
    bad.append(f"recorder 0 read {shm0} samples through shared memory, expected 400")
twice = {g: r for g, r in guids.items() if len(r) > 1}
if len(guids) != 6 or twice:
    bad.append(f"{len(guids)} distinct writers over the three recordings, expected 6; twice: {twice}")
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
# Replayed as one: the three recordings merged into one (every writer once, marks kept); a
# recording merged with itself keeps each sample once.
# --no-clock-correction: the samples exactly as the members recorded them.
"$BIN/pubsub-replay" merge -q --no-clock-correction "$out/rec0" "$out/rec1" "$out/rec2" \
  -o "$out/merged" >"$out/merge.out" 2>&1 || { fail "merge exit $?"; cat "$out/merge.out"; }
grep -q "^merged 3 recordings into $out/merged: 1200 samples of 4 topics from 6 writers, 0 duplicates left out," \
  "$out/merge.out" || { fail "merge's summary"; cat "$out/merge.out"; }
"$BIN/pubsub-replay" verify "$out/merged" >/dev/null 2>&1 || fail "the merged recording does not verify"
"$BIN/pubsub-replay" info --json "$out/merged" >"$out/info-merged.json" || fail "info merged"
for i in 0 1 2; do "$BIN/pubsub-replay" export -q "$out/rec$i" >"$out/rec$i.export.jsonl"; done
sort "$out"/rec[012].export.jsonl >"$out/parts.jsonl"
"$BIN/pubsub-replay" export -q "$out/merged" >"$out/merged.jsonl" || fail "export merged"
sort "$out/merged.jsonl" | cmp -s - "$out/parts.jsonl" || fail "the merged samples differ from the three recordings'"
python3 - "$out" <<'PY' || fail "merged recording"
import json, sys
out = sys.argv[1]
info = json.load(open(f"{out}/info-merged.json"))
ws = sorted((w["topic"], w["samples"], w["lost"]) for w in info["recorded_writers"])
want = sorted([("Shared", 200, 0)] * 3 + [(f"Only{i}", 200, 0) for i in range(3)])
kinds = sorted(m["kind"] for m in info["marks"] if m["kind"] != "clock_offset")
times = [json.loads(l)["reception_ns"] for l in open(f"{out}/merged.jsonl")]
bad = []
if ws != want: bad.append(f"writers {ws}")
if kinds != ["set_member"] * 3 + ["start"] * 3 + ["tag"] * 3: bad.append(f"marks {kinds}")
if times != sorted(times): bad.append("not in reception-time order")
for b in bad: print("FAIL: merged:", b)
sys.exit(1 if bad else 0)
PY
# With the clocks corrected (the default): host 2's times moved 5 s back onto host 0's clock, so
# every sample's reception follows its writer's source time by less than a second (the writers'
# clocks are the machine's; 50 ms of slack), where host 2's own recording says 5 s.
"$BIN/pubsub-replay" merge -q "$out/rec0" "$out/rec1" "$out/rec2" -o "$out/merged-clocks" \
  >"$out/merge-clocks.out" 2>&1 || { fail "merge with clocks exit $?"; cat "$out/merge-clocks.out"; }
grep -Eq "^clock of $out/rec1: [+-]0\.[0-9]{9} s, error 0\.[0-9]{9} s from $out/rec0's, reception times corrected$" \
  "$out/merge-clocks.out" &&
  grep -Eq "^clock of $out/rec2: \+(4\.99|5\.00)[0-9]{7} s, error 0\.[0-9]{9} s from $out/rec0's, reception times corrected$" \
    "$out/merge-clocks.out" || { fail "merge's clock lines"; cat "$out/merge-clocks.out"; }
"$BIN/pubsub-replay" export -q "$out/merged-clocks" >"$out/merged-clocks.jsonl" || fail "export merged-clocks"
"$BIN/pubsub-replay" export -q "$out/rec2" >"$out/rec2.jsonl" || fail "export rec2"
python3 - "$out/merged-clocks.jsonl" "$out/rec2.jsonl" "$out/merge-clocks.out" <<'PY' || fail "corrected clocks"
import json, re, sys
merged = [json.loads(l) for l in open(sys.argv[1])]
own = [json.loads(l) for l in open(sys.argv[2])]
late = lambda s: (s["reception_ns"] - s["source_ns"]) / 1e9
# A corrected time is off by at most the offset's error bound, and the writers' clocks are the
# machine's; but a recorder's reception clock is the wall clock at its start plus the monotonic
# time since, which drifts from the wall clock by milliseconds over a loaded minute (-14.5 ms
# seen beside a CI run): no reception before its source time by more than the bound + 50 ms.
bound = 0.05 + max(float(e) for e in re.findall(r", error ([0-9.]+) s from", open(sys.argv[3]).read()))
bad = []
if len(merged) != 1200: bad.append(f"{len(merged)} samples merged, expected 1200")
off = [s for s in merged if not -bound <= late(s) < 1]
if off: bad.append(f"{len(off)} merged samples received {late(off[0]):.3f} s after their source time")
if not own or min(late(s) for s in own) < 4.5:
    bad.append("host 2's own recording is not 5 s ahead")
if [s["reception_ns"] for s in merged] != sorted(s["reception_ns"] for s in merged):
    bad.append("the corrected merge is not in reception-time order")
for b in bad: print("FAIL:", b)
print(f"corrected merge: {len(merged)} samples, received {min(map(late, merged)):.4f} to "
      f"{max(map(late, merged)):.4f} s after their source time; host 2 alone "
      f"{min(map(late, own)):.3f} s")
sys.exit(1 if bad else 0)
PY
# info (of a directory holding the three) and verify over the three as they are; export names
# each sample's member; play of the three (merged on the fly) into one subscriber per topic on
# host 1 (two of them Cyclone DDS readers): every writer's 200 samples exactly once, in order.
mkdir "$out/set" && cp -r "$out/rec0" "$out/rec1" "$out/rec2" "$out/set/" || fail "copying the set"
"$BIN/pubsub-replay" info "$out/set" >"$out/info-set.txt" 2>&1 || fail "info over three: exit $?"
sed -i "s#^$out/set/#$out/#" "$out/info-set.txt"  # the rows as for the originals
grep -qx "3 recordings of recording set rig, recording id $ids:" "$out/info-set.txt" &&
  grep -q "^total: 1200 samples from 6 writers (0 recorded by more than one member" "$out/info-set.txt" &&
  grep -qx "coverage: every member over the whole time" "$out/info-set.txt" &&
  grep -Eq "^$out/rec2 +host [^ ]+, address 198\.18\.$NS_SUBNET\.3 +400 +2 +0 .*  \+(4\.99|5\.00)[0-9]{7} s, error 0\.[0-9]{9} s$" \
    "$out/info-set.txt" || { fail "info over three"; cat "$out/info-set.txt"; }
"$BIN/pubsub-replay" export -q "$out/rec0" "$out/rec1" "$out/rec2" -o "$out/members.jsonl" 2>/dev/null ||
  fail "export of the three: exit $?"
python3 - "$out" "$NS_SUBNET" <<'PY' || fail "export of the three"
import json, sys
out, net = sys.argv[1], sys.argv[2]
owner = {}  # writer GUID -> the member that recorded it, from each recording's own export
for i in range(3):
    for line in open(f"{out}/rec{i}.export.jsonl"):
        owner[json.loads(line)["writer"]] = f"address 198.18.{net}.{i + 1}"
lines = [json.loads(l) for l in open(f"{out}/members.jsonl")]
bad = [l for l in lines if not l.get("member", "").endswith(owner.get(l["writer"], "?"))]
if len(lines) != 1200 or bad:
    print(f"FAIL: {len(lines)} samples exported, {len(bad)} without their member, e.g. {bad[:1]}")
    sys.exit(1)
PY
# MCAP: a channel per topic and member (metadata "member"), read by the official reader.
check=$HERE/../../tools/mcap_check
[ -d "$check/node_modules" ] || fail "$check/node_modules missing: run scripts/setup.sh"
"$BIN/pubsub-replay" export -q "$out/rec0" "$out/rec1" "$out/rec2" --format mcap -o "$out/set.mcap" \
  2>/dev/null || fail "MCAP export of the three: exit $?"
(cd "$check" && node --input-type=module -e '
import fs from "node:fs";
import { McapStreamReader } from "@mcap/core";
import lz4decompress from "@foxglove/wasm-lz4";
await lz4decompress.isLoaded;
const r = new McapStreamReader({ validateCrcs: true,
  decompressHandlers: { lz4: (buf, size) => lz4decompress(buf, Number(size)) } });
r.append(fs.readFileSync(process.argv[1]));
const ch = new Map(), n = new Map();
for (let rec; (rec = r.nextRecord()); ) {
  if (rec.type === "Channel") ch.set(rec.id, `${rec.topic} ${rec.metadata.get("member") ?? "-"}`);
  if (rec.type === "Message") n.set(rec.channelId, (n.get(rec.channelId) ?? 0) + 1);
}
for (const [id, name] of ch) console.log(`${name.replace(/^(\S+) host \S+, address /, "$1 ")} ${n.get(id) ?? 0}`);
' "$out/set.mcap") | sort >"$out/mcap-channels.txt"
a=$(netns_addr 0) b=$(netns_addr 1) c=$(netns_addr 2)
printf '%s\n' "Only0 $a 200" "Only1 $b 200" "Only2 $c 200" "Shared $a 200" "Shared $b 200" \
  "Shared $c 200" | sort | cmp -s - "$out/mcap-channels.txt" ||
  { fail "MCAP channels per topic and member"; cat "$out/mcap-channels.txt"; }
"$BIN/pubsub-replay" verify "$out/rec0" "$out/rec1" "$out/rec2" >"$out/verify-set.txt" 2>&1 &&
  [ "$(grep -c '^result: ok$' "$out/verify-set.txt")" = 3 ] || { fail "verify over three"; cat "$out/verify-set.txt"; }
subs=()
for topic in Shared Only0 Only1 Only2; do
  # Cyclone DDS readers for two topics (one writer each: the Cyclone peer names a sample's
  # writer by its instance), libpubsub readers for the others.
  n=200 vendor=pubsub
  [ "$topic" = Shared ] && n=600
  [ "$topic" = Only1 ] || [ "$topic" = Only2 ] && vendor=cyclone
  peer 1 "$vendor" sub --topic "$topic" --count "$n" --timeout 40 >"$out/replayed-$topic.out" 2>&1 &
  subs+=($!)
done
ip netns exec "${NS_PREFIX}0" "$BIN/pubsub-replay" play "$out/rec0" "$out/rec1" "$out/rec2" \
  --domain "$DOMAIN" --nic veth0 --wait-readers 1 -q >"$out/play.out" 2>&1 ||
  { fail "play of the three: exit $?"; cat "$out/play.out"; }
for s in "${subs[@]}"; do wait "$s" || fail "a subscriber of the replay exited $?"; done
grep -q "^pubsub-replay: play: merging 3 recordings into .* first (removed afterwards)$" "$out/play.out" ||
  { fail "play's merge note"; cat "$out/play.out"; }
python3 - "$out" <<'PY' || fail "replayed samples"
import json, sys
out, bad = sys.argv[1], []
for topic, writers in (("Shared", 3), ("Only0", 1), ("Only1", 1), ("Only2", 1)):
    per = {}
    for line in open(f"{out}/replayed-{topic}.out"):
        e = json.loads(line)
        if e.get("event") == "sample":
            per.setdefault(e["writer"], []).append(e["seq"])
            if not e["ok"]: bad.append(f"{topic}: a sample's payload differs")
    seqs = sorted(per.values())
    if seqs != [list(range(1, 201))] * writers:
        bad.append(f"{topic}: {len(per)} writers, {[len(s) for s in seqs]} samples, "
                   f"expected {writers} writers of 1..200 in order")
for b in bad: print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
"$BIN/pubsub-replay" merge -q "$out/rec0" "$out/rec0" -o "$out/twice" >"$out/twice.out" 2>&1 &&
  grep -q ": 400 samples of 2 topics from 2 writers, 400 duplicates left out," "$out/twice.out" ||
  { fail "a recording merged with itself"; cat "$out/twice.out"; }
"$BIN/pubsub-replay" merge "$out/rec0" "$out/rec1" -o "$out/merged" >"$out/again.out" 2>&1
rc=$?
[ $rc = 2 ] && grep -q "exists and is not empty" "$out/again.out" ||
  { fail "merge onto an existing recording: exit $rc"; cat "$out/again.out"; }

[ $status -ne 0 ] && tail -n 3 "$out"/pub-*.out && for i in 0 1 2; do echo "--- recorder $i"; tail -n 15 "$out/rec$i.log"; done
exit $status
