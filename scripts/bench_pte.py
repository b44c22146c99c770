#!/usr/bin/env python3
"""Times `tsctl inspect --format json` of an ExecuTorch program against
ExecuTorch's own Python deserializer of the same bytes (issue #39's measure:
tsctl at most 1/20 of ExecuTorch's time, import excluded).

    scripts/install_executorch.sh
    .venv-executorch/bin/python scripts/bench_pte.py build/bin/tsctl [FILE] [--repeat N]

FILE defaults to the largest .pte (by bytes) of shared/corpus/pte beside the
repository. tsctl: every run a fresh process, timed from fork to exit (so it
includes process start, reading and rendering), stdout to /dev/null, one
untimed warm-up run first (the page cache is warm for both sides); the
median of N. ExecuTorch (the installed version, 1.5.1 by
install_executorch.sh), in this process after its import, on the bytes
already read; the first call (it also imports the generated flatbuffer
classes, deserialize_pte_binary is timed first) and the median of N
after it, for each stage:
  read       ProgramT.InitFromPackedBuf: the flatbuffer into the generated
             Python objects (reading the flatbuffer and nothing else)
  convert    _flatbuffer_to_program: read, then convert to exir.schema's
             dataclasses
  deserialize_pte_binary: the header, convert, and _restore_segments (moves
             segment bytes into the Program): what ExecuTorch calls to read a .pte
  flatc-json the deserializer of executorch 1.0 to 1.3 (1.4 replaced it):
             flatc decompiles to JSON (_program_flatbuffer_to_json), then
             _json_to_dataclass; 1.5.1's flatc and functions
The ratio is tsctl's median over each stage's median; the target is <= 0.05
against deserialize_pte_binary.

Without process start-up on either side: tsctl_bench_pte_read (built beside
tsctl, from tests/bench/pte_read.cc) times in one process what inspect does,
ReadPte alone ("read") and ReadPte then RenderPteJson ("inspect"), median of
101 each; those medians over deserialize_pte_binary's are printed too, the
like-for-like ratio.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time
import warnings

warnings.filterwarnings("ignore")
import logging  # noqa: E402

logging.disable(logging.WARNING)


def largest_program(corpus):
    files = [os.path.join(corpus, f) for f in os.listdir(corpus) if f.endswith(".pte")]
    return max(files, key=os.path.getsize)


def time_tsctl(tsctl, path, repeat):
    cmd = [tsctl, "inspect", "--format", "json", path]
    subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)  # warm-up
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - t)
    return times


def time_call(fn, repeat):
    t = time.perf_counter()
    fn()
    first = time.perf_counter() - t
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return first, times


def ms(seconds):
    return f"{seconds * 1e3:8.2f} ms"


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tsctl")
    ap.add_argument("file", nargs="?")
    ap.add_argument("--repeat", type=int, default=21)
    ap.add_argument("--corpus", default=os.path.normpath(os.path.join(here, "..", "..", "shared", "corpus", "pte")))
    a = ap.parse_args()
    path = a.file or largest_program(a.corpus)

    t0 = time.perf_counter()
    import json
    from importlib.metadata import version as dist_version
    from executorch.exir._serialize._program import deserialize_pte_binary
    from executorch.exir._serialize._flatbuffer import _program_flatbuffer_to_json
    from executorch.exir._serialize._flatbuffer_program import _flatbuffer_to_program
    from executorch.exir._serialize._dataclass import _json_to_dataclass
    from executorch.exir._serialize._program import _get_extended_header
    from executorch.exir._serialize.generated.executorch_flatbuffer.Program import ProgramT
    from executorch.exir.schema import Program
    import_s = time.perf_counter() - t0

    data = open(path, "rb").read()
    eh = _get_extended_header(data)
    flatbuffer = data[:eh.program_size] if eh and eh.is_valid() else data

    # deserialize_pte_binary first: its first call imports and patches the
    # generated classes once (_patch_generated_flatbuffer_aliases), as a
    # process that reads one file pays.
    stages = [
        ("deserialize_pte_binary", lambda: deserialize_pte_binary(data)),
        ("read", lambda: ProgramT.InitFromPackedBuf(flatbuffer)),
        ("convert", lambda: _flatbuffer_to_program(flatbuffer)),
        ("flatc-json", lambda: _json_to_dataclass(json.loads(_program_flatbuffer_to_json(flatbuffer)), cls=Program)),
    ]
    print(f"file      {path} ({len(data)} bytes, flatbuffer {len(flatbuffer)} bytes)")
    print(f"executorch {dist_version('executorch')} (import took {import_s:.2f} s, excluded); "
          f"median of {a.repeat} runs")
    ts = statistics.median(time_tsctl(a.tsctl, path, a.repeat))
    print(f"tsctl inspect --format json, whole process   {ms(ts)}")
    results = {}
    for name, fn in stages:
        first, times = time_call(fn, a.repeat)
        med = statistics.median(times)
        results[name] = med
        print(f"executorch {name:24} first {ms(first)}  median {ms(med)}  tsctl/this {ts / med:6.3f}")
    ratio = ts / results["deserialize_pte_binary"]
    verdict = "met" if ratio <= 0.05 else "NOT met"
    print(f"ratio tsctl / deserialize_pte_binary = {ratio:.3f} (1/{1 / ratio:.1f}); target <= 0.05 (1/20): {verdict}")
    in_process(a.tsctl, path, results["deserialize_pte_binary"])
    return 0


def in_process(tsctl, path, deserialize_s):
    bench = os.path.join(os.path.dirname(os.path.abspath(tsctl)), "tsctl_bench_pte_read")
    if not os.path.exists(bench):
        print(f"in one process: {bench} not built (cmake --build BUILD --target tsctl_bench_pte_read)")
        return
    out = subprocess.run([bench, path], stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout
    fields = dict(line.split() for line in out.splitlines())
    for name in ("read", "inspect"):
        s = float(fields[name + "_median_us"]) * 1e-6
        r = s / deserialize_s
        verdict = "met" if r <= 0.05 else "NOT met"
        print(f"in one process: tsctl {name:8} {ms(s)}  / deserialize_pte_binary = {r:.3f} (1/{1 / r:.0f}); "
              f"target <= 0.05: {verdict}")


if __name__ == "__main__":
    sys.exit(main())
