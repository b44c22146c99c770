#!/usr/bin/env python3
"""Checks that lib/src's functions and source files stay small.

    check_sizes.py [REPO_ROOT] [--max-function N] [--max-file N]

A function (free, or a member defined in or out of its class) longer than
--max-function lines (default 80, from its first line to its closing
brace), or a .cc file longer than --max-file lines (default 400), is
printed with its length; exits 1 if there is one. Functions are found by
their braces (cpp_scan.py), so a signature wrapped over several lines counts
like any other; checked against Universal Ctags' extents on lib/src (the
same functions, first and last lines, except those in `#else` branches,
which ctags skips and this counts).
Functions are cut by phase (docs/style.md); a table or a switch over opcodes
still fits in 80 lines when each case calls a function.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cpp_scan  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("root", nargs="?", default=os.path.join(os.path.dirname(__file__), "..", ".."))
    p.add_argument("--max-function", type=int, default=80)
    p.add_argument("--max-file", type=int, default=400)
    a = p.parse_args()
    src = os.path.join(a.root, "lib", "src")
    bad, files, funcs = [], 0, 0
    for dirpath, _, names in os.walk(src):
        for name in sorted(names):
            if not name.endswith((".cc", ".h")):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, a.root)
            with open(path, encoding="utf-8", errors="replace") as f:
                lines = f.read().split("\n")
            files += 1
            if name.endswith(".cc") and len(lines) - 1 > a.max_file:
                bad.append(f"{rel}: {len(lines) - 1} lines (at most {a.max_file}: move a part into a file of its own)")
            for first, last, name in cpp_scan.functions("\n".join(lines)):
                funcs += 1
                if last - first + 1 > a.max_function:
                    bad.append(f"{rel}:{first}: {name or '(unnamed)'} is {last - first + 1} lines (at most {a.max_function}: split it by phase)")
    for b in bad:
        print(b)
    if funcs == 0:
        print("no functions found under", src)
        return 1
    print(f"{funcs} functions in {files} files checked, {len(bad)} too long")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
