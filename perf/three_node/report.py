#!/usr/bin/env python3
"""Makes report.md and the PNG plots of a perf/three_node.sh run from OUTDIR/results.jsonl
and OUTDIR/env.json (python3 standard library; plots with gnuplot when it is installed).

Usage: report.py OUTDIR [--md FILE] [--plots DIR] [--prefix NAME_PREFIX] [--notes FILE]
  --md      where to write the report (default OUTDIR/report.md)
  --plots   where to write the PNGs (default OUTDIR); the report links them relative to --md
  --prefix  prefix of the PNG file names (e.g. three_node_ for perf/results/)
  --notes   a markdown file inserted after the machine lines (observations on the run)
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys

TARGET = 0.90  # recorder / second subscriber at every point, zero loss (issue 32)
CPU_TARGET = 1.2  # recorder CPU per sample / second subscriber's, at every point (issue 32)


def load(outdir):
    rows = []
    with open(os.path.join(outdir, "results.jsonl")) as f:
        for line in f:
            line = line.strip()
            if line:
                rows.append(json.loads(line))
    env = {}
    p = os.path.join(outdir, "env.json")
    if os.path.exists(p):
        env = json.load(open(p))
    return rows, env


def med(vals):
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None


def fmt(v, nd=0, dash="-"):
    if v is None:
        return dash
    if nd == 0:
        return f"{v:.0f}"
    return f"{v:.{nd}f}"


def ratio(a, b):
    return a / b if a is not None and b else None


class Point:
    """The runs of one scenario at one size (repetitions), summarized as medians."""

    def __init__(self, runs):
        self.runs = runs
        self.n = len(runs)
        ok = [r for r in runs if "rate" in r or "lat" in r]
        self.samples = med([r.get("samples") for r in ok])
        self.rate = med([r.get("rate") for r in ok])
        self.mbps = med([r.get("mbps") for r in ok])
        self.lost = sum(r.get("lost") or 0 for r in ok) if ok else None
        tot = sum((r.get("lost") or 0) + (r.get("samples") or 0) for r in ok)
        self.lost_pct = 100.0 * self.lost / tot if ok and tot else (0.0 if ok else None)
        self.problems = [p for r in runs for p in r.get("problems", [])]
        self.sub2_rate = med([r.get("sub2", {}).get("rate") for r in runs])
        recs = [r.get("rec") for r in runs if r.get("rec")]
        self.rec_samples = sum(x.get("samples", 0) for x in recs) if recs else None
        self.rec_expected = sum(x.get("expected") or 0 for x in recs) if recs else None
        self.rec_lost = sum(x.get("lost", 0) for x in recs) if recs else None
        self.rec_complete = all(x.get("complete") for x in recs) if recs else None
        self.rec_kb = med([x.get("stored_kb") for x in recs]) if recs else None
        self.rec_bytes = med([x.get("bytes") for x in recs]) if recs else None
        # What the recording took on disk per sample (segments, index, padding), for the disk's limit.
        self.rec_disk_per_sample = med([x["stored_kb"] * 1024 / x["samples"] for x in recs
                                        if x.get("stored_kb") and x.get("samples")]) if recs else None
        self.cpu = {k: med([r.get("cpu", {}).get(k) for r in runs]) for k in ("pub", "sub", "third")}
        groups = [thread_groups(x["threads_cpu"]) for x in recs if x.get("threads_cpu")] if recs else []
        self.rec_threads = {k: med([g[k] for g in groups]) for k in THREAD_GROUPS} if groups else None
        self.third_cpu_per_m = med([third_cpu_per_million(r) for r in runs])
        lats = [r["lat"] for r in runs if r.get("lat")]
        self.lat = {k: med([x.get(k) for x in lats]) for k in
                    ("avg", "std", "min", "max", "p50", "p90", "p99", "p9999", "p999999",
                     "samples")} if lats else None
        self.sent = med([r.get("sent") for r in runs])


# The recorder's threads (README "Threads") in three groups: the receive path, storage, the rest.
THREAD_GROUPS = ("receive", "storage", "other")


def thread_groups(threads):
    """{thread name: CPU s} -> {group: CPU s} (THREAD_GROUPS)."""
    g = dict.fromkeys(THREAD_GROUPS, 0.0)
    for name, secs in threads.items():
        key = ("receive" if name in ("pubsub-recv", "pubsub-recv-uc", "pubsub-shm") else
               "storage" if name.startswith("storage-") else "other")
        g[key] += secs
    return g


def third_cpu_per_million(run):
    """The third host's CPU seconds per million samples it took (recorded or received)."""
    cpu = run.get("cpu", {}).get("third")
    n = (run.get("rec") or run.get("sub2") or {}).get("samples")
    return cpu / n * 1e6 if cpu is not None and n else None


