#!/usr/bin/env python3
"""Writes the small .pt2 test archives under testdata/pt2/ (torch >= 2.9).

Run with the pinned torch 2.x (the .venv-torch2 of scripts/install_torch2.sh):

    .venv-torch2/bin/python scripts/gen_pt2_testdata.py [OUT_DIR] [--aoti]

Also writes OUT_DIR/golden/<name>.graph.txt: `print(ep.graph)` of each
program as torch.export.load reads it back, the expectation of
`tsctl graph` (tests/cli/cases/pt2_graph_*). --aoti also tries a CPU
AOTInductor package (needs a C++ compiler); it is kept only if < 1 MB, else
its layout with the compiled .so replaced by a stub (cnn_aoti_stub.pt2).
"""
import os
import sys

import torch
from torch.export import Dim


class SmallCNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(4)
        self.fc = torch.nn.Linear(4, 5)

    def forward(self, x):
        x = torch.relu(self.bn(self.conv(x)))
        x = torch.nn.functional.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.fc(x)


class TwoInput(torch.nn.Module):
    """A float batch and an integer index per row; batch size is dynamic."""

    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(10, 6)
        self.proj = torch.nn.Linear(6, 6)
        self.register_buffer("scale", torch.full((6,), 0.5))

    def forward(self, x, idx):
        y = self.proj(x) + self.embed(idx) * self.scale
        return y.sum(dim=1), y.argmax(dim=1)


def transformer():
    torch.manual_seed(2)
    return torch.nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16, dropout=0.0, batch_first=True)


def save(ep, out, name, extra=None):
    path = os.path.join(out, name + ".pt2")
    torch.export.save(ep, path, extra_files=extra)
    golden = os.path.join(out, "golden")
    os.makedirs(golden, exist_ok=True)
    with open(os.path.join(golden, name + ".graph.txt"), "w") as f:
        f.write(str(torch.export.load(path).graph) + "\n")
    print(f"wrote {path} ({os.path.getsize(path)} bytes)")
    return path


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    out = args[0] if args else os.path.join(os.path.dirname(__file__), "..", "testdata", "pt2")
    os.makedirs(out, exist_ok=True)

    torch.manual_seed(0)
    cnn = SmallCNN().eval()
    x = torch.randn(1, 3, 8, 8)
    ep = torch.export.export(cnn, (x,))
    save(ep, out, "cnn", extra={"producer.json": '{"producer": "gen_pt2_testdata.py", "step": 1}'})
    # The same model with one weight element changed: diff's "weights" case.
    with torch.no_grad():
        cnn.fc.weight[2, 1] += 0.25
    save(torch.export.export(cnn, (x,)), out, "cnn_weight",
         extra={"producer.json": '{"producer": "gen_pt2_testdata.py", "step": 2}'})

    torch.manual_seed(1)
    two = TwoInput().eval()
    batch = Dim("batch", min=1, max=64)
    ep = torch.export.export(two, (torch.randn(4, 6), torch.randint(0, 10, (4,))),
                             dynamic_shapes={"x": {0: batch}, "idx": {0: batch}})
    save(ep, out, "two_input")

    layer = transformer().eval()
    ep = torch.export.export(layer, (torch.randn(1, 4, 8),))
    save(ep, out, "transformer")

    if "--aoti" in sys.argv:
        aoti(cnn, x, out)


def aoti(model, x, out):
    path = os.path.join(out, "cnn_aoti.pt2")
    try:
        ep = torch.export.export(model, (x,))
        torch._inductor.aoti_compile_and_package(ep, package_path=path)
    except Exception as e:  # noqa: BLE001 - reported, the rest is kept
        print(f"AOTInductor package not written: {type(e).__name__}: {str(e).splitlines()[0]}")
        return
    size = os.path.getsize(path)
    if size >= 1 << 20:
        stub_package(path, os.path.join(out, "cnn_aoti_stub.pt2"))
        os.remove(path)
        print(f"AOTInductor package is {size} bytes (>= 1 MB): not kept, its layout kept as cnn_aoti_stub.pt2")
    else:
        print(f"wrote {path} ({size} bytes)")


STUB = b"tsctl test data: the compiled library of this AOTInductor package is left out (it was over 1 MB)\n"


def stub_package(src, dst):
    """The package `src` with every .so replaced by STUB: its records, names,
    sources and metadata as aoti_compile_and_package wrote them, small enough
    to commit. It cannot run; it tests inspect, validate and diff."""
    import zipfile

    from torch.export.pt2_archive._package import PT2ArchiveWriter

    with zipfile.ZipFile(src) as z, PT2ArchiveWriter(dst) as w:
        for info in z.infolist():
            name = info.filename.split("/", 1)[1]  # without the top folder; the writer adds its own
            if name in ("archive_format", "archive_version", ".data/version", "byteorder", ".data/serialization_id"):
                continue  # the writer writes these
            data = z.read(info)
            w.write_bytes(name, STUB if name.endswith(".so") else data)
    print(f"wrote {dst} ({os.path.getsize(dst)} bytes)")


if __name__ == "__main__":
    main()
