#!/usr/bin/python3
"""Generates testdata/args/: models whose methods take every argument type
TorchScript has, with input files and references written by Python, for
`--arg`, `--load-inputs`, `--save-outputs`, `--reference` and inferred
inputs. Deterministic: run with /usr/bin/python3 (torch 1.13)."""
import os
import sys
from typing import Dict, List, Optional, Tuple

import numpy as np
import torch
from torch import Tensor

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testdata", "args")


class AllArgs(torch.nn.Module):
    def forward(self, x: Tensor, k: int, scale: float, flag: bool, name: str, maybe: Optional[Tensor],
                sizes: List[int], pair: Tuple[Tensor, int], feats: Dict[str, Tensor],
                nested: List[Dict[str, List[int]]], weights: Dict[int, float]
                ) -> Tuple[Tensor, Dict[str, Tensor], List[int], str, float]:
        y = x * scale + k
        if flag:
            y = y + 1.0
        if maybe is not None:
            y = y + maybe
        y = y + pair[0] * pair[1]
        for key in sorted(feats.keys()):
            y = y + feats[key].sum()
        total = 0.0
        for s in sizes:
            total += s
        for d in nested:
            for key, values in d.items():
                for v in values:
                    total += v
        for i, w in weights.items():
            total += i * w
        return y, {"scores": y.sum(dim=-1), "name_len": torch.tensor([len(name)])}, [s * 2 for s in sizes], name + "!", total


class NoForward(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 2)

    @torch.jit.export
    def encode(self, x: Tensor) -> Tensor:
        return self.lin(x)

    @torch.jit.export
    def tag(self) -> str:
        return "no-forward"


class Embed(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(50, 8)
        self.head = torch.nn.Linear(8, 3)

    def forward(self, tokens: Tensor) -> Tensor:
        return self.head(self.emb(tokens).mean(dim=1))


class Recurrent(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(12, 6, batch_first=True)

    def forward(self, seq: Tensor) -> Tensor:
        out, _ = self.lstm(seq)
        return out[:, -1]


class Flat(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(784, 10)

    def forward(self, img: Tensor) -> Tensor:
        return self.fc(img.view(-1, 784))


class ReturnsNumber(torch.nn.Module):
    def forward(self, x: Tensor) -> float:
        return float(x.sum().item()) * 0.0 + 7.0


def all_args_inputs():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(2, 3, generator=g)
    return (x, 3, 0.5, True, "abc", None, [1, 2, 3], (torch.ones(2, 3), 2), {"a": torch.ones(1), "b": torch.full((2,), 2.0)},
            [{"p": [1, 2]}, {"q": [3]}], {1: 0.5, 2: 0.25})


class Pair(torch.nn.Module):
    """Two tensor arguments whose order matters: an .npz names them."""

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x - 2 * y


def gen_pair():
    """pair.inputs.npz holds y before x (np.savez keeps keyword order): bound
    by name it gives pair.expected.pt, by position it does not."""
    pair = torch.jit.script(Pair().eval())
    pair.save(os.path.join(OUT, "pair.pt"))
    g = torch.Generator().manual_seed(2)
    x, y = torch.randn(2, 3, generator=g), torch.randn(2, 3, generator=g)
    np.savez(os.path.join(OUT, "pair.inputs.npz"), y=y.numpy(), x=x.numpy())
    torch.save(pair(x, y), os.path.join(OUT, "pair.expected.pt"))


def main():
    os.makedirs(OUT, exist_ok=True)
    torch.manual_seed(0)
    m = torch.jit.script(AllArgs().eval())
    m.save(os.path.join(OUT, "all_args.pt"))
    inputs = all_args_inputs()
    torch.save(inputs, os.path.join(OUT, "all_args.inputs.pt"))
    outputs = m(*inputs)
    torch.save(outputs, os.path.join(OUT, "all_args.expected.pt"))
    torch.save({"inputs": inputs, "outputs": outputs}, os.path.join(OUT, "all_args.reference.pt"))
    y, d, sizes, name, total = outputs
    bad = (y, {"scores": d["scores"] + 1.0, "name_len": d["name_len"]}, sizes, name + "?", total)
    torch.save({"inputs": inputs, "outputs": bad}, os.path.join(OUT, "all_args.perturbed.pt"))

    torch.jit.script(NoForward().eval()).save(os.path.join(OUT, "no_forward.pt"))
    torch.jit.script(Embed().eval()).save(os.path.join(OUT, "embed.pt"))
    torch.jit.script(Recurrent().eval()).save(os.path.join(OUT, "recurrent.pt"))
    flat = torch.jit.script(Flat().eval())
    flat.save(os.path.join(OUT, "flat.pt"))
    img = torch.randn(1, 1, 28, 28, generator=torch.Generator().manual_seed(1))
    np.save(os.path.join(OUT, "flat.inputs.npy"), img.numpy())
    np.savez(os.path.join(OUT, "flat.inputs.npz"), img.numpy())
    torch.save(flat(img), os.path.join(OUT, "flat.expected.pt"))
    num = torch.jit.script(ReturnsNumber().eval())
    num.save(os.path.join(OUT, "returns_number.pt"))
    x = torch.ones(2)
    torch.save({"inputs": (x,), "outputs": 999.0}, os.path.join(OUT, "returns_number.reference.pt"))
    gen_pair()
    print("wrote", OUT)


if __name__ == "__main__":
    sys.exit(main())
