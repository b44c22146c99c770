#!/usr/bin/env bash
# The one test command (README.md and .ci/run use it): installs the
# dependencies, builds against Debian's LibTorch 1.13 and runs every test with
# CTest; builds without LibTorch (TSCTL_WITH_TORCH=OFF) into build-notorch and
# runs its tests; runs the ASan+UBSan leg; then builds and tests against the
# newest LibTorch 2.x from PyPI (scripts/install_torch2.sh's pin, a CUDA
# build, so the CUDA code paths compile) in build-torch2 and checks archives
# across the versions.
#
# The 2.x leg and CI's 90 minutes: its download (about 2.7 GB on a fresh
# machine) starts in the background at once, while the other legs build, and
# the leg itself runs when the time left allows it:
#   TSCTL_TORCH2=auto  (default) run it if at least TSCTL_TORCH2_NEEDS_S
#                      seconds (default 1800) of TSCTL_BUDGET_S (default 4800,
#                      80 minutes) are left after the other legs, and stop it
#                      at the budget. A leg that did not run, or was stopped,
#                      is reported as NOT RUN, never as passed, and does not
#                      fail the run; a leg that ran and failed does.
#   TSCTL_TORCH2=1     always run it, without a time limit; failures fail.
#   TSCTL_TORCH2=0     never.
# TSCTL_NOTORCH=0 skips the build without LibTorch; TSCTL_ASAN=0 skips the
# ASan+UBSan leg (scripts/test_asan.sh; docs/manual/testing.md).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
torch2=${TSCTL_TORCH2:-auto}
budget=${TSCTL_BUDGET_S:-4800}
needs=${TSCTL_TORCH2_NEEDS_S:-1800}
case $torch2 in auto | 0 | 1) ;; *) echo "test: TSCTL_TORCH2 must be auto, 0 or 1, not '$torch2'" >&2; exit 2 ;; esac

scripts/install_deps.sh
# ExecuTorch's C++ runtime (a 19 MB wheel from PyPI): without it the builds
# leave out the .pte runner and its test (pte_run) reports skipped.
scripts/install_executorch_sdk.sh || echo "test: building without ExecuTorch's runtime (.pte runs NOT RUN, pte_run skipped)" >&2
# ccache (CMakeLists.txt) shares the LibTorch-free compilations between the
# legs' build folders; room for all four legs' objects, so that the 2.x leg
# still finds the 1.13 leg's after the ASan leg's are added.
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-10G}

# The 2.x download runs beside the builds (it waits on the network, not the CPU).
torch2_log=$(mktemp /tmp/tsctl-torch2-install.XXXXXX)
# A run that stops early (a failed leg) stops the download too.
trap 'stop_download; rm -f "$torch2_log" "$torch2_log.out"' EXIT
torch2_pid=
if [ "$torch2" != 0 ]; then
  # In a session of its own, so that stopping it stops pip too.
  setsid scripts/install_torch2.sh >"$torch2_log.out" 2>"$torch2_log" &
  torch2_pid=$!
fi
stop_download() { [ -z "$torch2_pid" ] || kill -- -"$torch2_pid" 2>/dev/null || true; }

scripts/build.sh
(cd "${BUILD_DIR:-build}" && ctest --output-on-failure -j"$(nproc)")
echo "test: LibTorch 1.13 leg done at $((SECONDS - start)) s" >&2
if [ "${TSCTL_NOTORCH:-1}" != 0 ]; then
  BUILD_DIR=build-notorch scripts/build.sh -DTSCTL_WITH_TORCH=OFF
  (cd build-notorch && ctest --output-on-failure -j"$(nproc)")
  echo "test: no-LibTorch leg done at $((SECONDS - start)) s" >&2
fi
# ASan+UBSan over the LibTorch-free library, CLI and tests (TSCTL_ASAN=0 skips it).
if [ "${TSCTL_ASAN:-1}" != 0 ]; then
  scripts/test_asan.sh
  echo "test: ASan leg done at $((SECONDS - start)) s" >&2
fi

[ "$torch2" = 0 ] && exit 0
not_run() {
  echo "test: LibTorch 2.x leg NOT RUN (not counted as passed): $*" >&2
  exit 0
}
# Suites of LibTorch-free commands (stamp, diff, the ZIP reader) and the .deb
# recipe: the same code as in the 1.13 and no-LibTorch legs, which ran them;
# the 2.x leg skips them (about 4 minutes of its test time).
torch2_skip='^(stamp_crash|diff_corpus|reader_view_corpus|deb_package)$'
leg() {
  scripts/build_torch2.sh
  # The .pt2 suites make their packages with the venv's torch: the one
  # install_torch2.sh filled (TORCH2_VENV, else .venv-torch2 here).
  local py=${TSCTL_TORCH2_PYTHON:-${TORCH2_VENV:-.venv-torch2}/bin/python}
  case $py in /*) ;; *) py=$PWD/$py ;; esac
  (cd build-torch2 && TSCTL_TORCH2_PYTHON=$py ctest --output-on-failure -j"$(nproc)" -E "$torch2_skip")
  scripts/cross_version_test.sh build build-torch2
}
if [ "$torch2" = 1 ]; then
  wait "$torch2_pid" || { cat "$torch2_log" >&2; echo "test: installing LibTorch 2.x failed" >&2; exit 1; }
  leg
  echo "test: LibTorch 2.x leg done at $((SECONDS - start)) s" >&2
  exit 0
fi
# auto: within the budget only, and where it can build: the wheel is a CUDA
# build, and find_package(Torch) then needs the CUDA toolkit (no GPU).
command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ] ||
  { stop_download; not_run "no CUDA toolkit (nvcc) here, which configuring against the CUDA wheel needs"; }
left=$((budget - (SECONDS - start)))
[ "$left" -ge "$needs" ] || { stop_download; not_run "$left s of the ${budget} s budget left, it needs about $needs s (TSCTL_TORCH2=1 runs it anyway)"; }
# The download may still be going: wait for it within the budget too.
waited=0
while kill -0 "$torch2_pid" 2>/dev/null; do
  sleep 5
  waited=$((waited + 5))
  left=$((budget - (SECONDS - start)))
  [ "$left" -ge "$needs" ] || { stop_download; not_run "the download was not done with $needs s of the budget left ($(tail -1 "$torch2_log"))"; }
done
wait "$torch2_pid" || not_run "installing LibTorch 2.x failed: $(tail -3 "$torch2_log" | tr '\n' ' ')"
echo "test: LibTorch 2.x installed ($(tail -1 "$torch2_log")); $left s of the budget left" >&2
set +e
timeout --kill-after=30 "$left" bash -c "torch2_skip='$torch2_skip'; $(declare -f leg); set -euo pipefail; leg"
rc=$?
set -e
[ $rc = 124 ] || [ $rc = 137 ] && not_run "stopped at the ${budget} s budget after $((SECONDS - start)) s"
[ $rc = 0 ] || { echo "test: LibTorch 2.x leg FAILED (exit $rc)" >&2; exit $rc; }
echo "test: LibTorch 2.x leg done at $((SECONDS - start)) s" >&2
