#!/usr/bin/env bash
# validate of ExecuTorch programs on ExecuTorch's runtime (tsctl-pte-runner):
# runs, NOT RUN where the runtime lacks an operator or the program its .ptd,
# the .ptd found beside a program, --no-run, -v's runtime lines, and the
# sandbox the runner confines itself with. Skipped (77, never passed) where
# the build has no runtime (tsctl --version says so).
#   pte_run_test.sh TSCTL TESTDATA
set -euo pipefail
tsctl=$1
data=$2
"$tsctl" --version | grep -q '^executorch runtime ExecuTorch' || { echo "skipped: this build has no ExecuTorch runtime"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
expect() {  # expect EXIT PATTERN -- ARGS...: runs validate ARGS, checks its exit status and that stdout matches PATTERN
  local want=$1 pattern=$2
  shift 3
  local got=0
  "$tsctl" validate "$@" >"$tmp/out" 2>"$tmp/err" || got=$?
  [ "$got" = "$want" ] || { cat "$tmp/out" "$tmp/err" >&2; fail "validate $*: exit $got, not $want"; }
  [ -z "$pattern" ] || grep -Eq -- "$pattern" "$tmp/out" || { cat "$tmp/out" >&2; fail "validate $*: no line matching '$pattern'"; }
}

# Programs that run: portable kernels, XNNPACK, two inputs.
for p in add linear linear_xnnpack; do
  expect 0 'PASS  pte.run +forward: ran on inputs from its metadata' -- "$data/pte/$p.pte"
  expect 0 'PASS  pte.deterministic' -- "$data/pte/$p.pte"
  grep -q 'result: PASSED' "$tmp/out" || fail "$p.pte did not pass"
done
expect 0 'PASS  pte.load +the program and 1 method loaded by ExecuTorch' -- "$data/pte/linear.pte"
# JSON: the runtime in the details, the run counted as a run.
"$tsctl" validate --json "$data/pte/linear.pte" >"$tmp/json"
/usr/bin/python3 - "$tmp/json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
a = d["archives"][0]
assert a["result"] == "PASSED", a
assert a["details"]["pte_runtime"].startswith("ExecuTorch "), a["details"]
assert [c["id"] for c in a["checks"] if c["status"] == "PASS"][-4:] == ["pte.load", "pte.run", "pte.finite", "pte.deterministic"], a["checks"]
PY

# --input: the first tensor inputs, as for TorchScript; a shape the program
# was not planned for is the runtime's FAIL, with its reason.
expect 0 'PASS  pte.run +forward: ran on inputs from --input and its metadata \(float32\[2, 2\], float32\[2, 2\]\)' -- \
  "$data/pte/add.pte" -i 2x2:float32:fill:0.5 -i 2x2:float32:ones
expect 1 'FAIL  pte.run +forward: execute failed on inputs from --input.*float32\[3, 4\].*Error resizing tensor at input 0' -- \
  "$data/pte/linear.pte" -i 3x4
expect 2 '' -- "$data/pte/linear.pte" --arg x=1
grep -q -- "an ExecuTorch program's inputs have no names" "$tmp/err" || fail "--arg NAME= for a .pte: not the usage line"
# --arg VALUE by position: a nested list (a tensor of the input's dtype) or a tensor spec.
expect 0 'ran on inputs from --arg and its metadata \(float32\[2, 2\], float32\[2, 2\]\)' -- \
  "$data/pte/add.pte" --arg '[[1, 2], [3, 4]]' --arg 2x2:float32:ones --save-outputs "$tmp/sum.npy"
/usr/bin/python3 -c 'import sys, numpy; a = numpy.load(sys.argv[1]); assert a.tolist() == [[2, 3], [4, 5]], a' "$tmp/sum.npy" ||
  fail "--arg values did not reach the program"
expect 7 'not run: input 0 \(--arg \[\[1, 2\], \[3\]\]\): a list whose rows differ in length' -- "$data/pte/add.pte" --arg '[[1, 2], [3]]'

# --save-inputs/--save-outputs: NumPy's files (numpy.load reads them without
# torch), the inputs the run used and the outputs they gave: x + y.
expect 0 'PASS  pte.run' -- "$data/pte/add.pte" --save-inputs "$tmp/in.npz" --save-outputs "$tmp/out.npz"
/usr/bin/python3 - "$tmp/in.npz" "$tmp/out.npz" <<'PY'
import sys
import numpy as np
i, o = np.load(sys.argv[1]), np.load(sys.argv[2])
assert i.files == ["arr_0", "arr_1"] and o.files == ["arr_0"], (i.files, o.files)
assert i["arr_0"].dtype == np.float32 and i["arr_0"].shape == (2, 2), i["arr_0"]
assert np.array_equal(i["arr_0"] + i["arr_1"], o["arr_0"]), (i["arr_0"], i["arr_1"], o["arr_0"])
PY
expect 0 'PASS  pte.run' -- "$data/pte/linear.pte" --save-outputs "$tmp/out.npy"
/usr/bin/python3 -c 'import sys, numpy; a = numpy.load(sys.argv[1]); assert a.shape == (2, 3) and a.dtype == numpy.float32, a' "$tmp/out.npy"
expect 1 'FAIL  pte.run +--save-inputs: nothing saved \(an .npy file holds one tensor' -- "$data/pte/add.pte" --save-inputs "$tmp/two.npy"
[ ! -e "$tmp/two.npy" ] || fail "a refused .npy was written"
expect 2 '' -- "$data/pte/add.pte" --save-outputs "$tmp/out.pt"
grep -q "values are saved in NumPy's format" "$tmp/err" || fail "--save-outputs FILE.pt for a .pte: not the usage line"

# --load-inputs FILE.npz: the inputs a run saved give the same outputs;
# --reference FILE.npz and --reference-model B (a .pte, or a TorchScript
# archive run by LibTorch) on the same inputs: pte.reference.
expect 0 'from --load-inputs' -- "$data/pte/add.pte" --load-inputs "$tmp/in.npz" --save-outputs "$tmp/again.npz"
cmp -s "$tmp/out.npz" "$tmp/again.npz" || fail "--load-inputs of the saved inputs gave other outputs"
expect 0 'PASS  pte.reference +1 output matches' -- "$data/pte/add.pte" --load-inputs "$tmp/in.npz" --reference "$tmp/out.npz"
expect 0 'PASS  pte.reference +1 output matches reference model .*linear_xnnpack.pte' -- "$data/pte/linear.pte" --reference-model "$data/pte/linear_xnnpack.pte"
expect 1 'FAIL  pte.reference +outputs against reference model .*linear_b.pte: output 0: 4 of 6 elements differ' -- "$data/pte/linear.pte" --reference-model "$data/pte/linear_b.pte"
if "$tsctl" --version | grep -q '^libtorch [0-9]'; then
  expect 0 'PASS  pte.reference +1 output matches reference model .*linear_twin.pt' -- "$data/pte/linear.pte" --reference-model "$data/pte/linear_twin.pt"
fi
expect 2 '' -- "$data/pte/add.pte" --load-inputs "$tmp/in.pt"
grep -q "loaded from NumPy's files" "$tmp/err" || fail "--load-inputs FILE.pt for a .pte: not the usage line"

# An operator this runtime does not register: named, WARN, NOT RUN (exit 7), never a crash.
/usr/bin/python3 - "$data/pte/add.pte" "$tmp/custom_op.pte" <<'PY'
import sys
d = open(sys.argv[1], "rb").read()
assert d.count(b"aten::add") == 1
open(sys.argv[2], "wb").write(d.replace(b"aten::add", b"xten::add"))
PY
expect 7 'WARN  pte.load +forward: needs what this runtime \(ExecuTorch [0-9.]+\) lacks: operator xten::add' -- "$tmp/custom_op.pte"
grep -q 'result: NOT RUN' "$tmp/out" || fail "a missing operator is not NOT RUN"

# External tensors: without their .ptd NOT RUN saying so; with --data, or the
# .ptd named as the program beside it, the program runs.
cp "$data/pte/linear_external.pte" "$tmp/prog.pte"
expect 7 'SKIP  pte.load +not run: its tensors stored outside the program need --data FILE.ptd' -- "$tmp/prog.pte"
expect 0 'PASS  pte.run' -- "$tmp/prog.pte" --data "$data/pte/linear_external.ptd"
grep -Eq 'PASS  pte.data +the 2 external tensors are in .*linear_external.ptd$' "$tmp/out" || fail "--data is not named"
cp "$data/pte/linear_external.ptd" "$tmp/prog.ptd"
expect 0 'PASS  pte.data +the 2 external tensors are in .*prog.ptd \(found beside the program' -- "$tmp/prog.pte"
# A .ptd beside it that lacks the program's tensors: pte.data FAILs, ExecuTorch is not given it.
cp "$data/pte/linear_external.pte" "$tmp/other.pte"
/usr/bin/python3 - "$data/pte/linear_external.ptd" "$tmp/other.ptd" <<'PY'
import sys
d = open(sys.argv[1], "rb").read()
assert d.count(b"lin.weight") == 1
open(sys.argv[2], "wb").write(d.replace(b"lin.weight", b"lin.wrong!"))
PY
expect 1 'FAIL  pte.data .*lacks lin.weight' -- "$tmp/other.pte"
grep -Eq 'SKIP  pte.load +not run: ExecuTorch is not given a program whose external tensors are missing' "$tmp/out" || fail "a .ptd lacking tensors was handed to ExecuTorch"

# Not programs: NOT RUN, saying why.
expect 7 'not run: an ExecuTorch data file' -- "$data/pte/linear_external.ptd"

# A bundled program: each test case is a check (pte.case, one JUnit testcase
# each), its inputs set and its outputs compared with the bundle's expected
# ones at the tolerances; an expected value changed makes that case FAIL.
expect 0 'PASS  pte.case +forward case 0: 1 output equals the bundle' -- "$data/pte/linear.bpte"
grep -Eq 'PASS  pte.bundled +1 test suite, 1 case, each for a method the program has' "$tmp/out" || fail "pte.bundled"
"$tsctl" validate --format junit "$data/pte/linear.bpte" | grep -q '<testcase [^>]*name="pte.case\[forward#0\]"' || fail "JUnit: no testcase for the case"
"$tsctl" inspect --format json "$data/pte/linear.bpte" >"$tmp/json"
/usr/bin/python3 - "$data/pte/linear.bpte" "$tmp/json" "$tmp/wrong.bpte" <<'PY'
import json, struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
want = json.load(open(sys.argv[2]))["bundled"]["test_suites"][0]["test_cases"][0]["expected_outputs"][0]
assert want["dtype"] == "float32" and want["bytes"] == 24, want
at = want["offset"] + 4 * 4   # element 4 of the expected [2, 3]
d[at:at + 4] = struct.pack("<f", struct.unpack("<f", d[at:at + 4])[0] + 0.5)
open(sys.argv[3], "wb").write(d)
PY
expect 1 'FAIL  pte.case +forward case 0: output 0: 1 of 6 elements differ beyond rtol 1e-05, atol 1e-08; the first at element 4' -- "$tmp/wrong.bpte"
# A tolerance wide enough accepts it; --input does not apply to a bundle.
expect 0 'PASS  pte.case' -- "$tmp/wrong.bpte" --atol 1
expect 2 '' -- "$data/pte/linear.bpte" -i 2x4
grep -q -- '--input does not apply to a bundled program' "$tmp/err" || fail "--input for a .bpte: not the usage line"

# --skip of pte.run or pte.load leaves that work out, as --skip torch.run
# does (reported SKIP, never run and relabelled): nothing after it is checked.
expect 0 'SKIP  pte.run +skipped by --skip' -- --skip pte.run "$data/pte/linear.pte"
grep -q 'PASS  pte.load' "$tmp/out" || fail "--skip pte.run did not load the program"
grep -Eq 'pte.finite|pte.deterministic' "$tmp/out" && fail "--skip pte.run ran the program"
expect 0 'SKIP  pte.load +skipped by --skip' -- --skip pte.load "$data/pte/linear.pte"
grep -Eq 'PASS  pte.run|pte.finite' "$tmp/out" && fail "--skip pte.load loaded and ran the program"
# pte.format keeps the runtime away even when skipped: it still runs, only
# its verdict is replaced, and a file the reader refuses is never handed over
# (NOT RUN, exit 7).
head -c 200 "$data/pte/linear.pte" >"$tmp/cut.pte"
expect 7 'SKIP  pte.load +not run: ExecuTorch is not given a file that fails pte.format' -- --skip pte.format "$tmp/cut.pte"
grep -Eq 'SKIP  pte.format +skipped by --skip' "$tmp/out" || fail "--skip pte.format was not reported SKIP"
# Another runtime's skip leaves this one's work alone.
expect 0 'PASS  pte.deterministic' -- --skip torch.run "$data/pte/linear.pte"
# --no-run loads only; -v shows the runtime's own lines, each prefixed and escaped.
expect 0 'PASS  pte.load' -- --no-run "$data/pte/linear.pte"
grep -q 'pte.run' "$tmp/out" && fail "--no-run ran the program"
expect 0 'PASS  pte.run' -- -v "$data/pte/linear_xnnpack.pte"
grep -q 'linear_xnnpack.pte: ExecuTorch: ' "$tmp/err" || fail "-v shows no runtime line"

# bench: a program timed on the runtime, as a TorchScript archive is.
"$tsctl" bench --iters 50 --warmup 5 "$data/pte/linear_xnnpack.pte" >"$tmp/out" || fail "bench of a .pte"
grep -q 'ExecuTorch [0-9.]*$' "$tmp/out" && grep -q '^latency over 50 calls' "$tmp/out" && grep -q '^runs  *5 warm-up calls' "$tmp/out" ||
  { cat "$tmp/out" >&2; fail "bench of a .pte: not the expected report"; }
"$tsctl" bench --json --iters 20 --warmup 2 "$data/pte/add.pte" >"$tmp/json" || fail "bench --json of a .pte"
/usr/bin/python3 - "$tmp/json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["runtime"].startswith("ExecuTorch "), d.get("runtime")
assert len(d["latencies_ns"]) == 20 and all(t > 0 for t in d["latencies_ns"]), d["latencies_ns"]
assert d["inputs"] == ["2x2:float32", "2x2:float32"], d["inputs"]
assert d["method"] == "forward"
PY
bench_fails() {  # bench_fails EXIT PATTERN ARGS...: one line on stderr matching PATTERN, exit EXIT
  local want=$1 pattern=$2 got=0
  shift 2
  "$tsctl" bench "$@" >"$tmp/out" 2>"$tmp/err" || got=$?
  [ "$got" = "$want" ] && [ "$(wc -l <"$tmp/err")" = 1 ] && grep -Eq -- "$pattern" "$tmp/err" ||
    { cat "$tmp/err" >&2; fail "bench $*: exit $got, not $want with one line matching '$pattern'"; }
}
"$tsctl" bench --iters 3 --warmup 1 -i 2x4:float32:ones "$data/pte/linear.pte" | grep -q '^inputs  *2x4:float32  from --input' ||
  fail "bench -i of a .pte"
# --profile: the per-operator table from the ETDump ExecuTorch's own event
# tracer recorded (--etdump writes it: size-prefixed, identifier ED00).
"$tsctl" bench --iters 7 --warmup 1 --etdump "$tmp/p.etdp" --json "$data/pte/linear.pte" >"$tmp/json" || fail "bench --etdump of a .pte"
/usr/bin/python3 - "$tmp/json" "$tmp/p.etdp" <<'PY'
import json, struct, sys
ops = {o["name"]: o for o in json.load(open(sys.argv[1]))["profile"]["ops"]}
assert set(ops) == {"aten::permute_copy.out", "aten::addmm.out", "aten::relu.out", "aten::add.out"}, ops
assert all(o["calls"] == 7 and 0 < o["self_ns"] <= o["total_ns"] for o in ops.values()), ops
d = open(sys.argv[2], "rb").read()
assert d[8:12] == b"ED00" and struct.unpack("<I", d[:4])[0] <= len(d) - 4, d[:16]
PY
"$tsctl" bench --iters 5 --warmup 1 --profile "$data/pte/linear_xnnpack.pte" | grep -Eq '^  delegate XnnpackBackend +5 ' || fail "bench --profile: no delegate row"
"$tsctl" bench --iters 3 --warmup 1 --threads 1 "$data/pte/linear_xnnpack.pte" | grep -q '^device  *cpu, 1 threadpool thread, 1 instance, ExecuTorch' ||
  fail "bench --threads 1 of a .pte: not on the device line"
bench_fails 2 'device cuda does not apply to an ExecuTorch program' --device cuda "$data/pte/add.pte"
bench_fails 2 'holds tensors, not a program to time' "$data/pte/linear_external.ptd"
head -c 100 "$data/pte/linear.pte" >"$tmp/truncated.pte"
bench_fails 4 'past the end of the file' "$tmp/truncated.pte"   # the reader's line: never handed to the runtime
bench_fails 5 'forward: .*tsctl validate says why' --iters 3 "$tmp/custom_op.pte"

# The runner is tsctl's child, not a command: started by hand it says so.
runner=$(dirname "$(readlink -f "$tsctl")")/../lib/tsctl-pte-runner
if [ -x "$runner" ]; then
  got=0
  "$runner" "$data/pte/add.pte" >/dev/null 2>"$tmp/err" || got=$?
  [ "$got" = 2 ] && grep -q 'started by tsctl, not by hand' "$tmp/err" || fail "the runner started by hand: exit $got"
fi
echo "pte_run: ok"
