#!/usr/bin/python3
"""What the sandbox costs `tsctl validate`, and what it changes, over a corpus.

Issue #35: the sandbox (docs/manual/sandbox.md) breaks no honest model (the
same verdicts with and without it) and adds at most 5 % to validate's time
over ../shared/corpus.

What it measures
  For every archive of the corpus (TorchScript and .pt2; --limit N takes the
  first N by name), `tsctl validate -j1 --format json ARCHIVE` with the
  sandbox and with `--no-sandbox`, each a fresh process, in turn, --repeat
  rounds (so a change of the machine's load hits both alike). Reported:
    - per configuration, the sum over the archives of each one's median wall
      time, and the ratio sandbox / no sandbox (target <= 1.05);
    - every archive whose verdict differs: its checks' statuses with and
      without the sandbox (torch.sandbox aside, which --no-sandbox adds as a
      SKIP), so a difference is seen, never averaged away.
  The exit status is 1 with --check when the ratio is over 1.05 or a verdict
  differs, else 0.

Usage
  /usr/bin/python3 scripts/bench_sandbox.py [--repeat N] [--limit N] [--check]
      [--tsctl PATH] [--corpus DIR]
"""
import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def archives(corpus, limit):
    files = []
    for pattern in ("**/*.pt", "**/*.pth", "**/*.ptl", "**/*.pt1", "**/*.pt2", "**/*.jit", "**/*.zip"):
        files += glob.glob(os.path.join(corpus, pattern), recursive=True)
    files = sorted(set(f for f in files if os.path.isfile(f) and "/pte/" not in f))
    return files[:limit] if limit else files


def run(tsctl, archive, sandbox):
    argv = [tsctl] + ([] if sandbox else ["--no-sandbox"]) + ["validate", "-j1", "--format", "json", archive]
    start = time.perf_counter()
    r = subprocess.run(argv, capture_output=True, text=True, timeout=900)
    wall = time.perf_counter() - start
    try:
        report = json.loads(r.stdout)
        checks = {c["id"]: c["status"] for a in report.get("archives", []) for c in a.get("checks", [])
                  if c["id"] != "torch.sandbox"}
    except (ValueError, KeyError, TypeError):
        checks = {"(no report)": "exit %d: %s" % (r.returncode, r.stderr.strip()[:120])}
    return wall, r.returncode, checks


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--tsctl", default=os.path.join(ROOT, "build", "bin", "tsctl"))
    ap.add_argument("--corpus", default=os.path.join(ROOT, "..", "shared", "corpus"))
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    files = archives(args.corpus, args.limit)
    if not files:
        sys.exit("bench_sandbox: no archives under " + args.corpus)
    version = subprocess.run([args.tsctl, "--version"], capture_output=True, text=True).stdout
    print(next((l for l in version.splitlines() if l.startswith("sandbox")), "sandbox: (no line)"))
    print("%d archives, %d rounds" % (len(files), args.repeat))
    walls = {True: {}, False: {}}
    verdicts = {True: {}, False: {}}
    for _ in range(args.repeat):
        for f in files:
            for sandbox in (True, False):
                wall, rc, checks = run(args.tsctl, f, sandbox)
                walls[sandbox].setdefault(f, []).append(wall)
                verdicts[sandbox][f] = (rc, checks)
    total = {s: sum(statistics.median(w) for w in walls[s].values()) for s in (True, False)}
    ratio = total[True] / total[False] if total[False] else float("nan")
    print("validate, sum of medians: sandbox %.1f s, --no-sandbox %.1f s, ratio %.3f (target <= 1.05)"
          % (total[True], total[False], ratio))
    differ = [f for f in files if verdicts[True][f] != verdicts[False][f]]
    print("verdicts that differ: %d of %d" % (len(differ), len(files)))
    for f in differ:
        (rc1, c1), (rc0, c0) = verdicts[True][f], verdicts[False][f]
        print("  %s: exit %d vs %d" % (os.path.relpath(f, args.corpus), rc1, rc0))
        for k in sorted(set(c1) | set(c0)):
            if c1.get(k) != c0.get(k):
                print("    %-20s sandbox %-6s no sandbox %s" % (k, c1.get(k), c0.get(k)))
    bad = ratio > 1.05 or bool(differ)
    return 1 if (args.check and bad) else 0


if __name__ == "__main__":
    sys.exit(main())
