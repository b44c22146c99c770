#!/usr/bin/env python3
"""tsctl on .pt2 archives against Python's torch, in one run (issue #25).

Run with the pinned torch 2.x, against a tsctl built on it:

    TORCH_USE_RTLD_GLOBAL=1 .venv-torch2/bin/python scripts/bench_pt2.py \\
        [--tsctl build-torch2/bin/tsctl] [--work build-torch2/pt2_aoti] [--rounds 5]

Prints two comparisons, each as medians over interleaved rounds:
 1. `tsctl inspect` of a .pt2 (the whole process, start-up included) against
    `torch.export.load` of the same file in this process (import time
    excluded): the ratio, target <= 1/20. Files: testdata/pt2/*.pt2 and a
    24-layer transformer exported here.
 2. Per-call latency of an AOTInductor package: `tsctl bench` (median of its
    timed calls) against Python's runner, torch._inductor.aoti_load_package
    (median of as many calls, same inputs, same thread count): the ratio,
    target <= 1.03. The packages come from scripts/gen_pt2_aoti.py.
"""
import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def transformer_pt2(path, layers=24):
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(d_model=256, nhead=8, dim_feedforward=1024, dropout=0.0, batch_first=True)
    model = torch.nn.TransformerEncoder(layer, num_layers=layers, enable_nested_tensor=False).eval()
    ep = torch.export.export(model, (torch.randn(1, 16, 256),))
    torch.export.save(ep, path)
    return path


def time_inspect(tsctl, path):
    t0 = time.perf_counter()
    subprocess.run([tsctl, "inspect", path], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def time_export_load(path):
    t0 = time.perf_counter()
    torch.export.load(path)
    return time.perf_counter() - t0


def inspect_vs_load(tsctl, files, rounds):
    print("1. tsctl inspect vs torch.export.load (median of %d interleaved rounds; import excluded)" % rounds)
    print("   %-28s %10s %14s %8s" % ("file", "tsctl ms", "export.load ms", "ratio"))
    worst = 0.0
    for path in files:
        time_export_load(path)  # first load: caches, lazy imports
        a, b = [], []
        for _ in range(rounds):
            a.append(time_inspect(tsctl, path))
            b.append(time_export_load(path))
        ta, tb = statistics.median(a), statistics.median(b)
        worst = max(worst, ta / tb)
        print("   %-28s %10.1f %14.1f %8.3f" % (os.path.basename(path), ta * 1e3, tb * 1e3, ta / tb))
    print("   worst ratio %.3f (target <= %.3f): %s" % (worst, 1 / 20, "met" if worst <= 1 / 20 else "NOT met"))


def python_runner_ns(path, inputs, warmup, iters):
    runner = torch._inductor.aoti_load_package(path)
    out = []
    with torch.inference_mode():
        for _ in range(warmup):
            runner(*inputs)
        for _ in range(iters):
            t0 = time.perf_counter_ns()
            runner(*inputs)
            out.append(time.perf_counter_ns() - t0)
    return statistics.median(out)


def tsctl_bench_ns(tsctl, path, inputs_file, warmup, iters, threads):
    cmd = [tsctl, "bench", path, "--load-inputs", inputs_file, "--warmup", str(warmup), "--iters", str(iters),
           "--threads", str(threads), "--format", "json"]
    r = json.loads(subprocess.run(cmd, check=True, stdout=subprocess.PIPE).stdout)
    return r["latency_ns"]["median"]


def bench_vs_runner(tsctl, work, rounds, threads, warmup=50, iters=500):
    torch.set_num_threads(threads)
    print("\n2. AOTInductor per-call latency: tsctl bench vs Python's aoti_load_package runner")
    print("   (%d threads, %d warm-up + %d timed calls, median of each; median over %d interleaved rounds)" %
          (threads, warmup, iters, rounds))
    print("   %-22s %10s %11s %8s" % ("package", "tsctl us", "python us", "ratio"))
    worst = 0.0
    for name in ("cnn_aoti", "two_input_aoti"):
        path = os.path.join(work, name + ".pt2")
        inputs_file = os.path.join(work, name + ".inputs.pt")
        inputs = torch.load(inputs_file)
        a, b = [], []
        for _ in range(rounds):
            a.append(tsctl_bench_ns(tsctl, path, inputs_file, warmup, iters, threads))
            b.append(python_runner_ns(path, inputs, warmup, iters))
        ta, tb = statistics.median(a), statistics.median(b)
        worst = max(worst, ta / tb)
        print("   %-22s %10.1f %11.1f %8.3f" % (name, ta / 1e3, tb / 1e3, ta / tb))
    print("   worst ratio %.3f (target <= 1.03): %s" % (worst, "met" if worst <= 1.03 else "NOT met"))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tsctl", default=os.path.join(ROOT, "build-torch2", "bin", "tsctl"))
    p.add_argument("--work", default=os.path.join(ROOT, "build-torch2", "pt2_aoti"))
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--layers", type=int, default=24)
    a = p.parse_args()
    if os.environ.get("TORCH_USE_RTLD_GLOBAL") != "1":
        sys.exit("set TORCH_USE_RTLD_GLOBAL=1: Python's AOTInductor runner needs libtorch's symbols global")
    subprocess.run([sys.executable, os.path.join(HERE, "gen_pt2_aoti.py"), a.work], check=True, stdout=subprocess.DEVNULL)
    print("torch %s, tsctl %s" % (torch.__version__, a.tsctl))
    with tempfile.TemporaryDirectory() as tmp:
        files = sorted(glob.glob(os.path.join(ROOT, "testdata", "pt2", "*.pt2")))
        files = [f for f in files if "aoti" not in os.path.basename(f)]
        files.append(transformer_pt2(os.path.join(tmp, "transformer%d.pt2" % a.layers), a.layers))
        inspect_vs_load(a.tsctl, files, a.rounds)
    bench_vs_runner(a.tsctl, a.work, a.rounds, a.threads)


if __name__ == "__main__":
    main()
