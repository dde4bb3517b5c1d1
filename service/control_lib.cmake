# pubsub_control_lib: what DDS control does with bytes from the network, without the participant:
# the ControlRequest/ControlReply codec and the signatures (control_auth). pubsub_recorder_lib
# links it; the fuzz build (top-level CMakeLists.txt, PUBSUB_FUZZ) builds only this part of
# service/ for tests/fuzz/control_request_fuzzer.cpp.
# OpenSSL's libcrypto: HMAC-SHA256 and random nonces for signed DDS control.
find_package(OpenSSL REQUIRED)
add_library(pubsub_control_lib STATIC ${CMAKE_CURRENT_LIST_DIR}/src/recorder/control_auth.cpp
                                      ${CMAKE_CURRENT_LIST_DIR}/src/recorder/dds_control_wire.cpp)
target_include_directories(pubsub_control_lib PUBLIC ${CMAKE_CURRENT_LIST_DIR}/include
                                                     ${CMAKE_CURRENT_LIST_DIR}/src/recorder)
# It needs libpubsub's Guid only: the fuzz build has just libpubsub's codecs (pubsub_wire).
target_link_libraries(pubsub_control_lib
  PUBLIC ${PUBSUB_SERVICE_PUBSUB} pubsub::common nlohmann_json::nlohmann_json
  PRIVATE OpenSSL::Crypto pubsub_warnings)
