# pubsub-recorder integration tests (network namespaces, root).
add_executable(recording_summary ${CMAKE_CURRENT_SOURCE_DIR}/recording_summary.cpp)
target_link_libraries(recording_summary PRIVATE pubsub::storage perftest_body_hash)

set(IT ${CMAKE_CURRENT_SOURCE_DIR})
# 1. perftest pub -> sub + recorder: counts, sequences and checksums equal.
# (Its registrar waits 1 s: the reliable writer's first samples come before it has prepared the
# writer and are held back, none lost. A best-effort writer's first sample, which would be lost
# if refused, has the writer prepared on the receive thread instead.)
pubsub_netns_test("recorder: records everything, 32 B random payload, first samples before the registrar" ${IT}/recorder/record_perftest.sh
                  --registrar-delay-ms 1000 -- -datalen 32 -payload random)
pubsub_netns_test("recorder: a best-effort writer's first sample before the registrar - prepared where it arrives, nothing lost"
                  ${IT}/recorder/record_perftest.sh --exec 1 --registrar-delay-ms 1000 -- -datalen 32 -best -pubRate 20000 -payload random)
pubsub_netns_test("recorder: records everything, keyed 1000 instances" ${IT}/recorder/record_perftest.sh
                  -- -datalen 100 -keyed -instances 1000 -payload random)
pubsub_netns_test("recorder: records everything, 63000 B samples" ${IT}/recorder/record_perftest.sh
                  -- -datalen 63000 -payload random)
# ... and on the publisher's host: every sample read from its shared memory.
foreach(size 1024 1048576)
  pubsub_netns_test("recorder: same host as the publisher records over shared memory, ${size} B"
                    ${IT}/recorder/record_perftest.sh --same-host -- -datalen ${size} -payload random)
endforeach()
# 2. ddsperf pub -> ddsperf sub + recorder.
#    (Its registrar waits 1 s: the Cyclone writer's first samples are held back unacknowledged
#    and recorded when Cyclone sends them again.)
pubsub_netns_test("recorder: records ddsperf traffic completely, first samples before the registrar"
                  ${IT}/recorder/ddsperf_record.sh --registrar-delay-ms 1000 32)
# 3. A slow recorder: publisher blocks, nothing lost, RSS bounded.
pubsub_netns_test("recorder: back-pressure when storage is slow" ${IT}/recorder/record_perftest.sh
                  --slow-ms 50 --queue-mb 8 -- -datalen 1024 -payload random)
# 4. Bad configurations (no namespaces needed).
add_test(NAME "recorder: bad configurations are clear errors, exit 2, nothing created"
         COMMAND bash ${IT}/recorder/bad_configs.sh)
set_tests_properties("recorder: bad configurations are clear errors, exit 2, nothing created"
                     PROPERTIES ENVIRONMENT "BIN=${CMAKE_BINARY_DIR}/bin" TIMEOUT 60
                                PROCESSORS ${PUBSUB_SLOTS_CORE})
# 5. SIGTERM and SIGKILL mid-run.
pubsub_netns_test("recorder: SIGTERM and SIGKILL mid-run leave a verifiable recording" ${IT}/recorder/signals.sh)
# 6. SIGKILLs at random moments, each followed by recover -> verify exit 0: four through the
#    page cache (kills tear chunks: recover cuts them; two of them inside a chunk's write), and
#    three with direct I/O. (Twelve and ten took 125 s of CI's 30 minutes, eight and six 110 s,
#    six and four 82 s; crash_recover.sh 100 off runs more.)
pubsub_netns_test("recorder: SIGKILL x4 under load then recover - verify exits 0 and nothing is lost"
                  ${IT}/recorder/crash_recover.sh 4 off)
pubsub_netns_test("recorder: SIGKILL x3 with direct I/O then recover - verify exits 0, nothing lost"
                  ${IT}/recorder/crash_recover.sh 3 auto)
# 6b. The replay tools on a live recording: info says live, verify exits 4 without suggesting
#     recover, recover and reindex refuse (exit 4, nothing changed); after the end nothing lost.
pubsub_netns_test("recorder: info, verify, recover and reindex on a live recording - refused, nothing lost"
                  ${IT}/recorder/live_tools.sh)
# 6c. Empty recordings say why: the topics topics.include left out, no participant on the domain.
pubsub_netns_test("recorder: an empty recording names the topics the filters left out, or no participant on the domain"
                  ${IT}/recorder/empty_hints.sh)
# 6d. Recording from the command line alone: -o, -d, -i, topic globs and -x; ctl status as text.
pubsub_netns_test("recorder: records from the command line alone (-o -d -i TOPIC -x), ctl status as text"
                  ${IT}/recorder/cli_record.sh)
# 6e. Writers that go away with samples the recorder held back: counted lost, stored as a gap.
pubsub_netns_test("recorder: writers gone with samples held back (libpubsub, Cyclone, Fast DDS) - counted lost and stored as a gap, one back after its lease not lost"
                  ${IT}/recorder/departed_writer.sh)
# 7. Remote control: pubsub-recorder ctl status/pause/resume/split/tag/stop, refusals, tags in
#    info and as --start tag:NAME, a second recorder on the same socket refused.
pubsub_netns_test("recorder: ctl status, pause/resume, split, tag, stop against a running recorder"
                  ${IT}/recorder/control.sh)
# 7b. Snapshot mode: the memory buffer in status, a snapshot from `ctl snapshot TAG` extended by a
#    second trigger (exact window, continuous, both tags), the next from SIGUSR1 starting right
#    after it, a bad tag refused, every snapshot verifying.
pubsub_netns_test("recorder: snapshot mode - ctl snapshot, extension, SIGUSR1, windows and continuity"
                  ${IT}/recorder/snapshot.sh)
