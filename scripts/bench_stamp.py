#!/usr/bin/python3
"""Benchmark `tsctl stamp` against re-saving the archive with TorchScript.

Issue: "tsctl stamp performance". Targets, for the in-place stamp:
  * time:  `tsctl stamp ARCHIVE --set ...` takes at most 1/20 (0.05) of the
           reference's time;
  * RSS:   it peaks at no more than 64 MiB resident;
  * scale: its time should not grow with the size of the archive (reported;
           like bench_inspect.py, not part of the overall PASS/FAIL).

What it measures
  For each archive size (256 MiB and 1 GiB; with --quick 64 MiB and 256 MiB;
  the archives bench_inspect.py generates and caches in --workdir) and each
  of these commands, every run in a fresh child process:
    reference      /usr/bin/python3 -c 'm = torch.jit.load(src);
                   torch.jit.save(m, dst, _extra_files={"producer_info.json":
                   json.dumps({...})})'   -- what users do today to tag an
                   archive; dst lies in --workdir
    stamp          tsctl stamp COPY --set run=N   (in place)
    stamp --output tsctl stamp COPY --output OUT  (writes a whole new archive,
                   so it is expected to grow with the size; reported, no
                   target)
  COPY is a copy of the archive in --workdir, made afresh (untimed) before
  every in-place run, so each run adds the record to a pristine archive.
  Before every run, untimed: the copy is made (shutil.copyfile) and fsync'ed,
  dst / OUT are removed, and sync() flushes everything else, so that no run
  pays for writing back an earlier run's or the copy's dirty pages (the
  in-place stamp fdatasync()s the archive five times; the reference's
  torch.jit.save does not sync at all, which favours the reference).
  stdout goes to /dev/null. Each command runs once untimed first (warm-up,
  which also pulls the archive into the page cache: the page cache cannot be
  dropped without root, so all figures are for a warm cache), then --repeat
  times, one command after the other. It reports the median wall time
  (time.perf_counter around fork..wait4) and the largest peak RSS (ru_maxrss
  from os.wait4 on the child, KiB on Linux).

  Caveat on RSS: as in bench_inspect.py, a child's ru_maxrss includes the
  pages it inherited from this (torch-free) parent until exec(); the script
  measures that floor (a forked /bin/true) and shows a figure that sits on
  it as "<=floor".

Verification
  After the timed runs on each archive, a child of the Python with torch
  loads the last in-place stamped copy, and another the last --output
  archive, with torch.jit.load(path, _extra_files={'producer_info.json':
  ''}); each must hold a JSON object: with "run" == the last run's N for
  the in-place copy, with "tsctl_version" (an automatic field) for the
  --output archive.
  The script also checks that the in-place stamp left the archive's original
  bytes alone (the copy's first len(archive) bytes equal the archive's, but
  for the signature of the old end record, which the stamp clears). A
  failed check is a FAIL, so the benchmark cannot pass on a broken result.

Usage
  /usr/bin/python3 scripts/bench_stamp.py            # 256 MiB and 1 GiB
  /usr/bin/python3 scripts/bench_stamp.py --quick    # 64 MiB and 256 MiB
  options: --repeat N (3)  --tsctl PATH (build/bin/tsctl)
           --workdir DIR (build/bench)  --check (exit 1 when a target FAILs)

Exit status: 0, also when a target FAILs, unless --check is given (then 1 on
FAIL); 2 when the benchmark cannot run (a command fails, no disk space, ...).
Needs the Debian torch (1.13) of /usr/bin/python3 for the reference, the
verification and generating; the measuring process itself does not import
torch. Needs free disk in --workdir for about three more copies of the
largest archive (the copies are removed at the end).
"""

import argparse
import json
import os
import shutil
import sys

import bench_common as bc

MIB = bc.MIB
META_NAME = "producer_info.json"

TIME_RATIO_TARGET = bc.TIME_RATIO_TARGET  # 1/20: stamp wall / reference wall
RSS_TARGET_MIB = bc.RSS_TARGET_MIB        # 64 MiB: stamp peak RSS

