#!/usr/bin/env python3
"""Views placed past their storage (issue #51 item 1): the as_strided family
and set_ with an offset are checked against the storage's bytes in 128-bit
arithmetic, statically where the arguments are constants and at run time
before the operator runs (lib/src/torch/view_guard.h).

Models made here with the build's own torch (torch.jit.script):
- const_offset: as_strided(x, [18432], [1], 2305843009213675520), Elastic's
  overflow (4 * (offset + 18432) wraps past 2^63, which LibTorch 1.13's
  bounds check lets through): torch.unsafe FAIL naming the operator, its
  numbers and the source line, before anything runs;
- computed_offset: the same offset computed from the input's size, which no
  static check sees: the guard stops the child before as_strided runs
  (torch.unsafe FAIL, "stopped before it ran"), with --no-sandbox too, and
  bench ends with the same line, never a latency;
- size_stride: sizes [2, 2] with a stride of 2^62 (an extent no storage has);
- negative: a stride of -1 from offset 0 (a view starting before its storage);
- within_int64: a computed view past its storage but within int64, which
  LibTorch refuses itself: its own error (torch.run FAIL), not a finding;
- reshape_alias: torch.ops.aten._reshape_alias, whose kernel sets a caller's
  sizes and strides with no bounds check at all: ts.hooks refuses it whatever
  its arguments; loaded anyway (bench --allow-load-hooks), a view 16 KiB past
  a 16-byte storage is stopped before it runs, one inside the tensor runs;
- honest: as_strided inside the tensor (constant and computed): PASS.
LibTorch's own views (view, narrow, expand, ...) refusing overflowing
arguments: tests/unit/view_guard_test.cc.

Usage: view_guard_test.py TSCTL PYTHON. Exit 77 when PYTHON has no torch.
"""
import os
import subprocess
import sys
import tempfile

from validate_checks import check, finish, validate

MAKE = r'''
import sys, os, torch
out = sys.argv[1]
class ConstOffset(torch.nn.Module):
    def forward(self, x):
        return torch.as_strided(x, [18432], [1], 2305843009213675520).sum()
class ComputedOffset(torch.nn.Module):
    def forward(self, x):
        offset = x.size(0) * 2305843009213675520
        return torch.as_strided(x, [18432], [1], offset).sum()
class SizeStride(torch.nn.Module):
    def forward(self, x):
        return torch.as_strided(x, [2, 2], [4611686018427387904, 1], 0).sum()
class Negative(torch.nn.Module):
    def forward(self, x):
        return torch.as_strided(x, [4], [-1], 0).sum()
class WithinInt64(torch.nn.Module):
    def forward(self, x):
        return torch.as_strided(x, [4], [1], x.size(1) * 100).sum()
class ReshapeAlias(torch.nn.Module):
    def forward(self, x):
        return torch.ops.aten._reshape_alias(x, [x.size(1) * 1024], [1]).sum()
class ReshapeAliasHonest(torch.nn.Module):
    def forward(self, x):
        return torch.ops.aten._reshape_alias(x, [2, x.size(1) // 2], [x.size(1) // 2, 1]).sum()
class Honest(torch.nn.Module):
    def forward(self, x):
        a = torch.as_strided(x, [2, 2], [1, 2], 0)
        b = torch.as_strided(x, [2], [1], x.size(1) - 2)
        return a.sum() + b.sum()
for name, cls in [("const_offset", ConstOffset), ("computed_offset", ComputedOffset),
                  ("size_stride", SizeStride), ("negative", Negative), ("within_int64", WithinInt64),
                  ("reshape_alias", ReshapeAlias),
                  ("reshape_alias_honest", ReshapeAliasHonest), ("honest", Honest)]:
    torch.jit.script(cls()).save(os.path.join(out, name + ".pt"))
'''


