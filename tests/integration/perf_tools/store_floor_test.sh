#!/usr/bin/env bash
# store_floor (perf/store_floor): bad command lines exit 2 with one line on stderr and nothing on
# stdout; a directory that cannot take the file exits 1; a short run prints the header and one
# line per size, whose CRC and write figures (per byte times the size) scale with the size, and
# leaves nothing in the directory it wrote into.
# Usage: store_floor_test.sh PATH_TO_store_floor
set -u
SF=$1
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

for args in "--sizes 0" "--sizes 32,x" "--sizes 20000000" "--write-mb 5" "--write-mb -4" \
            "--seconds 0" "--seconds abc" "--bogus 1" "--sizes"; do
  # shellcheck disable=SC2086
  "$SF" $args > "$tmp/out" 2> "$tmp/err"
  rc=$?
  [ "$rc" = 2 ] || fail "'$args' exited $rc, not 2"
  [ ! -s "$tmp/out" ] || fail "'$args' wrote to stdout: $(cat "$tmp/out")"
  grep -q "^store_floor: " "$tmp/err" || fail "'$args' gave no reason: $(cat "$tmp/err")"
done

"$SF" --write-dir "$tmp/missing" --write-mb 4 > "$tmp/out" 2> "$tmp/err"
rc=$?
[ "$rc" = 1 ] || fail "a missing --write-dir exited $rc, not 1"
grep -q "^store_floor: cannot create a file in $tmp/missing: No such file or directory$" "$tmp/err" ||
  fail "missing --write-dir: $(cat "$tmp/err")"
[ ! -s "$tmp/out" ] || fail "missing --write-dir wrote to stdout"

mkdir "$tmp/w"
"$SF" --sizes 32,1024 --seconds 0.05 --write-dir "$tmp/w" --write-mb 8 > "$tmp/out" 2> "$tmp/err"
rc=$?
[ "$rc" = 0 ] || fail "the run exited $rc: $(cat "$tmp/err")"
[ "$(wc -l < "$tmp/out")" = 3 ] || fail "expected 3 lines: $(cat "$tmp/out")"
[ "$(sed -n 1p "$tmp/out")" = "size,crc_ns,copy_ns,write_ns" ] || fail "header: $(sed -n 1p "$tmp/out")"
num='[0-9]+\.[0-9]'
grep -Eq "^32,$num,$num,$num\$" <(sed -n 2p "$tmp/out") || fail "line 2: $(sed -n 2p "$tmp/out")"
grep -Eq "^1024,$num,$num,$num\$" <(sed -n 3p "$tmp/out") || fail "line 3: $(sed -n 3p "$tmp/out")"
# CRC and write are per byte times the size: the 1024-B figures are 32 times the 32-B ones, up to
# the rounding of the 32-B figure to 0.1 ns. Every figure is positive.
awk -F, 'NR == 2 { c = $2; w = $4; if ($2 <= 0 || $3 <= 0 || $4 <= 0) exit 1 }
         NR == 3 { if ($3 <= 0) exit 1
                   if ($2 < 32 * (c - 0.05) - 0.05 || $2 > 32 * (c + 0.05) + 0.05) exit 1
                   if ($4 < 32 * (w - 0.05) - 0.05 || $4 > 32 * (w + 0.05) + 0.05) exit 1 }' \
  "$tmp/out" || fail "figures do not scale with the size: $(cat "$tmp/out")"
[ -z "$(ls -A "$tmp/w")" ] || fail "left behind in --write-dir: $(ls -A "$tmp/w")"
[ ! -s "$tmp/err" ] || fail "stderr: $(cat "$tmp/err")"
echo "store_floor: usage, errors and output checked"
