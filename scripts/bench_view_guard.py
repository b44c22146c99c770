#!/usr/bin/python3
"""What the run-time view guard costs `tsctl bench` (issue #51 item 1).

The guard (lib/src/torch/view_guard.h) is a RecordFunction callback that
boxes every operator's inputs while it is armed. It is armed before an
archive loads and removed after loading unless a graph calls one of the
as_strided family, so a convolution or linear model runs without it. This
script measures both sides on the corpus' convolution and linear models:

  auto    the default: the guard removed after loading (these models call
          no guarded operator);
  always  TSCTL_VIEW_GUARD=always: the guard armed through every run, the
          cost a model that calls as_strided pays.

For every TorchScript archive of the corpus whose static operator list
(`validate --list-ops --no-load`) has aten::conv* or aten::linear/addmm and
that `validate` runs with no flags (its inputs are pinned from validate's
report), `tsctl bench --iters N --warmup W --format json` runs with each
setting in turn, --repeat rounds; reported: per archive the median p50 of
each, and over all the geometric mean of always/auto and of auto/auto-again
(the noise floor). Target: auto costs nothing (its ratio to a second auto
round is noise), always <= 1.05 on these models.

Usage
  /usr/bin/python3 scripts/bench_view_guard.py [--tsctl PATH] [--corpus DIR]
      [--limit N] [--repeat N] [--iters N]
"""
import argparse
import glob
import json
import math
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def conv_or_linear(tsctl, path):
    r = subprocess.run([tsctl, "validate", "--list-ops", "--no-load", path], capture_output=True, text=True, timeout=120)
    ops = r.stdout.split()
    return any(o.startswith(("aten::conv", "aten::_convolution", "aten::linear", "aten::addmm")) for o in ops)


def pinned_inputs(tsctl, path):
    """validate's own flags for the inputs it ran on, or None."""
    r = subprocess.run([tsctl, "validate", "--format", "json", path], capture_output=True, text=True, timeout=600)
    try:
        model = json.loads(r.stdout)["archives"][0]["details"].get("model", {})
    except (ValueError, KeyError, IndexError):
        return None
    if isinstance(model, list):
        model = model[0] if model else {}
    if not model.get("ran"):
        return None
    flags = model.get("inputs_flags", "")
    return flags.split() if flags else []


def p50(tsctl, path, flags, iters, warmup, always):
    env = dict(os.environ)
    env.pop("TSCTL_VIEW_GUARD", None)
    if always:
        env["TSCTL_VIEW_GUARD"] = "always"
    r = subprocess.run([tsctl, "bench", "--format", "json", "--iters", str(iters), "--warmup", str(warmup), *flags, path],
                       capture_output=True, text=True, timeout=900, env=env)
    try:
        return json.loads(r.stdout)["latency_ns"]["p50"] / 1e6
    except (ValueError, KeyError):
        return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tsctl", default=os.path.join(ROOT, "build", "bin", "tsctl"))
    ap.add_argument("--corpus", default=os.path.join(ROOT, "..", "shared", "corpus"))
    ap.add_argument("--limit", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=20)
    a = ap.parse_args()
    files = sorted(f for ext in ("pt", "pth", "jit", "torchscript") for f in glob.glob(os.path.join(a.corpus, "*." + ext)))
    chosen = []
    for f in files:
        if len(chosen) >= a.limit:
            break
        if not conv_or_linear(a.tsctl, f):
            continue
        flags = pinned_inputs(a.tsctl, f)
        if flags is None:
            continue
        chosen.append((f, flags))
    if not chosen:
        sys.exit("bench_view_guard: no convolution or linear model of " + a.corpus + " runs")
    print("%d convolution/linear models, %d rounds of %d calls each" % (len(chosen), a.repeat, a.iters))
    print("%-48s %12s %12s %12s %8s" % ("archive", "auto p50 ms", "again ms", "always ms", "always/auto"))
    ratios, noise = [], []
    for f, flags in chosen:
        runs = {"auto": [], "again": [], "always": []}
        for _ in range(a.repeat):
            for key, always in (("auto", False), ("always", True), ("again", False)):
                v = p50(a.tsctl, f, flags, a.iters, a.warmup, always)
                if v:
                    runs[key].append(v)
        if not all(runs.values()):
            print("%-48s (bench failed)" % os.path.basename(f)[:48])
            continue
        auto, again, always = (statistics.median(runs[k]) for k in ("auto", "again", "always"))
        ratios.append(always / auto)
        noise.append(again / auto)
        print("%-48s %12.4f %12.4f %12.4f %8.3f" % (os.path.basename(f)[:48], auto, again, always, always / auto))
    if not ratios:
        sys.exit("bench_view_guard: no model was benchmarked")
    gmean = lambda v: math.exp(sum(math.log(x) for x in v) / len(v))
    print("geometric mean: always/auto %.3f (target <= 1.05); auto/auto-again %.3f (the noise floor)" %
          (gmean(ratios), gmean(noise)))


if __name__ == "__main__":
    main()
