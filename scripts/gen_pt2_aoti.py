#!/usr/bin/env python3
"""Writes real CPU AOTInductor packages, and what tests compare them with.

Run with the pinned torch 2.x and a C++ compiler (each package takes about a
minute of compiling; 1.6 MB each, too big to commit):

    TORCH_USE_RTLD_GLOBAL=1 .venv-torch2/bin/python scripts/gen_pt2_aoti.py OUT_DIR

Writes into OUT_DIR:
  cnn_aoti.pt2        gen_pt2_testdata.py's SmallCNN, input 1x3x8x8 float32
  two_input_aoti.pt2  its TwoInput: x Nx6 float32 and idx N int64, N dynamic in [1, 64]
  cnn_aoti_nolink.pt2 the CNN again, its wrapper not linked with libtorch
                      (aot_inductor.link_libtorch=False): it finds aoti_torch_*
                      only in the process's global scope
  NAME.inputs.pt      torch.save of the argument tuple (tsctl --load-inputs reads it)
  NAME.ref.pt         {"inputs": ..., "outputs": ...} from Python's runner
                      (torch._inductor.aoti_load_package; tsctl --reference reads it)
  NAME.eager.pt       the eager model's outputs on the same inputs
Existing packages are kept (delete them to regenerate).
"""
import os
import sys

import torch
from torch.export import Dim

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_pt2_testdata as g  # noqa: E402


def models():
    torch.manual_seed(0)
    cnn = g.SmallCNN().eval()
    x = torch.randn(1, 3, 8, 8)
    yield "cnn_aoti", cnn, (x,), None
    yield "cnn_aoti_nolink", cnn, (x,), None
    torch.manual_seed(1)
    two = g.TwoInput().eval()
    batch = Dim("batch", min=1, max=64)
    gen = torch.Generator().manual_seed(3)
    args = (torch.randn(5, 6, generator=gen), torch.randint(0, 10, (5,), generator=gen))
    yield "two_input_aoti", two, args, {"x": {0: batch}, "idx": {0: batch}}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    for name, model, args, dynamic in models():
        path = os.path.join(out, name + ".pt2")
        if not os.path.exists(path):
            ep = torch.export.export(model, args, dynamic_shapes=dynamic)
            tmp = path + ".tmp.pt2"
            configs = {"aot_inductor.link_libtorch": False} if name.endswith("_nolink") else None
            torch._inductor.aoti_compile_and_package(ep, package_path=tmp, inductor_configs=configs)
            os.replace(tmp, path)
        runner = torch._inductor.aoti_load_package(path)
        with torch.inference_mode():
            got = runner(*args)
            eager = model(*args)
        torch.save(args, os.path.join(out, name + ".inputs.pt"))
        torch.save({"inputs": args, "outputs": got}, os.path.join(out, name + ".ref.pt"))
        torch.save(eager, os.path.join(out, name + ".eager.pt"))
        print(f"wrote {path} ({os.path.getsize(path)} bytes) and its inputs and outputs")


if __name__ == "__main__":
    main()
