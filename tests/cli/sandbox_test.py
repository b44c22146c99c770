#!/usr/bin/env python3
"""What a model does while the gate runs it (../shared/hostile/24-36).

    sandbox_test.py TSCTL REPO_ROOT

Each folder's archives are made anew with its make.py in a scratch folder of
this test (they embed the folder they were made in, and write their proof
files there), then validated. Every one must FAIL or be refused, and nothing
may be written outside tsctl's own outputs: the test looks in the scratch
folder and /dev/shm. Where the static checks would refuse an archive before
LibTorch sees it, it is run again past them (--allow-load-hooks), so that
what LibTorch resolved (torch.unsafe) and the sandbox (torch.sandbox) are
tested too. Needs Debian's Python with torch (/usr/bin/python3); skipped (77)
without it or without ../shared/hostile.
"""
import glob
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile

TORCH_PYTHON = "/usr/bin/python3"
failures = []


def check(cond, what):
    print(("ok    " if cond else "FAIL  ") + what)
    if not cond:
        failures.append(what)


def writable(top):
    """shared/ is laid without write bits: the copies get them back."""
    for d, _, files in os.walk(top):
        os.chmod(d, 0o755)
        for f in files:
            os.chmod(os.path.join(d, f), 0o644)


def make(folder, scratch, *args):
    """Copies hostile/FOLDER and common_attack into scratch, runs its make.py."""
    dst = os.path.join(scratch, os.path.basename(folder))
    shutil.copytree(folder, dst)
    common = os.path.join(os.path.dirname(folder), "common_attack")
    if not os.path.exists(os.path.join(scratch, "common_attack")):
        shutil.copytree(common, os.path.join(scratch, "common_attack"))
    writable(scratch)
    subprocess.run([TORCH_PYTHON, "make.py", *args], cwd=dst, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, timeout=300)
    return dst


def validate(tsctl, cwd, *args):
    r = subprocess.run([tsctl, "validate", "-j1", *args], cwd=cwd, capture_output=True, text=True, timeout=300)
    return r.returncode, r.stdout + r.stderr


def line_of(out, check_id):
    for line in out.splitlines():
        if line.split()[1:2] == [check_id]:
            return line.strip()
    return ""


def failed(out, check_id):
    return line_of(out, check_id).startswith("FAIL")


def pwned(folder):
    return sorted(glob.glob(os.path.join(folder, "PWNED*")))


