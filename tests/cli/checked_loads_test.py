#!/usr/bin/env python3
"""Every command that gives an archive to LibTorch checks it first (issue 51,
item 2; ../shared/hostile/38).

    checked_loads_test.py TSCTL REPO_ROOT

hook.pt's __setstate__ runs while LibTorch loads it and prints a marker
(MODEL-CODE-RAN-IN __setstate__); benign.pt is a plain model. Both are made
anew with hostile/38's make.py in a scratch folder. Every command of its
command.sh, and the other ways in (graph --inlined, report --graph always,
migrate), must refuse hook.pt before LibTorch sees it: exit 1 (validate's
findings), one line on stderr naming ts.hooks, and the marker never printed;
report without --graph always still writes its page, the graph left out with
a note; validate --reference-model hook.pt is not PASSED, the reference
refused by ts.hooks. --allow-load-hooks lets graph load it (the marker
appears); a structural failure (ts.storage) is refused even with it. Honest
archives (testdata/traced_cnn.pt, benign.pt) still go through every one of
these commands. Needs Debian's Python with torch (/usr/bin/python3); skipped
(77) without it or without ../shared/hostile.
"""
import os
import shutil
import subprocess
import sys
import tempfile

TORCH_PYTHON = "/usr/bin/python3"
MARKER = "MODEL-CODE-RAN-IN __setstate__"
failures = []


def check(cond, what):
    print(("ok    " if cond else "FAIL  ") + what)
    if not cond:
        failures.append(what)


