#!/usr/bin/env python3
"""Checks that lib/src's functions and source files stay small.

    check_sizes.py [REPO_ROOT] [--max-function N] [--max-file N]

A function (free, or a member defined in or out of its class) longer than
--max-function lines (default 80, from its first line to its closing
brace), or a .cc file longer than --max-file lines (default 400), is
printed with its length; exits 1 if there is one. The code is written by
clang-format's rules (docs/style.md), so a function's closing brace is the
first line after its header with the header's indentation and `}`.
Functions are cut by phase (docs/style.md); a table or a switch over opcodes
still fits in 80 lines when each case calls a function.
"""
import argparse
import os
import re
import sys

HEADER = re.compile(r"^(\s*)(?!(?:if|for|while|switch|else|catch|try|do|return|namespace|class|struct|enum|union)\b)"
                    r"[A-Za-z_~\[][^;=]*\)\s*(?:const\s*)?(?:override\s*)?(?:noexcept\s*)?(?:->\s*[^{]+)?\{$")


def functions(lines):
    """(first line number, length, header) of each function definition."""
    for i, line in enumerate(lines):
        m = HEADER.match(line)
        if not m or line.lstrip().startswith(("}", "[", "auto ")):
            continue
        indent = m.group(1)
        for j in range(i + 1, len(lines)):
            if lines[j] in (indent + "}", indent + "};"):
                yield i + 1, j - i + 1, line.strip()
                break
            if lines[j].strip() and not lines[j].startswith(indent + " ") and lines[j] != indent + "}":
                if not lines[j].startswith(indent) or lines[j][len(indent):len(indent) + 1] not in (" ", "}"):
                    break  # not a body after all (a wrapped declaration)


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
            for first, length, header in functions(lines):
                funcs += 1
                if length > a.max_function:
                    bad.append(f"{rel}:{first}: {header[:70]} is {length} lines (at most {a.max_function}: split it by phase)")
    for b in bad:
        print(b)
    if funcs == 0:
        print("no functions found under", src)
        return 1
    print(f"{funcs} functions in {files} files checked, {len(bad)} too long")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
