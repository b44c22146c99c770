#!/usr/bin/env python3
"""Checks what `tsctl validate` does with ExecuTorch programs against
ExecuTorch's own Python runtime (issue #54's measure). For every .pte of the
folders given (default: ../shared/corpus/pte and testdata/pte), it runs

    TSCTL validate --json --save-inputs I.npz --save-outputs O.npz FILE

and counts the programs that ran, those NOT RUN naming an operator or
backend the runtime lacks, and the rest. For each that ran it loads the same
program in `executorch.runtime` (the same release, 1.5.1), runs the method
tsctl saved (forward, else the first) on the inputs tsctl saved, and
compares the outputs with tsctl's, bit for bit (NaN equal to NaN). For each
.bpte it counts the pte.case results. With --speed it also times, per
program that ran, the whole `tsctl validate FILE` command (median of
--repeat runs, fork to exit) against a fresh Python process that imports
executorch.runtime, loads the program and runs the method once (the
issue's goal: tsctl <= 1/2 of it). With --profile, per program that ran,
`tsctl bench --profile --etdump F.etdp --json` is compared with what
ExecuTorch's Inspector reads from that same file: per kernel, the calls and
the summed times of its native_call_NAME events (tsctl's self time) and of
the instruction events around them (OPERATOR_CALL: tsctl's total), and of
each DELEGATE_CALL (a delegate's row); they must be equal.

    PYTHON scripts/pte_runtime_check.py build/bin/tsctl [DIR ...] [--speed] [--repeat N] [--profile]

PYTHON: an interpreter with torch 2.x and PyPI's executorch 1.5.1 (its
runtime's pybindings need `import torch` first). Exits 1 if any output
differs or a program tsctl ran fails to run in Python.
"""
import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings

warnings.filterwarnings("ignore")
import numpy as np  # noqa: E402
import torch  # noqa: E402,F401  (executorch's pybindings link libtorch)
from executorch.runtime import Runtime  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def classify(report):
    """ran / lacks / other, and the line that says why."""
    a = report["archives"][0]
    checks = a["checks"]
    if a["result"] == "PASSED" and any(c["id"] in ("pte.run", "pte.case") and c["status"] == "PASS" for c in checks):
        return "ran", ""
    for c in checks:
        if c["id"] == "pte.load" and c["status"] == "WARN" and "lacks" in c["message"]:
            return "lacks", c["message"]
    bad = [c for c in checks if c["status"] in ("FAIL", "SKIP") and c["id"].startswith("pte.")]
    return "other", (bad[-1]["message"] if bad else a.get("not_run", a["result"]))


def python_value(a):
    if a.ndim == 0:
        return a.item()
    return torch.from_numpy(np.ascontiguousarray(a))


def same(x, y):
    x, y = np.asarray(x), np.asarray(y)
    if x.shape != y.shape or x.dtype != y.dtype:
        return False
    if x.dtype.kind == "f":
        return bool(np.array_equal(x, y, equal_nan=True))
    return bool(np.array_equal(x, y))


def python_run(path, inputs_npz, data_path):
    """The outputs of ExecuTorch's Python runtime on tsctl's saved inputs."""
    program = Runtime.get().load_program(path, data_path=data_path)
    names = sorted(program.method_names)
    name = "forward" if "forward" in names else names[0]
    saved = np.load(inputs_npz)
    args = [python_value(saved[f"arr_{i}"]) for i in range(len(saved.files))]
    out = program.load_method(name).execute(args)
    return [o.numpy() if isinstance(o, torch.Tensor) else np.asarray(o) for o in out]


def tsctl_validate(tsctl, path, tmp):
    i, o = os.path.join(tmp, "i.npz"), os.path.join(tmp, "o.npz")
    for f in (i, o):
        if os.path.exists(f):
            os.remove(f)
    save = [] if path.endswith(".bpte") else ["--save-inputs", i, "--save-outputs", o]
    p = subprocess.run([tsctl, "validate", "--json"] + save + [path], capture_output=True, text=True)
    try:
        return json.loads(p.stdout), i, o
    except json.JSONDecodeError:
        return None, i, o


def median_wall(cmd, repeat):
    """The median wall time of `cmd`, fork to exit; None if a run failed."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        if subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode != 0:
            return None
        times.append(time.perf_counter() - start)
    return statistics.median(times)


PY_ONCE = """import sys, torch
from executorch.runtime import Runtime
p = Runtime.get().load_program(sys.argv[1], data_path=sys.argv[2] if len(sys.argv) > 2 else None)
n = sorted(p.method_names)
m = p.load_method("forward" if "forward" in n else n[0])
meta = m.metadata
args = []
for i in range(meta.num_inputs()):
    t = meta.input_tensor_meta(i)
    args.append(torch.rand(t.sizes()) if t.dtype() == 6 else torch.zeros(t.sizes(), dtype=torch.int64))
