#!/usr/bin/env bash
# The LibTorch 1.13 build: its Python torch has no TorchScript converter, and
# `tsctl migrate` says so in one line with exit 6, writing nothing. Skipped
# (77) without the Python embedding.
#
#   migrate_refusal.sh TSCTL
set -u
tsctl=$1
"$tsctl" --version | grep -q 'embedding built in' || { echo "skipped: no Python embedding"; exit 77; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$tsctl" migrate testdata/traced_cnn.pt -o "$out/never.pt2" >"$out/stdout" 2>"$out/stderr"
status=$?
cat "$out/stderr"
fail=0
[ "$status" = 6 ] || { echo "FAIL: exit $status, not 6"; fail=1; }
[ "$(wc -l <"$out/stderr")" = 1 ] || { echo "FAIL: stderr is not one line"; fail=1; }
grep -q "TS2EPConverter, PyTorch 2.4 or later" "$out/stderr" || { echo "FAIL: the line does not name the converter"; fail=1; }
[ -s "$out/stdout" ] && { echo "FAIL: stdout is not empty"; fail=1; }
[ -e "$out/never.pt2" ] && { echo "FAIL: it wrote the output"; fail=1; }
exit "$fail"
