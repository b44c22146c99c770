#!/usr/bin/env python3
"""torch.stateful (issue #51 item 6): state that survives a call is a finding,
on archives made by the torch of this build's LibTorch in a temporary folder:

- a call counter (`self.n += 1`) whose answer changes from the third call:
  WARN naming `n` and its source line, FAIL with --strict, and against a
  golden reference recorded from its honest first call torch.reference FAILs
  (the last call on one copy is compared too); the number of calls comes
  from --seed (the same twice), --calls, or is drawn and said in the JSON;
- a counter kept in a submodule (`inner.k`, through an inlined call);
- a buffer changed in place (`self.buf.add_(1)`);
- a list attribute appended to (`self.hist.append(...)`);
- a tensor constant of a traced graph changed in place (a counter shared by
  every copy of the model: the two fresh copies differ too);
- an honest model (convolution, BatchNorm in eval mode, linear): PASS, and
  no WARN at all with --strict;
- BatchNorm saved in train() mode, scripted and traced: a WARN that says it
  updates its running statistics.

Usage: stateful_test.py TSCTL PYTHON (PYTHON: the torch that makes the
archives). Exit 77 when PYTHON has no torch.
"""
import json
import subprocess
import sys
import tempfile

from validate_checks import check, finish, validate

MAKE = r'''
import sys, torch, torch.nn as nn
from typing import List
out = sys.argv[1]
torch.manual_seed(0)

class Counter(nn.Module):
    def __init__(s):
        super().__init__(); s.n = 0
    def forward(s, x):
        s.n += 1
        if s.n > 2:
            return x * 3.0
        return x * 2.0

class Inner(nn.Module):
    def __init__(s):
        super().__init__(); s.k = 0
    def forward(s, x):
        s.k = s.k + 1
        return x + float(s.k // 3)

class Outer(nn.Module):
    def __init__(s):
        super().__init__(); s.inner = Inner()
    def forward(s, x):
        return s.inner(x) * 2.0

class Buffer(nn.Module):
    def __init__(s):
        super().__init__(); s.register_buffer("buf", torch.zeros(1))
    def forward(s, x):
        s.buf.add_(1.0)
        return x + 1.0

class History(nn.Module):
    hist: List[int]
    def __init__(s):
        super().__init__(); s.hist = []
    def forward(s, x):
        s.hist.append(x.size(0))
        return x + 1.0

COUNT = torch.zeros(1)
class Global(nn.Module):
    def forward(s, x):
        COUNT.add_(1.0)
        return x + COUNT

class Honest(nn.Module):
    def __init__(s):
        super().__init__(); s.conv = nn.Conv2d(3, 4, 3); s.bn = nn.BatchNorm2d(4); s.fc = nn.Linear(4, 2)
    def forward(s, x):
        return s.fc(s.bn(s.conv(x)).mean((2, 3)))

for name, m in [("counter", Counter()), ("outer", Outer()), ("buffer", Buffer()), ("history", History())]:
    torch.jit.script(m).save(f"{out}/{name}.pt")
torch.jit.script(Honest().eval()).save(f"{out}/honest.pt")
torch.jit.trace(Honest().eval(), torch.randn(1, 3, 8, 8)).save(f"{out}/honest_traced.pt")
torch.jit.script(nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4)).train()).save(f"{out}/bn_train.pt")
torch.jit.trace(nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4)).train(), torch.randn(2, 3, 8, 8),
                check_trace=False).save(f"{out}/bn_train_traced.pt")
torch.jit.trace(Global(), torch.randn(2, 3), check_trace=False).save(f"{out}/global.pt")
'''


def stateful(tsctl, path, *flags):
    checks, archive = validate(tsctl, path, *flags)
    c = checks.get("torch.stateful", {"status": "absent", "message": ""})
    return c, checks, archive


def status_of(tsctl, path, *flags):
    return subprocess.run([tsctl, "validate", *flags, path], capture_output=True, text=True, timeout=600).returncode


def model(archive):
    """details.model (the first method's), with the calls fields defaulted."""
    m = archive.get("details", {}).get("model", {})
    m = m[0] if isinstance(m, list) else m
    return {"calls": m.get("calls", 0), "calls_origin": m.get("calls_origin", "absent")}


