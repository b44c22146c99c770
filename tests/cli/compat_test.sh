#!/usr/bin/env bash
# tsctl compat on the project's archives: verdicts per format and target,
# the default targets, --target files (validate --list-ops's, --dump-runtime's),
# JSON and JUnit, and bad input (one line, documented exit codes).
#   compat_test.sh TSCTL TESTDATA
set -euo pipefail
tsctl=$1
data=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
expect() {  # expect EXIT PATTERN -- ARGS...: runs compat ARGS, checks its exit status and that stdout matches PATTERN
  local want=$1 pattern=$2
  shift 3
  local got=0
  "$tsctl" compat "$@" >"$tmp/out" 2>"$tmp/err" || got=$?
  [ "$got" = "$want" ] || { cat "$tmp/out" "$tmp/err" >&2; fail "compat $*: exit $got, not $want"; }
  [ -z "$pattern" ] || grep -Eq -- "$pattern" "$tmp/out" || { cat "$tmp/out" >&2; fail "compat $*: no line matching '$pattern'"; }
}

# A traced CNN loads in every torch release with data; on ExecuTorch it does not.
for v in 1.13 2.11 2.13 2.15; do
  expect 0 "torch==$v\.[0-9]+ +compatible" -- --target "torch==$v" "$data/traced_cnn.pt"
done
expect 1 'executorch==1.5.1 +incompatible' -- --target executorch==1.5.1 "$data/traced_cnn.pt"
grep -q 'loads in torch, not in ExecuTorch' "$tmp/out" || fail "no reason for a TorchScript archive on ExecuTorch"
# A mobile archive with XNNPACK's prepacked operators and classes: gone after 2.11.
expect 1 'torch==2.15.0 +incompatible' -- -t torch==1.13 -t torch==2.11 -t torch==2.15 "$data/mobile.ptl"
grep -Eq 'torch==1.13.1 +compatible' "$tmp/out" || fail "mobile.ptl not compatible with 1.13"
grep -Eq 'torch==2.11.0 +compatible' "$tmp/out" || fail "mobile.ptl not compatible with 2.11"
grep -q 'prepacked::' "$tmp/out" || fail "no prepacked operator named"
grep -q 'xnnpack\.' "$tmp/out" || fail "no custom class named"
# A .pt2 needs torch.export.
expect 1 'torch==1.13.1 +incompatible' -- -t torch==1.13 -t torch==2.15 "$data/pt2/cnn.pt2"
grep -q 'has no torch.export' "$tmp/out" || fail "no torch.export reason"
grep -Eq 'torch==2.15.0 +compatible' "$tmp/out" || fail "cnn.pt2 not compatible with 2.15"
# ExecuTorch programs: kernels and backends of the data.
expect 0 'executorch==1.5.1 +compatible' -- -t executorch==1.5.1 "$data/pte/linear_xnnpack.pte" "$data/pte/add.pte"
expect 1 'torch==2.15.0 +incompatible' -- -t torch==2.15 "$data/pte/add.pte"
expect 1 'unknown' -- -t executorch==1.5.1 "$data/pte/linear_external.ptd"
# A damaged archive (a record failing its CRC) loads on no release; a
# security finding LibTorch itself loads (a duplicated name) is validate's, not compat's.
expect 1 'torch==2.15.0 +incompatible' -- -t torch==2.15 "$data/bad/crc_mismatch.pt"
grep -q 'zip.crc: .*a damaged file, which no runtime' "$tmp/out" || fail "crc_mismatch.pt: no damage reason"
expect 0 'torch==2.15.0 +compatible' -- -t torch==2.15 "$data/bad/duplicate_record.pt"
# A release without data: unknown, naming what is missing; never compatible.
expect 1 'torch==0.4 +unknown' -- -t torch==0.4 "$data/traced_cnn.pt"
grep -q 'no data for torch==0.4' "$tmp/out" || fail "missing data not named"
# The default targets: the format's runtime in this build, and host.
if "$tsctl" --version | grep -q '^libtorch [0-9]'; then
  expect 0 '  host +compatible' -- "$data/traced_cnn.pt"
  grep -Eq '^  torch==[0-9.]+ +compatible' "$tmp/out" || fail "no default torch target"
else  # built without LibTorch: no runtime of its own to judge against, and never compatible for it
  expect 1 '  torch +unknown' -- "$data/traced_cnn.pt"
  grep -q 'built without LibTorch' "$tmp/out" || fail "no reason for the missing default target"