REFERENCE_CODE = (
    "import json, sys, torch\n"
    "m = torch.jit.load(sys.argv[1])\n"
    "torch.jit.save(m, sys.argv[2], _extra_files={%r: json.dumps("
    "{'producer': 'bench_stamp', 'run': int(sys.argv[3])})})\n" % META_NAME
)

VERIFY_CODE = (
    "import json, sys, torch\n"
    "out = {}\n"
    "for p in sys.argv[1:]:\n"
    "    e = {%r: ''}\n"
    "    torch.jit.load(p, _extra_files=e)\n"
    "    v = e[%r]\n"
    "    out[p] = v.decode() if isinstance(v, bytes) else v\n"
    "json.dump(out, sys.stderr)\n" % (META_NAME, META_NAME)
)


def remove(path):
    try:
        os.remove(path)
    except FileNotFoundError:
        pass


def copy_synced(src, dst):
    """Copy src to dst and make the copy durable (so no later timed fsync
    pays for writing it back)."""
    remove(dst)
    shutil.copyfile(src, dst)
    fd = os.open(dst, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def same_range(a, b, start, n, chunk=8 * MIB):
    """True when bytes [start, start + n) of files a and b are equal."""
    with open(a, "rb") as fa, open(b, "rb") as fb:
        fa.seek(start)
        fb.seek(start)
        while n > 0:
            k = min(chunk, n)
            da, db = fa.read(k), fb.read(k)
            if len(da) != k or da != db:
                return False
            n -= k
    return True


def verify(python, path, copy, out, last_run):
    """Load the stamped archives with torch; return a list of (what, ok, why)."""
    checks = []
    size = os.path.getsize(path)
    with open(path, "rb") as f:  # the old end record: its signature is cleared
        f.seek(max(0, size - 65557))
        eocd = max(0, size - 65557) + f.read().rfind(b"PK\x05\x06")
    with open(copy, "rb") as f:
        f.seek(eocd)
        cleared = f.read(4) == b"\0\0\0\0"
    ok = (cleared and same_range(path, copy, 0, eocd) and
          same_range(path, copy, eocd + 4, size - eocd - 4))
    checks.append(("in-place copy keeps the original bytes", ok,
                   "" if ok else "bytes differ from the archive (or the old end record is still valid)"))
    for what, p, key, want in (("in-place copy", copy, "run", last_run),
                               ("--output archive", out, "tsctl_version",
                                None)):
        label = f"torch.jit.load({what}) {META_NAME} has \"{key}\""
        status, _, _, err = bc.run_child([python, "-c", VERIFY_CODE, p])
        lines = err.strip().splitlines()
        if status != 0:
            checks.append((label, False, f"loader exit {status}: "
                                         f"{(lines or [''])[-1]:.160}"))
            continue
        try:
            rec = json.loads(json.loads(lines[-1])[p])
        except (ValueError, IndexError, KeyError, TypeError):
            rec = None
        if not isinstance(rec, dict) or key not in rec:
            checks.append((label, False,
                           f"got {(lines or [''])[-1]!r:.160}"))
        elif want is not None and rec[key] != want:
            checks.append((label, False, f"{key}={rec[key]!r}, want {want}"))
        else:
            checks.append((label, True, f"{key}={rec[key]!r}"))
    return checks


def main():
    ap = argparse.ArgumentParser(
        description="Benchmark tsctl stamp against torch.jit.load + "
                    "torch.jit.save(_extra_files=...) "
                    "(see the comment at the top of this file).")
    bc.add_linear_options(
        ap, "the archives are cached and the copies written",
        "torch, for the reference, the verification and generating")
    args = ap.parse_args()

    tsctl, workdir, archives = bc.linear_setup(args)
    largest = max(os.path.getsize(p) for p in archives)
    free = shutil.disk_usage(workdir).free
    if free < 3 * largest + 64 * MIB:
        bc.die(f"{workdir}: {free / MIB:.0f} MiB free, the copies need about "
               f"{(3 * largest + 64 * MIB) / MIB:.0f} MiB")

    copy = os.path.join(workdir, "stamp-copy.pt")        # in-place target
    osrc = os.path.join(workdir, "stamp-output-src.pt")  # --output source
    out = os.path.join(workdir, "stamp-output.pt")       # --output result
    dst = os.path.join(workdir, "stamp-reference.pt")    # reference result
    scratch = (copy, osrc, out, dst)

    # (label, prepare(archive) untimed, argv(archive, run N))
    commands = [
        ("reference",
         lambda p: remove(dst),
         lambda p, n: [args.python, "-c", REFERENCE_CODE, p, dst, str(n)]),
        ("tsctl stamp",
         lambda p: copy_synced(p, copy),
         lambda p, n: [tsctl, "stamp", copy, "--set", f"run={n}"]),
        ("tsctl stamp --output",
         lambda p: remove(out),
         lambda p, n: [tsctl, "stamp", osrc, "--output", out]),
    ]

    # results[archive][label] = (median wall s, max peak RSS KiB)
    results, verified = {}, {}
    floor = bc.LauncherFloor()
    try:
        for path in archives:
            copy_synced(path, osrc)  # --output leaves its source alone
            runs = {label: [] for label, _, _ in commands}
            for label, prepare, argv in commands:
                # One command at a time: its untimed warm-up run first.
                for n in range(args.repeat + 1):  # run 0 is the warm-up
                    prepare(path)
                    os.sync()
                    if n:
                        floor.sample()
                    usage, _ = bc.measure(label, argv(path, n))
                    if n:
                        runs[label].append(usage)
            results[path] = {label: bc.summarize(us)
                             for label, us in runs.items()}
            verified[path] = verify(args.python, path, copy, out, args.repeat)
    finally:
        for p in scratch:
            remove(p)

    # ---- report ----------------------------------------------------------
    rss_str = floor.fmt
    size_of = bc.size_of
    print(f"tsctl stamp benchmark: {bc.tsctl_version(tsctl)} ({tsctl})")
    print(f"reference: {args.python} -c 'm = torch.jit.load(src); "
          f"torch.jit.save(m, dst, _extra_files={{\"{META_NAME}\": "
          f"json.dumps(...)}})'")
    print(f"tsctl stamp: in place on a fresh copy (copied untimed before "
          f"each run) with --set run=N; --output: a new archive")
    print(f"{args.repeat} timed runs per command after 1 untimed warm-up run "
          f"each; sync() before each run; warm page cache; median wall, "
          f"max peak RSS")
    print(floor.line())
    print()
    bc.print_table([(size_of(path), label, *results[path][label])
                    for path in archives for label, _, _ in commands], rss_str)
    print()

    failed = False
    print(f"tsctl stamp (in place): time ratio stamp/reference (target <= "
          f"{TIME_RATIO_TARGET:.2f}), peak RSS (target <= {RSS_TARGET_MIB} "
          f"MiB):")
    for path in archives:
        ref_wall = results[path]["reference"][0]
        wall, rss = results[path]["tsctl stamp"]
        ratio, t_ok, r_ok = bc.meets_targets(wall, ref_wall, rss)
        failed |= not (t_ok and r_ok)
        print(f"  {size_of(path):>10}  time ratio {ratio:.4f} "
              f"(1/{1 / ratio:.0f}) {bc.verdict(t_ok)}   "
              f"peak RSS {rss_str(rss)} MiB {bc.verdict(r_ok)}")
    print("tsctl stamp --output (no target): time ratio stamp/reference")
    for path in archives:
        ratio = (results[path]["tsctl stamp --output"][0]
                 / results[path]["reference"][0])
        print(f"  {size_of(path):>10}  time ratio {ratio:.4f}")
    print()

    bc.print_growth(results, archives, ("tsctl stamp", "tsctl stamp --output"),
                    rss_str)
    print()

    print("verification (after the timed runs):")
    for path in archives:
        for what, ok, why in verified[path]:
            failed |= not ok
            print(f"  {size_of(path):>10}  {what}: {bc.verdict(ok)}"
                  f"{f' ({why})' if why else ''}")
    print()
    print(f"overall: {bc.verdict(not failed)} "
          f"(in-place time ratio, peak RSS and verification)")
    return bc.exit_status(failed, args.check)


if __name__ == "__main__":
    sys.exit(main())