def group(rows):
    by = {}
    for r in rows:
        by.setdefault(r["scenario"], {}).setdefault(r["size"], []).append(r)
    return {s: {size: Point(v) for size, v in sorted(d.items())} for s, d in by.items()}


def scen_meta(rows):
    meta = {}
    for r in rows:
        meta.setdefault(r["scenario"], r)
    return meta


def title_of(r):
    rel = "Reliable" if r["rel"] == "rel" else "Best Effort"
    if r["kind"] == "raw":
        return "Raw UDP multicast (iperf 2), publisher host to subscriber host (third host also receiving)"
    if r["kind"] == "lat":
        who = "pubsub-perftest" if r["tool"] == "ours" else "ddsperf ping/pong"
        return f"Latency, {who}, {r['keying']}, {rel}"
    who = "pubsub-perftest" if r["tool"] == "ours" else "ddsperf"
    t = f"Throughput, {who}, {r['keying']}, {rel}"
    if r["tool"] == "ours":
        t += ", " + ("no batching" if r["batch"] == "0" else f"batching {r['batch']} B")
        t += f", {r['payload']} payload"
    t += ", third host: " + ("pubsub-recorder" if r["third"] == "rec" else "second subscriber")
    return t


def ddsperf_counterpart(r):
    return f"thr_sub_ddsperf_{r['keying']}_{r['rel']}_" + ("recorder" if r["third"] == "rec" else "2sub")


def baseline_counterpart(scen):
    return scen[: -len("_recorder")] + "_2sub" if scen.endswith("_recorder") else None


def table(lines, header, rows, align=None):
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "|".join(align or ["---:"] * len(header)) + "|")
    for r in rows:
        lines.append("| " + " | ".join(r) + " |")
    lines.append("")


def machine_lines(env):
    out = []
    out.append(f"- Machine: {env.get('nproc', '?')} cores ({env.get('cpu') or 'unknown CPU'}), "
               f"{env.get('mem_gb', '?')} GB RAM, Linux {env.get('kernel', '?')}; "
               f"three network namespaces on one Linux bridge, veth MTU {env.get('mtu', '?')}, "
               "198.18.0.0/15, multicast routed, bridge multicast snooping off; no CPU pinning.")
    out.append(f"- pubsub-recorder: git {env.get('git', '?')} ({env.get('git_commit', '?')[:12]}, "
               f"{env.get('git_date', '?')}) at run time; {env.get('build_type') or '?'} build "
               f"(`{env.get('bin', '?')}`, binaries built {env.get('bin_built', '?')}).")
    out.append(f"- Cyclone DDS ddsperf: cyclonedds-tools {env.get('ddsperf') or 'not installed'}; "
               f"{env.get('iperf') or 'iperf not installed'}; {env.get('gnuplot') or 'no gnuplot'}.")
    if env.get("disk_mbs"):
        runs = [f"{x:,} MB/s" for x in env["disk_runs_mbs"]]
        out.append(f"- Disk (the recorder's limit for what it must write): `dd if=/dev/zero bs=1M "
                   f"count={env.get('disk_mib')} conv=fdatasync` into the output directory, where the "
                   f"recordings go, {len(runs)} times before the first run: "
                   + ", ".join(runs[:-1]) + (" and " if len(runs) > 1 else "") + runs[-1]
                   + f"; the best, {env['disk_mbs']:,} MB/s, counts.")
    if env.get("store_floor"):
        sizes = sorted(env["store_floor"], key=int)
        out.append("- The least CPU storing a sample can cost (the recorder's floor), `store_floor "
                   f"--seconds {env['store_floor_seconds']:g} --write-mb 256` into the output "
                   "directory before the first run, ns of CPU per sample (CRC-32C / memcpy into "
                   "memory out of the cache / O_DIRECT write): "
                   + "; ".join(f"{s} B {f['crc']:g} / {f['copy']:g} / {f['write']:g}"
                               for s in sizes for f in [env["store_floor"][s]]) + ".")
    dur = env.get("duration_s")
    out.append(f"- Run: {env.get('started', '?')} to {env.get('finished', '?')}"
               + (f" ({dur // 60} min {dur % 60} s)" if dur is not None else "")
               + f", {env.get('runs', '?')} runs of {env.get('exec_s', '?')} s each"
               + (f"; load average (1/5/15 min) {' '.join(env['loadavg_start'])} at the start, "
                  f"{' '.join(env.get('loadavg_end') or ['?'])} at the end (the machine is shared: "
                  "other work shows up as noise)" if env.get("loadavg_start") else "") + ".")
    return out


