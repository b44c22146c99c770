"""What the benchmark scripts share (bench_inspect.py, bench_stamp.py,
bench_validate.py, bench_bench.py); not a script of its own.

  * running and measuring a child process: fork+exec, wait4 for its peak RSS
    (ru_maxrss) and time.perf_counter around it for its wall time, and the
    RSS floor that the launcher itself puts under every figure;
  * stopping the benchmark (exit status 2) with a message;
  * command-line options and checks that several scripts have;
  * medians, the wall/peak RSS table, PASS/FAIL and the --check exit status;
  * the archives, generated once by a child of the Python with torch and
    cached in --workdir (default build/bench, which git ignores) next to a
    .json file that records their size: the nn.Linear stacks of
    bench_inspect.py and bench_stamp.py, and the traced ResNet-18 of
    bench_validate.py and bench_bench.py. The child runs the script that
    owns the archive with its hidden generating option
    (bench_inspect.py --generate-one PATH LAYERS,
    bench_validate.py --generate PATH).

This module does not import torch; only the generating children do.
"""

import json
import os
import shutil
import statistics
import sys
import tempfile
import time

SCRIPTS = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(SCRIPTS)
PYTHON = "/usr/bin/python3"  # the Python with torch and torchvision (Debian's)
MIB = 1 << 20

# Targets of the inspect issue, which bench_stamp.py shares.
TIME_RATIO_TARGET = 1 / 20   # tsctl wall / reference wall
RSS_TARGET_MIB = 64          # tsctl peak RSS
# "Does not grow" between the smaller and the larger archive when within
# GROW_REL (relative), or for times within GROW_ABS_MS (absolute).
GROW_REL = 0.20
GROW_ABS_MS = 5.0

# Exit statuses of a command that measure() retries when asked to: 6 (the
# LibTorch plugin cannot be loaded) and 127 (exec failed).
RETRY_STATUSES = (6, 127)
RETRY_SECONDS = 10


def prog():
    """The running script's name, without .py: the prefix of its messages."""
    return os.path.splitext(os.path.basename(sys.argv[0]))[0]


def die(msg, who=None):
    """Print `who: msg` (who: the running script) and exit with status 2."""
    print(f"{who or prog()}: {msg}", file=sys.stderr)
    sys.exit(2)


# --------------------------------------------------------------------------
# Running and measuring one child
# --------------------------------------------------------------------------

class Usage:
    def __init__(self, ru, wall):
        self.ru_maxrss = ru.ru_maxrss  # KiB on Linux
        self.wall = wall               # seconds


def run_child(argv, capture_stdout=False, capture_stderr=True):
    """fork+exec argv; wait4 for it.

    stdout goes to /dev/null, or with capture_stdout to a temporary file;
    stderr to a temporary file, or without capture_stderr stays this
    process's. Returns (exit status, Usage, stdout text, stderr text), a text
    "" where not captured. fork() rather than posix_spawn(): a vfork-style
    spawn makes the child's ru_maxrss include the parent's whole peak RSS,
    fork() only the parent's copied pages.
    """
    devnull = None if capture_stdout else os.open(os.devnull, os.O_WRONLY)
    outf = tempfile.TemporaryFile() if capture_stdout else None
    errf = tempfile.TemporaryFile() if capture_stderr else None
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:  # child: only async-signal-safe-ish work until exec
        try:
            os.dup2(outf.fileno() if outf is not None else devnull, 1)
            if errf is not None:
                os.dup2(errf.fileno(), 2)
            os.execv(argv[0], argv)
        finally:
            os._exit(127)
    _, status, ru = os.wait4(pid, 0)
    wall = time.perf_counter() - t0
    if devnull is not None:
        os.close(devnull)
    texts = []
    for f in (outf, errf):
        if f is None:
            texts.append("")
            continue
        f.seek(0)
        texts.append(f.read().decode(errors="replace"))
        f.close()
    return os.waitstatus_to_exitcode(status), Usage(ru, wall), *texts


