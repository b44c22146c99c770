#!/usr/bin/env bash
# Checks archives across LibTorch versions, with two builds of tsctl:
#   1. test data made by Debian's torch 1.13 loads and runs in tsctl built on 2.x,
#      or 2.x says clearly why not (operators it no longer registers, named);
#   2. archives that tsctl built on 2.x writes (trace, script, --python) load and
#      run in tsctl built on 1.13, or 1.13 says clearly why not (ts.version or
#      torch.load findings naming the cause).
# Usage: scripts/cross_version_test.sh BUILD_1_13 BUILD_2_X
set -uo pipefail
cd "$(dirname "$0")/.."
old=$1/bin/tsctl
new=$2/bin/tsctl
for t in "$old" "$new"; do [ -x "$t" ] || { echo "cross_version_test: $t not built"; exit 2; }; done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
ok() { passed=$((passed + 1)); echo "  ok    $*"; }
bad() { failed=$((failed + 1)); echo "  FAIL  $*"; }

echo "1. archives from torch $("$old" --version | sed -n 2p | cut -d' ' -f2) in $("$new" --version | sed -n 2p | cut -d' ' -f1-2)"
for f in testdata/*.pt testdata/*.ptl; do
  args=()
  case $(basename "$f") in
    traced_cnn.pt | unaligned.pt) args=(--input 1x3x32x32) ;;
    with_extra.pt | renamed_root.pt) args=(--input 1x4) ;;
    quantized.pt) args=(--input 1x8) ;;
    quantized_static.pt) args=(--input 1x3x8x8) ;;
    *.reference.pt) continue ;;  # a torch.save file, not TorchScript
    branchy.pt) args=(--input 2x4) ;;
  esac
  out=$("$new" validate "${args[@]}" "$f" 2>&1) && rc=0 || rc=$?
  if [ $rc = 0 ]; then
    ok "$f"
  elif [ $rc = 7 ] && [ "$(basename "$f")" = cuda_pinned.pt ] && ! "$new" --version | grep -q '^cuda usable' &&
       echo "$out" | grep -q "result: NOT RUN"; then
    # Its code makes tensors on CUDA: where no device is usable it cannot
    # run, and validate says NOT RUN (exit 7), never PASSED.
    ok "$f not run here, NOT RUN (exit 7): no usable CUDA device"
  elif echo "$out" | grep -qE "FAIL  torch.load .*operators not registered in this LibTorch"; then
    # e.g. mobile.ptl's prepacked::conv2d_clamp_run (XNNPACK), which 2.15's
    # wheel no longer registers: the archive needs another LibTorch, and tsctl says which operators.
    ok "$f refused with a clear reason: $(echo "$out" | grep -E 'FAIL  torch.load' | head -1 | sed 's/^ *//')"
  else
    bad "$f"; echo "$out" | grep -E "FAIL" | head -3
  fi
done

echo "2. archives written by tsctl on $("$new" --version | sed -n 2p | cut -d' ' -f1-2), read by $("$old" --version | sed -n 2p | cut -d' ' -f1-2)"
made=()
"$new" trace testdata/traced_cnn.pt --input 1x3x32x32 -o "$tmp/trace.pt" >/dev/null && made+=("$tmp/trace.pt")
"$new" script testdata/models/net.ts --input 2x4 -o "$tmp/script.pt" >/dev/null && made+=("$tmp/script.pt")
if "$new" --version | grep -q "embedding built in"; then
  "$new" trace --python testdata/models/tiny_models.py:make_model --input 1x3x8x8 -o "$tmp/trace_py.pt" >/dev/null && made+=("$tmp/trace_py.pt")
  "$new" script --python testdata/models/tiny_models.py:Branchy --input 2x4 -o "$tmp/script_py.pt" >/dev/null && made+=("$tmp/script_py.pt")
fi
[ ${#made[@]} -ge 2 ] || bad "tsctl on 2.x wrote only ${#made[@]} archives"
for f in "${made[@]}"; do
  out=$("$old" validate "$f" 2>&1)
  rc=$?
  if [ $rc = 0 ]; then
    ok "$(basename "$f") loads and runs"
  elif [ $rc = 1 ] && echo "$out" | grep -qE "FAIL  (ts.version|torch.load) .{20,}"; then
    ok "$(basename "$f") refused with a clear reason: $(echo "$out" | grep -E 'FAIL  (ts.version|torch.load)' | head -1 | sed 's/^ *//')"
  else
    bad "$(basename "$f") (exit $rc)"; echo "$out" | grep FAIL | head -3
  fi
done
echo "cross_version: $passed passed, $failed failed"
[ $failed = 0 ]
