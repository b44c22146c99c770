#!/usr/bin/python3
"""tsctl's view of every archive is LibTorch's, or tsctl says it is ambiguous.

For every file under the given folders (testdata/, ../shared/corpus, the
fuzz regression corpus), LibTorch's reader (torch._C.PyTorchFileReader:
PyTorchStreamReader over miniz, the reader torch.jit.load uses) lists the
records it resolves. Where it opens the file, `tsctl inspect --format json`
must list the same set of records, or `tsctl validate --no-load` must fail
zip.ambiguous (tsctl says other readers could read it differently), or tsctl
must refuse it with its one-line error (a torch.save checkpoint, damage tsctl
sees and miniz does not look for): tsctl then vouches for nothing. Counted,
not failed: files LibTorch's reader does not open.

Usage: reader_view_corpus_test.py TSCTL DIR...   (exit 77 without torch)
"""
import json, os, subprocess, sys
try:
    import torch
except ImportError:
    sys.exit(77)

TSCTL = sys.argv[1]
DIRS = [d for d in sys.argv[2:] if os.path.isdir(d)]


def libtorch_records(path):
    try:
        reader = torch._C.PyTorchFileReader(path)
        return set(reader.get_all_records())
    except Exception:
        return None


def tsctl_records(path):
    p = subprocess.run([TSCTL, "inspect", "--format", "json", path], capture_output=True, timeout=120)
    if p.returncode != 0:
        return None, p.stderr.decode(errors="replace").strip()
    return {r["name"] for r in json.loads(p.stdout)["records"]}, ""


def ambiguous(path):
    p = subprocess.run([TSCTL, "validate", "--no-load", "--format", "json", path], capture_output=True, timeout=120)
    try:
        report = json.loads(p.stdout)
    except ValueError:
        return False
    for a in report.get("archives", []):
        for c in a.get("checks", []):
            if c.get("id") == "zip.ambiguous" and c.get("status") == "FAIL":
                return True
    return False


def main():
    files = []
    for d in DIRS:
        for root, _, names in os.walk(d):
            files += [os.path.join(root, n) for n in sorted(names)]
    same = flagged = skipped = refused = 0
    problems = []
    for f in sorted(files):
        theirs = libtorch_records(f)
        if theirs is None:
            skipped += 1
            continue
        ours, err = tsctl_records(f)
        if ours is None and err.count("\n") == 0 and err.startswith("tsctl: "):
            refused += 1
        elif ours == theirs:
            same += 1
        elif ambiguous(f):
            flagged += 1
        else:
            only_t = sorted(theirs - ours)[:3] if ours is not None else []
            only_o = sorted(ours - theirs)[:3] if ours is not None else []
            problems.append("%s: LibTorch resolves %d records, tsctl %s, and tsctl does not call it ambiguous"
                            " (only LibTorch: %s; only tsctl: %s)" %
                            (f, len(theirs), "fails: " + err if ours is None else "%d" % len(ours), only_t, only_o))
    for p in problems:
        print("FAIL:", p)
    print("%d files: %d read alike, %d reported ambiguous, %d refused by tsctl, %d not opened by LibTorch's reader,"
          " %d disagreements" % (len(files), same, flagged, refused, skipped, len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