def main():
    tsctl, python = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as d:
        script = os.path.join(d, "make.py")  # torch.jit.script reads the classes' source
        with open(script, "w") as f:
            f.write(MAKE)
        made = subprocess.run([python, "-W", "ignore", script, d], capture_output=True, text=True, timeout=300)
        if made.returncode != 0:
            print("cannot make the models with " + python + ": skipped: " + made.stderr[-400:])
            return 77
        p = lambda name: os.path.join(d, name + ".pt")

        checks, archive = validate(tsctl, p("const_offset"), "--input", "1x4")
        u = checks.get("torch.unsafe", {})
        check(u.get("status") == "FAIL" and "aten::as_strided" in u.get("message", "") and
              "2305843009213675520" in u.get("message", "") and ".py:" in u.get("message", ""),
              f"constant overflowing offset: torch.unsafe FAIL naming the op, its numbers and the source line: {u}")
        check(checks.get("torch.run", {}).get("status") != "PASS" and archive["result"] == "FAILED",
              f"constant overflowing offset: nothing runs, FAILED: {archive['result']}")

        for flags in ([], ["--no-sandbox"]):
            checks, archive = validate(tsctl, p("computed_offset"), "--input", "1x4", *flags)
            u = checks.get("torch.unsafe", {})
            check(u.get("status") == "FAIL" and "aten::as_strided" in u.get("message", "") and
                  "stopped before it ran" in u.get("message", "") and "2305843009213675520" in u.get("message", ""),
                  f"computed overflowing offset {flags}: the guard stops the child before as_strided runs: {u}")
            check(archive["result"] == "FAILED" and checks.get("torch.run", {}).get("status") != "PASS",
                  f"computed overflowing offset {flags}: FAILED, never PASS: {archive['result']}")

        b = subprocess.run([tsctl, "bench", "--input", "1x4", "--iters", "3", "--warmup", "1", p("computed_offset")],
                           capture_output=True, text=True, timeout=300)
        check(b.returncode != 0 and "aten::as_strided" in b.stderr and "stopped before it ran" in b.stderr and
              b.stderr.count("\n") == 1, f"bench of the computed offset: one error line, exit {b.returncode}: {b.stderr[:400]}")

        for name in ("size_stride", "negative"):
            checks, archive = validate(tsctl, p(name), "--input", "1x4")
            check(archive["result"] == "FAILED" and checks.get("torch.unsafe", {}).get("status") == "FAIL",
                  f"{name}: torch.unsafe FAIL: {checks.get('torch.unsafe')}")

        # Out of bounds within int64: LibTorch's own check refuses it, so the
        # model's error stands (an honest model on a wrong guess is not a finding).
        checks, archive = validate(tsctl, p("within_int64"), "--input", "1x4")
        run = checks.get("torch.run", {})
        check(run.get("status") == "FAIL" and "out of bounds" in run.get("message", "") and
              checks.get("torch.unsafe", {}).get("status", "PASS") == "PASS",
              f"a view out of bounds within int64: LibTorch's own error, torch.run FAIL: {run}")

        # _reshape_alias is refused whatever its arguments (ts.hooks, operators.cc);
        # where the user loads it anyway, the guard still stops a view past its storage.
        checks, archive = validate(tsctl, p("reshape_alias"), "--input", "1x4")
        h = checks.get("ts.hooks", {})
        check(archive["result"] == "FAILED" and h.get("status") == "FAIL" and "aten::_reshape_alias" in h.get("message", ""),
              f"_reshape_alias: ts.hooks FAIL, not loaded: {h}")
        bench = lambda name: subprocess.run([tsctl, "bench", "--allow-load-hooks", "--input", "1x4", "--iters", "2",
                                             "--warmup", "0", p(name)], capture_output=True, text=True, timeout=300)
        b = bench("reshape_alias")
        check(b.returncode != 0 and "aten::_reshape_alias" in b.stderr and "stopped before it ran" in b.stderr and
              "without any bounds check" in b.stderr and b.stderr.count("\n") == 1,
              f"bench --allow-load-hooks: _reshape_alias 16 KiB past a 16-byte storage is stopped before it runs: {b.stderr[:400]}")
        b = bench("reshape_alias_honest")
        check(b.returncode == 0 and "mean" in b.stdout,
              f"bench --allow-load-hooks: _reshape_alias inside its storage runs: exit {b.returncode} {b.stderr[:300]}")

        checks, archive = validate(tsctl, p("honest"), "--input", "1x4")
        check(archive["result"] == "PASSED" and checks.get("torch.run", {}).get("status") == "PASS" and
              checks.get("torch.unsafe", {}).get("status", "PASS") == "PASS",
              f"honest as_strided (constant and computed offsets) still PASSes: {archive['result']} "
              f"{ {k: v['status'] for k, v in checks.items()} }")
    return finish()


if __name__ == "__main__":
    sys.exit(main())
