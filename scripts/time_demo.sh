#!/usr/bin/env bash
# Times scripts/demo.sh as a newcomer meets it: a fresh clone of this
# checkout's HEAD in a scratch folder, no compiler cache (CCACHE_DISABLE=1),
# the packages as the machine has them (install_deps.sh installs what is
# missing, inside the demo's time). Prints the demo's phase lines, then one
# line with the figures docs/manual/building.md and README give: the first
# result's time (inspect), the whole demo's, and the CPU seconds the demo
# used (the build, nearly all). Exit status: the demo's.
#   scripts/time_demo.sh            the demo on testdata/traced_cnn.pt
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git clone -q "$repo" "$work/tsctl"
cd "$work/tsctl"
rc=0
/usr/bin/time -f '%e %U %S' -o "$work/time" env CCACHE_DISABLE=1 scripts/demo.sh >"$work/out" 2>"$work/err" || rc=$?
cat "$work/err" >&2
[ "$rc" -eq 0 ] || { echo "time_demo: the demo failed (exit $rc)" >&2; exit "$rc"; }
first=$(sed -n 's/^demo: first result (inspect) after \([0-9]*\) s.*/\1/p' "$work/err")
read -r wall user sys <"$work/time"
echo "time_demo: first result (inspect) after $first s; whole demo $wall s; CPU $user s user + $sys s system" \
  "(HEAD $(git rev-parse --short HEAD), $(nproc) cores, ccache off)"
