#!/usr/bin/python3
"""tsctl report on hostile strings: no element or attribute from an archive
reaches the page.

Runs `tsctl report` over testdata/escape/, every file of ../shared/hostile
and ../shared/corpus (ExecuTorch files included), and archives made here
whose module, attribute, class, operator, backend, record names, code,
extra/ contents and producer record hold markup (`<script>`, `<svg onload>`,
`"><img src=x onerror>`). Each file must give a page (exit 0, nothing on
stderr) or one precise line (`tsctl: report: FILE: ...`, exit 3 or 4).
In a build with LibTorch the made and hostile TorchScript archives' pages
draw their graph (module and operator names as labels, from a LibTorch
child); the corpus's are made with --graph never here (report_browser draws
them). Each page is parsed with Python's html.parser and must hold only the tags,
attributes, classes and ids the renderer writes, balanced, no comment, no
self-closing tag, one style and one script (the same on every page), no
src= and no href= but to its own sections, the CSP meta, and the sections'
ids; its bytes are valid UTF-8 without raw control characters. The crafted
archives' markup must show on their pages as text (escaped). The same for
`report A B` (the diff page): each crafted archive (the .pte too) against
the one it was made from, both ways, pairs of testdata/escape/, two corpus
.pte files, and every file above against testdata/traced_cnn.pt; a .pte
against a TorchScript archive gets diff's line. The page of validate --report
over all of them (--no-load) is checked the same way, and the page of
migrate --report over a zoo of files migrate refuses before converting (a
.pt2 copied under a name that is markup, testdata/escape's .pt2, a text file):
each is a model blocked, its name shown as text. Those refusals come before
torch, so every build makes that page; what the converter and torch say
(nodes, source lines, errors, outputs) reaches the page only in the LibTorch
2.x build with the Python embedding, where the crafted archives join the zoo
(elsewhere migrate refuses them in one line, exit 6, and they are left out);
report_migrate_test.cc feeds hostile strings to every field of the page.

Usage: report_escape_test.py TSCTL SHARED_DIR   (run from the repository root)
"""
import glob
import shutil
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from html.parser import HTMLParser

SECTIONS = ["overview", "summary", "signature", "modules", "operators", "graph", "sizes", "code", "extra"]
# The page of `report A B`.
DIFF_SECTIONS = ["summary", "format", "records", "sizes", "modules", "parameters", "constants", "code", "operators",
                 "extra"]
# The pages of whole runs (validate --report, bench --report): a summary, and
# one section per archive (id a1, a2, ...) inside "archives".
RUN_SECTIONS = ["summary", "archives"]
BENCH_SECTIONS = ["summary", "latency", "operators"]  # bench --report; "sweep" with --sweep
MIGRATE_SECTIONS = ["summary", "blockers", "archives"]  # migrate --report; a1, a2, ... inside "archives"
RUN_ID = re.compile(r"a[1-9][0-9]*$")
# The graph section's views (gv0, gv1, ...), which folded boxes link to.
VIEW_ID = re.compile(r"gv(0|[1-9][0-9]*)$")
IDS = (set(SECTIONS) | set(DIFF_SECTIONS) | set(RUN_SECTIONS) | set(BENCH_SECTIONS) | set(MIGRATE_SECTIONS) |
       {"sweep", "tools", "filter", "expand", "collapse"})
TAGS = {"html", "head", "meta", "title", "style", "body", "header", "h1", "nav", "a", "div", "input", "button",
        "main", "section", "h2", "h3", "p", "table", "thead", "tbody", "tr", "th", "td", "details", "summary", "ul",
        "li", "span", "code", "pre", "footer", "script", "svg", "g", "rect", "text", "polyline", "path", "polygon"}
VOID = {"meta", "input"}
ATTRS = {"lang", "charset", "http-equiv", "content", "name", "id", "class", "href", "hidden", "type", "placeholder",
         "aria-label", "open", "role", "viewbox", "width", "height", "x", "y", "text-anchor", "colspan", "points", "d", "rx"}
