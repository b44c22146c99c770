#!/usr/bin/env python3
"""The shape checks XNNPACK's prepacked operators skip (issue #37 item 1):
validate compares every call of prepacked::linear_clamp_run and
prepacked::conv2d_clamp_run with its weights, as aten::linear and
aten::conv2d would, and never PASSes a run whose input contradicts them.

On testdata/infer/xnnpack_flat.pt (a stride-8 convolution of 3 channels
flattened into Linear(128, 5): it takes 3x32x32):
- no flags: the first guess (1x3x224x224) runs but its 6272 features
  contradict the linear's 128; it is set aside with that reason and the
  refinement it asks for, 1x3x32x32, runs: PASS on 32x32;
- --input 1x3x224x224: WARN naming the linear's contradiction;
- --input 1x1x32x32: WARN naming the convolution's channels; the NaN/Inf or
  differing runs (the operator reads heap memory past the input) WARN, never
  FAIL, and --save-reference refuses to record it;
- --input 1x3x32x32: PASS, nothing contradicted.
And on a model made here whose linear takes a count no image gives
(Linear(100, 5)): no candidate is free of contradictions, so the guess is
kept with a WARN that names the contradiction (not a PASS).

Usage: packed_checks_test.py TSCTL PYTHON. Exit 77 when this LibTorch has no
XNNPACK operators (the pip wheels of 2.x) or PYTHON cannot make the model.
"""
import json
import os
import subprocess
import sys
import tempfile

from validate_checks import check, finish, validate

FLAT = "testdata/infer/xnnpack_flat.pt"

MAKE = r'''
import sys, torch, torch.nn as nn
from torch.utils.mobile_optimizer import optimize_for_mobile
class Odd(nn.Module):
    def __init__(s):
        super().__init__(); s.conv = nn.Conv2d(3, 8, 8, stride=8); s.fc = nn.Linear(100, 5)
    def forward(s, x):
        return s.fc(torch.flatten(torch.relu(s.conv(x)), 1))
torch.manual_seed(0)
optimize_for_mobile(torch.jit.script(Odd().eval())).save(sys.argv[1])
'''

def main():
    tsctl, python = sys.argv[1], sys.argv[2]
    checks, _ = validate(tsctl, FLAT, "--no-run")
    if checks["torch.load"]["status"] != "PASS":
        print("this LibTorch cannot load XNNPACK's operators: skipped: " + checks["torch.load"]["message"][:200])
        return 77

    checks, archive = validate(tsctl, FLAT)
    run = checks["torch.run"]
    check(run["status"] == "PASS" and "x=1x3x32x32:float32" in run["message"],
          f"no flags: PASS on the refined 1x3x32x32: {run['message'][:300]}")
    tried = archive["details"]["model"]["candidates"] if isinstance(archive["details"].get("model"), dict) else []
    check(any("prepacked::linear_clamp_run read 128 of the 6272" in c.get("outcome", "") for c in tried),
          f"no flags: the 224x224 guess set aside for its contradiction: {json.dumps(tried)[:400]}")

    checks, _ = validate(tsctl, FLAT, "--input", "1x3x224x224")
    run = checks["torch.run"]
    check(run["status"] == "WARN" and "mat1 and mat2 shapes cannot be multiplied (1x6272 and 128x5)" in run["message"],
          f"--input 1x3x224x224: WARN naming the linear's contradiction: {run['status']} {run['message'][:300]}")

    with tempfile.TemporaryDirectory() as d:
        ref = os.path.join(d, "ref.pt")
        checks, _ = validate(tsctl, FLAT, "--input", "1x1x32x32", "--save-reference", ref)
        run = checks["torch.run"]
        check(run["status"] == "WARN" and "expected input[1, 1, 32, 32] to have 3 channels, but got 1 channels" in run["message"],
              f"--input 1x1x32x32: WARN naming the convolution's channels: {run['status']} {run['message'][:300]}")
        for cid in ("torch.finite", "torch.deterministic"):
            if cid in checks:
                check(checks[cid]["status"] != "FAIL", f"--input 1x1x32x32: {cid} is not a FAIL: {checks[cid]['message'][:200]}")
        check(checks.get("torch.reference", {}).get("status") == "FAIL" and not os.path.exists(ref),
              "--input 1x1x32x32 --save-reference: nothing recorded from inputs that contradict the weights")

        checks, _ = validate(tsctl, FLAT, "--input", "1x3x32x32")
        check(checks["torch.run"]["status"] == "PASS", f"--input 1x3x32x32: PASS: {checks['torch.run']['message'][:300]}")

        odd = os.path.join(d, "odd.pt")
        with open(os.path.join(d, "make.py"), "w") as f:
            f.write(MAKE)  # torch.jit.script reads the class's source
        made = subprocess.run([python, os.path.join(d, "make.py"), odd], capture_output=True, text=True)
        check(made.returncode == 0, "made the model with no fitting image: " + made.stderr[-300:])
        if made.returncode == 0:
            checks, _ = validate(tsctl, odd)
            run = checks["torch.run"]
            check(run["status"] == "WARN" and "prepacked::linear_clamp_run read 100 of the" in run["message"],
                  f"Linear(100, 5): no candidate fits: WARN naming the contradiction: {run['status']} {run['message'][:400]}")
    return finish()


if __name__ == "__main__":
    sys.exit(main())
