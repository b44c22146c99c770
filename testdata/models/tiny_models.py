"""Small eager models for the tests of `tsctl trace --python` and
`tsctl script --python` (tests/cli/cases/*python*). Deterministic: weights
come from a fixed seed."""
import torch
from torch import nn


class Net(nn.Module):
    """A class tsctl instantiates with no arguments."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return torch.relu(self.fc(x))


def make_model():
    """A factory."""
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())


class Branchy(nn.Module):
    """Data-dependent control flow: tracing keeps only the branch its example
    input took, so --check-input with a negative input diverges."""

    def forward(self, x):
        if bool(x.sum() > 0):
            return x * 2
        return x - 1


class NoSource(nn.Module):
    pass


# A class whose source cannot be found, as in a .pyc-only deployment.
exec(
    "class Hidden(nn.Module):\n"
    "    def forward(self, x):\n"
    "        return x + 1\n",
    globals(),
)


def not_a_module():
    return 42


class Unscriptable(nn.Module):
    """Traceable but not scriptable: TorchScript takes no *args."""

    def forward(self, *args):
        return args[0] * 2


class TwoInputs(nn.Module):
    """tsctl export: a float input, integer indices and a dict output."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.embed = nn.Embedding(10, 6)
        self.proj = nn.Linear(6, 6)

    def forward(self, x, idx):
        h = self.proj(x) + self.embed(idx)
        return {"sum": h.sum(1), "argmax": h.argmax(1)}


class Chatty(nn.Module):
    """Prints while it runs: tsctl export's JSON on stdout must stay clean."""

    def forward(self, x):
        print("forward called")
        return x + 1