METHOD = """\
- Hosts: namespace 0 publishes, namespace 1 subscribes, namespace 2 is the third host - a second
  subscriber (a reader that stores nothing) or pubsub-recorder. With two readers on the multicast
  locator the publisher sends each sample once (multicast), as in RTI's Recording Service test.
- pubsub-perftest: the publisher (`-numSubscribers 2`) waits for both readers, writes for `-exec`
  seconds as fast as reliability allows and sends an end marker; the tables show the subscriber's
  CSV row exactly as printed (average over first to last sample). With the recorder, the
  subscriber's rate is the rate the recorder sustains (strict reliability: the publisher cannot
  run ahead of its slowest reader).
- ddsperf: `ddsperf pub size S` (as fast as possible, `-Qminmatch:2`; with the recorder
  `-Qminmatch:1` and the recorder started first) and `ddsperf sub`. "Avg Samples/s" is the median
  of the subscriber's per-second `rate X kS/s` lines without the first second (the publisher
  started within it), the last second with data (it stopped within it) and seconds without data;
  "Total Samples" and "Lost Samples" are its last `total`/`lost`. ddsperf's sizes are whole
  serialized samples (KeyedSeq, 12-byte header); ours are `-datalen` (20-byte header inside).
  ddsperf "unkeyed" is its KeyedSeq topic with one key value (ddsperf has no sized keyless topic);
  its payload bytes are constant (compressible).
- Zero loss with the recorder: `pubsub-replay info --json` after the run must show, for the data
  topic, every sample published (pubsub-perftest: the publisher's count plus its end marker;
  ddsperf: what ddsperf sub received) and 0 lost. Recorder configuration: defaults (LZ4, fsync
  per chunk, 64 MiB queue), recording on the same disk, removed after each run, unless the
  command line's `--recorder-set` says otherwise. In snapshot mode (`--recorder-set
  mode=snapshot`) nothing is written: the count and the loss are the recorder's own for the data
  topic (`pubsub-recorder ctl status --json` once the subscriber has finished), and there is no
  compression figure.
- Raw UDP: `iperf -c 239.255.77.1 -u -b 40G -l SIZE` in namespace 0, `iperf -s -u -B 239.255.77.1`
  (64 KiB reads, 4 MiB socket buffer) in namespaces 1 and 2; the figure is what namespace 1
  received, one datagram per send, no batching: the network's limit at that datagram size, not
  an upper bound for batched small samples.
- Latency: pubsub-perftest `-latencyTest` (one-way = round trip / 2, whole-run percentiles);
  ddsperf ping/pong, whose per-second lines are already one-way (ddsperf records round trip / 2),
  average weighted by count,
  50/90/99% = the count-weighted median of the per-second percentiles (ddsperf prints no
  whole-run percentiles), first second left out.
- Ratios: ours / ddsperf and recorder / no recorder compare "Avg Samples/s"; ours / raw UDP
  compares Mbps at the same size. With repetitions, every figure is the median of the runs
  (lost samples are summed)."""


