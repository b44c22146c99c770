#!/usr/bin/python3
"""Benchmark `tsctl diff A B` against reading both files (`cat A B`).

Issue 14 ("tsctl diff"). Targets:
  * time:  tsctl diff takes at most 3x the time of `cat A B > /dev/null`
           measured in the same run;
  * RSS:   tsctl diff peaks at no more than 64 MiB resident.

What it measures
  A is bench_inspect.py's nn.Sequential of 16 x nn.Linear(4096, 4096)
  (~1 GiB of float32; with --quick 4 layers, ~256 MiB), generated once into
  --workdir (default build/bench) and shared with bench_inspect.py and
  bench_stamp.py. B is a copy of A with one float32 element changed in every
  1 MiB of every tensor data record (so no record's CRC-32 matches and diff
  must stream and compare every storage of both archives), the CRC-32 fields
  of the local and central headers patched to match. Commands, every run in
  a fresh child process, stdout to /dev/null:
    cat A B          /bin/cat A B (the reference: reading both files)
    tsctl diff       tsctl diff A B          (exit status 1: they differ)
    tsctl diff --json tsctl diff --json A B
  Each command runs once untimed first (warm-up; it also pulls both files
  into the page cache, which cannot be dropped without root: all figures are
  for a warm cache), then --repeat times. It reports the median wall time
  and the largest peak RSS (ru_maxrss from wait4; see bench_common.py for
  the launcher's RSS floor, shown as "<=floor").

Usage
  /usr/bin/python3 scripts/bench_diff.py            # two ~1 GiB archives
  /usr/bin/python3 scripts/bench_diff.py --quick    # two ~256 MiB archives
  options: --repeat N (3)  --tsctl PATH (build/bin/tsctl)
           --workdir DIR (build/bench)  --check (exit 1 when a target FAILs)

Exit status: 0, also when a target FAILs, unless --check is given (then 1 on
FAIL); 2 when the benchmark cannot run.
"""

import argparse
import mmap
import os
import shutil
import struct
import sys
import zipfile
import zlib

import bench_common as bc

TIME_RATIO_TARGET = 3.0  # tsctl diff wall / cat A B wall
RSS_TARGET_MIB = 64
STEP = 1 << 20           # one changed element per this many bytes of data


def patch_crc(buf, start_dir, name, crc):
    """Write `crc` into the central directory entry of `name`."""
    pos = start_dir
    while buf[pos:pos + 4] == b"PK\x01\x02":
        n, m, k = struct.unpack("<HHH", buf[pos + 28:pos + 34])
        if buf[pos + 46:pos + 46 + n].decode("utf-8", "replace") == name:
            buf[pos + 16:pos + 20] = struct.pack("<I", crc)
            return
        pos += 46 + n + m + k
    bc.die(f"{name}: not in the central directory")


def make_changed_copy(src, dst):
    """Copy src to dst with one float32 element per STEP bytes of each data
    record changed, and the CRC-32 fields fixed. Returns the number changed."""
    if bc.is_cached(dst):
        return None
    print(f"writing {dst} ...", file=sys.stderr, flush=True)
    tmp = dst + ".tmp"
    shutil.copyfile(src, tmp)
    with zipfile.ZipFile(src) as zf:
        infos = [i for i in zf.infolist() if "/data/" in i.filename]
        start_dir = zf.start_dir
    changed = 0
    with open(tmp, "r+b") as f, mmap.mmap(f.fileno(), 0) as buf:
        for info in infos:
            if info.compress_type != zipfile.ZIP_STORED:
                bc.die(f"{info.filename}: not stored")
            h = info.header_offset
            n, m = struct.unpack("<HH", buf[h + 26:h + 30])
            data = h + 30 + n + m
            for off in range(0, info.file_size - 3, STEP):
                (v,) = struct.unpack("<f", buf[data + off:data + off + 4])
                buf[data + off:data + off + 4] = struct.pack("<f", v + 0.25)
                changed += 1
            crc = 0
            for off in range(0, info.file_size, 16 * bc.MIB):
                crc = zlib.crc32(buf[data + off:data + min(info.file_size, off + 16 * bc.MIB)], crc)
            buf[h + 14:h + 18] = struct.pack("<I", crc)
            patch_crc(buf, start_dir, info.filename, crc)
        buf.flush()
    os.replace(tmp, dst)
    bc.write_meta(dst, {"from": os.path.basename(src), "changed_elements": changed, "step": STEP})
    return changed


def run(label, argv, ok_statuses):
    status, usage, _, err = bc.run_child(argv)
    if status not in ok_statuses:
        bc.die(f"{label} exited with status {status}: {' '.join(argv)}\n{err.strip()[-2000:]}")
    return usage


def main():
    ap = argparse.ArgumentParser(description="Benchmark tsctl diff against cat A B "
                                             "(see the comment at the top of this file).")
    bc.add_linear_options(ap, "the archives are cached", "torch, for generating A")
    args = ap.parse_args()
    bc.check_at_least_1(args.repeat, "--repeat")
    tsctl = bc.tsctl_path(args.tsctl)
    bc.check_python(args.python)
    workdir = bc.make_workdir(args.workdir)
    a = bc.ensure_linear(workdir, 4 if args.quick else 16, args.python)
    b = os.path.splitext(a)[0] + ".changed.pt"
    if shutil.disk_usage(workdir).free < os.path.getsize(a) + 64 * bc.MIB and not bc.is_cached(b):
        bc.die(f"{workdir}: not enough free disk for a copy of {a}")
    make_changed_copy(a, b)

    commands = [  # (label, argv, accepted exit statuses)
        ("cat A B", ["/bin/cat", a, b], (0,)),
        ("tsctl diff", [tsctl, "diff", a, b], (1,)),
        ("tsctl diff --json", [tsctl, "diff", "--json", a, b], (1,)),
    ]
    floor = bc.LauncherFloor()
    results = {}
    for label, argv, ok in commands:
        run(label, argv, ok)  # warm-up
        usages = []
        for _ in range(args.repeat):
            floor.sample()
            usages.append(run(label, argv, ok))
        results[label] = bc.summarize(usages)

    print(f"tsctl diff benchmark: {bc.tsctl_version(tsctl)} ({tsctl})")
    print(f"A: {a} ({bc.size_of(a)}); B: A with one float32 element changed per "
          f"{STEP // bc.MIB} MiB of tensor data ({bc.size_of(b)})")
    print(f"{args.repeat} timed runs per command after 1 untimed warm-up run each; "
          f"warm page cache; median wall, max peak RSS")
    print(floor.line())
    print()
    bc.print_table([(None, label, *results[label]) for label, _, _ in commands], floor.fmt)
    print()
    ref_wall = results["cat A B"][0]
    failed = False
    print(f"time ratio tsctl/cat (target <= {TIME_RATIO_TARGET:.1f}), "
          f"peak RSS (target <= {RSS_TARGET_MIB} MiB):")
    for label, _, _ in commands[1:]:
        wall, rss = results[label]
        ratio = wall / ref_wall
        t_ok, r_ok = ratio <= TIME_RATIO_TARGET, rss <= RSS_TARGET_MIB * 1024
        failed |= not (t_ok and r_ok)
        print(f"  {label:<22} time ratio {ratio:.2f} {bc.verdict(t_ok)}   "
              f"peak RSS {floor.fmt(rss)} MiB {bc.verdict(r_ok)}")
    print()
    print(f"overall: {bc.verdict(not failed)} (time ratio and peak RSS targets)")
    return bc.exit_status(failed, args.check)


if __name__ == "__main__":
    sys.exit(main())