m.execute(args)
"""


def inspector_profile(etdump):
    """Per kernel (name without its namespace) or delegate: [calls, total ns, self ns], from ExecuTorch's Inspector."""
    from executorch.devtools import Inspector
    rows = {}
    for block in Inspector(etdump_path=etdump).event_blocks:
        if block.name != "Execute":
            continue
        pending = None  # the native_call_ event, which precedes its instruction's event
        for e in block.events:
            raw = [round(t * 1e6) for t in (e.perf_data.raw if e.perf_data else [])]
            if e.name.startswith("native_call_"):
                pending = (e.name[len("native_call_"):], raw)
            elif e.name == "OPERATOR_CALL" and pending:
                row = rows.setdefault(pending[0], [0, 0, 0])
                row[0] += len(raw)
                row[1] += sum(raw)
                row[2] += sum(pending[1])
                pending = None
            elif e.name == "DELEGATE_CALL":
                row = rows.setdefault("delegate", [0, 0, 0])
                row[0] += len(raw)
                row[1] += sum(raw)
                row[2] += sum(raw)
    return rows


def tsctl_profile(tsctl, path, tmp):
    etdump = os.path.join(tmp, "p.etdp")
    p = subprocess.run([tsctl, "bench", "--profile", "--iters", "20", "--warmup", "2", "--etdump", etdump, "--json", path],
                       capture_output=True, text=True)
    if p.returncode != 0:
        return None, None
    rows = {}
    for op in json.loads(p.stdout).get("profile", {}).get("ops", []):
        name = "delegate" if op["name"].startswith("delegate ") else op["name"].split("::", 1)[-1]
        row = rows.setdefault(name, [0, 0, 0])
        row[0] += op["calls"]
        row[1] += op["total_ns"]
        row[2] += op["self_ns"]
    return rows, etdump


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tsctl")
    ap.add_argument("dirs", nargs="*")
    ap.add_argument("--speed", action="store_true")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
    dirs = args.dirs or [os.path.join(ROOT, "..", "shared", "corpus", "pte"), os.path.join(ROOT, "testdata", "pte")]
    files = sorted(f for d in dirs for f in glob.glob(os.path.join(d, "*.pte")) + glob.glob(os.path.join(d, "*.bpte")))
    counts = {"ran": 0, "lacks": 0, "other": 0}
    equal = differ = py_failed = cases = cases_passed = 0
    speed = []
    profiles_equal = profiles_differ = 0
    with tempfile.TemporaryDirectory() as tmp:
        for path in files:
            name = os.path.relpath(path, ROOT)
            report, i, o = tsctl_validate(args.tsctl, path, tmp)
            if report is None or not report.get("archives"):
                counts["other"] += 1
                print(f"{name}: other: tsctl's error line")
                continue
            kind, why = classify(report)
            counts[kind] += 1
            if path.endswith(".bpte"):
                got = [c for c in report["archives"][0]["checks"] if c["id"] == "pte.case"]
                cases += len(got)
                cases_passed += sum(c["status"] == "PASS" for c in got)
                print(f"{name}: {kind}: {sum(c['status'] == 'PASS' for c in got)} of {len(got)} bundled cases pass")
                continue
            if kind != "ran":
                print(f"{name}: {kind}: {why}")
                continue
            try:
                # The .ptd tsctl used (--data, or the one found beside the program).
                data = report["archives"][0]["details"].get("pte_data")
                py = python_run(path, i, data)
            except Exception as e:  # noqa: BLE001 - any failure is reported
                py_failed += 1
                print(f"{name}: ran in tsctl; Python's runtime failed: {type(e).__name__}: {str(e)[:200]}")
                continue
            ts = np.load(o)
            ts_out = [ts[f"arr_{k}"] for k in range(len(ts.files))]
            ok = len(ts_out) == len(py) and all(same(a, b) for a, b in zip(ts_out, py))
            equal += ok
            differ += not ok
            line = f"{name}: ran; outputs {'equal' if ok else 'DIFFER'} ({len(py)} outputs)"
            if args.profile:
                ours, etdump = tsctl_profile(args.tsctl, path, tmp)
                theirs = inspector_profile(etdump) if ours is not None else None
                same_profile = ours is not None and ours == theirs
                profiles_equal += same_profile
                profiles_differ += not same_profile
                line += f"; profile {'equals' if same_profile else 'DIFFERS from'} the Inspector's ({len(ours or {})} rows)"
                if not same_profile:
                    line += f" tsctl {ours} Inspector {theirs}"
            if args.speed:
                t = median_wall([args.tsctl, "validate", path], args.repeat)
                p = median_wall([sys.executable, "-c", PY_ONCE, path] + ([data] if data else []), args.repeat)
                if t is None or p is None:
                    line += f"; not timed: {'tsctl' if t is None else 'Python'} failed"
                else:
                    speed.append(t / p)
                    line += f"; tsctl validate {t * 1000:.0f} ms, Python {p * 1000:.0f} ms, ratio {t / p:.3f}"
            print(line)
    print(f"\n{len(files)} files: ran {counts['ran']}, NOT RUN naming a missing operator or backend {counts['lacks']}, "
          f"other {counts['other']}")
    print(f"outputs against executorch.runtime: {equal} equal, {differ} differ, {py_failed} Python could not run")
    print(f"bundled cases: {cases_passed} of {cases} pass")
    if args.profile:
        print(f"bench --profile against ExecuTorch's Inspector on the same ETDump: {profiles_equal} equal, {profiles_differ} differ")
    if speed:
        print(f"speed: tsctl validate / Python load+run, median ratio {statistics.median(speed):.3f} "
              f"(max {max(speed):.3f}) over {len(speed)} programs")
    return 1 if differ or py_failed or profiles_differ else 0


if __name__ == "__main__":
    sys.exit(main())
