#!/usr/bin/env python3
"""Collects one run of perf/three_node.sh: reads RUNDIR (meta.txt and the processes' outputs),
appends the run's row to the scenario's CSV in OUTDIR (the seed's column layout), and prints
one JSON object (a results.jsonl line). Exit 1 when the run failed or lost samples on a
reliable topic (the JSON line is printed all the same, with "ok": false and the problems).

Usage: collect.py RUNDIR OUTDIR        (python3 standard library only)
"""
import json
import os
import re
import statistics
import sys

THR_HEADER = ("Sample Size (Bytes),Total Samples,Avg Samples/s,Avg Mbps,Lost Samples,"
              "Lost Samples (%)")
LAT_HEADER = ("Sample Size (Bytes),Avg (us),Std (us),Min (us),Max (us),50% (us),90% (us),"
              "99% (us),99.99% (us),99.9999% (us),Samples")
RAW_HEADER = ("Datagram Size (Bytes),Total Datagrams,Avg Datagrams/s,Avg Mbps,Lost Datagrams,"
              "Lost Datagrams (%)")
REC_HEADER = ("Sample Size (Bytes),Published Samples,Subscriber Samples,Recorded Samples,"
              "Recorder Lost Samples,Recorded MB,Stored KB")


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def read_meta(d):
    meta = {}
    for line in read(os.path.join(d, "meta.txt")).splitlines():
        if "=" in line:
            k, v = line.split("=", 1)
            meta[k] = v
    return meta


def recorder_kept(d, topic, m, problems):
    """What pubsub-recorder kept of the data topic: samples, lost, bytes (and rate, stored_kb).
    From `pubsub-replay info` of its recording; in snapshot mode ("mode": "snapshot", nothing
    is written unless a snapshot is triggered) from its own counts of that topic, `ctl status
    --json` taken after the subscriber finished and before the recorder was stopped."""
    if "snapshot mode: keeping" in read(os.path.join(d, "rec.log")):
        try:
            t = json.loads(read(os.path.join(d, "rec_status.json")))["topics"].get(topic)
        except (ValueError, KeyError):
            problems.append("snapshot mode: no `ctl status --json` from the recorder")
            return {}
        if t is None:
            problems.append(f"snapshot mode: the recorder has no topic {topic}")
            return {}
        return {"samples": t["samples"], "lost": t["lost"], "bytes": t["bytes"], "rate": None,
                "stored_kb": None, "snapshot": True}
    try:
        info = json.loads(read(os.path.join(d, "rec_info.json")))
    except ValueError:
        problems.append("pubsub-replay info could not read the recording")
        return {}
    t = next((t for t in info.get("topics", []) if t["name"] == topic), None)
    if t is None:
        problems.append(f"the recording has no topic {topic}")
        return {}
    return {"samples": t["samples"], "lost": t["lost"], "bytes": t["bytes"],
            "rate": t.get("rate"), "stored_kb": num(m.get("rec_kb"))}


def scenario_name(m):
    """The CSV file name (without .csv) of a run's scenario."""
    if m["kind"] == "raw":
        return "raw_udp_iperf"
    if m["kind"] == "lat":
        return f"lat_pub_{m['tool']}_{m['keying']}_{m['rel']}"
    name = f"thr_sub_{m['tool']}_{m['keying']}_{m['rel']}"
    if m["tool"] == "ours":
        name += "_noBatch" if m["batch"] == "0" else f"_batch{m['batch']}"
        name += f"_{m['payload']}"
    return name + ("_recorder" if m["third"] == "rec" else "_2sub")


def append_csv(path, header, row):
    new = not os.path.exists(path)
    with open(path, "a") as f:
        if new:
            f.write(header + "\n")
        f.write(row + "\n")


def pct(lost, samples):
    return 100.0 * lost / (lost + samples) if lost + samples else 0.0


def parse_ours_thr_row(text):
    """pubsub-perftest -sub's CSV row -> dict, or None."""
    for line in text.splitlines():
        f = line.strip().split(",")
        if len(f) == 6 and f[0].isdigit():
            return {"row": line.strip(), "samples": int(f[1]), "rate": float(f[2]),
                    "mbps": float(f[3]), "lost": int(f[4]), "lost_pct": float(f[5])}
    return None


