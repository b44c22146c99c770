#!/usr/bin/python3
"""tsctl report's pages in a real browser: ONE headless Chromium (Debian's
`chromium`), driven over the DevTools protocol (tests/cli/cdp.py), loads
every page in turn with the network cut off (every host resolves to nothing,
a proxy to a closed port, Chromium's own background traffic off).

For each page, loaded once with script off and once with it on: the DOM has
the sections by id, the SVG charts have nodes, the inline script ran (it
shows the search tools; without script they stay hidden), the page logged no
console message and threw nothing (console calls, exceptions, the browser's
log: CSP violations, failed loads), and it requested nothing but its own
file: URL (Network.requestWillBeSent; data: URLs aside). A screenshot is a PNG.

The pages: a few testdata archives; EVERY file of SHARED/corpus and
SHARED/corpus/pte (one that is no archive tsctl reads gives one line naming
it on stderr instead, exit 3 or 4, and no page); `report A B` of each pair
in DIFFS; validate --report, bench --report (skipped, and said so, when
tsctl was built without LibTorch) and migrate --report over
testdata/traced_cnn.pt and a .pt2 it refuses (skipped, and said so, where
tsctl cannot migrate: it says so in one line, exit 6, unless built against
LibTorch 2.x with the Python embedding). A control page that fetches a URL and
throws shows that requests and console errors are seen.

Usage: report_browser_test.py TSCTL SHARED_DIR [--screenshots DIR]
(run from the repository root). Exits 77 when chromium is not installed.
--screenshots writes DIR/report-torchscript.png, report-graph.png,
report-pte.png, report-diff.png, report-validate.png, report-bench.png and
report-migrate.png (docs/manual/images).
"""
import concurrent.futures
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cdp  # noqa: E402

SECTIONS = ["overview", "summary", "signature", "modules", "operators", "graph", "sizes", "code", "extra"]
# The page of `report A B`.
DIFF_SECTIONS = ["summary", "format", "records", "sizes", "modules", "parameters", "constants", "code", "operators",
                 "extra"]
# The pages of validate --report and bench --report.
RUN_SECTIONS = ["summary", "archives"]
BENCH_SECTIONS = ["summary", "latency", "operators"]
MIGRATE_SECTIONS = ["summary", "blockers", "archives", "a1"]  # migrate --report
DIFFS = [
    ("testdata/diff/base.pt", "testdata/diff/op_added.pt"),
    ("testdata/pt2/cnn.pt2", "testdata/pt2/cnn_weight.pt2"),
    # ExecuTorch programs of the project's own (a clone without ../shared has them).
    ("testdata/pte/linear_xnnpack.pte", "testdata/pte/linear_xnnpack_b.pte"),
]
ARCHIVES = ["testdata/traced_cnn.pt", "testdata/mobile.ptl", "testdata/pt2/cnn.pt2", "testdata/pt2/cnn_aoti_stub.pt2",
            "testdata/escape/op_names.pt2"]
PTE = "djl-executorch-engine__3022a8a3_stress_mlp.pte"
GRAPH_SHOT = "mobile_phone_human_matting__jit_model.pt"  # its graph section is report-graph.png
PAGE = object()  # where a Job's argv names its page


class Job:
    """One page to make: its name, tsctl's argv, the exits that give a page,
    the sections, and whether it may instead give one line (exit 3 or 4)."""

    def __init__(self, name, argv, page, sections, exits=(0,), may_refuse=False, shot=None, unavailable=None,
                 contains=()):
        self.name, self.argv, self.page, self.sections = name, argv, page, sections
        self.exits, self.may_refuse, self.shot, self.contains = exits, may_refuse, shot, contains
        self.unavailable = unavailable  # the exit of a tsctl that cannot run the command: skipped


def corpus_files(shared):
    """Every file of SHARED/corpus, its subfolders included (pte/,
    _not_torchscript/), but its READMEs."""
    out = []
    for root, _, names in os.walk(os.path.join(shared, "corpus")):
        out += [os.path.join(root, n) for n in names if not n.endswith(".md")]
    return sorted(out)


