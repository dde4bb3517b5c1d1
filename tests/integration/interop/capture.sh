#!/usr/bin/env bash
# A capture of a libpubsub run - discovery, 200 kB samples (DATA_FRAG), repairs under 5% loss,
# and a subscriber joining late (GAPs) - decodes as RTPS in tshark with zero malformed packets
# and shows every submessage kind the protocol uses.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib/netns.sh"
. "$HERE/../lib/impair.sh"
BIN=${BIN:?set BIN to the bin directory of the build}
command -v tshark >/dev/null || { echo "SKIP: tshark is not installed; run scripts/setup.sh"; exit 77; }
netns_setup 3
impair_link 0 5 0 || exit 1
out=$(mktemp -d) || exit 1  # removed on exit: only what this script made
trap 'netns_cleanup; rm -rf "$out"' EXIT
# Capture on the publisher's interface: after the impairment (a dropped packet is never on the
# wire), so what tshark sees is what the peers see.
netns_run 0 30 tshark -i veth0 -w "$out/cap.pcap" -q -f udp >/dev/null 2>"$out/tshark.err" &
tshark_pid=$!
wait_for 10 "'Capturing on' from tshark" grep -q "Capturing on" "$out/tshark.err" || exit 1
# sub1 prints its count every second: the late subscriber joins once samples flow.
netns_run 1 30 "$BIN/pubsub-perftest" -sub -nic veth1 -datalen 200000 -exec 20 >/dev/null 2>"$out/sub1.err" &
s1=$!
netns_run 0 30 "$BIN/pubsub-perftest" -pub -nic veth0 -datalen 200000 -exec 4 -noPrint 2>"$out/pub.err" &
p=$!
wait_for 15 "samples at the first subscriber" grep -qE "^Samples: +[1-9]" "$out/sub1.err" || exit 1
netns_run 2 30 "$BIN/pubsub-perftest" -sub -nic veth2 -datalen 200000 -exec 20 -noPrint \
  -summaryJson "$out/sub2.json" >/dev/null 2>"$out/sub2.err" &
s2=$!
wait $p; pub_rc=$?
wait $s1; s1_rc=$?
wait $s2; s2_rc=$?
# A reliable KEEP_LAST 2 writer under loss: a lost sample is a hole once the next one arrives
# with a HEARTBEAT still listing it; by the time the NACK arrives the writer has replaced it and
# answers with GAP (the subscriber then reports those samples lost, as it should). With KEEP_LAST
# 1 the HEARTBEAT would already start past the hole, and nobody would ask.
netns_run 1 30 "$BIN/pubsub-perftest" -sub -nic veth1 -domain 2 -datalen 64 -exec 10 -noPrint \
  -summaryJson "$out/sub3.json" >/dev/null 2>"$out/sub3.err" &
s3=$!
netns_run 0 30 "$BIN/pubsub-perftest" -pub -nic veth0 -domain 2 -datalen 64 -exec 1 -noPrint \
  -historyDepth 2 -batchSize 0 2>/dev/null
wait $s3; s3_rc=$?
# The capture holds everything sent so far once it holds a marker datagram sent after it (sent
# again at each try: the impairment drops some).
marked() {
  netns_exec 0 bash -c "echo -n psr-capture-end >/dev/udp/$(netns_addr 1)/9"
  grep -qa psr-capture-end "$out/cap.pcap"
}
wait_for 10 "end marker in the capture" marked || exit 1
kill -INT $tshark_pid; wait $tshark_pid
tail -n 1 "$out/pub.err" "$out/sub1.err" "$out/sub2.err" "$out/sub3.err"
[ $pub_rc -eq 0 ] && [ $s1_rc -eq 0 ] || { echo "FAIL: run failed (pub $pub_rc, sub $s1_rc)"; exit 1; }
# sub2 (joined late) and sub3 (GAPs) miss samples by design and then exit 1: each must have seen
# the end of its run, nothing twice, and no more loss than that - sub2 everything from its first
# sample on. The exit code must agree with the loss reported.
python3 - "$out/sub2.json" $s2_rc "$out/sub3.json" $s3_rc <<'PY' || exit 1
import json, sys
bad = []
for name, path, rc in (("sub2", sys.argv[1], sys.argv[2]), ("sub3", sys.argv[3], sys.argv[4])):
    s = json.load(open(path))
    w = s["writers"][0] if len(s["writers"]) == 1 else None
    print(f"{name}: exit {rc}, {s['samples']} samples, lost {s['lost']}, seq "
          + (f"{w['first_seq']}..{w['last_seq']} end {w['end_seq']}" if w else "?"))
    if int(rc) != (1 if s["lost"] else 0): bad.append(f"{name} exit {rc} with {s['lost']} lost")
    if not s["completed"] or not w or w["last_seq"] != w["end_seq"] or s["duplicates"]:
        bad.append(f"{name} did not get the end of its run once")
    elif name == "sub2" and s["lost"] != w["first_seq"] - 1:
        bad.append(f"sub2 lost {s['lost']} after joining at {w['first_seq']}")
for b in bad: print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
impair_check 5 0 0 || exit 1
packets=$(tshark -r "$out/cap.pcap" -Y rtps 2>/dev/null | wc -l)
malformed=$(tshark -r "$out/cap.pcap" -o rtps.enable_rtps_reassembly:TRUE -Y _ws.malformed 2>/dev/null)
echo "$packets RTPS packets captured"
if [ -n "$malformed" ]; then
  echo "FAIL: malformed packets:"; echo "$malformed" | head -n 20; exit 1
fi
kinds=$(tshark -r "$out/cap.pcap" -Y rtps -T fields -e rtps.sm.id 2>/dev/null | tr ',' '\n' | sort -u | tr '\n' ' ')
echo "submessage ids seen: $kinds"
status=0
for want in 0x06:ACKNACK 0x07:HEARTBEAT 0x08:GAP 0x09:INFO_TS 0x0e:INFO_DST 0x12:NACK_FRAG \
            0x13:HEARTBEAT_FRAG 0x15:DATA 0x16:DATA_FRAG; do
  id=${want%%:*}
  if ! echo " $kinds " | grep -qiE " (0x)?0*${id#0x} "; then
    echo "FAIL: no ${want#*:} ($id) in the capture"; status=1
  fi
done
[ "$packets" -gt 100 ] || { echo "FAIL: only $packets RTPS packets"; status=1; }
exit $status