DDS_SUB = re.compile(r"\]\s+([\d.]+)\s+size (\d+) total (\d+) lost (\d+) delta (\d+) lost (\d+) "
                     r"rate ([\d.]+) kS/s")


def parse_ddsperf_sub(text):
    """ddsperf sub's per-second lines -> totals and the steady-state rate.

    The rate is the median of the per-second "rate X kS/s" values, leaving out the first line
    (the publisher started within that second), the last line with data (the publisher stopped
    within it) and seconds without data; with fewer than three lines with data, the largest."""
    lines = [m.groups() for m in DDS_SUB.finditer(text)]
    if not lines:
        return None
    total, lost = int(lines[-1][2]), int(lines[-1][3])
    with_data = [float(l[6]) * 1000 for l in lines if int(l[4]) > 0]
    steady = with_data[1:-1]
    rate = statistics.median(steady) if steady else (max(with_data) if with_data else 0.0)
    return {"samples": total, "lost": lost, "rate": rate, "seconds_used": len(steady),
            "per_second": with_data}


DDS_PING = re.compile(r"size (\d+) mean ([\d.]+)us min ([\d.]+)us 50% ([\d.]+)us 90% ([\d.]+)us "
                      r"99% ([\d.]+)us max ([\d.]+)us cnt (\d+)")


def weighted_median(pairs):
    """pairs of (value, weight) -> the weighted median value."""
    pairs = sorted(pairs)
    total = sum(w for _, w in pairs)
    acc = 0
    for v, w in pairs:
        acc += w
        if acc * 2 >= total:
            return v
    return pairs[-1][0] if pairs else 0.0


def parse_ddsperf_ping(text):
    """ddsperf ping's per-second lines -> one-way figures. ddsperf already prints one-way values:
    its pong handler records (now - ping's source timestamp) / 2 (process_pong in ddsperf.c),
    so they are taken as they are, comparable with pubsub-perftest's round trip / 2.

    Every line covers one second. The first is left out when there are three or more (warm-up).
    Average: count-weighted mean of the means; min/max: over the lines; 50/90/99%: the
    count-weighted median of the per-second percentiles (ddsperf prints no whole-run
    percentiles)."""
    rows = [tuple(float(x) for x in m.groups()) for m in DDS_PING.finditer(text)]
    if len(rows) >= 3:
        rows = rows[1:]
    if not rows:
        return None
    cnt = sum(r[7] for r in rows)
    if cnt == 0:
        return None
    return {
        "avg": sum(r[1] * r[7] for r in rows) / cnt,
        "min": min(r[2] for r in rows),
        "max": max(r[6] for r in rows),
        "p50": weighted_median([(r[3], r[7]) for r in rows]),
        "p90": weighted_median([(r[4], r[7]) for r in rows]),
        "p99": weighted_median([(r[5], r[7]) for r in rows]),
        "std": None, "p9999": None, "p999999": None,
        "samples": int(cnt),
    }


def parse_ours_lat_row(text):
    for line in text.splitlines():
        f = line.strip().split(",")
        if len(f) == 11 and f[0].isdigit():
            v = [float(x) for x in f[1:10]]
            return {"row": line.strip(), "avg": v[0], "std": v[1], "min": v[2], "max": v[3],
                    "p50": v[4], "p90": v[5], "p99": v[6], "p9999": v[7], "p999999": v[8],
                    "samples": int(f[10])}
    return None


IPERF_LINE = re.compile(r"\]\s+([\d.]+)-([\d.]+) sec .*?\s(\d+)/(\d+) \(")


def parse_iperf_server(text, size):
    """iperf 2 -s -u -e: the whole-run summary line -> received datagrams, rate, loss."""
    best = None
    for m in IPERF_LINE.finditer(text):
        start, end, lost, total = float(m[1]), float(m[2]), int(m[3]), int(m[4])
        if start == 0 and (best is None or end >= best[1]):
            best = (start, end, lost, total)
    if not best or best[1] <= 0:
        return None
    start, end, lost, total = best
    received = max(0, total - lost)
    rate = received / (end - start)
    return {"samples": received, "rate": rate, "mbps": rate * size * 8 / 1e6, "lost": lost,
            "lost_pct": pct(lost, received), "seconds": end - start}