def measure(name, argv, capture_stdout=False, tail=15, attempts=1):
    """Run argv once; stop the benchmark loudly if it does not exit 0.

    Returns (Usage, stdout text). The message shows the last `tail` lines of
    the command's output (its stderr, and its stdout too with
    capture_stdout). With attempts > 1, exit statuses RETRY_STATUSES are
    retried, RETRY_SECONDS apart, up to `attempts` runs in all: a build
    running beside the benchmark replaces the binaries for a moment.
    """
    for _ in range(attempts):
        status, usage, out, err = run_child(argv, capture_stdout)
        if attempts == 1 or status not in RETRY_STATUSES:
            break
        print(f"{name}: exit status {status}, retrying in {RETRY_SECONDS} s",
              file=sys.stderr, flush=True)
        time.sleep(RETRY_SECONDS)
    if status != 0:
        tail = "\n".join((out + err).strip().splitlines()[-tail:])
        die(f"{name} exited with status {status}: {' '.join(argv)}\n{tail}")
    return usage, out


class LauncherFloor:
    """The RSS floor under every child's figure.

    Linux counts, in a child's ru_maxrss, the pages it inherited from the
    parent at fork() until exec(); sample() measures that (a forked
    /bin/true, keeping the largest), fmt() shows a figure that sits on it as
    "<=floor", an upper bound.
    """

    def __init__(self):
        self.kib = 0

    def sample(self):
        usage, _ = measure("/bin/true", ["/bin/true"])
        self.kib = max(self.kib, usage.ru_maxrss)

    def fmt(self, kib):
        if kib <= self.kib + 256:
            return f"<={self.kib / 1024:.1f}"
        return f"{kib / 1024:.1f}"

    def line(self):
        return (f"launcher RSS floor: {self.kib / 1024:.1f} MiB (ru_maxrss of "
                f"a forked /bin/true; '<=' marks figures on it)")


def median(values):
    return statistics.median(values) if values else float("nan")


def summarize(usages):
    """(median wall in s, largest peak RSS in KiB) of some runs."""
    return median([u.wall for u in usages]), max(u.ru_maxrss for u in usages)


# --------------------------------------------------------------------------
# Options and their checks
# --------------------------------------------------------------------------

def add_tsctl_option(ap):
    ap.add_argument("--tsctl", default=os.path.join(REPO, "build/bin/tsctl"),
                    help="tsctl binary (default build/bin/tsctl)")


def add_reference_bin_option(ap):
    ap.add_argument("--reference-bin", default=None,
                    help="tsctl_bench_reference binary (default "
                         "build/bin/tsctl_bench_reference, else "
                         "build/bench/tsctl_bench_reference)")


def add_workdir_option(ap, what):
    ap.add_argument("--workdir", default=os.path.join(REPO, "build/bench"),
                    help=f"where {what} (default build/bench)")


def add_python_option(ap, what):
    ap.add_argument("--python", default=PYTHON,
                    help=f"Python with {what} (default {PYTHON})")


def add_check_option(ap, which="a target"):
    ap.add_argument("--check", action="store_true",
                    help=f"exit 1 when {which} FAILs")


def check_at_least_1(value, option):
    if value < 1:
        die(f"{option} must be at least 1")


def tsctl_path(path):
    """The absolute path of the tsctl binary; stop when it is not one."""
    tsctl = os.path.abspath(path)
    if not os.access(tsctl, os.X_OK):
        die(f"{tsctl}: not an executable (build it: cmake --build build)")
    return tsctl


def check_python(python):
    if not os.access(python, os.X_OK):
        die(f"{python}: not found (it needs torch)")


def reference_bin_path(path, workdir, see):
    """The tsctl_bench_reference binary: `path`, else build/bin's, else
    workdir's; stop when it is not an executable (`see`: where to read how
    to build it by hand)."""
    if path:
        ref_bin = os.path.abspath(path)
    else:
        candidates = [os.path.join(REPO, "build/bin/tsctl_bench_reference"),
                      os.path.join(os.path.abspath(workdir),
                                   "tsctl_bench_reference")]
        ref_bin = next((c for c in candidates if os.access(c, os.X_OK)),
                       candidates[0])
    if not os.access(ref_bin, os.X_OK):
        die(f"{ref_bin}: not an executable (build the target "
            f"tsctl_bench_reference, or see {see})")
    return ref_bin