def build(outdir, md_path, plots_dir, prefix, notes=None):
    rows, env = load(outdir)
    pts = group(rows)
    meta = scen_meta(rows)
    L = []
    L.append("# Three-host performance: pubsub-perftest, pubsub-recorder, ddsperf, raw UDP")
    L.append("")
    L.append("```")
    L.append(env.get("cmdline", "perf/three_node.sh"))
    L.append("```")
    L.append("")
    L += machine_lines(env)
    failed = [r for r in rows if not r.get("ok")]
    L.append(f"- Runs with problems: {len(failed)} of {len(rows)}"
             + ("" if not failed else " - " + "; ".join(
                 f"{r['dir']}: {', '.join(r['problems'])}" for r in failed[:20])))
    L.append("")
    if notes:
        L.append(open(notes).read().rstrip())
        L.append("")
    L.append("## Method")
    L.append("")
    L.append(METHOD)
    L.append("")

    plots = make_plots(outdir, plots_dir, prefix, pts, meta)
    if plots:
        L.append("## Plots")
        L.append("")
        rel = os.path.relpath(plots_dir, os.path.dirname(os.path.abspath(md_path)))
        for name, caption in plots:
            L.append(f"![{caption}]({os.path.join(rel, name) if rel != '.' else name})")
            L.append("")

    rec_section(L, pts, meta, env)

    raw = pts.get("raw_udp_iperf", {})
    thr = [s for s in pts if meta[s]["kind"] == "thr"]
    # The seed's tables first (unkeyed, compressible payload; BE then reliable; batching then
    # none), then keyed and random payloads, then the recorder runs.
    order = lambda s: (meta[s]["third"] == "rec", meta[s]["tool"] != "ours",
                       meta[s]["keying"] != "unkeyed", meta[s].get("payload") == "random",
                       meta[s]["rel"], meta[s].get("batch") == "0")
    if thr:
        L.append("## Throughput (subscriber side, the seed's columns)")
        L.append("")
    for s in sorted(thr, key=order):
        r = meta[s]
        L.append(f"### {title_of(r)}")
        L.append("")
        L.append(f"`{s}.csv`" + (f"; median of {max(p.n for p in pts[s].values())} runs"
                                 if max(p.n for p in pts[s].values()) > 1 else ""))
        L.append("")
        head = ["Sample Size (Bytes)", "Total Samples", "Avg Samples/s", "Avg Mbps", "Lost Samples",
                "Lost Samples (%)"]
        dd = pts.get(ddsperf_counterpart(r), {}) if r["tool"] == "ours" else {}
        base = pts.get(baseline_counterpart(s) or "", {})
        if r["tool"] == "ours" and dd:
            head += ["ddsperf Avg Samples/s", "ours / ddsperf"]
        if r["third"] == "rec":
            head += ["no recorder Avg Samples/s", "recorder / no recorder", "recorded / expected",
                     "recorder lost"]
        if raw:
            head += ["raw UDP Mbps", ("ours" if r["tool"] == "ours" else "ddsperf") + " / raw UDP"]
        body = []
        for size, p in pts[s].items():
            row = [str(size), fmt(p.samples), fmt(p.rate), fmt(p.mbps, 1), fmt(p.lost),
                   fmt(p.lost_pct, 2)]
            if r["tool"] == "ours" and dd:
                q = dd.get(size)
                row += [fmt(q.rate if q else None), fmt(ratio(p.rate, q.rate if q else None), 2)]
            if r["third"] == "rec":
                b = base.get(size)
                row += [fmt(b.rate if b else None), fmt(ratio(p.rate, b.rate if b else None), 2),
                        f"{fmt(p.rec_samples)} / {fmt(p.rec_expected)}", fmt(p.rec_lost)]
            if raw:
                q = raw.get(size)
                row += [fmt(q.mbps if q else None, 1), fmt(ratio(p.mbps, q.mbps if q else None), 2)]
            body.append(row)
        table(L, head, body)

    if raw:
        L.append("## Raw UDP multicast limit (iperf 2)")
        L.append("")
        L.append("`raw_udp_iperf.csv`: what the subscriber host received; sender = datagrams/s sent.")
        L.append("")
        body = []
        for size, p in raw.items():
            sent_rate = p.sent / p.runs[0]["exec"] if p.sent else None
            body.append([str(size), fmt(p.samples), fmt(p.rate), fmt(p.mbps, 1), fmt(p.lost),
                         fmt(p.lost_pct, 2), fmt(sent_rate)])
        table(L, ["Datagram Size (Bytes)", "Total Datagrams", "Avg Datagrams/s", "Avg Mbps",
                  "Lost Datagrams", "Lost Datagrams (%)", "sender Datagrams/s"], body)

    lat = [s for s in pts if meta[s]["kind"] == "lat"]
    if lat:
        L.append("## Latency (one-way = round trip / 2, microseconds)")
        L.append("")
    for s in sorted(lat, key=lambda s: (meta[s]["tool"] != "ours", meta[s]["keying"], meta[s]["rel"])):
        r = meta[s]
        L.append(f"### {title_of(r)}")
        L.append("")
        L.append(f"`{s}.csv`")
        L.append("")
        head = ["Sample Size (Bytes)", "Avg (us)", "Std (us)", "Min (us)", "Max (us)", "50% (us)",
                "90% (us)", "99% (us)", "99.99% (us)", "99.9999% (us)"]
        other = pts.get(f"lat_pub_ddsperf_{r['keying']}_{r['rel']}", {}) if r["tool"] == "ours" else {}
        if other:
            head += ["ddsperf 50%", "ddsperf 90%", "ddsperf 99%", "ours / ddsperf (50%)"]
        body = []
        for size, p in pts[s].items():
            x = p.lat or {}
            row = [str(size)] + [fmt(x.get(k), 1) for k in
                                 ("avg", "std", "min", "max", "p50", "p90", "p99", "p9999",
                                  "p999999")]
            if other:
                q = other.get(size)
                y = (q.lat if q else None) or {}
                row += [fmt(y.get("p50"), 1), fmt(y.get("p90"), 1), fmt(y.get("p99"), 1),
                        fmt(ratio(x.get("p50"), y.get("p50")), 2)]
            body.append(row)
        table(L, head, body)

    with open(md_path, "w") as f:
        f.write("\n".join(L).rstrip() + "\n")


