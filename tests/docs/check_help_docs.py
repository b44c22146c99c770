#!/usr/bin/env python3
"""Checks that --help, the man pages and docs/manual agree on every flag.

    check_help_docs.py TSCTL [REPO_ROOT]

For every subcommand that `tsctl --help` lists, every flag of `tsctl CMD
--help` (long and short; -h/--help aside, which every command has) must
be an entry of the OPTIONS of man/tsctl-CMD.1 (groff escapes: \\-\\-flag, fonts)
and appear in the command's
page under docs/manual/. The other way round, every flag that the man page's
SYNOPSIS and OPTIONS name, and every flag in the first column of a flag table
of the manual page, must exist in --help. The global flags of `tsctl --help`
are checked against man/tsctl.1 and docs/manual/cli.md the same way. Also:
the one-line description of `tsctl --help` and the NAME line of tsctl(1)
name every command, and no help shows CLI11's default-value markers
(`--flag{false}`). Prints every problem; exits 1 if there is one.
"""
import os
import re
import subprocess
import sys

# The manual page of each command; a command not listed has docs/manual/CMD.md.
MANUAL_PAGE = {"trace": "trace-script.md", "script": "trace-script.md"}
# Flags every command has; documented once, in tsctl(1) and docs/manual/cli.md.
UNIVERSAL = {"-h", "--help"}

FLAG_RE = re.compile(r"^(--?[A-Za-z0-9][A-Za-z0-9_-]*)$")


