# FlatBuffers for reading ExecuTorch programs (.pte, .ptd, .bpte): flatc, to
# compile lib/src/pte/*.fbs at build time, and the headers its generated code
# includes (header-only use: nothing is linked, the installed library needs
# no FlatBuffers package). Sets TSCTL_FLATC and TSCTL_FLATBUFFERS_INCLUDE_DIR.
# flatc's generated code refuses (static_assert) headers of another version,
# so a mismatch stops here in one message instead of in the compiler.
find_program(TSCTL_FLATC flatc)
find_path(TSCTL_FLATBUFFERS_INCLUDE_DIR flatbuffers/flatbuffers.h)
if(NOT TSCTL_FLATC OR NOT TSCTL_FLATBUFFERS_INCLUDE_DIR)
  set(_missing "")
  if(NOT TSCTL_FLATC)
    list(APPEND _missing "flatc (Debian: flatbuffers-compiler)")
  endif()
  if(NOT TSCTL_FLATBUFFERS_INCLUDE_DIR)
    list(APPEND _missing "flatbuffers/flatbuffers.h (Debian: libflatbuffers-dev)")
  endif()
  list(JOIN _missing " and " _missing)
  message(FATAL_ERROR "tsctl reads ExecuTorch programs with FlatBuffers and cannot find ${_missing}: "
                      "install Debian's flatbuffers-compiler and libflatbuffers-dev (scripts/install_deps.sh does)")
endif()
execute_process(COMMAND ${TSCTL_FLATC} --version OUTPUT_VARIABLE _flatc_out RESULT_VARIABLE _flatc_rc ERROR_QUIET)
string(REGEX MATCH "[0-9]+\\.[0-9]+\\.[0-9]+" _flatc_version "${_flatc_out}")
file(STRINGS ${TSCTL_FLATBUFFERS_INCLUDE_DIR}/flatbuffers/base.h _fb_lines
     REGEX "^#define FLATBUFFERS_VERSION_(MAJOR|MINOR|REVISION) ")
set(_fb_version "")
foreach(_part MAJOR MINOR REVISION)
  string(REGEX MATCH "FLATBUFFERS_VERSION_${_part} ([0-9]+)" _m "${_fb_lines}")
  list(APPEND _fb_version ${CMAKE_MATCH_1})
endforeach()
list(JOIN _fb_version "." _fb_version)
if(NOT _flatc_rc EQUAL 0 OR NOT _flatc_version STREQUAL _fb_version)
  message(FATAL_ERROR "tsctl reads ExecuTorch programs with FlatBuffers: ${TSCTL_FLATC} is version "
                      "'${_flatc_version}' but ${TSCTL_FLATBUFFERS_INCLUDE_DIR}/flatbuffers is '${_fb_version}'; "
                      "install Debian's flatbuffers-compiler and libflatbuffers-dev together (scripts/install_deps.sh), "
                      "or point TSCTL_FLATC and TSCTL_FLATBUFFERS_INCLUDE_DIR at one release")
endif()
message(STATUS "tsctl: FlatBuffers ${_fb_version} (${TSCTL_FLATC}) for ExecuTorch programs")
