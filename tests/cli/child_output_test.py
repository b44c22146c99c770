#!/usr/bin/env python3
"""A child speaks only through tsctl (../shared/hostile/37, made anew).

    child_output_test.py TSCTL REPO_ROOT

inject.pt calls warnings.warn() in a torch.jit._fork task, on an inter-op
pool thread whose warning handler is LibTorch's default one (raw stderr):
forged "PASS torch.sandbox" and "result: PASSED" lines with ESC and CR.
flood.pt does the same 200 000 times with 24 KiB messages (about 5 GB).
Every LibTorch child's standard output and error are a pipe that tsctl reads,
keeps 64 KiB of and escapes, shown only with -v. So: no ESC or CR byte and no
forged line reaches tsctl's streams, the flood leaves under 100 KiB on
stderr (with -v too) and ends in bounded time, and with -v the model's text
appears escaped after "tsctl: child output: ". tsctl's stderr is read as it
comes and the run is killed past 10 MiB, so that a tsctl that lets the flood
through fails here quickly instead of filling memory or a disk.
Needs Debian's Python with torch (/usr/bin/python3); skipped (77) without it
or without ../shared/hostile/37.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

TORCH_PYTHON = "/usr/bin/python3"
FOLDER = "37_stderr_raw_from_worker_threads"
KILL_PAST = 10 << 20
failures = []


def check(cond, what):
    print(("ok    " if cond else "FAIL  ") + what)
    if not cond:
        failures.append(what)


def run(cmd, cwd, timeout):
    """stdout (whole), stderr (its first 1 MiB), stderr's byte count, seconds, exit code.

    stderr is counted as it comes; past KILL_PAST bytes tsctl is killed."""
    start = time.monotonic()
    p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                         start_new_session=True)
    out_file = tempfile.TemporaryFile()
    pump = subprocess.Popen(["cat"], stdin=p.stdout, stdout=out_file)  # stdout must not block tsctl either
    p.stdout.close()
    err, count = b"", 0
    while True:
        chunk = p.stderr.read1(1 << 16)
        if not chunk:
            break
        count += len(chunk)
        if len(err) < (1 << 20):
            err += chunk[: (1 << 20) - len(err)]
        if count > KILL_PAST or time.monotonic() - start > timeout:
            os.killpg(p.pid, 9)
            break
    p.wait()
    pump.wait()
    out_file.seek(0)
    return out_file.read(), err, count, time.monotonic() - start, p.returncode


def forged(stream):
    """A line that reads as tsctl's own report line ("  PASS  torch.sandbox ...",
    "  result: PASSED ..."), not behind the prefix -v puts before a child's text."""
    for line in stream.replace(b"\r", b"\n").split(b"\n"):
        text = line.strip()
        if text.startswith(b"result: PASSED (0 errors, 0 warnings)") or text.startswith(b"PASS  torch.sandbox        text"):
            return True
        if b"\x1b[2K" in line:  # raw ESC: what follows the erased line is what a terminal shows
            return True
    return False


def main():
    tsctl, root = os.path.abspath(sys.argv[1]), sys.argv[2]
    hostile = os.path.join(root, "..", "shared", "hostile", FOLDER)
    if not os.path.isdir(hostile) or not os.path.exists(TORCH_PYTHON):
        print("skipped: needs ../shared/hostile/%s and Debian's Python with torch" % FOLDER)
        return 77
    scratch = tempfile.mkdtemp(prefix="tsctl-child-output-")
    try:
        d = os.path.join(scratch, FOLDER)
        shutil.copytree(hostile, d)
        for name in os.listdir(d):
            os.chmod(os.path.join(d, name), 0o644)
        os.chmod(d, 0o755)
        subprocess.run([TORCH_PYTHON, "make.py"], cwd=d, check=True, capture_output=True, timeout=300)

        out, err, count, secs, rc = run([tsctl, "validate", "--input", "2x4", "inject.pt"], d, 300)
        print("validate inject.pt: exit %d, %d bytes on stderr, %.1f s" % (rc, count, secs))
        for name, stream in (("stderr", err), ("stdout", out)):
            check(b"\x1b" not in stream and b"\r" not in stream, "inject.pt: no ESC or CR byte on %s" % name)
        check(not forged(err), "inject.pt: no forged report line on stderr")
        check(b"text forged by the model" not in out and out.count(b"result: ") == 1,
              "inject.pt: the report on stdout is tsctl's alone (one result line)")
        check(b"tsctl: child output:" not in err, "inject.pt: the model's text only with -v")

        out, err, count, secs, rc = run([tsctl, "-v", "validate", "--input", "2x4", "inject.pt"], d, 300)
        shown = [l for l in err.split(b"\n") if l.startswith(b"tsctl: child output: ")]
        check(b"\x1b" not in err + out and b"\r" not in err + out and not forged(err) and
              b"text forged by the model" not in out, "inject.pt -v: no ESC, CR or forged line")
        check(any(b"\\x1b[2K\\r  PASS  torch.sandbox" in l for l in shown),
              "inject.pt -v: the model's text shown escaped (%r)" % shown[:2])

        for flags in ([], ["-v"]):
            out, err, count, secs, rc = run([tsctl, *flags, "validate", "--input", "40x4", "flood.pt"], d, 400)
            what = "flood.pt %s" % " ".join(flags)
            print("%s: exit %d, %d bytes on stderr, %.1f s" % (what, rc, count, secs))
            check(count < 100 << 10, "%s: under 100 KiB on stderr (%d bytes)" % (what, count))
            check(secs < 300, "%s: ended within 300 s (%.1f s)" % (what, secs))
            check(rc in (0, 1), "%s: a verdict, exit 0 or 1 (%d: %r)" % (what, rc, err[-300:]))
            if flags:
                check(b"more bytes dropped" in err, "%s: the dropped bytes counted" % what)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print("%d failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
