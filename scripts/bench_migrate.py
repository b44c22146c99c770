#!/usr/bin/env python3
"""tsctl migrate --jobs: a zoo converted one after another and N at once.

    .venv-torch2/bin/python scripts/bench_migrate.py [--tsctl build-torch2/bin/tsctl] [--jobs 2] [--repeat 1] [ARCHIVE...]

Without archives, saves a zoo of six TorchScript archives with this Python's
torch (testdata/models/migrate_models.py's four: a traced CNN, a scripted
model with data-dependent control flow, a dynamic-length loop that blocks,
a model whose outputs differ; and two more traced ones with stored inputs:
an MLP and a wider CNN). Then runs `tsctl migrate ZOO --out-dir D --json`
with --jobs 1 and with --jobs N (alternating, --repeat times each), prints
the wall time of each run and the speed-up, and checks that the two reports
agree archive by archive (stage, verified, written, blockers, checks),
timings aside. Prints figures only; asserts nothing about time.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def make_zoo(out):
    import warnings
    warnings.simplefilter("ignore")  # torch.jit's deprecation notices: not the measure's news
    import torch
    sys.path.insert(0, os.path.join(ROOT, "testdata", "models"))
    import migrate_models
    migrate_models.save(out)
    torch.manual_seed(1)
    mlp = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10)).eval()
    wide = torch.nn.Sequential(torch.nn.Conv2d(3, 32, 3, padding=1), torch.nn.ReLU(), torch.nn.Conv2d(32, 32, 3),
                               torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(32, 10)).eval()
    for name, model, spec, shape in (("mlp", mlp, "4x32:float32", (4, 32)),
                                     ("wide_cnn", wide, "2x3x32x32:float32", (2, 3, 32, 32))):
        traced = torch.jit.trace(model, torch.randn(*shape))
        torch.jit.save(traced, os.path.join(out, name + ".pt"),
                       _extra_files={"tsctl_inputs.json": json.dumps({"forward": [spec]})})
    return sorted(os.path.join(out, f) for f in os.listdir(out) if f.endswith(".pt"))


def run(tsctl, archives, jobs, out_dir):
    shutil.rmtree(out_dir, ignore_errors=True)
    start = time.monotonic()
    p = subprocess.run([tsctl, "migrate", *archives, "--out-dir", out_dir, "--json", "--jobs", str(jobs)],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seconds = time.monotonic() - start
    if p.returncode not in (0, 1):
        sys.exit("bench_migrate: tsctl exited %d: %s" % (p.returncode, p.stderr.strip()))
    return seconds, json.loads(p.stdout)


def outcome(doc):
    """Each archive's outcome, timings and measured errors aside."""
    return [(os.path.basename(r["path"]), r["stage"], r["verified"], r["written"], [b["kind"] for b in r["blockers"]],
             [(c["inputs"], c["matched"], c["skipped"] != "") for c in r["checks"]]) for r in doc["results"]]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("archives", nargs="*")
    ap.add_argument("--tsctl", default=os.path.join(ROOT, "build-torch2", "bin", "tsctl"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=1)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="bench_migrate.")
    try:
        archives = a.archives
        if not archives:
            os.mkdir(os.path.join(tmp, "zoo"))
            archives = make_zoo(os.path.join(tmp, "zoo"))
        print("bench_migrate: %d archives, %d cores, --jobs 1 against --jobs %d, %d run(s) each"
              % (len(archives), os.cpu_count(), a.jobs, a.repeat))
        times = {1: [], a.jobs: []}
        docs = {}
        for _ in range(a.repeat):
            for jobs in (1, a.jobs):
                seconds, docs[jobs] = run(a.tsctl, archives, jobs, os.path.join(tmp, "out-j%d" % jobs))
                times[jobs].append(seconds)
                print("  --jobs %-3d %6.1f s wall, models added up %6.1f s"
                      % (jobs, seconds, sum(r["seconds"] for r in docs[jobs]["results"])))
        one, many = statistics.median(times[1]), statistics.median(times[a.jobs])
        print("median wall: --jobs 1 %.1f s, --jobs %d %.1f s: %.2fx" % (one, a.jobs, many, one / many))
        reached = docs[1]["summary"]["reached"]
        print("stages (--jobs 1): " + ", ".join("%s %d" % kv for kv in reached.items()))
        same = outcome(docs[1]) == outcome(docs[a.jobs])
        print("reports agree archive by archive: %s" % ("yes" if same else "NO"))
        return 0 if same else 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
