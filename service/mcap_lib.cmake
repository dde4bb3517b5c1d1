# pubsub_mcap_lib: MCAP in - the MCAP file reader (src/replay/mcap_reader.cpp) and ROS 2's names,
# .msg schemas and QoS text (src/replay/ros2.cpp): what pubsub-replay does with a file someone
# hands it. pubsub_replay_lib links it; the fuzz build (top-level CMakeLists.txt, PUBSUB_FUZZ)
# builds only this part of service/ for tests/fuzz/mcap_file_fuzzer.cpp.
# libdeflate: CRC-32 by carry-less multiplication (MCAP chunks, written and read).
pkg_check_modules(LIBDEFLATE REQUIRED IMPORTED_TARGET libdeflate)
add_library(pubsub_mcap_lib STATIC ${CMAKE_CURRENT_LIST_DIR}/src/replay/mcap_reader.cpp
                                   ${CMAKE_CURRENT_LIST_DIR}/src/replay/ros2.cpp)
target_include_directories(pubsub_mcap_lib PUBLIC ${CMAKE_CURRENT_LIST_DIR}/include
                                                  ${CMAKE_CURRENT_LIST_DIR}/src/replay)
# RecordedQos (a header's struct) needs libpubsub's and storage's headers only: the fuzz build
# has just libpubsub's codecs (pubsub_wire).
target_link_libraries(pubsub_mcap_lib
  PUBLIC ${PUBSUB_SERVICE_PUBSUB} pubsub::storage pubsub::types
  PRIVATE PkgConfig::LZ4 PkgConfig::ZSTD PkgConfig::LIBDEFLATE pubsub_warnings)
