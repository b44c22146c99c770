#!/usr/bin/env bash
# Builds tsctl against LibTorch 2.x from PyPI (scripts/install_torch2.sh) into
# ./build-torch2, for CI and for checking the 1.13/2.x portability. Then:
#   cd build-torch2 && ctest --output-on-failure -j2
# BUILD_DIR and extra CMake arguments can be given: scripts/build_torch2.sh -DFOO=1
#
# This is PyPI's recipe and nothing more: CMAKE_PREFIX_PATH names the wheel's
# torch.utils.cmake_prefix_path. tsctl's CMake (cmake/TsctlTorch.cmake) puts
# the wheel's libraries first, links against its nvidia/* folders and picks the
# venv's Python for trace/script --python (cmake/TsctlPython.cmake).
# The wheel is a CUDA build: find_package(Torch) then needs the CUDA toolkit (nvcc,
# found through PATH or /usr/local/cuda, or give -DCUDAToolkit_ROOT=... and
# -DCMAKE_CUDA_COMPILER=...); without it the configure step fails with "Your
# installed Caffe2 version uses CUDA but I cannot find the CUDA libraries".
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build-torch2}

start=$SECONDS
cmake_prefix=$(scripts/install_torch2.sh)   # .../site-packages/torch/share/cmake
echo "build_torch2: install step $((SECONDS - start)) s; CMake files at $cmake_prefix" >&2

start=$SECONDS
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_PREFIX_PATH=$cmake_prefix" "$@"
echo "build_torch2: configure step $((SECONDS - start)) s" >&2

start=$SECONDS
nice -n 10 cmake --build "$build_dir" -j"$(nproc)"
echo "build_torch2: build step $((SECONDS - start)) s" >&2
