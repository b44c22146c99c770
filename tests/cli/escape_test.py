#!/usr/bin/python3
"""Every command on archives whose strings hold escape sequences and bytes
that are not UTF-8 (testdata/escape/README.md): nothing raw reaches stdout
or stderr (no C0 control but newline and tab, no DEL, no C1 control, only
well-formed UTF-8), and --json output is one JSON document.

Usage: escape_test.py TSCTL   (run from the repository root)
"""
import json
import subprocess
import sys

TSCTL = sys.argv[1]
E = "testdata/escape/"
failures, passed = [], 0
torch = "libtorch unavailable" not in subprocess.run([TSCTL, "--version"], capture_output=True, text=True).stdout


def clean(data):
    """Why `data` is not safe on a terminal, or ""."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        return f"invalid UTF-8 at byte {e.start}"
    for i, c in enumerate(text):
        if (ord(c) < 0x20 and c not in "\n\t") or 0x7F <= ord(c) < 0xA0:
            return f"raw control U+{ord(c):04X} at character {i}: {text[max(0, i - 40):i + 20]!r}"
    return ""


def check(args, want_json=False, needs_torch=False):
    global passed
    if needs_torch and not torch:
        print("skip (no LibTorch):", " ".join(args))
        return
    r = subprocess.run([TSCTL, *args], capture_output=True, timeout=300)
    name = " ".join(args)
    for what, data in (("stdout", r.stdout), ("stderr", r.stderr)):
        why = clean(data)
        if why:
            failures.append(f"{name}: {what}: {why}")
            return
    if r.returncode not in (0, 1):
        failures.append(f"{name}: exit {r.returncode}: {r.stderr[-300:]!r}")
        return
    if want_json:
        try:
            json.loads(r.stdout)
        except ValueError as e:
            failures.append(f"{name}: --json output is not one JSON document: {e}")
            return
    passed += 1


for f in ("op_names.pt2", "op_names.ptl"):
    check(["inspect", E + f])
    check(["inspect", "--json", E + f], want_json=True)
    check(["validate", "--no-load", "--list-ops", E + f])
    check(["validate", "--no-load", E + f])
check(["graph", E + "op_names.pt2"])
check(["graph", E + "debug_file_name.pt"], needs_torch=True)
check(["graph", "-m", "describe", "--format", "dot", E + "string_constant.pt"], needs_torch=True)
check(["graph", "-m", "describe", E + "string_constant.pt"], needs_torch=True)
check(["code", E + "string_constant.pt"])
check(["validate", "--input", "1x3x32x32", E + "prints.pt"], needs_torch=True)
check(["validate", "--json", "--input", "1x3x32x32", E + "prints.pt"], want_json=True, needs_torch=True)
check(["bench", "--input", "1x3x32x32", "--iters", "3", "--warmup", "1", "--profile", E + "prints.pt"], needs_torch=True)
check(["bench", "--json", "--input", "1x3x32x32", "--iters", "3", "--warmup", "1", E + "prints.pt"],
      want_json=True, needs_torch=True)
check(["validate", "--input", "1x3x32x32", "--reference-model", E + "returns_ok.pt", E + "returns_bytes.pt"],
      needs_torch=True)
check(["validate", "--json", "--input", "1x3x32x32", "--reference-model", E + "returns_ok.pt", E + "returns_bytes.pt"],
      want_json=True, needs_torch=True)

for f in failures:
    print("FAIL:", f)
print(f"{passed} passed, {len(failures)} failed")
sys.exit(1 if failures or passed == 0 else 0)
