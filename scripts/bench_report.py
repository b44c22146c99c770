#!/usr/bin/python3
"""Benchmark `tsctl report`: how long writing the page takes, how big it is.

Issue #40: a report of a 1 GB archive is written in <= 2 s and stays
<= 5 MB (tensors are summarised, never embedded). This script prints the
figures; no test asserts timings.

What it measures
  * the largest archive of ../shared/corpus (any kind: TorchScript, .pt2,
    ExecuTorch), and any --archive given;
  * with --big-gib N: an archive of N GiB made here from
    testdata/traced_cnn.pt, its first tensor data record grown to N GiB of
    zeros (stored, ZIP64), written once into --workdir (default build/bench,
    which git ignores; needs N GiB of free disk). It shows that the page
    does not grow with the tensor bytes and that they are never read.
  Each archive: one untimed run (page cache), then --repeat runs of
  `tsctl report -o PAGE ARCHIVE`, each a fresh process; it prints the median
  and minimum wall time, the page's size and the largest section.

Usage
  /usr/bin/python3 scripts/bench_report.py [--tsctl build/bin/tsctl]
      [--corpus ../shared/corpus] [--archive PATH]... [--big-gib N]
      [--repeat 5] [--workdir build/bench]
Exit status 0; 2 when the benchmark cannot run (a report fails).
"""
import argparse
import glob
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def largest(corpus):
    files = [f for f in glob.glob(os.path.join(corpus, "**", "*"), recursive=True)
             if os.path.isfile(f) and not f.endswith(".md") and "_not_torchscript" not in f]
    return max(files, key=os.path.getsize) if files else None


def make_big(workdir, gib):
    """testdata/traced_cnn.pt with data/0 grown to `gib` GiB (cached)."""
    path = os.path.join(workdir, "report_big_%dgib.pt" % gib)
    if os.path.exists(path) and os.path.getsize(path) > gib << 30:
        return path
    os.makedirs(workdir, exist_ok=True)
    src = zipfile.ZipFile(os.path.join(REPO, "testdata", "traced_cnn.pt"))
    tmp = path + ".tmp"
    chunk = bytes(64 << 20)
    with zipfile.ZipFile(tmp, "w", allowZip64=True) as z:
        for info in src.infolist():
            if info.filename.endswith("/data/0"):
                out = zipfile.ZipInfo(info.filename, info.date_time)
                out.compress_type = zipfile.ZIP_STORED
                with z.open(out, "w", force_zip64=True) as f:
                    for _ in range((gib << 30) // len(chunk)):
                        f.write(chunk)
            else:
                z.writestr(info, src.read(info))
    os.replace(tmp, path)
    return path


def measure(tsctl, archive, repeat, page):
    def once():
        start = time.perf_counter()
        r = subprocess.run([tsctl, "report", "-o", page, archive], capture_output=True)
        wall = time.perf_counter() - start
        if r.returncode != 0:
            sys.exit("bench_report: tsctl report %s: exit %d: %s" % (archive, r.returncode, r.stderr.decode()[:300]))
        return wall

    once()
    times = [once() for _ in range(repeat)]
    html = open(page, encoding="utf-8").read()
    ids = [(m.start(), m.group(1)) for m in re.finditer(r'<section id="(\w+)"', html)] + [(len(html), "")]
    sections = sorted(((ids[i + 1][0] - ids[i][0], ids[i][1]) for i in range(len(ids) - 1)), reverse=True)
    return statistics.median(times), min(times), len(html.encode("utf-8")), sections[0] if sections else (0, "")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tsctl", default=os.path.join(REPO, "build", "bin", "tsctl"))
    ap.add_argument("--corpus", default=os.path.join(REPO, "..", "shared", "corpus"))
    ap.add_argument("--archive", action="append", default=[])
    ap.add_argument("--big-gib", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--workdir", default=os.path.join(REPO, "build", "bench"))
    args = ap.parse_args()
    archives = list(args.archive)
    big = largest(args.corpus)
    if big:
        archives.insert(0, big)
    if args.big_gib > 0:
        archives.append(make_big(args.workdir, args.big_gib))
    if not archives:
        sys.exit("bench_report: no archive (no corpus at %s, no --archive, no --big-gib)" % args.corpus)
    print("tsctl report, %d runs each after one untimed run" % args.repeat)
    print("%-58s %10s %9s %9s %10s  %s" % ("archive", "size", "median", "min", "page", "largest section"))
    with tempfile.TemporaryDirectory() as tmp:
        for a in archives:
            median, best, page, (sec_bytes, sec) = measure(args.tsctl, a, args.repeat, os.path.join(tmp, "p.html"))
            name = os.path.basename(a)
            print("%-58s %8.1f MiB %7.3f s %7.3f s %6.1f KiB  %s (%.1f KiB)" %
                  (name[-58:], os.path.getsize(a) / (1 << 20), median, best, page / 1024, sec, sec_bytes / 1024))
    return 0


if __name__ == "__main__":
    sys.exit(main())
