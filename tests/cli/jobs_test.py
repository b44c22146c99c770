#!/usr/bin/env python3
"""validate --jobs and --shard.

    jobs_test.py TSCTL REPO_ROOT [CORPUS_DIR]

Reports (text, JSON, JUnit) of `validate --jobs 1` and `--jobs 2` over the
archives of testdata/ (the good and the bad ones), ../shared/hostile and, if
given, a corpus folder are the same bytes once timings are blanked, and
their exit status and stderr are the same; JUnit's testsuite times are
there and add up to more than zero with --jobs 2 as with --jobs 1 (the
default memory cap a message names is blanked: it is the run's share, so
--jobs 2 halves it); --shard K/N slices cover the list
exactly once; a bad --shard or --jobs is a usage error. Exits 1 on a problem.
"""
import glob
import json
import os
import re
import subprocess
import sys

TIMING = [
    (re.compile(rb'"(torch_seconds|load_ms)":[-0-9.e+]+'), rb'"\1":0'),
    (re.compile(rb'time="[0-9.]+"'), rb'time="0"'),
    # The default memory cap is the run's share (half the available memory
    # over the archives checked at once): --jobs 2 halves it by design.
    (re.compile(rb'may grow by at most [0-9.]+ ?[KMGTPi]*B'), rb'may grow by at most N'),
]


def blank(data):
    for pattern, repl in TIMING:
        data = pattern.sub(repl, data)
    return data


def run(tsctl, args, timeout=1200, raw=False):
    p = subprocess.run([tsctl] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    return p.returncode, p.stdout if raw else blank(p.stdout), p.stderr


def archives(root, corpus=None):
    files = sorted(glob.glob(os.path.join(root, "testdata", "*.pt*")))
    files += sorted(glob.glob(os.path.join(root, "testdata", "bad", "*")))
    files += sorted(f for f in glob.glob(os.path.join(root, "..", "shared", "hostile", "*", "*"))
                    if os.path.isfile(f) and not f.endswith((".md", ".py", ".sh", ".json")))
    if corpus and os.path.isdir(corpus):
        files += sorted(f for f in glob.glob(os.path.join(corpus, "*")) if os.path.isfile(f) and not f.endswith(".md"))
    return files


def main():
    tsctl, root = sys.argv[1], sys.argv[2]
    corpus = sys.argv[3] if len(sys.argv) > 3 else None
    problems = []
    # Every format over the project's own and the hostile archives, with
    # --no-infer: inference stops after a time budget (--infer's 60 s), so
    # how many candidates a slow archive gets depends on the machine's load,
    # not on --jobs; stored and given inputs still run. JSON also over the
    # corpus, loading each archive (--no-run keeps the test's time in check).
    runs = [("json", archives(root), ["--no-infer"]), ("text", archives(root), ["--no-infer"]),
            ("junit", archives(root), ["--no-infer"])]
    if corpus and os.path.isdir(corpus):
        runs.append(("json", archives(root, corpus), ["--no-run"]))
    for fmt, files, extra in runs:
        # A missing file: an archive that is not checked keeps its place.
        files.insert(len(files) // 2, os.path.join(root, "testdata", "no-such-archive.pt"))
        # --seed 0: the calls on one copy (torch.stateful) are drawn from it,
        # not at random, so both runs make the same number.
        base = ["validate", "--format", fmt, "--timeout", "120", "--seed", "0"] + extra
        one = run(tsctl, base + ["--jobs", "1"] + files, raw=fmt == "junit")
        two = run(tsctl, base + ["--jobs", "2"] + files, raw=fmt == "junit")
        if fmt == "junit":
            # The workers' reports keep their seconds: every time attribute is
            # there and the archives' sum is not zero, with --jobs 2 as with 1.
            for jobs, result in (("1", one), ("2", two)):
                times = [float(t) for t in re.findall(rb'<testsuite [^>]*?time="([0-9.]+)"', result[1])]
                if not times or sum(times) <= 0:
                    problems.append(f"--format junit --jobs {jobs}: testsuite times {times[:5]} (sum {sum(times)})")
            one, two = (one[0], blank(one[1]), one[2]), (two[0], blank(two[1]), two[2])
        if one != two:
            a, b = one[1].splitlines(), two[1].splitlines()
            diff = next((f"line {i + 1}: {x[:200]!r} vs {y[:200]!r}" for i, (x, y) in enumerate(zip(a, b)) if x != y),
                        f"{len(a)} vs {len(b)} lines")
            if fmt == "json":  # one line: name the first archive whose report differs
                ja, jb = json.loads(one[1]), json.loads(two[1])
                diff = next((f"{x.get('path')}: {json.dumps(x)[:300]} vs {json.dumps(y)[:300]}"
                             for x, y in zip(ja["archives"], jb["archives"]) if x != y), diff)
            problems.append(f"--format {fmt}: --jobs 1 and --jobs 2 differ (exit {one[0]} vs {two[0]}; {diff}; "
                            f"stderr {one[2][:300]!r} vs {two[2][:300]!r})")
        print(f"--format {fmt} {' '.join(extra)}: {len(files)} archives, exit {one[0]}, "
              f"{'same' if one == two else 'DIFFERENT'}")
    # Shards: each archive in exactly one slice, in the order given.
    seen = []
    for k in range(1, 4):
        p = subprocess.run([tsctl, "validate", "--no-load", "--format", "json", "--shard", f"{k}/3"] +
                           [os.path.join(root, "testdata", "traced_cnn.pt")] * 7, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
        got = len(json.loads(p.stdout)["archives"])
        seen.append(got)
    if seen != [3, 2, 2]:
        problems.append(f"--shard k/3 of 7 archives checked {seen}, expected [3, 2, 2]")
    for bad in ["0/3", "4/3", "1/0", "a/b", "1", "1/2/3"]:
        p = subprocess.run([tsctl, "validate", "--no-load", "--shard", bad, os.path.join(root, "testdata", "traced_cnn.pt")],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if p.returncode != 2 or p.stderr.count(b"\n") != 1:
            problems.append(f"--shard {bad}: exit {p.returncode}, stderr {p.stderr!r} (expected one line, exit 2)")
    p = subprocess.run([tsctl, "validate", "--no-load", "--shard", "3/3", os.path.join(root, "testdata", "traced_cnn.pt")],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0 or p.stdout or b"nothing checked" not in p.stderr:
        problems.append(f"an empty slice: exit {p.returncode}, stdout {p.stdout[:100]!r}, stderr {p.stderr!r}")
    p = subprocess.run([tsctl, "validate", "--no-load", "--jobs", "0", os.path.join(root, "testdata", "traced_cnn.pt")],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 2:
        problems.append(f"--jobs 0: exit {p.returncode} (expected 2)")
    for line in problems:
        print("FAIL:", line)
    print(f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
