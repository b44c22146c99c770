#!/usr/bin/python3
"""How long `tsctl bench` with its default flags takes on every archive of a corpus.

    scripts/bench_defaults.py [--tsctl build/bin/tsctl] [--corpus ../shared/corpus] [--limit 10]

Issue #26's target: bench with default flags (inputs inferred, 0.2 s of
warm-up, 3 s of timed calls) finishes in at most --limit seconds of wall time
on the slowest archive of the corpus, and its report says how many calls it
made. Runs one archive at a time (a fresh tsctl per archive, JSON report),
prints one line per archive (wall seconds, exit status, warm-up and timed
calls, median latency) sorted slowest first, then the slowest and whether it
is within the limit. Archives bench cannot run (no inputs found, not
TorchScript) count too: their wall time is how long bench took to say so.
Exits 1 if an archive took longer than the limit.
"""
import argparse
import json
import os
import subprocess
import sys
import time


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tsctl", default=os.path.join(root, "build", "bin", "tsctl"))
    ap.add_argument("--corpus", default=os.path.join(root, "..", "shared", "corpus"))
    ap.add_argument("--limit", type=float, default=10.0)
    args = ap.parse_args()
    rows = []
    for name in sorted(os.listdir(args.corpus)):
        path = os.path.join(args.corpus, name)
        if not os.path.isfile(path) or name.endswith(".md"):
            continue
        start = time.monotonic()
        p = subprocess.run([args.tsctl, "bench", "--json", path], capture_output=True, timeout=600)
        wall = time.monotonic() - start
        runs = "-"
        if p.returncode == 0:
            j = json.loads(p.stdout)
            runs = "%d warm-up, %d timed, median %.1f ms" % (j["runs"]["warmup_calls"], j["runs"]["timed_calls"],
                                                            j["latency_ns"]["median"] / 1e6)
        rows.append((wall, p.returncode, runs, name))
    rows.sort(reverse=True)
    for wall, code, runs, name in rows:
        print("%6.2f s  exit %d  %-40s %s" % (wall, code, runs, name))
    ran = [r for r in rows if r[1] == 0]
    print("archives: %d, bench ran on %d" % (len(rows), len(ran)))
    if ran:
        print("slowest that ran: %.2f s (%s)" % (ran[0][0], ran[0][3]))
    print("slowest overall: %.2f s (%s, exit %d); limit %.0f s: %s" %
          (rows[0][0], rows[0][3], rows[0][1], args.limit, "met" if rows[0][0] <= args.limit else "NOT met"))
    return 0 if rows[0][0] <= args.limit else 1


if __name__ == "__main__":
    sys.exit(main())
