#!/usr/bin/env python3
"""Small ExecuTorch files of tsctl's own, for the unit tests (testdata/pte/).

    PYTHON scripts/gen_pte_testdata.py [--out testdata/pte]

PYTHON is an interpreter with torch 2.x and PyPI's executorch 1.5.1 (the
files in the repository were made with torch 2.15.0 and executorch 1.5.1;
scripts/test.sh never runs this: the files are checked in, so the tests that
read them run on every machine, with or without ../shared/corpus). Fixed
seeds: the same versions write the same bytes.

  add.pte                  x + y, no stored tensors, no extended header
  linear.pte               Linear(4, 3) -> relu -> + 1.0, constants in a segment
  linear_b.pte             the same model with other weights (seed 1)
  linear_external.pte/.ptd the same model, weights in a .ptd (external_constants)
  linear_xnnpack.pte       the same model lowered to XNNPACK (a delegate blob)
  linear_xnnpack_b.pte     ... with the weights of linear_b.pte
  linear.bpte              linear.pte bundled with one test case
  linear_xnnpack_tanh.pte, linear_xnnpack_sigmoid.pte
                           linear_xnnpack.pte with tanh, sigmoid for relu: the same
                           weights and program, delegate blobs of one size that differ
"""
import argparse
import os
import shutil
import tempfile

import torch
from torch.export import export
from executorch.exir import ExecutorchBackendConfig, to_edge, to_edge_transform_and_lower
from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
from executorch.devtools import BundledProgram
from executorch.devtools.bundled_program.config import MethodTestCase, MethodTestSuite
from executorch.devtools.bundled_program.serialize import serialize_from_bundled_program_to_flatbuffer


class Add(torch.nn.Module):
    def forward(self, x, y):
        return x + y


class Linear(torch.nn.Module):
    def __init__(self, seed, act=torch.relu):
        super().__init__()
        torch.manual_seed(seed)
        self.lin = torch.nn.Linear(4, 3)
        self.act = act

    def forward(self, x):
        return self.act(self.lin(x)) + 1.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testdata", "pte"))
    out = ap.parse_args().out
    os.makedirs(out, exist_ok=True)

    def save(name, data):
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
        print("%-24s %6d bytes" % (name, len(data)))

    example = (torch.ones(2, 4),)
    save("add.pte", to_edge(export(Add(), (torch.ones(2, 2), torch.ones(2, 2)))).to_executorch().buffer)
    for suffix, seed in (("", 0), ("_b", 1)):
        model = Linear(seed).eval()
        program = to_edge(export(model, example)).to_executorch()
        save("linear%s.pte" % suffix, program.buffer)
        lowered = to_edge_transform_and_lower(export(model, example), partitioner=[XnnpackPartitioner()])
        save("linear_xnnpack%s.pte" % suffix, lowered.to_executorch().buffer)
        if seed:
            continue
        for act in ("tanh", "sigmoid"):
            lowered = to_edge_transform_and_lower(export(Linear(seed, getattr(torch, act)).eval(), example),
                                                  partitioner=[XnnpackPartitioner()])
            save("linear_xnnpack_%s.pte" % act, lowered.to_executorch().buffer)
        external = to_edge(export(model, example)).to_executorch(ExecutorchBackendConfig(external_constants=True))
        save("linear_external.pte", external.buffer)
        with tempfile.TemporaryDirectory() as d:
            external.write_tensor_data_to_file(d)
            (ptd,) = [f for f in os.listdir(d) if f.endswith(".ptd")]
            shutil.copy(os.path.join(d, ptd), os.path.join(out, "linear_external.ptd"))
            print("%-24s %6d bytes" % ("linear_external.ptd", os.path.getsize(os.path.join(out, "linear_external.ptd"))))
        suite = MethodTestSuite(method_name="forward",
                                test_cases=[MethodTestCase(inputs=list(example), expected_outputs=[model(*example)])])
        save("linear.bpte", serialize_from_bundled_program_to_flatbuffer(BundledProgram(program, [suite])))


if __name__ == "__main__":
    main()
