# config: the recorder's JSON configuration parser (config_parse_fuzzer.cpp). The files come from
# users, not the network, so this guards robustness (no crash, no escaping exception, sane
# messages), not a trust boundary.
pubsub_add_fuzzer(config_parse_fuzzer
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/config_parse_fuzzer.cpp
  LIBS pubsub::config
  CORPUS corpus/config)
set_tests_properties(config_parse_fuzzer PROPERTIES LABELS "fuzz;config")
