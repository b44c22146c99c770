#!/usr/bin/env python3
"""Checks that a torch installation still has what tsctl's 2.x leg needs.

    .venv-torch2/bin/python scripts/check_torch_jit.py

1. LibTorch's C++ loader: torch::jit::load is declared in the wheel's headers
   (torch/csrc/jit/serialization/import.h) and exported by libtorch_cpu.so.
2. Python's torch.jit: script, trace, save, load, freeze and running the
   results work, and which warnings each raises.
Prints one line per check and exits 1 if any fails. scripts/install_torch2.sh
records why its pin was chosen with this script's output.
"""
import io
import os
import re
import subprocess
import sys
import tempfile
import warnings

import torch

failures = 0


def Report(ok, what):
    global failures
    failures += not ok
    print(("ok    " if ok else "FAIL  ") + what)


root = os.path.dirname(torch.__file__)
print("torch %s at %s" % (torch.__version__, root))
header = os.path.join(root, "include/torch/csrc/jit/serialization/import.h")
text = open(header).read() if os.path.exists(header) else ""
Report(re.search(r"TORCH_API\s+Module\s+load\s*\(", text) is not None, "torch::jit::load declared in " + header)
lib = os.path.join(root, "lib/libtorch_cpu.so")
symbols = subprocess.run(["nm", "-D", "--defined-only", "-C", lib], capture_output=True, text=True).stdout
Report(re.search(r"\btorch::jit::load\(", symbols) is not None, "torch::jit::load exported by " + lib)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 3)

    def forward(self, x):
        if x.sum() > 0:
            return self.fc(x).relu()
        return self.fc(x)


x = torch.randn(2, 4)
with tempfile.TemporaryDirectory() as tmp:
    for name, step in [
        ("torch.jit.script", lambda: torch.jit.script(Net())),
        ("torch.jit.trace", lambda: torch.jit.trace(Net(), (x,))),
    ]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                m = step().eval()
                path = os.path.join(tmp, name + ".pt")
                torch.jit.save(m, path)
                loaded = torch.jit.load(path)
                frozen = torch.jit.freeze(torch.jit.script(Net()).eval()) if name.endswith("script") else loaded
                ok = torch.allclose(loaded(x), m(x)) and frozen(x).shape == (2, 3)
                buf = io.BytesIO()
                torch.jit.save(loaded, buf)
                Report(ok, "%s, save, load, freeze, run" % name)
            except Exception as e:  # any failure of torch.jit is the finding
                Report(False, "%s: %s: %s" % (name, type(e).__name__, str(e).splitlines()[0] if str(e) else ""))
        kinds = sorted({"%s: %s" % (w.category.__name__, str(w.message).splitlines()[0]) for w in caught})
        for k in kinds:
            print("      warning  " + k)
sys.exit(1 if failures else 0)