CLASSES = {"f", "kv", "n", "muted", "note", "warn", "mono", "t", "c", "tree", "chart", "bar", "leaf", "frame", "k", "s",
           "cm", "nu", "add", "del", "e", "d", "sbs", "ln", "hunk", "cols", "pass", "fail", "l0", "l1", "axis",
           "gw", "graph", "gn", "gi", "gd", "gf", "ge", "ga", "gc", "plain", "sw", "ov"} | {"g%d" % i for i in range(8)}
CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"


class Page(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.problems, self.stack, self.ids, self.text = [], [], set(), []
        self.scripts, self.styles, self.csp, self.doctypes = [], [], False, 0

    def handle_starttag(self, tag, attrs):
        if tag not in TAGS:
            self.problems.append("foreign element <%s>" % tag)
        for k, v in attrs:
            if k not in ATTRS:
                self.problems.append("foreign attribute %s= on <%s>" % (k, tag))
            elif k == "href" and not (v or "").startswith("#"):
                self.problems.append("href outside the page: %r" % v)
            elif k == "href" and v[1:] not in IDS and not RUN_ID.match(v[1:]) and not VIEW_ID.match(v[1:]):
                self.problems.append("href to no section: %r" % v)
            elif k == "class" and not set((v or "").split()) <= CLASSES:
                self.problems.append("foreign class %r on <%s>" % (v, tag))
            elif k == "id":
                if (v not in IDS and not RUN_ID.match(v) and not VIEW_ID.match(v)) or v in self.ids:
                    self.problems.append("foreign or repeated id %r" % v)
                self.ids.add(v)
        a = dict(attrs)
        if tag == "meta" and a.get("http-equiv") == "Content-Security-Policy":
            self.csp = a.get("content") == CSP
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.problems.append("self-closing <%s/>, which tsctl never writes" % tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.problems.append("</%s> closes <%s>" % (tag, self.stack[-1] if self.stack else "nothing"))
        else:
            self.stack.pop()

    def handle_data(self, data):
        if self.stack and self.stack[-1] == "script":
            self.scripts.append(data)
        elif self.stack and self.stack[-1] == "style":
            self.styles.append(data)
        else:
            self.text.append(data)

    def handle_comment(self, data):
        self.problems.append("comment <!--%s-->" % data[:40])

    def handle_decl(self, decl):
        self.doctypes += 1
        if decl != "DOCTYPE html":
            self.problems.append("declaration <!%s>" % decl[:40])

    def handle_pi(self, data):
        self.problems.append("processing instruction <?%s>" % data[:40])

    def unknown_decl(self, data):
        self.problems.append("unknown declaration %r" % data[:40])


def check_page(data, first_script, sections=SECTIONS):
    """The problems of one page (bytes) with `sections`, and its script."""
    try:
        html = data.decode("utf-8")
    except UnicodeDecodeError as e:
        return ["invalid UTF-8 at byte %d" % e.start], None, ""
    bad = [c for c in html if (ord(c) < 0x20 and c not in "\n\t") or 0x7F <= ord(c) < 0xA0]
    p = Page()
    p.feed(html)
    p.close()
    problems = p.problems + (["raw control character U+%04X" % ord(bad[0])] if bad else [])
    if p.stack:
        problems.append("unclosed elements: %s" % p.stack[-5:])
    if not p.csp:
        problems.append("no Content-Security-Policy meta with %r" % CSP)
    if p.doctypes != 1 or len(p.scripts) != 1 or len(p.styles) != 1:
        problems.append("%d doctypes, %d scripts, %d styles" % (p.doctypes, len(p.scripts), len(p.styles)))
    if first_script is not None and p.scripts and p.scripts[0] != first_script:
        problems.append("a script that is not tsctl's")
    missing = [s for s in sections if s not in p.ids]
    if missing:
        problems.append("sections missing: %s" % missing)
    return problems, (p.scripts[0] if p.scripts else None), "".join(p.text)


def replace(data, old, new):
    assert len(old) == len(new) and data.count(old) >= 1, (old, new)
    return data.replace(old, new)


def make_hostile(tmp):
    """Archives whose strings are markup, and the text each page must show."""
    made = []
    src = zipfile.ZipFile("testdata/traced_cnn.pt")
    path = os.path.join(tmp, "markup.pt")
    with zipfile.ZipFile(path, "w") as z:
        for info in src.infolist():
            data = src.read(info)
            if info.filename.endswith("/data.pkl"):
                data = replace(data, b"running_mean", b"<svg/onload>")
                data = replace(data, b"num_batches_tracked", b"<img src=x onerror>")
                data = data.replace(b"linear\nLinear\n", b"linear\n<script>alert(1)</script>\n")
            if info.filename.endswith("code/__torch__.py"):
                data += b"\n# </code></pre><script>alert(2)</script>\nx = \"\"\"<img src=x onerror=alert(3)>\"\"\"\n"
            z.writestr(info, data)
        root = "traced_cnn/"
        z.writestr(root + "extra/<svg onload=alert(4)>.txt", "</pre><script>alert(5)</script>\" onmouseover='x'")
        z.writestr(root + "extra/producer_info.json",
                   '{"user": "<script>alert(6)</script>", "ci": {"x\\"><b>": "<a href=http://x>y</a>"}}')
    made.append((path, ["<svg/onload>", "<img src=x onerror>", "<script>alert(1)</script>", "<script>alert(2)</script>",
                        "<svg onload=alert(4)>", "<script>alert(6)</script>", "<a href=http://x>y</a>"]))
    src = zipfile.ZipFile("testdata/pt2/cnn.pt2")
    path = os.path.join(tmp, "markup.pt2")
    with zipfile.ZipFile(path, "w") as z:
        for info in src.infolist():
            data = src.read(info)
            if info.filename.endswith("models/model.json"):
                data = data.replace(b"torch.ops.aten.linear.default", b"torch.ops.aten.<img src=x onerror=y>.default")
            z.writestr(info, data)
    made.append((path, ["<img src=x onerror=y>"]))
    pte = os.path.join(SHARED, "corpus", "pte", "djl-executorch-engine__3022a8a3_stress_mlp.pte")
    if os.path.exists(pte):
        path = os.path.join(tmp, "markup.pte")
        data = open(pte, "rb").read()
        data = replace(data, b"XnnpackBackend", b"<svg onload=x>")
        data = replace(data, b"aten::select_copy", b"<img src=x onerr>")
        open(path, "wb").write(data)
        made.append((path, ["<svg onload=x>", "<img src=x onerr>"]))
    return made


def check_diff_pages(tsctl, made, files, script):
    """`report A B` over the crafted archives against their originals (both
    ways), testdata/escape/ pairs, and every other file against
    testdata/traced_cnn.pt: a page (checked as above, the crafted markup shown
    as text) or one line. Returns (failures, pages, refused)."""
    expect = dict(made)
    pte = os.path.join(SHARED, "corpus", "pte", "djl-executorch-engine__3022a8a3_stress_mlp.pte")
    pairs = []
    for path, _ in made:
        original = {".pt": "testdata/traced_cnn.pt", ".pt2": "testdata/pt2/cnn.pt2", ".pte": pte}.get(
            os.path.splitext(path)[1])
        if original:
            pairs += [(path, original), (original, path)]
    # Two ExecuTorch programs of one model grown (delegates, named data).
    grown = os.path.join(SHARED, "corpus", "pte", "djl-executorch-engine__7777a90a_stress_mlp.pte")
    if os.path.exists(pte) and os.path.exists(grown):
        pairs.append((pte, grown))
    pairs += [("testdata/escape/debug_file_name.pt", "testdata/escape/string_constant.pt"),
              ("testdata/escape/prints.pt", "testdata/escape/returns_bytes.pt"),
              ("testdata/escape/op_names.pt2", "testdata/pt2/cnn.pt2"), ("testdata/mobile.ptl", "testdata/escape/op_names.ptl")]
    pairs += [(f, "testdata/traced_cnn.pt") for f in files]
    failures, pages, refused = [], 0, 0
    for a, b in pairs:
        r = subprocess.run([tsctl, "report", a, b], capture_output=True, timeout=300)
        err = r.stderr.decode("utf-8", "replace")
        if r.returncode != 0:
            if r.returncode in (3, 4) and err.count("\n") == 1 and err.startswith("tsctl: report: ") and not r.stdout:
                refused += 1
            else:
                failures.append("%s %s: exit %d, stderr %r" % (a, b, r.returncode, err[:300]))
            continue
        problems, _, text = check_page(r.stdout, script, DIFF_SECTIONS)
        if err:
            problems.append("exit 0 with stderr %r" % err[:200])
        crafted = a if a in expect else b if b in expect else None
        # Code outside a class or function is not compared by diff (alert(2)).
        for want in [w for w in expect.get(crafted, []) if w != "<script>alert(2)</script>"]:
            if want not in text:
                problems.append("the archive's %r is not shown as text" % want)
        failures += ["%s %s: %s" % (a, b, p) for p in problems[:5]]
        pages += 1
    # An ExecuTorch file with a TorchScript archive: diff's line, the reader's
    # about the file that is no ExecuTorch file.
    if os.path.exists(pte):
        for a, b in (("testdata/traced_cnn.pt", pte), (pte, "testdata/traced_cnn.pt")):
            r = subprocess.run([tsctl, "report", a, b], capture_output=True, timeout=60)
            d = subprocess.run([tsctl, "diff", a, b], capture_output=True, timeout=60)
            want = "tsctl: report: testdata/traced_cnn.pt: not an ExecuTorch program"
            if (r.returncode != 4 or not r.stderr.decode().startswith(want) or r.stdout or
                    r.stderr.replace(b"tsctl: report: ", b"tsctl: diff: ", 1) != d.stderr):
                failures.append("report %s %s: exit %d, stderr %r" % (a, b, r.returncode, r.stderr[:200]))
    return failures, pages, refused


def check_validate_page(tsctl, tmp, made, files, script):
    """validate --no-load --report over the crafted archives (one copied
    under a name that is markup), testdata/escape/ and the other files: one
    page for the run, checked as above, with the names shown as text; the
    text report on stdout is the one without --report."""
    named = os.path.join(tmp, "<img src=x onerror=alert(7)>.pt")
    shutil.copy(made[0][0], named)
    page = os.path.join(tmp, "validate.html")
    argv = [tsctl, "validate", "--no-load", "-j", "2"]
    paths = [named] + [m[0] for m in made] + files
    r = subprocess.run(argv + ["--report", page] + paths, capture_output=True, timeout=600)
    plain = subprocess.run(argv + paths, capture_output=True, timeout=600)
    if r.returncode not in (0, 1) or not os.path.exists(page):
        return ["validate --report: exit %d, stderr %r" % (r.returncode, r.stderr[:300])]
    problems, _, text = check_page(open(page, "rb").read(), script, RUN_SECTIONS)
    if "<img src=x onerror=alert(7)>.pt" not in text:
        problems.append("the archive's name is not shown as text")
    if (r.stdout, r.returncode) != (plain.stdout, plain.returncode):
        problems.append("--report changed the report on stdout or the exit status")
    return ["validate --report: %s" % p for p in problems[:10]]


def can_migrate(tsctl):
    """Whether this tsctl converts (LibTorch 2.x with the Python embedding)."""
    version = subprocess.run([tsctl, "--version"], capture_output=True, text=True).stdout
    return re.search(r"^libtorch 2\.", version, re.M) is not None and "embedding built in" in version


def check_migrate_page(tsctl, tmp, made, script):
    """migrate --report over a zoo migrate refuses before torch (and, where it
    converts, the crafted archives): one page, checked as above, every model
    in a section of its own, the names shown as text; stdout and the exit
    status are those without --report."""
    zoo = os.path.join(tmp, "migrate_zoo")
    os.mkdir(zoo)
    named = [os.path.join(zoo, "<img src=x onerror=alert(7)>.pt"), os.path.join(zoo, "<svg onload=alert(8)>.pt")]
    shutil.copy("testdata/pt2/cnn.pt2", named[0])
    shutil.copy("README.md", named[1])
    paths = named + sorted(glob.glob("testdata/escape/*.pt2"))
    if can_migrate(tsctl):
        paths += [m[0] for m in made if not m[0].endswith(".pte")]
    page = os.path.join(tmp, "migrate.html")
    argv = [tsctl, "migrate", "--out-dir", os.path.join(tmp, "migrated")] + paths
    r = subprocess.run(argv + ["--report", page], capture_output=True, timeout=600)
    plain = subprocess.run(argv, capture_output=True, timeout=600)
    if r.returncode != 1 or not os.path.exists(page):
        return ["migrate --report: exit %d, stderr %r" % (r.returncode, r.stderr[:300])]
    problems, _, text = check_page(open(page, "rb").read(), script, MIGRATE_SECTIONS)
    for want in ("<img src=x onerror=alert(7)>.pt", "<svg onload=alert(8)>.pt"):
        if want not in text:
            problems.append("the archive's name %r is not shown as text" % want)
    sections = len(re.findall(rb'<section id="a[1-9][0-9]*"', open(page, "rb").read()))
    if sections != len(paths):
        problems.append("%d model sections for %d archives" % (sections, len(paths)))
    if (r.stdout, r.returncode) != (plain.stdout, plain.returncode):
        problems.append("--report changed the report on stdout or the exit status")
    return ["migrate --report: %s" % p for p in problems[:10]]


def main():
    global SHARED
    tsctl, SHARED = sys.argv[1], sys.argv[2]
    files = sorted(f for f in glob.glob("testdata/escape/*") if not f.endswith(".md"))
    for folder in ("hostile", "corpus"):
        files += sorted(f for f in glob.glob(os.path.join(SHARED, folder, "**", "*"), recursive=True)
                        if os.path.isfile(f) and not f.endswith(".md"))
    failures, pages, refused, script = [], 0, 0, None
    with tempfile.TemporaryDirectory() as tmp:
        made = make_hostile(tmp)
        expect = dict(made)
        corpus = os.path.join(SHARED, "corpus")
        for f in [m[0] for m in made] + files:
            # A TorchScript graph comes from a LibTorch child (names of
            # modules and operators as labels): drawn for the made and hostile
            # archives; the corpus's real pages are drawn in report_browser.
            graph = ["--graph", "never"] if f.startswith(corpus) else []
            r = subprocess.run([tsctl, "report"] + graph + [f], capture_output=True, timeout=300)
            err = r.stderr.decode("utf-8", "replace")
            if r.returncode != 0:
                if r.returncode in (3, 4) and err.count("\n") == 1 and err.startswith("tsctl: report: ") and not r.stdout:
                    refused += 1
                else:
                    failures.append("%s: exit %d, stderr %r" % (f, r.returncode, err[:300]))
                continue
            if err or not r.stdout:
                failures.append("%s: exit 0 with stderr %r and %d bytes of page" % (f, err[:200], len(r.stdout)))
                continue
            problems, s, text = check_page(r.stdout, script)
            script = script or s
            for want in expect.get(f, []):
                if want not in text:
                    problems.append("the archive's %r is not shown as text" % want)
            failures += ["%s: %s" % (f, p) for p in problems[:5]]
            pages += 1
        # -o writes the same page as standard output, atomically.
        out = os.path.join(tmp, "page.html")
        r = subprocess.run([tsctl, "report", "-o", out, "testdata/traced_cnn.pt"], capture_output=True, timeout=60)
        same = subprocess.run([tsctl, "report", "testdata/traced_cnn.pt"], capture_output=True, timeout=60).stdout
        if r.returncode != 0 or r.stdout or open(out, "rb").read() != same:
            failures.append("report -o: exit %d, or a page other than standard output's" % r.returncode)
        diff_failures, diff_pages, diff_refused = check_diff_pages(tsctl, made, files, script)
        failures += diff_failures
        failures += check_validate_page(tsctl, tmp, made, files, script)
        failures += check_migrate_page(tsctl, tmp, made, script)
    for f in failures:
        print("FAIL:", f)
    print("report_escape: %d pages checked, %d files refused in one line; report A B: %d pages, %d pairs refused; "
          "%d problems (foreign elements, attributes, URLs, unescaped markup)" %
          (pages, refused, diff_pages, diff_refused, len(failures)))
    return 1 if failures or pages == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
