# Perf tools that are programs of their own (no namespaces): their command lines, errors and
# output format. The measurements themselves are in perf/RESULTS.md, not in ctest.
add_test(NAME "perf: store_floor's usage, errors, output and cleanup"
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/perf_tools/store_floor_test.sh
                 $<TARGET_FILE:store_floor>)
set_tests_properties("perf: store_floor's usage, errors, output and cleanup" PROPERTIES
  LABELS "integration;perf" TIMEOUT 60 PROCESSORS ${PUBSUB_SLOTS_CORE})
