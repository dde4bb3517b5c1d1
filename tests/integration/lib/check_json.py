#!/usr/bin/env python3
"""Compares pubsub-perftest summaries: check_json.py PUB.json SUB.json [--reliable] [--min N]

Reliable runs must deliver every sample exactly once and in order: the subscriber's count equals
the publisher's, nothing lost or duplicated (in-order delivery: the per-writer sequence advanced
by exactly one each time), and the payload checksums agree. Prints what it compared; exit 1 on
any difference."""
import json
import sys

pub = json.load(open(sys.argv[1]))
sub = json.load(open(sys.argv[2]))
reliable = "--reliable" in sys.argv
minimum = int(sys.argv[sys.argv.index("--min") + 1]) if "--min" in sys.argv else 1
problems = []
print(f"written {pub['written']} received {sub['samples']} lost {sub['lost']} "
      f"duplicates {sub['duplicates']} checksum pub {pub['checksum']} sub {sub['checksum']}")
if not sub["completed"]:
    problems.append("subscriber did not see the end of the run")
if sub["samples"] < minimum:
    problems.append(f"only {sub['samples']} samples (expected at least {minimum})")
if reliable:
    if sub["samples"] != pub["written"]:
        problems.append(f"received {sub['samples']} != written {pub['written']}")
    if sub["lost"] != 0:
        problems.append(f"{sub['lost']} lost")
    if sub["duplicates"] != 0:
        problems.append(f"{sub['duplicates']} duplicates")
    if sub["checksum"] != pub["checksum"]:
        problems.append("payload checksums differ")
    for w in sub["writers"]:
        if w["first_seq"] != 1 or w["last_seq"] != w["end_seq"]:
            problems.append(f"writer {w['guid']} sequence {w['first_seq']}..{w['last_seq']}, end {w['end_seq']}")
for p in problems:
    print("FAIL:", p)
sys.exit(1 if problems else 0)
