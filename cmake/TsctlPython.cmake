# The Python embedded for trace/script --python: one whose torch package uses
# the LibTorch find_package(Torch) found, else none (tsctl is then built
# without --python, and the configure step says so).
#
# Candidates, asked in order (cmake/tsctl_probe_python.py): Python3_EXECUTABLE
# when given (then it is the only one), the venv interpreter next to a torch
# wheel, python3 in each folder of PATH, /usr/bin/python3, /usr/local/bin/python3.
# The first whose `import torch` maps the same libc10 (by real path) wins.
# Results: Python3_EXECUTABLE (chosen), TSCTL_PYTHON_SITE (a venv's
# site-packages, added to the embedded interpreter's path) or
# TSCTL_PYTHON_REASON (why there is none).

set(TSCTL_PYTHON_REASON "")
get_filename_component(_tsctl_torch_libdir "${TORCH_LIBRARY}" DIRECTORY)
get_filename_component(_tsctl_c10 "${_tsctl_torch_libdir}/libc10.so" REALPATH)

set(_candidates "")
if(Python3_EXECUTABLE)
  list(APPEND _candidates "${Python3_EXECUTABLE}")
else()
  if(TSCTL_TORCH_WHEEL_ROOT)
    get_filename_component(_venv "${TSCTL_TORCH_WHEEL_ROOT}/../../../.." ABSOLUTE)
    list(APPEND _candidates "${_venv}/bin/python3" "${_venv}/bin/python")
  endif()
  string(REPLACE ":" ";" _path "$ENV{PATH}")
  foreach(_dir IN LISTS _path)
    list(APPEND _candidates "${_dir}/python3")
  endforeach()
  list(APPEND _candidates /usr/bin/python3 /usr/local/bin/python3)
endif()

# Asking imports torch (seconds each): remember the answer for the same question.
set(_key "${_tsctl_c10};${_candidates}")
if(NOT "${_key}" STREQUAL "${TSCTL_PYTHON_PROBED_FOR}" AND
   NOT (TSCTL_PYTHON_PROBED AND "${Python3_EXECUTABLE}" STREQUAL "${TSCTL_PYTHON_PROBED}"))
  set(_chosen "")
  set(_site "")
  set(_asked "")
  set(_seen "")
  foreach(_py IN LISTS _candidates)
    if(NOT EXISTS "${_py}" OR IS_DIRECTORY "${_py}")
      continue()
    endif()
    if("${_py}" IN_LIST _seen)
      continue()
    endif()
    list(APPEND _seen "${_py}")
    execute_process(COMMAND "${_py}" -W ignore "${CMAKE_CURRENT_LIST_DIR}/tsctl_probe_python.py"
      OUTPUT_VARIABLE _out ERROR_QUIET RESULT_VARIABLE _rc TIMEOUT 180)
    if(_out MATCHES "C10=([^\n]*)")
      set(_c10s "${CMAKE_MATCH_1}")
      string(REGEX MATCH "TORCH=([^\n]*)" _ "${_out}")
      set(_torch "${CMAKE_MATCH_1}")
      if("|${_c10s}|" MATCHES "\\|${_tsctl_c10}\\|")
        set(_chosen "${_py}")
        string(REGEX MATCH "SITE=([^\n]*)" _ "${_out}")
        set(_site "${CMAKE_MATCH_1}")
        break()
      endif()
      list(APPEND _asked "${_py} (torch ${_torch} uses ${_c10s})")
    else()
      list(APPEND _asked "${_py} (no torch)")
    endif()
  endforeach()
  set(TSCTL_PYTHON_PROBED_FOR "${_key}" CACHE INTERNAL "")
  set(TSCTL_PYTHON_PROBED "${_chosen}" CACHE INTERNAL "")
  set(TSCTL_PYTHON_PROBED_SITE "${_site}" CACHE INTERNAL "")
  string(REPLACE ";" ", " _asked "${_asked}")
  set(TSCTL_PYTHON_PROBED_ASKED "${_asked}" CACHE INTERNAL "")
endif()

if(TSCTL_PYTHON_PROBED)
  set(Python3_EXECUTABLE "${TSCTL_PYTHON_PROBED}" CACHE FILEPATH "The Python embedded for trace/script --python")
  if(NOT DEFINED TSCTL_PYTHON_SITE AND TSCTL_PYTHON_PROBED_SITE)
    set(TSCTL_PYTHON_SITE "${TSCTL_PYTHON_PROBED_SITE}")
  endif()
else()
  set(TSCTL_PYTHON_REASON "no Python whose torch uses ${_tsctl_c10} (asked: ${TSCTL_PYTHON_PROBED_ASKED})")
endif()
