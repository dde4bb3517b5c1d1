# The Debian package test (cmake -P; registered in CMakeLists.txt next to this file): runs
# `cpack -G DEB` with the build's CPackConfig.cmake, its staging directory and the .deb under
# SCRATCH (nothing is written into the source tree), and checks the package:
# 1. its control fields (dpkg -f): Package, Version (the project's, release 1), Architecture
#    (dpkg's), Maintainer, Section, Description, and Depends naming each package in
#    `expected_depends` (the packages of the shared libraries the programs load, Debian 12);
# 2. its files (dpkg -x into SCRATCH/root): nothing outside usr/; in usr/bin exactly
#    pubsub-recorder, pubsub-replay and pubsub-perftest, without RPATH/RUNPATH; the unit
#    usr/UNITDIR/pubsub-recorder@.service with ExecStart=/usr/bin/pubsub-recorder; the example
#    configuration, byte for byte the source's; the static libraries, headers and CMake package;
# 3. every program runs from SCRATCH/root with --help, LD_LIBRARY_PATH unset (exit 0, usage on
#    stdout), and the packaged example passes pubsub-recorder --check-config.
# SCRATCH is created here and removed at the end when everything passed (kept for a look when
# something failed).
#   -DBUILD_DIR= -DSOURCE_DIR= -DSCRATCH= -DCPACK= -DVERSION= -DLIBDIR= -DUNITDIR= -DDATADIR=
cmake_minimum_required(VERSION 3.25)
foreach(v BUILD_DIR SOURCE_DIR SCRATCH CPACK VERSION LIBDIR UNITDIR DATADIR)
  if(NOT DEFINED ${v} OR "${${v}}" STREQUAL "")
    message(FATAL_ERROR "deb_test.cmake: -D${v}= missing")
  endif()
endforeach()
set(root ${SCRATCH}/root)
set(expected_depends libc6 libstdc++6 libgcc-s1 libsqlite3-0 liblz4-1 libisal2 libspdlog1.10-fmt9
                     libfmt9 libcycloneddsidl0 zlib1g libdeflate0 libsystemd0 libssl3)

function(run what)
  string(TIMESTAMP t0 "%s")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                  WORKING_DIRECTORY ${SCRATCH})
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

