#!/usr/bin/python3
"""Benchmark `tsctl validate` against a bare LibTorch load + one forward.

Issue: "tsctl validate performance". Target:
  * time: a full `tsctl validate ARCHIVE --input 1x3x224x224` takes at most
          1.5 times as long as a bare LibTorch program that loads the same
          archive and runs forward once, each as a whole process.

What it measures
  On a traced torchvision ResNet-18 (weights=None, so nothing is downloaded;
  torch.manual_seed(0), eval(), torch.jit.trace on torch.rand(1, 3, 224, 224),
  torch.jit.save), generated once by a child of /usr/bin/python3 into
  --workdir (default build/bench, which git ignores) with a .json file that
  records its size, each of these commands as a fresh process:
    (a) reference  tsctl_bench_reference resnet18.pt --input 1x3x224x224
                   --iters 1 --warmup 0
                   (tests/bench/reference.cc: LibTorch start-up,
                   torch::jit::load on the CPU, one forward in InferenceMode)
    (b) validate   tsctl validate resnet18.pt --input 1x3x224x224
                   (every check: ZIP structure and CRC-32 of every record,
                   TorchScript structure, then in a forked child: LibTorch
                   start-up, load, operator list, two forwards for the
                   determinism check, NaN/Inf check)
    (c) --no-load  tsctl validate --no-load resnet18.pt     (information)
    (d) --no-run   tsctl validate --no-run resnet18.pt      (information)
  Each command runs once untimed first (warm-up; it also pulls the archive
  and the libraries into the page cache, which cannot be dropped without
  root, so all figures are for a warm cache). Then --repeat rounds, each
  running (a), (b), (c), (d) once in turn, so that a change of the machine's
  load during the benchmark hits every command alike. Reported: the median
  wall time (time.perf_counter around fork..wait4) and the largest peak RSS
  (ru_maxrss from os.wait4, KiB on Linux; wait4 also counts the children a
  process waited for, so for validate it is the larger of tsctl and its
  LibTorch child).

Where the time goes
  The reference prints its own load_ms and first_ms (first forward); the rest
  of its wall time is process start-up (dynamic linking of LibTorch, static
  initialisers) and exit. For validate, --repeat further runs of (b) and (d)
  with --format json give details.torch_seconds (the forked LibTorch child,
  from fork to its exit) and details.model.load.ms (torch::jit::load inside
  it). The breakdown is built from medians:
    checks without LibTorch  = wall of (c)  (process start, ZIP, CRC, pickles)
    LibTorch start-up etc.   = torch_seconds(--no-run) - load.ms
                               (fork, dlopen of the plugin and LibTorch,
                               export_opnames)
    load                     = load.ms
    forwards and checks      = torch_seconds(full) - torch_seconds(--no-run)
                               (two forwards, isfinite, equality check)
    rest                     = wall(b) - the above (report, exit, noise)

Usage
  /usr/bin/python3 scripts/bench_validate.py [--repeat N] [--check]
  options: --repeat N (5)  --tsctl PATH (build/bin/tsctl)
           --reference-bin PATH (build/bin/tsctl_bench_reference, else
           build/bench/tsctl_bench_reference)  --workdir DIR (build/bench)
           --threads N (passed to the reference as --threads; default: none,
           LibTorch's default, as validate uses)

  The reference program is the CMake target tsctl_bench_reference
  (tests/bench/CMakeLists.txt). Without that build, compile it by hand:
    g++ -O2 -DNDEBUG -D_GLIBCXX_USE_CXX11_ABI=1 -std=c++20 \\
        -isystem /usr/include/torch/csrc/api/include tests/bench/reference.cc \\
        -o build/bench/tsctl_bench_reference -ltorch -ltorch_cpu -lc10

Exit status: 0, also when the target FAILs, unless --check is given (then 1
on FAIL); 2 when the benchmark cannot run (a command fails, a binary is
missing, ...). The measuring process itself does not import torch.
"""

import argparse
import json
import os
import sys

import bench_common as bc

INPUT = bc.RESNET18_INPUT    # 1x3x224x224
RATIO_TARGET = 1.5           # validate wall / reference wall


