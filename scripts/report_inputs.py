#!/usr/bin/python3
"""Measures how far tsctl gets at running real archives with no flags, and
checks every argument type end to end against Python.

1. Over a corpus (default ../shared/corpus): which archives /usr/bin/python3's
   torch loads, and of those, on how many `tsctl validate` (no flags) ran
   `forward`, by input source (goal: 95 %); how many runs on inferred inputs
   FAILed (goal: 0: a guess never fails an archive) or WARNed about a guess;
   how many passes ran on inferred inputs that contradict the weights of an
   XNNPACK prepacked operator (goal 0; checked in Python, independently of
   tsctl); what stops the runs it could not make, by class of LibTorch's
   words (rank, channels, a spatial size or count, lengths shared across
   arguments, a broadcast against a stored tensor, dtype or indices, other);
   runs pinned to a view's sizes of rank 5 or more (an inner reshape, not
   the model's input); LibTorch time per archive.
2. Over testdata/args (scripts/gen_args_testdata.py): validate --load-inputs,
   --reference (matching and perturbed), --save-outputs and bench
   --load-inputs, with outputs compared to Python's.

Usage: scripts/report_inputs.py [--tsctl build/bin/tsctl] [--corpus DIR] [--jobs N]
Prints figures; exits 1 if a check of part 2 fails.
"""
import argparse
import collections
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

LOAD = "import sys, torch\ntorch.jit.load(sys.argv[1], map_location='cpu')\n"

# Independent of tsctl: whether an input contradicts the weights of XNNPACK's
# prepacked operators (which skip the shape checks of aten::linear/conv2d),
# from the shapes torch's profiler records for each call against every
# context's weight (__getstate__) in the inlined graph. Prints "consistent",
# "no prepacked operators" or the contradictions.
CONTRA = r'''
import sys, torch
def contexts(m):
    g = m.inlined_graph
    out = []
    def resolve(v):
        n = v.node()
        if n.kind() == "prim::Constant":
            return n.output().toIValue()
        if n.kind() == "prim::GetAttr":
            p = resolve(n.inputsAt(0))
            return None if p is None else getattr(p, n.s("name"))
        if v.debugName() == list(g.inputs())[0].debugName():
            return m
        return None
    def walk(block):
        for n in block.nodes():
            for b in n.blocks(): walk(b)
            if n.kind().startswith("prepacked::") and n.kind().endswith("_run"):
                obj = resolve(n.inputsAt(1))
                if obj is not None: out.append((n.kind(), obj.__getstate__()))
    walk(g)
    return out
m = torch.jit.load(sys.argv[1])
shape = [int(x) for x in sys.argv[2].split("x")]
lin, conv = set(), set()
for kind, st in contexts(m):
    st = st[0] if isinstance(st[0], tuple) else st
    w = st[0]
    groups = [e for e in st if isinstance(e, int)]
    if "linear" in kind: lin.add(w.shape[1])
    elif "transpose" in kind: conv.add(w.shape[0])
    else: conv.add(w.shape[1] * (groups[-1] if groups else 1))
with torch.autograd.profiler.profile(record_shapes=True) as p:
    m(torch.rand(*shape))
bad = []
for e in p.function_events:
    s = e.input_shapes[0] if e.input_shapes else []
    if e.name == "prepacked::linear_clamp_run" and s and s[-1] not in lin: bad.append(f"{e.name} {s} vs {sorted(lin)}")
    if e.name.startswith("prepacked::conv2d") and len(s) == 4 and s[1] not in conv: bad.append(f"{e.name} {s} vs {sorted(conv)}")
print("; ".join(bad) if bad else "consistent" if lin or conv else "no prepacked operators")
'''


def torch_loads(path):
    try:
        r = subprocess.run(["/usr/bin/python3", "-c", LOAD, path], capture_output=True, timeout=120)
        return r.returncode == 0
    except subprocess.TimeoutExpired:
        return False


def validate(tsctl, path, *flags):
    r = subprocess.run([tsctl, "validate", "--format", "json", *flags, path], capture_output=True, text=True, timeout=900)
    try:
        return json.loads(r.stdout), r
    except json.JSONDecodeError:
        return None, r


