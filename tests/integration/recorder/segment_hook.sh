#!/usr/bin/env bash
# storage.on_segment_closed (issue 35, item 5): a recorder rolling a segment every second ships
# each finished segment to "the other end" (a directory standing for object storage) with a hook
# script, and the index with the finished recording. Namespace 0 runs a libpubsub publisher
# (1000 reliable samples at 200/s), namespace 1 the recorder. Checked:
# - while the recorder runs, finished segments have already arrived at the other end;
# - the hook ran once per segment file, in segment order, then once for the recording, with $1,
#   PUBSUB_EVENT, PUBSUB_PATH and PUBSUB_RECORDING right; `ctl status` counts them, and the
#   recorder's last lines say "N commands run, 0 failed";
# - the segments alone open at the other end: `reindex`, then `verify` exit 0 and `export` gives
#   exactly the samples of the original recording; the shipped index opens as it is, too;
# - a hook that fails (second recorder: `exit 7`) is logged with its status and counted, and the
#   recording is whole all the same.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib/netns.sh"
. "$HERE/../lib/ddsperf.sh"
. "$HERE/../lib/peers.sh"
BIN=${BIN:?set BIN to the bin directory of the build}
DOMAIN=$((20 + $$ % 50))
netns_setup 2
netns_scratch  # $out (KEEP=1 keeps it), status, fail

# The user's hook: a segment is copied under a temporary name and renamed (the other end never
# sees half a file); the finished recording's index follows the segments.
cat >"$out/ship.sh" <<'SH'
#!/bin/sh
echo "$PUBSUB_EVENT $1 $PUBSUB_PATH $PUBSUB_RECORDING" >>"$LOG"
case $PUBSUB_EVENT in
  segment) mkdir -p "$DEST/segments" && cp "$1" "$DEST/segments/.part" &&
    mv "$DEST/segments/.part" "$DEST/segments/$(basename "$1")" ;;
  recording) cp "$1/index.sqlite3" "$DEST/index.sqlite3.shipped" ;;
esac
SH
rec=$out/rec
hook="LOG=$out/hooks.log DEST=$out/dest sh $out/ship.sh \"\$1\""
netns_spawn 1 90 "$BIN/pubsub-recorder" --domain "$DOMAIN" --interface veth1 --path "$rec" \
  --split-duration 1 --set storage.chunk_max_age_ms=20 \
  --set "storage.on_segment_closed=$hook" >"$out/rec.log" 2>&1
recorder=$SPAWNED
wait_for 10 "recording" test -e "$rec/index.sqlite3" || fail "the recorder did not start"
peer 0 pubsub pub --topic Shipped --count 1000 --rate 200 --wait-readers 1 --timeout 30 \
  --linger 1 >"$out/pub.out" 2>&1 &
pub=$!
wait_for 15 "a segment at the other end while recording" \
  sh -c "ls '$out/dest/segments/' 2>/dev/null | grep -q '\.seg$'" ||
  fail "no segment arrived while the recorder ran"
kill -0 "$recorder" 2>/dev/null || fail "the recorder ended before a segment arrived"
wait "$pub" || fail "the publisher exited $?"
ip netns exec "${NS_PREFIX}1" "$BIN/pubsub-recorder" ctl --path "$rec" status --json \
  >"$out/status.json" || fail "ctl status failed"
ip netns exec "${NS_PREFIX}1" "$BIN/pubsub-recorder" ctl --path "$rec" stop >/dev/null ||
  fail "ctl stop failed"
wait "$recorder" || fail "recorder exit $?"

# The hook's lines: each segment once, in order, then the recording.
segs=$(cd "$rec/segments" && ls)
nseg=$(echo "$segs" | wc -l)
want=$(for s in $segs; do echo "segment $rec/segments/$s $rec/segments/$s $rec"; done
  echo "recording $rec $rec $rec")
[ "$(cat "$out/hooks.log")" = "$want" ] ||
  { fail "hook lines differ"; diff <(echo "$want") "$out/hooks.log"; }
[ "$nseg" -ge 3 ] || fail "only $nseg segments (expected one a second for about 5 s)"
grep -q "storage.on_segment_closed: $((nseg + 1)) commands run, 0 failed" "$out/rec.log" ||
  fail "the recorder's last lines do not say $((nseg + 1)) commands run, 0 failed"
python3 -c '
import json, sys
h = json.load(open(sys.argv[1]))["hooks"]
assert h["failed"] == 0 and h["run"] >= 1, h
' "$out/status.json" || fail "ctl status: hooks"

# The other end: segments only, then reindexed; and the shipped index as it is.
"$BIN/pubsub-replay" export -q "$rec" >"$out/src.jsonl" || fail "export of the original failed"
[ "$(wc -l <"$out/src.jsonl")" = 1000 ] || fail "the original holds $(wc -l <"$out/src.jsonl") samples"
[ ! -e "$out/dest/index.sqlite3" ] || fail "an index at the other end before reindex"
"$BIN/pubsub-replay" reindex "$out/dest" >"$out/reindex.out" 2>&1 ||
  { fail "reindex at the other end: exit $?"; cat "$out/reindex.out"; }
"$BIN/pubsub-replay" verify "$out/dest" >"$out/verify.out" 2>&1 ||
  { fail "verify at the other end: exit $?"; cat "$out/verify.out"; }
"$BIN/pubsub-replay" export -q "$out/dest" >"$out/dest.jsonl" || fail "export at the other end failed"
cmp -s "$out/src.jsonl" "$out/dest.jsonl" || fail "the other end's samples differ from the original's"
mkdir "$out/dest2" && cp -r "$out/dest/segments" "$out/dest2/" &&
  cp "$out/dest/index.sqlite3.shipped" "$out/dest2/index.sqlite3"
"$BIN/pubsub-replay" verify "$out/dest2" >/dev/null 2>&1 || fail "the shipped index does not verify"

# A failing hook: logged with its status, counted; the recording is whole.
netns_spawn 1 60 "$BIN/pubsub-recorder" --domain "$DOMAIN" --interface veth1 --path "$out/rec2" \
  --split-duration 1 --set "storage.on_segment_closed=exit 7" >"$out/rec2.log" 2>&1
recorder=$SPAWNED
wait_for 10 "second recording" test -e "$out/rec2/index.sqlite3" || fail "recorder 2 did not start"
peer 0 pubsub pub --topic Shipped --count 400 --rate 200 --wait-readers 1 --timeout 30 \
  --linger 1 >"$out/pub2.out" 2>&1 &  # `peer` execs: never in the foreground
wait $! || fail "publisher 2 exited $?"
ip netns exec "${NS_PREFIX}1" "$BIN/pubsub-recorder" ctl --path "$out/rec2" stop >/dev/null
wait "$recorder" || fail "recorder 2 exit $?"
n2=$(($(ls "$out/rec2/segments" | wc -l) + 1))
grep -q "warning storage.on_segment_closed for $out/rec2/segments/00000001.seg failed: exit 7" \
  "$out/rec2.log" || fail "the failed hook is not logged with its status"
grep -q "storage.on_segment_closed: $n2 commands run, $n2 failed" "$out/rec2.log" ||
  { fail "recorder 2 does not count $n2 failed commands"; tail -3 "$out/rec2.log"; }
"$BIN/pubsub-replay" verify "$out/rec2" >/dev/null 2>&1 || fail "recording 2 does not verify"
[ "$("$BIN/pubsub-replay" export -q "$out/rec2" | wc -l)" = 400 ] || fail "recording 2 is not whole"
echo "$nseg segments shipped one by one and verified at the other end; failing hooks counted ($n2)"
exit $status
