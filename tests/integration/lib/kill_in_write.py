#!/usr/bin/env python3
"""Send SIGKILL to PID while one of its threads is inside a write to a file under DIR.

Polls /proc/PID/task/*/syscall (root, x86_64) until a thread is in write, pwrite64, writev,
pwritev or pwritev2 on a file descriptor whose target lies under DIR, then kills PID at once: a
page-cache write of a large chunk takes about a millisecond, the poll and the kill microseconds,
so the kill lands inside it (the kernel stops copying at the next page and the file keeps a torn
chunk). After TIMEOUT seconds without such a moment it kills anyway.
Prints "in-write" or "timeout" (which kind of kill it was); exit 0, or 1 if PID was gone.
Usage: kill_in_write.py PID DIR [TIMEOUT_S]
"""
import os
import signal
import sys
import time

WRITE_SYSCALLS = {1, 18, 20, 296, 328}  # x86_64: write pwrite64 writev pwritev pwritev2


def writing_under(pid, tid, prefix):
    try:
        with open(f"/proc/{pid}/task/{tid}/syscall") as f:
            fields = f.read().split()
    except OSError:
        return False
    if not fields or not fields[0].isdigit() or int(fields[0]) not in WRITE_SYSCALLS:
        return False
    try:
        return os.readlink(f"/proc/{pid}/fd/{int(fields[1], 16)}").startswith(prefix)
    except (OSError, IndexError, ValueError):
        return False


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    pid, prefix = int(sys.argv[1]), os.path.realpath(sys.argv[2]) + "/"
    deadline = time.monotonic() + (float(sys.argv[3]) if len(sys.argv) == 4 else 5.0)
    kind = "timeout"
    while time.monotonic() < deadline:
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            sys.exit(1)
        if any(writing_under(pid, t, prefix) for t in tids):
            kind = "in-write"
            break
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        sys.exit(1)
    print(kind)


if __name__ == "__main__":
    main()
