# service: the recorder's DDS control requests (control_request_fuzzer.cpp): CDR bodies from any
# participant on the domain, their JSON, and the signature check. A trust boundary: anyone who
# can send RTPS to the recorder reaches this code.
pubsub_add_fuzzer(control_request_fuzzer
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/control_request_fuzzer.cpp
  LIBS pubsub_control_lib
  CORPUS corpus/control_request)
set_tests_properties(control_request_fuzzer PROPERTIES LABELS "fuzz;recorder")