def forward_run(report):
    """(status, input source, message) of forward's torch.run check."""
    a = report["archives"][0]
    checks = a["checks"]
    model = a["details"].get("model")
    first = model[0] if isinstance(model, list) and model else model if isinstance(model, dict) else {}
    if any(c["id"] == "torch.method" and c["message"].startswith("no forward") for c in checks):
        # validate runs every method of an archive without forward: it ran
        # when one of them did.
        runs = [c for c in checks if c["id"] == "torch.run"]
        if not runs:
            return "NO-METHOD", "", "the archive has no forward and no method to run"
        passed = [c for c in runs if c["status"] == "PASS"]
        status = "PASS" if passed else runs[0]["status"]
        source = next((m.get("input_source", "") for m in (model if isinstance(model, list) else [])
                       if m.get("ran")), first.get("input_source", ""))
        return status, source, f"no forward; {len(passed)} of {len(runs)} methods ran: " + (passed or runs)[0]["message"]
    for c in checks:
        if c["id"] == "torch.run":
            return c["status"], first.get("input_source", ""), c["message"]
    fail = next((c for c in checks if c["status"] == "FAIL"), None)
    return "NONE", "", fail["id"] + ": " + fail["message"] if fail else "no torch.run check"


def guess_verdicts(report):
    """(a FAIL among the run checks on inferred inputs, a WARN that names a
    guess set aside, LibTorch seconds, a candidate set aside for contradicting
    the weights) of one archive's report."""
    a = report["archives"][0]
    model = a["details"].get("model")
    models = model if isinstance(model, list) else [model] if isinstance(model, dict) else []
    inferred = any(m.get("input_source") == "inferred" for m in models)
    run_ids = ("torch.run", "torch.finite", "torch.deterministic")
    fail = inferred and any(c["id"] in run_ids and c["status"] == "FAIL" for c in a["checks"])
    warn = any(c["id"] == "torch.run" and c["status"] == "WARN" and "guessed" in c["message"] for c in a["checks"])
    contra = any("where aten::" in c.get("outcome", "") and "would have refused" in c.get("outcome", "")
                 for m in models for c in m.get("candidates", []))
    return fail, warn, float(a["details"].get("torch_seconds", 0.0)), contra


