#!/usr/bin/env python3
"""Memory for the run, not the child (issue #51 item 5; ../shared/hostile/40,
its make.py run in a scratch folder at a safe scale):

1. the default per-child cap is min(8 GiB, available / 2 / the archives
   checked at once), so N hogs at their caps hold at most half of what was
   available. With TSCTL_TEST_AVAILABLE_MEMORY=4 GiB and hogs of 1.5 GiB:
   one at a time (cap 2 GiB) a hog runs; two at once (-j 2: 1 GiB each) each
   fails naming the limit. Before, every child got min(8 GiB, half the
   machine) whatever --jobs was, and both passed.
2. what a child sends back is streamed to the file, not held: tsctl's own
   peak RSS (VmHWM) for `--save-outputs` of big_out.pt's 256 MiB output stays
   under 200 MiB (it held three copies before: 775 MiB).

Usage: memory_run_test.py TSCTL PYTHON. Exit 77 when PYTHON has no torch.
"""
import os
import subprocess
import sys
import tempfile
import time

from validate_checks import check, finish, validate

HOSTILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "shared", "hostile",
                       "40_memory_outside_the_child_cap", "make.py")


def peak_rss_mib(argv, env):
    """(exit status, tsctl's own VmHWM in MiB) of one run."""
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    peak = 0
    while p.poll() is None:
        try:
            with open(f"/proc/{p.pid}/status") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        peak = max(peak, int(line.split()[1]) // 1024)
        except OSError:
            pass
        time.sleep(0.05)
    return p.returncode, peak


def main():
    tsctl, python = sys.argv[1], sys.argv[2]
    env = dict(os.environ, TSCTL_TEST_AVAILABLE_MEMORY=str(4 << 30))
    with tempfile.TemporaryDirectory() as d:
        if not os.path.isfile(HOSTILE):
            print("no ../shared/hostile/40: skipped")
            return 77
        made = subprocess.run([python, "-W", "ignore", HOSTILE, "1.5", "2"], capture_output=True, text=True,
                              timeout=300, cwd=d)
        if made.returncode != 0:
            print("cannot make the models: skipped: " + made.stderr[-300:])
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
        out = os.path.join(d, "out.pt")
        rc, peak = peak_rss_mib([tsctl, "validate", "-j", "1", "--input", "2x4", os.path.join(d, "big_out.pt"),
                                 "--save-outputs", out], dict(os.environ))
        size = os.path.getsize(out) if os.path.exists(out) else 0
        check(rc == 0 and size > 256 << 20 and peak < 200,
              f"--save-outputs of a 256 MiB output: written ({size} bytes), tsctl's own peak RSS {peak} MiB (< 200)")
    return finish()


if __name__ == "__main__":
    sys.exit(main())
