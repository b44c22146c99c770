#!/usr/bin/env bash
# tsctl export end to end on the LibTorch 2.x build: exported programs and a
# CPU AOTInductor package made from testdata/models/tiny_models.py, read back
# by the pinned torch (torch.export.load with extra_files, aoti_load_package)
# and compared with the eager model; validate and bench run the package with
# the stamped example inputs; a diverging or refused export writes nothing
# and leaves an existing file alone.
#
#   export_test.sh TSCTL REPO_ROOT
#
# Needs tsctl built against LibTorch 2.x with the Python embedding, a Python
# with that torch ($TSCTL_TORCH2_PYTHON, else REPO_ROOT/.venv-torch2/bin/python)
# and a C++ compiler (--aoti). Without them it exits 77: skipped, not passed.
set -u
tsctl=$1
root=$2
py=${TSCTL_TORCH2_PYTHON:-$root/.venv-torch2/bin/python}
export TORCH_USE_RTLD_GLOBAL=1  # Python's AOTInductor runner needs libtorch's symbols global
version=$("$tsctl" --version 2>/dev/null)
grep -q '^libtorch 2\.' <<<"$version" || { echo "tsctl is not built against LibTorch 2.x: skipped"; exit 77; }
grep -q 'embedding built in' <<<"$version" || { echo "tsctl is built without the Python embedding: skipped"; exit 77; }
"$py" -c 'import torch.export' 2>/dev/null || { echo "no torch.export at $py (set TSCTL_TORCH2_PYTHON): skipped"; exit 77; }
command -v g++ >/dev/null || command -v c++ >/dev/null || { echo "no C++ compiler for --aoti: skipped"; exit 77; }
models=$root/testdata/models/tiny_models.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# export's temporary folders go to $TMPDIR: this test's own, so that what a
# run leaves behind is this run's.
mkdir "$tmp/tmpdir"
export TMPDIR=$tmp/tmpdir
fail=0
bad() { echo "FAIL: $*"; fail=1; }
expect() {  # expect STATUS CMD...: runs tsctl, checks its exit status; output in $tmp/out, $tmp/err
  local want=$1; shift
  "$tsctl" "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$?
  [ "$got" = "$want" ] || bad "tsctl $* exited $got, not $want: $(head -c 600 "$tmp/out" "$tmp/err")"
}
has() { grep -q -- "$1" "$tmp/out" || bad "no '$1' in the output of the last command: $(head -c 900 "$tmp/out")"; }
one_line() { [ "$(wc -l <"$tmp/err")" = 1 ] || bad "stderr is not one line: $(head -c 900 "$tmp/err")"; }

# An exported program with a dynamic batch, checked on another batch size.
expect 0 export --python "$models:make_model" -i 2x3x8x8 --dynamic-batch --check-input 5x3x8x8 -o "$tmp/cnn.pt2"
has 'match     5x3x8x8:float32'
has 'exported program, model model; dynamic input.shape\[0\] in \[1, inf\]'
# Two inputs (float, int64), a dict output, JSON on stdout.
expect 0 export --python "$models:TwoInputs" -i 3x6 -i 3:int64:randint:0:10 --check-input 4x6,4:int64:randint:0:10 \
  --dynamic-batch -o "$tmp/two.pt2" --format json
cp "$tmp/out" "$tmp/two.json"
# A model that prints: stdout is still one JSON document.
expect 0 export --python "$models:Chatty" -i 2x2 -o "$tmp/chatty.pt2" --format json
cp "$tmp/out" "$tmp/chatty.json"
# An AOTInductor package for the CPU.
expect 0 export --python "$models:make_model" -i 2x3x8x8 --aoti -o "$tmp/cnn_aoti.pt2"
has 'AOTInductor package for the CPU'
"$py" - "$models" "$tmp" <<'PY' 2>&1 | grep -v -e Warning -e 'CUDA runtime'
import importlib.util, json, os, sys, torch
models, tmp = sys.argv[1], sys.argv[2]
spec = importlib.util.spec_from_file_location("tiny_models", models)
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
fails = []
def check(name, cond):
    if not cond:
        fails.append(name)
for doc in ("two.json", "chatty.json"):
    r = json.load(open(os.path.join(tmp, doc)))
    check(doc + " written", r["written"] and r["format"] == "pt2-program" and all(c["matched"] for c in r["checks"]))
check("two.json dynamic", json.load(open(os.path.join(tmp, "two.json")))["dynamic"] == ["x.shape[0] in [1, inf]", "idx.shape[0] in [1, inf]"])
with torch.no_grad():
    extra = {"producer_info.json": "", "tsctl_inputs.json": ""}
    ep = torch.export.load(os.path.join(tmp, "cnn.pt2"), extra_files=extra)
    check("producer record", json.loads(extra["producer_info.json"]).get("written_by") == "tsctl")
    check("input specs", json.loads(extra["tsctl_inputs.json"]) == {"model": ["2x3x8x8:float32"]})
    eager = mod.make_model().eval()
    x = torch.randn(7, 3, 8, 8)
    check("program outputs at batch 7", torch.allclose(ep.module()(x), eager(x), rtol=1e-5, atol=1e-6))
    ep = torch.export.load(os.path.join(tmp, "two.pt2"))
    two = mod.TwoInputs().eval()
    x, idx = torch.randn(9, 6), torch.randint(0, 10, (9,))
    got, want = ep.module()(x, idx), two(x, idx)
    check("dict outputs", got.keys() == want.keys() and torch.allclose(got["sum"], want["sum"]) and torch.equal(got["argmax"], want["argmax"]))
    package = torch._inductor.aoti_load_package(os.path.join(tmp, "cnn_aoti.pt2"))
    x = torch.randn(2, 3, 8, 8)
    check("package outputs", torch.allclose(package(x), eager(x), rtol=1e-5, atol=1e-6))