def make_workdir(path):
    workdir = os.path.abspath(path)
    os.makedirs(workdir, exist_ok=True)
    return workdir


# --------------------------------------------------------------------------
# Reporting
# --------------------------------------------------------------------------

def tsctl_version(tsctl, lines=1):
    """The first `lines` lines of `tsctl --version`, joined by " / "."""
    with os.popen(f"'{tsctl}' --version 2>&1") as f:
        return " / ".join(line.strip() for line in f.readlines()[:lines])


def fmt_size(nbytes):
    return (f"{nbytes / (1 << 30):.2f} GiB" if nbytes >= 1 << 30
            else f"{nbytes / MIB:.0f} MiB")


def size_of(path):
    return fmt_size(os.path.getsize(path))


def verdict(ok):
    return "PASS" if ok else "FAIL"


def exit_status(failed, check):
    """0, or 1 when something FAILed and --check was given."""
    return 1 if (failed and check) else 0


def print_table(rows, rss_str, width=22):
    """The wall time and peak RSS table: rows of (archive, label, wall in s,
    peak RSS in KiB), the RSS shown as rss_str(KiB) has it; without an
    archive column when the archives are None."""
    archive_col = rows[0][0] is not None

    def line(archive, label, wall, rss):
        return ((f"{archive:>10}  " if archive_col else "")
                + f"{label:<{width}} {wall:>10} {rss:>15}")

    hdr = line("archive", "command", "wall (ms)", "peak RSS (MiB)")
    print(hdr)
    print("-" * len(hdr))
    for archive, label, wall, rss in rows:
        print(line(archive, label, f"{wall * 1000:.1f}", rss_str(rss)))


def print_growth(results, archives, labels, rss_str):
    """Whether time and peak RSS grow from the smaller to the larger archive:
    results[archive][label] = (wall in s, peak RSS in KiB)."""
    small, large = archives
    print(f"growth from the {size_of(small)} to the {size_of(large)} archive "
          f"(\"does not grow\": within {GROW_REL:.0%}, or {GROW_ABS_MS:.0f} ms "
          f"for time):")
    for label in labels:
        (ws, rs), (wl, rl) = results[small][label], results[large][label]
        t_grow = wl > ws * (1 + GROW_REL) and (wl - ws) * 1000 > GROW_ABS_MS
        r_grow = rl > rs * (1 + GROW_REL)
        print(f"  {label:<22} time {ws * 1000:.1f} -> {wl * 1000:.1f} ms: "
              f"{'GROWS' if t_grow else 'does not grow'};  "
              f"peak RSS {rss_str(rs)} -> {rss_str(rl)} MiB: "
              f"{'GROWS' if r_grow else 'does not grow'}")


# --------------------------------------------------------------------------
# Cached archives
# --------------------------------------------------------------------------

def is_cached(path):
    """True when path exists with the size its .json file records."""
    try:
        with open(path + ".json") as f:
            return os.path.getsize(path) == json.load(f)["size"]
    except (OSError, ValueError, KeyError):
        return False


def write_meta(path, meta):
    """Write meta, with the archive's size, to path + ".json"."""
    meta["size"] = os.path.getsize(path)
    with open(path + ".json", "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")


def generate_cached(path, python, script, *args):
    """Return path, first generating it when it is not cached: a child runs
    `python script *args` (script: one of these scripts, its hidden
    generating option in args); a failure stops the benchmark with the
    child's stderr, in the name of that script."""
    if is_cached(path):
        return path
    print(f"generating {path} ...", file=sys.stderr, flush=True)
    status, _, _, err = run_child([python, os.path.join(SCRIPTS, script),
                                   *args], capture_stdout=True)
    if status != 0:
        die(f"generating {path} failed (exit status {status}):\n{err}",
            os.path.splitext(script)[0])
    return path


# The nn.Linear stacks of bench_inspect.py and bench_stamp.py.
LINEAR_SCRIPT = "bench_inspect.py"  # generates them: --generate-one
LINEAR_SEED = 20240101
DIM = 4096                   # nn.Linear(DIM, DIM): 64 MiB of float32 weight


