# storage: the chunk/entry/segment decoders (see storage_chunk_fuzzer.cpp).
pubsub_add_fuzzer(storage_chunk_fuzzer
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/storage_chunk_fuzzer.cpp
  LIBS pubsub::storage
  CORPUS corpus/storage_chunk)
# The fuzzer drives private helpers of the library (segment_file.hpp).
target_include_directories(storage_chunk_fuzzer PRIVATE ${CMAKE_CURRENT_LIST_DIR}/../../storage/src)
set_tests_properties(storage_chunk_fuzzer PROPERTIES LABELS "fuzz;storage")
