# The install test (cmake -P; registered in CMakeLists.txt next to this file): installs the build
# into SCRATCH/prefix with `cmake --install`, configures and builds consumer/ (a separate project:
# find_package(pubsub CONFIG REQUIRED)) against that prefix alone, runs it (a record written and
# read back, the installed example configuration loaded) and compares its output exactly, runs
# every installed program with --help (exit 0, usage on stdout) and checks the installed example
# with `pubsub-recorder --check-config`. SCRATCH is created here and removed at the end when
# everything passed (kept for a look when something failed).
#   -DBUILD_DIR= -DCONSUMER_DIR= -DSCRATCH= -DLIBDIR= -DBINDIR= -DDATADIR= -DGENERATOR=
#   -DCXX_COMPILER= -DCXX_FLAGS= -DEXE_LINKER_FLAGS= -DBUILD_TYPE=
foreach(v BUILD_DIR CONSUMER_DIR SCRATCH LIBDIR BINDIR DATADIR GENERATOR CXX_COMPILER)
  if(NOT DEFINED ${v} OR "${${v}}" STREQUAL "")
    message(FATAL_ERROR "install_test.cmake: -D${v}= missing")
  endif()
endforeach()
set(prefix ${SCRATCH}/prefix)
set(consumer_build ${SCRATCH}/consumer-build)

function(run what)
  string(TIMESTAMP t0 "%s")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(TIMESTAMP t1 "%s")
  math(EXPR secs "${t1} - ${t0}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}): ${ARGN}\n${out}\n${err}\n(left in ${SCRATCH})")
  endif()
  message(STATUS "${what}: ok (${secs} s)")
  set(run_out "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${SCRATCH})  # a previous failed run's
file(MAKE_DIRECTORY ${SCRATCH})

# 1. Install.
run("cmake --install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
foreach(f ${BINDIR}/pubsub-recorder ${BINDIR}/pubsub-replay ${BINDIR}/pubsub-perftest
          ${LIBDIR}/libpubsub.a ${LIBDIR}/libpubsub_common.a ${LIBDIR}/libpubsub_storage.a
          ${LIBDIR}/libpubsub_config.a ${LIBDIR}/libpubsub_types.a ${LIBDIR}/libpubsub_types_idl.a
          ${LIBDIR}/cmake/pubsub/pubsubConfig.cmake
          ${LIBDIR}/cmake/pubsub/pubsubConfigVersion.cmake
          ${LIBDIR}/cmake/pubsub/pubsubTargets.cmake include/pubsub/participant.hpp
          include/storage/segment_writer.hpp include/common/expected.hpp
          include/config/recorder_config.hpp include/types/cdr.hpp
          ${DATADIR}/pubsub-recorder/recorder.json)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "not installed: ${prefix}/${f}")
  endif()
endforeach()

# 2. The consumer, against the scratch prefix only (no package registry), with the build's
#    compiler and flags (the sanitizer presets' libraries need their runtime).
run("configure consumer" ${CMAKE_COMMAND} -S ${CONSUMER_DIR} -B ${consumer_build} -G ${GENERATOR}
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
    -DCMAKE_CXX_COMPILER=${CXX_COMPILER} "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}"
    "-DCMAKE_EXE_LINKER_FLAGS=${EXE_LINKER_FLAGS}" -DCMAKE_BUILD_TYPE=${BUILD_TYPE})
file(STRINGS ${consumer_build}/CMakeCache.txt pubsub_dir REGEX "^pubsub_DIR:")
if(NOT pubsub_dir STREQUAL "pubsub_DIR:PATH=${prefix}/${LIBDIR}/cmake/pubsub")
  message(FATAL_ERROR "the consumer found pubsub elsewhere: ${pubsub_dir}")
endif()
run("build consumer" ${CMAKE_COMMAND} --build ${consumer_build})
run("run consumer" ${consumer_build}/consumer ${prefix}/${DATADIR}/pubsub-recorder/recorder.json)
set(expected "record topic 1 writer 1 sequence 1 reception 2000: hello from an installed pubsub
records 1
default_batch_message_size(1500) 14792
config domain 0 storage.path recordings/example compression lz4
")
if(NOT run_out STREQUAL expected)
  message(FATAL_ERROR "consumer printed:\n${run_out}\nexpected:\n${expected}")
endif()

# 3. The installed programs.
foreach(program pubsub-recorder pubsub-replay pubsub-perftest)
  run("${program} --help" ${prefix}/${BINDIR}/${program} --help)
  if(NOT run_out MATCHES "[Uu]sage")
    message(FATAL_ERROR "${program} --help printed no usage:\n${run_out}")
  endif()
endforeach()
run("pubsub-recorder --check-config on the installed example"
    ${prefix}/${BINDIR}/pubsub-recorder --config ${prefix}/${DATADIR}/pubsub-recorder/recorder.json
    --path ${SCRATCH}/recording --check-config)

file(REMOVE_RECURSE ${SCRATCH})