def jobs(tsctl, shared, tmp):
    """The pages to make, in the order they are checked."""
    out = []

    def add(name, argv, sections, **kw):
        page = os.path.join(tmp, "page%03d.html" % len(out))
        out.append(Job(name, [page if a is PAGE else a for a in argv], page, sections, **kw))

    pte = os.path.join(shared, "corpus", "pte", PTE)
    for a in ARCHIVES:
        add(a, [tsctl, "report", "-o", PAGE, a], SECTIONS,
            shot="report-torchscript.png" if a == "testdata/traced_cnn.pt" else None)
    # A TorchScript graph from the LibTorch child (LibTorch builds only):
    # forward's nodes folded by module, conv's five nodes one box.
    add("--graph always testdata/traced_cnn.pt", [tsctl, "report", "--graph", "always", "-o", PAGE,
                                                  "testdata/traced_cnn.pt"], SECTIONS,
        contains=('<svg class="graph"', '>conv</text>', '>5 nodes</text>', '>aten::linear</text>'))
    for f in corpus_files(shared):
        shot = "report-pte.png" if f == pte else "report-graph.png" if os.path.basename(f) == GRAPH_SHOT else None
        add(f, [tsctl, "report", "-o", PAGE, f], SECTIONS, may_refuse=True, shot=shot)
    for i, (a, b) in enumerate(DIFFS):
        add(a + " " + b, [tsctl, "report", "-o", PAGE, a, b], DIFF_SECTIONS, shot="report-diff.png" if i == 0 else None)
    # The page of a whole run: validate --report (exit 1: an archive of testdata/bad fails).
    add("validate --report", [tsctl, "validate", "--no-load", "--report", PAGE, "testdata/traced_cnn.pt",
                              "testdata/pt2/cnn.pt2", "testdata/bad/crc_mismatch.pt"], RUN_SECTIONS,
        exits=(0, 1), shot="report-validate.png")
    # bench --report (LibTorch builds only).
    add("bench --report", [tsctl, "bench", "testdata/traced_cnn.pt", "--warmup", "3", "--iters", "20", "--profile",
                           "--report", PAGE], BENCH_SECTIONS, shot="report-bench.png")
    # migrate --report (LibTorch 2.x with Python only; exit 1: the .pt2 is refused, a model blocked).
    os.makedirs(os.path.join(tmp, "migrated"))
    add("migrate --report", [tsctl, "migrate", "testdata/traced_cnn.pt", "testdata/pt2/cnn.pt2", "--out-dir",
                             os.path.join(tmp, "migrated"), "--report", PAGE], MIGRATE_SECTIONS + ["a2"],
        exits=(1,), shot="report-migrate.png", unavailable=6)
    return out


def refusal_problems(job, r):
    """A file tsctl does not report on: one line naming it, and no page."""
    lines = r.stderr.decode("utf-8", "replace").split("\n")
    out = []
    if len(lines) != 2 or lines[1] != "":
        out.append("exit %d, stderr is not one line (ended by a newline): %r" % (r.returncode, r.stderr[:300]))
    elif not lines[0].startswith("tsctl: report: %s: " % job.name):
        out.append("exit %d, its line does not name the file: %s" % (r.returncode, lines[0][:300]))
    if os.path.exists(job.page):
        out.append("exit %d, yet a page was written" % r.returncode)
    return out


def control(tab, tmp):
    """A page without tsctl's CSP that fetches a URL and throws: the checks
    must see the request, the error and the missing sections."""
    path = os.path.join(tmp, "control.html")
    with open(path, "w") as f:
        f.write('<!DOCTYPE html><img src="http://example.invalid/x.png"><script>nosuch()</script>')
    c = tab.check(path, SECTIONS)
    seen = c.problems()
    if not c.requests or not any("nosuch" in l for l in c.console) or "no section id=summary" not in seen:
        return ["control page: requests %s, console %s, problems %s: the checks would not see a fault" %
                (c.requests, c.console, seen)]
    return []


