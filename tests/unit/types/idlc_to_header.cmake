# Turns the XTypes byte arrays of an idlc-generated C file (TYPE_INFO_CDR_<T>: the
# TypeInformation, TYPE_MAP_CDR_<T>: the TypeMapping, one pair per topic type) into a C++ header:
#   namespace NS { inline constexpr unsigned char info_<T>[] = {...}; ... map_<T>[] ... }
# Usage: cmake -DIN=file.c -DOUT=file.hpp -DNS=namespace -P idlc_to_header.cmake
file(READ "${IN}" text)
string(REGEX MATCHALL "#define TYPE_(INFO|MAP)_CDR_[A-Za-z0-9_]+ \\(unsigned char \\[\\]\\){[^}]*}"
       defs "${text}")
if(NOT defs)
  message(FATAL_ERROR "${IN}: no TYPE_INFO_CDR_/TYPE_MAP_CDR_ arrays")
endif()
set(out "// Generated from ${IN} by idlc_to_header.cmake. Do not edit.\n#pragma once\n\n")
string(APPEND out "namespace ${NS} {\n")
foreach(def IN LISTS defs)
  string(REGEX MATCH "^#define TYPE_(INFO|MAP)_CDR_([A-Za-z0-9_]+) " _ "${def}")
  string(TOLOWER "${CMAKE_MATCH_1}" kind)
  set(name "${CMAKE_MATCH_2}")
  string(REGEX REPLACE "^[^{]*{" "" body "${def}")
  string(REPLACE "}" "" body "${body}")
  string(REPLACE "\\" "" body "${body}")
  string(REGEX REPLACE "[ \n]+" " " body "${body}")
  string(APPEND out "inline constexpr unsigned char ${kind}_${name}[] = {${body}};\n")
endforeach()
string(APPEND out "}  // namespace ${NS}\n")
file(WRITE "${OUT}" "${out}")
