#!/usr/bin/python3
"""tsctl report's pages in a real browser: headless Chromium (Debian's
`chromium`) loads each page with the network cut off (every host resolves
to nothing, a proxy to a closed port, Chromium's own background traffic
off) and a NetLog recording every request.

For each page: the DOM has the sections by id, the SVG charts have nodes,
the inline script ran (it shows the search tools), Chromium logged no
console message (no error, no CSP violation), and the page made no request
(NetLog's URL requests from the page, whose initiator is the file's origin;
Chromium's own show "not an origin"). With scripts disabled the sections are
there and the tools stay hidden (the page less its script). A screenshot is a PNG.
The pages of `report A B` (DIFFS) and of validate --report and bench --report are checked the same way, by their sections. A control page that
fetches a URL and throws shows that requests and console errors are seen.

Usage: report_browser_test.py TSCTL SHARED_DIR [--screenshots DIR]
(run from the repository root). Exits 77 when chromium is not installed.
--screenshots writes DIR/report-torchscript.png, DIR/report-pte.png and
DIR/report-diff.png (docs/manual/images) from testdata/traced_cnn.pt, a
corpus .pte and testdata/diff/base.pt against op_added.pt.
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

SECTIONS = ["summary", "signature", "modules", "operators", "sizes", "code", "extra"]
# The page of `report A B`.
DIFF_SECTIONS = ["summary", "format", "records", "sizes", "modules", "parameters", "constants", "code", "operators",
                 "extra"]
# The pages of validate --report and bench --report.
RUN_SECTIONS = ["summary", "archives"]
BENCH_SECTIONS = ["summary", "latency", "operators"]
DIFFS = [("testdata/diff/base.pt", "testdata/diff/op_added.pt"), ("testdata/pt2/cnn.pt2", "testdata/pt2/cnn_weight.pt2")]
OFFLINE = ["--headless=new", "--no-sandbox", "--disable-gpu", "--host-resolver-rules=MAP * ~NOTFOUND",
           "--proxy-server=http://127.0.0.1:9", "--disable-background-networking", "--disable-component-update",
           "--disable-sync", "--disable-extensions", "--disable-default-apps", "--no-first-run",
           "--enable-logging=stderr", "--v=0"]
PTE = "djl-executorch-engine__3022a8a3_stress_mlp.pte"


def chromium(browser, tmp, page, *extra):
    """Runs Chromium on `page`: (stdout, console lines, page requests, seconds)."""
    profile = tempfile.mkdtemp(dir=tmp)
    netlog = os.path.join(tmp, "net.json")
    start = time.monotonic()
    r = subprocess.run([browser, *OFFLINE, "--user-data-dir=" + profile, "--log-net-log=" + netlog, *extra,
                        "file://" + os.path.abspath(page)], capture_output=True, timeout=120)
    seconds = time.monotonic() - start
    console = [l for l in r.stderr.decode("utf-8", "replace").splitlines() if "CONSOLE" in l or "Uncaught" in l]
    return r.stdout.decode("utf-8", "replace"), console, page_requests(netlog), seconds


def page_requests(netlog):
    """URLs the page requested (not Chromium's own traffic, not file: or data:)."""
    text = open(netlog).read().rstrip()
    if not text.endswith("}"):  # a log cut short at exit lacks its end
        text = text.rstrip(",") + "]}"
    log = json.loads(text)
    types = {v: k for k, v in log["constants"]["logEventTypes"].items()}
    urls = set()
    for e in log["events"]:
        p = e.get("params") or {}
        if types.get(e["type"]) == "URL_REQUEST_START_JOB" and p.get("initiator") not in (None, "not an origin"):
            if not re.match(r"(file|data):", p.get("url", "")):
                urls.add(p["url"])
    return sorted(urls)


def main():
    tsctl, shared = sys.argv[1], sys.argv[2]
    shots = sys.argv[4] if len(sys.argv) > 4 and sys.argv[3] == "--screenshots" else None
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if not browser:
        print("chromium is not installed (scripts/install_deps.sh installs it): skipped")
        return 77
    failures = []
    archives = ["testdata/traced_cnn.pt", "testdata/mobile.ptl", "testdata/pt2/cnn.pt2", "testdata/pt2/cnn_aoti_stub.pt2",
                "testdata/escape/op_names.pt2"]
    corpus = os.path.join(shared, "corpus")
    pte = os.path.join(corpus, "pte", PTE)
    archives += [f for f in [pte] + sorted(glob.glob(os.path.join(corpus, "pte", "*.ptd")))[:1] +
                 sorted(glob.glob(os.path.join(corpus, "pte", "*.bpte")))[:1] if os.path.exists(f)]
    if os.path.isdir(corpus):
        biggest = max((f for f in glob.glob(os.path.join(corpus, "*")) if os.path.isfile(f) and not f.endswith(".md")),
                      key=os.path.getsize)
        archives.append(biggest)
    with tempfile.TemporaryDirectory() as tmp:
        # The control: a page without tsctl's CSP that fetches and throws.
        control = os.path.join(tmp, "control.html")
        open(control, "w").write('<!DOCTYPE html><img src="http://example.invalid/x.png"><script>nosuch()</script>')
        _, console, requests, _ = chromium(browser, tmp, control, "--dump-dom")
        if not requests or not any("Uncaught" in l for l in console):
            failures.append("control page: requests %s, console %s: the checks would not see a fault" %
                            (requests, console))
        page = os.path.join(tmp, "page.html")
        runs = [(" ".join(f), [tsctl, "report", "-o", page, *f], SECTIONS if len(f) == 1 else DIFF_SECTIONS, (0,))
                for f in [(a,) for a in archives] + DIFFS]
        # The pages of whole runs: validate --report (exit 1: an archive of testdata/bad fails).
        runs.append(("validate --report", [tsctl, "validate", "--no-load", "--report", page, "testdata/traced_cnn.pt",
                                           "testdata/pt2/cnn.pt2", "testdata/bad/crc_mismatch.pt"], RUN_SECTIONS, (0, 1)))
        # bench --report (LibTorch builds only; skipped in a build without it).
        runs.append(("bench --report", [tsctl, "bench", "testdata/traced_cnn.pt", "--warmup", "3", "--iters", "20",
                                        "--profile", "--report", page], BENCH_SECTIONS, (0,)))
        for archive, argv, sections, exits in runs:
            r = subprocess.run(argv, capture_output=True, timeout=300)
            if r.returncode != 0 and b"built without LibTorch" in r.stderr:
                print("%s: skipped (tsctl was built without LibTorch)" % archive)
                continue
            if r.returncode not in exits:
                failures.append("%s: tsctl exit %d: %s" % (archive, r.returncode, r.stderr[:300]))
                continue
            dom, console, requests, seconds = chromium(browser, tmp, page, "--dump-dom")
            problems = ["no section id=%s" % s for s in sections if 'id="%s"' % s not in dom]
            svg_nodes = len(re.findall(r"<(?:rect|text)\b", "".join(re.findall(r"<svg\b.*?</svg>", dom, re.S))))
            if svg_nodes == 0:
                problems.append("the SVG charts have no nodes")
            if '<div id="tools">' not in dom:
                problems.append("the inline script did not run (the tools are still hidden)")
            problems += ["console: " + l[:200] for l in console] + ["request: " + u for u in requests]
            # Without script: the page less its <script> (Chromium's --dump-dom
            # itself needs script, so scriptEnabled=false would show nothing).
            noscript = os.path.join(tmp, "noscript.html")
            html = open(page, encoding="utf-8").read()
            open(noscript, "w", encoding="utf-8").write(re.sub(r"<script>.*?</script>", "", html, flags=re.S))
            dom_off, console_off, requests_off, _ = chromium(browser, tmp, noscript, "--dump-dom")
            if any('id="%s"' % s not in dom_off for s in sections) or '<div id="tools" hidden' not in dom_off:
                problems.append("without script: sections missing or the tools shown")
            problems += ["without script: " + l[:200] for l in console_off + requests_off]
            failures += ["%s: %s" % (archive, p) for p in problems]
            print("%s: %d bytes, %d SVG nodes, opened in %.2f s, %d console messages, %d requests" %
                  (archive, os.path.getsize(page), svg_nodes, seconds, len(console), len(requests)))
            name = {"testdata/traced_cnn.pt": "report-torchscript.png", pte: "report-pte.png",
                    " ".join(DIFFS[0]): "report-diff.png"}.get(archive)
            if name:
                shot = os.path.join(shots or tmp, name)
                chromium(browser, tmp, page, "--screenshot=" + shot, "--window-size=1200,2000", "--hide-scrollbars")
                if not os.path.exists(shot) or open(shot, "rb").read(8) != b"\x89PNG\r\n\x1a\n":
                    failures.append("%s: no PNG screenshot" % archive)
    for f in failures:
        print("FAIL:", f)
    print("report_browser: %d pages in %s, %d problems" % (len(runs), browser, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
