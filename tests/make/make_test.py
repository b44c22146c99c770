#!/usr/bin/python3
"""End-to-end tests of `tsctl trace` and `tsctl script`: the archives they
write load in Python's torch, give the eager model's outputs, carry the
producer record and the input spec, and a diverging trace or a failing
script writes nothing.

Usage: make_test.py TSCTL REPO_ROOT   (needs Debian's python3-torch)
"""
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

import torch

TSCTL, ROOT = sys.argv[1], sys.argv[2]
MODELS = os.path.join(ROOT, "testdata", "models", "tiny_models.py")
failures = []
passed = 0


def run(*args):
    return subprocess.run([TSCTL, *args], capture_output=True, text=True)


def check(name, cond, detail=""):
    global passed
    if cond:
        passed += 1
    else:
        failures.append(f"{name}: {detail}")


def extra(path, names):
    files = {n: "" for n in names}
    m = torch.jit.load(path, _extra_files=files)
    return m, {k: v.decode() if isinstance(v, bytes) else v for k, v in files.items()}


def eager(name):
    spec = importlib.util.spec_from_file_location("tiny_models", MODELS)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    obj = getattr(mod, name)
    return obj().eval()


def same_outputs(a, b, inputs):
    with torch.no_grad():
        return all(torch.allclose(a(*x), b(*x), rtol=1e-5, atol=1e-6) for x in inputs)