def contradicts_weights(path, message):
    """For a PASS on one inferred float tensor: Python's word on whether that
    input contradicts a prepacked operator's weight ("" if it does not, or
    the contradiction); None where not checked (no prepacked operators, or
    another kind of input)."""
    import re
    pins = re.findall(r"--arg (\w+)=([0-9x]+):float32\b", message.split("pin them with ", 1)[-1])
    if "pin them with " not in message or len(pins) != 1:
        return None
    try:
        r = subprocess.run(["/usr/bin/python3", "-c", CONTRA, path, pins[0][1]], capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        return None
    said = r.stdout.strip()
    if r.returncode != 0 or said == "no prepacked operators":
        return None
    return "" if said == "consistent" else said


# The classes of what stops a run on inferred inputs (issue #53), read from
# the error that explains the most in torch.run's message: LibTorch's own
# words, the same for any model. The first class whose words appear.
CLASSES = [
    ("rank", r"Dimension out of range|must have same number of dimensions|-dimensional input|"
             r"Expected \dD \(unbatched\)|input must have \d dimensions|Expected hidden(\[\d\])? size"),
    ("channels", r"to have \d+ channels|running_mean should contain"),
    ("spatial size (a count to factor)", r"mat1 and mat2 shapes cannot be multiplied|is invalid for input of size|"
                                         r"input\.size\(-1\) must be equal to input_size"),
    ("lengths shared across arguments", r"must match the size of tensor b|Sizes of tensors must match|stack expects each tensor"),
    ("broadcast against a stored tensor", r"broadcasts? .* against"),
    ("dtype or indices", r"scalar type|Expected dtype|index out of range|out of bounds|indices"),
]


def blocked_class(message):
    import re
    said = message.split("(the error that explains the most", 1)[-1]
    for name, pattern in CLASSES:
        if re.search(pattern, said):
            return name
    return "other"


def corpus_report(tsctl, corpus, jobs):
    files = sorted(os.path.join(corpus, f) for f in os.listdir(corpus)
                   if os.path.isfile(os.path.join(corpus, f)) and not f.endswith(".md"))
    with concurrent.futures.ThreadPoolExecutor(jobs) as ex:
        loads = dict(zip(files, ex.map(torch_loads, files)))
    loadable = [f for f in files if loads[f]]

    verdicts = {}

    def one(path):
        report, r = validate(tsctl, path)
        if report is None:
            return path, ("ERROR", "", (r.stderr or "").strip()[:200])
        verdicts[path] = guess_verdicts(report)
        return path, forward_run(report)

    with concurrent.futures.ThreadPoolExecutor(jobs) as ex:
        results = dict(ex.map(one, loadable))
    by_source = collections.Counter()
    ran = 0
    print(f"corpus: {corpus}")
    print(f"  files: {len(files)}; /usr/bin/python3's torch loads {len(loadable)}")
    for path in loadable:
        status, source, message = results[path]
        ok = status == "PASS"
        ran += ok
        if ok:
            kind = "inferred" if source == "inferred" else source or "?"
            if kind.startswith(corpus):
                kind = "file"
            by_source[kind] += 1
        print(f"  {'ran ' if ok else 'NOT '} {os.path.basename(path)}: {status} {message[:160]}")
    pct = 100.0 * ran / max(1, len(loadable))
    print(f"forward (or, without forward, a method) run by `tsctl validate` with no flags: {ran} of {len(loadable)} "
          f"loadable archives ({pct:.1f} %; goal 95 %)")
    for source, n in by_source.most_common():
        print(f"  input source {source}: {n}")
    blocked = collections.Counter(blocked_class(results[p][2]) for p in loadable
                                  if results[p][0] != "PASS" and "not run" in results[p][2])
    print(f"not run on inferred inputs, by what stops them: {sum(blocked.values())}"
          + "".join(f"\n  {name}: {blocked.get(name, 0)}" for name, _ in CLASSES + [("other", "")]))
    view_pins = [os.path.basename(p) for p in loadable if results[p][0] == "PASS" and
                 re.search(r"a view wants (\d+x){4,}\d+;|from (view|reshape) to \[(-?\d+, ){4,}-?\d+\];", results[p][2])]
    print(f"runs pinned to a view's sizes of rank 5 or more (an inner reshape, not the model's input; goal 0): "
          f"{len(view_pins)}" + (": " + ", ".join(view_pins) if view_pins else ""))
    guess_fails = [os.path.basename(p) for p, v in verdicts.items() if v[0]]
    guess_warns = [os.path.basename(p) for p, v in verdicts.items() if v[1]]
    print(f"FAILs of a run on inferred inputs (a guess blamed on the archive; goal 0): {len(guess_fails)}"
          + (": " + ", ".join(guess_fails) if guess_fails else ""))
    print(f"WARNs naming a guess set aside (crashed, NaN/Inf, runs that differ or contradicted weights): {len(guess_warns)}"
          + (": " + ", ".join(guess_warns) if guess_warns else ""))
    # Passes on inferred inputs that contradict the weights (goal 0), checked
    # in Python, and the guesses tsctl set aside for a contradiction.
    checked, contradicted = 0, []
    for path in loadable:
        status, source, message = results[path]
        if status == "PASS" and source == "inferred":
            said = contradicts_weights(path, message)
            if said is not None:
                checked += 1
                if said:
                    contradicted.append(f"{os.path.basename(path)} ({said[:120]})")
    print(f"PASSes on inferred inputs that contradict the weights of a prepacked XNNPACK operator (checked in Python: "
          f"the profiler's input shapes against each context's weight; goal 0): {len(contradicted)} of {checked} checked"
          + (": " + "; ".join(contradicted) if contradicted else ""))
    set_aside = [os.path.basename(p) for p, v in verdicts.items() if v[3]]
    print(f"archives where a guess was set aside for contradicting the weights: {len(set_aside)}"
          + (": " + ", ".join(set_aside) if set_aside else ""))
    seconds = sorted(v[2] for v in verdicts.values())
    if seconds:
        print(f"LibTorch time per archive (load, inference, runs): median {seconds[len(seconds) // 2]:.2f} s, "
              f"worst {seconds[-1]:.2f} s")
    return pct


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600)


