#!/bin/bash
# tsctl on a GPU: validate --device cuda (a reference recorded on the CPU
# checked on the device; code that pins cuda:0 run there) and bench --device
# cuda. Exits 77 (ctest: skipped, not passed) where this tsctl sees no CUDA
# device.
# usage: cuda_test.sh TSCTL TESTDATA
set -u
tsctl=$1
data=$2
if ! "$tsctl" --version | grep -q '^cuda usable'; then
  echo "skipped: $("$tsctl" --version | grep '^cuda')"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
fail() { echo "FAIL: $*"; failed=1; }
# Whether a torch.save file holds CPU tensors only (the storages' location in data.pkl).
on_cpu() { python3 -c 'import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
pkl = [z.read(n) for n in z.namelist() if n.endswith("/data.pkl")][0]
sys.exit(0 if b"cpu" in pkl and b"cuda" not in pkl else 1)' "$1"; }
# "ID STATUS" for each check of the first archive in a JSON report.
statuses() { python3 -c 'import json,sys; [print(c["id"], c["status"], c["message"]) for c in json.load(sys.stdin)["archives"][0]["checks"]]'; }

"$tsctl" validate --input 1x3x32x32 --save-reference "$tmp/ref.pt" "$data/traced_cnn.pt" >/dev/null || fail "recording on the CPU"
"$tsctl" validate --device cuda --reference "$tmp/ref.pt" --rtol 1e-4 --atol 1e-5 --format json "$data/traced_cnn.pt" >"$tmp/v.json"
rc=$?
[ $rc -eq 0 ] || fail "validate --device cuda exited $rc: $(statuses <"$tmp/v.json" | grep -v PASS)"
statuses <"$tmp/v.json" >"$tmp/v.txt"
grep -q '^torch.load PASS loads in LibTorch on cuda' "$tmp/v.txt" || fail "torch.load not on cuda: $(grep torch.load "$tmp/v.txt")"
grep -q '^torch.reference PASS' "$tmp/v.txt" || fail "the CPU's reference: $(grep torch.reference "$tmp/v.txt")"
grep -q '^torch.deterministic PASS' "$tmp/v.txt" || fail "determinism on cuda: $(grep torch.deterministic "$tmp/v.txt")"

# Code that creates tensors on cuda:0 (traced on a GPU) runs with --device cuda.
"$tsctl" validate --device cuda --input 2x3 --format json "$data/cuda_pinned.pt" | statuses >"$tmp/p.txt"
grep -q '^ts.device PASS ran on cuda' "$tmp/p.txt" || fail "ts.device: $(grep ts.device "$tmp/p.txt")"
grep -q '^torch.run PASS' "$tmp/p.txt" || fail "pinned: $(grep torch.run "$tmp/p.txt")"

# Inputs inferred on the CPU, run on the device.
"$tsctl" validate --device cuda --format json "$data/traced_cnn.pt" | statuses >"$tmp/i.txt"
grep -q '^torch.run PASS ran with inputs inferred' "$tmp/i.txt" || fail "inferred: $(grep torch.run "$tmp/i.txt")"

# --save-outputs on cuda writes CPU tensors (torch.load reads them anywhere).
"$tsctl" validate --device cuda --input 1x3x32x32 --save-outputs "$tmp/out.pt" "$data/traced_cnn.pt" >/dev/null || fail "--save-outputs"
on_cpu "$tmp/out.pt" ||
  fail "--save-outputs did not save CPU tensors"

"$tsctl" bench --device cuda --input 1x3x32x32 --warmup 3 --iters 20 --format json "$data/traced_cnn.pt" >"$tmp/b.json" || fail "bench --device cuda"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["device"] == "cuda", d["device"]
assert d["runs"]["timed_calls"] == 20, d["runs"]
assert d["cuda_peak_bytes"] > 0, d["cuda_peak_bytes"]
' "$tmp/b.json" || fail "bench's report"
"$tsctl" bench --device cuda --input 1x3x32x32 --save-outputs "$tmp/bout.pt" --iters 2 --warmup 1 "$data/traced_cnn.pt" >/dev/null || fail "bench --save-outputs"
on_cpu "$tmp/bout.pt" ||
  fail "bench --save-outputs did not save CPU tensors"
[ $failed -eq 0 ] && echo "cuda: all passed"
exit $failed