def main():
    tsctl, root = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    folder = os.path.join(root, "..", "shared", "hostile", "38_load_hooks_run_outside_validate")
    if not os.path.isdir(folder):
        print("skipped: no ../shared/hostile/38_load_hooks_run_outside_validate")
        return 77
    if subprocess.run([TORCH_PYTHON, "-c", "import torch"], capture_output=True).returncode != 0:
        print("skipped: no torch in " + TORCH_PYTHON)
        return 77
    testdata = os.path.join(root, "testdata")
    cnn = os.path.join(testdata, "traced_cnn.pt")
    with tempfile.TemporaryDirectory(prefix="tsctl-checked-loads-") as d:
        shutil.copy(os.path.join(folder, "make.py"), d)
        subprocess.run([TORCH_PYTHON, "make.py"], cwd=d, check=True, capture_output=True, timeout=300)

        def run(*args, verbose=False):
            cmd = [tsctl] + (["-v"] if verbose else []) + list(args)
            return subprocess.run(cmd, cwd=d, capture_output=True, text=True, timeout=300)

        # Each refusing command: twice, plain (its one line) and with -v
        # (where a child's own output would show, the marker must not).
        refusing = [
            ("graph", ["graph", "hook.pt"]),
            ("graph", ["graph", "--frozen", "hook.pt"]),
            ("graph", ["graph", "--inlined", "hook.pt"]),
            ("code", ["code", "--compiled", "hook.pt"]),
            ("bench", ["bench", "--input", "1x4", "--iters", "1", "--warmup", "0", "hook.pt"]),
            ("trace", ["trace", "hook.pt", "--input", "1x4", "-o", "traced.pt"]),
            ("report", ["report", "hook.pt", "--graph", "always", "-o", "always.html"]),
            ("migrate", ["migrate", "hook.pt", "-o", "hook.pt2"]),
        ]
        for name, args in refusing:
            r = run(*args)
            lines = r.stderr.splitlines()
            check(r.returncode == 1, "%s: exit 1, validate's findings code (got %d)" % (" ".join(args), r.returncode))
            check(len(lines) == 1 and lines[0].startswith("tsctl: %s: hook.pt: " % name) and "ts.hooks" in lines[0]
                  and "__setstate__" in lines[0],
                  "%s: one line naming ts.hooks (%r)" % (" ".join(args), r.stderr[:300]))
            check(r.stdout == "", "%s: nothing on stdout (%r)" % (" ".join(args), r.stdout[:120]))
            v = run(*args, verbose=True)
            check(MARKER not in r.stderr + r.stdout + v.stderr + v.stdout, "%s: the hook never ran" % " ".join(args))
        for out in ("traced.pt", "always.html", "hook.pt2"):
            check(not os.path.exists(os.path.join(d, out)), "nothing written: %s" % out)

        # validate itself: the archive, and the archive as a reference model.
        r = run("-v", "validate", "--input", "1x4", "hook.pt")
        check(r.returncode == 1 and MARKER not in r.stdout + r.stderr, "validate hook.pt: exit 1, the hook never ran")
        r = run("-v", "validate", "--input", "1x4", "--reference-model", "hook.pt", "benign.pt")
        ref = [l for l in r.stdout.splitlines() if "torch.reference" in l]
        check(r.returncode == 1 and "PASSED" not in r.stdout, "validate --reference-model hook.pt: not PASSED, exit %d"
              % r.returncode)
        check(any(l.strip().startswith("FAIL") and "reference model hook.pt" in l and "ts.hooks" in l for l in ref),
              "validate --reference-model hook.pt: torch.reference FAIL naming ts.hooks (%r)" % ref)
        check(MARKER not in r.stdout + r.stderr, "validate --reference-model hook.pt: the hook never ran")

        # report (--graph auto): a page, the graph left out with a note.
        r = run("-v", "report", "hook.pt", "-o", "hook.html")
        page = open(os.path.join(d, "hook.html"), encoding="utf-8").read() if os.path.exists(os.path.join(d, "hook.html")) else ""
        check(r.returncode == 0 and "<html" in page, "report hook.pt: exit 0 and a page (exit %d, %r)" % (r.returncode, r.stderr[:200]))
        check("No graph: " in page and "ts.hooks" in page, "report hook.pt: the page notes why the graph is left out")
        check(MARKER not in r.stdout + r.stderr, "report hook.pt: the hook never ran")

        # The one opt-in: --allow-load-hooks loads it (and the hook runs).
        r = run("graph", "--allow-load-hooks", "hook.pt", verbose=True)
        check(r.returncode == 0 and r.stdout.startswith("graph("), "graph --allow-load-hooks hook.pt: exit 0, the graph")
        check(MARKER in r.stderr, "graph --allow-load-hooks hook.pt: LibTorch loaded it (the marker)")
        r = run("report", "--allow-load-hooks", "hook.pt", "-o", "allowed.html")
        allowed = os.path.join(d, "allowed.html")
        page = open(allowed, encoding="utf-8").read() if os.path.exists(allowed) else ""
        check(r.returncode == 0 and '<svg class="graph"' in page, "report --allow-load-hooks hook.pt: the graph is drawn")
        r = run("validate", "--input", "1x4", "--allow-load-hooks", "--reference-model", "hook.pt", "benign.pt")
        check(r.returncode == 0 and "PASS  torch.reference" in r.stdout,
              "validate --allow-load-hooks --reference-model hook.pt: the reference ran (exit %d)" % r.returncode)
        # ... and nothing else: a storage past its record stays refused.
        oob = os.path.join(testdata, "bad", "oob_storage_offset.pt")
        r = run("graph", "--allow-load-hooks", oob)
        check(r.returncode == 1 and r.stderr.count("\n") == 1 and "ts.storage" in r.stderr,
              "graph --allow-load-hooks oob_storage_offset.pt: refused by ts.storage (%r)" % r.stderr[:200])

        # Honest archives go through every one of these commands.
        honest = [
            ["graph", cnn], ["graph", "--frozen", cnn], ["graph", "--inlined", cnn], ["code", "--compiled", cnn],
            ["bench", "--input", "1x3x32x32", "--iters", "1", "--warmup", "0", cnn],
            ["bench", "--iters", "1", "--warmup", "0", "benign.pt"],  # inputs inferred in a child
            ["trace", cnn, "--input", "1x3x32x32", "-o", "cnn_traced.pt"],
            ["report", cnn, "--graph", "always", "-o", "cnn.html"],
            ["validate", "--input", "1x3x32x32", "--reference-model", cnn, cnn],
            ["validate", "--input", "1x4", "--reference-model", "benign.pt", "benign.pt"],
        ]
        for args in honest:
            r = run(*args)
            check(r.returncode == 0, "%s: exit 0 (got %d: %r)" % (" ".join(args), r.returncode, r.stderr[:200]))
        page = open(os.path.join(d, "cnn.html"), encoding="utf-8").read() if os.path.exists(os.path.join(d, "cnn.html")) else ""
        check('<svg class="graph"' in page, "report --graph always traced_cnn.pt: the graph is drawn")
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
