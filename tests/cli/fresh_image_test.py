#!/usr/bin/env python3
"""A LibTorch child holds nothing of tsctl's: issue #35, item 2.

    fresh_image_test.py TSCTL

`tsctl validate secret.pt slow.pt` with a token in its environment: the
first archive carries a secret in an extra/ file (tsctl's own checks read
it, in the parent), the second loops long enough to be looked at. While the
second archive's child runs, the test reads that child's whole memory
(/proc/PID/mem, every readable mapping) and its environment, and looks for
the token and the other archive's secret. It also checks that the child is
a fresh image (its executable is tsctl-torch-server, not tsctl), and that
the child's environment holds nothing but thread and device settings,
TSCTL_* and its TMPDIR. Reading another process's memory needs ptrace
rights over it (root, or CAP_SYS_PTRACE: the child is not dumpable); the
test is skipped (77) without them.
"""
import os
import random
import re
import string
import subprocess
import sys
import tempfile
import time
import zipfile

from proc_tree import descendants

failures = []


def check(cond, what):
    print(("ok    " if cond else "FAIL  ") + what)
    if not cond:
        failures.append(what)


def memory_holds(pid, needles):
    """Which of `needles` (bytes) lie anywhere in the process's readable memory."""
    found = set()
    with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb", 0) as mem:
        for line in maps:
            fields = line.split()
            lo, hi = (int(x, 16) for x in fields[0].split("-"))
            if "r" not in fields[1] or (len(fields) > 5 and fields[5] in ("[vvar]", "[vsyscall]")):
                continue
            try:
                mem.seek(lo)
                chunk = mem.read(hi - lo)
            except (OSError, ValueError, OverflowError):
                continue
            for n in needles:
                if n in chunk:
                    found.add(n)
    return found


def main():
    tsctl = os.path.abspath(sys.argv[1])
    token = "tsctl-token-" + "".join(random.choice(string.ascii_letters) for _ in range(24))
    secret = "tsctl-secret-" + "".join(random.choice(string.ascii_letters) for _ in range(24))
    with tempfile.TemporaryDirectory() as tmp:
        source = os.path.join(tmp, "slow.ts")
        with open(source, "w") as f:
            f.write("def forward(self, x: Tensor) -> Tensor:\n"
                    "    for i in range(200000000):\n"
                    "        x = x + 1.0\n"
                    "    return x\n")
        slow = os.path.join(tmp, "slow.pt")
        subprocess.run([tsctl, "script", source, "-o", slow], check=True, capture_output=True)
        secret_pt = os.path.join(tmp, "secret.pt")
        net = os.path.join(tmp, "net.ts")
        with open(net, "w") as f:
            f.write("def forward(self, x: Tensor) -> Tensor:\n    return x * 2.0\n")
        subprocess.run([tsctl, "script", net, "-o", secret_pt], check=True, capture_output=True)
        with zipfile.ZipFile(secret_pt, "a") as z:
            top = z.namelist()[0].split("/")[0]
            z.writestr(top + "/extra/secret.txt", secret)
        env = dict(os.environ, CI_JOB_TOKEN=token)
        proc = subprocess.Popen([tsctl, "validate", "-j1", "--timeout", "60", "--arg", "x=2x2:float32",
                                 secret_pt, slow], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            child = None
            denied = False
            deadline = time.time() + 60
            # The second archive's child: a descendant of the server that has
            # loaded slow.pt (its progress is past the first archive's).
            while time.time() < deadline and proc.poll() is None:
                for pid in descendants(proc.pid):
                    try:
                        exe = os.readlink(f"/proc/{pid}/exe")
                        fds = [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")]
                    except PermissionError:
                        denied = True  # a child that is not dumpable: ptrace rights needed
                        continue
                    except OSError:
                        continue
                    if any(fd.endswith("/slow.pt") for fd in fds):
                        child = (pid, exe)
                if child:
                    time.sleep(1.0)  # well into forward
                    break
                time.sleep(0.05)
            if child is None and denied:
                print("skipped: no ptrace rights over the children (run as root or with CAP_SYS_PTRACE)")
                return 77
            check(child is not None, "found the child that runs slow.pt")
            if not child:
                return 1
            pid, exe = child
            check(os.path.basename(exe) == "tsctl-torch-server", f"the child is a fresh image: {exe}")
            try:
                with open(f"/proc/{pid}/environ", "rb") as f:
                    environ = [e.decode(errors="replace") for e in f.read().split(b"\0") if e]
                found = memory_holds(pid, [token.encode(), secret.encode()])
            except PermissionError:
                print("skipped: no ptrace rights over the child (run as root or with CAP_SYS_PTRACE)")
                return 77
            names = sorted(e.split("=", 1)[0] for e in environ)
            allowed = re.compile(r"^(TSCTL_\w+|TMPDIR|OMP_NUM_THREADS|MKL_NUM_THREADS|OPENBLAS_\w+|CUDA_\w+|LD_LIBRARY_PATH)$")
            check(all(allowed.match(n) for n in names), f"the child's environment: {names}")
            check(token.encode() not in found, "the caller's token is nowhere in the child's memory")
            check(secret.encode() not in found, "the other archive's bytes are nowhere in the child's memory")
        finally:
            proc.kill()
            proc.wait()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
