#!/usr/bin/python3
"""How long LibTorch takes per archive in `tsctl validate`, over a folder of
real archives: the figures validate's default --timeout is chosen from
(docs/manual/validate.md, "Time limits").

Runs `tsctl validate --format json -j1 FILE...` once over every file of the
folder (not README.md, not subfolders), with no flags, so each archive gets
what a CI run with no flags gives it: load, the search for inputs, both runs.
Reads details.torch_seconds (the LibTorch child, from fork to exit; the
sum over an archive's children) and details.model.load_ms, and prints the
median, 90th percentile and largest, the slowest archives with their size,
and how far the default (ValidateTimeout: 60 s plus 60 s per GiB) is above
each of the slowest. The machine's load is printed too: figures from a busy
machine are larger.

Usage: scripts/validate_times.py [--tsctl build/bin/tsctl] [--corpus ../shared/corpus] [--top 8]
Exit status: 0; 2 when validate could not run.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def default_timeout(size):
    # As lib/src/commands/validate.cc ValidateTimeout, rounded up there.
    return 60 + 60 * size / 2**30


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tsctl", default=os.path.join(ROOT, "build/bin/tsctl"))
    ap.add_argument("--corpus", default=os.path.join(ROOT, "../shared/corpus"))
    ap.add_argument("--top", type=int, default=8)
    args = ap.parse_args()
    files = sorted(os.path.join(args.corpus, f) for f in os.listdir(args.corpus)
                   if f != "README.md" and os.path.isfile(os.path.join(args.corpus, f)))
    load = os.getloadavg()[0]
    r = subprocess.run([args.tsctl, "validate", "--format", "json", "-j1", *files],
                       capture_output=True, text=True)
    try:
        doc = json.loads(r.stdout)
    except ValueError:
        print("validate_times: validate gave no JSON: " + r.stderr.strip()[:300], file=sys.stderr)
        return 2
    rows = []
    for a in doc["archives"]:
        d = a.get("details") or {}
        t = d.get("torch_seconds")
        if not t:
            continue
        m = d.get("model") if isinstance(d.get("model"), dict) else {}
        rows.append((t, os.path.getsize(a["path"]), (m or {}).get("load_ms") or 0,
                     os.path.basename(a["path"])))
    if not rows:
        print("validate_times: no archive reached LibTorch", file=sys.stderr)
        return 2
    times = sorted(t for t, *_ in rows)
    print(f"{args.tsctl} over {len(files)} files of {args.corpus} (load average {load:.1f} at the start)")
    print(f"LibTorch reached: {len(rows)} archives; seconds per archive: median {statistics.median(times):.2f}, "
          f"90th percentile {times[int(0.9 * (len(times) - 1))]:.2f}, largest {times[-1]:.2f}")
    print(f"largest load: {max(r[2] for r in rows) / 1000:.2f} s")
    print(f"slowest {args.top}:")
    for t, size, load_ms, name in sorted(rows, reverse=True)[:args.top]:
        limit = default_timeout(size)
        print(f"  {t:6.2f} s  {size / 2**20:7.1f} MiB  load {load_ms / 1000:5.2f} s  default --timeout "
              f"{limit:5.0f} s ({limit / t:4.0f}x)  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
