#!/usr/bin/env bash
# Runs the storage benchmark matrix and dd on the same disk in the same session, REPS times each
# (interleaved), and prints a markdown table of medians.
# Usage: perf/storage_bench/run.sh [BENCH_BINARY] [DIRECTORY_ON_THE_DISK_UNDER_TEST]
#   defaults: build-release/bin/storage_bench, the current directory; REPS=3 from the environment.
# The benchmark writes into a new directory it makes inside the given one (mktemp) and removes
# only that: nothing that was there before is touched.
set -euo pipefail
BENCH=${1:-build-release/bin/storage_bench}
PARENT=${2:-.}
REPS=${REPS:-3}
[ -d "$PARENT" ] || { echo "run.sh: $PARENT is not a directory" >&2; exit 2; }
OUT=$(mktemp)
DIR=""
trap 'rm -f "$OUT"; [ -n "$DIR" ] && rm -rf "$DIR"' EXIT
DIR=$(mktemp -d -p "$PARENT" storage-bench.XXXXXX)

dd_rate() {  # prints MB/s of a 2 GiB dd into DIR (extra dd flags in $@), then deletes the file
  local line
  sync
  line=$(dd if=/dev/zero of="$DIR/dd.bin" bs=1M count=2048 "$@" 2>&1 | tail -1)
  rm -f "$DIR/dd.bin"
  echo "$line" | awk '{ for (i = 1; i <= NF; ++i) if ($i == "s,") t = $(i-1); print $1 / t / 1e6 }'
}

run() {  # size payload fsync count [extra]
  sync
  "$BENCH" --dir "$DIR/rec" --size "$1" --payload "$2" --fsync "$3" --count "$4" "${@:5}" |
    grep '^result' >> "$OUT"
}

for rep in $(seq "$REPS"); do
  echo "dd fdatasync $(dd_rate conv=fdatasync)" >> "$OUT"
  echo "dd cached $(dd_rate)" >> "$OUT"
  run 32 zeros none 20M --read
  run 32 random none 20M --read
  run 1K zeros none 2M --read
  run 1K random none 2M --read
  run 64K zeros none 32K --read
  run 64K random none 32K --read
  run 64K random chunk 32K
  run 1K random chunk 2M
  echo "dd fdatasync $(dd_rate conv=fdatasync)" >> "$OUT"
done

python3 - "$OUT" <<'PY'
import statistics, sys
rows = {}
dd = {}
for line in open(sys.argv[1]):
    f = line.split()
    if f[0] == "dd":
        dd.setdefault(f[1], []).append(float(f[2]))
        continue
    _, phase, size, payload, fsync, count, secs, mrec, mbs, filemb = f
    rows.setdefault((phase, int(size), payload, fsync), []).append((float(mrec), float(mbs), float(filemb)))
med = lambda xs: statistics.median(xs)
print("| phase | record size | payload | fsync | M records/s median (min-max) | MB/s payload median (min-max) | file MB | runs |")
print("|---|---|---|---|---|---|---|---|")
for (phase, size, payload, fsync), v in sorted(rows.items(), key=lambda kv: (kv[0][3] != "none", kv[0][1], kv[0][2], kv[0][0] != "ingest")):
    r = [x[0] for x in v]
    m = [x[1] for x in v]
    fm = f"{med([x[2] for x in v]):.0f}" if phase == "ingest" else ""
    print(f"| {phase} | {size} B | {payload} | {fsync} | {med(r):.2f} ({min(r):.2f}-{max(r):.2f}) | "
          f"{med(m):.0f} ({min(m):.0f}-{max(m):.0f}) | {fm} | {len(v)} |")
for k, v in dd.items():
    print(f"| dd {k} (2 GiB, bs=1M) | | zeros | {'conv=fdatasync' if k == 'fdatasync' else 'none'} | | "
          f"{med(v):.0f} ({min(v):.0f}-{max(v):.0f}) | | {len(v)} |")
PY
