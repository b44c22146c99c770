#!/usr/bin/env bash
# The main job on a bundled archive: installs what it needs, builds only what
# it runs (the CLI, the library and the LibTorch plugin; no test targets:
# scripts/test.sh builds those), then inspects testdata/traced_cnn.pt (or the
# archives given as arguments). One line per phase on stderr, with its time,
# so that a person sees it move; the build's own output goes to
# ${BUILD_DIR:-build-demo}/demo-build.log. A Release build (no debug
# information) in a folder of its own: 287 s against RelWithDebInfo's 369 s
# on a 2-core machine (docs/manual/building.md); scripts/test.sh builds
# build/ as RelWithDebInfo, with the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build-demo}
start=$SECONDS
phase() { echo "demo: $* ($((SECONDS - start)) s so far)" >&2; }

mkdir -p "$build_dir"
log=$build_dir/demo-build.log
: >"$log"
phase "installing packages (scripts/install_deps.sh --minimal; log: $log)"
scripts/install_deps.sh --minimal >>"$log" 2>&1 || { tail -20 "$log" >&2; exit 1; }
phase "configuring $build_dir"
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release >>"$log" 2>&1 ||
  { tail -20 "$log" >&2; exit 1; }
# tsctl_app is the CLI (it brings the library and tsctl-torch-server, which
# LibTorch children are forked from), tsctl_torch the LibTorch plugin.
targets=(tsctl_app tsctl_torch)
phase "building ${#targets[@]} targets and what they need (${targets[*]}; log: $log)"
# One line each time the build passes another tenth of its steps (make's
# "[ 40%]" prefixes), so that the 5 minutes of a first build visibly move.
progress() {
  local last=-1 line
  while IFS= read -r line; do
    if [[ $line =~ ^\[\ *([0-9]+)%\] ]] && ((BASH_REMATCH[1] / 10 > last)); then
      last=$((BASH_REMATCH[1] / 10))
      phase "building: ${BASH_REMATCH[1]}%"
    fi
  done
}
if ! cmake --build "$build_dir" -j"$(nproc)" --target "${targets[@]}" 2>&1 | tee -a "$log" | progress; then
  tail -20 "$log" >&2
  exit 1
fi
phase "built; running tsctl inspect"
if [ $# -eq 0 ]; then set -- testdata/traced_cnn.pt; fi
exec "$build_dir"/bin/tsctl inspect "$@"
