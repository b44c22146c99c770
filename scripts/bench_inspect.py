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
  torch.manual_seed(SEED). They are generated once into --workdir (default
  build/bench, which git ignores) by a child process, next to a .json file
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
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PYTHON = "/usr/bin/python3"  # the Python with torch (Debian's)
SEED = 20240101
DIM = 4096                   # nn.Linear(DIM, DIM): 64 MiB of float32 weight
MIB = 1 << 20

# Targets of the issue.
TIME_RATIO_TARGET = 1 / 20   # tsctl wall / reference wall
RSS_TARGET_MIB = 64          # tsctl peak RSS
# "Does not grow" between the smaller and the larger archive when within
# GROW_REL (relative), or for times within GROW_ABS_MS (absolute).
GROW_REL = 0.20
GROW_ABS_MS = 5.0

REFERENCE_CODE = (
    "import sys, torch\n"
    "m = torch.jit.load(sys.argv[1])\n"
    "[print(n, tuple(p.shape), p.dtype) for n, p in m.named_parameters()]\n"
)


def die(msg):
    print(f"bench_inspect: {msg}", file=sys.stderr)
    sys.exit(2)


# --------------------------------------------------------------------------
# Archive generation (runs in a child: `bench_inspect.py --generate-one ...`)
# --------------------------------------------------------------------------

def generate_one(path, layers):
    """Write an nn.Sequential of `layers` x Linear(DIM, DIM) to `path`.

    Every parameter is backed by its own memory-mapped scratch file (its own
    storage, so the archive has one data record per tensor, as usual), so
    the weights live in the page cache, not in anonymous memory.
    """
    import torch
    import torch.nn as nn

    torch.manual_seed(SEED)
    scratch = tempfile.mkdtemp(prefix=".gen-", dir=os.path.dirname(path))
    try:
        mods = []
        for i in range(layers):
            lin = nn.Linear(DIM, DIM, device="meta")  # allocates nothing
            bound = 1.0 / DIM ** 0.5                  # nn.Linear's own range
            for name, shape in (("weight", (DIM, DIM)), ("bias", (DIM,))):
                n = 1
                for s in shape:
                    n *= s
                t = torch.from_file(os.path.join(scratch, f"{i}.{name}"),
                                    shared=True, size=n, dtype=torch.float32)
                t = t.view(shape)
                t.uniform_(-bound, bound)
                setattr(lin, name, nn.Parameter(t))
            mods.append(lin)
        model = torch.jit.script(nn.Sequential(*mods).eval())
        tmp = path + ".tmp"
        torch.jit.save(model, tmp)
        del model, mods, lin, t
        os.replace(tmp, path)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    meta = {"layers": layers, "dim": DIM, "seed": SEED, "scripted": True,
            "torch": torch.__version__, "size": os.path.getsize(path)}
    with open(path + ".json", "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")


