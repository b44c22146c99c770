#!/usr/bin/env bash
# Configures and builds tsctl against Debian's LibTorch into ./build.
# BUILD_DIR and extra CMake arguments can be given: scripts/build.sh -DFOO=1
# Plain `cmake -S . -B build && cmake --build build` does the same: the
# configure step picks the Python whose torch uses this LibTorch (Debian's
# /usr/bin/python3 with python3-torch) by itself (cmake/TsctlPython.cmake).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@"
cmake --build "$build_dir" -j"$(nproc)"