def run_help(tsctl, args):
    p = subprocess.run([tsctl] + args + ["--help"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=60)
    if p.returncode != 0:
        raise SystemExit("tsctl %s --help exited %d: %s" % (" ".join(args), p.returncode, p.stderr.strip()))
    return p.stdout


def help_flags(text):
    """Flags of the option lines of a CLI11 help text (lines indented by two spaces)."""
    flags = []
    for line in text.splitlines():
        m = re.match(r"^  (-\S+)", line)
        if not m:
            continue
        for name in m.group(1).split(","):
            name = re.sub(r"\{.*$", "", name)  # a CLI11 marker is reported separately
            if FLAG_RE.match(name):
                flags.append(name)
    return flags


def subcommands(text):
    out = []
    section = False
    for line in text.splitlines():
        if line.startswith("Subcommands:"):
            section = True
            continue
        if section:
            m = re.match(r"^  ([a-z][a-z0-9_-]*)\s", line)
            if m:
                out.append(m.group(1))
            elif line.strip() == "" and out:
                break
    return out


def groff_plain(text):
    """Man page source with the escapes a flag may carry undone: \\- to -, fonts dropped."""
    text = re.sub(r"\\f[BIRP]|\\f\(..|\\f\[[^]]*\]", "", text)
    text = text.replace("\\-", "-").replace("\\(em", " ").replace("\\&", "")
    return text


def mentions(text, flag):
    """Whether `flag` occurs in `text` as a whole flag (not inside a longer one)."""
    return re.search(r"(?<![-\w])" + re.escape(flag) + r"(?![\w-])", text) is not None


def man_flags(man_source, sections):
    """Flags named in the SYNOPSIS (if in `sections`) and in the tags of OPTIONS
    (the line after each .TP)."""
    flags = set()
    section = None
    lines = man_source.splitlines()
    for i, line in enumerate(lines):
        if line.startswith(".SH "):
            section = line[4:].strip().strip('"')
            continue
        take = (section == "SYNOPSIS" and "SYNOPSIS" in sections) or (
            section == "OPTIONS" and "OPTIONS" in sections and i > 0 and lines[i - 1].startswith(".TP"))
        if take:
            for f in re.findall(r"(?<![-\w])(--?[A-Za-z0-9][A-Za-z0-9_-]*)", groff_plain(line)):
                flags.add(f)
    return flags


def manual_table_flags(md):
    """Flags in the first column of the manual's flag tables (`| flag | meaning |`)."""
    flags = set()
    in_table = False
    for line in md.splitlines():
        if re.match(r"^\|\s*flag\s*\|", line):
            in_table = True
            continue
        if in_table and not line.startswith("|"):
            in_table = False
        if in_table:
            cell = line.split("|")[1]
            for f in re.findall(r"`(--?[A-Za-z0-9][A-Za-z0-9_-]*)", cell):
                flags.add(f)
            for f in re.findall(r"`[^`]*?(?<![-\w])(--?[A-Za-z0-9][A-Za-z0-9_-]*)", cell):
                flags.add(f)
    return flags


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    tsctl = sys.argv[1]
    root = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    problems = []

    def read(path):
        with open(os.path.join(root, path), encoding="utf-8") as f:
            return f.read()

    top = run_help(tsctl, [])
    commands = subcommands(top)
    if not commands:
        raise SystemExit("no subcommands found in tsctl --help")

    # The description (first line of --help) and tsctl(1)'s NAME line name every command.
    description = top.splitlines()[0]
    man_top = read("man/tsctl.1")
    name_line = groff_plain(man_top).split(".SH NAME", 1)[1].strip().splitlines()[0]
    for cmd in commands:
        if not re.search(r"\b%s\b" % re.escape(cmd), description):
            problems.append("tsctl --help: the description %r does not name %s" % (description, cmd))
        if not re.search(r"\b%s\b" % re.escape(cmd), name_line):
            problems.append("man/tsctl.1: the NAME line %r does not name %s" % (name_line, cmd))

    checks = [([], "tsctl", "man/tsctl.1", "docs/manual/cli.md", top)]
    for cmd in commands:
        checks.append(([cmd], "tsctl " + cmd, "man/tsctl-%s.1" % cmd,
                       "docs/manual/" + MANUAL_PAGE.get(cmd, cmd + ".md"), run_help(tsctl, [cmd])))

    for args, label, man_path, md_path, text in checks:
        for marker in re.findall(r"--?[\w-]+\{[^}]*\}", text):
            problems.append("%s --help shows CLI11's default marker %s" % (label, marker))
        flags = [f for f in help_flags(text) if f not in UNIVERSAL]
        try:
            man_source = read(man_path)
        except OSError:
            problems.append("%s: no man page %s" % (label, man_path))
            man_source = ""
        try:
            md = read(md_path)
        except OSError:
            problems.append("%s: no manual page %s" % (label, md_path))
            md = ""
        man_options = man_flags(man_source, {"OPTIONS"})
        for flag in flags:
            if man_source and flag not in man_options:
                problems.append("%s: %s is in --help but not among the OPTIONS of %s" % (label, flag, man_path))
            if md and not mentions(md, flag):
                problems.append("%s: %s is in --help but not in %s" % (label, flag, md_path))
        known = set(help_flags(text)) | UNIVERSAL
        if not args:
            # tsctl(1) and cli.md describe every command: only the global flags are checked one way.
            continue
        for flag in sorted(man_flags(man_source, {"SYNOPSIS", "OPTIONS"}) - known):
            problems.append("%s: %s documents %s, which tsctl %s --help lacks" % (label, man_path, flag, args[0]))
        if args[0] in ("trace", "script"):
            continue  # one manual page, two commands: see the section tables below
        for flag in sorted(manual_table_flags(md) - known):
            problems.append("%s: %s lists %s, which tsctl %s --help lacks" % (label, md_path, flag, args[0]))

    # trace-script.md has one flag table per command, each after "`tsctl CMD --help`:".
    if "trace" in commands and "script" in commands:
        md = read("docs/manual/trace-script.md")
        for cmd in ("trace", "script"):
            m = re.search(r"`tsctl %s --help`:\n\n((?:\|.*\n)+)" % cmd, md)
            if not m:
                problems.append("docs/manual/trace-script.md: no flag table after `tsctl %s --help`:" % cmd)
                continue
            table = m.group(1)
            flags = help_flags(run_help(tsctl, [cmd]))
            for flag in flags:
                if flag not in UNIVERSAL and not mentions(table, flag):
                    problems.append("tsctl %s: %s is in --help but not in the table of docs/manual/trace-script.md" % (cmd, flag))
            known = set(flags) | UNIVERSAL
            for flag in sorted(manual_table_flags(table) - known):
                problems.append("tsctl %s: docs/manual/trace-script.md lists %s, which tsctl %s --help lacks" % (cmd, flag, cmd))

    for p in problems:
        print(p)
    if problems:
        print("docs_flags: %d problem(s)" % len(problems))
        return 1
    print("docs_flags: %d commands, --help, man pages and docs/manual agree" % len(commands))
    return 0


if __name__ == "__main__":
    sys.exit(main())
