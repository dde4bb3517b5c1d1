#!/usr/bin/env python3
"""One pubsub-recorder run under systemd's notification protocol, without systemd: the recorder
gets NOTIFY_SOCKET (a Unix datagram socket of ours, receiving the sender's credentials as systemd
does for NotifyAccess=main), WATCHDOG_USEC and WATCHDOG_PID; SIGTERM goes to it SECONDS after its
READY=1. Checks what systemd would see (sd_notify.sh runs this):
- READY=1 first and once; STOPPING=1 last and once, after the SIGTERM; exit 0;
- nothing but READY=1, STATUS=..., WATCHDOG=1 and STOPPING=1; at least 3 STATUS= lines, each a
  statistics line ("samples/s");
- every datagram from the recorder's own pid (the pid systemd would know as MAINPID);
- --watchdog-pid self: WATCHDOG=1 within half the watchdog interval of READY=1, then never less
  than half an interval apart (rate-limited) and never a whole interval apart (systemd would
  have killed the recorder), until STOPPING=1;
- --watchdog-pid N (another process): no WATCHDOG=1 at all.
Exit 0 when all hold, 1 with a FAIL line per problem.

  sd_notify.py --ns NETNS --recorder BIN --config FILE --dir DIR --watchdog-pid self|N --seconds S
"""
import argparse
import os
import signal
import socket
import struct
import subprocess
import sys
import time

WATCHDOG_USEC = 2_000_000


def run(args):
    """Runs the recorder; returns its exit status, pid, the messages (time, sender pid, text) and
    the times of READY=1 and of the SIGTERM."""
    sock_path = os.path.join(args.dir, "notify.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(sock_path)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
    sock.settimeout(0.05)
    env = dict(os.environ, NOTIFY_SOCKET=sock_path, WATCHDOG_USEC=str(WATCHDOG_USEC))
    env.pop("WATCHDOG_PID", None)
    # ip netns exec and sh both exec in place: the pid Popen returns is the recorder's. sh sets
    # WATCHDOG_PID to it ($$), as systemd sets it to the main process's.
    pid = "$$" if args.watchdog_pid == "self" else args.watchdog_pid
    cmd = ["ip", "netns", "exec", args.ns, "sh", "-c", 'WATCHDOG_PID=%s exec "$@"' % pid, "sh",
           args.recorder, "--config", args.config]
    with open(os.path.join(args.dir, "recorder-%s.log" % args.watchdog_pid), "w") as log:
        proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
    messages = []
    ready_at = term_at = None
    give_up = time.monotonic() + 60
    creds = struct.calcsize("3i")
    while True:
        now = time.monotonic()
        if term_at is None and ready_at is not None and now >= ready_at + args.seconds:
            proc.send_signal(signal.SIGTERM)
            term_at = now
        if now > give_up:
            proc.kill()
            print("FAIL: the recorder did not end within 60 s (killed)")
            break
        exited = proc.poll() is not None
        try:
            data, ancillary, _, _ = sock.recvmsg(4096, socket.CMSG_SPACE(creds))
        except socket.timeout:
            if exited:  # and everything it sent has been read
                break
            continue
        sender = None
        for level, kind, cdata in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
                sender = struct.unpack("3i", cdata[:creds])[0]
        text = data.decode(errors="replace")
        messages.append((time.monotonic(), sender, text))
        if text == "READY=1" and ready_at is None:
            ready_at = messages[-1][0]
    status = proc.wait()
    sock.close()
    os.unlink(sock_path)
    return status, proc.pid, messages, ready_at, term_at


def check(args, status, pid, messages, ready_at, term_at):
    bad = []
    texts = [m[2] for m in messages]
    if status != 0:
        bad.append("recorder exit %d, expected 0" % status)
    if not texts or texts[0] != "READY=1" or texts.count("READY=1") != 1:
        bad.append("READY=1 is not the first message, once")
    if term_at is None:
        bad.append("no SIGTERM sent (no READY=1)")
    if not texts or texts[-1] != "STOPPING=1" or texts.count("STOPPING=1") != 1:
        bad.append("STOPPING=1 is not the last message, once")
    elif term_at is not None and messages[-1][0] < term_at:
        bad.append("STOPPING=1 before the SIGTERM")
    known = ("READY=1", "WATCHDOG=1", "STOPPING=1")
    for t in texts:
        if t not in known and not t.startswith("STATUS="):
            bad.append("unexpected message %r" % t)
    statuses = [t for t in texts if t.startswith("STATUS=")]
    if len(statuses) < 3:
        bad.append("%d STATUS= messages, expected at least 3" % len(statuses))
    for t in statuses:
        if "samples/s" not in t:
            bad.append("STATUS= is not a statistics line: %r" % t)
    senders = sorted({m[1] for m in messages}, key=str)
    if senders != [pid]:
        bad.append("messages from pids %s, expected only the recorder's %d" % (senders, pid))

    watchdogs = [m[0] for m in messages if m[2] == "WATCHDOG=1"]
    period = WATCHDOG_USEC / 2e6
    if args.watchdog_pid == "self" and ready_at is not None and texts[-1:] == ["STOPPING=1"]:
        stopping_at = messages[-1][0]
        times = [ready_at] + watchdogs
        gaps = [b - a for a, b in zip(times[1:], times[2:])]
        print("WATCHDOG=1 x%d in %.2f s; first %.3f s after READY=1; gaps %s" %
              (len(watchdogs), stopping_at - ready_at,
               watchdogs[0] - ready_at if watchdogs else -1,
               " ".join("%.3f" % g for g in gaps)))
        if len(watchdogs) < 2:
            bad.append("%d WATCHDOG=1 messages" % len(watchdogs))
        else:
            if watchdogs[0] - ready_at > period:
                bad.append("first WATCHDOG=1 %.3f s after READY=1" % (watchdogs[0] - ready_at))
            if min(gaps, default=period) < 0.95 * period:
                bad.append("WATCHDOG=1 %.3f s apart, not rate-limited to %.1f s" %
                           (min(gaps), period))
            longest = max(gaps + [stopping_at - watchdogs[-1]])
            if longest >= 2 * period:
                bad.append("%.3f s without WATCHDOG=1: systemd would have killed the recorder" %
                           longest)
    elif watchdogs:
        bad.append("%d WATCHDOG=1 messages with WATCHDOG_PID=%s (another process)" %
                   (len(watchdogs), args.watchdog_pid))
    print("watchdog pid %s: exit %d, %d messages: %s" %
          (args.watchdog_pid, status, len(texts),
           ", ".join("%s x%d" % (k, sum(1 for t in texts if t.split("=")[0] == k))
                     for k in ("READY", "STATUS", "WATCHDOG", "STOPPING"))))
    if statuses:
        print("first status: %s" % statuses[0])
    for b in bad:
        print("FAIL:", b)
    return not bad


def main():
    p = argparse.ArgumentParser()
    for a in ("--ns", "--recorder", "--config", "--dir", "--watchdog-pid"):
        p.add_argument(a, required=True)
    p.add_argument("--seconds", type=float, required=True)
    args = p.parse_args()
    return 0 if check(args, *run(args)) else 1


if __name__ == "__main__":
    sys.exit(main())
