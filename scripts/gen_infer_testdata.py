#!/usr/bin/python3
"""Writes testdata/infer/classes/: small synthetic models, one per kind of
input that inference with no flags must find from PyTorch's semantics (the
classes of issue #53), and manifest.json saying, for each, what the pinned
input must look like (a regex over `--arg` flags) and why.

Each model is built from operators only; none copies a real archive. The
weights are tiny (testdata stays small). Run with /usr/bin/python3 (torch
1.13, whose TorchScript archives every LibTorch build here reads).

Usage: scripts/gen_infer_testdata.py [--out testdata/infer/classes]
"""
import argparse
import json
import os
import sys
from typing import List, Optional, Tuple

import torch
from torch import Tensor, nn

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class SequenceConv(nn.Module):
    """(batch, time, features) -> conv1d over time: transposed first."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(12, 8, 3)
        self.fc = nn.Linear(8, 2)

    def forward(self, x: Tensor) -> Tensor:
        y = torch.relu(self.conv(x.transpose(1, 2)))
        return self.fc(y.mean(2))


class LstmState(nn.Module):
    """A recurrent layer whose (h, c) state is a required argument."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(6, 10, batch_first=True)
        self.fc = nn.Linear(10, 3)

    def forward(self, x: Tensor, state: Tuple[Tensor, Tensor]) -> Tuple[Tensor, Tuple[Tensor, Tensor]]:
        y, (h, c) = self.lstm(x, state)
        return self.fc(y[:, -1]), (h, c)


class GruOptional(nn.Module):
    """A GRU over (batch, time, features) with an optional hidden state,
    reading the time length first."""

    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(5, 7, batch_first=True)

    def forward(self, x: Tensor, h: Optional[Tensor] = None) -> Tensor:
        steps = x.size(1)
        y, _ = self.gru(x, h)
        return y[:, steps - 1]


