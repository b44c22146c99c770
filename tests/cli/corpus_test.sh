#!/usr/bin/env bash
# Runs inspect, code and graph over every file of the shared corpus (a .pt2:
# graph in every build, code refused with exit 4). Each must
# give a result (exit 0) or its documented error: exactly one line on stderr
# and exit 4 (not an archive / corrupt), 5 (LibTorch refused it) or 2 (e.g. no
# forward method); validate exits 0 or 1 (findings) with a report. Files
# under _not_torchscript/ must be refused with exit 4 (validate: findings).
# Exits 77 (skipped) when the corpus folder is absent.
set -u
tsctl=$1
corpus=$2
[ -d "$corpus" ] || { echo "corpus not found at $corpus: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0 checked=0

check() {  # check FILE EXPECTED_CODES CMD...
  local file=$1 allowed=$2
  shift 2
  timeout 120 "$tsctl" "$@" "$file" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  local lines
  lines=$(wc -l <"$tmp/err")
  checked=$((checked + 1))
  if [[ " $allowed " != *" $rc "* ]]; then
    echo "FAIL: tsctl $* $file: exit $rc (allowed: $allowed)"; head -3 "$tmp/err"; failures=$((failures + 1))
  elif [ "$rc" != 0 ] && [ "$rc" != 1 ] && [ "$rc" != 7 ] && [ "$lines" != 1 ]; then
    echo "FAIL: tsctl $* $file: exit $rc with $lines stderr lines"; head -5 "$tmp/err"; failures=$((failures + 1))
  elif [ "$rc" = 0 ] && [ ! -s "$tmp/out" ] && [[ " $* " != *" --list-ops "* ]]; then  # a method may call no operator
    echo "FAIL: tsctl $* $file: exit 0 but no output"; failures=$((failures + 1))
  fi
  if [ "$rc" = 0 ] && [ "$1" = inspect ] && [ "${2:-}" = --json ] && [[ $file == */pte/* ]]; then
    python3 -c 'import json,sys; d=json.loads(open(sys.argv[1]).read()); assert d["schema_version"]==1 and sum(p["bytes"] for p in d["sizes"])==d["file_size"]' "$tmp/out" ||
      { echo "FAIL: inspect --json $file: not the expected JSON, or its sizes do not sum to the file"; failures=$((failures + 1)); }
  elif [ "$rc" = 0 ] && [ "$1" = inspect ] && [ "${2:-}" = --json ]; then
    python3 -c 'import json,sys; d=json.loads(open(sys.argv[1]).read()); assert d["schema_version"]==1 and d["records"] and "operators" in d' "$tmp/out" ||
      { echo "FAIL: inspect --json $file: not the expected JSON"; failures=$((failures + 1)); }
  fi
}

# A build without LibTorch (TSCTL_TEST_NO_TORCH=1): no graph, validate --no-load.
graph=graph validate=(validate)
if [ -n "${TSCTL_TEST_NO_TORCH:-}" ]; then graph="" validate=(validate --no-load); fi
for f in "$corpus"/*; do
  [ -f "$f" ] || continue
  case "$f" in *.md) continue ;; esac
  check "$f" "0" inspect --json
  check "$f" "0" inspect
  case "$f" in
    *.pt2)  # a .pt2 (docs/manual/pt2.md): graph without LibTorch; code says it holds no TorchScript (exit 4)
      check "$f" "4" code
      check "$f" "0" graph ;;
    *)
      check "$f" "0" code
      [ -n "$graph" ] && check "$f" "0 2 5" graph ;;
  esac
  check "$f" "0 1 7" "${validate[@]}"   # 1: findings, 7: NOT RUN, as data on stdout
  check "$f" "0 1" validate --no-load --list-ops   # the static operator list
done
for f in "$corpus"/_not_torchscript/*; do
  for cmd in inspect code $graph stamp; do check "$f" "4" $cmd; done
  check "$f" "1" "${validate[@]}"
done
# ExecuTorch files (corpus/pte, its README): inspect, validate, graph and
# diff read every one or refuse it in one line (exit 4); code and stamp say in
# one line what the file is (exit 4).
for f in "$corpus"/pte/*; do
  [ -f "$f" ] || continue
  case "$f" in *.md) continue ;; esac
  check "$f" "0 4" inspect --json
  check "$f" "0 4" inspect
  check "$f" "0 1 7" validate   # 7: NOT RUN (what it needs is not in this runtime, or no runtime in this build)
  check "$f" "0 1" validate --no-load --list-ops
  for cmd in code stamp; do check "$f" "4" $cmd; done
  check "$f" "0 4" graph   # without LibTorch: a program's chains; a .ptd has none (4)
  check "$f" "0 4" diff "$f"   # with itself: the same (0), or the reader's refusal
done
echo "$checked checks, $failures failures"
[ $failures = 0 ]
