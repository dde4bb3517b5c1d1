# storage: multi-process and filesystem tests of pubsub::storage.
#  - storage_crash_test: a child process writing continuously is SIGKILLed at random moments;
#    every time the recording opens, verifies and holds every durable record byte-identical.
#  - storage_disk_full_test: writing into a small tmpfs (private mount namespace, as root) gives
#    "No space left on device" and the recording stays readable up to the last complete chunk.
set(_storage_it ${CMAKE_CURRENT_LIST_DIR}/storage)
add_executable(storage_crash_child ${_storage_it}/crash_child.cpp)
target_link_libraries(storage_crash_child PRIVATE pubsub::storage pubsub_warnings)
target_include_directories(storage_crash_child PRIVATE ${_storage_it})

add_executable(storage_crash_test ${_storage_it}/crash_test.cpp)
target_link_libraries(storage_crash_test PRIVATE pubsub::storage pubsub_test_main pubsub_warnings)
target_include_directories(storage_crash_test PRIVATE ${_storage_it})
target_compile_definitions(storage_crash_test
  PRIVATE STORAGE_CRASH_CHILD="$<TARGET_FILE:storage_crash_child>")
add_dependencies(storage_crash_test storage_crash_child)
add_test(NAME storage_crash_test COMMAND storage_crash_test)
set_tests_properties(storage_crash_test PROPERTIES LABELS "storage;integration" TIMEOUT 120
                     SKIP_REGULAR_EXPRESSION "${PUBSUB_SKIP_REGEX}" PROCESSORS ${PUBSUB_SLOTS_CORE})

add_executable(storage_disk_full_test ${_storage_it}/disk_full_test.cpp)
target_link_libraries(storage_disk_full_test PRIVATE pubsub::storage pubsub_test_main pubsub_warnings)
target_include_directories(storage_disk_full_test PRIVATE ${_storage_it})
add_test(NAME storage_disk_full_test COMMAND storage_disk_full_test)
set_tests_properties(storage_disk_full_test PROPERTIES LABELS "storage;integration" TIMEOUT 120
                     SKIP_REGULAR_EXPRESSION "${PUBSUB_SKIP_REGEX}" PROCESSORS ${PUBSUB_SLOTS_CORE})