class Recommender(nn.Module):
    """An int id and a 2-D feature tensor, concatenated before a linear."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(20, 8)
        self.fc = nn.Linear(8 + 4, 1)

    def forward(self, user: int, feats: Tensor) -> Tensor:
        u = self.emb(torch.tensor([user]))
        return self.fc(torch.cat([u, feats], 1))


class GruState(nn.Module):
    """A GRU whose hidden state is a required argument."""

    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(5, 7, batch_first=True)
        self.fc = nn.Linear(7, 2)

    def forward(self, x: Tensor, h: Tensor) -> Tuple[Tensor, Tensor]:
        y, h2 = self.gru(x, h)
        return self.fc(y[:, -1]), h2


class Attention(nn.Module):
    """Self-attention over (batch, tokens, 16), averaged over the tokens."""

    def __init__(self):
        super().__init__()
        self.mha = nn.MultiheadAttention(16, 4, batch_first=True)
        self.fc = nn.Linear(16, 2)

    def forward(self, x: Tensor) -> Tensor:
        y, _ = self.mha(x, x, x)
        return self.fc(y.mean(1))


class TwoIds(nn.Module):
    """Two id vectors, embedded, concatenated with 4 features per row."""

    def __init__(self):
        super().__init__()
        self.u = nn.Embedding(50, 8)
        self.i = nn.Embedding(40, 8)
        self.fc = nn.Linear(20, 1)

    def forward(self, user: Tensor, item: Tensor, feats: Tensor) -> Tensor:
        return torch.sigmoid(self.fc(torch.cat([self.u(user), self.i(item), feats], dim=1)))


class RawSignal(nn.Module):
    """(batch, 200) samples, unsqueezed for a strided conv1d, flattened."""

    def __init__(self):
        super().__init__()
        self.c = nn.Conv1d(1, 4, 5, stride=2)
        self.fc = nn.Linear(4 * 98, 2)

    def forward(self, x: Tensor) -> Tensor:
        return self.fc(torch.flatten(torch.relu(self.c(x.unsqueeze(1))), 1))


class Spectrogram(nn.Module):
    """(batch, 40 mels, 100 frames), unsqueezed for a conv2d, pooled,
    flattened into 2000 features."""

    def __init__(self):
        super().__init__()
        self.c = nn.Conv2d(1, 2, 3, padding=1)
        self.fc = nn.Linear(2 * 20 * 50, 3)

    def forward(self, x: Tensor) -> Tensor:
        y = torch.max_pool2d(torch.relu(self.c(x.unsqueeze(1))), 2)
        return self.fc(y.flatten(1))


class SequenceFlat(nn.Module):
    """An LSTM over 30 steps of 3 features whose outputs are flattened
    (traced: the reshape's batch is read from the input)."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(3, 8, batch_first=True)
        self.fc = nn.Linear(8 * 30, 1)

    def forward(self, x: Tensor) -> Tensor:
        y, _ = self.lstm(x)
        return self.fc(y.reshape(y.shape[0], -1))


class ChannelsLast(nn.Module):
    """A (batch, height, width, 3) image scaled, centred and permuted."""

    def __init__(self):
        super().__init__()
        self.register_buffer("mean", torch.tensor([0.5, 0.5, 0.5]))
        self.c = nn.Conv2d(3, 4, 3)
        self.fc = nn.Linear(4, 2)

    def forward(self, x: Tensor) -> Tensor:
        x = (x.float() / 255.0 - self.mean).permute(0, 3, 1, 2)
        return self.fc(torch.relu(self.c(x)).mean([2, 3]))


class Resize(nn.Module):
    """A convolution resized to a size given as a list of ints."""

    def __init__(self):
        super().__init__()
        self.c = nn.Conv2d(3, 2, 3, padding=1)

    def forward(self, x: Tensor, size: List[int]) -> Tensor:
        return nn.functional.interpolate(self.c(x), size=size, mode="bilinear", align_corners=False)


class PackedSequence(nn.Module):
    """Token ids and their lengths, packed (unsorted) for an LSTM."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(100, 8)
        self.lstm = nn.LSTM(8, 16, batch_first=True)
        self.fc = nn.Linear(16, 2)

    def forward(self, ids: Tensor, lengths: Tensor) -> Tensor:
        p = nn.utils.rnn.pack_padded_sequence(self.emb(ids), lengths, batch_first=True, enforce_sorted=False)
        _, (h, _) = self.lstm(p)
        return self.fc(h[-1])


class TextPositions(nn.Module):
    """Token ids plus a stored table of 77 positions."""

    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(100, 8)
        self.pos = nn.Parameter(torch.randn(77, 8))
        self.proj = nn.Linear(8, 4)

    def forward(self, text: Tensor) -> Tensor:
        return self.proj((self.tok(text) + self.pos).mean(1))


class EdgeList(nn.Module):
    """Node features and a (2, edges) int64 edge list, scattered along."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(6, 4)

    def forward(self, x: Tensor, edge_index: Tensor) -> Tensor:
        h = self.lin(x)
        return torch.zeros_like(h).index_add_(0, edge_index[1], h[edge_index[0]])


class ImageDepth(nn.Module):
    """An RGB image and a one-channel depth map concatenated for a conv."""

    def __init__(self):
        super().__init__()
        self.c = nn.Conv2d(4, 8, 3)
        self.fc = nn.Linear(8, 2)

    def forward(self, rgb: Tensor, depth: Tensor) -> Tensor:
        return self.fc(self.c(torch.cat([rgb, depth], 1)).mean([2, 3]))


class PairFeatures(nn.Module):
    """Two rows of 12 features, concatenated with their product."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(36, 1)

    def forward(self, a: Tensor, b: Tensor) -> Tensor:
        return self.fc(torch.cat([a, b, a * b], dim=-1))


class Frames(nn.Module):
    """(batch, frames, 3, H, W) unpacked by name, frames through a conv2d."""

    def __init__(self):
        super().__init__()
        self.c = nn.Conv2d(3, 4, 3)
        self.fc = nn.Linear(4, 2)

    def forward(self, x: Tensor) -> Tensor:
        b, t, c, h, w = x.shape
        y = self.c(x.reshape(b * t, c, h, w)).mean([2, 3])
        return self.fc(y.reshape(b, t, -1).mean(1))


class SensorList(nn.Module):
    """A list of per-sensor rows of 6, stacked and averaged."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 2)

    def forward(self, xs: List[Tensor]) -> Tensor:
        return self.fc(torch.stack(xs, 1).mean(1))


class Generator(nn.Module):
    """A latent (batch, 100, 1, 1) grown by transposed convolutions."""

    def __init__(self):
        super().__init__()
        self.d1 = nn.ConvTranspose2d(100, 8, 4)
        self.d2 = nn.ConvTranspose2d(8, 3, 4, 2, 1)

    def forward(self, z: Tensor) -> Tensor:
        return torch.tanh(self.d2(torch.relu(self.d1(z))))


class SensorConv(nn.Module):
    """(batch, 3 axes, time), unsqueezed to 4-D for a (1, 7) convolution."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, (1, 7))

    def forward(self, x: Tensor) -> Tensor:
        return torch.relu(self.conv(x.unsqueeze(2))).mean([2, 3])


class StripImage(nn.Module):
    """An image 3 rows high and 600 wide; the linear layer fixes both."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, (3, 5))
        self.pool = nn.MaxPool2d((1, 4))
        self.fc = nn.Linear(4 * 1 * 149, 2)

    def forward(self, x: Tensor) -> Tensor:
        return self.fc(torch.flatten(self.pool(torch.relu(self.conv(x))), 1))


class WideMap(nn.Module):
    """A 45x40 map: two convolutions and a pool, then a linear layer."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(1, 4, 3, padding=1)
        self.c2 = nn.Conv2d(4, 4, 3)
        self.fc = nn.Linear(4 * 21 * 19, 2)

    def forward(self, x: Tensor) -> Tensor:
        y = torch.max_pool2d(torch.relu(self.c1(x)), 2)
        return self.fc(torch.flatten(torch.relu(self.c2(y)), 1))


class Neighbours(nn.Module):
    """Distances of each input row to a stored table of 37 rows of 8."""

    def __init__(self):
        super().__init__()
        self.register_buffer("table", torch.randn(37, 8))

    def forward(self, x: Tensor) -> Tensor:
        d = (x.unsqueeze(1) - self.table).pow(2).sum(-1)
        return d.argmin(1)


class Patches(nn.Module):
    """A 28x28 image cut into 4x4 patches of 7x7 by a reshape (traced: the
    reshape's sizes are constants)."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(49, 6)

    def forward(self, x: Tensor) -> Tensor:
        p = x.reshape(1, 1, 4, 7, 4, 7).permute(0, 1, 2, 4, 3, 5).reshape(1, 16, 49)
        return self.proj(p).mean(1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "testdata", "infer", "classes"))
    out = ap.parse_args().out
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    torch.set_num_threads(1)
    from torch.utils.mobile_optimizer import optimize_for_mobile
    # name: (module, how it is saved, the pin's regex, why)
    cases = {
        "rank_transposed": (SequenceConv(), "script", r"x=1x\d+x12:float32",
                            "a (batch, time, features) input transposed before a 12-channel conv1d"),
        "rank_lstm_state": (LstmState(), "script", r"x=1x\d+x6:float32 .*state=.*1x1x10",
                            "an LSTM of 6 features whose (h, c) state of 1x1x10 is an argument"),
        "rank_gru_optional": (GruOptional(), "script", r"x=1x\d+x5:float32",
                              "a GRU of 5 features; its hidden state is optional"),
        "rank_recommender": (Recommender(), "script", r"feats=1x4:float32",
                             "an id and 4 features concatenated with an 8-wide embedding"),
        "rank_gru_state": (GruState(), "script", r"h=1x1x7:float32",
                           "a GRU whose 2-D guess of a state must be 1x1x7"),
        "rank_attention": (Attention(), "script", r"x=1x\d+x16:float32",
                           "attention over tokens of 16, averaged: the input is 3-D"),
        "rank_two_ids": (TwoIds(), "script", r"feats=(\d+)x4:float32",
                         "two embedded id vectors and 4 features per row"),
        "area_signal": (RawSignal(), "script", r"x=1x200:float32",
                        "200 samples: a count affine in the length"),
        "area_spectrogram": (Spectrogram(), "script", r"x=1x\d+x\d+:float32",
                             "40x100 mel frames, unsqueezed for a conv2d"),
        "area_sequence": (SequenceFlat(), "trace", r"x=1x30x3:float32",
                          "30 steps of 3 features: the count grows with the steps"),
        "layout_channels_last": (ChannelsLast(), "script", r"x=1x\d+x\d+x3:float32",
                                 "an image (batch, height, width, 3) permuted before a conv2d"),
        "list_output_size": (Resize(), "script", r"size=\[\d+,\d+\]",
                             "an interpolation's output size, a list of two ints"),
        "lengths_packed": (PackedSequence(), "script", r"lengths=1:int64",
                           "one int64 length per sequence for pack_padded_sequence"),
        "shared_positions": (TextPositions(), "script", r"text=1x77:int64",
                             "token ids as many as a stored table of 77 positions"),
        "index_edges": (EdgeList(), "script", r"edge_index=2x\d+:int64",
                        "a (2, edges) int64 edge list selected and scattered along"),
        "channels_concatenated": (ImageDepth(), "script", r"rgb=1x3x\d+x\d+:float32 .*depth=1x1x\d+x\d+:float32",
                                  "3 + 1 channels concatenated for a 4-channel conv"),
        "rows_concatenated": (PairFeatures(), "script", r"a=[0-9x]*x12:float32 .*b=[0-9x]*x12:float32",
                              "two rows of 12 features and their product concatenated"),
        "rank_unpacked": (Frames(), "script", r"x=1x\d+x3x\d+x\d+:float32",
                          "frames unpacked as b, t, c, h, w = x.shape"),
        "list_rows": (SensorList(), "script", r"xs=\[.*x6:float32",
                      "a list of rows of 6 features, stacked"),
        "transposed_latent": (Generator(), "script", r"z=1x100x1x1:float32",
                              "a generator's 1x1 latent of 100 channels"),
        "packed_sensor": (SensorConv(), "mobile", r"x=1x3x\d+:float32",
                          "3 sensor axes unsqueezed into a packed (1, 7) convolution"),
        "area_strip": (StripImage(), "trace", r"x=1x1x\d+x\d+:float32",
                       "a 3x600 strip whose linear layer wants 596 features (any size giving them runs)"),
        "area_wide": (WideMap(), "script", r"x=1x1x\d+x\d+:float32",
                      "a 45x40 map whose linear layer wants 1596 features (any size giving them runs)"),
        "broadcast_table": (Neighbours(), "script", r"x=\d+x8:float32",
                            "rows of 8 against a stored [37, 8] table"),
        "pin_reshape": (Patches(), "trace", r"x=1x1x28x28:float32",
                        "an image reshaped to 1x1x4x7x4x7 inside: the pin is the image"),
    }
    examples = {"area_strip": torch.rand(1, 1, 3, 600), "pin_reshape": torch.rand(1, 1, 28, 28),
                "area_sequence": torch.rand(2, 30, 3)}
    manifest = {}
    for name, (module, how, pin, why) in cases.items():
        module.eval()
        path = os.path.join(out, name + (".ptl" if how == "mobile" else ".pt"))
        if how == "trace":
            saved = torch.jit.trace(module, examples[name])
        else:
            saved = torch.jit.script(module)
        if how == "mobile":
            optimize_for_mobile(saved)._save_for_lite_interpreter(path)
        else:
            torch.jit.save(saved, path)
        manifest[os.path.basename(path)] = {"pin": pin, "why": why}
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {len(manifest)} models to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
