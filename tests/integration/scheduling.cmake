# How the namespace tests share this machine's two cores under `ctest -j4` (scripts/test.sh; the
# slots are set in cmake/test_slots.cmake, a slot is half a core).
#
# Every namespace test is registered with PROCESSORS ${PUBSUB_SLOTS_MACHINE}, so it runs with
# nothing beside it: the throughput and timing bounds of most were set on an idle machine. The
# tests listed here use less than 0.45 of a core on average when run alone - they wait on timers,
# leases, lost-sample repair or a peer's fixed duration - so they take one slot: four run together
# (under 1.8 cores), or two beside a unit test.
#
# Side by side they cannot see each other: each test makes its own namespaces (names from its
# PID: lib/netns.sh), with their own bridge, multicast and ports; the Fast DDS peers use UDP only;
# libpubsub's shared-memory segments are named by the creating process's PID.
#
# The figures (CPU seconds / wall seconds, alone on this 2-core machine, at 4a5e77d) come from
#   scripts/test_cpu.py build -L netns       (as root)
# Measure again after changing a test, and move it out of this list if it uses 0.45 of a core or
# more. A name that is not registered (a peer missing) is passed over.
set(light_namespace_tests
  "pubsub: impaired link 32 B unkeyed"  # 0.39
  "pubsub: impaired link 32 B keyed"  # 0.39
  "pubsub: impaired link 63000 B unkeyed"  # 0.36
  "pubsub: impaired link 63000 B keyed"  # 0.40
  "pubsub: impaired link 4194304 B unkeyed"  # 0.26
  "pubsub: impaired link 4194304 B keyed"  # 0.28
  "pubsub: MTU 1500 impaired link 4096 B"  # 0.22
  "pubsub: MTU 1500 impaired link 63000 B"  # 0.31
  "pubsub: MTU 9000 impaired link 4096 B"  # 0.28
  "pubsub: MTU 9000 impaired link 63000 B"  # 0.31
  "interop: ddsperf discovery match and lease"  # 0.03
  "interop: 5% loss 25% reordering ddsperf to perftest"  # 0.15
  "interop: 5% loss 25% reordering perftest to ddsperf"  # 0.25
  "interop: tshark decodes a libpubsub capture with no malformed packets"  # 0.36
  "same host: SIGKILL of the writer mid-transfer"  # 0.14
  "qos: every policy recorded from cyclone and replayed into fastdds readers that ask for it"  # 0.21
  "qos: every policy recorded from fastdds and replayed into pubsub readers that ask for it"  # 0.17
  "qos: every policy recorded from pubsub and replayed into cyclone readers that ask for it"  # 0.25
  "qos: every policy recorded from cyclone and replayed into pubsub readers that ask for it"  # 0.21
  "qos: durable writers' latched state at play --start and for late joiners of a replay"  # 0.04
  "recorder: writers' link down past their lease - matched again, durable history recorded once, volatile and best-effort losses counted exactly, a restarted publisher recorded as two writers, play goes on when its reader's link goes"  # 500 samples/s, mostly waiting on the lease
  "recorder: Cyclone writers' link down past their lease - matched again, durable history recorded once, volatile and best-effort losses counted exactly, a restarted publisher recorded as two writers"  # the same
  "recorder: the wall clock stepped +300 s and -600 s while recording - reception times ordered without a jump, segments rolled, steps logged and marked, play paced by reception"  # 200 samples/s
  "recorder: 2-minute soak of mixed traffic - RSS, fds and threads flat after warm-up, nothing reliable lost, the recording verifies"  # 0.28 (perf/soak.sh: 34 CPU-s in 121 s)
  "recorder: one recorder per host with topics.writers local, driven as one recording set, merged - each records its own host's writers only, every writer once, ctl --set reaches all and names a silent member, merge keeps each sample once"  # 1200 samples at 200/s
  "recorder: storage.on_segment_closed ships each finished segment and the recording - they verify at the other end, failing hooks counted"  # 1400 samples at 200/s
  "qos: latched state of a pubsub durable writer for fastdds readers"  # 0.05
  "qos: latched state of a cyclone durable writer for pubsub readers"  # 0.04
  "qos: a MANUAL_BY_TOPIC writer replayed with gaps longer than its lease stays alive"  # 0.04
  "qos: a writer the recorder cannot read is listed in info with the reason"  # 0.09
  "recorder: info, verify, recover and reindex on a live recording - refused, nothing lost"  # 0.30
  "recorder: an empty recording names the topics the filters left out, or no participant on the domain"  # 0.04
  "recorder: records from the command line alone (-o -d -i TOPIC -x), ctl status as text"  # 0.11
  "recorder: ctl status, pause/resume, split, tag, stop against a running recorder"  # 0.33
  "recorder: snapshot mode - ctl snapshot, extension, SIGUSR1, windows and continuity"  # 0.22
  "recorder: ctl --dds status, tag, stop from control.allow, others refused, control topics not recorded"  # 0.22
  "recorder: sd_notify READY, STATUS, WATCHDOG, STOPPING, and a restart records into a new strftime directory"  # 0.06
  "replay: ddsperf recording replayed into ddsperf sub"  # 0.14
  "replay: ddsperf recording, 8 keys, replayed into ddsperf sub"  # 0.13
  "replay: ddsperf 60 KB at 2 kHz replayed into ddsperf sub within 2x"  # 0.44
  "replay: 1 MB replayed into a Fast DDS reader through loss and reordering"  # 0.23
  "replay: 2 MB at 100 Hz replayed into a Fast DDS reader within 2x"  # 0.37 (at 4e8efe4)
  "replay: 60 KB at 2 kHz replayed into a Fast DDS reader within 2x"  # 0.35 (at 4e8efe4)
  "replay: ddsperf 1 MB replayed into ddsperf sub through loss and reordering"  # 0.14
  "replay: ddsperf KeyedSeq type looked up (XTypes TypeLookup) and decoded, with and without --idl, 4 keys"  # 0.26
  "replay: ddsperf KeyedSeq type from the recorder's types.idl stored and decoded, 4 keys"  # 0.24
)
# share_machine(SLOTS LABEL TESTS...): each registered test of TESTS takes SLOTS (and LABEL, if
# not empty); a name that is not registered (a peer missing) is passed over.
function(share_machine slots label)
  foreach(t IN LISTS ARGN)
    if(TEST "${t}")
      set_tests_properties("${t}" PROPERTIES PROCESSORS ${slots})
      if(label)
        set_property(TEST "${t}" APPEND PROPERTY LABELS ${label})
      endif()
    endif()
  endforeach()
