#!/usr/bin/python3
"""Benchmark the warm fork server: `tsctl validate` over many archives, and
one single-archive LibTorch command.

Issue: "Architecture ... a warm fork server". Targets:
  * corpus: `tsctl validate` over every archive of ../shared/corpus takes at
            most 1.5 times as long as /usr/bin/python3 (torch 1.13) loading
            the same archives with torch.jit.load in one process.
  * single: `tsctl graph` on one small archive (testdata/traced_cnn.pt) is
            reported next to a bare LibTorch process start (the reference
            program of the bench issue loading the same archive), so a
            regression of the single-archive path shows as a ratio.

What it measures
  (a) python    /usr/bin/python3 -c "for each archive: try torch.jit.load"
                (one process; includes Python's and torch's start-up)
  (b) validate  tsctl validate ARCHIVES... (every check; each archive loads
                and runs in its own child forked from a parent that loaded
                the LibTorch plugin once). Since inputs are found or inferred
                (the inputs issue), this also runs forward twice (the
                determinism check) on most archives, which (a) does not.
  (b1) jobs1    tsctl validate --jobs 1 ARCHIVES... (one archive after
                another) and (b2) jobs2, --jobs 2 (two worker processes
                forked from the warm parent): target jobs2 / jobs1 <= 0.6
                on 2 cores. (b) is the default, --jobs = the number of cores.
  (b') load     tsctl validate --no-run ARCHIVES...: every check but the
                runs, so the same LibTorch work as (a) (a load per archive)
                plus tsctl's own checks (ZIP, CRC, pickles, operators): the
                like-for-like figure the target is judged on.
  (c) graph     tsctl graph testdata/traced_cnn.pt (the parent loads the
                plugin, a child loads the archive and prints its graph)
  (d) reference tsctl_bench_reference traced_cnn.pt --input 1x3x32x32 --iters 1 --warmup 0
  One untimed run of each first, then --repeat rounds running each once in
  turn. Reported: medians of wall time (fork..wait4), and the ratios.
  validate's exit status is 0 or 1 (findings are expected on the corpus).

Usage
  /usr/bin/python3 scripts/bench_fork_server.py [--repeat N] [--check]
      [--tsctl PATH] [--reference-bin PATH] [--corpus DIR]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_common as bc  # noqa: E402

TARGET = 1.5
JOBS_TARGET = 0.6


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--corpus", default=os.path.join(bc.REPO, "..", "shared", "corpus"))
    bc.add_tsctl_option(ap)
    bc.add_reference_bin_option(ap)
    bc.add_check_option(ap)
    args = ap.parse_args()
    bc.check_at_least_1(args.repeat, "--repeat")
    tsctl = bc.tsctl_path(args.tsctl)
    ref_bin = bc.reference_bin_path(args.reference_bin, os.path.join(bc.REPO, "build/bench"), "tests/bench")
    corpus = os.path.abspath(args.corpus)
    if not os.path.isdir(corpus):
        bc.die(f"{corpus}: no such folder")
    archives = sorted(os.path.join(corpus, n) for n in os.listdir(corpus)
                      if os.path.isfile(os.path.join(corpus, n)) and not n.endswith(".md"))
    small = os.path.join(bc.REPO, "testdata", "traced_cnn.pt")
    loader = ("import sys, torch\nok = 0\nfor p in sys.argv[1:]:\n"
              "    try:\n        torch.jit.load(p, map_location='cpu'); ok += 1\n"
              "    except Exception:\n        pass\nprint(ok)\n")
    commands = {
        "python": [bc.PYTHON, "-c", loader] + archives,
        "validate": [tsctl, "validate"] + archives,
        "jobs1": [tsctl, "validate", "--jobs", "1"] + archives,
        "jobs2": [tsctl, "validate", "--jobs", "2"] + archives,
        "load": [tsctl, "validate", "--no-run"] + archives,
        "graph": [tsctl, "graph", small],
        "reference": [ref_bin, small, "--input", "1x3x32x32", "--iters", "1", "--warmup", "0"],
    }
    runs = {k: [] for k in commands}
    loaded = None
    for round_ in range(args.repeat + 1):
        for name, argv in commands.items():
            status, usage, out, err = bc.run_child(argv, capture_stdout=(name == "python"))
            if status not in ((0, 1) if name in ("validate", "load", "jobs1", "jobs2") else (0,)):
                bc.die(f"{name} exited {status}: {err.strip().splitlines()[-1:] }")
            if name == "python":
                loaded = out.strip()
            if round_ > 0:
                runs[name].append(usage.wall)
    med = {k: bc.median(v) for k, v in runs.items()}
    print(f"tsctl: {bc.tsctl_version(tsctl, 2)}")
    print(f"archives: {len(archives)} in {corpus} (Python loads {loaded} of them)")
    print(f"medians of {args.repeat} rounds:")
    for k in commands:
        print(f"  {k:10s} {med[k] * 1000:9.1f} ms")
    corpus_ratio = med["load"] / med["python"]
    full_ratio = med["validate"] / med["python"]
    single_ratio = med["graph"] / med["reference"]
    jobs_ratio = med["jobs2"] / med["jobs1"]
    jobs_ok = jobs_ratio <= JOBS_TARGET
    ok = corpus_ratio <= TARGET and jobs_ok
    print(f"corpus: validate --no-run / python = {corpus_ratio:.2f} (target <= {TARGET}) {bc.verdict(corpus_ratio <= TARGET)}")
    print(f"corpus: validate --jobs 2 / --jobs 1 = {jobs_ratio:.2f} on {os.cpu_count()} cores "
          f"(target <= {JOBS_TARGET}) {bc.verdict(jobs_ok)}")
    print(f"corpus: validate (loads and runs) / python (loads only) = {full_ratio:.2f} (information)")
    print(f"single: graph / bare LibTorch process = {single_ratio:.2f} (information)")
    return bc.exit_status(not ok, args.check)


if __name__ == "__main__":
    sys.exit(main())
