#!/usr/bin/env bash
# ASan+UBSan leg of scripts/test.sh: builds the LibTorch-free library, the
# CLI, the unit tests and the fuzz replay drivers with
# -fsanitize=address,undefined (TSCTL_SANITIZE, no plugins) into build-asan,
# then runs the unit tests, the replay of tests/fuzz/{seeds,regression} and
# every CLI case that needs no LibTorch (inspect, stamp, code without
# --compiled, validate --no-load). Any sanitizer report fails the run.
# Prints the seconds it took (build and tests) at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
build_dir=${ASAN_BUILD_DIR:-build-asan}
jobs=${JOBS:-$(nproc)}
# -O1 -g1 (line tables only): what ASan's documentation suggests, and half the
# compile time of -O2 -g; reports still name file and line.
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPython3_EXECUTABLE=/usr/bin/python3 \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" -DTSCTL_SANITIZE=ON "$@" >/dev/null
cmake --build "$build_dir" -j"$jobs" --target tsctl_app tsctl_unit \
  fuzz_replay_zip fuzz_replay_pickle fuzz_replay_inspect fuzz_replay_validate fuzz_replay_stamp fuzz_replay_pte
# CLI cases whose command needs no LibTorch.
names=()
for c in tests/cli/cases/*.cmd; do
  read -r -a words <"$c"
  cmdline=" ${words[*]} "
  case "${words[0]:-}" in
    inspect|stamp) ;;
    code) [[ $cmdline == *" --compiled "* ]] && continue ;;
    validate) [[ $cmdline == *" --no-load "* ]] || continue ;;
    *) continue ;;
  esac
  n=$(basename "$c" .cmd)
  names+=("cli\\.${n}\$")
done
regex="^unit\$|^unit_corpus\$|^fuzz_replay\\.|$(IFS='|'; echo "${names[*]/#/^}")"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
(cd "$build_dir" && ctest --output-on-failure -j"$jobs" -R "$regex")
echo "test_asan: $(( $(date +%s) - start )) s (build and tests, ${#names[@]} CLI cases)"
