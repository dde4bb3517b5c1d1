#!/usr/bin/env python3
"""README.md is written for people (issue 31, item 10); this keeps it that way.

Checks, without network traffic and without recording anything:
  1. the top-level sections, in this order: what it is, install, record your own system in
     three commands, look at it, replay, run as a service, troubleshooting (with nothing
     recorded, discovery, interfaces, multicast, firewall), reliability, recording a system of
     many hosts, performance, reference;
  2. every relative link points to a file or directory inside the repository, and every
     #fragment to a heading of the file it names (GitHub's anchors);
  3. the configuration table is not duplicated: it lives in config/README.md (checked against
     the parser by tests/unit/config/readme_test.cpp), the README links to it and has no row of
     its own for a configuration key;
  4. the flag table of "pubsub-recorder command line" names, for every flag that `--help` says
     sets a configuration key, that same key;
  5. every `pubsub-recorder` command line in a ```sh block parses: run with --check-config
     (which creates nothing) in a scratch directory, its recording directory replaced by a
     scratch one, its interface by 127.0.0.1, a configuration file that is not in the
     repository by config/examples/recorder.json, an IDL file that is not there by a stub, a
     metrics address by 127.0.0.1:0; `ctl` lines against a scratch directory where no recorder
     runs (they must get as far as "no recorder is running"). `ctl --dds` lines are not run:
     they would send DDS traffic.

Usage: readme_check.py --repo DIR --recorder PATH   (exit 0 all good, 1 a check failed)
"""
import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile

SECTIONS = [
    "What it is",
    "Install",
    "Record your own system in three commands",
    "Look at it: info, types, Foxglove",
    "Replay",
    "Run as a service",
    "Troubleshooting",
    "Reliability: hostile and faulty networks",
    "Recording a system of many hosts",
    "Performance",
    "Reference",
]
TROUBLESHOOTING = ["Nothing recorded", "Discovery", "Interfaces", "Multicast", "Firewall"]

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg)


def headings(text):
    """(level, title) of the ATX headings outside fenced code blocks."""
    out, fence = [], None
    for line in text.split("\n"):
        m = re.match(r"^(```+|~~~+)", line)
        if m:
            if fence is None:
                fence = m.group(1)
            elif line.startswith(fence):
                fence = None
            continue
        if fence is None:
            h = re.match(r"^(#{1,6}) +(.*?) *#*$", line)
            if h:
                out.append((len(h.group(1)), h.group(2)))
    return out


def slug(title):
    """GitHub's heading anchor: lower case, punctuation but - and _ dropped, spaces to -."""
    s = re.sub(r"`", "", title).strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def anchors(text):
    seen, out = {}, set()
    for _, title in headings(text):
        base = slug(title)
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else "%s-%d" % (base, n))
    return out


def prose(text):
    """The text outside fenced code blocks and inline code spans."""
    lines, fence = [], None
    for line in text.split("\n"):
        m = re.match(r"^\s*(```+|~~~+)", line)
        if m:
            fence = None if fence else m.group(1)
            continue
        if fence is None:
            lines.append(re.sub(r"`[^`]*`", "", line))
    return "\n".join(lines)


def sh_blocks(text):
    """Lines of the ```sh blocks."""
    out, in_sh, fence = [], False, False
    for line in text.split("\n"):
        m = re.match(r"^\s*```(\w*)", line)
        if m:
            if not fence:
                fence, in_sh = True, m.group(1) in ("sh", "bash", "shell", "console")
            else:
                fence, in_sh = False, False
            continue
        if in_sh:
            out.append(line)
    return out


def check_structure(text):
    top = [t for level, t in headings(text) if level == 2]
    if top != SECTIONS:
        fail("top-level sections are %s, expected %s" % (top, SECTIONS))
    level1 = [t for level, t in headings(text) if level == 1]
    if len(level1) != 1:
        fail("expected one title (# ...), found %s" % level1)
    # The subsections of Troubleshooting.
    sub, inside = [], False
    for level, title in headings(text):
        if level == 2:
            inside = title == "Troubleshooting"
        elif level == 3 and inside:
            sub.append(title)
    pos = -1
    for want in TROUBLESHOOTING:
        found = [i for i, t in enumerate(sub) if want.lower() in t.lower()]
        if not found or found[0] < pos:
            fail("Troubleshooting has no subsection '%s' after the previous ones (has %s)" % (want, sub))
        else:
            pos = found[0]
    # The "What it is" section has one picture.
    m = re.search(r"^## What it is\n(.*?)^## ", text, re.S | re.M)
    if not m or "```text" not in m.group(1) or "pubsub-recorder" not in m.group(1):
        fail("'What it is' has no ```text picture")