python_built = "embedding built in" in run("--version").stdout
with tempfile.TemporaryDirectory() as d:
    # C++ tracer over an archive.
    out = os.path.join(d, "traced.pt")
    r = run("trace", os.path.join(ROOT, "testdata", "traced_cnn.pt"), "--input", "1x3x32x32",
            "--check-input", "2x3x32x32", "-o", out)
    check("trace archive exit", r.returncode == 0, r.stderr)
    traced, files = extra(out, ["producer_info.json", "tsctl_inputs.json"])
    original = torch.jit.load(os.path.join(ROOT, "testdata", "traced_cnn.pt"))
    check("trace archive outputs", same_outputs(original, traced, [(torch.randn(3, 3, 32, 32),)]))
    check("trace archive producer", json.loads(files["producer_info.json"]).get("written_by") == "tsctl", files)
    check("trace archive inputs", json.loads(files["tsctl_inputs.json"]) == {"forward": ["1x3x32x32:float32"]}, files)
    check("trace keeps parameters as attributes",
          len(list(traced.named_parameters())) == len(list(original.named_parameters())))
    r = run("validate", out)
    check("traced archive validates with its stored inputs", r.returncode == 0 and "extra/tsctl_inputs.json" in r.stdout, r.stdout)

    # A trace of data-dependent control flow diverges: reported, nothing written.
    out = os.path.join(d, "branchy.pt")
    r = run("trace", os.path.join(ROOT, "testdata", "branchy.pt"), "--input", "2x4",
            "--check-input", "2x4", "--check-input", "3x4", "-o", out)
    check("divergence exit 1", r.returncode == 1, r.returncode)
    check("divergence names the inputs", "DIVERGES  3x4:float32" in r.stdout and "3x4:float32" in r.stderr, r.stdout + r.stderr)
    check("divergence writes nothing", not os.path.exists(out))

    # --freeze: parameters become constants.
    out = os.path.join(d, "frozen.pt")
    r = run("trace", os.path.join(ROOT, "testdata", "traced_cnn.pt"), "--input", "1x3x32x32", "--freeze", "-o", out)
    check("frozen trace", r.returncode == 0 and len(list(torch.jit.load(out).named_parameters())) == 0, r.stderr)

    # TorchScript source through LibTorch's front end.
    out = os.path.join(d, "net.pt")
    r = run("script", os.path.join(ROOT, "testdata", "models", "net.ts"), "--class", "Net", "--input", "2x4", "-o", out)
    check("script .ts exit", r.returncode == 0, r.stderr)
    m = torch.jit.load(out)
    x = torch.tensor([[1.0, -2.0, 3.0, 4.0]])
    check("script .ts computes", torch.equal(m(x), torch.relu(x) * 2.0 + (x - 1.0)), m(x))
    check("script .ts keeps control flow", torch.equal(m(-x), torch.relu(-x) * 2.0 + (-x + 1.0)))
    out = os.path.join(d, "broken.pt")
    r = run("script", os.path.join(ROOT, "testdata", "models", "broken.ts"), "-o", out)
    check("broken source exit 2", r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr)
    check("broken source writes nothing", not os.path.exists(out))
    # Issue 13 items 23, 25, 26: what README and tsctl-script(1) say.
    net_ts = os.path.join(ROOT, "testdata", "models", "net.ts")
    out = os.path.join(d, "net_check.pt")
    r = run("script", net_ts, "--check-input", "1x4", "-o", out)
    check("script .ts ignores --check-input with one note, exit 0",
          r.returncode == 0 and os.path.exists(out) and len(r.stderr.splitlines()) == 1 and
          r.stderr.startswith("tsctl: script: note: ") and "--check-input ignored" in r.stderr, (r.returncode, r.stderr))
    out = os.path.join(d, "net_bad_input.pt")
    r = run("script", net_ts, "--input", "2x4", "--input", "2x4", "-o", out)
    check("script .ts whose forward fails on --input: exit 2, one line, nothing written",
          r.returncode == 2 and len(r.stderr.splitlines()) == 1 and not os.path.exists(out), (r.returncode, r.stderr))
    no_forward_ts = os.path.join(ROOT, "testdata", "models", "no_forward.ts")
    out = os.path.join(d, "no_forward.pt")
    r = run("script", no_forward_ts, "-o", out)
    check("script .ts without forward is written", r.returncode == 0 and os.path.exists(out), (r.returncode, r.stderr))
    check("script .ts without forward runs its method", r.returncode == 0 and
          torch.equal(torch.jit.load(out).shift(torch.ones(2)), torch.full((2,), 2.0)))
    out = os.path.join(d, "no_forward_input.pt")
    r = run("script", no_forward_ts, "--input", "2x4", "-o", out)
    check("script .ts without forward, with --input: exit 2, nothing written",
          r.returncode == 2 and "no forward" in r.stderr and not os.path.exists(out), (r.returncode, r.stderr))

    if python_built:
        out = os.path.join(d, "net_py.pt")
        r = run("trace", "--python", MODELS + ":Net", "--input", "2x4", "--check-input", "5x4", "-o", out)
        check("trace --python exit", r.returncode == 0, r.stderr)
        check("trace --python equals eager", same_outputs(eager("Net"), torch.jit.load(out), [(torch.randn(7, 4),)]))
        _, files = extra(out, ["producer_info.json", "tsctl_inputs.json"])
        check("trace --python producer", "tsctl_version" in json.loads(files["producer_info.json"]), files)

        out = os.path.join(d, "branchy_py.pt")
        r = run("script", "--python", MODELS + ":Branchy", "--input", "2x4", "--check-input", "3x4", "-o", out)
        check("script --python exit", r.returncode == 0, r.stderr)
        b = torch.jit.load(out)
        check("script --python keeps both branches",
              same_outputs(eager("Branchy"), b, [(torch.ones(2, 4),), (-torch.ones(2, 4),)]))

        out = os.path.join(d, "hidden.pt")
        r = run("script", "--python", MODELS + ":Hidden", "-o", out)
        check("no source: exit 2, says so", r.returncode == 2 and "source" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr)
        check("no source writes nothing", not os.path.exists(out))
        r = run("trace", "--python", MODELS + ":Branchy", "--input", "1x4", "--check-input", "1x4", "--check-input", "2x4",
                "--check-input", "3x4", "--check-input", "4x4", "-o", os.path.join(d, "b.pt"))
        check("trace --python of control flow: a divergence among 4 random inputs, or matches all",
              r.returncode in (0, 1) and ("DIVERGES" in r.stdout) == (r.returncode == 1), r.stdout + r.stderr)
        # A file and folder name that is not UTF-8 (Linux names are bytes):
        # the model is found, and errors print the name escaped.
        odd = os.path.join(os.fsencode(d), b"m\xff")
        os.mkdir(odd)
        odd_py = os.path.join(odd, b"tiny\xfe.py")
        with open(MODELS, "rb") as src, open(odd_py, "wb") as dst:
            dst.write(src.read())
        out = os.path.join(os.fsencode(d), b"o\xff.pt")
        r = run("trace", "--python", odd_py + b":Net", "--input", "2x4", "-o", out)
        check("trace --python FILE whose name is not UTF-8: exit 0", r.returncode == 0, (r.returncode, r.stderr))
        check("trace --python: an output name that is not UTF-8 is printed escaped", "o\\xff.pt" in r.stdout, r.stdout)
        check("trace --python FILE whose name is not UTF-8: equals eager",
              os.path.exists(out) and same_outputs(eager("Net"), torch.jit.load(open(out, "rb")), [(torch.randn(3, 4),)]))
        # A form feed counts as no line break (as compile() and linecache
        # count), so torch.jit.script reads the right source lines.
        odd_ff = os.path.join(odd, b"ff\xfe.py")
        with open(MODELS, "rb") as src, open(odd_ff, "wb") as dst:
            dst.write(b"\x0c\n# a form feed above\n" + src.read())
        out = os.path.join(d, "ff.pt")
        r = run("script", "--python", odd_ff + b":Branchy", "--input", "2x4", "--check-input", "3x4", "-o", out)
        check("script --python FILE named in bytes, with a form feed: exit 0, equals eager",
              r.returncode == 0 and same_outputs(eager("Branchy"), torch.jit.load(out), [(torch.ones(2, 4),), (-torch.ones(2, 4),)]),
              (r.returncode, r.stderr))
        r = run("trace", "--python", odd_py + b":Nope", "--input", "2x4", "-o", os.path.join(d, "nope.pt"))
        check("a missing factory in a file named in bytes: exit 2, one line naming it escaped",
              r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "m\\xff/tiny\\xfe.py" in r.stderr
              and "'Nope'" in r.stderr, (r.returncode, r.stderr))
        if "\nlibtorch 2." in run("--version").stdout:
            out = os.path.join(os.fsencode(d), b"e\xff.pt2")
            r = run("export", "--python", odd_py + b":Net", "--input", "2x4", "-o", out)
            check("export to a name that is not UTF-8: exit 0, written, printed escaped",
                  r.returncode == 0 and os.path.exists(out) and "e\\xff.pt2" in r.stdout, (r.returncode, r.stderr, r.stdout))
        if "\nlibtorch 1." in run("--version").stdout:
            # tsctl export where the embedded Python's torch is 1.13: one line, exit 6, nothing written.
            out = os.path.join(d, "e.pt2")
            r = run("export", "--python", MODELS + ":Net", "--input", "2x4", "-o", out)
            check("export without torch.export: exit 6, one line", r.returncode == 6 and
                  "needs torch.export" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr)
            check("export without torch.export writes nothing", not os.path.exists(out) and not r.stdout)
    else:
        print("python embedding not built: --python cases skipped")

for f in failures:
    print("FAIL:", f)
print(f"{passed} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