def ensure_archive(workdir, layers, python):
    """Return the path of the `layers`-layer archive, generating it if needed."""
    path = os.path.join(workdir, f"linear{layers}x{DIM}.pt")
    try:
        with open(path + ".json") as f:
            expected = json.load(f)["size"]
        if os.path.getsize(path) == expected:
            return path, False
    except (OSError, ValueError, KeyError):
        pass
    need = 2 * layers * (DIM * DIM + DIM) * 4 + 64 * MIB  # scratch + archive
    free = shutil.disk_usage(workdir).free
    if free < need:
        die(f"{workdir}: {free / MIB:.0f} MiB free, generating "
            f"{os.path.basename(path)} needs about {need / MIB:.0f} MiB")
    print(f"generating {path} ...", file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    status, ru, err = run_child([python, os.path.abspath(__file__),
                                 "--generate-one", path, str(layers)],
                                capture_stderr=False)
    if status != 0:
        die(f"generating {path} failed (exit status {status})")
    print(f"  done in {time.perf_counter() - t0:.1f} s, "
          f"generator peak RSS {ru.ru_maxrss / 1024:.0f} MiB (most of it "
          f"torch and the mapped, reclaimable scratch files)",
          file=sys.stderr, flush=True)
    return path, True


# --------------------------------------------------------------------------
# Running and measuring one child
# --------------------------------------------------------------------------

def run_child(argv, capture_stderr=True):
    """fork+exec argv with stdout on /dev/null; wait4 for it.

    Returns (exit status, _Usage, stderr text). fork() rather than
    posix_spawn(): a vfork-style spawn makes the child's ru_maxrss include
    the parent's whole peak RSS, fork() only the parent's copied pages.
    """
    devnull = os.open(os.devnull, os.O_WRONLY)
    errf = tempfile.TemporaryFile() if capture_stderr else None
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:  # child: only async-signal-safe-ish work until exec
        try:
            os.dup2(devnull, 1)
            if errf is not None:
                os.dup2(errf.fileno(), 2)
            os.execv(argv[0], argv)
        finally:
            os._exit(127)
    _, status, ru = os.wait4(pid, 0)
    wall = time.perf_counter() - t0
    os.close(devnull)
    err = ""
    if errf is not None:
        errf.seek(0)
        err = errf.read().decode(errors="replace")
        errf.close()
    return os.waitstatus_to_exitcode(status), _Usage(ru, wall), err


class _Usage:
    def __init__(self, ru, wall):
        self.ru_maxrss = ru.ru_maxrss  # KiB on Linux
        self.wall = wall               # seconds


def measure(name, argv):
    """Run argv once; fail the benchmark loudly if it does not exit 0."""
    status, usage, err = run_child(argv)
    if status != 0:
        tail = "\n".join(err.strip().splitlines()[-15:])
        die(f"{name} exited with status {status}: {' '.join(argv)}\n{tail}")
    return usage


# --------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------

def fmt_size(nbytes):
    return (f"{nbytes / (1 << 30):.2f} GiB" if nbytes >= 1 << 30
            else f"{nbytes / MIB:.0f} MiB")


def main():
    ap = argparse.ArgumentParser(
        description="Benchmark tsctl inspect against torch.jit.load "
                    "(see the comment at the top of this file).")
    ap.add_argument("--repeat", type=int, default=3,
                    help="timed runs per command and archive (default 3)")
    ap.add_argument("--tsctl", default=os.path.join(REPO, "build/bin/tsctl"),
                    help="tsctl binary (default build/bin/tsctl)")
    ap.add_argument("--workdir", default=os.path.join(REPO, "build/bench"),
                    help="where the archives are cached (default build/bench)")
    ap.add_argument("--quick", action="store_true",
                    help="use ~64 MiB and ~256 MiB archives instead of "
                         "~256 MiB and ~1 GiB")
    ap.add_argument("--check", action="store_true",
                    help="exit 1 when a target FAILs")
    ap.add_argument("--python", default=PYTHON,
                    help=f"Python with torch, for the reference and for "
                         f"generating (default {PYTHON})")
    ap.add_argument("--generate-one", nargs=2, metavar=("PATH", "LAYERS"),
                    help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.generate_one:
        generate_one(args.generate_one[0], int(args.generate_one[1]))
        return 0

    if args.repeat < 1:
        die("--repeat must be at least 1")
    tsctl = os.path.abspath(args.tsctl)
    if not os.access(tsctl, os.X_OK):
        die(f"{tsctl}: not an executable (build it: cmake --build build)")
    if not os.access(args.python, os.X_OK):
        die(f"{args.python}: not found (it needs torch)")
    workdir = os.path.abspath(args.workdir)
    os.makedirs(workdir, exist_ok=True)

    layer_counts = (1, 4) if args.quick else (4, 16)
    archives = [ensure_archive(workdir, n, args.python)[0]
                for n in layer_counts]

    commands = [  # (label, argv with PATH as placeholder, is tsctl)
        ("reference", [args.python, "-c", REFERENCE_CODE, "PATH"], False),
        ("tsctl inspect", [tsctl, "inspect", "PATH"], True),
        ("tsctl inspect --json", [tsctl, "inspect", "--json", "PATH"], True),
    ]

    # results[archive][label] = (median wall s, max peak RSS KiB)
    results = {}
    floor_kib = 0
    for path in archives:
        runs = {label: [] for label, _, _ in commands}
        argvs = {label: [path if a == "PATH" else a for a in argv]
                 for label, argv, _ in commands}
        for label, _, _ in commands:
            # One command at a time: its untimed warm-up run first, so the
            # timed runs do not follow straight on another command (a timed
            # tsctl run right after the 1 GiB reference exits is measurably
            # slower).
            measure(label, argvs[label])
            for _ in range(args.repeat):
                floor_kib = max(floor_kib,
                                measure("/bin/true", ["/bin/true"]).ru_maxrss)
                runs[label].append(measure(label, argvs[label]))
        results[path] = {
            label: (statistics.median(u.wall for u in us),
                    max(u.ru_maxrss for u in us))
            for label, us in runs.items()}

    # ---- report ----------------------------------------------------------
    def rss_str(kib):
        mib = kib / 1024
        # On the launcher floor (see the caveat at the top): an upper bound.
        if kib <= floor_kib + 256:
            return f"<={floor_kib / 1024:.1f}"
        return f"{mib:.1f}"

    with os.popen(f"'{tsctl}' --version 2>&1") as f:
        version = f.readline().strip()
    print(f"tsctl inspect benchmark: {version} ({tsctl})")
    print(f"reference: {args.python} -c 'torch.jit.load(path); print each "
          f"parameter's name, shape, dtype'")
    print(f"{args.repeat} timed runs per command after 1 untimed warm-up run "
          f"each; all runs with a warm page cache (it cannot be dropped); "
          f"median wall, max peak RSS")
    print(f"launcher RSS floor: {floor_kib / 1024:.1f} MiB (ru_maxrss of a "
          f"forked /bin/true; '<=' marks figures on it)")
    print()
    hdr = f"{'archive':>10}  {'command':<22} {'wall (ms)':>10} {'peak RSS (MiB)':>15}"
    print(hdr)
    print("-" * len(hdr))
    for path in archives:
        size = fmt_size(os.path.getsize(path))
        for label, _, _ in commands:
            wall, rss = results[path][label]
            print(f"{size:>10}  {label:<22} {wall * 1000:>10.1f} "
                  f"{rss_str(rss):>15}")
    print()

    failed = False
    print(f"time ratio tsctl/reference (target <= {TIME_RATIO_TARGET:.2f}), "
          f"peak RSS (target <= {RSS_TARGET_MIB} MiB):")
    for path in archives:
        size = fmt_size(os.path.getsize(path))
        ref_wall = results[path]["reference"][0]
        for label, _, is_tsctl in commands:
            if not is_tsctl:
                continue
            wall, rss = results[path][label]
            ratio = wall / ref_wall
            t_ok = ratio <= TIME_RATIO_TARGET
            r_ok = rss <= RSS_TARGET_MIB * 1024
            failed |= not (t_ok and r_ok)
            print(f"  {size:>10}  {label:<22} time ratio {ratio:.4f} "
                  f"(1/{1 / ratio:.0f}) {'PASS' if t_ok else 'FAIL'}   "
                  f"peak RSS {rss_str(rss)} MiB {'PASS' if r_ok else 'FAIL'}")
    print()

    small, large = archives
    s_size, l_size = (fmt_size(os.path.getsize(p)) for p in archives)
    print(f"growth from the {s_size} to the {l_size} archive "
          f"(\"does not grow\": within {GROW_REL:.0%}, or {GROW_ABS_MS:.0f} ms "
          f"for time):")
    for label, _, is_tsctl in commands:
        if not is_tsctl:
            continue
        (ws, rs), (wl, rl) = results[small][label], results[large][label]
        t_grow = wl > ws * (1 + GROW_REL) and (wl - ws) * 1000 > GROW_ABS_MS
        r_grow = rl > rs * (1 + GROW_REL)
        print(f"  {label:<22} time {ws * 1000:.1f} -> {wl * 1000:.1f} ms: "
              f"{'GROWS' if t_grow else 'does not grow'};  "
              f"peak RSS {rss_str(rs)} -> {rss_str(rl)} MiB: "
              f"{'GROWS' if r_grow else 'does not grow'}")
    print()
    print(f"overall: {'FAIL' if failed else 'PASS'} "
          f"(time ratio and peak RSS targets)")
    return 1 if (failed and args.check) else 0


if __name__ == "__main__":
    sys.exit(main())