def read_threads(path):
    """rec_threads.txt ("NAME SECONDS" per named recorder thread) -> {name: seconds}."""
    out = {}
    for line in read(path).splitlines():
        parts = line.split()
        if len(parts) == 2:
            try:
                out[parts[0]] = float(parts[1])
            except ValueError:
                pass
    return out


def read_cpu(d):
    """CPU seconds (user + system) of the publisher, subscriber and third host, from GNU time."""
    cpu = {}
    for who in ("pub", "sub", "third"):
        lines = read(os.path.join(d, "cpu_" + who)).split("\n")
        for line in reversed(lines):
            f = line.split()
            if len(f) == 2:
                try:
                    cpu[who] = round(float(f[0]) + float(f[1]), 2)
                    break
                except ValueError:
                    pass
    return cpu


def num(s):
    try:
        return int(s)
    except (TypeError, ValueError):
        return None


def main():
    d, outdir = sys.argv[1], sys.argv[2]
    m = read_meta(d)
    size = int(m["size"])
    res = {k: m[k] for k in ("kind", "tool", "rel", "keying", "payload", "batch", "third")}
    res.update(size=size, rep=int(m["rep"]), exec=float(m["exec"]), instances=int(m["instances"]),
               dir=os.path.basename(d))
    res["scenario"] = scenario_name(m)
    problems = []
    reliable = m["rel"] == "rel"

    def rc(key, must=True):
        v = num(m.get(key))
        if must and v != 0:
            problems.append(f"{key.replace('_rc', '')} exit status {m.get(key, 'missing')}")
        return v

    kind, tool = m["kind"], m["tool"]
    csv = os.path.join(outdir, res["scenario"] + ".csv")
    if kind == "thr":
        rc("pub_rc")
        if tool == "ours":
            rc("sub_rc")
            sub = parse_ours_thr_row(read(os.path.join(d, "sub.csv")))
            pub = {}
            try:
                pub = json.loads(read(os.path.join(d, "pub.json")))
            except ValueError:
                problems.append("no publisher summary")
            res["published"] = pub.get("written")
            mb = re.search(r"(\d+) blocked writes, \d+ datagrams, (\d+) retransmitted", read(os.path.join(d, "pub.err")))
            if mb:
                res["pub_blocked_writes"], res["pub_retransmitted"] = int(mb[1]), int(mb[2])
            if sub:
                append_csv(csv, THR_HEADER, sub.pop("row"))
            if m["third"] == "sub2":
                rc("sub2_rc")
                sub2 = parse_ours_thr_row(read(os.path.join(d, "sub2.csv")))
                if sub2:
                    sub2.pop("row")
                    res["sub2"] = sub2
                else:
                    problems.append("no CSV row from the second subscriber")
        else:
            # ddsperf sub exits 1 on loss; with -u (best effort) loss is allowed.
            rc("sub_rc", must=reliable)
            sub = parse_ddsperf_sub(read(os.path.join(d, "sub.out")))
            if sub:
                sub["mbps"] = sub["rate"] * size * 8 / 1e6
                sub["lost_pct"] = pct(sub["lost"], sub["samples"])
                append_csv(csv, THR_HEADER, f"{size},{sub['samples']},{sub['rate']:.0f},"
                           f"{sub['mbps']:.1f},{sub['lost']},{sub['lost_pct']:.2f}")
            if m["third"] == "sub2":
                rc("sub2_rc", must=reliable)
                sub2 = parse_ddsperf_sub(read(os.path.join(d, "sub2.out")))
                if sub2:
                    res["sub2"] = {k: sub2[k] for k in ("samples", "rate", "lost")}
                else:
                    problems.append("no rate lines from the second ddsperf sub")
        if not sub:
            problems.append("no result from the subscriber")
        else:
            res.update({k: sub[k] for k in ("samples", "rate", "mbps", "lost", "lost_pct")})
            if tool == "ddsperf":
                res["seconds_used"] = sub["seconds_used"]
            if reliable and sub["lost"]:
                problems.append(f"subscriber lost {sub['lost']} samples on a reliable topic")
            if reliable and tool == "ours" and res.get("published") is not None \
                    and sub["samples"] != res["published"]:
                problems.append(f"subscriber received {sub['samples']} of {res['published']}")
        if m["third"] == "rec":
            rc("rec_rc")
            want = "PubsubPerftest_Data" if tool == "ours" else \
                ("DDSPerfRDataKS" if reliable else "DDSPerfUDataKS")
            rec = recorder_kept(d, want, m, problems)
            if rec:
                # What a complete recording holds: ours = every sample written plus the
                # end-of-run marker (reliable: 1; best effort: up to 10 copies); ddsperf =
                # what ddsperf sub received (the recorder joined before the publisher).
                if tool == "ours":
                    extra = 1 if reliable else 10
                    pubn = res.get("published") or 0
                    rec["expected"] = pubn
                    complete = pubn <= rec["samples"] <= pubn + extra
                else:
                    rec["expected"] = res.get("samples")
                    complete = rec["samples"] == res.get("samples")
                rec["complete"] = complete
                if reliable and (not complete or rec["lost"]):
                    problems.append(f"recorder stored {rec['samples']} samples ({rec['lost']} lost), "
                                    f"expected {rec['expected']}")
            threads = read_threads(os.path.join(d, "rec_threads.txt"))
            if threads:
                rec["threads_cpu"] = threads
            res["rec"] = rec
            append_csv(os.path.join(outdir, "rec_" + res["scenario"][len("thr_sub_"):] + ".csv"),
                       REC_HEADER,
                       f"{size},{res.get('published') if res.get('published') is not None else ''},"
                       f"{res.get('samples', '')},{rec.get('samples', '')},{rec.get('lost', '')},"
                       f"{rec.get('bytes', 0) / 1e6:.1f},{rec.get('stored_kb') or ''}")
    elif kind == "raw":
        rc("client_rc")
        srv = parse_iperf_server(read(os.path.join(d, "server1.out")), size)
        srv2 = parse_iperf_server(read(os.path.join(d, "server2.out")), size)
        ms = re.search(r"Sent (\d+) datagrams", read(os.path.join(d, "client.out")))
        if not srv:
            problems.append("no summary line from the iperf server")
        else:
            res.update({k: srv[k] for k in ("samples", "rate", "mbps", "lost", "lost_pct")})
            append_csv(csv, RAW_HEADER, f"{size},{srv['samples']},{srv['rate']:.0f},"
                       f"{srv['mbps']:.1f},{srv['lost']},{srv['lost_pct']:.2f}")
        if srv2:
            res["sub2"] = {k: srv2[k] for k in ("samples", "rate", "lost")}
        if ms:
            res["sent"] = int(ms[1])
    elif kind == "lat":
        rc("pub_rc")
        rc("sub_rc", must=False)
        if tool == "ours":
            lat = parse_ours_lat_row(read(os.path.join(d, "lat.csv")))
            if lat:
                append_csv(csv, LAT_HEADER, lat.pop("row"))
        else:
            lat = parse_ddsperf_ping(read(os.path.join(d, "ping.out")))
            if lat:
                f = lambda v: "" if v is None else f"{v:.1f}"
                append_csv(csv, LAT_HEADER, ",".join(
                    [str(size)] + [f(lat[k]) for k in ("avg", "std", "min", "max", "p50", "p90",
                                                       "p99", "p9999", "p999999")]
                    + [str(lat["samples"])]))
        if not lat:
            problems.append("no latency figures")
        else:
            res["lat"] = lat
    cpu = read_cpu(d)
    if cpu:
        res["cpu"] = cpu
    res["csv"] = os.path.basename(csv)
    res["problems"] = problems
    res["ok"] = not problems
    print(json.dumps(res, sort_keys=True))
    return 0 if res["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
