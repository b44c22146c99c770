#!/usr/bin/env python3
"""Progress on stderr only on a terminal, and bench's time-based defaults.

    progress_test.py TSCTL REPO_ROOT

- validate over several archives, stderr a pseudo-terminal: a "[tsctl
  validate] archives checked: K of N" line, erased at the end; stdout (the
  report) has none of it. The same with stderr a pipe: no progress at all.
- bench, stderr a pseudo-terminal: "[tsctl bench] timing ..." lines; with
  --json, or stderr a pipe: none.
- bench's report says how many calls it made and what bounded each phase:
  by default 0.2 s of warm-up and 3 s of timed calls (and the whole run
  stays well under 10 s on a small model); --warmup N / --iters N count.
Exits 1 on a problem, 77 (skipped) where bench needs a LibTorch this build lacks.
"""
import json
import os
import pty
import select
import subprocess
import sys
import time

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(tsctl, args, tty):
    """Runs tsctl with stdout a pipe and stderr a pseudo-terminal (tty) or a pipe."""
    env = dict(os.environ, TERM="xterm")
    if not tty:
        p = subprocess.run([tsctl] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=300)
        return p.returncode, p.stdout, p.stderr
    master, slave = pty.openpty()
    p = subprocess.Popen([tsctl] + args, stdout=subprocess.PIPE, stderr=slave, stdin=subprocess.DEVNULL, env=env)
    os.close(slave)
    err, out = b"", b""
    # Both drained as they come: a report bigger than a pipe's buffer
    # (bench --json's latencies) would otherwise block tsctl on stdout while
    # this waits for the terminal to close.
    stdout = p.stdout.fileno()
    open_fds = [master, stdout]
    while open_fds:
        r, _, _ = select.select(open_fds, [], [], 0.1)
        for fd in r:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # EIO: the child closed the terminal
                chunk = b""
            if not chunk:
                open_fds.remove(fd)
            elif fd == master:
                err += chunk
            else:
                out += chunk
        if not r and p.poll() is not None and master in open_fds:
            open_fds.remove(master)
    out += p.stdout.read()
    p.wait()
    os.close(master)
    return p.returncode, out, err


def main(tsctl, root):
    os.chdir(root)
    archives = ["--no-load", "testdata/traced_cnn.pt", "testdata/with_extra.pt", "testdata/bad/crc_mismatch.pt"]
    code, out, err = run(tsctl, ["validate"] + archives, tty=True)
    check(code == 1, "validate on a terminal: exit %d, want 1 (crc_mismatch fails)" % code)
    check(b"[tsctl validate] archives checked: 0 of 3" in err, "validate on a terminal: no progress line: %r" % err[:300])
    check(err.endswith(b"\r\x1b[K"), "validate on a terminal: the progress line is not erased at the end: %r" % err[-80:])
    check(b"[tsctl" not in out, "validate: progress in the report")
    code, out, err = run(tsctl, ["validate", "--format", "junit"] + archives, tty=True)
    check(b"[tsctl" not in err, "validate --format junit to stdout: progress on the terminal: %r" % err[:200])
    code, out, err = run(tsctl, ["validate"] + archives, tty=False)
    check(b"[tsctl" not in err and b"\x1b" not in err, "validate, stderr a pipe: progress: %r" % err[:200])

    bench = ["bench", "--input", "1x3x32x32", "testdata/traced_cnn.pt"]
    code, out, err = run(tsctl, bench + ["--duration", "0.5"], tty=True)
    if b"built without LibTorch" in err:
        print("SKIPPED: bench needs LibTorch")
        return 77 if not failures else 1
    check(code == 0, "bench on a terminal: exit %d: %r" % (code, err[-300:]))
    check(b"[tsctl bench] timing" in err, "bench on a terminal: no timing progress: %r" % err[:300])
    check(b"[tsctl" not in out, "bench: progress in the report")
    check(b"runs        " in out and b"timed calls (--duration 0.5 s)" in out, "bench: no runs line: %r" % out[:600])
    code, out, err = run(tsctl, bench + ["--duration", "0.5", "--json"], tty=True)
    check(b"[tsctl" not in err, "bench --json: progress on the terminal: %r" % err[:200])
    code, out, err = run(tsctl, bench + ["--duration", "0.5"], tty=False)
    check(b"[tsctl" not in err and b"\x1b" not in err, "bench, stderr a pipe: progress: %r" % err[:200])

    start = time.monotonic()
    code, out, err = run(tsctl, bench + ["--json"], tty=False)
    wall = time.monotonic() - start
    check(code == 0, "bench defaults: exit %d: %r" % (code, err[-300:]))
    j = json.loads(out)
    runs = j["runs"]
    check(runs["timed"] == {"by": "time", "calls": None, "seconds": 3}, "bench defaults: timed %r" % runs["timed"])
    check(runs["warmup"] == {"by": "time", "calls": None, "seconds": 0.2}, "bench defaults: warm-up %r" % runs["warmup"])
    check(runs["timed_calls"] == len(j["latencies_ns"]) == j["iterations"] > 0, "bench defaults: timed_calls %r" % runs)
    check(runs["warmup_calls"] == len(j["warmup_ns"]) >= 1, "bench defaults: warmup_calls %r" % runs)
    timed_s = j["wall_ns"] / 1e9
    check(3 <= timed_s < 4.5, "bench defaults: the timed phase took %.2f s, want about 3" % timed_s)
    check(wall < 10, "bench defaults: %.1f s wall, want under 10" % wall)
    check(j["input_tensors"] == [{"name": "", "dtype": "float32", "shape": [1, 3, 32, 32]}],
          "bench: input_tensors %r" % j["input_tensors"])

    code, out, err = run(tsctl, bench + ["--json", "--warmup", "2", "--iters", "5"], tty=False)
    j = json.loads(out)
    check(j["runs"] == {"warmup_calls": 2, "timed_calls": 5, "warmup": {"by": "count", "calls": 2, "seconds": None},
                        "timed": {"by": "count", "calls": 5, "seconds": None}}, "bench --warmup 2 --iters 5: %r" % j["runs"])
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(os.path.abspath(sys.argv[1]), sys.argv[2]))