# Python's torch compares two torch.save files: equal tensors (or allclose
# with CLOSE=1), numbers, strings, lists, tuples and dicts recursively.
SAME = ("import os, sys, torch\n"
        "a, b = torch.load(sys.argv[1]), torch.load(sys.argv[2])\n"
        "close = os.environ.get('CLOSE') == '1'\n"
        "def eq(x, y):\n"
        "    if isinstance(x, torch.Tensor): return torch.allclose(x, y, rtol=1e-5, atol=1e-6) if close else torch.equal(x, y)\n"
        "    if isinstance(x, (list, tuple)): return len(x) == len(y) and all(eq(i, j) for i, j in zip(x, y))\n"
        "    if isinstance(x, dict): return x.keys() == y.keys() and all(eq(x[k], y[k]) for k in x)\n"
        "    return x == y\n"
        "sys.exit(0 if eq(a, b) else 1)\n")


def same_outputs(got, want, close=False):
    if not os.path.exists(got):
        return False, got + " was not written"
    r = subprocess.run(["/usr/bin/python3", "-c", SAME, got, want], capture_output=True, text=True, timeout=600,
                       env=dict(os.environ, CLOSE="1" if close else "0"))
    return r.returncode == 0, r.stderr[-300:] or "outputs differ"


def args_report(tsctl):
    d = os.path.join(ROOT, "testdata", "args")
    failures = []

    def check(name, ok, detail=""):
        print(f"  {'ok  ' if ok else 'FAIL'} {name}" + (f": {detail}" if detail and not ok else ""))
        if not ok:
            failures.append(name)

    print("every argument type (testdata/args):")
    model = os.path.join(d, "all_args.pt")
    rep, r = validate(tsctl, model, "--load-inputs", os.path.join(d, "all_args.inputs.pt"))
    check("validate --load-inputs runs forward(Tensor, int, float, bool, str, Optional, List, Tuple, Dict[str], List[Dict], Dict[int])",
          rep is not None and forward_run(rep)[0] == "PASS", (r.stdout + r.stderr)[-300:])
    rep, r = validate(tsctl, model, "--reference", os.path.join(d, "all_args.reference.pt"))
    check("validate --reference (matching) passes", r.returncode == 0, (r.stdout + r.stderr)[-300:])
    rep, r = validate(tsctl, model, "--reference", os.path.join(d, "all_args.perturbed.pt"))
    msg = "" if rep is None else " ".join(c["message"] for c in rep["archives"][0]["checks"] if c["id"] == "torch.reference")
    check("validate --reference (perturbed) fails naming outputs[1][\"scores\"] and outputs[3]",
          r.returncode == 1 and 'outputs[1]["scores"]' in msg and "outputs[3]" in msg, msg[-300:])
    rep, r = validate(tsctl, os.path.join(d, "returns_number.pt"), "--reference", os.path.join(d, "returns_number.reference.pt"))
    check("a float output 7.0 against a reference 999.0 fails", r.returncode == 1, (r.stdout + r.stderr)[-300:])
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.pt")
        rep, r = validate(tsctl, model, "--load-inputs", os.path.join(d, "all_args.inputs.pt"), "--save-outputs", out)
        check("--save-outputs: torch.load reads it and it equals Python's outputs",
              *same_outputs(out, os.path.join(d, "all_args.expected.pt")))
        out = os.path.join(tmp, "bench_out.pt")
        r = run([tsctl, "bench", "--iters", "2", "--warmup", "0", "--load-inputs", os.path.join(d, "all_args.inputs.pt"),
                 "--save-outputs", out, model])
        ok, why = same_outputs(out, os.path.join(d, "all_args.expected.pt"))
        check("bench --save-outputs: torch.load reads it and it equals Python's outputs",
              r.returncode == 0 and ok and ("written to " + out) in r.stdout, (r.stdout + r.stderr)[-300:] + why)
        out = os.path.join(tmp, "trace_out.pt")
        r = run([tsctl, "trace", "--load-inputs", os.path.join(d, "flat.inputs.npy"), "-o", os.path.join(tmp, "traced.pt"),
                 "--save-outputs", out, os.path.join(d, "flat.pt")])
        ok, why = same_outputs(out, os.path.join(d, "flat.expected.pt"), close=True)
        check("trace --save-outputs: the trace's outputs equal Python's", r.returncode == 0 and ok, (r.stdout + r.stderr)[-300:] + why)
        r = run([tsctl, "bench", "--sweep", "--save-outputs", os.path.join(tmp, "no.pt"), model])
        check("bench --sweep --save-outputs is a usage error", r.returncode == 2 and not os.path.exists(os.path.join(tmp, "no.pt")),
              r.stderr[-300:])
        for ext in ("npy", "npz"):
            out = os.path.join(tmp, f"flat_{ext}.pt")
            rep, r = validate(tsctl, os.path.join(d, "flat.pt"), "--load-inputs", os.path.join(d, f"flat.inputs.{ext}"), "--save-outputs", out)
            # allclose, not equal: a tsctl built on LibTorch 2.x runs the linear
            # layer with other kernels than Python's torch 1.13 that wrote the expectation.
            same = run(["/usr/bin/python3", "-c", "import sys, torch\nsys.exit(0 if torch.allclose(torch.load(sys.argv[1]), torch.load(sys.argv[2]), rtol=1e-5, atol=1e-6) else 1)",
                        out, os.path.join(d, "flat.expected.pt")])
            check(f"validate --load-inputs .{ext}: outputs equal Python's", same.returncode == 0, (r.stdout + same.stderr)[-300:])
        # --save-outputs FILE.npy writes NumPy's format, for validate, bench and trace alike.
        for cmd in (["validate", "--load-inputs", os.path.join(d, "flat.inputs.npy")],
                    ["bench", "--iters", "3", "--load-inputs", os.path.join(d, "flat.inputs.npy")],
                    ["trace", "--load-inputs", os.path.join(d, "flat.inputs.npy"), "-o", os.path.join(tmp, "t.pt")]):
            out = os.path.join(tmp, f"{cmd[0]}_out.npy")
            r = run([tsctl, *cmd, "--save-outputs", out, os.path.join(d, "flat.pt")])
            same = run(["/usr/bin/python3", "-c", "import sys, numpy, torch\nsys.exit(0 if numpy.allclose(numpy.load(sys.argv[1]), torch.load(sys.argv[2]).detach().numpy(), rtol=1e-5, atol=1e-6) else 1)",
                        out, os.path.join(d, "flat.expected.pt")])
            check(f"{cmd[0]} --save-outputs FILE.npy: numpy.load reads Python's outputs", r.returncode == 0 and same.returncode == 0,
                  (r.stdout + r.stderr + same.stderr)[-300:])
        # FILE.npz: the inputs (--save-inputs) and outputs, flattened, named arr_0, arr_1, ... as numpy.savez names them.
        ins, outs = os.path.join(tmp, "in.npz"), os.path.join(tmp, "out.npz")
        rep, r = validate(tsctl, os.path.join(d, "flat.pt"), "--load-inputs", os.path.join(d, "flat.inputs.npy"),
                          "--save-inputs", ins, "--save-outputs", outs)
        same = run(["/usr/bin/python3", "-c", "import sys, numpy, torch\n"
                    "i, o = numpy.load(sys.argv[1]), numpy.load(sys.argv[2])\n"
                    "ok = i.files == ['arr_0'] and numpy.array_equal(i['arr_0'], numpy.load(sys.argv[3])) and o.files == ['arr_0']\n"
                    "ok = ok and numpy.allclose(o['arr_0'], torch.load(sys.argv[4]).detach().numpy(), rtol=1e-5, atol=1e-6)\n"
                    "sys.exit(0 if ok else 1)", ins, outs, os.path.join(d, "flat.inputs.npy"), os.path.join(d, "flat.expected.pt")])
        check("validate --save-inputs/--save-outputs FILE.npz: numpy.load reads the inputs given and Python's outputs",
              r.returncode == 0 and same.returncode == 0, (r.stdout + r.stderr + same.stderr)[-300:])
        rep, r = validate(tsctl, model, "--load-inputs", os.path.join(d, "all_args.inputs.pt"), "--save-outputs", os.path.join(tmp, "many.npy"))
        saved = next((c for c in rep["archives"][0]["checks"] if c["id"] == "torch.outputs"), None) if rep else None
        check("validate --save-outputs FILE.npy of outputs that are not one tensor says why and writes nothing",
              saved is not None and saved["status"] == "FAIL" and ".npy file holds one tensor" in saved["message"]
              and not os.path.exists(os.path.join(tmp, "many.npy")), r.stdout[-300:])
    r = run([tsctl, "bench", "--iters", "5", "--warmup", "1", "--load-inputs", os.path.join(d, "all_args.inputs.pt"), model])
    check("bench --load-inputs runs every argument type", r.returncode == 0, (r.stdout + r.stderr)[-300:])
    r = run([tsctl, "bench", "--iters", "5", "--warmup", "1", model, "--arg", "x=2x3:float32", "--arg", "k=3", "--arg", "scale=0.5",
             "--arg", "flag=true", "--arg", "name=abc", "--arg", "maybe=null", "--arg", "sizes=[1, 2]", "--arg", 'pair=["2x3:float32:ones", 2]',
             "--arg", 'feats={"a": "1:float32"}', "--arg", 'nested=[{"p": [1, 2]}]', "--arg", 'weights={"1": 0.5}'])
    check("bench --arg spells every argument type", r.returncode == 0, (r.stdout + r.stderr)[-300:])
    r = run([tsctl, "bench", "--iters", "5", "--warmup", "1", model, "--arg", "x=2x3:float32", "--arg", "k=1.5"])
    check("a value that does not fit is a usage error naming the argument", r.returncode == 2 and "'k'" in r.stderr, r.stderr[-300:])

    # Inferred candidates run under a memory budget (half the machine, at
    # most 8 GiB): greedy_alloc asks 256 MiB per element of its input's last
    # dimension, so the first candidate (1x3x224x224: 56 GiB) must fail with
    # an allocation error and a smaller one run, without the OOM killer.
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    if memory // 2 > 56 << 30:
        print("  skip inferred-input memory budget: this machine has more than 112 GiB")
    else:
        rep, r = validate(tsctl, os.path.join(ROOT, "testdata", "greedy_alloc.pt"))
        status, source, msg = forward_run(rep) if rep else ("NONE", "", r.stderr)
        check("an inferred candidate over the memory budget fails and a smaller one runs",
              status == "PASS" and source == "inferred" and "1x3x224x224" not in msg, msg[-300:])
    r = run([tsctl, "validate", "--quantized-engine", "no-such-engine", os.path.join(ROOT, "testdata", "quantized.pt")])
    check("--quantized-engine with an unknown engine is a usage error naming the engines there are",
          r.returncode == 2 and "it has:" in r.stderr, r.stderr[-300:])
    r = run([tsctl, "validate", "--quantized-engine", "qnnpack", os.path.join(ROOT, "testdata", "quantized.pt")])
    check("--quantized-engine qnnpack runs a quantized model", r.returncode == 0, (r.stdout + r.stderr)[-300:])
    return failures


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tsctl", default=os.path.join(ROOT, "build", "bin", "tsctl"))
    p.add_argument("--corpus", default=os.path.join(ROOT, "..", "shared", "corpus"))
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--skip-corpus", action="store_true")
    a = p.parse_args()
    if not a.skip_corpus:
        corpus_report(a.tsctl, os.path.abspath(a.corpus), a.jobs)
    failures = args_report(a.tsctl)
    print(f"argument-type checks: {'all passed' if not failures else str(len(failures)) + ' failed'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