# The package.
run("cpack -G DEB" ${CPACK} -G DEB --config ${BUILD_DIR}/CPackConfig.cmake -B ${SCRATCH}/cpack)
file(GLOB debs ${SCRATCH}/cpack/*.deb)
run("dpkg --print-architecture" dpkg --print-architecture)
string(STRIP "${run_out}" arch)
set(deb_name pubsub-recorder_${VERSION}-1_${arch}.deb)
if(NOT debs STREQUAL "${SCRATCH}/cpack/${deb_name}")
  message(FATAL_ERROR "cpack made ${debs}, expected exactly ${deb_name}")
endif()
set(deb ${SCRATCH}/cpack/${deb_name})

# 1. Control fields.
run("dpkg -I" dpkg -I ${deb})
message(STATUS "dpkg -I ${deb_name}:\n${run_out}")
foreach(field Package Version Architecture Maintainer Section Description Depends)
  run("dpkg -f ${field}" dpkg -f ${deb} ${field})
  string(STRIP "${run_out}" value_${field})
endforeach()
foreach(check "Package;pubsub-recorder" "Version;${VERSION}-1" "Architecture;${arch}"
              "Section;net")
  list(GET check 0 field)
  list(GET check 1 want)
  if(NOT value_${field} STREQUAL want)
    message(FATAL_ERROR "${field}: \"${value_${field}}\", expected \"${want}\"")
  endif()
endforeach()
if(NOT value_Maintainer MATCHES "^[^<>]+ <[^<>@ ]+@[^<>@ ]+>$")
  message(FATAL_ERROR "Maintainer is not \"Name <address>\": \"${value_Maintainer}\"")
endif()
if(NOT value_Description MATCHES "^record/replay service for DDS \\(RTPS\\)[^\n]*\n .*pubsub-replay inspects")
  message(FATAL_ERROR "Description has no synopsis and long description:\n${value_Description}")
endif()
# "libc6 (>= 2.34), libfmt9 (>= 9.1.0+ds1), ..." -> package names.
string(REGEX REPLACE " *\\([^)]*\\)" "" depends "${value_Depends}")
string(REGEX REPLACE " *[,|] *" ";" depends "${depends}")
foreach(p IN LISTS expected_depends)
  if(NOT p IN_LIST depends)
    message(FATAL_ERROR "Depends lacks ${p}: ${value_Depends}")
  endif()
endforeach()

# 2. Files.
run("dpkg -x" dpkg -x ${deb} ${root})
file(GLOB top RELATIVE ${root} ${root}/*)
if(NOT top STREQUAL "usr")
  message(FATAL_ERROR "the package installs outside /usr: ${top}")
endif()
file(GLOB programs RELATIVE ${root}/usr/bin ${root}/usr/bin/*)
list(SORT programs)
if(NOT programs STREQUAL "pubsub-perftest;pubsub-recorder;pubsub-replay")
  message(FATAL_ERROR "usr/bin holds ${programs}, expected pubsub-perftest, pubsub-recorder, "
                      "pubsub-replay")
endif()
set(unit ${root}/usr/${UNITDIR}/pubsub-recorder@.service)
foreach(f ${unit} usr/${DATADIR}/pubsub-recorder/recorder.json
          usr/${LIBDIR}/libpubsub.a usr/${LIBDIR}/libpubsub_common.a
          usr/${LIBDIR}/libpubsub_storage.a usr/${LIBDIR}/libpubsub_config.a
          usr/${LIBDIR}/libpubsub_types.a usr/${LIBDIR}/libpubsub_types_idl.a
          usr/${LIBDIR}/cmake/pubsub/pubsubConfig.cmake
          usr/${LIBDIR}/cmake/pubsub/pubsubConfigVersion.cmake
          usr/${LIBDIR}/cmake/pubsub/pubsubTargets.cmake usr/include/pubsub/participant.hpp
          usr/include/storage/segment_writer.hpp usr/include/config/recorder_config.hpp)
  get_filename_component(f ${f} ABSOLUTE BASE_DIR ${root})
  if(NOT EXISTS ${f})
    message(FATAL_ERROR "not in the package: ${f}")
  endif()
endforeach()
file(STRINGS ${unit} exec_start REGEX "^ExecStart=")
if(NOT exec_start STREQUAL "ExecStart=/usr/bin/pubsub-recorder --config /etc/pubsub-recorder/%i.json")
  message(FATAL_ERROR "the packaged unit's ${exec_start} is not /usr/bin/pubsub-recorder's")
endif()
run("example configuration as in the source tree" ${CMAKE_COMMAND} -E compare_files
    ${root}/usr/${DATADIR}/pubsub-recorder/recorder.json ${SOURCE_DIR}/config/examples/recorder.json)

# 3. The programs, from the scratch root with the system's libraries only.
foreach(program IN LISTS programs)
  run("readelf -d ${program}" readelf -d ${root}/usr/bin/${program})
  if(run_out MATCHES "R(UN)?PATH")
    message(FATAL_ERROR "${program} has an RPATH/RUNPATH:\n${run_out}")
  endif()
  run("${program} --help" ${CMAKE_COMMAND} -E env --unset=LD_LIBRARY_PATH
      ${root}/usr/bin/${program} --help)
  if(NOT run_out MATCHES "[Uu]sage")
    message(FATAL_ERROR "${program} --help printed no usage:\n${run_out}")
  endif()
endforeach()
run("pubsub-recorder --check-config on the packaged example"
    ${root}/usr/bin/pubsub-recorder --config ${root}/usr/${DATADIR}/pubsub-recorder/recorder.json
    --path ${SCRATCH}/recording --check-config)

file(REMOVE_RECURSE ${SCRATCH})
