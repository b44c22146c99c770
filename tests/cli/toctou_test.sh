#!/usr/bin/env bash
# The child loads the bytes the parent checked: while a symlink flips between
# a sound archive and one whose storage lies (LibTorch reads out of bounds
# and crashes on it, so tsctl refuses to hand it over), every validate report
# is about one file only: never "ts.storage" passing and LibTorch then
# crashing on the other file.
set -u
tsctl=$1
root=$2
tmp=$(mktemp -d)
trap 'kill $flipper 2>/dev/null; rm -rf "$tmp"' EXIT
good=$root/testdata/traced_cnn.pt
bad=$root/testdata/bad/oob_storage_offset.pt
ln -s "$good" "$tmp/model.pt"
( while :; do ln -sfn "$bad" "$tmp/model.pt"; ln -sfn "$good" "$tmp/model.pt"; done ) &
flipper=$!
failures=0
for i in $(seq 1 8); do
  "$tsctl" validate --no-run "$tmp/model.pt" >"$tmp/out" 2>&1
  if grep -q "crashed with SIG" "$tmp/out"; then
    echo "FAIL: run $i: LibTorch got a file tsctl had not checked:"; cat "$tmp/out"
    failures=$((failures + 1))
  fi
done
echo "8 runs, $failures with an unchecked file loaded"
[ "$failures" = 0 ]
