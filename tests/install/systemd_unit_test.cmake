# The systemd unit test (cmake -P; registered in CMakeLists.txt next to this file): installs the
# build as the Debian package lays it out (`cmake --install --prefix /usr` with DESTDIR=
# SCRATCH/root) and checks pubsub-recorder@.service there:
# 1. the directives the service depends on, exactly: Type=notify, NotifyAccess=main,
#    ExecStart=/usr/bin/pubsub-recorder --config /etc/pubsub-recorder/%i.json, WatchdogSec=30s,
#    Restart=on-failure, RestartPreventExitStatus=2;
# 2. `systemd-analyze verify --root=SCRATCH/root pubsub-recorder@test.service` exits 0 and prints
#    nothing (it exits 0 after warnings such as an unknown key, so its output must be empty). The
#    root holds the installed files plus copies of the host's sysinit.target, basic.target and
#    shutdown.target, which every service requires; verify then also checks that ExecStart='s
#    program exists in the root and is executable;
# 3. that this check can fail: with the program removed from the root, verify must fail.
# Without systemd-analyze it prints PUBSUB_SKIPPED (ctest: skipped; scripts/setup.sh installs
# the systemd package, and CI fails on a skip). SCRATCH is removed at the end when everything
# passed.
#   -DBUILD_DIR= -DSCRATCH= -DUNITDIR=
cmake_minimum_required(VERSION 3.25)
foreach(v BUILD_DIR SCRATCH UNITDIR)
  if(NOT DEFINED ${v} OR "${${v}}" STREQUAL "")
    message(FATAL_ERROR "systemd_unit_test.cmake: -D${v}= missing")
  endif()
endforeach()
find_program(systemd_analyze systemd-analyze)
if(NOT systemd_analyze)
  message("PUBSUB_SKIPPED: systemd-analyze not found (Debian package systemd)")
  return()
endif()
set(root ${SCRATCH}/root)
file(REMOVE_RECURSE ${SCRATCH})  # a previous failed run's
file(MAKE_DIRECTORY ${SCRATCH})

execute_process(COMMAND ${CMAKE_COMMAND} -E env DESTDIR=${root}
                        ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix /usr
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${rc}):\n${out}\n${err}")
endif()
set(unit ${root}/usr/${UNITDIR}/pubsub-recorder@.service)
if(NOT EXISTS ${unit})
  message(FATAL_ERROR "not installed: ${unit}")
endif()

# 1. The directives.
file(STRINGS ${unit} lines)
foreach(want "Type=notify" "NotifyAccess=main"
             "ExecStart=/usr/bin/pubsub-recorder --config /etc/pubsub-recorder/%i.json"
             "WatchdogSec=30s" "Restart=on-failure" "RestartPreventExitStatus=2")
  if(NOT want IN_LIST lines)
    message(FATAL_ERROR "${unit} lacks the line ${want}")
  endif()
endforeach()

# 2. systemd-analyze verify, in the root.
foreach(target sysinit.target basic.target shutdown.target)
  find_file(host_${target} ${target} PATHS /lib/systemd/system /usr/lib/systemd/system
            NO_DEFAULT_PATH NO_CACHE)
  if(NOT host_${target})
    message(FATAL_ERROR "${target} not found in /lib/systemd/system (package systemd)")
  endif()
  file(COPY ${host_${target}} DESTINATION ${root}/etc/systemd/system)
endforeach()
function(verify)
  execute_process(COMMAND ${systemd_analyze} verify --root=${root} pubsub-recorder@test.service
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(verify_rc ${rc} PARENT_SCOPE)
  set(verify_out "${out}${err}" PARENT_SCOPE)
endfunction()
verify()
if(NOT verify_rc EQUAL 0 OR NOT verify_out STREQUAL "")
  message(FATAL_ERROR "systemd-analyze verify exit ${verify_rc}:\n${verify_out}\n(left in ${SCRATCH})")
endif()
message(STATUS "systemd-analyze verify --root=${root} pubsub-recorder@test.service: ok")

# 3. ... and it would have noticed a unit that cannot start.
file(RENAME ${root}/usr/bin/pubsub-recorder ${SCRATCH}/pubsub-recorder)
verify()
if(verify_rc EQUAL 0 OR NOT verify_out MATCHES "/usr/bin/pubsub-recorder is not executable")
  message(FATAL_ERROR "systemd-analyze verify without the program: exit ${verify_rc}:\n"
                      "${verify_out}\nexpected a failure naming /usr/bin/pubsub-recorder")
endif()
message(STATUS "systemd-analyze verify without the program fails: ok")

file(REMOVE_RECURSE ${SCRATCH})