def disk_allows(p, b, env):
    """The recorder / second subscriber ratio the disk allows at a point: the samples per second
    dd's rate stores (at the bytes per sample the recording took) over the second subscriber's
    rate. Below the target the point cannot meet it on this disk."""
    mbs = env.get("disk_mbs")
    if not mbs or not b or not b.rate or not p.rec_disk_per_sample:
        return None
    return mbs * 1e6 / p.rec_disk_per_sample / b.rate


def least_cpu(p, b, size, env):
    """The least the recorder / second subscriber CPU per sample can be at a point: 1 + what
    storing a sample costs at least (store_floor: one copy of the sample, CRC-32C and O_DIRECT
    writing of the bytes the recording took on disk per sample) / the second subscriber's CPU per
    sample. Compression, the index and our own work per record come on top."""
    f = (env.get("store_floor") or {}).get(str(size))
    if not f or not b or not b.third_cpu_per_m or not p.rec_disk_per_sample:
        return None
    ns = f["copy"] + (f["crc"] + f["write"]) * p.rec_disk_per_sample / size
    return 1 + ns / (b.third_cpu_per_m * 1000)


def point_verdict(q, zero_loss, cq):
    """The "target met" cell: the ratio (>= TARGET, zero loss) and, where measured, the CPU per
    sample (<= CPU_TARGET x the second subscriber's)."""
    if not zero_loss:
        return "LOSS"
    if q is None:
        return "no baseline"
    misses = ([f"ratio < {TARGET}"] if q < TARGET else []) + \
        ([f"CPU > {CPU_TARGET}x"] if cq is not None and cq > CPU_TARGET else [])
    return ", ".join(misses) if misses else "yes"


