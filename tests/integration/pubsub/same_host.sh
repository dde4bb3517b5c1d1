#!/usr/bin/env bash
# Same-host delivery with real processes (network namespaces stand for hosts: processes in one
# namespace are on one host, and share memory; another namespace is another host).
#
#   same_host.sh pair SHMEM|INTRA SIZE [PERFTEST ARGS]
#                                        publisher and subscriber on one host (two processes over
#                                        shared memory, or one process): complete, in order, every
#                                        sample through that path (-zeroCopy: loans on both sides,
#                                        counted: every write loaned, every sample taken in place)
#   same_host.sh mixed SIZE              a shared-memory subscriber on the publisher's host and a
#                                        UDP subscriber on another, at the same time: both complete
#   same_host.sh kill-writer             SIGKILL of the publisher mid-transfer: both subscribers
#                                        carry on (no crash, no hang) and its shared memory is gone
#   same_host.sh kill-reader             SIGKILL of one of two shared-memory subscribers: the
#                                        publisher and the other subscriber finish complete, and the
#                                        dead one's shared memory is gone
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib/netns.sh"
BIN=${BIN:?set BIN to the bin directory of the build}
mode=${1:?usage: same_host.sh pair|mixed|kill-writer|kill-reader ...}
P="$BIN/pubsub-perftest"

netns_setup 2
out=$(mktemp -d) || exit 1  # removed on exit: only what this script made
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  netns_cleanup
  rm -rf "$out"
}
trap cleanup EXIT

fail() { echo "FAIL: $*"; exit 1; }
# shm_of PID: the shared-memory objects a process created (named /pubsub.<pid>.*).
shm_of() { ls /dev/shm 2>/dev/null | grep -c "^pubsub\.$1\." ; }
# The subscriber's "via-shm N" / "via-intra N" count.
via() { sed -n "s/.* via-$2 \([0-9]*\).*/\1/p" "$1" | tail -n 1; }
# run_bg NS NAME ARGS...: a perftest in namespace NS, in the background, its own PID in $! (ip
# netns exec execs it), output in $out/NAME.{out,err}. Without -noPrint a subscriber prints a
# "Samples: N" line every second: receiving() waits for one with N > 0.
run_bg() {
  local ns=$1 name=$2
  shift 2
  ip netns exec "${NS_PREFIX}$ns" "$P" -domain 7 "$@" >"$out/$name.out" 2>"$out/$name.err" &
  pids+=($!)
}
receiving() {  # receiving NAME: waits (up to 60 s) until that subscriber has received samples
  local _
  for _ in $(seq 600); do
    grep -Eq 'Samples: +[1-9]' "$out/$1.err" 2>/dev/null && return 0
    sleep 0.1
  done
  fail "$1 received nothing within 60 s"
}
expect_rc() {  # expect_rc PID RC NAME
  wait "$1"
  local rc=$?
  [ "$rc" -eq "$2" ] || { tail -n 5 "$out/$3.err"; fail "$3 exited $rc, expected $2"; }
}

# The fewest samples a 2-s run must carry (sanitizer builds copy large samples slowly).
min_for() { if [ "$1" -ge 1048576 ]; then echo 10; else echo 100; fi; }

case $mode in
  pair)
    transport=${2:?SHMEM or INTRA}
    size=${3:?size}
    extra=("${@:4}")
    if [ "$transport" = INTRA ]; then
      run_bg 0 intra -noPrint -transport INTRA -nic veth0 -datalen "$size" -exec 2 -summaryJson "$out/s" "${extra[@]}"
      expect_rc $! 0 intra
      cat "$out/intra.out"
      python3 "$HERE/../lib/check_json.py" "$out/s.pub" "$out/s.sub" --reliable --min "$(min_for "$size")" || exit 1
      n=$(via "$out/intra.err" intra)
    else
      run_bg 0 sub -noPrint -sub -transport SHMEM -nic veth0 -datalen "$size" -exec 60 -summaryJson "$out/sub.json" "${extra[@]}"
      sub=$!
      run_bg 0 pub -noPrint -pub -transport SHMEM -nic veth0 -datalen "$size" -exec 2 -summaryJson "$out/pub.json" "${extra[@]}"
      expect_rc $! 0 pub
      expect_rc $sub 0 sub
      cat "$out/sub.out"
      python3 "$HERE/../lib/check_json.py" "$out/pub.json" "$out/sub.json" --reliable --min "$(min_for "$size")" || exit 1
      n=$(via "$out/sub.err" shm)
      written=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['written'])" "$out/pub.json")
      # Data samples and the end-of-run marker, all through shared memory.
      [ "$n" = $((written + 1)) ] || fail "$n samples through shared memory, expected $((written + 1))"
    fi
    echo "through $transport: $n samples"
    [ "${n:-0}" -gt "$(min_for "$size")" ] || fail "only ${n:-0} samples through $transport"
    if [[ " ${extra[*]} " == *" -zeroCopy "* ]]; then
      # Loans on both sides: every data sample written from a loan, and every sample (the end
      # marker too) taken in the writer's own memory.
      if [ "$transport" = INTRA ]; then pj=$out/s.pub sj=$out/s.sub; else pj=$out/pub.json sj=$out/sub.json; fi
      python3 - "$pj" "$sj" <<'PY' || fail "-zeroCopy did not use loans throughout"
