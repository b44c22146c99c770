#!/usr/bin/env bash
# The main jobs on a bundled archive, first result first: installs what it
# needs, builds the LibTorch-free CLI (the library and tsctl; no LibTorch, no
# test targets) and prints `tsctl inspect` of testdata/traced_cnn.pt (or the
# archives given as arguments); then builds the LibTorch plugin and prints
# `tsctl validate` of the same archives, its second result. One line per
# phase on stderr, with the seconds since the start; the build's progress is
# counted over all of a phase's steps (ninja's [N/M]), a line each tenth. The
# build's own output goes to ${BUILD_DIR:-build-demo}/demo-build.log. A
# Release build in a folder of its own; scripts/test.sh builds build/ as
# RelWithDebInfo, with the tests. scripts/time_demo.sh times it on a fresh
# clone (docs/manual/building.md has the figures).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build-demo}
start=$SECONDS
phase() { echo "demo: $* ($((SECONDS - start)) s so far)" >&2; }
fail() { tail -20 "$log" >&2; echo "demo: failed; the whole log: $log" >&2; exit 1; }

mkdir -p "$build_dir"
log=$build_dir/demo-build.log
: >"$log"
phase "installing packages (scripts/install_deps.sh --minimal; log: $log)"
scripts/install_deps.sh --minimal >>"$log" 2>&1 || fail
# The folder is the demo's own: one configured by another generator (an
# older demo used make) is configured afresh for Ninja.
if [ -f "$build_dir/CMakeCache.txt" ] && ! grep -q '^CMAKE_GENERATOR:INTERNAL=Ninja$' "$build_dir/CMakeCache.txt"; then
  rm -rf "$build_dir/CMakeCache.txt" "$build_dir/CMakeFiles"
fi
phase "configuring $build_dir (Release, Ninja)"
cmake -G Ninja -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release >>"$log" 2>&1 || fail

# build WHAT TARGET...: builds the targets, printing a line each time the
# build passes another tenth of its steps. Ninja counts the steps of all the
# targets asked for ([N/M]), so 100 % is the end of the phase.
build() {
  local what=$1 last=-1 line
  shift
  phase "building $what ($*; log: $log)"
  if ! cmake --build "$build_dir" -j"$(nproc)" --target "$@" 2>&1 | tee -a "$log" | {
    while IFS= read -r line; do
      # CMake's own step first ("Re-checking globbed directories") is not the build's.
      if [[ $line =~ ^\[([0-9]+)/([0-9]+)\]\ (.*) ]] && [[ ${BASH_REMATCH[3]} != Re-checking* ]]; then
        local pct=$((BASH_REMATCH[1] * 100 / BASH_REMATCH[2]))
        if ((pct / 10 > last)); then
          last=$((pct / 10))
          phase "building $what: $pct % (${BASH_REMATCH[1]} of ${BASH_REMATCH[2]} steps)"
        fi
      fi
    done
  }; then
    fail
  fi
}

if [ $# -eq 0 ]; then set -- testdata/traced_cnn.pt; fi
# tsctl_app is the CLI and the library; tsctl_torch the LibTorch plugin (it
# brings tsctl-torch-server, which LibTorch children are forked from).
build "the CLI without LibTorch" tsctl_app
phase "first result: tsctl inspect $*"
"$build_dir"/bin/tsctl inspect "$@"
first=$((SECONDS - start))
build "the LibTorch plugin" tsctl_torch
phase "second result: tsctl validate $*"
rc=0
"$build_dir"/bin/tsctl validate "$@" || rc=$?
echo "demo: first result (inspect) after $first s, second (validate) after $((SECONDS - start)) s" >&2
exit "$rc"
