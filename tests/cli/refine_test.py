#!/usr/bin/env python3
"""validate with no flags on archives that each need one refinement from
LibTorch's error (issue #37 item 3), made by the torch of this build's
LibTorch (Debian's 1.13 or the pinned 2.x) in a temporary folder:

- a view of a flattened feature map with the batch left free
  (`x.view(-1, 784)` after two convolutions: 1x4x224x224 gives 10000, the
  refinement 1x4x80x80, which runs);
- an embedding whose weight the inference cannot see, on a float guess
  (`... but got CPUFloatType instead`: int64 ids);
- an index_select on `x.long()`: the graph says x is an index operator's
  indices (int64 in [0, 2)) before any guess (until the graph said so,
  a float guess's `index out of range in self` was refined to the same);
- a stack of a linear layer's output with the second argument
  (`stack expects each tensor to be equal size`);
- a concatenation whose second tensor has the wrong size in a dimension
  (`Sizes of tensors must match except in dimension 1`);
- a dictionary read at 21 keys, one more than the 20 refinement steps find:
  the WARN quotes the error of the deepest candidate (`KeyError: u`, not
  the last candidate's `KeyError: a`) and the --arg that asks for, and
  that --arg runs.

Usage: refine_test.py TSCTL PYTHON (PYTHON: the torch that makes the
archives). Exit 77 when PYTHON has no torch.
"""
import shlex
import subprocess
import sys
import tempfile

from validate_checks import check, finish, validate

MAKE = r'''
import sys, torch, torch.nn as nn, torch.nn.functional as F
from typing import Dict
out = sys.argv[1]
torch.manual_seed(0)

class View(nn.Module):
    def __init__(s):
        super().__init__(); s.c1 = nn.Conv2d(4, 8, 5); s.c2 = nn.Conv2d(8, 16, 5); s.fc = nn.Linear(784, 10)
    def forward(s, x):
        x = torch.max_pool2d(torch.relu(s.c1(x)), 4)
        x = torch.max_pool2d(torch.relu(s.c2(x)), 2)
        return s.fc(x.view(-1, 784))

class Embedding(nn.Module):
    def __init__(s):
        super().__init__(); s.w = nn.Parameter(torch.randn(10, 4))
    def forward(s, x):
        return F.embedding(x.flatten(1), s.w * 2.0).sum(1)

class Index(nn.Module):
    def __init__(s):
        super().__init__(); s.table = nn.Parameter(torch.randn(5, 3))
    def forward(s, x):
        return s.table.index_select(0, x.long().flatten())

class Stack(nn.Module):
    def __init__(s):
        super().__init__(); s.fc = nn.Linear(16, 11)
    def forward(s, x, y):
        return torch.stack([s.fc(x), y]).sum(0)

class Cat(nn.Module):
    def __init__(s):
        super().__init__(); s.fc = nn.Linear(16, 11)
    def forward(s, x, y):
        return torch.cat([s.fc(x), y], 1)

class Keys(nn.Module):
    def forward(s, d: Dict[str, torch.Tensor]):
        return (d["a"] + d["b"] + d["c"] + d["d"] + d["e"] + d["f"] + d["g"] + d["h"] + d["i"] + d["j"] + d["k"] +
                d["l"] + d["m"] + d["n"] + d["o"] + d["p"] + d["q"] + d["r"] + d["s"] + d["t"] + d["u"])

for name, m in [("view", View()), ("embedding", Embedding()), ("index", Index()), ("stack", Stack()),
                ("cat", Cat()), ("keys", Keys())]:
    torch.jit.script(m.eval()).save(f"{out}/{name}.pt")
'''

def run_check(tsctl, path, *flags):
    checks, _ = validate(tsctl, path, *flags)
    if "torch.run" not in checks:
        raise AssertionError(f"no torch.run check for {path}: {sorted(checks)}")
    return checks["torch.run"]


def main():
    tsctl, python = sys.argv[1], sys.argv[2]
    if subprocess.run([python, "-c", "import torch"], capture_output=True).returncode != 0:
        print(f"no torch at {python}: skipped")
        return 77
    with tempfile.TemporaryDirectory() as d:
        with open(f"{d}/make.py", "w") as f:
            f.write(MAKE)  # torch.jit.script reads the classes' source
        subprocess.run([python, f"{d}/make.py", d], check=True)
        expect = {
            "view": ("x=1x4x80x80:float32", "a view wants 784 features"),
            "embedding": ("int64", "an operator wants integer indices"),
            "index": ("int64:randint:0:2", "indices of an index operator"),
            "stack": ("y=1x11:float32", "a stack wants 1x11"),
            "cat": ("y=", "a concatenation wants size 11"),
        }
        for name, (used, note) in expect.items():
            c = run_check(tsctl, f"{d}/{name}.pt")
            msg = c["message"]
            check(c["status"] == "PASS" and used in msg and note in msg, f"{name}: ran on the refined input: {msg[:300]}")

        c = run_check(tsctl, f"{d}/keys.pt")
        msg = c["message"]
        check(c["status"] == "WARN", f"keys: a WARN when no candidate ran: {c['status']}")
        check("the error that explains the most" in msg and "KeyError: u" in msg and "KeyError: a" not in msg,
              f"keys: the WARN quotes the deepest error (KeyError: u): {msg[:400]}")
        suggested = msg.split("not tried (the steps from errors were all spent): ", 1)
        check(len(suggested) == 2, f"keys: the WARN suggests an --arg: {msg[-400:]}")
        if len(suggested) == 2:
            flags = shlex.split(suggested[1].split(");", 1)[0])
            check(flags[:1] == ["--arg"] and '"u"' in flags[1], f"keys: the suggestion is an --arg with key u: {flags}")
            c = run_check(tsctl, f"{d}/keys.pt", *flags)
            check(c["status"] == "PASS", f"keys: the suggested --arg runs: {c['message'][:300]}")
    return finish()


if __name__ == "__main__":
    sys.exit(main())
