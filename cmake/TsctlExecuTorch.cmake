# ExecuTorch's C++ runtime, for validate's runs of .pte programs
# (tsctl-pte-runner, lib/src/executorch/). PyPI's executorch wheel ships it;
# scripts/install_executorch_sdk.sh unpacks it into .executorch-sdk/. Its
# CMake package's imported targets need CMake 3.28 (Debian 12 has 3.25), so
# the libraries and headers are found here by path, with the compile
# definitions and C++ standard its config documents
# (EXECUTORCH_COMPILE_DEFINITIONS, EXECUTORCH_CXX_STANDARD).
#
#   TSCTL_EXECUTORCH_SDK  the unpacked wheel's executorch/ folder
#                         (default .executorch-sdk/executorch); "" or a
#                         folder without libexecutorch.so: built without the
#                         runtime (validate says how to get it)
# Sets TSCTL_WITH_EXECUTORCH, TSCTL_EXECUTORCH_VERSION, TSCTL_EXECUTORCH_LIBS
# (the libraries linked, which an install puts beside the runner) and the
# interface target tsctl::executorch.
set(TSCTL_EXECUTORCH_SDK "${PROJECT_SOURCE_DIR}/.executorch-sdk/executorch" CACHE PATH
    "ExecuTorch's C++ runtime (the executorch wheel's executorch/ folder: scripts/install_executorch_sdk.sh)")
set(TSCTL_WITH_EXECUTORCH OFF)
set(_et "${TSCTL_EXECUTORCH_SDK}")
if(TSCTL_SANITIZE)
  message(STATUS "ExecuTorch runtime: left out of sanitizer builds")
elseif(_et AND EXISTS "${_et}/lib/libexecutorch.so" AND EXISTS "${_et}/include/executorch/extension/module/module.h")
  set(TSCTL_EXECUTORCH_VERSION "unknown")
  if(EXISTS "${_et}/share/cmake/executorch-config-version.cmake")
    file(STRINGS "${_et}/share/cmake/executorch-config-version.cmake" _et_version REGEX "^set\\(PACKAGE_VERSION ")
    if(_et_version MATCHES "\"([^\"]+)\"")
      set(TSCTL_EXECUTORCH_VERSION "${CMAKE_MATCH_1}")
    endif()
  endif()
  add_library(tsctl_executorch INTERFACE)
  add_library(tsctl::executorch ALIAS tsctl_executorch)
  # The vendored c10 headers first: Debian's LibTorch c10 headers must not be found instead.
  target_include_directories(tsctl_executorch SYSTEM INTERFACE "${_et}/include"
                             "${_et}/include/executorch/runtime/core/portable_type/c10")
  target_compile_definitions(tsctl_executorch INTERFACE C10_USING_CUSTOM_GENERATED_MACROS ET_EVENT_TRACER_ENABLED)
  # The kernels and backends register themselves from static initializers:
  # linked whole (--no-as-needed), or the linker drops them.
  set(_et_libs "")
  foreach(_lib executorch executorch_kernels_optimized executorch_kernels_quantized executorch_backend_xnnpack
               executorch_threadpool executorch_etdump)
    if(EXISTS "${_et}/lib/lib${_lib}.so")
      list(APPEND _et_libs "${_et}/lib/lib${_lib}.so")
    endif()
  endforeach()
  target_link_libraries(tsctl_executorch INTERFACE "-Wl,--no-as-needed" ${_et_libs} "-Wl,--as-needed")
  set(TSCTL_EXECUTORCH_LIBDIR "${_et}/lib")
  set(TSCTL_EXECUTORCH_LIBS ${_et_libs})
  set(TSCTL_WITH_EXECUTORCH ON)
  message(STATUS "ExecuTorch runtime: ${TSCTL_EXECUTORCH_VERSION} in ${_et}")
else()
  message(STATUS "ExecuTorch runtime: not found (${_et}); validate reads .pte programs without running them "
                 "(scripts/install_executorch_sdk.sh, then configure again, runs them)")
endif()
unset(_et)
