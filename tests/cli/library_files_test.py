#!/usr/bin/env python3
"""Landlock names library files, not their folders (../shared/hostile/41, made anew).

    library_files_test.py TSCTL REPO_ROOT OPS_LIBRARY AFFINE_TS

ws/ stands for a CI checkout: ws/.git/config holds a fake token, ws/libops.so
is an operator library built there, ws/leak.pt's __setstate__ reads
.git/config and raises an error with its text. A LibTorch child may read the
library it was given (that file), never the folder it is in: with
`--load-library ./libops.so` the read is refused as it is without, and
"FAKE-TOKEN" appears in no output of graph, bench or validate (their load hooks allowed, so the read is tried) (with -v too,
which shows LibTorch's full messages and the child's output). An honest
operator library copied into the same folder (tsctl_test_ops, from
tests/custom_op) still loads and runs. Needs Debian's Python with torch and
gcc; skipped (77) without them or without ../shared/hostile/41.
"""
import os
import shutil
import subprocess
import sys
import tempfile

TORCH_PYTHON = "/usr/bin/python3"
FOLDER = "41_load_library_folder_readable"
failures = []


def check(cond, what):
    print(("ok    " if cond else "FAIL  ") + what)
    if not cond:
        failures.append(what)


def run(tsctl, cwd, *args):
    r = subprocess.run([tsctl, *args], cwd=cwd, capture_output=True, timeout=300, stdin=subprocess.DEVNULL)
    return r.returncode, (r.stdout + r.stderr).decode("utf-8", "replace")


def main():
    tsctl, root, ops, affine = os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
    hostile = os.path.join(root, "..", "shared", "hostile", FOLDER)
    if not os.path.isdir(hostile) or not os.path.exists(TORCH_PYTHON) or not shutil.which("gcc"):
        print("skipped: needs ../shared/hostile/%s, Debian's Python with torch and gcc" % FOLDER)
        return 77
    scratch = tempfile.mkdtemp(prefix="tsctl-library-files-")
    try:
        d = os.path.join(scratch, FOLDER)
        shutil.copytree(hostile, d)
        for name in os.listdir(d):
            os.chmod(os.path.join(d, name), 0o644)
        os.chmod(d, 0o755)
        subprocess.run([TORCH_PYTHON, "make.py"], cwd=d, check=True, capture_output=True, timeout=300)
        ws = os.path.join(d, "ws")
        check("FAKE-TOKEN" in open(os.path.join(ws, ".git", "config")).read(), "the fake token is in ws/.git/config")

        rc, out = run(tsctl, ws, "graph", "leak.pt")
        check("FAKE-TOKEN" not in out and "LEAKED" not in out, "graph leak.pt: the read refused (%s)" % out[:200])
        runs = [
            ("graph", "--allow-load-hooks", "--load-library", "./libops.so", "leak.pt"),
            ("-v", "graph", "--allow-load-hooks", "--load-library", "./libops.so", "leak.pt"),
            ("bench", "--allow-load-hooks", "--load-library", "./libops.so", "--input", "1x4", "--iters", "1", "--warmup", "0", "leak.pt"),
            ("-v", "validate", "--allow-load-hooks", "--load-library", "./libops.so", "--input", "1x4", "leak.pt"),
            ("validate", "--allow-load-hooks", "--load-library", os.path.join(ws, "libops.so"), "--input", "1x4",
             "leak.pt"),
        ]
        for args in runs:
            rc, out = run(tsctl, ws, *args)
            what = " ".join(args)
            check("FAKE-TOKEN" not in out and "LEAKED[" not in out, "%s: no token in the output" % what)
            check(rc != 0, "%s: fails, exit %d" % (what, rc))
            check("ermission denied" in out or "Operation not permitted" in out or "unable to open" in out,
                  "%s: the read is refused (%s)" % (what, out.strip().splitlines()[-1:] if out.strip() else ""))

        # An honest operator library in the same folder still loads and runs.
        shutil.copy(ops, os.path.join(ws, "libtestops.so"))
        rc, out = run(tsctl, ws, "script", "--load-library", "./libtestops.so", affine, "-o", "affine.pt",
                      "--input", "2x3")
        check(rc == 0, "script --load-library ./libtestops.so: exit 0 (%s)" % out[-300:])
        rc, out = run(tsctl, ws, "validate", "--load-library", "./libtestops.so", "--input", "2x3", "affine.pt")
        check(rc == 0 and "result: PASSED" in out, "validate --load-library ./libtestops.so: PASSED (%s)" % out[-300:])
        rc, out = run(tsctl, ws, "bench", "--load-library", "./libtestops.so", "--input", "2x3", "--iters", "2",
                      "--warmup", "0", "affine.pt")
        check(rc == 0, "bench --load-library ./libtestops.so: exit 0 (%s)" % out[-300:])
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print("%d failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
