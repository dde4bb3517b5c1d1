# How the tests share the machine under `ctest -j4` (scripts/test.sh): four slots on 2 cores, a slot
# is half a core. Every test names its share (test.sh checks that none is left unset): a namespace
# test takes the whole machine, so it runs alone (the throughput and timing bounds of most were set
# on an idle machine); a unit test, a fuzzer or another test of one busy process takes a core; a
# light namespace test (scheduling.cmake: it waits on timers, leases or a peer's fixed duration,
# under 0.45 of a core) takes one slot, so four run together, or two beside a unit test.
set(PUBSUB_SLOTS_MACHINE 4)
set(PUBSUB_SLOTS_CORE 2)
set(PUBSUB_SLOTS_LIGHT 1)
