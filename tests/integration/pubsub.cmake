# libpubsub and pubsub-perftest integration tests: processes in network namespaces (root).
# Namespace tests take the whole machine (PUBSUB_SLOTS_MACHINE) unless scheduling.cmake lists them
# as light.
add_executable(discovery_probe ${CMAKE_CURRENT_SOURCE_DIR}/discovery_probe.cpp)
target_link_libraries(discovery_probe PRIVATE pubsub::pubsub)

function(pubsub_netns_test name)
  add_test(NAME ${name} COMMAND bash ${ARGN})
  set_tests_properties(${name} PROPERTIES
    ENVIRONMENT "BIN=${CMAKE_BINARY_DIR}/bin"
    SKIP_RETURN_CODE 77 TIMEOUT 240 PROCESSORS ${PUBSUB_SLOTS_MACHINE} LABELS "integration;netns")
endfunction()

set(IT ${CMAKE_CURRENT_SOURCE_DIR})
# Two processes in two namespaces, 3 s, 0 lost.
pubsub_netns_test("pubsub: perftest two namespaces 3 s reliable" ${IT}/pubsub/perftest_pair.sh
                  --exec 3 --min 10000 -- -datalen 32)
# Exactly once and in order under kernel-level loss 5% and reordering 25% (netem substitute).
foreach(size 32 63000 4194304)
  pubsub_netns_test("pubsub: impaired link ${size} B unkeyed" ${IT}/pubsub/perftest_pair.sh
                    --impair 5 25 --exec 3 -- -datalen ${size})
  pubsub_netns_test("pubsub: impaired link ${size} B keyed" ${IT}/pubsub/perftest_pair.sh
                    --impair 5 25 --exec 3 -- -datalen ${size} -keyed -instances 16)
endforeach()
# Batches and fragments at both MTUs (issue 12): an 8192-B batch carries two 4096-B samples in
# one datagram at MTU 9000 (8972 B) and at MTU 1500 (batches fill up to 14792 B, ten IP
# packets), and fragments stay within one packet (49 per 63000-B sample at MTU 1500). The
# datagram counts prove the packing; the impaired runs that IP-fragmented batches and bounded
# repairs still deliver every sample exactly once, in order.
foreach(mtu 1500 9000)
  pubsub_netns_test("pubsub: MTU ${mtu} 4096 B batched two per datagram" ${IT}/pubsub/perftest_pair.sh
                    --mtu ${mtu} --exec 3 --datagrams-per-sample 0.45 0.6 -- -datalen 4096)
endforeach()
pubsub_netns_test("pubsub: MTU 1500 63000 B in one-packet fragments" ${IT}/pubsub/perftest_pair.sh
                  --mtu 1500 --exec 3 --datagrams-per-sample 48 51 -- -datalen 63000)
foreach(mtu 1500 9000)
  foreach(size 4096 63000)
    pubsub_netns_test("pubsub: MTU ${mtu} impaired link ${size} B" ${IT}/pubsub/perftest_pair.sh
                      --mtu ${mtu} --impair 5 25 --exec 3 -- -datalen ${size})
  endforeach()
endforeach()

# Cyclone DDS interoperation (issue: ddsperf publishes to us, we publish to ddsperf).
foreach(size 32 63000 200000)
  pubsub_netns_test("interop: ddsperf pub to perftest sub ${size} B" ${IT}/interop/ddsperf_to_perftest.sh ${size})
  pubsub_netns_test("interop: perftest pub to ddsperf sub ${size} B reliable" ${IT}/interop/perftest_to_ddsperf.sh ${size} reliable)
  pubsub_netns_test("interop: perftest pub to ddsperf sub ${size} B best effort" ${IT}/interop/perftest_to_ddsperf.sh ${size} best)
endforeach()
pubsub_netns_test("interop: keyed 16 instances ddsperf to perftest" ${IT}/interop/ddsperf_to_perftest.sh 256 16)
pubsub_netns_test("interop: keyed 16 instances perftest to ddsperf" ${IT}/interop/perftest_to_ddsperf.sh 256 reliable 16)
pubsub_netns_test("interop: ddsperf discovery match and lease" ${IT}/interop/discovery.sh)
pubsub_netns_test("interop: 5% loss 25% reordering ddsperf to perftest" ${IT}/interop/ddsperf_to_perftest.sh 1024 1 --impair 5 25)
pubsub_netns_test("interop: 5% loss 25% reordering perftest to ddsperf" ${IT}/interop/perftest_to_ddsperf.sh 1024 reliable 1 --impair 5 25)
pubsub_netns_test("interop: tshark decodes a libpubsub capture with no malformed packets" ${IT}/interop/capture.sh)
# Datagram size per reader vendor (issue 15): a Fast DDS reader gets 64-KiB datagrams (1 MiB in
# 17 fragments of 64816 B), our own reader MTU-sized ones (9000-B veth: 120 fragments of 8792 B).
pubsub_netns_test("interop: perftest pub to a Fast DDS reader, 1 MiB in 64-KiB datagrams"
                  ${IT}/pubsub/perftest_pair.sh --fastdds-sub --exec 3 --retry-on-fallback
                  --datagrams-per-sample 17 30 -- -datalen 1048576)
pubsub_netns_test("pubsub: perftest 1 MiB to our own reader in MTU-sized datagrams"
                  ${IT}/pubsub/perftest_pair.sh --exec 3 --datagrams-per-sample 120 140
                  -- -datalen 1048576)

# Same-host delivery: shared memory between processes, intra-process, a network subscriber
# alongside, and SIGKILL of a writer or a reader mid-transfer.
foreach(size 32 1024 65536 1048576 4194304)
  pubsub_netns_test("same host: perftest SHMEM ${size} B" ${IT}/pubsub/same_host.sh pair SHMEM ${size})
  pubsub_netns_test("same host: perftest INTRA ${size} B" ${IT}/pubsub/same_host.sh pair INTRA ${size})
endforeach()
# Loans on both sides (Writer::loan, LoanedSample).
foreach(size 1024 1048576)
  pubsub_netns_test("same host: perftest SHMEM -zeroCopy ${size} B" ${IT}/pubsub/same_host.sh pair SHMEM ${size} -zeroCopy)
  pubsub_netns_test("same host: perftest INTRA -zeroCopy ${size} B" ${IT}/pubsub/same_host.sh pair INTRA ${size} -zeroCopy)
endforeach()
foreach(size 63000 1048576)
  pubsub_netns_test("same host: shared-memory and UDP subscribers at once, ${size} B"
                    ${IT}/pubsub/same_host.sh mixed ${size})
endforeach()
pubsub_netns_test("same host: SIGKILL of the writer mid-transfer" ${IT}/pubsub/same_host.sh kill-writer)
pubsub_netns_test("same host: SIGKILL of a reader mid-transfer" ${IT}/pubsub/same_host.sh kill-reader)
