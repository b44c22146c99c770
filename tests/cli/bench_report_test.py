#!/usr/bin/python3
"""tsctl bench --report on testdata/traced_cnn.pt (LibTorch): the page's
invariants against the JSON report of the same run.

One benchmark with --profile and one --sweep, each with --json on stdout and
--report FILE.html: exit 0; the JSON unchanged in form (it parses, its
schema); the page passes report_escape_test's checker (only tsctl's tags,
attributes, classes and ids, balanced, the CSP, one script) with its
sections; its call counts are the JSON's; 30 histogram bars; a warm-up line
and a timed line; one operator bar per profiled operator (at most 40), the
slowest self time first; a sweep's page has one table row and one bar per
combination. The archives of testdata/escape/ (escape sequences and bytes
that are not UTF-8 in outputs, printed text, names) each give a page that
passes the same checker. Exits 77 when tsctl was built without LibTorch.

Usage: bench_report_test.py TSCTL   (run from the repository root)
"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report_escape_test as escape  # noqa: E402


def run(argv):
    return subprocess.run(argv, capture_output=True, timeout=600)


def main():
    tsctl = sys.argv[1]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        page = os.path.join(tmp, "bench.html")
        r = run([tsctl, "bench", "testdata/traced_cnn.pt", "--warmup", "5", "--iters", "60", "--profile", "--json",
                 "--report", page])
        if b"built without LibTorch" in r.stderr:
            print("tsctl was built without LibTorch: skipped")
            return 77
        if r.returncode != 0:
            print("FAIL: bench --report: exit %d: %s" % (r.returncode, r.stderr[:300]))
            return 1
        j = json.loads(r.stdout)
        html = open(page, "rb").read()
        problems, _, _ = escape.check_page(html, None, escape.BENCH_SECTIONS)
        text = html.decode()
        if "<th>calls</th><td>5 warm-up, 60 timed</td>" not in text:
            problems.append("the page's call counts are not the run's")
        n_ops = len(j["profile"]["ops"])
        if n_ops == 0:
            problems.append("the JSON report has no operators (--profile)")
        svgs = re.findall(r"<svg\b.*?</svg>", text, re.S)
        hist = [s for s in svgs if "Latency histogram" in s]
        if not hist or hist[0].count('<rect class="bar"') != 30:
            problems.append("the histogram does not have 30 bars")
        if text.count('<polyline class="l1"') != 1 or text.count('<polyline class="l0"') != 1:
            problems.append("no warm-up line and timed line")
        ops = [s for s in svgs if "Operator self time" in s]
        selfs = [float(v) for v in re.findall(r": ([0-9.]+) ms</title>", ops[0])] if ops else []
        if len(selfs) != min(40, n_ops) or selfs != sorted(selfs, reverse=True):
            problems.append("the operator bars are missing or not sorted by self time: %s" % selfs[:5])
        failures += ["bench --report: " + p for p in problems]

        page = os.path.join(tmp, "sweep.html")
        r = run([tsctl, "bench", "testdata/traced_cnn.pt", "--sweep", "--warmup", "2", "--iters", "5", "--json",
                 "--report", page])
        if r.returncode != 0:
            failures.append("bench --sweep --report: exit %d: %s" % (r.returncode, r.stderr[:300]))
        else:
            rows = json.loads(r.stdout)["rows"]
            html = open(page, "rb").read()
            problems, _, _ = escape.check_page(html, None, ["summary", "sweep"])
            text = html.decode()
            table = text[text.find('<section id="sweep"'):]
            if table.count('<tr class="f') != len(rows):
                problems.append("%d table rows for %d combinations" % (table.count('<tr class="f'), len(rows)))
            if table.count('<rect class="bar"') != sum(1 for x in rows if x["ok"]):
                problems.append("not one bar per combination that ran")
            failures += ["bench --sweep --report: " + p for p in problems]

        for archive in sorted(glob.glob("testdata/escape/*.pt")):
            page = os.path.join(tmp, "escape.html")
            r = run([tsctl, "bench", archive, "--warmup", "1", "--iters", "3", "--profile", "--report", page])
            if r.returncode != 0:
                failures.append("%s: exit %d: %s" % (archive, r.returncode, r.stderr[:300]))
                continue
            problems, _, _ = escape.check_page(open(page, "rb").read(), None, escape.BENCH_SECTIONS)
            failures += ["%s: %s" % (archive, p) for p in problems[:5]]
    for f in failures:
        print("FAIL:", f)
    print("bench_report: 2 pages and those of testdata/escape/*.pt, %d problems" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
