#!/usr/bin/env bash
# validate and bench running .pt2 archives on the LibTorch 2.x build: real
# CPU AOTInductor packages (made here by scripts/gen_pt2_aoti.py with the
# pinned torch, kept in WORK_DIR between runs), their outputs compared with
# Python's runner (torch._inductor.aoti_load_package) and the eager model;
# exported programs (testdata/pt2) reported WARN/exit 6 with the reason.
#
#   run_test.sh TSCTL REPO_ROOT WORK_DIR
#
# Needs tsctl built against LibTorch 2.x, a Python with that torch
# ($TSCTL_TORCH2_PYTHON, else REPO_ROOT/.venv-torch2/bin/python) and a C++
# compiler. Without them it exits 77: skipped, not passed.
set -u
tsctl=$1
root=$2
work=$3
py=${TSCTL_TORCH2_PYTHON:-$root/.venv-torch2/bin/python}
export TORCH_USE_RTLD_GLOBAL=1  # Python's AOTInductor runner needs libtorch's symbols global
if ! "$tsctl" --version 2>/dev/null | grep -q '^libtorch 2\.'; then
  echo "tsctl is not built against LibTorch 2.x: skipped"
  exit 77
fi
if ! "$py" -c 'import torch, sys; sys.exit(0 if hasattr(torch._inductor, "aoti_load_package") else 1)' 2>/dev/null; then
  echo "no torch with AOTInductor at $py (set TSCTL_TORCH2_PYTHON): skipped"
  exit 77
fi
if ! command -v g++ >/dev/null && ! command -v c++ >/dev/null; then
  echo "no C++ compiler to make an AOTInductor package: skipped"
  exit 77
