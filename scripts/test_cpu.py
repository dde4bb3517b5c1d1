#!/usr/bin/env python3
"""CPU use of ctest tests, one at a time: wall seconds, CPU seconds (user + system of every
process the test ran and waited for) and their ratio, the figures behind the light/heavy split in
tests/integration/scheduling.cmake.

Usage: scripts/test_cpu.py BUILD_DIR [ctest selection arguments, e.g. -L netns]
Prints one tab-separated line per test: wall, cpu, cpu/wall, exit status, name. Run it on an
otherwise idle machine, as root for the namespace tests. A test that uses under 0.45 of a core
alone may share the machine (one slot, PUBSUB_SLOTS_LIGHT); one that uses more runs alone
(PUBSUB_SLOTS_MACHINE, cmake/test_slots.cmake).
"""
import json
import os
import resource
import subprocess
import sys
import time


def tests(build_dir, selection):
    listed = subprocess.run(["ctest", "--show-only=json-v1", *selection], cwd=build_dir,
                            check=True, capture_output=True, text=True).stdout
    return json.loads(listed)["tests"]


def run(test):
    props = {p["name"]: p["value"] for p in test.get("properties", [])}
    env = dict(os.environ)
    for kv in props.get("ENVIRONMENT", []):
        key, value = kv.split("=", 1)
        env[key] = value
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    try:
        status = subprocess.run(test["command"], env=env, cwd=props.get("WORKING_DIRECTORY"),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                timeout=props.get("TIMEOUT", 1500)).returncode
    except subprocess.TimeoutExpired:
        status = "timeout"
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, status


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for test in tests(sys.argv[1], sys.argv[2:]):
        if "command" not in test:
            continue  # a placeholder of a target that is not built
        wall, cpu, status = run(test)
        print(f"{wall:.1f}\t{cpu:.1f}\t{cpu / wall:.2f}\t{status}\t{test['name']}", flush=True)


if __name__ == "__main__":
    main()
