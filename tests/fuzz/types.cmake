# types: the CDR decoder (see cdr_decode_fuzzer.cpp). 30000 runs (a third of the others'): each
# input decodes a type and up to 70000 bytes into JSON (about 2900 runs/s on this project's VM,
# idle; 200000 runs took 203 s of the 300 s timeout in a loaded CI run).
pubsub_add_fuzzer(cdr_decode_fuzzer
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/cdr_decode_fuzzer.cpp
  LIBS pubsub::types
  CORPUS corpus/cdr_decode
  RUNS 30000)
set_tests_properties(cdr_decode_fuzzer PROPERTIES LABELS "fuzz;types")

# types: XTypes TypeInformation and TypeObjects (see type_object_fuzzer.cpp).
pubsub_add_fuzzer(type_object_fuzzer
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/type_object_fuzzer.cpp
  LIBS pubsub::types
  CORPUS corpus/type_object)
set_tests_properties(type_object_fuzzer PROPERTIES LABELS "fuzz;types")