def rec_section(L, pts, meta, env):
    recs = [s for s in pts if meta[s]["kind"] == "thr" and meta[s]["third"] == "rec"]
    if not recs:
        return
    L.append("## Recorder cost: subscriber throughput with pubsub-recorder vs a second subscriber")
    L.append("")
    L.append("The reference test (RTI Recording Service seed): reliable multicast, the subscriber's "
             "rate with pubsub-recorder as the third host against the same run with a non-storing "
             f"third reader. Target: ratio >= {TARGET} at every size with zero loss (subscriber and "
             f"recording), and the recorder's CPU per sample <= {CPU_TARGET}x the second "
             "subscriber's (issue 32).")
    L.append("")
    order = lambda s: (meta[s]["tool"] != "ours", meta[s]["keying"] != "unkeyed",
                       meta[s].get("payload") != "zero", meta[s]["rel"])
    # Summary: one column per (publisher/subscriber, keys, payload), random beside zero.
    cols = sorted(recs, key=order)
    sizes = sorted({size for s in cols for size in pts[s]})
    head = ["Sample (B)"]
    for s in cols:
        r = meta[s]
        who = "ours" if r["tool"] == "ours" else "ddsperf"
        pay = r["payload"] if r["tool"] == "ours" else "constant"
        head.append(f"{who} {r['keying']} {pay}" + ("" if r["rel"] == "rel" else " BE"))
    body = []
    for size in sizes:
        row = [str(size)]
        for s in cols:
            p = pts[s].get(size)
            b = pts.get(baseline_counterpart(s), {}).get(size)
            q = ratio(p.rate, b.rate) if p and b else None
            lossless = p and p.lost == 0 and p.rec_lost == 0 and p.rec_complete
            row.append("-" if q is None else f"{q:.2f}" + ("" if lossless else " (loss)"))
        body.append(row)
    L.append("Recorder / no recorder (subscriber samples/s ratio; \"(loss)\" marks a point where "
             "the subscriber or the recording lost samples):")
    L.append("")
    table(L, head, body)
    body = []
    met = total = cpu_met = cpu_total = disk_bound = 0
    has_disk = bool(env.get("disk_mbs"))
    has_cpu = any(p.cpu.get("third") is not None for s in recs for p in pts[s].values())
    has_threads = any(p.rec_threads for s in recs for p in pts[s].values())
    has_floor = has_cpu and bool(env.get("store_floor"))
    for s in sorted(recs, key=order):
        r = meta[s]
        base = pts.get(baseline_counterpart(s), {})
        for size, p in pts[s].items():
            b = base.get(size)
            q = ratio(p.rate, b.rate if b else None)
            zero_loss = (p.lost == 0 and p.rec_lost == 0 and p.rec_complete
                         and (b is None or b.lost == 0))
            rate_ok = q is not None and q >= TARGET and zero_loss
            total += 1
            met += rate_ok
            allows = disk_allows(p, b, env)
            disk_bound += not rate_ok and allows is not None and allows < TARGET
            who = "pubsub-perftest" if r["tool"] == "ours" else "ddsperf"
            payload = r["payload"] if r["tool"] == "ours" else "constant"
            cq = ratio(p.third_cpu_per_m, b.third_cpu_per_m if b else None)
            if cq is not None:
                cpu_total += 1
                cpu_met += cq <= CPU_TARGET
            verdict = point_verdict(q, zero_loss, cq)
            body.append([str(size), r["keying"], r["rel"], who, payload,
                         fmt(b.rate if b else None), fmt(p.rate), fmt(q, 3),
                         f"{fmt(p.lost)} / {fmt(b.lost if b else None)}",
                         f"{fmt(p.rec_samples)} / {fmt(p.rec_expected)}", fmt(p.rec_lost),
                         fmt(p.rec_bytes / p.rec_kb / 1024 if p.rec_kb and p.rec_bytes else None, 2)]
                        + ([fmt(allows, 2)] if has_disk else [])
                        + ([f"{fmt(p.cpu.get('third'), 1)} / {fmt(b.cpu.get('third') if b else None, 1)}",
                            f"{fmt(p.third_cpu_per_m, 2)} / "
                            f"{fmt(b.third_cpu_per_m if b else None, 2)}",
                            fmt(cq, 2)]
                           + ([fmt(least_cpu(p, b, size, env), 2)] if has_floor else [])
                           + [f"{fmt(p.cpu.get('pub'), 1)} / "
                              f"{fmt(b.cpu.get('pub') if b else None, 1)}"]
                           if has_cpu else [])
                        + ([" / ".join(fmt(p.rec_threads[k], 2) for k in THREAD_GROUPS)
                            if p.rec_threads else "-"] if has_threads else [])
                        + [verdict])
    cpu_head = (["third-host CPU s (recorder / 2nd sub)",
                 "third-host CPU s per million samples (rec / 2nd)", "CPU per sample rec / 2nd"]
                + (["least CPU per sample rec / 2nd (store_floor)"] if has_floor else [])
                + ["publisher CPU s (rec / 2nd)"] if has_cpu else [])
    table(L, ["Sample (B)", "Keys", "Rel.", "Pub/sub", "Payload", "2nd subscriber: sub samples/s",
              "recorder: sub samples/s", "recorder / no recorder", "sub lost (rec / 2nd)",
              "recorded / expected", "recorder lost", "compression"]
          + (["ratio the disk allows"] if has_disk else []) + cpu_head
          + (["recorder CPU s by thread: receive / storage / other"] if has_threads else [])
          + ["target met"],
          body, ["---:", ":--", ":--", ":--", ":--", "---:", "---:", "---:", "---:", "---:", "---:",
                 "---:"] + ["---:"] * (has_disk + len(cpu_head) + has_threads) + [":--"])
    n_rec = sorted({p.n for s in recs for p in pts[s].values()})
    n_base = sorted({b.n for s in recs for size, b in pts.get(baseline_counterpart(s), {}).items()
                     if size in pts[s]})
    runs = lambda ns: "/".join(str(x) for x in ns)
    L.append(f"{met} of {total} points meet the ratio target"
             + (f"; at {disk_bound} of the others the disk allows less than {TARGET}" if has_disk
                else "") + ". "
             + (f"Each recorder figure is the median of {runs(n_rec)} runs, each second-subscriber "
                f"figure of {runs(n_base)} (run back to back with the recorder runs; where a "
                "baseline is also a point of the seed's throughput table, that run counts too). "
                if max(n_rec + n_base) > 1 else "")
             + "Compression = sample bytes / bytes on disk (the recording directory)."
             + (" The ratio the disk allows = dd's rate (above) / the recording's bytes on disk per "
                "sample / the second subscriber's samples/s." if has_disk else "")
             + (" The recorder's CPU by thread, until it is told to stop: the receive threads "
                "(pubsub-recv, pubsub-recv-uc, pubsub-shm), storage's (storage-writer, "
                "storage-sync) and the others (README \"Threads\")." if has_threads else "")
             + (" The least CPU per sample rec / 2nd = 1 + what storing a sample costs at least "
                "(store_floor, above: one copy of the sample, then CRC-32C and writing the bytes "
                "the recording took on disk per sample) / the second subscriber's CPU per sample; "
                "compression, the index and the recorder's own work per record come on top."
                if has_floor else "")
             + (f" CPU per sample: the recorder's CPU-seconds per million samples recorded within "
                f"{CPU_TARGET}x the second subscriber's per million received at {cpu_met} of "
                f"{cpu_total} points." if cpu_total else ""))
    L.append("")


