#!/usr/bin/env python3
"""Memory for the run, not the child (issue #51 item 5; ../shared/hostile/40):
the default per-child cap is min(8 GiB, available / 2 / the archives checked
at once), so N hogs at their caps hold at most half of what was available.

At a safe scale: TSCTL_TEST_AVAILABLE_MEMORY=4 GiB, a model that allocates
1.5 GiB. One at a time (cap 2 GiB) it runs; two at once (-j 2: 1 GiB each)
each fails naming the limit. Before this change every child got min(8 GiB,
half the machine) whatever --jobs was, and both passed.

Usage: memory_run_test.py TSCTL PYTHON. Exit 77 when PYTHON has no torch.
"""
import os
import subprocess
import sys
import tempfile

from validate_checks import check, finish, validate

MAKE = r'''
import sys, os, torch
class Hog(torch.nn.Module):
    def forward(self, x):
        return torch.ones(x.size(0) * 384 * 1024 * 1024).sum() + x.sum()
m = torch.jit.script(Hog())
for name in ("hog0", "hog1"):
    m.save(os.path.join(sys.argv[1], name + ".pt"))
'''


def main():
    tsctl, python = sys.argv[1], sys.argv[2]
    env = dict(os.environ, TSCTL_TEST_AVAILABLE_MEMORY=str(4 << 30))
    with tempfile.TemporaryDirectory() as d:
        script = os.path.join(d, "make.py")  # torch.jit.script reads the classes' source
        with open(script, "w") as f:
            f.write(MAKE)
        made = subprocess.run([python, "-W", "ignore", script, d], capture_output=True, text=True, timeout=300)
        if made.returncode != 0:
            print("cannot make the model: skipped: " + made.stderr[-300:])
            return 77
        hogs = [os.path.join(d, "hog0.pt"), os.path.join(d, "hog1.pt")]
        one = subprocess.run([tsctl, "validate", "--format", "json", "-j", "1", "--input", "1x4", hogs[0]],
                             capture_output=True, text=True, timeout=600, env=env)
        check(one.returncode == 0 and '"result":"PASSED"' in one.stdout.replace(" ", ""),
              f"one at a time (a 2 GiB cap): the 1.5 GiB model runs: exit {one.returncode} {one.stdout[-300:]}")
        two = subprocess.run([tsctl, "validate", "--format", "json", "-j", "2", "--input", "1x4", *hogs],
                             capture_output=True, text=True, timeout=600, env=env)
        import json
        doc = json.loads(two.stdout)
        runs = [next((c for c in a["checks"] if c["id"] == "torch.run"), {}) for a in doc["archives"]]
        check(two.returncode == 1 and all(r.get("status") == "FAIL" and "memory" in r.get("message", "").lower()
                                           for r in runs),
              f"two at once (-j 2, 1 GiB each): each fails naming the memory limit: exit {two.returncode} "
              f"{[r.get('message', '')[:160] for r in runs]}")
    return finish()


if __name__ == "__main__":
    sys.exit(main())