# 7b. DDS control (control.dds): ctl --dds from an allowed namespace (status, tag, stop), one not
#     in control.allow refused (exit 1, the warning in the log), no recorder (exit 2), and no
#     control topic in the recording.
pubsub_netns_test("recorder: ctl --dds status, tag, stop from control.allow, others refused, control topics not recorded"
                  ${IT}/recorder/dds_control.sh)
# 7c. Signed DDS control (control.key_file): a key file others may read stops the start; with the
#     key ctl --dds --key-file runs status, tag and stop; unsigned, other-key and clock-skewed
#     requests are refused with their reasons and counted; the log is rate-limited.
pubsub_netns_test("recorder: signed DDS control - key file mode, signed commands, unsigned, other key and stale refused and counted"
                  ${IT}/recorder/dds_control_auth.sh)
# 7d. Discovery limits: a flood of 20000 participants at one address and 30000 writers of one
#     participant from a plain UDP socket (tests/peers/discovery_flood) while a real writer is
#     recorded: refusals counted and logged once, RSS bounded, the real writer recorded whole.
pubsub_netns_test("recorder: a discovery flood (20000 participants, 30000 endpoints) is refused by the limits, RSS bounded, the real writer recorded whole"
                  ${IT}/recorder/discovery_flood.sh)
# 7e. Publishers' link down for longer than their lease and back (libpubsub's and Cyclone DDS's
#     writers): each writer is matched again; a durable one's history is recorded once, none
#     lost; what volatile and best-effort writers wrote meanwhile is counted lost exactly; a
#     publisher killed and restarted is two writers, both whole. With libpubsub's reader also
#     `play` with the reader's link down mid-way: it goes on, says the reader went and came back.
pubsub_netns_test("recorder: writers' link down past their lease - matched again, durable history recorded once, volatile and best-effort losses counted exactly, a restarted publisher recorded as two writers, play goes on when its reader's link goes"
                  ${IT}/recorder/link_outage.sh pubsub play)
pubsub_netns_test("recorder: Cyclone writers' link down past their lease - matched again, durable history recorded once, volatile and best-effort losses counted exactly, a restarted publisher recorded as two writers"
                  ${IT}/recorder/link_outage.sh cyclone)
# 7f. Clocks that jump (libfaketime on one process): the recorder's wall clock steps +300 s and
#     -600 s, a publisher's -120 s; reception times stay ordered without a jump, segments roll,
#     the steps are logged, counted and marked, play paces by reception times and says so.
pubsub_netns_test("recorder: the wall clock stepped +300 s and -600 s while recording - reception times ordered without a jump, segments rolled, steps logged and marked, play paced by reception"
                  ${IT}/recorder/clock_jumps.sh)
# 7g. perf/soak.sh's short run (issue 34, item 5): 2 minutes of mixed traffic (five steady
#     writers, one that comes and goes every 20 s), segments rolled every 20 s, retention keeping
#     4 MB (of about 10 MB recorded); RSS,
#     fds and threads sampled every 2 s must stay flat after the first 30 s.
pubsub_netns_test("recorder: 2-minute soak of mixed traffic - RSS, fds and threads flat after warm-up, nothing reliable lost, the recording verifies"
                  ${CMAKE_SOURCE_DIR}/perf/soak.sh --minutes 2 --churn-s 20 --sample-s 2 --retention-mb 4 --check --out ${CMAKE_BINARY_DIR}/soak-test)
# 7h. A recorder per host (issue 35): three namespaces, each with its writers (libpubsub over
#     shared memory, Cyclone DDS, libpubsub over UDP) on a shared topic and one of its own, and a
#     recorder with --writers local: each records exactly its host's writers, each writer once.
#     The three are recording set "rig" (ctl --dds --set: status, tag, a silent member named,
#     stop); pubsub-replay merge makes one recording of them, each sample once.
pubsub_netns_test("recorder: one recorder per host with topics.writers local, driven as one recording set, merged - each records its own host's writers only, every writer once, ctl --set reaches all and names a silent member, merge keeps each sample once"
                  ${IT}/recorder/local_writers.sh)
# 7i. storage.on_segment_closed (issue 35, item 5): a hook ships each finished segment as it
#     rolls (one a second) and the index at the end; the segments alone reindex, verify and export
#     the same samples at the other end; a failing hook is logged and counted.
pubsub_netns_test("recorder: storage.on_segment_closed ships each finished segment and the recording - they verify at the other end, failing hooks counted"
                  ${IT}/recorder/segment_hook.sh)
# 8. Under systemd's notification protocol (READY=1, STATUS=, WATCHDOG=1, STOPPING=1; the test
#    plays systemd), restarted with a strftime storage.path: a new directory per start.
pubsub_netns_test("recorder: sd_notify READY, STATUS, WATCHDOG, STOPPING, and a restart records into a new strftime directory"
                  ${IT}/recorder/sd_notify.sh)
# 9. The disk guard on a 64-MiB tmpfs the test mounts, ~50 MB/s of 1-KiB and 64-KiB samples:
#    "stop" ends the recording cleanly (exit 1, the reason on stderr, verify 0, every sample the
#    recorder counted is in it); "rotate" removes the oldest segments and keeps free space
#    within one segment of storage.min_free_bytes (SIGTERM -> exit 0, verify 0).
pubsub_netns_test("recorder: disk guard stop - exit 1 with the reason, clean complete recording"
                  ${IT}/recorder/disk_guard.sh stop)
pubsub_netns_test("recorder: disk guard rotate - oldest segments removed, free space kept"
                  ${IT}/recorder/disk_guard.sh rotate)
