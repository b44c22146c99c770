#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz with clang (ASan+UBSan) into
# build-fuzz and fuzzes for MINUTES in all, split evenly over the targets (or
# all of it on TARGET): zip, pickle, inspect, validate, stamp, pte.
#   scripts/fuzz.sh MINUTES [TARGET]
# Seeds: tests/fuzz/seeds and tests/fuzz/regression (pte: also the ExecuTorch
# programs of ../shared/corpus/pte, where present); the growing corpus stays
# in build-fuzz/corpus/TARGET; crashing inputs land in
# build-fuzz/artifacts/TARGET/ (copy each into tests/fuzz/regression/ once it
# is fixed). Prints, per target, the seconds fuzzed and the executions run.
set -euo pipefail
cd "$(dirname "$0")/.."
minutes=${1:?usage: scripts/fuzz.sh MINUTES [TARGET]}
targets=${2:-zip pickle inspect validate stamp pte}
build_dir=${FUZZ_BUILD_DIR:-build-fuzz}
jobs=${JOBS:-2}
CC=${CC:-clang-14} CXX=${CXX:-clang++-14}
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" \
  -DTSCTL_FUZZ=ON "${@:3}" >/dev/null
for t in $targets; do cmake --build "$build_dir" -j"$jobs" --target "fuzz_$t" >/dev/null; done
n=$(wc -w <<<"$targets")
seconds=$(( minutes * 60 / n ))
[ "$seconds" -ge 1 ] || seconds=1
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
status=0
for t in $targets; do
  corpus="$build_dir/corpus/$t"
  artifacts="$build_dir/artifacts/$t"
  mkdir -p "$corpus" "$artifacts"
  log="$build_dir/fuzz_$t.log"
  rc=0
  extra=()
  [ "$t" = pte ] && [ -d ../shared/corpus/pte ] && extra=(../shared/corpus/pte)
  "$build_dir/bin/fuzz_$t" "$corpus" tests/fuzz/seeds tests/fuzz/regression "${extra[@]}" \
    -dict=tests/fuzz/tsctl.dict -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2560 \
    -max_len=1048576 -artifact_prefix="$artifacts/" -print_final_stats=1 >"$log" 2>&1 || rc=$?
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o "[0-9]*$" | tail -1 || true)
  echo "fuzz $t: ${seconds} s, ${execs:-?} executions, exit $rc (log $log)"
  [ "$rc" = 0 ] || status=1
done
if ls "$build_dir"/artifacts/*/* >/dev/null 2>&1; then echo "crashing inputs: $(ls "$build_dir"/artifacts/*/* 2>/dev/null | tr "\n" " ")"; fi
exit $status
