#!/usr/bin/python3
"""The TorchScript twin of testdata/pte/linear.pte, for validate's
--reference-model across formats (a .pte checked against a TorchScript
archive on the same inputs): the module of scripts/gen_pte_testdata.py's
linear.pte (Linear(4, 3) seeded 0, relu, + 1.0), traced.

    /usr/bin/python3 scripts/gen_pte_twin.py [--out testdata/pte]

Written with Debian's torch 1.13.1, so that every build's LibTorch (1.13
and 2.x) loads it; the seeded initialisation gives the same weights as the
torch 2.15 that wrote linear.pte (validate linear.pte --reference-model
linear_twin.pt passes at the default tolerances).
"""
import argparse
import os

import torch


class Linear(torch.nn.Module):
    def __init__(self, seed):
        super().__init__()
        torch.manual_seed(seed)
        self.lin = torch.nn.Linear(4, 3)

    def forward(self, x):
        return torch.relu(self.lin(x)) + 1.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testdata", "pte"))
    out = ap.parse_args().out
    traced = torch.jit.trace(Linear(0).eval(), (torch.ones(2, 4),))
    path = os.path.join(out, "linear_twin.pt")
    torch.jit.save(traced, path)
    print("%-24s %6d bytes" % ("linear_twin.pt", os.path.getsize(path)))


if __name__ == "__main__":
    main()