fi
# --target files: validate's operator list; a serving list lacking one operator.
"$tsctl" validate --no-load --list-ops "$data/traced_cnn.pt" >"$tmp/ops.txt"
expect 0 'compatible' -- -t "$tmp/ops.txt" "$data/traced_cnn.pt"
grep -v '^aten::batch_norm' "$tmp/ops.txt" >"$tmp/fewer.txt"
expect 1 'aten::batch_norm' -- -t "$tmp/fewer.txt" "$data/traced_cnn.pt"
# JSON and JUnit.
"$tsctl" compat --json -t torch==2.15 -t host "$data/mobile.ptl" >"$tmp/j" || true
/usr/bin/python3 - "$tmp/j" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
t = d["archives"][0]["targets"]
assert [x["target"] for x in t] == ["torch==2.15.0", "host"], t
assert t[0]["verdict"] == "incompatible" and t[0]["reasons"], t
assert "torch-2.15.0" in d["data"] and d["data_date"], d
PY
"$tsctl" compat --format junit -t torch==2.15 -t torch==0.4 -t torch==1.13 "$data/mobile.ptl" >"$tmp/x" || true
grep -q '<failure' "$tmp/x" || fail "JUnit: incompatible is not a failure"
grep -q '<skipped message="unknown' "$tmp/x" || fail "JUnit: unknown is not skipped"
# Bad input: malformed targets (2), a missing file (3), no archive (4), garbage ops file (2).
for spec in 'torch=2.1' 'torch==x' 'pytorch==2.1' "$tmp/none.txt"; do
  expect 2 '' -- -t "$spec" "$data/traced_cnn.pt"
  grep -q 'torch==X.Y\[.Z\]' "$tmp/err" || fail "usage error for '$spec' names no accepted form"
  [ "$(wc -l <"$tmp/err")" = 1 ] || fail "usage error for '$spec' is not one line"
done
printf 'aten::add.Tensor\nthis is not an operator\n' >"$tmp/bad.txt"
expect 2 '' -- -t "$tmp/bad.txt" "$data/traced_cnn.pt"
expect 3 '' -- "$tmp/missing.pt"
[ "$(wc -l <"$tmp/err")" = 1 ] || fail "a missing file is not one line"
printf 'not an archive' >"$tmp/junk.pt"
expect 4 '' -- "$tmp/junk.pt"
expect 2 '' --
# --dump-runtime round trip, where this build has ExecuTorch's runtime.
if "$tsctl" --version | grep -q '^executorch runtime ExecuTorch'; then
  "$tsctl" compat --dump-runtime executorch -o "$tmp/et.txt"
  grep -q '^runtime executorch ' "$tmp/et.txt" || fail "--dump-runtime: no runtime line"
  grep -q '^backend XnnpackBackend' "$tmp/et.txt" || fail "--dump-runtime: no XNNPACK backend"
  grep -q '^kernel aten::add.out' "$tmp/et.txt" || fail "--dump-runtime: no aten::add.out kernel"
  expect 0 'compatible' -- -t "$tmp/et.txt" "$data/pte/linear_xnnpack.pte"
  grep -v 'XnnpackBackend' "$tmp/et.txt" >"$tmp/et_no_xnn.txt"
  expect 1 'XnnpackBackend' -- -t "$tmp/et_no_xnn.txt" "$data/pte/linear_xnnpack.pte"
else
  expect 6 '' -- --dump-runtime executorch
fi
# --dump-runtime torch: this build's LibTorch, as a target.
if "$tsctl" --version | grep -q '^libtorch [0-9]'; then
  "$tsctl" compat --dump-runtime torch -o "$tmp/torch.txt"
  grep -q '^runtime torch [0-9]' "$tmp/torch.txt" || fail "--dump-runtime torch: no runtime line"
  grep -q '^file_format 1 ' "$tmp/torch.txt" || fail "--dump-runtime torch: no file_format line"
  grep -qx 'aten::add.Tensor' "$tmp/torch.txt" || fail "--dump-runtime torch: no aten::add.Tensor"
  expect 0 'compatible' -- -t "$tmp/torch.txt" "$data/traced_cnn.pt"
  expect 1 '(unknown|incompatible)' -- -t "$tmp/torch.txt" "$data/pt2/cnn.pt2"  # 1.x: no torch.export; 2.x: schema unsaid
else
  expect 6 '' -- --dump-runtime torch
fi
expect 2 '' -- --dump-runtime tensorflow
echo "compat: all checks passed"