for f in fails:
    print("FAIL: " + f)
print("PASS: torch reads what tsctl export wrote" if not fails else "")
sys.exit(1 if fails else 0)
PY
[ "${PIPESTATUS[0]}" = 0 ] || fail=1
# The JSON documents validate against the published schema (python3-jsonschema).
if /usr/bin/python3 -c 'import jsonschema' 2>/dev/null; then
  /usr/bin/python3 - "$root/docs/schemas/make.schema.json" "$tmp/two.json" "$tmp/chatty.json" <<'PY' || bad "export JSON does not validate against make.schema.json"
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
for doc in sys.argv[2:]:
    jsonschema.validate(json.load(open(doc)), schema)
PY
fi
# validate and bench run the package with the stamped example inputs.
expect 0 validate "$tmp/cnn_aoti.pt2"
has 'PASS  torch.run .*inputs from extra/tsctl_inputs.json (2x3x8x8:float32)'
expect 0 bench "$tmp/cnn_aoti.pt2" --warmup 2 --iters 5
# Stored specs that do not parse are the archive's metadata, not the caller's flags: never exit 2, inputs inferred instead.
echo '{"model": ["2x3x8x8:nonsense"]}' >"$tmp/bad_inputs.json"
expect 0 stamp "$tmp/cnn_aoti.pt2" --file "tsctl_inputs.json=$tmp/bad_inputs.json" -o "$tmp/bad_inputs.pt2"
expect 0 validate "$tmp/bad_inputs.pt2"
has 'PASS  torch.run .*inputs inferred'
expect 0 bench "$tmp/bad_inputs.pt2" --warmup 2 --iters 5
expect 7 validate "$tmp/cnn.pt2"  # an exported program: no C++ runner here, NOT RUN
has 'PASS  pt2.program'
has 'result: NOT RUN'

# Refusals: one line, exit status, nothing written, an existing file untouched.
echo keep >"$tmp/keep.pt2"
expect 1 export --python "$models:make_model" -i 2x3x8x8 --check-input 3x3x8x8 -o "$tmp/keep.pt2"
has 'DIVERGES  3x3x8x8:float32'
grep -q 'diverges from the model on 3x3x8x8:float32' "$tmp/err" || bad "no divergence line: $(cat "$tmp/err")"
expect 2 export --python "$models:Branchy" -i 2x4 -o "$tmp/keep.pt2"
one_line
grep -q 'torch.cond' "$tmp/err" || bad "data-dependent control flow without the hint: $(cat "$tmp/err")"
expect 2 export --python "$models:not_a_module" -i 2x4 -o "$tmp/keep.pt2"
one_line
# A check set the eager model itself fails on (indices past the embedding): the caller's error, exit 2.
expect 2 export --python "$models:TwoInputs" -i 3x6 -i 3:int64:randint:0:10 --check-input 3x6,3:int64:randint:10:20 -o "$tmp/keep.pt2"
one_line
grep -q 'the eager model fails on the check inputs' "$tmp/err" || bad "eager failure not told apart: $(cat "$tmp/err")"
# An output that is a directory: refused before the export runs.
mkdir "$tmp/dir.pt2"
expect 3 export --python "$models:make_model" -i 2x3x8x8 -o "$tmp/dir.pt2"
one_line
[ "$(cat "$tmp/keep.pt2")" = keep ] || bad "a failed export changed the existing output"
# Interrupted (SIGINT, SIGTERM) while the package compiles: 128 + signal, one line, no temporary folder left.
mkdir "$tmp/t"
for sig in INT TERM; do
  TMPDIR=$tmp/t "$tsctl" export --python "$models:make_model" -i 2x3x8x8 --aoti -o "$tmp/keep.pt2" >"$tmp/out" 2>"$tmp/err" &
  pid=$!
  for _ in $(seq 50); do ls "$tmp/t"/tsctl-export-* >/dev/null 2>&1 && break; sleep 0.2; done
  sleep 2
  kill -"$sig" "$pid"
  wait "$pid"
  got=$?
  want=$([ "$sig" = INT ] && echo 130 || echo 143)
  [ "$got" = "$want" ] || bad "export interrupted by SIG$sig exited $got, not $want: $(cat "$tmp/err")"
  grep -q "interrupted by SIG$sig" "$tmp/err" || bad "no 'interrupted by SIG$sig' line: $(cat "$tmp/err")"
  # (torch's own Inductor cache, torchinductor_$USER, may stay: it is torch's, shared across runs)
  ! ls -d "$tmp/t"/tsctl-export-* >/dev/null 2>&1 || bad "SIG$sig left a temporary folder: $(ls -A "$tmp/t")"
  [ "$(cat "$tmp/keep.pt2")" = keep ] || bad "an interrupted export changed the existing output"
done
ls -d "$TMPDIR"/tsctl-export-* >/dev/null 2>&1 && bad "export left a temporary folder: $(ls -d "$TMPDIR"/tsctl-export-*)"
[ "$fail" = 0 ] && echo "PASS: tsctl export wrote programs and a package that torch reads, equal to the eager models"
exit "$fail"
