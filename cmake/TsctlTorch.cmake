# LibTorch for tsctl, optional: TSCTL_WITH_TORCH (default ON when
# find_package(Torch) finds one). Without it only the LibTorch-free library and
# the commands that need no LibTorch (inspect, code, stamp, validate --no-load)
# are built.
#
# A LibTorch inside a PyPI torch wheel is found with PyTorch's own recipe alone
# (-DCMAKE_PREFIX_PATH=$(python -c 'import torch; print(torch.utils.cmake_prefix_path)')
# or -DTorch_DIR=...). This file then does what that recipe leaves to the user:
#  - puts the torch package folder first in CMAKE_PREFIX_PATH, because
#    TorchConfig.cmake finds libtorch/libc10 with find_library, which otherwise
#    prefers a system LibTorch (Debian's /usr/lib/x86_64-linux-gnu/libc10.so);
#  - links with -rpath-link to the wheel's lib/ and nvidia/*/lib folders, where
#    libtorch_cuda.so's own dependencies (libnccl.so.2, ...) are; without it ld
#    takes an older one from the CUDA toolkit (undefined reference to ncclCommResume);
#  - sets TORCH_CUDA_ARCH_LIST when nobody did (tsctl compiles no CUDA code; it
#    skips LibTorch's GPU autodetection, which fails on a machine without a GPU).
# Results: TSCTL_WITH_TORCH, TSCTL_TORCH_WHEEL_ROOT (the torch package folder of
# a wheel, else empty), TSCTL_CXX_ABI (0 or 1, the _GLIBCXX_USE_CXX11_ABI every
# target is compiled with), TSCTL_TORCH_RPATH.

# Finds the folder holding TorchConfig.cmake under each hint.
set(TSCTL_TORCH_WHEEL_ROOT "")
set(_tsctl_hints ${Torch_DIR} ${CMAKE_PREFIX_PATH})
if(DEFINED ENV{Torch_DIR})
  list(APPEND _tsctl_hints "$ENV{Torch_DIR}")
endif()
if(DEFINED ENV{CMAKE_PREFIX_PATH})
  string(REPLACE ":" ";" _tsctl_env_prefix "$ENV{CMAKE_PREFIX_PATH}")
  list(APPEND _tsctl_hints ${_tsctl_env_prefix})
endif()
foreach(_hint IN LISTS _tsctl_hints)
  set(_cfg "")
  foreach(_sub "" "/Torch" "/share/cmake/Torch")
    if(EXISTS "${_hint}${_sub}/TorchConfig.cmake")
      set(_cfg "${_hint}${_sub}")
      break()
    endif()
  endforeach()
  if(_cfg)
    get_filename_component(_root "${_cfg}/../../.." ABSOLUTE)
    # A wheel: the torch Python package, with its libraries in lib/.
    if(EXISTS "${_root}/__init__.py" AND EXISTS "${_root}/lib/libtorch.so")
      set(TSCTL_TORCH_WHEEL_ROOT "${_root}")
      break()
    endif()
  endif()
endforeach()

if(TSCTL_TORCH_WHEEL_ROOT)
  list(PREPEND CMAKE_PREFIX_PATH "${TSCTL_TORCH_WHEEL_ROOT}")
  set(_tsctl_link_dirs "${TSCTL_TORCH_WHEEL_ROOT}/lib")
  file(GLOB _tsctl_nvidia LIST_DIRECTORIES true
    "${TSCTL_TORCH_WHEEL_ROOT}/../nvidia/*/lib" "${TSCTL_TORCH_WHEEL_ROOT}/../nvidia/*/*/lib")
  list(APPEND _tsctl_link_dirs ${_tsctl_nvidia})
  list(JOIN _tsctl_link_dirs ":" _tsctl_link_path)
  add_link_options("LINKER:-rpath-link,${_tsctl_link_path}")
  if(NOT DEFINED TORCH_CUDA_ARCH_LIST AND NOT DEFINED ENV{TORCH_CUDA_ARCH_LIST})
    set(ENV{TORCH_CUDA_ARCH_LIST} "8.0")
  endif()
  message(STATUS "tsctl: LibTorch from the torch wheel at ${TSCTL_TORCH_WHEEL_ROOT}")
endif()

# One find_package(Torch) only: LibTorch's config files do not expect a second.
if(NOT DEFINED TSCTL_WITH_TORCH)
  find_package(Torch QUIET)
  set(_tsctl_torch_default ${Torch_FOUND})
elseif(TSCTL_WITH_TORCH)
  find_package(Torch REQUIRED)
  set(_tsctl_torch_default ON)
else()
  set(_tsctl_torch_default OFF)
endif()
option(TSCTL_WITH_TORCH "Build the LibTorch plugin (graph, bench, validate's load, trace, script)" ${_tsctl_torch_default})

if(TSCTL_WITH_TORCH)
  if(NOT Torch_FOUND)
    message(FATAL_ERROR "tsctl: TSCTL_WITH_TORCH is ON but find_package(Torch) found no LibTorch")
  endif()
  # The ABI flag (_GLIBCXX_USE_CXX11_ABI) must match LibTorch in every target, also
  # those that do not link it, because they share std::string across the plugin boundary.
  separate_arguments(TSCTL_TORCH_FLAGS UNIX_COMMAND "${TORCH_CXX_FLAGS}")
  add_compile_options(${TSCTL_TORCH_FLAGS})
  if(TORCH_CXX_FLAGS MATCHES "_GLIBCXX_USE_CXX11_ABI=([01])")
    set(TSCTL_CXX_ABI ${CMAKE_MATCH_1})
  else()
    set(TSCTL_CXX_ABI 1)
  endif()
  # Installed plugins must find a LibTorch outside the system folders (a PyPI
  # wheel in a venv); Debian's, in /usr/lib, needs nothing.
  get_filename_component(TSCTL_TORCH_LIBDIR "${TORCH_LIBRARY}" DIRECTORY)
  if(TSCTL_TORCH_LIBDIR MATCHES "^/(usr/)?lib")
    set(TSCTL_TORCH_RPATH "")
  else()
    set(TSCTL_TORCH_RPATH "${TSCTL_TORCH_LIBDIR}")
  endif()
  message(STATUS "tsctl: LibTorch ${Torch_VERSION} (${TORCH_LIBRARY})")
else()
  # No LibTorch to agree with: the compiler's default ABI, stated so that
  # consumers of the installed library (tsctl::tsctl, tsctl.pc) use the same.
  set(TSCTL_CXX_ABI 1)
  add_compile_definitions(_GLIBCXX_USE_CXX11_ABI=1)
  set(TSCTL_TORCH_RPATH "")
  set(Torch_VERSION "")
  message(STATUS "tsctl: building without LibTorch (TSCTL_WITH_TORCH=OFF): inspect, code, stamp and validate --no-load only")
endif()
