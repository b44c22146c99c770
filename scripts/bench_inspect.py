#!/usr/bin/python3
"""Benchmark `tsctl inspect` against loading the archive with TorchScript.

Issue: "tsctl inspect performance". Targets:
  * time:  tsctl inspect takes at most 1/20 (0.05) of the reference's time;
  * RSS:   tsctl inspect peaks at no more than 64 MiB resident;
  * scale: neither figure should grow with the size of the archive.

What it measures
  For each archive size (256 MiB and 1 GiB; with --quick 64 MiB and 256 MiB)
  and each of these commands, every run in a fresh child process:
    reference     /usr/bin/python3 -c 'm = torch.jit.load(path); print every
                  parameter's name, shape and dtype'
    inspect       tsctl inspect PATH
    inspect-json  tsctl inspect --json PATH
  stdout goes to /dev/null. Each command runs once untimed first (warm-up,
  which also pulls the archive into the page cache: the page cache cannot be
  dropped without root, so all figures are for a warm cache), then --repeat
  times, one command after the other. It reports the median wall time
  (time.perf_counter around fork..wait4) and the largest peak RSS (ru_maxrss
  from os.wait4 on the child, KiB on Linux).

  Caveat on RSS: Linux counts, in a child's ru_maxrss, the pages it inherited
  from the parent at fork() until exec(). The parent here is a small Python
  process that never imports torch, but that still puts a floor of some
  8 MiB under every figure. The script measures that floor (a forked
  /bin/true) and shows a figure that sits on it as "<=floor".

The archives
  nn.Sequential of N x nn.Linear(4096, 4096) (64 MiB of float32 each, plus
  bias), torch.jit.script'ed and written with torch.jit.save, with
  torch.manual_seed(LINEAR_SEED) (bench_common.py, which holds the
  generator). They are generated once into --workdir (default build/bench,
  which git ignores) by a child process, next to a .json file
  that records their size; they are regenerated only when missing or of a
  different size. Parameters live in memory-mapped scratch files while the
  archive is written, so generating the 1 GiB archive needs little anonymous
  memory (but about 2 GiB of free disk in --workdir for a moment).

Usage
  /usr/bin/python3 scripts/bench_inspect.py            # 256 MiB and 1 GiB
  /usr/bin/python3 scripts/bench_inspect.py --quick    # 64 MiB and 256 MiB
  options: --repeat N (3)  --tsctl PATH (build/bin/tsctl)
           --workdir DIR (build/bench)  --check (exit 1 when a target FAILs)

Exit status: 0, also when a target FAILs, unless --check is given (then 1 on
FAIL); 2 when the benchmark cannot run (a command fails, no disk space, ...).
Needs the Debian torch (1.13) of /usr/bin/python3 for the reference and for
generating; the measuring process itself does not import torch.
"""

import argparse
import sys

import bench_common as bc

# Targets of the issue (bench_common.py: 1/20, 64 MiB, 20 % or 5 ms).
TIME_RATIO_TARGET = bc.TIME_RATIO_TARGET  # tsctl wall / reference wall
RSS_TARGET_MIB = bc.RSS_TARGET_MIB        # tsctl peak RSS

REFERENCE_CODE = (
    "import sys, torch\n"
    "m = torch.jit.load(sys.argv[1])\n"
    "[print(n, tuple(p.shape), p.dtype) for n, p in m.named_parameters()]\n"
)


def main():
    ap = argparse.ArgumentParser(
        description="Benchmark tsctl inspect against torch.jit.load "
                    "(see the comment at the top of this file).")
    bc.add_linear_options(ap, "the archives are cached",
                          "torch, for the reference and for generating")
    ap.add_argument("--generate-one", nargs=2, metavar=("PATH", "LAYERS"),
                    help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.generate_one:
        bc.generate_linear(args.generate_one[0], int(args.generate_one[1]))
        return 0

    tsctl, _, archives = bc.linear_setup(args)

    commands = [  # (label, argv with PATH as placeholder, is tsctl)
        ("reference", [args.python, "-c", REFERENCE_CODE, "PATH"], False),
        ("tsctl inspect", [tsctl, "inspect", "PATH"], True),
        ("tsctl inspect --json", [tsctl, "inspect", "--json", "PATH"], True),
    ]

    # results[archive][label] = (median wall s, max peak RSS KiB)
    results = {}
    floor = bc.LauncherFloor()
    for path in archives:
        runs = {label: [] for label, _, _ in commands}
        argvs = {label: [path if a == "PATH" else a for a in argv]
                 for label, argv, _ in commands}
        for label, _, _ in commands:
            # One command at a time: its untimed warm-up run first, so the
            # timed runs do not follow straight on another command (a timed
            # tsctl run right after the 1 GiB reference exits is measurably
            # slower).
            bc.measure(label, argvs[label])
            for _ in range(args.repeat):
                floor.sample()
                runs[label].append(bc.measure(label, argvs[label])[0])
        results[path] = {label: bc.summarize(us) for label, us in runs.items()}

    # ---- report ----------------------------------------------------------
    rss_str = floor.fmt
    print(f"tsctl inspect benchmark: {bc.tsctl_version(tsctl)} ({tsctl})")
    print(f"reference: {args.python} -c 'torch.jit.load(path); print each "
          f"parameter's name, shape, dtype'")
    print(f"{args.repeat} timed runs per command after 1 untimed warm-up run "
          f"each; all runs with a warm page cache (it cannot be dropped); "
          f"median wall, max peak RSS")
    print(floor.line())
    print()
    bc.print_table([(bc.size_of(path), label, *results[path][label])
                    for path in archives for label, _, _ in commands], rss_str)
    print()

    failed = False
    print(f"time ratio tsctl/reference (target <= {TIME_RATIO_TARGET:.2f}), "
          f"peak RSS (target <= {RSS_TARGET_MIB} MiB):")
    for path in archives:
        size = bc.size_of(path)
        ref_wall = results[path]["reference"][0]
        for label, _, is_tsctl in commands:
            if not is_tsctl:
                continue
            wall, rss = results[path][label]
            ratio, t_ok, r_ok = bc.meets_targets(wall, ref_wall, rss)
            failed |= not (t_ok and r_ok)
            print(f"  {size:>10}  {label:<22} time ratio {ratio:.4f} "
                  f"(1/{1 / ratio:.0f}) {bc.verdict(t_ok)}   "
                  f"peak RSS {rss_str(rss)} MiB {bc.verdict(r_ok)}")
    print()

    bc.print_growth(results, archives,
                    [label for label, _, is_tsctl in commands if is_tsctl],
                    rss_str)
    print()
    print(f"overall: {bc.verdict(not failed)} "
          f"(time ratio and peak RSS targets)")
    return bc.exit_status(failed, args.check)


if __name__ == "__main__":
    sys.exit(main())
