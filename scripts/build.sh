#!/usr/bin/env bash
# Configures and builds tsctl against Debian's LibTorch into ./build.
# BUILD_DIR and extra CMake arguments can be given: scripts/build.sh -DFOO=1
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
# The Python embedded for trace/script --python must be the one whose torch
# uses this LibTorch: Debian's /usr/bin/python3 with python3-torch.
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPython3_EXECUTABLE=/usr/bin/python3 "$@"
cmake --build "$build_dir" -j"$(nproc)"
