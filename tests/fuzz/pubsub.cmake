# libpubsub: libFuzzer targets over the decoders of untrusted RTPS bytes, linked with the pure
# codecs only (pubsub_wire, an OBJECT library built in both the normal and the fuzz configuration).
#
# Seed corpora (commit them; a few KB per file):
#   corpus/rtps_message    whole datagrams: every submessage kind from MessageBuilder (ok_*) and
#                          hand-made malformed ones (bad_*)
#   corpus/discovery_data  SPDP/SEDP PL_CDR payloads from encode_participant_data /
#                          encode_endpoint_data, big-endian ones built by hand, malformed ones
# Both are written by the hidden Catch2 test "Generate the fuzz seed corpora" in
# tests/unit/pubsub/wire_test.cpp, which replaces the files of the two directories:
#   cmake --build build --target pubsub_unit_tests
#   build/bin/pubsub_unit_tests "[.generate]"      # PUBSUB_CORPUS_DIR=... writes elsewhere
# The unit tests "The committed ... seed corpus decodes as its file names say" check them.
pubsub_add_fuzzer(rtps_message_fuzzer
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/rtps_message_fuzzer.cpp
  LIBS pubsub_wire
  CORPUS corpus/rtps_message)
pubsub_add_fuzzer(discovery_data_fuzzer
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/discovery_data_fuzzer.cpp
  LIBS pubsub_wire
  CORPUS corpus/discovery_data)
foreach(t IN ITEMS rtps_message_fuzzer discovery_data_fuzzer)
  target_link_libraries(${t} PRIVATE pubsub_warnings)
  set_tests_properties(${t} PROPERTIES LABELS "fuzz;pubsub")
endforeach()
# The shared-memory segment layout (shm/segment.cpp): corpus/shm_segment, written by the hidden
# test "Generate the shm segment seed corpus" in tests/unit/pubsub/shm_segment_test.cpp.
pubsub_add_fuzzer(shm_segment_fuzzer
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/shm_segment_fuzzer.cpp
          ${PROJECT_SOURCE_DIR}/libpubsub/src/shm/segment.cpp
          ${PROJECT_SOURCE_DIR}/libpubsub/src/shm/platform.cpp
  LIBS pubsub_wire Threads::Threads
  CORPUS corpus/shm_segment)
target_link_libraries(shm_segment_fuzzer PRIVATE pubsub_warnings)
set_tests_properties(shm_segment_fuzzer PROPERTIES LABELS "fuzz;pubsub")