def check_links(repo, path, text):
    path = os.path.realpath(path)
    base = os.path.dirname(path)
    own = anchors(text)
    n = 0
    for target in re.findall(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)", prose(text)):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):
            continue  # http:, https:, mailto:
        n += 1
        file_part, _, frag = target.partition("#")
        if not file_part:
            if frag not in own:
                fail("%s: link #%s: no such heading" % (os.path.relpath(path, repo), frag))
            continue
        dest = os.path.normpath(os.path.join(base, file_part))
        if os.path.commonpath([dest, repo]) != repo:
            fail("%s: link %s leaves the repository" % (os.path.relpath(path, repo), target))
            continue
        if not os.path.exists(dest):
            fail("%s: link %s: no such file" % (os.path.relpath(path, repo), target))
            continue
        if frag and dest.endswith(".md"):
            with open(dest, encoding="utf-8") as f:
                if frag not in anchors(f.read()):
                    fail("%s: link %s: no heading #%s in %s" % (os.path.relpath(path, repo), target, frag, file_part))
    return n


def config_keys(repo):
    row = re.compile(r"^\| `([a-z_.]+)` \|[^|]*\|[^|]*\| ([^|]*) \|")
    with open(os.path.join(repo, "config", "README.md"), encoding="utf-8") as f:
        return {m.group(1) for m in map(row.match, f.read().split("\n")) if m}


def check_config_table(repo, text):
    keys = config_keys(repo)
    if len(keys) < 30:
        fail("config/README.md's key table has only %d keys" % len(keys))
    for line in text.split("\n"):
        m = re.match(r"^\| `([a-z_.]+)` \|", line)
        if m and m.group(1) in keys:
            fail("README has a configuration table row of its own for %s (the table is config/README.md)" % m.group(1))
    if "](config/README.md" not in text:
        fail("README does not link to config/README.md")


def help_flags(recorder, keys):
    """Flag (long name, or TOPIC) -> the configuration key `--help` names for it."""
    out = subprocess.run([recorder, "--help"], capture_output=True, text=True, timeout=30).stdout
    entries, cur = [], None
    for line in out.split("\n"):
        if re.match(r"^  (-|[A-Z])", line):
            cur = [line]
            entries.append(cur)
        elif cur is not None and re.match(r"^ {4,}\S", line):
            cur.append(line)
        else:
            cur = None
    flags = {}
    for e in entries:
        option, _, help_text = e[0].strip().partition("  ")
        help_text = " ".join([help_text.strip()] + [x.strip() for x in e[1:]])
        names = re.findall(r"--[a-z][a-z-]*", option)
        name = "TOPIC" if option.startswith("TOPIC") else (names[-1] if names else None)
        # "(domain; default 0)", "(peers)", "(storage.path, taken as it is; ...)"
        m = re.search(r"\(([a-z_]+(?:\.[a-z_]+)*)([;),])", help_text)
        if not name or not m or m.group(1) not in keys:
            continue
        if m.group(2) == "," and "." not in m.group(1):
            continue  # "(interface, ports, paths, ...)": a list, not a key
        flags[name] = m.group(1)
    return flags


def check_flag_table(repo, text, recorder):
    flags = help_flags(recorder, config_keys(repo))
    if len(flags) < 10:
        fail("--help names keys for only %d flags: %s" % (len(flags), flags))
    rows = [l for l in text.split("\n") if l.startswith("| `")]
    for flag, key in flags.items():
        cell = "`%s" % flag if flag != "TOPIC" else "`TOPIC`"
        hit = [r for r in rows if re.search(re.escape(cell) + r"[ `]", r)]
        if not hit:
            fail("the flag table has no row for %s (%s)" % (flag, key))
        elif not any("| `%s` |" % key in r for r in hit):
            fail("the flag table's row for %s does not name %s: %s" % (flag, key, hit[0]))


def command_lines(text):
    for line in sh_blocks(text):
        s = line.strip()
        if s.startswith("$ "):
            s = s[2:]
        if not s.startswith("pubsub-recorder ") and s != "pubsub-recorder":
            continue
        try:
            words = shlex.split(s, comments=True)
        except ValueError as e:
            yield line, None, str(e)
            continue
        cut = [i for i, w in enumerate(words) if w in ("|", "||", "&&", ";", ">", "2>", ">>")]
        yield line, words[1 : cut[0] if cut else len(words)], None


VALUED = {"-o", "--output", "--path", "-c", "--config", "-i", "--interface", "--idl", "--metrics", "--socket"}