def main():
    tsctl, root = os.path.abspath(sys.argv[1]), sys.argv[2]
    hostile = os.path.join(root, "..", "shared", "hostile")
    if not os.path.isdir(hostile) or not os.path.exists(TORCH_PYTHON):
        print("skipped: needs ../shared/hostile and Debian's Python with torch")
        return 77
    support = subprocess.run([tsctl, "--version"], capture_output=True, text=True).stdout
    sandbox = [l for l in support.splitlines() if l.startswith("sandbox ")]
    print(sandbox[0] if sandbox else "no sandbox line in --version")
    seccomp = "seccomp" in support and "no seccomp" not in support
    scratch = tempfile.mkdtemp(prefix="tsctl-hostile-")
    try:
        # 24: operator spellings the text scan missed; 25: load-time hooks.
        d = make(os.path.join(hostile, "24_ops_scan_spellings"), scratch)
        for name in ("autograd_alias.pt", "space_paren.pt", "fork_callee.pt"):
            rc, out = validate(tsctl, d, name)
            check(rc == 1 and failed(out, "ts.hooks"), "24 %s: ts.hooks FAIL (%s)" % (name, line_of(out, "ts.hooks")))
            rc, out = validate(tsctl, d, "--allow-load-hooks", name)
            check(rc == 1 and failed(out, "torch.unsafe"),
                  "24 %s past the scan: torch.unsafe FAIL from the loaded graph (%s)" % (name, line_of(out, "torch.unsafe")))
        check(not pwned(d), "24: nothing written (%s)" % pwned(d))

        d = make(os.path.join(hostile, "25_setstate_spellings"), scratch)
        rc, out = validate(tsctl, d, "two_spaces.pt")
        check(rc == 1 and failed(out, "ts.hooks"), "25 two_spaces.pt: ts.hooks FAIL")
        rc, out = validate(tsctl, d, "torch_namespace.pt")
        check(rc == 1 and failed(out, "ts.hooks"), "25 torch_namespace.pt: ts.hooks FAIL (the hook's operators)")
        for name, extra in (("two_spaces.pt", ["--allow-load-hooks"]), ("torch_namespace.pt", ["--allow-load-hooks"])):
            rc, out = validate(tsctl, d, *extra, name)
            if seccomp:
                check(rc == 1 and failed(out, "torch.sandbox") and "for writing" in line_of(out, "torch.sandbox"),
                      "25 %s: the hook's write at load stopped (%s)" % (name, line_of(out, "torch.sandbox")))
            else:
                check(rc == 1, "25 %s: FAIL without seccomp" % name)
        check(not pwned(d), "25: nothing written at load (%s)" % pwned(d))

        # 26: a scan cut short by its budget is a FAIL.
        d = make(os.path.join(hostile, "26_scan_budget"), scratch)
        rc, out = validate(tsctl, d, "--strict", "--input", "4", "unscanned.pt")
        check(rc == 1 and "not scanned" in line_of(out, "ts.hooks") and failed(out, "ts.hooks"),
              "26: ts.hooks FAIL, scan cut short (%s)" % line_of(out, "ts.hooks")[:120])
        rc, out = validate(tsctl, d, "--allow-load-hooks", "--input", "4", "unscanned.pt")
        check(rc == 1 and failed(out, "torch.unsafe"), "26 past the scan: torch.unsafe FAIL")
        check(not pwned(d), "26: nothing written")

        # 27: segment_reduce(unsafe=True) reads the child's heap into the outputs.
        d = os.path.join(scratch, "27")
        shutil.copytree(os.path.join(hostile, "27_unsafe_op_heap_leak"), d)
        writable(d)
        subprocess.run([TORCH_PYTHON, "make_const.py", "4096"], cwd=d, check=True, capture_output=True, timeout=300)
        rc, out = validate(tsctl, d, "leak_const.pt", "--save-outputs", "outc.pt")
        check(rc == 1 and failed(out, "torch.unsafe") and "segment_reduce" in line_of(out, "torch.unsafe"),
              "27: torch.unsafe FAIL on segment_reduce (%s)" % line_of(out, "torch.unsafe"))
        check(not os.path.exists(os.path.join(d, "outc.pt")), "27: no outputs with the heap's bytes written")

        # 28: aten::save drops a .pth into a site folder.
        d = make(os.path.join(hostile, "28_file_write_to_exec"), scratch, "sp")
        os.makedirs(os.path.join(d, "sp"), exist_ok=True)
        for extra in ([], ["--allow-load-hooks"]):
            rc, out = validate(tsctl, d, "--strict", "--input", "1x8", *extra, "drop_pth.pt")
            check(rc == 1, "28 %s: FAIL" % " ".join(extra))
        check(not os.path.exists(os.path.join(d, "sp", "zz_tsctl_demo.pth")), "28: no .pth written")

        # 30: code/ shows one model, bytecode.pkl (what the lite interpreter
        # runs) another.
        d = make(os.path.join(hostile, "30_ptl_bytecode_swap"), scratch)
        rc, out = validate(tsctl, d, "--strict", "--reference", "ref.pt", "--allow-ops", "allow.txt", "swapped.ptl")
        check(rc == 1 and failed(out, "ts.bytecode") and "aten::eq.Scalar" in line_of(out, "ts.bytecode"),
              "30 swapped.ptl: ts.bytecode FAIL naming what only the bytecode calls (%s)" % line_of(out, "ts.bytecode")[:160])
        rc, out = validate(tsctl, d, "benign.ptl")
        check(line_of(out, "ts.bytecode").startswith("PASS"), "30 benign.ptl: ts.bytecode PASS (%s)" % line_of(out, "ts.bytecode"))

        # 31: a model that reads /proc/self/exe to see who runs it.
        d = make(os.path.join(hostile, "31_model_sees_the_gate"), scratch, tsctl)
        rc, out = validate(tsctl, d, "--allow-load-hooks", "--strict", "--reference", "ref.pt", "cloaked.pt")
        check(rc == 1 and "result: PASSED" not in out, "31: not PASSED (%s)" % line_of(out, "torch.unsafe"))

        # 32: one archive rewrites the reference the next is compared with.
        d = make(os.path.join(hostile, "32_archive_rewrites_reference"), scratch)
        golden = os.path.join(d, "golden.pt")
        before = hashlib.sha256(open(golden, "rb").read()).hexdigest()
        rc, out = validate(tsctl, d, "--allow-load-hooks", "--input", "1x4", "--reference", "golden.pt", "A.pt", "B.pt")
        after = hashlib.sha256(open(golden, "rb").read()).hexdigest()
        check(before == after, "32: the shared --reference is unchanged")
        check(rc == 1 and out.count("result: FAILED") == 2, "32: A and B both FAIL")

        # 33: a shared mapping on /dev/shm past --memory-limit.
        shm = "/dev/shm/tsctl_sandbox_test_%d" % os.getpid()
        d = make(os.path.join(hostile, "33_shared_mapping_escape"), scratch, shm, "3")
        rc, out = validate(tsctl, d, "--allow-load-hooks", "--strict", "--memory-limit", "256M", "--input", "4",
                           "shm_fill.pt")
        check(rc == 1, "33: FAIL")
        check(not os.path.exists(shm), "33: nothing left in /dev/shm")
        if os.path.exists(shm):
            os.remove(shm)
        # 35: graph --inlined of helpers that call each other twice.
        r = subprocess.run([tsctl, "graph", "--inlined", os.path.join(hostile, "35_inlined_graph_blowup", "inline_18.pt")],
                           capture_output=True, text=True, timeout=120)
        check(r.returncode == 3 and r.stdout == "" and r.stderr.count("\n") == 1 and "--max-nodes" in r.stderr,
              "35: graph --inlined refused in one line, exit 3 (%r)" % r.stderr[:160])
        # 36: an archive of many methods, each in a child of its own.
        rc, out = validate(tsctl, root, "--no-infer", os.path.join(hostile, "36_method_fanout", "fanout_100.pt"))
        check("more methods not checked" in out, "36: at most 32 methods checked (%s)" % out.splitlines()[-2:])
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print("%d failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
