#!/usr/bin/env python3
"""perf/soak.sh's report: OUTDIR/soak.md (the figures) and OUTDIR/soak.png (gnuplot, when
installed) from OUTDIR/soak.csv and the recording's `info --json`; with CHECK=1 exits 1 unless the
recorder stayed flat (perf/soak.sh --help says what that means).

usage: soak_report.py OUTDIR INFO_JSON RECORDER_EXIT VERIFY_EXIT MINUTES CHURN_S RETENTION_MB
                      CHECK COMMIT
"""
import csv
import json
import os
import shutil
import subprocess
import sys

RELIABLE = ("Small", "Large", "Keyed", "Cyclone", "Churn")


def load(outdir):
    with open(os.path.join(outdir, "soak.csv")) as f:
        rows = [r for r in csv.DictReader(f) if r["rss_kb"]]
    for r in rows:
        for k, v in r.items():
            r[k] = int(v) if v not in ("", None) else None
    return rows


def plot(outdir, rows):
    if not shutil.which("gnuplot") or len(rows) < 2:
        return False
    data = os.path.join(outdir, "soak.dat")
    with open(data, "w") as f:
        for r in rows:
            f.write(f"{r['t_s'] / 60:.3f} {r['rss_kb'] / 1024:.2f} {r['fds']} {r['threads']} "
                    f"{r['index_bytes'] / 1048576:.2f}\n")
    png = os.path.join(outdir, "soak.png")
    script = f"""set terminal pngcairo size 760,480 font "DejaVu Sans,9" noenhanced
set output '{png}'
set xlabel 'minutes'
set ylabel 'MB'
set y2label 'count'
set ytics nomirror
set y2tics
set yrange [0:*]
set y2range [0:*]
set key top left
set grid
plot '{data}' using 1:2 with lines lw 2 title 'recorder RSS (MB)', \\
     '{data}' using 1:5 with lines title 'index size (MB)', \\
     '{data}' using 1:3 axes x1y2 with lines title 'open fds', \\
     '{data}' using 1:4 axes x1y2 with lines title 'threads'
"""
    r = subprocess.run(["gnuplot"], input=script, capture_output=True, text=True)
    os.remove(data)
    if r.returncode != 0:
        print(f"soak_report.py: gnuplot: {r.stderr.strip()}", file=sys.stderr)
    return r.returncode == 0


def main():
    outdir, info_path, rec_rc, verify_rc, minutes, churn, retention_mb, check, commit = sys.argv[1:10]
    rows = load(outdir)
    try:
        info = json.load(open(info_path))
    except (OSError, ValueError):
        info = {}
    if len(rows) < 4:
        print("soak: FAIL: fewer than 4 samples taken")
        return 1
    # The first quarter of the run (at most 10 minutes) is warm-up: queues, caches and the
    # retention window fill.
    warm_s = min(rows[-1]["t_s"] / 4, 600)
    after = [r for r in rows if r["t_s"] >= warm_s]
    base = after[0]
    rss_growth_mb = (max(r["rss_kb"] for r in after) - base["rss_kb"]) / 1024
    fds = (min(r["fds"] for r in after), max(r["fds"] for r in after))
    threads = (min(r["threads"] for r in after), max(r["threads"] for r in after))
    topics = {t["name"]: t for t in info.get("topics", [])}
    reliable_lost = sum(topics[t]["lost"] for t in RELIABLE if t in topics)
    last = rows[-1]
    span_s = last["t_s"] - rows[0]["t_s"]
    rate = (last["samples"] - rows[0]["samples"]) / span_s if span_s and last["samples"] else 0
    lines = [
        f"# Soak: {minutes} minutes of mixed traffic into one recorder",
        "",
        f"`perf/soak.sh --minutes {minutes} --churn-s {churn} --retention-mb {retention_mb}` at "
        f"commit {commit}; a writer process came and went every {churn} s, segments rolled every "
        f"{churn} s, retention kept {retention_mb} MB. Sampled every "
        f"{rows[1]['t_s'] - rows[0]['t_s']} s ({len(rows)} samples); warm-up: the first "
        f"{warm_s:.0f} s.",
        "",
        "| | after warm-up | at the end | range after warm-up |",
        "|---|---|---|---|",
        f"| recorder RSS | {base['rss_kb'] / 1024:.1f} MB | {last['rss_kb'] / 1024:.1f} MB | "
        f"+{rss_growth_mb:.1f} MB at most |",
        f"| open file descriptors | {base['fds']} | {last['fds']} | {fds[0]}..{fds[1]} |",
        f"| threads | {base['threads']} | {last['threads']} | {threads[0]}..{threads[1]} |",
        f"| index (index.sqlite3 + -wal) | {base['index_bytes'] / 1048576:.1f} MB | "
        f"{last['index_bytes'] / 1048576:.1f} MB | |",
        f"| segments kept (oldest kept) | {base['segments']} (#{base['oldest_segment']}) | "
        f"{last['segments']} (#{last['oldest_segment']}) | |",
        "",
        f"Samples recorded: {last['samples']} ({rate:.0f}/s); lost: {last['lost']} in all, "
        f"{reliable_lost} of reliable writers (the rest: the best-effort writer's). Recorder exit "
        f"{rec_rc}, `pubsub-replay verify` exit {verify_rc}.",
    ]
    if plot(outdir, rows):
        lines += ["", "![RSS, index size, fds and threads over time](soak.png)"]
    text = "\n".join(lines) + "\n"
    open(os.path.join(outdir, "soak.md"), "w").write(text)
    print(text)
    if check != "1":
        return 0
    problems = []
    if rss_growth_mb >= 16:
        problems.append(f"RSS grew {rss_growth_mb:.1f} MB after warm-up")
    if fds[1] > base["fds"] + 2:
        problems.append(f"open fds grew from {base['fds']} to {fds[1]}")
    if threads[1] > base["threads"]:
        problems.append(f"threads grew from {base['threads']} to {threads[1]}")
    if reliable_lost:
        problems.append(f"{reliable_lost} samples of reliable writers lost")
    if rec_rc != "0" or verify_rc != "0":
        problems.append(f"recorder exit {rec_rc}, verify exit {verify_rc}")
    # The newest segment's number: retention may leave only the open segment, so the count kept
    # says nothing about rolling (a 4-MB retention keeps one segment as soon as two exceed it).
    if last["oldest_segment"] + last["segments"] - 1 < 2:
        problems.append("segments did not roll")
    if last["oldest_segment"] < 2:
        problems.append("retention removed no segment")
    for p in problems:
        print("soak: FAIL:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
