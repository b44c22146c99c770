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
  * with --graph-nodes N (default 5000; 0: none): a traced TorchScript
    archive made here (LibTorch 1.13's Python, /usr/bin/python3) of 50
    modules whose forward holds about N nodes in all, inlined; its page
    (the graph from a LibTorch child, folded by module, laid out by dot) is
    then opened in headless Chromium (tests/cli/cdp.py, offline): the time
    to the load event, the SVG boxes drawn, requests and console messages.
    Issue #40: a 5 000-node graph renders folded and opens in <= 3 s.
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


GRAPH_MODEL = r"""
import sys, torch
per = max(1, int(sys.argv[2]) // 50 // 2)
class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)
    def forward(self, x):
        for _ in range(per):  # unrolled by the tracer: two nodes a turn
            x = torch.relu(x) + 1
        return self.lin(x)
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = torch.nn.Sequential(*[Block() for _ in range(50)])
    def forward(self, x):
        return self.blocks(x)
torch.jit.trace(Net().eval(), torch.zeros(1, 8)).save(sys.argv[1])
"""


def make_graph(workdir, nodes):
    """A traced archive with about `nodes` nodes in 50 modules (cached)."""
    path = os.path.join(workdir, "report_graph_%d.pt" % nodes)
    if not os.path.exists(path):
        os.makedirs(workdir, exist_ok=True)
        subprocess.run(["/usr/bin/python3", "-c", GRAPH_MODEL, path + ".tmp", str(nodes)], check=True)
        os.replace(path + ".tmp", path)
    return path


def open_in_chromium(page):
    """The page in headless Chromium: seconds to load, boxes, problems."""
    sys.path.insert(0, os.path.join(REPO, "tests", "cli"))
    import cdp  # noqa: E402
    if not cdp.find_chromium():
        return None
    sections = ["summary", "signature", "modules", "operators", "graph", "sizes", "code", "extra"]
    c = cdp.check_page(page, sections)
    return c.seconds, c.svg_nodes, len(c.requests), len(c.console), c.problems()


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
    ap.add_argument("--graph-nodes", type=int, default=5000)
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
        if args.graph_nodes > 0:
            graph_figures(args, tmp)
    return 0


def graph_figures(args, tmp):
    archive = make_graph(args.workdir, args.graph_nodes)
    page = os.path.join(tmp, "graph.html")
    median, best, size, _ = measure(args.tsctl, archive, args.repeat, page)
    html = open(page, encoding="utf-8").read()
    if "<svg class=\"graph\"" not in html:
        note = re.search(r'<section id="graph"><h2>Graph</h2><p class="note">([^<]*)', html)
        print("graph of %s: not drawn (%s)" % (os.path.basename(archive), note.group(1) if note else "?"))
        return
    nodes = re.search(r'<summary><code>forward</code> <span class="muted">([0-9,]+) nodes', html)
    print("graph of %s: %s nodes, %d views, %d boxes; report (LibTorch child, dot) median %.3f s, min %.3f s; "
          "page %.1f KiB" % (os.path.basename(archive), nodes.group(1) if nodes else "?", html.count('<svg class="graph"'),
                             html.count('<g class="gn'), median, best, size / 1024))
    opened = open_in_chromium(page)
    if opened is None:
        print("chromium is not installed: the page was not opened")
        return
    seconds, svg_nodes, requests, console, problems = opened
    print("Chromium (headless, offline, its start-up excluded): loaded in %.3f s, %d SVG elements, %d requests, "
          "%d console messages, problems: %s" % (seconds, svg_nodes, requests, console, problems or "none"))


if __name__ == "__main__":
    sys.exit(main())