endfunction()
share_machine(${PUBSUB_SLOTS_LIGHT} light ${light_namespace_tests})
# Namespace tests of about one busy core with no throughput or timing bound (they count what was
# recorded, kill and recover, wait with generous timeouts) take a core's two slots, not the
# machine: they run beside a unit test or another of them. Figures from scripts/test_cpu.py as
# above (at 9591375).
set(core_namespace_tests
  "recorder: SIGKILL x4 under load then recover - verify exits 0 and nothing is lost"  # 1.11
  "recorder: SIGKILL x3 with direct I/O then recover - verify exits 0, nothing lost"  # 1.05
  "recorder: SIGTERM and SIGKILL mid-run leave a verifiable recording"  # 1.10
  "recorder: records ddsperf traffic completely, first samples before the registrar"  # 0.56
)
share_machine(${PUBSUB_SLOTS_CORE} "" ${core_namespace_tests})
# The soak's two minutes at one slot: started first (ctest -j runs the highest COST first), beside
# the unit tests, instead of holding back every two-slot test behind it at the end.
set(soak_test "recorder: 2-minute soak of mixed traffic - RSS, fds and threads flat after warm-up, nothing reliable lost, the recording verifies")
if(TEST "${soak_test}")
  set_tests_properties("${soak_test}" PROPERTIES COST 100000)
endif()
