#!/usr/bin/env python3
"""Runs a bundled program's (.bpte) test cases on ExecuTorch's own runtime and
compares what it returns to the expected outputs the file carries (issue #39:
what `tsctl validate` checks statically, checked by running it). Prints, per
test case, the largest absolute error and a verdict, then a total; exits 1 if
a case fails or the runtime cannot run the program.

    scripts/install_executorch.sh
    .venv-executorch/bin/python scripts/pte_bundled_run.py [FILE.bpte] [--atol A] [--rtol R]

FILE defaults to shared/corpus/pte/executorch__ea5b42c0_bundled_program.bpte.
Two ways, both ExecuTorch's (1.5.1, with its prebuilt portable and optimized
kernels and XNNPACK):
  run      the test cases read by its Python deserializer
           (deserialize_from_flatbuffer_to_bundled_program), the embedded
           program loaded by executorch.runtime, each method executed on the
           inputs, outputs compared here with torch.allclose(atol, rtol)
  verify   the pybindings' own bundled path: _load_bundled_program_from_buffer,
           then BundledModule.verify_result_with_bundled_expected_output per
           case, which loads the case's inputs, executes and raises when an
           output differs beyond rtol 1e-5, atol 1e-8 (in 1.5.1 the module
           has it; pybindings.pyi still shows the older load_bundled_input
           and plan_execute on the ExecuTorchModule)
"""
import argparse
import os
import sys
import warnings

warnings.filterwarnings("ignore")
import logging  # noqa: E402

logging.disable(logging.WARNING)

import torch  # noqa: E402
from executorch.devtools.bundled_program.serialize import deserialize_from_flatbuffer_to_bundled_program  # noqa: E402
from executorch.exir.scalar_type import ScalarType  # noqa: E402

DTYPES = {ScalarType.BYTE: torch.uint8, ScalarType.CHAR: torch.int8, ScalarType.SHORT: torch.int16,
          ScalarType.INT: torch.int32, ScalarType.LONG: torch.int64, ScalarType.HALF: torch.float16,
          ScalarType.FLOAT: torch.float32, ScalarType.DOUBLE: torch.float64, ScalarType.BOOL: torch.bool,
          ScalarType.BFLOAT16: torch.bfloat16}


def to_python(value):
    """A bundled Value as what the runtime takes: a tensor, int, float or bool."""
    v = value.val
    if hasattr(v, "data"):
        dtype = DTYPES[ScalarType(int(v.scalar_type))]
        t = torch.frombuffer(bytearray(v.data), dtype=dtype) if v.data else torch.empty(0, dtype=dtype)
        return t.reshape(list(v.sizes)).clone()
    for field in ("int_val", "double_val", "bool_val"):
        if hasattr(v, field):
            return getattr(v, field)
    raise ValueError(f"bundled value of type {type(v).__name__}")


def max_abs_error(got, want):
    if isinstance(want, torch.Tensor):
        if not isinstance(got, torch.Tensor) or got.shape != want.shape:
            return float("inf")
        if want.numel() == 0:
            return 0.0
        return (got.double() - want.double()).abs().max().item()
    return abs(float(got) - float(want))


def close(got, want, atol, rtol):
    if isinstance(want, torch.Tensor):
        return (isinstance(got, torch.Tensor) and got.shape == want.shape and got.dtype == want.dtype
                and torch.allclose(got.double(), want.double(), atol=atol, rtol=rtol))
    return abs(float(got) - float(want)) <= atol + rtol * abs(float(want))


def run_cases(bp, atol, rtol):
    from executorch.runtime import Runtime
    program = Runtime.get().load_program(bytes(bp.program))
    failed = total = 0
    for suite in bp.method_test_suites:
        method = program.load_method(suite.method_name)
        for i, case in enumerate(suite.test_cases):
            total += 1
            inputs = [to_python(v) for v in case.inputs]
            want = [to_python(v) for v in case.expected_outputs]
            got = list(method.execute(inputs))
            err = max((max_abs_error(g, w) for g, w in zip(got, want)), default=0.0)
            ok = len(got) == len(want) and all(close(g, w, atol, rtol) for g, w in zip(got, want))
            failed += not ok
            print(f"run     {suite.method_name}[{i}]: {len(inputs)} input(s), {len(got)} output(s), "
                  f"max abs error {err:.3g}: {'pass' if ok else 'FAIL'}")
    return total, failed


def verify_cases(data, bp):
    from executorch.extension.pybindings import portable_lib as pl
    bundle = pl._load_bundled_program_from_buffer(data)
    failed = total = 0
    for suite in bp.method_test_suites:
        for i, case in enumerate(suite.test_cases):
            total += 1
            want = [to_python(v) for v in case.expected_outputs]
            try:
                got = list(bundle.verify_result_with_bundled_expected_output(suite.method_name, i))
            except Exception as ex:
                failed += 1
                print(f"verify  {suite.method_name}[{i}]: FAIL ({str(ex).splitlines()[0] if str(ex) else type(ex).__name__})")
                continue
            err = max((max_abs_error(g, w) for g, w in zip(got, want)), default=0.0)
            print(f"verify  {suite.method_name}[{i}]: max abs error {err:.3g}: pass")
    return total, failed


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file", nargs="?", default=os.path.normpath(os.path.join(
        here, "..", "..", "shared", "corpus", "pte", "executorch__ea5b42c0_bundled_program.bpte")))
    ap.add_argument("--atol", type=float, default=1e-8)
    ap.add_argument("--rtol", type=float, default=1e-5)
    a = ap.parse_args()
    data = open(a.file, "rb").read()
    bp = deserialize_from_flatbuffer_to_bundled_program(data)
    print(f"file    {a.file}: bundled program version {bp.version}, program {len(bp.program)} bytes, "
          f"{sum(len(s.test_cases) for s in bp.method_test_suites)} test case(s) in "
          f"{len(bp.method_test_suites)} suite(s)")
    bad = 0
    for name, fn in (("run", lambda: run_cases(bp, a.atol, a.rtol)), ("verify", lambda: verify_cases(data, bp))):
        try:
            total, failed = fn()
        except Exception as ex:
            bad += 1
            print(f"{name:7} could not run: {type(ex).__name__}: {str(ex).splitlines()[0] if str(ex) else ''}")
            continue
        bad += failed
        print(f"{name:7} {total - failed} of {total} test case(s) pass")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
