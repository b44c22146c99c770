#!/usr/bin/env python3
"""Checks the relative links of README.md and docs/**/*.md.

    check_links.py [REPO_ROOT]

A link [text](path), [text](path#anchor) or [text](#anchor) must name a file
or folder that exists (relative to the page) and, with an anchor into a
Markdown page, a heading of that page (GitHub's anchor rules). Links with a
scheme (https:, mailto:) are not checked. Prints every broken link; exits 1
if there is one.
"""
import glob
import os
import re
import sys


def anchors(path):
    out = set()
    fence = False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("```"):
                fence = not fence
            m = None if fence else re.match(r"^#{1,6} (.*)", line)
            if m:
                slug = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
                out.add(slug)
    return out


def links(path):
    """(line number, target) of the Markdown links outside code blocks and spans."""
    fence = False
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.startswith("```"):
                fence = not fence
                continue
            if fence:
                continue
            line = re.sub(r"`[^`]*`", "", line)
            for m in re.finditer(r"\]\(([^)\s]+)\)", line):
                yield n, m.group(1)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    pages = [os.path.join(root, "README.md")] + sorted(glob.glob(os.path.join(root, "docs", "**", "*.md"), recursive=True))
    problems = []
    count = 0
    for page in pages:
        for n, target in links(page):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                continue
            count += 1
            file_part, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(page), file_part)) if file_part else page
            where = "%s:%d: %s" % (os.path.relpath(page, root), n, target)
            if not os.path.exists(dest):
                problems.append(where + ": no such file")
            elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
                problems.append(where + ": no heading with this anchor")
    for p in problems:
        print(p)
    if problems:
        print("docs_links: %d broken link(s)" % len(problems))
        return 1
    print("docs_links: %d relative links in %d pages resolve" % (count, len(pages)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
