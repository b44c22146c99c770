#!/usr/bin/env python3
"""Checks that lib/src's rooms include one another only downwards.

    check_layers.py [REPO_ROOT]

The layers (lib/CMakeLists.txt's comment): text/ < zip/ < pickle/ <
archive/ < plugin/ < commands/ < render/ < formats/ (one folder per
format below it, part of the room), and pte/ (ExecuTorch programs)
beside pickle/, on text/ and zip/ only; torch/ (the LibTorch plugin) stands
on plugin/ and below, never on commands/ or render/, and so does
executorch/ (tsctl-pte-runner, on ExecuTorch's runtime); python/ (the Python
plugin) on torch/ and below. A quoted include resolves as the
compiler resolves it: the including file's folder first, then the folders on
the target's include path (plugin/, and torch/ for python/).

Public headers (tsctl/...) may be included anywhere, but what they declare
is defined in a room: a function declared in lib/include/tsctl and called
from a room must be defined in that room or below it. The rooms that define
a name are found from the definitions (cpp_scan.py finds them by their
braces); a name defined in several rooms (RenderText, RenderJson: one per
result type) counts as allowed if one of them is. So calling render/'s
ComputeStats from commands/ through tsctl/bench.h is an edge upwards, as an
include of "../render/..." would be.

Prints every include and call that runs against the layers; exits 1 if
there is one.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cpp_scan  # noqa: E402

BELOW = {
    "text": set(),
    "zip": {"text"},
    "pickle": {"text", "zip"},
    "pte": {"text", "zip"},
    "archive": {"text", "zip", "pickle", "pte"},
    "plugin": {"text", "zip", "pickle", "pte", "archive"},
    "commands": {"text", "zip", "pickle", "pte", "archive", "plugin"},
    "render": {"text", "zip", "pickle", "pte", "archive", "plugin", "commands"},
    "formats": {"text", "zip", "pickle", "pte", "archive", "plugin", "commands", "render"},
    "torch": {"text", "zip", "pickle", "pte", "archive", "plugin"},
    "executorch": {"text", "zip", "pickle", "pte", "archive", "plugin"},
    "python": {"text", "zip", "pickle", "pte", "archive", "plugin", "torch"},
}
# Headers generated at build time (not in the source tree): the Python
# plugin's embedded script, and flatc's readers of lib/src/pte/*.fbs.
GENERATED = {"embed_py.h", "scalar_type_generated.h", "program_generated.h", "flat_tensor_generated.h",
             "bundled_program_generated.h", "etdump_generated.h"}


def files_of(src, room):
    """A room's files, its folders' included, relative to the room."""
    out = []
    for folder, _, names in os.walk(os.path.join(src, room)):
        out += [os.path.relpath(os.path.join(folder, n), os.path.join(src, room)) for n in names]
    return sorted(out)


def room_of(src, room, include, name=""):
    """The room a quoted include of a file in `room` names, or None."""
    if include.startswith("tsctl/") or include in GENERATED:
        return None
    path = os.path.normpath(os.path.join(src, room, os.path.dirname(name), include))
    if os.path.exists(path):
        return os.path.relpath(path, src).split(os.sep)[0]
    search = ["plugin"] + (["torch"] if room == "python" else [])
    for r in search:
        if os.path.exists(os.path.join(src, r, include)):
            return r
    return "?"


def public_calls(root, src, rooms):
    """Calls of public-header functions defined only in rooms above or beside the caller's."""
    include = os.path.join(root, "lib", "include", "tsctl")
    declared = {}
    for h in os.listdir(include):
        with open(os.path.join(include, h), encoding="utf-8", errors="replace") as f:
            declared[h] = set(re.findall(r"\b([A-Za-z_]\w*)\s*\(", cpp_scan.blank(f.read())))
    files, defined = [], {}
    for room in rooms:
        for name in files_of(src, room):
            if name.endswith(".cc"):
                with open(os.path.join(src, room, name), encoding="utf-8", errors="replace") as f:
                    text = f.read()
                own = {fn.split("::")[-1] for _, _, fn in cpp_scan.functions(text)}
                for fn in own:
                    defined.setdefault(fn, set()).add(room)
                files.append((room, name, text, own))
    bad = []
    for room, name, text, own in files:
        if room not in BELOW:
            continue
        names = set()
        for h in re.findall(r'#\s*include\s+"tsctl/([^"]+)"', text):
            names |= declared.get(h, set())
        code = cpp_scan.blank(text)
        for n, line in enumerate(code.split("\n"), 1):
            for call in re.findall(r"(?<![\w.>])([A-Z]\w*)\s*\(", line):
                where = defined.get(call, set())
                if call in names and call not in own and where and not where & (BELOW[room] | {room}):
                    bad.append(f"lib/src/{room}/{name}:{n}: {room}/ calls {call}, declared in a public header and "
                               f"defined in {', '.join(sorted(r + '/' for r in where))}, a room above or beside it")
    return bad


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
    src = os.path.join(root, "lib", "src")
    rooms = sorted(d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d)))
    bad = []
    unknown = [r for r in rooms if r not in BELOW]
    for r in unknown:
        bad.append(f"lib/src/{r}/: a room check_layers.py does not place (add it to BELOW and to lib/CMakeLists.txt's comment)")
    checked = 0
    for room in rooms:
        for name in files_of(src, room):
            if not name.endswith((".cc", ".h")):
                continue
            with open(os.path.join(src, room, name), encoding="utf-8", errors="replace") as f:
                for n, line in enumerate(f, 1):
                    m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                    if not m:
                        continue
                    checked += 1
                    target = room_of(src, room, m.group(1), name)
                    if target is None or target == room or room not in BELOW:
                        continue
                    if target == "?":
                        bad.append(f"lib/src/{room}/{name}:{n}: \"{m.group(1)}\" is not in lib/src")
                    elif target not in BELOW[room]:
                        bad.append(f"lib/src/{room}/{name}:{n}: {room}/ includes {target}/ (\"{m.group(1)}\"), a room above or beside it")
    calls = public_calls(root, src, rooms)
    bad += calls
    for b in bad:
        print(b)
    if checked == 0:
        print("no includes found under", src)
        return 1
    print(f"{checked} includes and the calls of public functions in {len(rooms)} rooms checked, {len(bad)} against the layers")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
