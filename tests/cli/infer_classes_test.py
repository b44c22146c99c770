#!/usr/bin/env python3
"""Inputs inferred from PyTorch's semantics: each model of
testdata/infer/classes (scripts/gen_infer_testdata.py: one per kind of input
issue #53 names, built from operators only) runs with no flags, on inputs its
weights and graph agree with, pinned as the manifest says.

    infer_classes_test.py TSCTL REPO_ROOT

For each model: `tsctl validate --format json MODEL` has torch.run PASS on
inferred inputs, and the pin flags it prints match the manifest's regex
(the model's own input: a reshape's target is not pinned, rows of features
are not a broadcast vector, a recurrent state has the layer's size). A
model of XNNPACK's prepacked operators is skipped (named) on a LibTorch
built without them (the 2.x wheels).
"""
import json
import os
import re
import subprocess
import sys

failures = []
skipped = []


def check(cond, what):
    print(("ok    " if cond else "FAIL  ") + what)
    if not cond:
        failures.append(what)


def main():
    tsctl, root = sys.argv[1], sys.argv[2]
    folder = os.path.join(root, "testdata", "infer", "classes")
    with open(os.path.join(folder, "manifest.json")) as f:
        manifest = json.load(f)
    check(len(manifest) >= 9, f"the manifest lists {len(manifest)} models")
    for name, want in sorted(manifest.items()):
        r = subprocess.run([tsctl, "validate", "--format", "json", "--skip", "torch.stateful",
                            os.path.join(folder, name)], capture_output=True, text=True, timeout=600)
        try:
            report = json.loads(r.stdout)
        except json.JSONDecodeError:
            check(False, f"{name}: validate printed no JSON (exit {r.returncode}): {r.stderr.strip()[:300]}")
            continue
        archive = report["archives"][0]
        load = next((c for c in archive["checks"] if c["id"] == "torch.load"), None)
        if load and load["status"] == "FAIL" and "built without XNNPACK" in load["message"]:
            # The LibTorch 2.x wheels have no prepacked operators: nothing
            # of this model can run here (not counted as passed).
            print(f"skip  {name}: this LibTorch has no XNNPACK operators")
            skipped.append(name)
            continue
        run = next((c for c in archive["checks"] if c["id"] == "torch.run"), None)
        model = archive["details"].get("model") or {}
        check(run is not None and run["status"] == "PASS" and model.get("input_source") == "inferred",
              f"{name} ({want['why']}): runs on inferred inputs: "
              + (f"{run['status']} {run['message'][:300]}" if run else "no torch.run check"))
        pins = run["message"].split("pin them with ", 1)[-1] if run else ""
        check(run is not None and re.search(want["pin"], pins) is not None,
              f"{name}: the pin matches {want['pin']!r}: {pins[:200]}")
    print(f"{len(failures)} failed, {len(skipped)} skipped")
    check(len(skipped) < len(manifest), "at least one model ran here")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
