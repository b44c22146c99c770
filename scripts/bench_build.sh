#!/usr/bin/env bash
# What a build costs, and what its optimisation level buys: builds the
# LibTorch-free CLI (target tsctl_app: the library and tsctl) from an empty
# folder once per configuration below, with ccache off and Ninja, and prints
# each build's wall and CPU seconds; then times the same work with each
# build's tsctl (inspect --json and validate --no-load of every archive in
# testdata/ and ../shared/corpus, ROUNDS rounds, the median round) and prints
# it as a ratio to the first configuration's.
#   scripts/bench_build.sh            the configurations below
#   ROUNDS=5 WORK=/tmp/bb scripts/bench_build.sh
# Configurations: the default (unity batches, -O2), -O3 (CMake's Release),
# and file by file (TSCTL_UNITY=OFF) at -O2. docs/manual/building.md has the
# figures. Takes some 8 minutes on 2 cores.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=${WORK:-$(mktemp -d)}
mkdir -p "$work"
rounds=${ROUNDS:-3}
configs=(
  "unity -O2|-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG"
  "unity -O3|-DCMAKE_CXX_FLAGS_RELEASE=-O3 -DNDEBUG"
  "file by file -O2|-DTSCTL_UNITY=OFF;-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG"
)
archives=()
while IFS= read -r -d '' f; do archives+=("$f"); done < <(
  find "$repo/testdata" "$repo/../shared/corpus" -maxdepth 2 -type f \
    \( -name '*.pt' -o -name '*.pt2' -o -name '*.ptl' -o -name '*.pth' -o -name '*.pte' \) -print0 2>/dev/null | sort -z)
echo "bench_build: ${#configs[@]} builds in $work; then $rounds rounds over ${#archives[@]} archives"
i=0
for c in "${configs[@]}"; do
  name=${c%%|*}
  IFS=';' read -r -a flags <<<"${c#*|}"
  dir=$work/b$i
  rm -rf "$dir"
  cmake -G Ninja -S "$repo" -B "$dir" -DCMAKE_BUILD_TYPE=Release -DTSCTL_WITH_TORCH=OFF -DTSCTL_CCACHE=OFF \
    -DTSCTL_BUILD_TESTS=OFF "${flags[@]}" >"$dir.log" 2>&1
  /usr/bin/time -f '%e %U %S' -o "$dir.time" cmake --build "$dir" -j"$(nproc)" --target tsctl_app >>"$dir.log" 2>&1
  read -r wall user sys <"$dir.time"
  printf 'build  %-18s %7.1f s wall %7.1f s CPU\n' "$name" "$wall" "$(echo "$user + $sys" | bc)"
  i=$((i + 1))
done
# One round: every archive through inspect --json and validate --no-load.
round() {
  local tsctl=$1 f
  for f in "${archives[@]}"; do
    "$tsctl" inspect --json "$f" >/dev/null 2>&1 || true
    "$tsctl" validate --no-load "$f" >/dev/null 2>&1 || true
  done
}
base=
i=0
for c in "${configs[@]}"; do
  name=${c%%|*}
  times=()
  for ((r = 0; r < rounds; r++)); do
    s=$(date +%s.%N)
    round "$work/b$i/bin/tsctl"
    times+=("$(echo "$(date +%s.%N) - $s" | bc)")
  done
  median=$(printf '%s\n' "${times[@]}" | sort -n | sed -n "$(((rounds + 1) / 2))p")
  [ -n "$base" ] || base=$median
  printf 'run    %-18s %7.2f s a round (median of %d) %5.2fx the first\n' "$name" "$median" "$rounds" \
    "$(echo "scale=4; $median / $base" | bc)"
  i=$((i + 1))
done
