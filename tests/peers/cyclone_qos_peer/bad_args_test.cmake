# cmake -DPEER=<cyclone_qos_peer> -P bad_args_test.cmake: each bad command line below must exit 2
# with exactly one line on stderr and nothing on stdout, before any DDS entity exists. Arguments
# of one case are separated by "|".
set(cases
    "pub|--no-such-option"
    "sub|--count"
    "pub|--count|ten"
    "pub|--count|-1"
    "publish"
    ""
    "pub|--reliability|sometimes"
    "pub|--history|keep_last:0"
    "pub|--resource-limits|10:1"
    "pub|--ownership|shared:5"
    "pub|--liveliness|manual_by_topic:abc"
    "pub|--presentation|topic:unordered"
    "pub|--data-representation|xcdr3"
    "pub|--assert-every|100"
    "pub|--time-based-filter|10"
    "sub|--keys|4"
    "sub|--dispose|1"
    "pub|extra")
set(failures 0)
foreach(case IN LISTS cases)
  string(REPLACE "|" " " shown "${case}")
  string(REPLACE "|" ";" args "${case}")
  execute_process(COMMAND ${PEER} ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err TIMEOUT 10)
  string(REGEX MATCHALL "\n" newlines "${err}")
  list(LENGTH newlines lines)
  if(NOT rc EQUAL 2 OR NOT out STREQUAL "" OR NOT lines EQUAL 1)
    message(SEND_ERROR "'${shown}': exit ${rc} (want 2), stdout '${out}', stderr '${err}'")
    math(EXPR failures "${failures} + 1")
  else()
    message(STATUS "'${shown}': ${err}")
  endif()
endforeach()
if(failures GREATER 0)
  message(FATAL_ERROR "${failures} bad command lines not refused as they should be")
endif()
