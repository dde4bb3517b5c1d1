#!/usr/bin/env python3
"""perf/three_node.sh --print-commands: prints, for three real hosts, the shell scripts that run
the same matrix as the namespace harness (in the style of RTI's perftest scripts).

Reads the harness's run list on stdin (kind tool rel keying payload batch third size rep).
Usage: print_commands.py --exec S --instances N --nic PUB --nic SUB --nic THIRD --cmdline TEXT

Each scenario gets its own DDS domain, so processes that outlive a scenario (the recorder,
ddsperf sub/pong and iperf servers run in the background for a whole scenario) never meet the
next one's. pubsub-perftest publishers wait for their readers (-numSubscribers 2, or 1 for
latency) and ddsperf publishers for their peers (-Qminmatch), so the three scripts stay in
step without a shared clock: start them together.
"""
import argparse
import math
import sys

IPERF_GROUP, IPERF_PORT = "239.255.77.1", 5301


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exec", dest="exec_s", type=float, required=True)
    ap.add_argument("--instances", type=int, required=True)
    ap.add_argument("--nic", action="append", required=True)
    ap.add_argument("--cmdline", default="")
    a = ap.parse_args()
    pub_nic, sub_nic, third_nic = a.nic
    e = a.exec_s
    ei = math.ceil(e)

    # Scenarios in first-appearance order, each with its sizes and repetition count.
    scen, order = {}, []
    for line in sys.stdin:
        f = line.split()
        if len(f) != 9:
            continue
        kind, tool, rel, keying, payload, batch, third, size, rep = f
        key = (kind, tool, rel, keying, payload, batch, third)
        if key not in scen:
            scen[key] = {"sizes": [], "reps": 0}
            order.append(key)
        if int(size) not in scen[key]["sizes"]:
            scen[key]["sizes"].append(int(size))
        scen[key]["reps"] = max(scen[key]["reps"], int(rep))

    total_runs = sum(len(scen[k]["sizes"]) * scen[k]["reps"] for k in order)
    # Generous lifetime of the background processes: the whole matrix, twice over.
    life = int(2 * total_runs * (ei + 30)) + 600
    hosts = {0: [], 1: [], 2: []}

    def uri(nic):
        return ("'<General><Interfaces><NetworkInterface address=\"%s\"/></Interfaces>"
                "<AllowMulticast>true</AllowMulticast></General>'" % nic)

    for h, nic in ((0, pub_nic), (1, sub_nic), (2, third_nic)):
        hosts[h] += [
            "#!/usr/bin/env bash",
            "# Usage: bash this-script.sh [OUTPUT_DIR]; BIN=dir of pubsub-perftest/-recorder/-replay",
            'BIN=${BIN:-$(dirname "$(command -v pubsub-perftest 2>/dev/null || echo ./x)")}',
            'out=${1:-three_node-results}',
            'mkdir -p "$out"',
            f"export CYCLONEDDS_URI={uri(nic)}",
            f"nic={nic}",
            f"exec_time={e:g}",
            "",
        ]

    for idx, key in enumerate(order):
        kind, tool, rel, keying, payload, batch, third, = key
        sizes = " ".join(str(s) for s in scen[key]["sizes"])
        reps = " ".join(str(i) for i in range(1, scen[key]["reps"] + 1))
        dom = 1 + idx % 200
        be = rel == "be"
        label = f"{kind} {tool} {rel} {keying}" if kind != "raw" else "raw UDP multicast (iperf)"
        if tool == "ours" and kind == "thr":
            label += f" payload {payload} batch {batch}"
        label += {"rec": ", third host: pubsub-recorder", "sub2": ", third host: second subscriber",
                  "none": ""}[third if kind != "raw" else "none"]
        if tool == "ours":
            flags = (" -best" if be else "") + (f" -keyed -instances {a.instances}" if keying == "keyed" else "")
        else:
            flags = (" -u" if be else "") + (f" -n {a.instances}" if keying == "keyed" else "")
        if kind == "thr":
            name = f"thr_sub_{tool}_{keying}_{rel}"
            if tool == "ours":
                name += ("_noBatch" if batch == "0" else f"_batch{batch}") + f"_{payload}"
        elif kind == "lat":
            name = f"lat_pub_{tool}_{keying}_{rel}"
        else:
            name = "raw_udp_iperf"
        for h in hosts:
            hosts[h] += [f'echo ">> scenario {idx + 1}: {label}'
                         + (f' (domain {dom})"' if kind != "raw" else '"')]

        def loop(h, body, header_arg=""):
            hosts[h] += [f"extra_args=\"{header_arg}\"",
                         f"for index in {reps}; do",
                         f"  for DATALEN in {sizes}; do"]
            hosts[h] += ["    " + b for b in body]
            hosts[h] += ["  done", "done"]

        if kind == "thr" and tool == "ours":
            loop(0, [f'"$BIN/pubsub-perftest" -pub -domain {dom} -nic $nic -noPrint -exec $exec_time '
                     f"-numSubscribers 2 -waitSubscribers 600 -datalen $DATALEN -batchSize {batch} "
                     f"-payload {payload}{flags}",
                     "sleep 3"])
            sub = (f'"$BIN/pubsub-perftest" -sub -domain {dom} -nic $nic -noPrint $extra_args '
                   f"-exec 3600 -datalen $DATALEN{flags}")
            loop(1, [sub + f' >> "$out/{name}_2sub.csv"' if third == "sub2" else
                     sub + f' >> "$out/{name}_recorder.csv"', 'extra_args="-noOutputHeaders"'])
            if third == "sub2":
                loop(2, [sub + f' >> "$out/{name}_2sub_third.csv"', 'extra_args="-noOutputHeaders"'])
        elif kind == "thr":
            minmatch = 1 if third == "rec" else 2
            loop(0, [f"ddsperf -i {dom} -D $exec_time -Qminmatch:{minmatch} -Qinitwait:600{flags} "
                     "pub size $DATALEN", "sleep 3"])
            sub = f"ddsperf -i {dom} -D {life}{flags} sub"
            hosts[1] += [f'{sub} > "$out/{name}_{"recorder" if third == "rec" else "2sub"}.txt" 2>&1 &',
                         "# per-second lines carry the size: rate = median of a size's 'rate X kS/s'"]
            if third == "sub2":
                hosts[2] += [f'{sub} > "$out/{name}_2sub_third.txt" 2>&1 &']
        elif kind == "raw":
            loop(0, [f"iperf -c {IPERF_GROUP} -p {IPERF_PORT} -u -b 40G -l $DATALEN -t $exec_time "
                     "-T 1 -e -w 4M -B $nic", "sleep 3"])
            srv = (f"iperf -s -u -B {IPERF_GROUP} -p {IPERF_PORT} -i 1 -e -l 65507 -w 4M")
            hosts[1] += [f'timeout {life} {srv} > "$out/raw_udp_iperf_server.txt" 2>&1 &',
                         "# (multicast joins on the default route's interface: "
                         f"ip route add {IPERF_GROUP}/32 dev IFACE if needed)"]
            hosts[2] += [f'timeout {life} {srv} > "$out/raw_udp_iperf_server_third.txt" 2>&1 &']
        elif kind == "lat" and tool == "ours":
            loop(0, [f'"$BIN/pubsub-perftest" -pub -latencyTest -domain {dom} -nic $nic -noPrint '
                     f"$extra_args -exec $exec_time -waitSubscribers 600 -datalen $DATALEN{flags} "
                     f'>> "$out/{name}.csv"', 'extra_args="-noOutputHeaders"', "sleep 3"])
            loop(1, [f'"$BIN/pubsub-perftest" -sub -latencyTest -domain {dom} -nic $nic -noPrint '
                     f"-exec 3600 -datalen $DATALEN{flags}"])
        elif kind == "lat":
            loop(0, [f"ddsperf -i {dom} -D $exec_time -Qminmatch:1 -Qinitwait:600{flags} "
                     f'ping size $DATALEN >> "$out/{name}.txt" 2>&1', "sleep 3"])
            hosts[1] += [f"ddsperf -i {dom} -D {life}{flags} pong > /dev/null 2>&1 &"]
        if kind == "thr" and third == "rec":
            hosts[2] += [
                f"cat > \"$out/recorder-d{dom}.json\" <<JSON",
                f'{{"domain": {dom}, "interface": "{third_nic}", '
                f'"storage": {{"path": "$out/rec-{name}"}}, "stats_interval_s": 5}}',
                "JSON",
                f'"$BIN/pubsub-recorder" --config "$out/recorder-d{dom}.json" --duration {life} '
                f'> "$out/rec-{name}.log" 2>&1 &',
                f'recorders+=("$out/rec-{name}")',
            ]
        for h in hosts:
            hosts[h].append("")

    hosts[0] += ['echo "publisher done: signal the other hosts (they end their background'
                 ' processes with Ctrl-C, or when --duration/-D expire)"']
    for h in (1, 2):
        hosts[h] += ['echo "waiting for the background processes (Ctrl-C once the publisher is done)"',
                     "trap 'kill $(jobs -p) 2>/dev/null' INT", "wait"]
    hosts[2] += ['for r in "${recorders[@]}"; do',
                 '  "$BIN/pubsub-replay" info "$r" --json > "$r.info.json"',
                 '  echo "$r: $(grep -m1 \'"samples"\' "$r.info.json") $(grep -m1 \'"lost"\' "$r.info.json")"',
                 "done"]

    print(f"# Commands for three real hosts, generated by: {a.cmdline}")
    print(f"# {total_runs} runs of {e:g} s in {len(order)} scenarios; each scenario in its own domain.")
    print("# Start the three scripts together (subscriber and third host first is fine); the")
    print("# publishers wait for their readers. Results land in OUTPUT_DIR on each host: the")
    print("# subscriber host has the throughput CSVs (seed layout), the publisher the latency CSVs,")
    print("# the third host the second subscriber's CSVs and the recordings (pubsub-replay info).")
    names = {0: f"publisher (NIC {pub_nic})", 1: f"subscriber (NIC {sub_nic})",
             2: f"third host: second subscriber / pubsub-recorder (NIC {third_nic})"}
    for h in (0, 1, 2):
        print()
        print("#" * 100)
        print(f"# host {h + 1}: {names[h]}")
        print("#" * 100)
        print("\n".join(hosts[h]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
