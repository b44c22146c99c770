"""What the validate tests of this folder share (refine_test.py,
packed_checks_test.py): a check that prints ok/FAIL and counts failures, and
`tsctl validate --format json` of one archive, its checks by id."""
import json
import subprocess

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def validate(tsctl, path, *flags):
    """({check id: check}, the archive's report) of one validate run."""
    p = subprocess.run([tsctl, "validate", "--format", "json", *flags, path], capture_output=True, text=True,
                       timeout=600)
    try:
        doc = json.loads(p.stdout)
    except json.JSONDecodeError:
        raise AssertionError(f"validate {path} wrote no JSON: {p.stdout[:400]} {p.stderr[:400]}")
    archive = doc["archives"][0] if "archives" in doc else doc
    return {c["id"]: c for c in archive["checks"]}, archive


def finish():
    """The exit status: 1 if a check failed."""
    print(f"{len(failures)} failures")
    return 1 if failures else 0