def generate_linear(path, layers):
    """Write an nn.Sequential of `layers` x Linear(DIM, DIM) to `path`.

    Every parameter is backed by its own memory-mapped scratch file (its own
    storage, so the archive has one data record per tensor, as usual), so
    the weights live in the page cache, not in anonymous memory.
    """
    import torch
    import torch.nn as nn

    torch.manual_seed(LINEAR_SEED)
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
    write_meta(path, {"layers": layers, "dim": DIM, "seed": LINEAR_SEED,
                      "scripted": True, "torch": torch.__version__})


def ensure_linear(workdir, layers, python):
    """The path of the `layers`-layer archive, generated if need be."""
    path = os.path.join(workdir, f"linear{layers}x{DIM}.pt")
    if is_cached(path):
        return path
    who = os.path.splitext(LINEAR_SCRIPT)[0]
    need = 2 * layers * (DIM * DIM + DIM) * 4 + 64 * MIB  # scratch + archive
    free = shutil.disk_usage(workdir).free
    if free < need:
        die(f"{workdir}: {free / MIB:.0f} MiB free, generating "
            f"{os.path.basename(path)} needs about {need / MIB:.0f} MiB", who)
    print(f"generating {path} ...", file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    status, ru, _, _ = run_child([python, os.path.join(SCRIPTS, LINEAR_SCRIPT),
                                  "--generate-one", path, str(layers)],
                                 capture_stderr=False)
    if status != 0:
        die(f"generating {path} failed (exit status {status})", who)
    print(f"  done in {time.perf_counter() - t0:.1f} s, "
          f"generator peak RSS {ru.ru_maxrss / 1024:.0f} MiB (most of it "
          f"torch and the mapped, reclaimable scratch files)",
          file=sys.stderr, flush=True)
    return path


def add_linear_options(ap, workdir_what, python_what):
    """The options of bench_inspect.py and bench_stamp.py."""
    ap.add_argument("--repeat", type=int, default=3,
                    help="timed runs per command and archive (default 3)")
    add_tsctl_option(ap)
    add_workdir_option(ap, workdir_what)
    ap.add_argument("--quick", action="store_true",
                    help="use ~64 MiB and ~256 MiB archives instead of "
                         "~256 MiB and ~1 GiB")
    add_check_option(ap)
    add_python_option(ap, python_what)


def linear_setup(args):
    """Check the options of add_linear_options and get the two archives
    (~256 MiB and ~1 GiB; with --quick ~64 MiB and ~256 MiB), generating
    them where need be. Returns (tsctl, workdir, archives)."""
    check_at_least_1(args.repeat, "--repeat")
    tsctl = tsctl_path(args.tsctl)
    check_python(args.python)
    workdir = make_workdir(args.workdir)
    archives = [ensure_linear(workdir, n, args.python)
                for n in ((1, 4) if args.quick else (4, 16))]
    return tsctl, workdir, archives


def meets_targets(wall, ref_wall, rss):
    """(time ratio to the reference, whether it meets TIME_RATIO_TARGET,
    whether the peak RSS in KiB meets RSS_TARGET_MIB)."""
    ratio = wall / ref_wall
    return ratio, ratio <= TIME_RATIO_TARGET, rss <= RSS_TARGET_MIB * 1024


# The traced ResNet-18 of bench_validate.py and bench_bench.py.
RESNET18_SCRIPT = "bench_validate.py"  # generates it: --generate
RESNET18_SEED = 0
RESNET18_INPUT = "1x3x224x224"


def generate_resnet18(path):
    import torch
    import torchvision

    torch.manual_seed(RESNET18_SEED)
    model = torchvision.models.resnet18(weights=None).eval()
    with torch.no_grad():
        traced = torch.jit.trace(model, torch.rand(1, 3, 224, 224))
    tmp = path + ".tmp"
    torch.jit.save(traced, tmp)
    os.replace(tmp, path)
    write_meta(path, {"model": "torchvision resnet18, weights=None, traced",
                      "seed": RESNET18_SEED, "torch": torch.__version__,
                      "torchvision": torchvision.__version__})


def ensure_resnet18(workdir, python):
    path = os.path.join(workdir, "resnet18.pt")
    return generate_cached(path, python, RESNET18_SCRIPT, "--generate", path)
