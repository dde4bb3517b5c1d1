# ctest "peers: fastdds_qos_peer refuses bad arguments with exit 2": every bad command line gets
# exit status 2, nothing on stdout and exactly one line on stderr; no entity is created, so no
# network is needed. Run as: cmake -DPEER=<fastdds_qos_peer> -P bad_args_test.cmake
set(failures 0)
foreach(case IN ITEMS
        ""
        "both"
        "pub --bogus"
        "pub --count"
        "pub --count -1"
        "pub --rate fast"
        "pub --dispose 4 --keys 4"
        "sub --keys 3"
        "sub --dispose 1"
        "pub --time-based-filter 10"
        "sub --history keep_last:0"
        "sub --history keep_some"
        "sub --reliability sometimes"
        "sub --durability persistent"
        "sub --liveliness manual_by_topic:soon"
        "sub --ownership shared:3"
        "sub --resource-limits 1:2"
        "sub --resource-limits 0:1:1"
        "sub --presentation topic:chaotic"
        "sub --destination-order random"
        "sub --data-representation xml"
        "sub --deadline -5"
        "sub --timeout 0")
  separate_arguments(args UNIX_COMMAND "${case}")
  execute_process(COMMAND ${PEER} ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err TIMEOUT 20)
  string(REGEX MATCHALL "\n" newlines "${err}")
  list(LENGTH newlines lines)
  if(NOT rc EQUAL 2 OR NOT out STREQUAL "" OR NOT lines EQUAL 1)
    message(SEND_ERROR "'${case}': exit ${rc} (want 2), stdout '${out}', stderr ${lines} lines: ${err}")
    math(EXPR failures "${failures} + 1")
  else()
    message(STATUS "'${case}': exit 2: ${err}")
  endif()
endforeach()
if(failures)
  message(FATAL_ERROR "${failures} bad command lines not refused with exit 2")
endif()
