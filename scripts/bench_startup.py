#!/usr/bin/python3
"""Where one `tsctl validate` of a small archive spends its time, by phase,
for one or more builds side by side (e.g. before and after a change, or the
1.13 and 2.x builds).

A validate process does its own checks (ZIP, pickles; no LibTorch in it)
while, beside them, it starts tsctl-torch-server, which loads the plugin and
LibTorch and says "ready"; the server then forks the sandboxed child that
loads the archive and runs it. Measured per build, each a median of --repeat
fresh processes, the builds taking turns so that a change of the machine's
load hits them alike:
  whole        wall time of `tsctl validate FILE`
  own checks   wall time of `tsctl validate --no-load FILE` (process start,
               every check without LibTorch, report, exit)
  server       wall time of `tsctl --version` (process start, the server's
               start and its LibTorch loading, up to "ready"; the version
               lines need nothing more)
  child        details.torch_seconds of `validate --format json FILE` (fork
               to exit of the LibTorch child), of which
    load       details.model.load_ms (torch::jit::load)
    runs etc.  the rest of the child (sandbox, inputs, two runs, checks)
  other        whole - server - child (handing the result back, the report,
               exit; the own checks run beside the server and are hidden)
Also the peak RSS of the server (`tsctl --version`'s children, from wait4).

Usage: scripts/bench_startup.py [--tsctl BIN]... [--archive testdata/traced_cnn.pt] [--repeat 9]
  --tsctl may be given several times (default build/bin/tsctl).
Exit status: 0; 2 when a command fails.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def timed(argv):
    """Wall seconds and stdout of one process."""
    start = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = p.communicate()
    wall = time.perf_counter() - start
    if p.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(argv)}: exit {p.returncode}: {err.decode(errors='replace').strip()[:300]}")
    return wall, out


def one_round(tsctl, archive):
    whole, _ = timed([tsctl, "validate", archive])
    own, _ = timed([tsctl, "validate", "--no-load", archive])
    server, _ = timed([tsctl, "--version"])
    _, out = timed([tsctl, "validate", "--format", "json", archive])
    d = json.loads(out)["archives"][0]["details"]
    model = d.get("model") if isinstance(d.get("model"), dict) else {}
    child = d.get("torch_seconds") or 0.0
    load = (model.get("load_ms") or 0.0) / 1000
    return {"whole": whole, "own checks": own, "server": server, "child": child, "load": load,
            "runs etc.": child - load, "other": whole - server - child}


def server_rss(tsctl):
    # A fresh Python process, so that RUSAGE_CHILDREN holds this one command only.
    code = ("import resource, subprocess, sys; subprocess.run([sys.argv[1], '--version'], capture_output=True); "
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    r = subprocess.run([sys.executable, "-c", code, tsctl], capture_output=True, text=True)
    return int(r.stdout.strip() or 0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tsctl", action="append", help="a tsctl binary (repeatable; default build/bin/tsctl)")
    ap.add_argument("--archive", default=os.path.join(ROOT, "testdata/traced_cnn.pt"))
    ap.add_argument("--repeat", type=int, default=9)
    args = ap.parse_args()
    builds = args.tsctl or [os.path.join(ROOT, "build/bin/tsctl")]
    rounds = {b: [] for b in builds}
    try:
        for b in builds:  # once untimed: page cache, ccache of nothing
            one_round(b, args.archive)
        for _ in range(args.repeat):
            for b in builds:
                rounds[b].append(one_round(b, args.archive))
    except (RuntimeError, ValueError, KeyError) as e:
        print(f"bench_startup: {e}", file=sys.stderr)
        return 2
    print(f"validate {os.path.relpath(args.archive, ROOT)}: medians of {args.repeat} runs, seconds "
          f"(load average {os.getloadavg()[0]:.1f} at the end)")
    names = list(rounds[builds[0]][0].keys())
    width = max(len(b) for b in builds)
    print(f"{'':{width}}  " + "  ".join(f"{n:>10}" for n in names) + "  server RSS")
    for b in builds:
        med = {n: statistics.median(r[n] for r in rounds[b]) for n in names}
        print(f"{b:{width}}  " + "  ".join(f"{med[n]:10.3f}" for n in names) + f"  {server_rss(b) / 1024:6.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
