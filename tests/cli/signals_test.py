#!/usr/bin/env python3
"""The LibTorch child dies with tsctl, and an interrupt is an interrupt.

    signals_test.py TSCTL REPO_ROOT

With TSCTL_FAULT_CHECK_MODEL=hang the model-check child of `validate`
sleeps. SIGINT or SIGTERM to tsctl: exit 130 or 143, one stderr line saying
"interrupted", and the child is gone; SIGKILL to tsctl: the child is gone
too (PR_SET_PDEATHSIG); --jobs 2 the same, for its workers and their
children. Exits 1 on a problem.
"""
import os
import signal
import subprocess
import sys
import time

from proc_tree import descendants


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def scenario(tsctl, root, sig, jobs, expect_rc):
    env = dict(os.environ, TSCTL_FAULT_CHECK_MODEL="hang")
    archive = os.path.join(root, "testdata", "traced_cnn.pt")
    args = [tsctl, "validate", "--jobs", str(jobs), "--input", "1x3x16x16", archive, archive]
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    deadline = time.time() + 60
    kids = []
    while time.time() < deadline:
        kids = descendants(p.pid)
        # The LibTorch server and its child; with --jobs, a worker and a
        # child (of the one server) per archive.
        if len(kids) >= (2 * jobs + 1 if jobs > 1 else 2):
            break
        time.sleep(0.1)
    if not kids:
        p.kill()
        return f"{signal.Signals(sig).name}, --jobs {jobs}: no child appeared"
    time.sleep(0.5)
    kids = descendants(p.pid)
    os.kill(p.pid, sig)
    try:
        _, err = p.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        return f"{signal.Signals(sig).name}, --jobs {jobs}: tsctl did not stop within 30 s"
    problems = []
    if p.returncode != expect_rc:
        problems.append(f"exit {p.returncode}, expected {expect_rc}")
    if sig != signal.SIGKILL and (b"interrupted" not in err or err.count(b"\n") != 1):
        problems.append(f"stderr {err!r} (expected one line saying interrupted)")
    deadline = time.time() + 10
    while time.time() < deadline and any(alive(k) for k in kids):
        time.sleep(0.1)
    left = [k for k in kids if alive(k)]
    if left:
        problems.append(f"children {left} outlived tsctl")
        for k in left:
            os.kill(k, signal.SIGKILL)
    return f"{signal.Signals(sig).name}, --jobs {jobs}: " + "; ".join(problems) if problems else None


def main():
    tsctl, root = sys.argv[1], sys.argv[2]
    problems = []
    for sig, rc in [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129), (signal.SIGKILL, -9)]:
        for jobs in (1, 2):
            problem = scenario(tsctl, root, sig, jobs, rc)
            print(f"{signal.Signals(sig).name} --jobs {jobs}: {problem or 'ok'}")
            if problem:
                problems.append(problem)
    print(f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
