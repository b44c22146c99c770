"""Models tests/pt2/migrate_test.sh saves as TorchScript archives with the
pinned torch 2.x and gives to tsctl migrate: one per thing migrate must get
right (a convertible CNN with stored inputs, data-dependent control flow, a
loop the converter cannot convert, a model whose outputs differ run to run,
and one whose difference starts in the middle of its graph)."""
import json
import sys

import torch


class SmallCNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3)
        self.fc = torch.nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(torch.relu(self.conv(x)).mean((2, 3)))


class BatchNormCNN(torch.nn.Module):
    """A batch norm in eval mode: the program does not use its
    num_batches_tracked, which torch.export.save still stores."""
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3)
        self.bn = torch.nn.BatchNorm2d(4)
        self.fc = torch.nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(torch.relu(self.bn(self.conv(x))).mean((2, 3)))


class Branchy(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(6, 3)

    def forward(self, x):
        y = self.fc(x)
        if bool(y.sum() > 0):
            y = y * 2
        return y


class Loop(torch.nn.Module):
    def forward(self, x):
        acc = torch.zeros(x.shape[1])
        for i in range(x.shape[0]):
            acc = acc + x[i]
        return acc


class Noisy(torch.nn.Module):
    def forward(self, x):
        return x + torch.rand(x.shape)


class NoisyDeep(torch.nn.Module):
    """Noise in the middle: the linear layer and relu before it agree between
    the archive and the program, the first node that differs is aten::rand."""
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(6, 8)
        self.b = torch.nn.Linear(8, 3)

    def forward(self, x):
        y = torch.relu(self.a(x))
        y = y + 0.1 * torch.rand(y.shape)
        return self.b(y)


def save(out):
    torch.manual_seed(0)
    cnn = torch.jit.trace(SmallCNN().eval(), torch.randn(1, 3, 8, 8))
    torch.jit.save(cnn, out + "/cnn.pt", _extra_files={"tsctl_inputs.json": json.dumps({"forward": ["1x3x8x8:float32"]})})
    torch.jit.save(torch.jit.script(Branchy().eval()), out + "/branchy.pt")
    torch.jit.save(torch.jit.trace(BatchNormCNN().eval(), torch.randn(1, 3, 8, 8)), out + "/bn.pt")
    torch.jit.save(torch.jit.script(Loop()), out + "/loop.pt")
    torch.jit.save(torch.jit.script(Noisy()), out + "/noisy.pt")
    torch.jit.save(torch.jit.script(NoisyDeep().eval()), out + "/noisy_deep.pt")


if __name__ == "__main__":
    save(sys.argv[1])