def main():
    tsctl, python = sys.argv[1], sys.argv[2]
    if subprocess.run([python, "-c", "import torch"], capture_output=True).returncode != 0:
        print(f"no torch at {python}: skipped")
        return 77
    with tempfile.TemporaryDirectory() as d:
        with open(f"{d}/make.py", "w") as f:
            f.write(MAKE)  # torch.jit.script reads the classes' source
        subprocess.run([python, f"{d}/make.py", d], check=True)
        x = ["--input", "2x3"]

        # The counter: the static finding names n and its line; the copy's n
        # changed; call 3 or later answers otherwise.
        c, checks, archive = stateful(tsctl, f"{d}/counter.pt", *x)
        msg = c["message"]
        check(c["status"] == "WARN", f"counter: torch.stateful WARNs: {c['status']} {msg[:300]}")
        check("n (prim::SetAttr at " in msg and "make.py:" in msg and "s.n += 1" in msg,
              f"counter: the WARN names n, its op and source line: {msg[:400]}")
        check("n (attribute): int 0 -> int 1 after the first call" in msg, f"counter: the run saw n change: {msg[:500]}")
        check("answers otherwise than the first" in msg, f"counter: the last call's outputs differ: {msg[:600]}")
        check(checks["torch.deterministic"]["status"] == "PASS", "counter: two fresh copies still agree")
        m = model(archive)
        check(3 <= m["calls"] <= 5 and m["calls_origin"] == "drawn at random",
              f"counter: 3 to 5 calls, drawn and said: {m['calls']} {m['calls_origin']}")
        check(f"{m['calls']} calls on one copy (drawn at random; --calls {m['calls']} repeats them)" in msg,
              f"counter: the WARN says how many calls and how to repeat them: {msg[-200:]}")
        check(status_of(tsctl, f"{d}/counter.pt", *x) == 0, "counter: exit 0 without --strict (a WARN)")
        check(status_of(tsctl, f"{d}/counter.pt", *x, "--strict") == 1, "counter: exit 1 with --strict")
        seeded = [model(stateful(tsctl, f"{d}/counter.pt", *x, "--seed", "7")[2]) for _ in range(2)]
        check(seeded[0]["calls"] == seeded[1]["calls"] and seeded[0]["calls_origin"] == "from --seed 7",
              f"counter: --seed picks the calls, the same each time: {[(s['calls'], s['calls_origin']) for s in seeded]}")
        try:
            m = model(stateful(tsctl, f"{d}/counter.pt", *x, "--calls", "4")[2])
        except AssertionError as e:  # no JSON: --calls refused
            m = {"calls": 0, "calls_origin": str(e)[:200]}
        check(m["calls"] == 4 and m["calls_origin"] == "--calls 4", f"counter: --calls 4: {m['calls']} {m['calls_origin']}")

        # A golden reference recorded from the honest first call: the last
        # call on one copy fails it.
        ref = f"{d}/counter_ref.pt"
        stateful(tsctl, f"{d}/counter.pt", *x, "--save-reference", ref)
        c, checks, _ = stateful(tsctl, f"{d}/counter.pt", "--reference", ref)
        r = checks.get("torch.reference", {"status": "absent", "message": ""})
        check(r["status"] == "FAIL" and "outputs (call " in r["message"],
              f"counter: torch.reference FAILs on the last call: {r['status']} {r['message'][:300]}")
        check(status_of(tsctl, f"{d}/counter.pt", "--reference", ref) == 1, "counter: exit 1 against the reference")

        c, _, _ = stateful(tsctl, f"{d}/outer.pt", *x)
        check(c["status"] == "WARN" and "inner.k (prim::SetAttr" in c["message"],
              f"outer: the submodule's counter, through an inlined call: {c['message'][:300]}")

        c, _, _ = stateful(tsctl, f"{d}/buffer.pt", *x)
        check(c["status"] == "WARN" and "buf (aten::add_ at " in c["message"] and "s.buf.add_(1.0)" in c["message"],
              f"buffer: the in-place update, named with its line: {c['message'][:300]}")
        check("buf (buffer): Float[1] -> Float[1], other values" in c["message"],
              f"buffer: the run saw the buffer change: {c['message'][:500]}")

        c, _, _ = stateful(tsctl, f"{d}/history.pt", *x)
        check(c["status"] == "WARN" and "hist (aten::append at " in c["message"],
              f"history: the list append: {c['message'][:300]}")
        check("hist (attribute): list of 0 -> list of 1 after the first call" in c["message"],
              f"history: the run saw the list grow: {c['message'][:500]}")

        c, _, _ = stateful(tsctl, f"{d}/global.pt", *x)
        check(c["status"] == "WARN" and "a tensor constant of the graph (aten::add_" in c["message"],
              f"global: a traced constant changed in place: {c['message'][:300]}")

        # Honest models: PASS, and nothing to warn about even with --strict.
        for name in ("honest", "honest_traced"):
            c, checks, _ = stateful(tsctl, f"{d}/{name}.pt", "--input", "1x3x8x8")
            check(c["status"] == "PASS" and c["message"].startswith("no method writes the model's state"),
                  f"{name}: torch.stateful PASSes: {c['status']} {c['message'][:300]}")
            warned = [k for k, v in checks.items() if v["status"] != "PASS"]
            check(not warned, f"{name}: no check other than PASS: {warned}")
            check(status_of(tsctl, f"{d}/{name}.pt", "--input", "1x3x8x8", "--strict") == 0, f"{name}: exit 0 with --strict")

        # BatchNorm saved in training mode: state kept by design, said so.
        for name in ("bn_train", "bn_train_traced"):
            c, _, _ = stateful(tsctl, f"{d}/{name}.pt", "--input", "2x3x8x8")
            check(c["status"] == "WARN" and "running_mean" in c["message"] and "running statistics" in c["message"],
                  f"{name}: a WARN that BatchNorm updates its running statistics: {c['status']} {c['message'][:400]}")
    return finish()


if __name__ == "__main__":
    sys.exit(main())