import json, sys
pub, sub = (json.load(open(p)) for p in sys.argv[1:3])
print(f"loaned writes {pub['loaned_writes']} of {pub['written']};"
      f" zero-copy samples {sub['zero_copy_samples']} of {sub['samples']} + 1 end marker")
sys.exit(0 if pub["loaned_writes"] == pub["written"] > 0
         and sub["zero_copy_samples"] == sub["samples"] + 1 else 1)
PY
    fi
    ;;

  mixed)
    size=${2:?size}
    run_bg 0 near -noPrint -sub -transport SHMEM -nic veth0 -datalen "$size" -exec 60 -summaryJson "$out/near.json"
    near=$!
    run_bg 1 far -noPrint -sub -transport UDPv4 -nic veth1 -datalen "$size" -exec 60 -summaryJson "$out/far.json"
    far=$!
    run_bg 0 pub -noPrint -pub -transport SHMEM -nic veth0 -datalen "$size" -exec 2 -numSubscribers 2 \
      -summaryJson "$out/pub.json"
    expect_rc $! 0 pub
    expect_rc $near 0 near
    expect_rc $far 0 far
    python3 "$HERE/../lib/check_json.py" "$out/pub.json" "$out/near.json" --reliable --min "$(min_for "$size")" || exit 1
    python3 "$HERE/../lib/check_json.py" "$out/pub.json" "$out/far.json" --reliable --min "$(min_for "$size")" || exit 1
    echo "same host: $(via "$out/near.err" shm) through shared memory; other host: $(via "$out/far.err" shm) (must be 0)"
    [ "$(via "$out/near.err" shm)" -gt "$(min_for "$size")" ] || fail "the same-host subscriber did not use shared memory"
    [ "$(via "$out/far.err" shm)" = 0 ] || fail "the other host's subscriber used shared memory"
    ;;

  kill-writer)
    run_bg 0 near -sub -transport SHMEM -nic veth0 -datalen 65536 -exec 14
    near=$!
    run_bg 1 far -noPrint -sub -transport UDPv4 -nic veth1 -datalen 65536 -exec 14
    far=$!
    run_bg 0 pub -noPrint -pub -transport SHMEM -nic veth0 -datalen 65536 -exec 30 -numSubscribers 2
    pub=$!
    receiving near  # mid-transfer
    [ "$(shm_of $pub)" -gt 0 ] || fail "the publisher has no shared-memory segment"
    kill -9 $pub || fail "the publisher was not running at the kill"
    wait $pub 2>/dev/null
    echo "publisher $pub killed with $(shm_of $pub) shared-memory objects"
    # Its segment and doorbell go as soon as a reader notices the death (and at the latest when
    # the next process starts); the subscribers end at their -exec limit, without the end marker.
    for _ in $(seq 120); do [ "$(shm_of $pub)" = 0 ] && break; sleep 0.1; done
    [ "$(shm_of $pub)" = 0 ] || fail "$(shm_of $pub) shared-memory objects of the dead publisher left"
    expect_rc $near 1 near
    expect_rc $far 1 far
    grep -h "reader delivered" "$out/near.err" "$out/far.err"
    [ "$(via "$out/near.err" shm)" -gt 0 ] || fail "the same-host subscriber received nothing"
    n=$(sed -n 's/.*reader delivered \([0-9]*\).*/\1/p' "$out/far.err")
    [ "${n:-0}" -gt 0 ] || fail "the other host's subscriber received nothing"
    ;;

  kill-reader)
    run_bg 0 victim -sub -transport SHMEM -nic veth0 -datalen 65536 -exec 60
    victim=$!
    run_bg 0 keeper -noPrint -sub -transport SHMEM -nic veth0 -datalen 65536 -exec 60 -summaryJson "$out/keeper.json"
    keeper=$!
    run_bg 0 pub -noPrint -pub -transport SHMEM -nic veth0 -datalen 65536 -exec 4 -numSubscribers 2 \
      -summaryJson "$out/pub.json"
    pub=$!
    receiving victim  # mid-transfer
    [ "$(shm_of $victim)" -gt 0 ] || fail "the subscriber to kill has no doorbell"
    kill -9 $victim || fail "the subscriber was not running at the kill"
    wait $victim 2>/dev/null
    # The publisher must not wait for the dead reader's lease, only notice it is gone.
    expect_rc $pub 0 pub
    expect_rc $keeper 0 keeper
    python3 "$HERE/../lib/check_json.py" "$out/pub.json" "$out/keeper.json" --reliable --min 100 || exit 1
    for _ in $(seq 50); do [ "$(shm_of $victim)" = 0 ] && break; sleep 0.1; done
    [ "$(shm_of $victim)" = 0 ] || fail "the dead subscriber's doorbell is left"
    grep -h "wrote" "$out/pub.err"
    ;;

  *) echo "unknown mode $mode"; exit 2 ;;
esac
echo PASS
