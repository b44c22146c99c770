#!/usr/bin/env bash
# The main job on a bundled archive: installs, builds, then inspects
# testdata/traced_cnn.pt (or the archives given as arguments).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh >&2
scripts/build.sh >/dev/null
if [ $# -eq 0 ]; then set -- testdata/traced_cnn.pt; fi
exec "${BUILD_DIR:-build}"/bin/tsctl inspect "$@"