fi
mkdir -p "$work"
"$py" "$root/scripts/gen_pt2_aoti.py" "$work" 2>&1 | grep -v -e Warning -e 'CUDA runtime' || true
[ -f "$work/cnn_aoti.pt2" ] && [ -f "$work/two_input_aoti.pt2" ] && [ -f "$work/cnn_aoti_nolink.pt2" ] || { echo "FAIL: no AOTInductor package was made"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# expect STATUS CMD...: runs tsctl, checks its exit status, keeps its output in $tmp/out.
expect() {
  local want=$1; shift
  "$tsctl" "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$?
  [ "$got" = "$want" ] || bad "tsctl $* exited $got, not $want: $(head -c 600 "$tmp/out" "$tmp/err")"
}
has() { grep -q -- "$1" "$tmp/out" || bad "no '$1' in the output of the last command: $(head -c 900 "$tmp/out")"; }

cnn=$work/cnn_aoti.pt2
two=$work/two_input_aoti.pt2
# Inputs inferred from the wrapper's input checks.
expect 0 validate "$cnn"
has 'PASS  torch.load .*AOTIModelPackageLoader'
has 'PASS  torch.run .*inputs inferred: input0=1x3x8x8:float32'
has 'PASS  torch.deterministic'
# A wrapper not linked with libtorch: runs only if the plugin made libtorch's symbols global.
expect 0 validate "$work/cnn_aoti_nolink.pt2" --reference "$work/cnn_aoti_nolink.ref.pt"
has 'PASS  torch.reference'
# Given inputs; outputs saved and compared with Python's below.
expect 0 validate "$cnn" --load-inputs "$work/cnn_aoti.inputs.pt" --save-outputs "$tmp/cnn_out.pt"
expect 0 validate "$cnn" --reference "$work/cnn_aoti.ref.pt"
has 'PASS  torch.reference'
expect 0 validate "$two" --load-inputs "$work/two_input_aoti.inputs.pt" --save-outputs "$tmp/two_out.pt"
expect 0 validate "$two" --reference "$work/two_input_aoti.ref.pt" --format json
"$py" -c 'import json,sys; r=json.load(open(sys.argv[1])); c={x["id"]:x["status"] for x in r["archives"][0]["checks"]}; sys.exit(0 if c.get("torch.reference")=="PASS" and c.get("torch.run")=="PASS" else 1)' "$tmp/out" ||
  bad "two_input_aoti --reference: JSON report without torch.reference/torch.run PASS"
# The package's sample inputs (data/sample_inputs/model.pt, (args, kwargs) as torch.export writes them; deflated here).
"$py" - "$cnn" "$work/cnn_aoti.inputs.pt" "$tmp/samples.pt2" <<'PY' 2>&1 | grep -v Warning
import io, sys, zipfile, torch
src, inputs, dst = sys.argv[1:4]
buf = io.BytesIO()
torch.save((torch.load(inputs), {}), buf)
with zipfile.ZipFile(src) as z, zipfile.ZipFile(dst, "w") as w:
    root = z.namelist()[0].split("/")[0]
    for info in z.infolist():
        w.writestr(info, z.read(info))
    w.writestr(root + "/data/sample_inputs/model.pt", buf.getvalue(), compress_type=zipfile.ZIP_DEFLATED)
PY
expect 0 validate "$tmp/samples.pt2" --save-outputs "$tmp/samples_out.pt"
has 'PASS  torch.run .*inputs from data/sample_inputs/model.pt'
cmp -s "$tmp/samples_out.pt" "$tmp/cnn_out.pt" || "$py" -c 'import sys, torch; sys.exit(0 if torch.equal(torch.load(sys.argv[1]), torch.load(sys.argv[2])) else 1)' "$tmp/samples_out.pt" "$tmp/cnn_out.pt" ||
  bad "outputs on the sample inputs differ from those on the same inputs given with --load-inputs"
# The dynamic batch within its range, and outside it: the package's own input check, a FAIL (not a crash).
expect 0 validate "$two" --input 7x6:float32 --input 7:int64:randint:0:10
has 'PASS  torch.run'
expect 1 validate "$two" --input 100x6:float32 --input 100:int64:randint:0:10
has 'FAIL  torch.run .*too large'
# --seed and --val-range make a package's generated inputs as for a
# TorchScript archive: another seed, other values (the same seed, the same);
# a range, values in it.
expect 0 validate "$cnn" --save-outputs "$tmp/seed0.pt"
expect 0 validate "$cnn" --seed 7 --save-outputs "$tmp/seed7.pt"
expect 0 validate "$cnn" --seed 7 --save-outputs "$tmp/seed7b.pt"
expect 0 validate "$cnn" --val-range 2,3 --save-outputs "$tmp/range.pt"
expect 2 validate "$cnn" --val-range nosuch:0,1
"$py" - "$tmp" <<'PY' 2>&1 | grep -v Warning
import os, sys, torch
t = lambda n: torch.load(os.path.join(sys.argv[1], n))
ok = not torch.equal(t("seed0.pt"), t("seed7.pt")) and torch.equal(t("seed7.pt"), t("seed7b.pt"))
ok = ok and not torch.equal(t("seed0.pt"), t("range.pt"))
print("PASS: --seed and --val-range change a package's generated inputs" if ok else "FAIL: --seed/--val-range ignored for a package")
sys.exit(0 if ok else 1)
PY
[ "${PIPESTATUS[0]}" = 0 ] || fail=1
# bench takes its inputs by the same rule (ResolveInputs): the package's
# generated inputs, seeded and ranged, are validate's, to the bit.
expect 0 bench "$cnn" --iters 1 --warmup 0 --save-outputs "$tmp/bseed0.pt"
expect 0 bench "$cnn" --iters 1 --warmup 0 --seed 7 --save-outputs "$tmp/bseed7.pt"
expect 0 bench "$cnn" --iters 1 --warmup 0 --val-range 2,3 --save-outputs "$tmp/brange.pt"
"$py" - "$tmp" <<'PY' 2>&1 | grep -v Warning
import os, sys, torch
t = lambda n: torch.load(os.path.join(sys.argv[1], n))
ok = all(torch.equal(t(a), t(b)) for a, b in [("bseed0.pt", "seed0.pt"), ("bseed7.pt", "seed7.pt"), ("brange.pt", "range.pt")])
print("PASS: bench's generated inputs are validate's (--seed, --val-range)" if ok else "FAIL: bench and validate generate different inputs")
sys.exit(0 if ok else 1)
PY
[ "${PIPESTATUS[0]}" = 0 ] || fail=1
# bench: timings and the outputs of one more run.
expect 0 bench "$cnn" --warmup 3 --iters 20 --format json --load-inputs "$work/cnn_aoti.inputs.pt" --save-outputs "$tmp/cnn_bench.pt"
"$py" - "$tmp/out" <<'PY' || bad "bench JSON: latencies missing or out of order"
import json, sys
r = json.load(open(sys.argv[1]))
lat = r["latency_ns"]
assert r["iterations"] == 20 and len(r["warmup_ns"]) == 3, r
assert 0 < lat["min"] <= lat["median"] <= lat["max"], lat
assert lat["p50"] <= lat["p90"] <= lat["p99"] <= lat["max"], lat
assert r["load_ns"] > 0 and r["saved_outputs"], r
PY
expect 0 bench "$two" --warmup 2 --iters 10 --input 3x6:float32 --input 3:int64:randint:0:10
# Outputs equal Python's runner and the eager model on the same inputs.
"$py" - "$work" "$tmp" <<'PY' 2>&1 | grep -v Warning
import os, sys, torch
work, tmp = sys.argv[1], sys.argv[2]
ok = True
for name, saved in (("cnn_aoti", "cnn_out.pt"), ("two_input_aoti", "two_out.pt"), ("cnn_aoti", "cnn_bench.pt")):
    got = torch.load(os.path.join(tmp, saved))
    want = torch.load(os.path.join(work, name + ".ref.pt"))["outputs"]
    eager = torch.load(os.path.join(work, name + ".eager.pt"))
    flat = lambda v: list(v) if isinstance(v, (tuple, list)) else [v]
    for g, w, e in zip(flat(got), flat(want), flat(eager)):
        if not (torch.equal(g, w) and torch.allclose(g, e, rtol=1e-4, atol=1e-5)):
            print(f"FAIL: {saved}: tsctl's outputs differ from Python's runner or the eager model")
            ok = False
    if len(flat(got)) != len(flat(want)):
        print(f"FAIL: {saved}: {len(flat(got))} outputs, Python's runner gives {len(flat(want))}")
        ok = False
print("PASS: outputs equal Python's aoti_load_package runner" if ok else "")
sys.exit(0 if ok else 1)
PY
[ "${PIPESTATUS[0]}" = 0 ] || fail=1
# --sweep on a package: its own settings (threads, inference mode) and a whole
# Triton config.pbtxt with platform torch_aoti and Triton's names for it.
expect 0 bench "$cnn" --sweep --duration 0.05 --load-inputs "$work/cnn_aoti.inputs.pt" --triton-config "$tmp/config.pbtxt"
grep -q '^threads   inference' "$tmp/out" || bad "bench --sweep of a package: no threads/inference table: $(head -3 "$tmp/out")"
grep -q '^platform: "torch_aoti"' "$tmp/config.pbtxt" || bad "config.pbtxt: no torch_aoti platform"
grep -q 'name: "ARGS\[0\]"' "$tmp/config.pbtxt" || bad "config.pbtxt: no ARGS[0] input"
grep -q 'name: "RESULT' "$tmp/config.pbtxt" || bad "config.pbtxt: no RESULT output"

# Exported programs: no C++ runner in this LibTorch (nativert is not built): WARN, never PASS, and the
# result is NOT RUN (exit 7; --allow-not-run accepts it); bench exit 6.
expect 7 validate "$root/testdata/pt2/cnn.pt2"
has 'WARN  torch.load .*nativert'
has 'result: NOT RUN'
expect 0 validate --allow-not-run "$root/testdata/pt2/cnn.pt2"
expect 6 bench "$root/testdata/pt2/cnn.pt2"
grep -q 'nativert' "$tmp/err" || bad "bench of an exported program does not say why (nativert): $(cat "$tmp/err")"
# The stub package fails pt2.aoti and is not handed to LibTorch.
expect 1 validate "$root/testdata/pt2/cnn_aoti_stub.pt2"
has 'SKIP  torch.load .*fails pt2.aoti'
# Skipped, pt2.aoti still keeps it away (its verdict alone is SKIP): NOT RUN.
expect 7 validate "$root/testdata/pt2/cnn_aoti_stub.pt2" --skip pt2.aoti
has 'SKIP  torch.load .*fails pt2.aoti'
has 'SKIP  pt2.aoti'
[ "$fail" = 0 ] && echo "PASS: validate and bench ran AOTInductor packages; exported programs said why not"
exit "$fail"