def linespoints(series):
    """gnuplot plot clauses, one line with points per (title, data file)."""
    return ", ".join(f"'{f}' using 1:2 with linespoints lw 1.5 title '{t}'" for t, f in series)


def make_plots(outdir, plots_dir, prefix, pts, meta):
    if not shutil.which("gnuplot"):
        return []
    work = os.path.join(outdir, "plots")
    os.makedirs(work, exist_ok=True)
    os.makedirs(plots_dir, exist_ok=True)
    made = []
    term = 'set terminal pngcairo size 760,480 font "DejaVu Sans,9" noenhanced\n'
    common = ("set logscale x 2\nset grid\nset key below horizontal maxrows 3 width 2\n"
              "set format x '%.0f'\nset xtics (32,128,512,2048,8192,63000)\n"
              "set xrange [24:80000]\n")

    def write_series(name, points):
        p = os.path.join(work, name + ".dat")
        with open(p, "w") as f:
            for x, y in points:
                if y is not None:
                    f.write(f"{x} {y}\n")
        return p

    def run(gp_name, script):
        p = os.path.join(work, gp_name)
        with open(p, "w") as f:
            f.write(script)
        r = subprocess.run(["gnuplot", p], capture_output=True, text=True)
        if r.returncode != 0:
            print(f"report.py: gnuplot {p}: {r.stderr.strip()}", file=sys.stderr)
            return False
        return True

    def short(s):
        r = meta[s]
        t = ("ours" if r["tool"] == "ours" else "ddsperf") + f" {r['rel']} {r['keying']}"
        if r["tool"] == "ours":
            t += " no batch" if r["batch"] == "0" else f" batch {r['batch']}"
            t += " random" if r["payload"] == "random" else ""
        return t

    # 1. Throughput (Mbps) against sample size: the second-subscriber runs of the seed's tables
    #    (unkeyed, compressible payload) and raw UDP; every second-subscriber run if there are none.
    thr = [s for s in sorted(pts) if meta[s]["kind"] == "thr" and meta[s]["third"] == "sub2"]
    seed_like = [s for s in thr if meta[s]["keying"] == "unkeyed"
                 and meta[s]["payload"] in ("zero", "const")]
    series = [(short(s), write_series(s, [(k, p.mbps) for k, p in pts[s].items()]))
              for s in (seed_like or thr)]
    if "raw_udp_iperf" in pts:
        series.append(("raw UDP (iperf 2)", write_series("raw", [(k, p.mbps) for k, p in
                                                                  pts["raw_udp_iperf"].items()])))
    if series:
        png = os.path.join(plots_dir, prefix + "throughput.png")
        plot = linespoints(series)
        if run("throughput.gp", term + f"set output '{png}'\n" + common +
               "set logscale y 10\nset xlabel 'sample size (bytes)'\n"
               "set ylabel 'subscriber throughput (Mbit/s)'\n"
               "set title 'Throughput against sample size (3 hosts: pub, sub, 2nd sub)'\n"
               f"plot {plot}\n"):
            made.append((os.path.basename(png), "Throughput against sample size"))

    # 2. Recorder / no recorder.
    series = []
    for s in sorted(pts, key=lambda s: (meta[s]["tool"] != "ours", s)):
        r = meta[s]
        if r["kind"] == "thr" and r["third"] == "rec":
            base = pts.get(baseline_counterpart(s), {})
            pts_r = [(k, ratio(p.rate, base[k].rate) if k in base else None)
                     for k, p in pts[s].items()]
            series.append((short(s), write_series(s + "_ratio", pts_r)))
    if series:
        png = os.path.join(plots_dir, prefix + "recorder.png")
        plot = linespoints(series)
        if run("recorder.gp", term + f"set output '{png}'\n" + common +
               "set xlabel 'sample size (bytes)'\nset ylabel 'recorder / second subscriber'\n"
               "set yrange [0:*]\n"
               "set title 'Subscriber throughput with the recorder / with a second subscriber'\n"
               f"plot {plot}, {TARGET} with lines dashtype 2 lw 1.5 lc rgb 'red' "
               f"title 'target {TARGET}'\n"):
            made.append((os.path.basename(png), "Recorder cost against sample size"))

    # 3. Latency percentiles: one panel per reliability, ours and ddsperf, 50/90/99%.
    lat = [s for s in sorted(pts) if meta[s]["kind"] == "lat"]
    panels = []
    for rel, name in (("rel", "reliable"), ("be", "best effort")):
        ss = [s for s in lat if meta[s]["rel"] == rel]
        if not ss:
            continue
        plot = []
        for ci, s in enumerate(ss):
            for k, lab, dt in (("p50", "50%", 1), ("p90", "90%", 3), ("p99", "99%", 2)):
                f = write_series(f"{s}_{k}", [(size, p.lat.get(k) if p.lat else None)
                                              for size, p in pts[s].items()])
                t = ("ours" if meta[s]["tool"] == "ours" else "ddsperf") + \
                    ("" if meta[s]["keying"] == "unkeyed" else " keyed") + f" {lab}"
                plot.append(f"'{f}' using 1:2 with linespoints dashtype {dt} lc {ci + 1} "
                            f"title '{t}'")
        panels.append(f"set title 'One-way latency, {name} (ping-pong / 2)'\nplot "
                      + ", ".join(plot) + "\n")
    if panels:
        png = os.path.join(plots_dir, prefix + "latency.png")
        size = "760,480" if len(panels) == 1 else "1000,480"
        if run("latency.gp", term.replace("760,480", size) + f"set output '{png}'\n" + common +
               "set logscale y 10\nset xlabel 'sample size (bytes)'\nset ylabel 'microseconds'\n"
               "set key below horizontal maxrows 2 width 1\n"
               + (f"set multiplot layout 1,{len(panels)}\n" if len(panels) > 1 else "")
               + "".join(panels) + ("unset multiplot\n" if len(panels) > 1 else "")):
            made.append((os.path.basename(png), "Latency percentiles against sample size"))
    return made


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir")
    ap.add_argument("--md")
    ap.add_argument("--plots")
    ap.add_argument("--prefix", default="")
    ap.add_argument("--notes", help="markdown inserted after the machine lines (observations)")
    a = ap.parse_args()
    md = a.md or os.path.join(a.outdir, "report.md")
    build(a.outdir, md, a.plots or a.outdir, a.prefix, a.notes)



if __name__ == "__main__":
    main()
