# perf/three_node.sh (three-host perf harness) smoke test: namespaces, root; skips with 77.
add_test(NAME "three_node: harness smoke, 1024 B, 2 s, with the recorder"
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/three_node/smoke.sh)
set_tests_properties("three_node: harness smoke, 1024 B, 2 s, with the recorder" PROPERTIES
  ENVIRONMENT "BIN=${CMAKE_BINARY_DIR}/bin"
  SKIP_RETURN_CODE 77 TIMEOUT 120 PROCESSORS ${PUBSUB_SLOTS_MACHINE} LABELS "integration;netns;perf")
