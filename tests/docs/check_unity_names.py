#!/usr/bin/env python3
"""Checks that no new helper name is shared by two files a unity build may join.

    check_unity_names.py [REPO_ROOT]

The library is compiled in unity batches (CMakeLists.txt, TSCTL_UNITY): the
sources of a batch are one translation unit, so the helpers of their
anonymous namespaces (and `static` functions) meet each other and the inline
functions of the private headers they include. Two helpers of one name and
one signature fail to compile, but of one name and different signatures they
overload silently: a call picks the better match, which may be the other
file's. That happened: render_pt2.cc's `E(const std::string&)` (terminal
escaping) beat report_html.h's `E(std::string_view)` (HTML escaping) for the
report pages in a batch that held both, once a new file had shifted the
batches. Which files share a batch depends on the file list, so any pair may.

A name defined in an anonymous namespace (or `static`) in a file under
lib/src that another source of the same target (libtsctl, the LibTorch
plugin's torch/, python/, the ExecuTorch runner's executorch/) defines so
too, or that a private header there defines, is printed; exits 1 if there
is one (rename one of them: the 63 this check found when it was written
were renamed). Functions are found by their braces, with their scopes
(cpp_scan.py); members of classes in an anonymous namespace count as well (a
cheap over-approximation).
"""
import collections
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cpp_scan  # noqa: E402


# The rooms of lib/src by the target their sources are compiled in (only a
# target's own sources share its unity batches; a header is included by
# every target).
TARGET = {"torch": "tsctl_torch_impl", "python": "tsctl_python", "executorch": "tsctl_pte_runner"}


def target_of(rel):
    """The target whose sources `rel` (lib/src/ROOM/...) is among; None for a header."""
    if rel.endswith(".h"):
        return None
    return TARGET.get(rel.split(os.sep)[2], "tsctl")


def shares(files):
    """Whether two of `files` (sources or headers) may meet in one unity batch."""
    sources = [target_of(f) for f in files if target_of(f)]
    return len(sources) != len(set(sources)) or (len(sources) < len(files) and sources)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
    src = os.path.join(root, "lib", "src")
    local, header = collections.defaultdict(set), collections.defaultdict(set)
    for folder, _, names in os.walk(src):
        for n in names:
            if not n.endswith((".cc", ".h")):
                continue
            path = os.path.join(folder, n)
            rel = os.path.relpath(path, root)
            text = open(path, encoding="utf-8", errors="replace").read()
            for _, _, name, is_local, member in cpp_scan.scoped_functions(text):
                if is_local:
                    local[name].add(rel)
                elif n.endswith(".h") and not member:
                    header[name.split("::")[-1]].add(rel)
    shared = {k: v | header.get(k, set()) for k, v in local.items()}
    shared = {k: files for k, files in shared.items() if len(files) > 1 and shares(sorted(files))}
    for name in sorted(shared):
        print(f"{name}: defined in {', '.join(sorted(shared[name]))}; a unity batch may join them (rename one)")
    print(f"{len(local)} local helper names in lib/src checked, {len(shared)} shared")
    return 1 if shared else 0


if __name__ == "__main__":
    sys.exit(main())
