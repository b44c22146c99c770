#!/usr/bin/python3
"""tsctl reads the record LibTorch reads, among names equal but for case.

Builds archives from a scripted benign model with extra copies of
code/__torch__.py whose names differ only in case (at random positions, a
variant whose forward calls torch.neg instead of torch.relu), loads each with
torch.jit.load (LibTorch's PyTorchStreamReader over miniz) and checks that
`tsctl code` shows the variant exactly when LibTorch runs it, and that
`tsctl validate --no-load` fails zip.ambiguous on every one of them.

Usage: reader_differential_test.py TSCTL [N]   (exit 77 without torch)
"""
import io, os, random, subprocess, sys, tempfile, zipfile
try:
    import torch
except ImportError:
    sys.exit(77)

TSCTL = sys.argv[1]
N = int(sys.argv[2]) if len(sys.argv) > 2 else 40


class Benign(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 3)

    def forward(self, x):
        return torch.relu(self.fc(x))


torch.manual_seed(0)
buf = io.BytesIO()
torch.jit.save(torch.jit.script(Benign()), buf)
z = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
records = [(i.filename.split("/", 1)[1], z.read(i.filename)) for i in z.infolist()]
code = dict(records)["code/__torch__.py"]
variant = code.replace(b"torch.relu(", b"torch.neg(")
assert variant != code
x = torch.ones(1, 4)
reference = torch.jit.load(io.BytesIO(buf.getvalue()))(x)

rng = random.Random(1)
failures, picks = 0, {"variant": 0, "original": 0}
with tempfile.TemporaryDirectory() as d:
    for trial in range(N):
        entries = [("m/" + n, data) for n, data in records]
        for _ in range(rng.randint(1, 4)):
            name = "".join(c.upper() if rng.random() < 0.5 else c for c in "code/__torch__.py")
            entries.insert(rng.randint(1, len(entries)), ("m/" + name, variant))
        path = os.path.join(d, "t%d.pt" % trial)
        with zipfile.ZipFile(path, "w") as out:
            for n, data in entries:
                out.writestr(zipfile.ZipInfo(n), data)
        libtorch = "original" if torch.equal(torch.jit.load(path)(x), reference) else "variant"
        picks[libtorch] += 1
        shown = subprocess.run([TSCTL, "code", path], stdout=subprocess.PIPE).stdout
        tsctl = "variant" if b"torch.neg(" in shown else "original"
        if tsctl != libtorch:
            failures += 1
            print("FAIL: %s: LibTorch runs the %s, tsctl shows the %s" % ([n for n, _ in entries], libtorch, tsctl))
        v = subprocess.run([TSCTL, "validate", "--no-load", path], stdout=subprocess.PIPE).stdout
        if b"FAIL  zip.ambiguous" not in v:
            failures += 1
            print("FAIL: %s: zip.ambiguous did not fail" % path)
print("%d archives: LibTorch ran the variant in %d, the original in %d; %d failures" %
      (N, picks["variant"], picks["original"], failures))
sys.exit(1 if failures else 0)
