# service: the recorder's DDS control requests (control_request_fuzzer.cpp): CDR bodies from any
# participant on the domain, their JSON, and the signature check. A trust boundary: anyone who
# can send RTPS to the recorder reaches this code.
pubsub_add_fuzzer(control_request_fuzzer
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/control_request_fuzzer.cpp
  LIBS pubsub_control_lib
  CORPUS corpus/control_request)
set_tests_properties(control_request_fuzzer PROPERTIES LABELS "fuzz;recorder")

# pubsub-replay: MCAP files handed to import/info/play (mcap_file_fuzzer.cpp): the reader, its
# chunk decompression and CRCs, and the ros2msg and QoS readers of what it finds.
pubsub_add_fuzzer(mcap_file_fuzzer
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/mcap_file_fuzzer.cpp
  LIBS pubsub_mcap_lib
  CORPUS corpus/mcap_file)
set_tests_properties(mcap_file_fuzzer PROPERTIES LABELS "fuzz;replay")
