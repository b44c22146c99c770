#!/usr/bin/env bash
# The one test command (README.md and .ci/run use it): installs the
# dependencies, builds, and runs every test with CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
scripts/build.sh
cd "${BUILD_DIR:-build}"
ctest --output-on-failure -j"$(nproc)"
