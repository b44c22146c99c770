#!/usr/bin/python3
"""Checks `tsctl compat`'s verdicts against real loads.

For every archive of a corpus (default ../shared/corpus and its pte/), and
each target this machine can load in:
  torch==1.13.1  /usr/bin/python3 (Debian's torch): torch.jit.load(map_location='cpu'),
                 torch.export.load for a .pt2 (absent in 1.13: a failed load)
  torch==2.15.0  .venv-torch2/bin/python (scripts/install_torch2.sh), when present:
                 torch.jit.load / torch.export.load / AOTIModelPackageLoader
  executorch==1.5.1  tsctl-pte-runner's load of the program and every method
                 (`tsctl validate --no-run`'s pte.load), when this build has it
each load in a fresh process with a timeout, no torchvision imported (a
custom operator is one the runtime lacks). Prints, per target: loads,
compat's compatible / incompatible / unknown, false "compatible" (goal 0),
false alarms (incompatible but loads; goal <= 5 %), unknown (goal <= 10 %),
and compat's median time per archive. Lists each disagreement.

Usage: scripts/compat_check.py [--tsctl build/bin/tsctl] [--corpus DIR]... [--jobs N]
"""
import argparse
import concurrent.futures
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

LOAD = r'''
import sys, warnings
warnings.simplefilter("ignore")
import torch
p = sys.argv[1]
if p.endswith(".pt2"):
    import zipfile
    names = zipfile.ZipFile(p).namelist()
    if any("/data/aotinductor/" in n or n.startswith("data/aotinductor/") for n in names):
        from torch._inductor.package import load_package
        load_package(p)
    else:
        torch.export.load(p)
else:
    torch.jit.load(p, map_location="cpu")
'''


def real_load(python, path, timeout=120):
    try:
        r = subprocess.run([python, "-c", LOAD, path], capture_output=True, text=True, timeout=timeout,
                           env=dict(os.environ, CUDA_VISIBLE_DEVICES=""))
    except subprocess.TimeoutExpired:
        return None, "timed out"
    last = (r.stderr.strip().splitlines() or [""])[-1]
    return r.returncode == 0, last[:200]


def pte_load(tsctl, path):
    r = subprocess.run([tsctl, "validate", "--no-run", "--format", "json", path], capture_output=True, text=True)
    try:
        rep = json.loads(r.stdout)
    except ValueError:
        return False, r.stderr.strip()[:200]
    rep = rep.get("archives", [rep])[0] if isinstance(rep, dict) else rep
    for c in rep.get("checks", []):
        if c.get("id") == "pte.load":
            return c.get("status") == "PASS", c.get("message", "")[:200]
    return False, "no pte.load"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tsctl", default=os.path.join(ROOT, "build", "bin", "tsctl"))
    ap.add_argument("--corpus", action="append")
    ap.add_argument("--jobs", type=int, default=os.cpu_count())
    ap.add_argument("--torch2", default=os.path.join(ROOT, ".venv-torch2", "bin", "python"))
    a = ap.parse_args()
    dirs = a.corpus or [os.path.join(ROOT, "..", "shared", "corpus"), os.path.join(ROOT, "..", "shared", "corpus", "pte")]
    files = sorted(os.path.join(d, f) for d in dirs for f in os.listdir(d)
                   if os.path.isfile(os.path.join(d, f)) and not f.endswith(".md"))
    ts = [f for f in files if not f.endswith((".pte", ".ptd", ".bpte"))]
    pte = [f for f in files if f.endswith(".pte")]
    targets = [("torch==1.13.1", "/usr/bin/python3", ts)]
    if os.path.exists(a.torch2):
        v = subprocess.run([a.torch2, "-c", "import torch; print(torch.__version__.split('+')[0])"],
                           capture_output=True, text=True).stdout.strip()
        targets.append((f"torch=={v}", a.torch2, ts))
    if "executorch runtime ExecuTorch" in subprocess.run([a.tsctl, "--version"], capture_output=True, text=True).stdout:
        targets.append(("executorch==1.5.1", None, pte))
    bad = 0
    for target, python, group in targets:
        with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
            loads = list(ex.map(lambda f: real_load(python, f) if python else pte_load(a.tsctl, f), group))
        verdicts, times = {}, []
        for f in group:
            t0 = time.monotonic()
            r = subprocess.run([a.tsctl, "compat", "--target", target, "--format", "json", f],
                               capture_output=True, text=True)
            times.append(time.monotonic() - t0)
            try:
                t = json.loads(r.stdout)["archives"][0]["targets"][0]
                verdicts[f] = (t["verdict"], t["reasons"])
            except (ValueError, KeyError, IndexError):
                verdicts[f] = ("error", [r.stderr.strip()[:200]])
        counts = {"compatible": 0, "incompatible": 0, "unknown": 0, "error": 0}
        false_ok, false_alarm, loaded = [], [], 0
        for f, (ok, why) in zip(group, loads):
            v, reasons = verdicts[f]
            counts[v] = counts.get(v, 0) + 1
            loaded += bool(ok)
            if ok is False and v == "compatible":
                false_ok.append((f, why))
            if ok and v == "incompatible":
                false_alarm.append((f, reasons))
        n = len(group)
        print(f"{target}: {n} archives, {loaded} load; compat: {counts['compatible']} compatible, "
              f"{counts['incompatible']} incompatible, {counts['unknown']} unknown, {counts['error']} errors")
        print(f"  false compatible: {len(false_ok)} (goal 0); false alarms: {len(false_alarm)} "
              f"({100 * len(false_alarm) / max(n, 1):.1f} %, goal <= 5 %); unknown {100 * counts['unknown'] / max(n, 1):.1f} % "
              f"(goal <= 10 %); median {1000 * statistics.median(times):.0f} ms an archive (the whole command)")
        for f, why in false_ok:
            print(f"  FALSE COMPATIBLE {os.path.basename(f)}: the load said: {why}")
        for f, reasons in false_alarm:
            print(f"  FALSE ALARM {os.path.basename(f)}: {'; '.join(reasons)[:300]}")
        bad += len(false_ok)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
