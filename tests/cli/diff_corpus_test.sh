#!/usr/bin/env bash
# Runs tsctl diff over the shared corpus: every archive against itself (exit
# 0, with and without --exact, text and JSON), against testdata/diff/base.pt
# (exit 1) and against the next file in the folder (exit 0 or 1). Files under
# _not_torchscript/ must be refused with exit 4 and one stderr line.
# Exits 77 (skipped) when the corpus folder is absent.
set -u
tsctl=$1
corpus=$2
base=testdata/diff/base.pt
[ -d "$corpus" ] || { echo "corpus not found at $corpus: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0 checked=0

check() {  # check EXPECTED_CODES ARGS...
  local allowed=$1
  shift
  timeout 120 "$tsctl" diff "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  checked=$((checked + 1))
  if [[ " $allowed " != *" $rc "* ]]; then
    echo "FAIL: tsctl diff $*: exit $rc (allowed: $allowed)"; head -3 "$tmp/err"; failures=$((failures + 1))
  elif [ "$rc" -ge 2 ] && [ "$(wc -l <"$tmp/err")" != 1 ]; then
    echo "FAIL: tsctl diff $*: exit $rc without exactly one stderr line"; head -5 "$tmp/err"; failures=$((failures + 1))
  elif [ "$rc" -le 1 ] && [ ! -s "$tmp/out" ]; then
    echo "FAIL: tsctl diff $*: exit $rc but no output"; failures=$((failures + 1))
  elif [ "$rc" -le 1 ] && [ "$1" = --json ]; then
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["schema_version"]==1 and d["equal"]==(sys.argv[2]=="0")' \
      "$tmp/out" "$rc" || { echo "FAIL: tsctl diff $*: not the expected JSON"; failures=$((failures + 1)); }
  fi
}

prev=""
for f in "$corpus"/*; do
  [ -f "$f" ] || continue
  case "$f" in *.md) continue ;; esac
  check "0" "$f" "$f"
  check "0" --json --exact "$f" "$f"
  check "1" "$base" "$f"
  check "1" --json "$f" "$base"
  [ -n "$prev" ] && check "0 1" "$prev" "$f"
  prev=$f
done
for f in "$corpus"/_not_torchscript/*; do
  check "4" "$base" "$f"
  check "4" "$f" "$base"
done
echo "$checked checks, $failures failures"
[ "$failures" = 0 ]
