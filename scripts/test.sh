#!/usr/bin/env bash
# The one test command (README.md and .ci/run use it): installs the
# dependencies, builds against Debian's LibTorch 1.13 and runs every test with
# CTest; then does the same against LibTorch 2.x from PyPI (a CUDA build, so
# the CUDA code paths compile) in build-torch2. TSCTL_TORCH2=0 skips the 2.x
# half (it downloads about 2.7 GB on a fresh machine). Between the two,
# scripts/test_asan.sh runs the sanitizer leg (TSCTL_ASAN=0 skips it).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
scripts/build.sh
(cd "${BUILD_DIR:-build}" && ctest --output-on-failure -j"$(nproc)")
# ASan+UBSan over the LibTorch-free library, CLI and tests (TSCTL_ASAN=0 skips).
if [ "${TSCTL_ASAN:-1}" != 0 ]; then
  scripts/test_asan.sh
fi
if [ "${TSCTL_TORCH2:-1}" != 0 ]; then
  scripts/build_torch2.sh
  (cd build-torch2 && ctest --output-on-failure -j"$(nproc)")
  scripts/cross_version_test.sh build build-torch2
fi