def check_page(tab, job, shots, tmp, totals):
    """Loads the page without and with script; problems, one line each."""
    off = tab.check(job.page, job.sections, script=False)
    on = tab.check(job.page, job.sections, script=True)
    problems = ["without script: " + p for p in off.problems(script=False)] + on.problems(script=True)
    totals["loads"] += 2
    totals["load_s"] += off.seconds + on.seconds
    totals["requests"] += len(off.requests) + len(on.requests)
    totals["console"] += len(off.console) + len(on.console)
    if on.seconds > totals["slowest"][0]:
        totals["slowest"] = (on.seconds, job.name)
    if job.shot:
        if job.shot == "report-graph.png":
            tab.evaluate("document.getElementById('graph').scrollIntoView()")
        shot = os.path.join(shots or tmp, job.shot)
        tab.screenshot(shot)
        with open(shot, "rb") as f:
            if f.read(8) != b"\x89PNG\r\n\x1a\n":
                problems.append("no PNG screenshot")
    return problems, on


def main():
    tsctl, shared = sys.argv[1], sys.argv[2]
    shots = sys.argv[4] if len(sys.argv) > 4 and sys.argv[3] == "--screenshots" else None
    browser = cdp.find_chromium()
    if not browser:
        print("chromium is not installed (scripts/install_deps.sh installs it): skipped")
        return 77
    start = time.monotonic()
    failures = []
    totals = {"loads": 0, "load_s": 0.0, "requests": 0, "console": 0, "slowest": (0.0, "")}
    counts = {"pages": 0, "corpus": 0, "corpus pages": 0, "lines": 0, "skipped": 0}
    with tempfile.TemporaryDirectory() as tmp, cdp.Chromium(browser) as chrome:
        tab = cdp.Tab(chrome)
        failures += control(tab, tmp)
        todo = jobs(tsctl, shared, tmp)
        # tsctl makes the pages two at a time while Chromium checks them in order.
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            runs = [pool.submit(subprocess.run, j.argv, capture_output=True, timeout=300) for j in todo]
            for job, run in zip(todo, runs):
                r = run.result()
                counts["corpus"] += job.may_refuse
                if r.returncode != 0 and b"built without LibTorch" in r.stderr:
                    print("%s: skipped (tsctl was built without LibTorch)" % job.name)
                    counts["skipped"] += 1
                    continue
                if job.unavailable is not None and r.returncode == job.unavailable:
                    print("%s: skipped (%s)" % (job.name, r.stderr.decode("utf-8", "replace").strip()[:200]))
                    counts["skipped"] += 1
                    continue
                if job.may_refuse and r.returncode in (3, 4):
                    failures += ["%s: %s" % (job.name, p) for p in refusal_problems(job, r)]
                    counts["lines"] += 1
                    continue
                if r.returncode not in job.exits:
                    failures.append("%s: tsctl exit %d: %s" % (job.name, r.returncode, r.stderr[:300]))
                    continue
                with open(job.page, encoding="utf-8") as f:
                    html = f.read()
                failures += ["%s: the page lacks %r" % (job.name, c) for c in job.contains if c not in html]
                try:
                    problems, on = check_page(tab, job, shots, tmp, totals)
                except cdp.CdpError as e:
                    failures.append("%s: %s" % (job.name, e))
                    if chrome.proc.poll() is not None:
                        break
                    continue
                failures += ["%s: %s" % (job.name, p) for p in problems]
                counts["pages"] += 1
                counts["corpus pages"] += job.may_refuse
                if not job.may_refuse:
                    print("%s: %d bytes, %d SVG nodes, loaded in %.3f s" %
                          (job.name, os.path.getsize(job.page), on.svg_nodes, on.seconds))
                os.remove(job.page)
    for f in failures:
        print("FAIL:", f)
    print("corpus: %d files, %d pages, %d one-line refusals (exit 3 or 4)" %
          (counts["corpus"], counts["corpus pages"], counts["lines"]))
    print("report_browser: %d pages (%d skipped) in one %s, %d loads in %.1f s (slowest %.3f s: %s), "
          "%d requests, %d console messages, %.1f s in all, %d problems" %
          (counts["pages"], counts["skipped"], browser, totals["loads"], totals["load_s"], totals["slowest"][0],
           totals["slowest"][1], totals["requests"], totals["console"], time.monotonic() - start, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
