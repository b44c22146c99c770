#!/usr/bin/env bash
# Renders `tsctl graph --format dot` of archives with Graphviz (dot -Tsvg)
# in the three variants (plain, --inlined, --frozen) and prints, per variant,
# how many rendered, how many dot rejected or did not finish within LIMIT
# seconds, and the slowest render. Exit 1 if dot failed or timed out on any.
#   scripts/check_dot.sh [TSCTL] [ARCHIVE_OR_DIR...]
# Default: build/bin/tsctl over ../shared/corpus. LIMIT (default 60) in the environment.
set -u
cd "$(dirname "$0")/.."
tsctl=${1:-build/bin/tsctl}
shift || true
[ $# -gt 0 ] || set -- ../shared/corpus
limit=${LIMIT:-60}
command -v dot >/dev/null || { echo "check_dot: Graphviz's dot is not installed"; exit 77; }
files=()
for a in "$@"; do
  if [ -d "$a" ]; then for f in "$a"/*; do [ -f "$f" ] && files+=("$f"); done; else files+=("$a"); fi
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
for variant in "" --inlined --frozen; do
  rendered=0 failed=0 skipped=0 slowest=0 slowest_name=""
  for f in "${files[@]}"; do
    if ! timeout 120 "$tsctl" graph --format dot $variant "$f" >"$tmp/g.dot" 2>/dev/null; then
      skipped=$((skipped + 1))  # tsctl cannot make a graph of it (not TorchScript, no forward, ...)
      continue
    fi
    start=$(date +%s%N)
    if timeout "$limit" dot -Tsvg "$tmp/g.dot" -o "$tmp/g.svg" 2>"$tmp/err"; then
      rendered=$((rendered + 1))
      t=$((($(date +%s%N) - start) / 1000000))  # ms
      if [ "$t" -gt "$slowest" ]; then slowest=$t; slowest_name=$(basename "$f"); fi
    else
      failed=$((failed + 1))
      status=1
      echo "FAIL ${variant:-plain} $(basename "$f"): $(head -c 200 "$tmp/err" | tr '\n' ' ')"
    fi
  done
  printf 'dot %-9s rendered %d, failed or over %s s %d, no graph %d; slowest %d.%03d s (%s)\n' \
    "${variant:-plain}" "$rendered" "$limit" "$failed" "$skipped" $((slowest / 1000)) $((slowest % 1000)) "${slowest_name:-none}"
done
exit $status
