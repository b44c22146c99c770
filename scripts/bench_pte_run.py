#!/usr/bin/env python3
"""Times `tsctl bench X.pte` against a bare Module::execute loop on the same
ExecuTorch runtime (issue #54's measure: tsctl's time per call at most 1.01x
the bare loop's). For each program: `tsctl bench --iters N --warmup W
--json` (tsctl's runner child, its sandbox, its timing) and
tsctl_bench_pte_loop (tests/bench/pte_loop.cc: ExecuTorch's documented
loop, nothing else), alternated --repeat times so that drift on a shared
machine hits both; prints each side's median per-call time (the median of
the runs' medians) and the ratio.

    scripts/bench_pte_run.py BUILD_DIR [PROGRAM ...] [--iters N] [--warmup W] [--repeat R]

PROGRAM defaults to testdata/pte's programs that need no .ptd. Both sides
feed inputs from the method's metadata (tsctl: uniform floats; the loop:
ones); on these programs the values do not change the time.
"""
import argparse
import glob
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def tsctl_median(build, path, iters, warmup):
    p = subprocess.run([os.path.join(build, "bin", "tsctl"), "bench", "--iters", str(iters), "--warmup", str(warmup),
                        "--json", path], capture_output=True, text=True, check=True)
    return statistics.median(json.loads(p.stdout)["latencies_ns"])


def loop_median(build, path, iters, warmup):
    p = subprocess.run([os.path.join(build, "bin", "tsctl_bench_pte_loop"), path, str(iters), str(warmup)],
                       capture_output=True, text=True, check=True)
    return float(p.stdout.split()[0])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build")
    ap.add_argument("programs", nargs="*")
    ap.add_argument("--iters", type=int, default=2000)
    ap.add_argument("--warmup", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    programs = args.programs or [p for p in sorted(glob.glob(os.path.join(ROOT, "testdata", "pte", "*.pte")))
                                 if "external" not in p]
    ratios = []
    for path in programs:
        ours, bare = [], []
        for _ in range(args.repeat):
            ours.append(tsctl_median(args.build, path, args.iters, args.warmup))
            bare.append(loop_median(args.build, path, args.iters, args.warmup))
        t, b = statistics.median(ours), statistics.median(bare)
        ratios.append(t / b)
        print(f"{os.path.relpath(path, ROOT)}: tsctl bench {t:.0f} ns/call, bare Module::execute {b:.0f} ns/call, "
              f"ratio {t / b:.3f}")
    print(f"\nmedian ratio {statistics.median(ratios):.3f} (max {max(ratios):.3f}) over {len(ratios)} programs; "
          f"goal <= 1.01")
    return 0


if __name__ == "__main__":
    sys.exit(main())