def rewrite(args, repo, scratch, n, ctl):
    """The arguments with every path and address replaced as the module doc says."""
    out, i, has = [], 0, set()
    while i < len(args):
        a, value = args[i], None
        if "=" in a and a.split("=", 1)[0] in VALUED:
            a, value = a.split("=", 1)
        elif a in VALUED and i + 1 < len(args):
            value = args[i + 1]
            i += 1
        i += 1
        if value is None:
            out.append(a)
            continue
        has.add(a)
        if a in ("-o", "--output", "--path"):
            value = os.path.join(scratch, "rec%d" % n)
        elif a in ("-c", "--config"):
            local = os.path.join(repo, value)
            if ctl:
                value = os.path.join(scratch, "ctl.json")
            elif not (os.path.isfile(local) and os.path.commonpath([os.path.abspath(local), repo]) == repo):
                value = os.path.join(repo, "config", "examples", "recorder.json")
            else:
                value = local
        elif a in ("-i", "--interface"):
            value = "127.0.0.1"
        elif a == "--idl":
            local = os.path.join(repo, value)
            value = local if os.path.isfile(local) else os.path.join(scratch, "stub.idl")
        elif a == "--metrics":
            value = "127.0.0.1:0"
        elif a == "--socket":
            value = os.path.join(scratch, "none", "control.sock")
        out += [a, value]
    return out, has


def check_commands(text, repo, recorder):
    checked = skipped = 0
    with tempfile.TemporaryDirectory(prefix="readme-check-") as scratch:
        with open(os.path.join(scratch, "stub.idl"), "w") as f:
            f.write("module readme { struct Stub { long x; }; };\n")
        with open(os.path.join(scratch, "ctl.json"), "w") as f:
            f.write('{"storage": {"path": "%s"}}\n' % os.path.join(scratch, "none"))
        for n, (line, args, err) in enumerate(command_lines(text)):
            if err:
                fail("README command line does not split as sh: %s (%s)" % (line.strip(), err))
                continue
            ctl = bool(args) and args[0] == "ctl"
            if ctl and "--dds" in args:
                skipped += 1
                print("not run (would send DDS traffic): " + line.strip())
                continue
            cmd, has = rewrite(args, repo, scratch, n, ctl)
            if ctl:
                if not has & {"--path", "--socket", "--config"}:
                    fail("ctl line names no recorder: " + line.strip())
                    continue
                expect = "no recorder is running on"
            elif "--version" in cmd or "--help" in cmd or "-h" in cmd:
                expect = None
            else:
                if not has & {"-o", "--output", "--path"}:
                    cmd += ["-o", os.path.join(scratch, "rec%d" % n)]
                if not has & {"-i", "--interface"}:
                    cmd += ["-i", "127.0.0.1"]
                if "--check-config" not in cmd:
                    cmd.append("--check-config")
                expect = "configuration OK"
            r = subprocess.run([recorder] + cmd, cwd=scratch, capture_output=True, text=True, timeout=30)
            checked += 1
            ok = (r.returncode == 0 and (expect is None or expect in r.stdout)) if not ctl else (
                r.returncode == 2 and expect in r.stderr)
            if not ok:
                fail("README command line does not parse: %s\n  ran: pubsub-recorder %s\n  exit %d: %s" %
                     (line.strip(), " ".join(shlex.quote(c) for c in cmd), r.returncode,
                      (r.stderr + r.stdout).strip()))
            leftovers = [e for e in os.listdir(scratch) if e not in ("stub.idl", "ctl.json")]
            if leftovers:
                fail("--check-config created %s for: %s" % (leftovers, line.strip()))
    print("%d pubsub-recorder command lines checked, %d not run" % (checked, skipped))
    if checked < 8:
        fail("only %d pubsub-recorder command lines in ```sh blocks" % checked)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", required=True)
    ap.add_argument("--recorder")
    ap.add_argument("--readme", help="default: REPO/README.md")
    ap.add_argument("--links-only", nargs="+", metavar="FILE",
                    help="only check 2. (links) in these Markdown files, relative to REPO")
    a = ap.parse_args()
    repo = os.path.realpath(a.repo)
    if a.links_only:
        n = 0
        for name in a.links_only:
            path = os.path.join(repo, name)
            with open(path, encoding="utf-8") as f:
                n += check_links(repo, path, f.read())
        if failures:
            print("%d problem(s)" % len(failures))
            return 1
        print("%d relative links checked in %d files: every one names a file and heading that exist"
              % (n, len(a.links_only)))
        return 0
    if not a.recorder:
        ap.error("--recorder is required (unless --links-only)")
    repo = os.path.realpath(a.repo)
    readme = a.readme or os.path.join(repo, "README.md")
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    check_structure(text)
    n = check_links(repo, readme, text)
    print("%d relative links checked" % n)
    check_config_table(repo, text)
    check_flag_table(repo, text, a.recorder)
    check_commands(text, repo, a.recorder)
    if failures:
        print("%d problem(s) in %s" % (len(failures), readme))
        return 1
    print("README.md: structure, links, configuration table and command lines OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