def main():
    ap = argparse.ArgumentParser(
        description="Benchmark tsctl validate against a bare LibTorch load + "
                    "one forward (see the comment at the top of this file).")
    ap.add_argument("--repeat", type=int, default=5,
                    help="timed runs per command (default 5)")
    bc.add_tsctl_option(ap)
    bc.add_reference_bin_option(ap)
    bc.add_workdir_option(ap, "the archive is cached")
    ap.add_argument("--threads", type=int, default=0,
                    help="--threads for the reference (default: LibTorch's "
                         "default, like validate)")
    bc.add_python_option(ap, "torch and torchvision, for generating the "
                             "archive")
    bc.add_check_option(ap, "the target")
    ap.add_argument("--generate", metavar="PATH", help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.generate:
        bc.generate_resnet18(args.generate)
        return 0
    bc.check_at_least_1(args.repeat, "--repeat")

    tsctl = bc.tsctl_path(args.tsctl)
    ref_bin = bc.reference_bin_path(args.reference_bin, args.workdir,
                                    "the top of this file")
    workdir = bc.make_workdir(args.workdir)
    archive = bc.ensure_resnet18(workdir, args.python)

    ref_argv = [ref_bin, archive, "--input", INPUT, "--iters", "1",
                "--warmup", "0"]
    if args.threads:
        ref_argv += ["--threads", str(args.threads)]
    commands = [  # (key, label, argv)
        ("a", "(a) reference: bare load + 1 forward", ref_argv),
        ("b", f"(b) tsctl validate --input {INPUT}",
         [tsctl, "validate", archive, "--input", INPUT]),
        ("c", "(c) tsctl validate --no-load",
         [tsctl, "validate", "--no-load", archive]),
        ("d", "(d) tsctl validate --no-run",
         [tsctl, "validate", "--no-run", archive]),
    ]

    def measure(name, argv):
        return bc.measure(name, argv, capture_stdout=True, tail=20)

    runs = {key: [] for key, _, _ in commands}
    ref_reports = []
    for key, label, argv in commands:  # untimed warm-up
        measure(label, argv)
    for _ in range(args.repeat):
        for key, label, argv in commands:
            usage, out = measure(label, argv)
            runs[key].append(usage)
            if key == "a":
                ref_reports.append(json.loads(out.strip().splitlines()[-1]))

    # Where validate's time goes: JSON details of further runs.
    details = {"b": [], "d": []}
    for _ in range(args.repeat):
        for key in ("b", "d"):
            argv = dict((k, a) for k, _, a in commands)[key] + ["--format", "json"]
            _, out = measure(f"({key}) --format json", argv)
            doc = json.loads(out)
            details[key].append(doc["archives"][0]["details"])

    summary = {k: bc.summarize(us) for k, us in runs.items()}
    wall = {k: w for k, (w, _) in summary.items()}

    print(f"tsctl validate benchmark: {bc.tsctl_version(tsctl, 2)}")
    print(f"archive: {archive} ({os.path.getsize(archive) / (1 << 20):.1f} MiB, "
          f"traced torchvision resnet18, weights=None), input {INPUT}")
    print(f"{args.repeat} timed rounds of (a) (b) (c) (d) after 1 untimed "
          f"warm-up run each; median wall, max peak RSS; warm page cache; "
          f"{os.cpu_count()} CPUs, load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print()
    bc.print_table([(None, label, *summary[key])
                    for key, label, _ in commands],
                   lambda kib: f"{kib / 1024:.1f}", width=44)
    print()
    ref_load = bc.median([r["load_ms"] for r in ref_reports])
    ref_first = bc.median([r["first_ms"] for r in ref_reports])
    print("reference (a), medians:")
    print(f"  torch::jit::load                 {ref_load:8.1f} ms")
    print(f"  first forward                    {ref_first:8.1f} ms")
    print(f"  process start-up and exit        "
          f"{wall['a'] * 1000 - ref_load - ref_first:8.1f} ms "
          f"(wall minus the two above)")
    print()

    torch_full = bc.median([d["torch_seconds"] for d in details["b"]]) * 1000
    torch_norun = bc.median([d["torch_seconds"] for d in details["d"]]) * 1000
    load_full = bc.median([d["model"]["load"]["ms"] for d in details["b"]])
    load_norun = bc.median([d["model"]["load"]["ms"] for d in details["d"]])
    rows = [
        ("checks without LibTorch (wall of (c))", wall["c"] * 1000),
        ("LibTorch child: fork, start-up, op list",
         torch_norun - load_norun),
        ("LibTorch child: torch::jit::load", load_full),
        ("LibTorch child: 2 forwards + checks", torch_full - torch_norun),
    ]
    rest = wall["b"] * 1000 - sum(v for _, v in rows)
    rows.append(("rest (report, exit, noise)", rest))
    print(f"validate (b), where the time goes (medians; details.torch_seconds "
          f"{torch_full:.1f} ms full, {torch_norun:.1f} ms with --no-run; "
          f"details.model.load.ms {load_full:.1f} ms):")
    for name, ms in rows:
        print(f"  {name:<42} {ms:8.1f} ms  {ms / (wall['b'] * 1000):5.1%}")
    print()

    ratio = wall["b"] / wall["a"]
    ok = ratio <= RATIO_TARGET
    print(f"ratio validate/reference = {wall['b'] * 1000:.1f} / "
          f"{wall['a'] * 1000:.1f} ms = {ratio:.2f} "
          f"(target <= {RATIO_TARGET}): {bc.verdict(ok)}")
    if not ok:
        over = wall["b"] - RATIO_TARGET * wall["a"]
        print(f"  {over * 1000:.1f} ms over the target "
              f"({RATIO_TARGET} x {wall['a'] * 1000:.1f} ms = "
              f"{RATIO_TARGET * wall['a'] * 1000:.1f} ms)")
    return bc.exit_status(not ok, args.check)


if __name__ == "__main__":
    sys.exit(main())
