# ctest "peers: pubsub_qos_peer refuses bad arguments with exit 2": each bad command line below
# must exit 2 with exactly one line on stderr and nothing on stdout, before any participant
# exists (no network needed). Run as: cmake -DPEER=<pubsub_qos_peer> -P bad_args_test.cmake.
# Arguments of one case are separated by "|".
set(cases
    ""
    "publish"
    "pub|--no-such-option"
    "pub|extra"
    "sub|--count"
    "pub|--count|ten"
    "pub|--count|-1"
    "pub|--rate|fast"
    "pub|--domain|233"
    "pub|--timeout|0"
    "pub|--reliability|sometimes"
    "pub|--durability|persistent"
    "pub|--history|keep_last:0"
    "pub|--history|keep_some"
    "pub|--resource-limits|10:1"
    "pub|--resource-limits|0:1:1"
    "pub|--ownership|shared:5"
    "pub|--liveliness|manual_by_topic:abc"
    "pub|--liveliness|automatic:0"
    "pub|--presentation|topic:unordered"
    "pub|--destination-order|random"
    "pub|--data-representation|xcdr3"
    "pub|--deadline|-5"
    "pub|--assert-every|100"
    "pub|--dispose|4|--keys|4"
    "pub|--time-based-filter|10"
    "pub|--unregister-rest=yes"
    "pub|--nic"
    "sub|--keys|4"
    "sub|--dispose|1"
    "sub|--lifespan|100")
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
