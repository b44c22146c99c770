#!/usr/bin/python3
"""Regenerate the tsctl test corpus under testdata/.

Usage:
    /usr/bin/python3 scripts/gen_testdata.py [--out testdata]

Needs torch (written against the Debian build of torch 1.13.1, CPU only).
The output is deterministic: fixed seeds, fixed values, and every ZIP
rewritten by this script uses fixed timestamps. Running it twice yields
byte-identical files. See testdata/README.md (written by this script) for
what each file is.
"""

import argparse
import hashlib
import json
import linecache
import os
import shutil
import struct
import sys
import tempfile
import warnings
from typing import List, Tuple
import zipfile

# TorchScript iterates Python sets of attribute names (e.g. a module's
# __constants__) when it emits code/, so str hash randomization changes the
# order of "Final" lines between runs. Pin the hash seed by re-executing.
if os.environ.get("PYTHONHASHSEED") != "0":
    env = dict(os.environ, PYTHONHASHSEED="0")
    os.execve(sys.executable, [sys.executable] + sys.argv, env)

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

SEED = 20240101
PYTORCH_ALIGNMENT = 64  # PyTorchStreamWriter aligns record data to 64 bytes
# DOS date/time 0, which is what PyTorchStreamWriter (miniz) writes.
ZIP_DATE_TIME = (1980, 0, 0, 0, 0, 0)


def seed():
    torch.manual_seed(SEED)


# --------------------------------------------------------------------------
# Models
# --------------------------------------------------------------------------

# The model classes are compiled from this string under a fixed pseudo file
# name (registered in linecache so inspect/TorchScript can read the source),
# so that source ranges saved in the archives' debug_pkl records, and hence
# the golden graphs, do not depend on where this repository is checked out.
MODELS_FILENAME = "tsctl_testdata_models.py"
MODELS_SRC = '''\
import torch
import torch.nn as nn
from torch import Tensor
from typing import Dict, List
from typing import Final
import threading


def trace_in_fixed_stack(module, example):
    # torch.jit.trace records the whole Python call stack ("file(line): func")
    # into the archive's debug_pkl records. Tracing on a fresh thread whose
    # only non-torch frame lives in this pseudo file keeps those bytes
    # independent of where gen_testdata.py is checked out.
    box = {}

    def target():
        try:
            box["value"] = torch.jit.trace(module, example)
        except BaseException as e:
            box["error"] = e

    t = threading.Thread(target=target)
    t.start()
    t.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.relu = nn.ReLU()
        self.bn = nn.BatchNorm2d(8)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.flatten = nn.Flatten()
        self.fc = nn.Linear(8, 10)

    def forward(self, x):
        x = self.conv(x)
        x = self.relu(x)
        x = self.bn(x)
        x = self.pool(x)
        x = self.flatten(x)
        return self.fc(x)


class Block(nn.Module):
    # submodule with its own parameters and a buffer

    def __init__(self, width: int):
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.register_buffer("gain", torch.full((width,), 0.5))

    def forward(self, x: Tensor) -> Tensor:
        return torch.relu(self.fc(x)) * self.gain


class MultiModel(nn.Module):
    __constants__ = ["hidden"]
    max_steps: Final[int]

    def __init__(self):
        super().__init__()
        self.hidden = 4
        self.max_steps = 3
        self.block = Block(4)
        self.head = nn.Linear(4, 3)
        self.register_buffer("offset", torch.tensor([0.0, 0.25, 0.5, 0.75]))
        # non-tensor attributes
        self.num_steps: int = 2
        self.threshold: float = 0.125
        self.name: str = "multi-demo"
        self.dims: List[int] = [4, 4, 3]
        self.label_to_id: Dict[str, int] = {"cat": 0, "dog": 1, "bird": 2}

    def forward(self, x: Tensor, steps: int = 2) -> Tensor:
        y = x + self.offset
        for _ in range(min(steps, self.max_steps)):
            y = self.block(y)
        if bool(y.sum() > self.threshold):
            y = y * 2.0
        else:
            y = y - 1.0
        return self.head(y)

    @torch.jit.export
    def predict(self, x: Tensor) -> List[int]:
        scores = self.forward(x, self.num_steps)
        idx = scores.argmax(dim=-1)
        out: List[int] = []
        for i in range(idx.size(0)):
            out.append(int(idx[i]))
        return out

    @torch.jit.export
    def describe(self) -> str:
        labels = sorted(self.label_to_id.keys())
        return (self.name + " hidden=" + str(self.hidden) + " dims=" + str(self.dims)
                + " labels=" + ",".join(labels))


class TinyLinear(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x: Tensor) -> Tensor:
        return torch.relu(self.fc(x))


class DynQuantModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 8)
        self.fc2 = nn.Linear(8, 4)

    def forward(self, x: Tensor) -> Tensor:
        return self.fc2(torch.relu(self.fc1(x)))


class StaticQuantConv(nn.Module):
    def __init__(self):
        super().__init__()
        self.quant = torch.quantization.QuantStub()
        self.conv = nn.Conv2d(3, 4, 3)
        self.relu = nn.ReLU()
        self.dequant = torch.quantization.DeQuantStub()

    def forward(self, x):
        return self.dequant(self.relu(self.conv(self.quant(x))))


class MobileNetish(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.fc = nn.Linear(4, 2)

    def forward(self, x: Tensor) -> Tensor:
        x = torch.relu(self.conv(x))
        x = x.mean(dim=[2, 3])
        return self.fc(x)
'''


# Set by load_models().
SmallCNN = MultiModel = DynQuantModel = StaticQuantConv = TinyLinear = MobileNetish = None
trace_in_fixed_stack = None


def load_models():
    lines = MODELS_SRC.splitlines(True)
    # mtime None: linecache.checkcache() keeps the entry although no such file exists
    linecache.cache[MODELS_FILENAME] = (len(MODELS_SRC), None, lines, MODELS_FILENAME)
    ns = {"__name__": __name__}  # classes keep __module__ == "__main__" -> __torch__.<Class>
    exec(compile(MODELS_SRC, MODELS_FILENAME, "exec"), ns)
    globals().update({k: v for k, v in ns.items() if isinstance(v, type) and issubclass(v, nn.Module)})
    globals()["trace_in_fixed_stack"] = ns["trace_in_fixed_stack"]


# --------------------------------------------------------------------------
# ZIP helpers
# --------------------------------------------------------------------------

def read_records(path):
    """Return [(name, bytes)] in archive order."""
    with zipfile.ZipFile(path) as zf:
        return [(i.filename, zf.read(i.filename)) for i in zf.infolist()]


def write_zip(path, records):
    """Write records (list of (name, bytes), duplicates allowed) as a stored
    ZIP that looks like PyTorchStreamWriter output: fixed DOS time 0, and
    each record's data aligned to 64 bytes via an 'FB' padding extra field in
    the local header only (the central directory has no extra)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Duplicate name" for duplicate_record.pt
        with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as zf:
            for name, data in records:
                info = zipfile.ZipInfo(name, date_time=ZIP_DATE_TIME)
                info.compress_type = zipfile.ZIP_STORED
                info.create_system = 0
                info.external_attr = 0
                start = zf.fp.tell()
                data_pos = start + 30 + len(name.encode("utf-8"))
                pad = (-data_pos) % PYTORCH_ALIGNMENT
                if pad != 0 and pad < 4:
                    pad += PYTORCH_ALIGNMENT
                if pad:
                    info.extra = b"FB" + struct.pack("<H", pad - 4) + b"Z" * (pad - 4)
                zf.writestr(info, data)
                info.extra = b""  # keep the central directory like PyTorch's


def flip_byte_in_record(path, record_name, index=0):
    """Flip one byte inside a stored record's data without touching headers."""
    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo(record_name)
        assert info.compress_type == zipfile.ZIP_STORED
        offset = info.header_offset
        size = info.file_size
    with open(path, "r+b") as f:
        f.seek(offset)
        hdr = f.read(30)
        assert hdr[:4] == b"PK\x03\x04"
        name_len, extra_len = struct.unpack("<HH", hdr[26:30])
        assert 0 <= index < size
        pos = offset + 30 + name_len + extra_len + index
        f.seek(pos)
        b = f.read(1)[0]
        f.seek(pos)
        f.write(bytes([b ^ 0xFF]))


def root_of(records):
    return records[0][0].split("/", 1)[0]


# --------------------------------------------------------------------------
# Generation
# --------------------------------------------------------------------------

def write_text(path, s):
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(s)


def write_bytes(path, b):
    with open(path, "wb") as f:
        f.write(b)


def make_blob(n=200):
    out = b""
    i = 0
    while len(out) < n:
        out += hashlib.sha256(b"tsctl-blob-%d" % i).digest()
        i += 1
    # start with bytes that are never valid UTF-8 so it is clearly binary
    return (b"\x00\xff\xfe\x80" + out)[:n]


def gen_traced_cnn(out):
    seed()
    m = SmallCNN()
    # give BatchNorm non-trivial running stats so freezing folds real values
    with torch.no_grad():
        m.bn.running_mean.copy_(torch.linspace(-0.5, 0.5, 8))
        m.bn.running_var.copy_(torch.linspace(0.5, 1.5, 8))
    m.eval()
    traced = trace_in_fixed_stack(m, torch.rand(1, 3, 32, 32))
    torch.jit.save(traced, os.path.join(out, "traced_cnn.pt"))


def gen_scripted_multi(out):
    seed()
    m = torch.jit.script(MultiModel().eval())
    torch.jit.save(m, os.path.join(out, "scripted_multi.pt"))


def gen_quantized(out, notes):
    engines = torch.backends.quantized.supported_engines
    engine = "qnnpack" if "qnnpack" in engines else ("fbgemm" if "fbgemm" in engines else None)
    notes.append("quantized engines supported: %s; using %r" % (engines, engine))
    if engine is None:
        raise RuntimeError("no quantized engine among %s" % engines)
    torch.backends.quantized.engine = engine

    seed()
    m = DynQuantModel().eval()
    q = torch.quantization.quantize_dynamic(m, {nn.Linear}, dtype=torch.qint8)
    qs = torch.jit.script(q)
    torch.jit.save(qs, os.path.join(out, "quantized.pt"))

    seed()
    try:
        m = StaticQuantConv().eval()
        m.qconfig = torch.quantization.get_default_qconfig(engine)
        torch.quantization.prepare(m, inplace=True)
        with torch.no_grad():
            for _ in range(4):
                m(torch.rand(1, 3, 8, 8))
        torch.quantization.convert(m, inplace=True)
        traced = trace_in_fixed_stack(m, torch.rand(1, 3, 8, 8))
        torch.jit.save(traced, os.path.join(out, "quantized_static.pt"))
        notes.append("quantized_static.pt: static quantization with %s OK" % engine)
        return ["quantized.pt", "quantized_static.pt"]
    except Exception as e:  # pragma: no cover
        notes.append("quantized_static.pt SKIPPED: %s: %s" % (type(e).__name__, e))
        return ["quantized.pt"]


PRODUCER_INFO = {
    "producer": "tsctl/scripts/gen_testdata.py",
    "torch_version": "1.13",
    "model": {"name": "TinyLinear", "inputs": [{"name": "x", "shape": [1, 4]}], "outputs": 1},
    "tags": ["test", "extra-files"],
}


def gen_with_extra(out):
    seed()
    m = torch.jit.script(TinyLinear().eval())
    extra = {
        "producer_info.json": json.dumps(PRODUCER_INFO, indent=2, sort_keys=True) + "\n",
        "notes.txt": "Test archive with extra files for tsctl.\n",
        "blob.bin": make_blob(200),
    }
    torch.jit.save(m, os.path.join(out, "with_extra.pt"), _extra_files=extra)


def gen_mobile(out, notes):
    from torch.utils.mobile_optimizer import optimize_for_mobile
    seed()
    m = torch.jit.script(MobileNetish().eval())
    opt = optimize_for_mobile(m)
    opt._save_for_lite_interpreter(os.path.join(out, "mobile.ptl"))
    names = [n for n, _ in read_records(os.path.join(out, "mobile.ptl"))]
    assert any(n.endswith("/bytecode.pkl") for n in names), names


def gen_renamed_root(out, tmp):
    seed()
    m = torch.jit.script(TinyLinear().eval())
    src = os.path.join(tmp, "original_name.pt")  # root folder: "original_name"
    torch.jit.save(m, src)
    shutil.copyfile(src, os.path.join(out, "renamed_root.pt"))


def save_tiny(path):
    seed()
    torch.jit.save(torch.jit.script(TinyLinear().eval()), path)


def gen_bad(out, tmp):
    bad = os.path.join(out, "bad")
    os.makedirs(bad, exist_ok=True)

    def tiny_records(stem):
        p = os.path.join(tmp, stem + ".pt")
        save_tiny(p)  # root folder == stem, as if saved under its final name
        return p, read_records(p)

    # truncated.pt: valid archive cut in half
    p, _ = tiny_records("truncated")
    data = open(p, "rb").read()
    write_bytes(os.path.join(bad, "truncated.pt"), data[: len(data) // 2])

    # not_zip.pt: plain text
    write_text(os.path.join(bad, "not_zip.pt"),
               "This is not a ZIP archive, just plain text with a .pt name.\n" * 4)

    # checkpoint.pth: torch.save of a state_dict (zip, data.pkl, no code/)
    seed()
    torch.save(TinyLinear().state_dict(), os.path.join(bad, "checkpoint.pth"))

    # python_source.ptl
    write_text(os.path.join(bad, "python_source.ptl"),
               "import torch\n\n\nclass Model(torch.nn.Module):\n"
               "    def forward(self, x):\n        return x * 2\n\n\n"
               "torch.jit.save(torch.jit.script(Model()), 'model.ptl')\n")

    # empty.pt
    write_bytes(os.path.join(bad, "empty.pt"), b"")

    # crc_mismatch.pt: flip first byte of the first data/ record
    p, recs = tiny_records("crc_mismatch")
    dst = os.path.join(bad, "crc_mismatch.pt")
    shutil.copyfile(p, dst)
    data_rec = sorted(n for n, _ in recs if "/data/" in n)[0]
    flip_byte_in_record(dst, data_rec, 0)

    # damaged_local_header.pt: the local header signature of the first data/
    # record overwritten; the central directory is intact.
    p, recs = tiny_records("damaged_local_header")
    data = bytearray(open(p, "rb").read())
    with zipfile.ZipFile(p) as z:
        first = sorted((i for i in z.infolist() if "/data/" in i.filename), key=lambda i: i.filename)[0]
    assert data[first.header_offset:first.header_offset + 4] == b"PK\x03\x04"
    data[first.header_offset:first.header_offset + 4] = b"XX\x03\x04"
    write_bytes(os.path.join(bad, "damaged_local_header.pt"), bytes(data))

    # bad_version.pt: version record content replaced with 99
    p, recs = tiny_records("bad_version")
    new = []
    for n, d in recs:
        if n.endswith("/version") or n.endswith("/.data/version"):
            d = b"99\n" if d.endswith(b"\n") else b"99"
        new.append((n, d))
    write_zip(os.path.join(bad, "bad_version.pt"), new)

    # missing_data_pkl.pt: data.pkl record removed
    p, recs = tiny_records("missing_data_pkl")
    root = root_of(recs)
    write_zip(os.path.join(bad, "missing_data_pkl.pt"),
              [(n, d) for n, d in recs if n != root + "/data.pkl"])

    # path_traversal.pt: extra record "../evil.txt"
    p, recs = tiny_records("path_traversal")
    write_zip(os.path.join(bad, "path_traversal.pt"),
              recs + [("../evil.txt", b"this file tried to escape the archive root\n")])

    # duplicate_record.pt: <root>/version appears twice (same content)
    p, recs = tiny_records("duplicate_record")
    root = root_of(recs)
    dup = [(n, d) for n, d in recs if n == root + "/version"]
    assert len(dup) == 1
    write_zip(os.path.join(bad, "duplicate_record.pt"), recs + dup)


def gen_unaligned(out):
    """traced_cnn.pt re-packed without PyTorch's 64-byte padding."""
    recs = read_records(os.path.join(out, "traced_cnn.pt"))
    path = os.path.join(out, "unaligned.pt")
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as zf:
        for name, data in recs:
            info = zipfile.ZipInfo(name, date_time=ZIP_DATE_TIME)
            info.create_system = 0
            zf.writestr(info, data)


def gen_branchy(out):
    """testdata/models/tiny_models.py's Branchy, scripted: its control flow
    depends on the data, so a trace of it diverges on other inputs."""
    import importlib.util
    path = os.path.join(out, "models", "tiny_models.py")
    spec = importlib.util.spec_from_file_location("tiny_models", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    torch.jit.save(torch.jit.script(mod.Branchy()), os.path.join(out, "branchy.pt"))


def gen_reference(out):
    """Inputs and outputs of traced_cnn.pt, as validate --reference reads them."""
    m = torch.jit.load(os.path.join(out, "traced_cnn.pt"))
    torch.manual_seed(0)
    x = torch.randn(2, 3, 32, 32)
    with torch.no_grad():
        y = m(x)
    torch.save({"inputs": (x,), "outputs": y}, os.path.join(out, "traced_cnn.reference.pt"))


def gen_golden(out, stems, notes):
    gold = os.path.join(out, "golden")
    os.makedirs(gold, exist_ok=True)
    for stem in stems:
        m = torch.jit.load(os.path.join(out, stem + ".pt"), map_location="cpu")
        write_text(os.path.join(gold, stem + ".graph.txt"), str(m.graph))
        write_text(os.path.join(gold, stem + ".inlined_graph.txt"), str(m.inlined_graph))
        write_text(os.path.join(gold, stem + ".code.txt"), m.code)
        if stem == "scripted_multi":
            write_text(os.path.join(gold, stem + ".predict.graph.txt"), str(m.predict.graph))
        if stem == "traced_cnn":
            try:
                fm = torch.jit.load(os.path.join(out, stem + ".pt"), map_location="cpu")
                frozen = torch.jit.optimize_for_inference(torch.jit.freeze(fm.eval()))
                write_text(os.path.join(gold, stem + ".frozen_graph.txt"), str(frozen.graph))
            except Exception as e:  # pragma: no cover
                notes.append("traced_cnn.frozen_graph.txt SKIPPED: %s: %s" % (type(e).__name__, e))


# --------------------------------------------------------------------------
# Pairs for `tsctl diff` (testdata/diff/)
# --------------------------------------------------------------------------

DIFF_MODELS_FILENAME = "tsctl_testdata_diff_models.py"
# {width}: the encoder's width; {head}: the head's attribute name; {extra_op}:
# an operator added at the end of forward (or nothing).
DIFF_MODELS_SRC = """\
import torch
import torch.nn as nn
from torch import Tensor


class Encoder(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.fc = nn.Linear(4, width)
        self.register_buffer("scale", torch.linspace(0.5, 1.5, width))

    def forward(self, x: Tensor) -> Tensor:
        return torch.relu(self.fc(x)) * self.scale


class DiffNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder({width})
        self.{head} = nn.Linear({width}, 3)
        self.register_buffer("steps", torch.tensor([1, 2, 3], dtype=torch.int64))
        self.label: str = "diff-demo"

    def forward(self, x: Tensor) -> Tensor:
        y = self.{head}(self.encoder(x))
        return y{extra_op}
"""

DIFF_META = {"model": "DiffNet", "version": 1, "inputs": [{"name": "x", "shape": [1, 4]}],
             "tags": ["test", "diff"]}

# name: (width, head, extra_op, changed weight, metadata changed, what it is)
DIFF_VARIANTS = {
    "base": (8, "head", "", False, False,
             "scripted DiffNet: `encoder` (Linear(4,8) + buffer `scale`), `head` Linear(8,3), "
             "int64 buffer `steps`, `extra/meta.json` and `extra/notes.txt`."),
    "weight": (8, "head", "", True, False, "`base` with `head.weight[1][2]` increased by 0.5."),
    "op_added": (8, "head", " + torch.sigmoid(y)", False, False,
                 "`base` whose forward ends in `y + torch.sigmoid(y)` (one operator more)."),
    "metadata": (8, "head", "", False, True,
                 "`base` with `extra/meta.json` changed (`version` 2, a key `owner` added) and "
                 "`extra/notes.txt` changed."),
    "shape": (6, "head", "", False, False, "`base` with an encoder width of 6 instead of 8."),
    "renamed": (8, "classifier", "", False, False, "`base` with the submodule `head` renamed `classifier`."),
    "renumbered": (8, "head", "", False, False,
                   "`base` scripted after a `Linear(5, 5)` in the same process: the same model, its Linear "
                   "classes numbered `___torch_mangle_0` and `___torch_mangle_1` instead of none and 0."),
}


def gen_diff_variant(name, path):
    """Run in a fresh process per variant (--diff-variant), so that every
    variant compiles its classes first and gets the same class names."""
    width, head, extra_op, weight, metadata, _ = DIFF_VARIANTS[name]
    src = DIFF_MODELS_SRC.format(width=width, head=head, extra_op=extra_op)
    linecache.cache[DIFF_MODELS_FILENAME] = (len(src), None, src.splitlines(True), DIFF_MODELS_FILENAME)
    ns = {"__name__": "__main__"}
    exec(compile(src, DIFF_MODELS_FILENAME, "exec"), ns)
    if name == "renumbered":
        torch.jit.script(torch.nn.Linear(5, 5))  # takes the unnumbered name (before the seed: same weights)
    seed()
    m = ns["DiffNet"]().eval()
    if weight:
        with torch.no_grad():
            getattr(m, head).weight[1, 2] += 0.5
    meta = dict(DIFF_META)
    notes = "Archive for tsctl diff tests.\n"
    if metadata:
        meta["version"] = 2
        meta["owner"] = "ml-platform"
        notes = "Archive for tsctl diff tests, second edition.\n"
    extra = {"meta.json": json.dumps(meta, indent=2, sort_keys=True) + "\n", "notes.txt": notes}
    torch.jit.save(torch.jit.script(m), path, _extra_files=extra)


DIFF_README = """\
# Pairs for `tsctl diff`

Generated by `scripts/gen_testdata.py` (each variant in a fresh process, so
all of them get the same class names). Compare any file with `base.pt`.

| File | What it is |
|---|---|
{rows}| `resaved.pt` | `torch.jit.load("base.pt")` saved again with the same extra files. |
"""


def gen_diff_pairs(out):
    import subprocess
    d = os.path.join(out, "diff")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    for name in DIFF_VARIANTS:
        subprocess.run([sys.executable, os.path.abspath(__file__), "--diff-variant", name,
                        os.path.join(d, name + ".pt")], check=True)
    files = {"meta.json": "", "notes.txt": ""}
    m = torch.jit.load(os.path.join(d, "base.pt"), _extra_files=files)
    torch.jit.save(m, os.path.join(d, "resaved.pt"), _extra_files=files)
    rows = "".join("| `%s.pt` | %s |\n" % (n, v[5]) for n, v in DIFF_VARIANTS.items())
    write_text(os.path.join(d, "README.md"), DIFF_README.format(rows=rows))


README = """\
# tsctl test data

Everything in this folder is generated by `scripts/gen_testdata.py`:

    /usr/bin/python3 scripts/gen_testdata.py [--out testdata]

(`/usr/bin/python3` is the interpreter that has torch; generated with torch
{torch_version}.) The script is deterministic and idempotent: running it again
reproduces every file byte for byte, wherever the repository is checked out.
To get there it uses fixed seeds and values, fixed ZIP timestamps, re-executes
itself with `PYTHONHASHSEED=0` (TorchScript emits a module's `__constants__`
in Python set order), compiles the model classes under the fixed pseudo file
name `tsctl_testdata_models.py` (source ranges in `debug_pkl` and the goldens),
and traces on a helper thread (`torch.jit.trace` stores the Python call stack
in `debug_pkl`). Paths of torch's own sources (`/usr/lib/python3/dist-packages/
torch/...`) still appear in `debug_pkl` and in the goldens, so regenerate with
the same torch installation. Do not edit these files by hand; change the
script and rerun. Any change to the script may change the archives (e.g. the
`___torch_mangle_N` numbers depend on the order models are compiled).

PyTorch names an archive's root folder after the file stem it was saved to
(e.g. `traced_cnn/data.pkl`), except `renamed_root.pt`.

## Valid TorchScript archives

| File | What it is |
|---|---|
| `traced_cnn.pt` | `torch.jit.trace` of Conv2d(3,8,3) -> ReLU -> BatchNorm2d -> AdaptiveAvgPool2d(1) -> Flatten -> Linear(8,10), eval mode, traced on `rand(1,3,32,32)`. |
| `scripted_multi.pt` | `torch.jit.script` model: loop + `if` on data, submodule `block` (Linear + buffer `gain`), buffer `offset`, attributes `num_steps:int`, `threshold:float`, `name:str`, `dims:List[int]`, `label_to_id:Dict[str,int]`, constants `hidden` (`__constants__`) and `max_steps` (`Final`), exported methods `predict(x) -> List[int]` and `describe() -> str`. |
| `quantized.pt` | scripted `quantize_dynamic` (qint8) of Linear(8,8) -> ReLU -> Linear(8,4); packed params via `quantized.linear_dynamic`. |
| `quantized_static.pt` | traced static-quantized Conv2d(3,4,3) + ReLU with Quant/DeQuant stubs (engine: {engine}). |
| `with_extra.pt` | scripted Linear(4,2)+ReLU saved with `_extra_files`: `extra/producer_info.json` (nested JSON), `extra/notes.txt`, `extra/blob.bin` (200 non-text bytes). |
| `mobile.ptl` | `optimize_for_mobile` + `_save_for_lite_interpreter` of a small conv+linear model; contains `bytecode.pkl`. |
| `renamed_root.pt` | scripted Linear(4,2)+ReLU saved as `original_name.pt` and renamed: root folder `original_name/` differs from the file stem. |
| `branchy.pt` | `models/tiny_models.py`'s `Branchy` scripted: `if bool(x.sum() > 0): return x * 2` else `x - 1`; a trace of it diverges on inputs of the other sign. |
| `cuda_pinned.pt` | scripted module whose forward creates `torch.zeros([2, 3], device=torch.device("cuda:0"))`, as a model traced on a GPU does: validate's `ts.device` warns that it needs CUDA, and a run without CUDA is reported as unavailable. |
| `verdict/guess_log.pt`, `verdict/guess_noisy.pt` | scripted `log(x)` (NaN on random inputs, numbers on positive ones) and a one-hot at a random place (two runs differ, by 1); `verdict/stateful.pt`, `x + calls` with a buffer it increments (a second call differs; two copies as loaded agree: `torch.deterministic` passes, `torch.stateful` WARNs naming the buffer): on inferred inputs validate WARNs (a guess never fails an archive), on given inputs it FAILs. |
| `infer/xnnpack_conv6.ptl`, `infer/quantized_conv6.pt` | a 6-channel convolution and a linear layer, packed by `optimize_for_mobile` (XNNPACK contexts) and by static quantization (scripted, so the input reaches the convolution through the If of the padding mode): validate infers 6 channels from the unpacked weights. |
| `infer/xnnpack_flat.pt` | `optimize_for_mobile` of a stride-8 convolution (3 channels) flattened into Linear(128, 5): it takes 3x32x32 images, but XNNPACK's prepacked operators check no shapes, so 3x224x224 (the linear reads 128 of 6272 features) and 1x32x32 (one channel into a 3-channel convolution) run too: validate warns with given inputs of those shapes and refines a guess to 32x32. |
| `infer/classes/*` | one small synthetic model per kind of input inference must find from PyTorch's semantics (issue #53): a sequence transposed before a conv1d, an LSTM whose (h, c) is an argument, a GRU with an optional and one with a required state, self-attention averaged over tokens, a recommender's id and features, two id vectors and features, a raw signal, a spectrogram, a flattened LSTM sequence, a channels-last image, an interpolation's size list, packed sequences' lengths, token ids against 77 stored positions, an edge list of int64 indices, an image and a depth map concatenated, two rows and their product concatenated, frames unpacked by name, a list of rows stacked, a generator's 1x1 latent, sensor axes unsqueezed into a packed convolution, a 3-row strip and a 45x40 map before linear layers, rows against a stored table, a traced patch embedding; `manifest.json` says the pin each must get (`/usr/bin/python3 scripts/gen_infer_testdata.py`; test: `validate_infer_classes`). |
| `hooks/setstate_reads_file.pt`, `hooks/submodule_setstate.pt`, `hooks/forward_reads_file.pt` | a `__setstate__` that reads `/etc/passwd` with `torch.from_file` while `torch.jit.load` unpickles it (at the top, and one submodule down), and a `forward` that reads it behind a flag argument: validate's `ts.hooks` fails them before LibTorch loads anything. |
| `hooks/unchecked_view.pt` | a `forward` that views its input through `aten::_reshape_alias` with sizes 4096 times past its storage (LibTorch checks none of them): validate's `torch.unsafe` fails it from the loaded graph, before any method runs. |
| `models/` | hand-written sources (not generated): `tiny_models.py` (eager models for `trace/script --python`), `net.ts`, `broken.ts` and `no_forward.ts` (TorchScript sources for `tsctl script`). |
| `unaligned.pt` | `traced_cnn.pt`'s records re-packed by Python's `zipfile` without padding: loads, but its tensor data records are not 64-byte aligned (validate warns). |
| `traced_cnn.reference.pt` | `torch.save({{'inputs': (x,), 'outputs': m(x)}})` for `traced_cnn.pt` with `x = randn(2, 3, 32, 32)` (seed 0): a `--reference` for validate. |

## Pairs for `tsctl diff` (`diff/`)

`diff/base.pt` and variants of it, one change each (a weight, an operator,
metadata, a layer's shape, a submodule's name, renumbered classes, a plain re-save): see
`diff/README.md`.

## Broken inputs (`bad/`)

| File | What it is |
|---|---|
| `bad/truncated.pt` | a valid small archive cut to half its length (no end-of-central-directory). |
| `bad/not_zip.pt` | plain text. |
| `bad/checkpoint.pth` | `torch.save(state_dict)`: a PyTorch zip with `data.pkl`, `data/`, `version` but no `code/` and no `constants.pkl` (not TorchScript). |
| `bad/python_source.ptl` | a Python source file with a `.ptl` name. |
| `bad/empty.pt` | 0 bytes. |
| `bad/damaged_local_header.pt` | valid archive whose first `data/` record has its local header signature overwritten (`XX` for `PK`); central directory intact. |
| `bad/crc_mismatch.pt` | valid archive with the first byte of the first `data/` record flipped; ZIP structure intact, CRC-32 check fails. |
| `bad/bad_version.pt` | valid archive rewritten (stored, 64-byte aligned) with `version` content `99`; CRCs are correct. |
| `bad/missing_data_pkl.pt` | valid archive rewritten without its `data.pkl` record. |
| `bad/path_traversal.pt` | valid archive rewritten with an extra record named `../evil.txt`. |
| `bad/duplicate_record.pt` | valid archive rewritten with the `<root>/version` record appearing twice (identical content). |

## Golden output (`golden/`)

For each of {golden_stems}: what Python gives after
`m = torch.jit.load(path, map_location='cpu')` (always loaded from the saved
file, so source ranges point into the archive's `code/`), written byte-exact
(no trailing newline added):

* `<stem>.graph.txt` = `str(m.graph)`
* `<stem>.inlined_graph.txt` = `str(m.inlined_graph)`
* `<stem>.code.txt` = `m.code`
* `scripted_multi.predict.graph.txt` = `str(m.predict.graph)`
* `traced_cnn.frozen_graph.txt` = `str(torch.jit.optimize_for_inference(torch.jit.freeze(m.eval())).graph)`

Note: loading the quantized archives needs a quantized engine that can
unpack/repack the packed params; the goldens were produced with
`torch.backends.quantized.engine = '{engine}'`.
"""


class CudaPinned(torch.nn.Module):
    """What a model traced on a GPU records: a tensor created on cuda:0 in forward."""

    def forward(self, x):
        h = torch.zeros([2, 3], device=torch.device("cuda:0"))
        return x + h


def gen_cuda_pinned(out):
    """Scripted (scripting runs nothing, so no GPU is needed): its forward
    creates a tensor on cuda:0, as tch-deploy's GPU-traced GRU in the corpus does."""
    CudaPinned.__module__ = "__main__"  # __torch__.CudaPinned, imported or run
    torch.jit.save(torch.jit.script(CudaPinned()), os.path.join(out, "cuda_pinned.pt"))


class GreedyAlloc(torch.nn.Module):
    """Allocates 256 MiB per element of its input's last dimension and keeps
    them (never touched, sizes differ so the JIT cannot merge them): a wrong
    guess of its input shape asks for far more memory than a machine has."""

    def forward(self, x: torch.Tensor) -> int:
        xs: List[torch.Tensor] = []
        for i in range(x.size(-1)):
            xs.append(torch.empty((1 << 26) + i))
        return len(xs)


def gen_greedy_alloc(out):
    """For the memory budget of inferred inputs: its first candidate,
    1x3x224x224, would take 56 GiB."""
    GreedyAlloc.__module__ = "__main__"
    torch.jit.save(torch.jit.script(GreedyAlloc()), os.path.join(out, "greedy_alloc.pt"))


class GuessLog(torch.nn.Module):
    """log(x): NaN for every negative element, so random (guessed) inputs give
    NaN while real, positive inputs give numbers."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log(x)


class GuessNoisy(torch.nn.Module):
    """A one-hot at a random place of a million (sampling left on in eval
    mode): two runs on the same inputs differ, by exactly 1, given or guessed
    (the same place twice: one chance in a million)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.zeros(1000000)
        out[int(torch.randint(0, 1000000, [1]).item())] = 1.0
        return out + x.sum() * 0


class Stateful(torch.nn.Module):
    """Adds how often it was called (a buffer it updates in place, as a
    recurrent policy keeps its hidden state): a second call differs by 1,
    two copies as loaded agree."""

    def __init__(self):
        super().__init__()
        self.register_buffer("calls", torch.zeros(1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.calls.add_(1)
        return x + self.calls


def gen_guess_verdicts(out):
    """For verdict truth: on inferred inputs, NaN outputs and runs that differ
    are the guess's fault (a WARN); on given inputs, the archive's (a FAIL)."""
    d = os.path.join(out, "verdict")
    os.makedirs(d, exist_ok=True)
    for cls, name in ((GuessLog, "guess_log.pt"), (GuessNoisy, "guess_noisy.pt"), (Stateful, "stateful.pt")):
        cls.__module__ = "__main__"
        torch.jit.save(torch.jit.script(cls()), os.path.join(d, name))


class PackedConv6(torch.nn.Module):
    """A convolution over 6 channels, then a linear layer: once packed
    (XNNPACK's prepacked contexts, quantized packed parameters) the weights
    that say "6 channels" are inside operator contexts, not tensors."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(6, 8, 3, padding=1)
        self.fc = nn.Linear(8, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.relu(self.conv(x)).mean(dim=[2, 3]))


class QuantizedConv6(torch.nn.Module):
    """PackedConv6 with quantize/dequantize stubs, for static quantization."""

    def __init__(self):
        super().__init__()
        self.quant = torch.quantization.QuantStub()
        self.conv = nn.Conv2d(6, 8, 3, padding=1)
        self.fc = nn.Linear(8, 5)
        self.dequant = torch.quantization.DeQuantStub()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.conv(self.quant(x)))
        y = torch.flatten(torch.nn.functional.adaptive_avg_pool2d(y, 1), 1)
        return self.dequant(self.fc(y))


def gen_packed_weights(out):
    """For inference from packed weights: optimize_for_mobile's XNNPACK
    contexts (a 3-channel guess into them crashes or gives garbage, since
    XNNPACK checks no shapes) and a scripted statically quantized model (its
    input reaches the convolution through the If of the padding mode)."""
    from torch.utils.mobile_optimizer import optimize_for_mobile
    d = os.path.join(out, "infer")
    os.makedirs(d, exist_ok=True)
    for cls in (PackedConv6, QuantizedConv6):
        cls.__module__ = "__main__"
    seed()
    opt = optimize_for_mobile(torch.jit.script(PackedConv6().eval()))
    opt._save_for_lite_interpreter(os.path.join(d, "xnnpack_conv6.ptl"))
    seed()
    m = QuantizedConv6().eval()
    m.qconfig = torch.quantization.get_default_qconfig(torch.backends.quantized.engine)
    torch.quantization.prepare(m, inplace=True)
    with torch.no_grad():
        for _ in range(4):
            m(torch.rand(1, 6, 8, 8))
    torch.quantization.convert(m, inplace=True)
    torch.jit.save(torch.jit.script(m), os.path.join(d, "quantized_conv6.pt"))


class PackedFlat(torch.nn.Module):
    """A strided convolution whose map is flattened into a linear layer of
    128 inputs: it takes 3x32x32 images. Once packed by optimize_for_mobile,
    a 224x224 image (6272 features) still runs: XNNPACK's linear reads the
    first 128 of each row, and its convolution takes any channel count."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 8, stride=8)
        self.fc = nn.Linear(128, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.flatten(torch.relu(self.conv(x)), 1))


def gen_packed_flat(out):
    """For the checks XNNPACK's prepacked operators skip (PackedFlat)."""
    from torch.utils.mobile_optimizer import optimize_for_mobile
    d = os.path.join(out, "infer")
    os.makedirs(d, exist_ok=True)
    PackedFlat.__module__ = "__main__"
    seed()
    opt = optimize_for_mobile(torch.jit.script(PackedFlat().eval()))
    torch.jit.save(opt, os.path.join(d, "xnnpack_flat.pt"))


class LoadHook(torch.nn.Module):
    """A state hook: torch.jit.load runs __setstate__ while it unpickles
    data.pkl, and this one reads a file of the machine that loads it."""

    def __init__(self):
        super().__init__()
        self.w = torch.ones(4)
        self.leak = torch.zeros(1)

    @torch.jit.export
    def __getstate__(self) -> Tuple[torch.Tensor, bool]:
        return (self.w, self.training)

    @torch.jit.export
    def __setstate__(self, state: Tuple[torch.Tensor, bool]) -> None:
        self.w = state[0]
        self.training = state[1]
        self.leak = torch.from_file("/etc/passwd", False, 4, dtype=torch.uint8)

    def forward(self, x):
        return x * self.w


class LoadHookInside(torch.nn.Module):
    """The same hook, one submodule down."""

    def __init__(self):
        super().__init__()
        self.inner = LoadHook()

    def forward(self, x):
        return self.inner(x)


class FileBehindFlag(torch.nn.Module):
    """Reads a file only when a flag argument asks: no run with the default
    would show it, the code does."""

    def forward(self, x, flag: bool = False):
        if flag:
            return torch.from_file("/etc/passwd", False, 16, dtype=torch.uint8).float()
        return x + 1


class UncheckedView(torch.nn.Module):
    """A view LibTorch never checks against its storage: aten::_reshape_alias
    with sizes past it reads the process's memory (torch.unsafe)."""

    def forward(self, x):
        return torch.ops.aten._reshape_alias(x, [x.numel() * 4096], [1]).sum()


def gen_load_hooks(out):
    """For ts.hooks (Elastic ml-cpp's rules for untrusted TorchScript): code
    that acts while the archive loads, or that reads files."""
    d = os.path.join(out, "hooks")
    os.makedirs(d, exist_ok=True)
    for cls, name in ((LoadHook, "setstate_reads_file.pt"), (LoadHookInside, "submodule_setstate.pt"),
                      (FileBehindFlag, "forward_reads_file.pt"), (UncheckedView, "unchecked_view.pt")):
        cls.__module__ = "__main__"
        torch.jit.save(torch.jit.script(cls()), os.path.join(d, name))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "testdata"))
    ap.add_argument("--diff-variant", nargs=2, metavar=("NAME", "PATH"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.diff_variant:
        torch.set_num_threads(1)
        gen_diff_variant(*args.diff_variant)
        return 0
    out = args.out
    os.makedirs(out, exist_ok=True)
    # golden/ and bad/ are entirely generated: start them fresh so stale files vanish
    for sub in ("golden", "bad"):
        shutil.rmtree(os.path.join(out, sub), ignore_errors=True)

    torch.set_num_threads(1)
    load_models()
    notes = []
    with tempfile.TemporaryDirectory() as tmp:
        gen_traced_cnn(out)
        gen_scripted_multi(out)
        q_files = gen_quantized(out, notes)
        gen_with_extra(out)
        gen_mobile(out, notes)
        gen_renamed_root(out, tmp)
        gen_bad(out, tmp)
        gen_unaligned(out)
        gen_reference(out)
        gen_branchy(out)
        gen_cuda_pinned(out)
        gen_greedy_alloc(out)
        gen_guess_verdicts(out)
        gen_load_hooks(out)
        gen_packed_weights(out)
        gen_packed_flat(out)

    stems = ["traced_cnn", "scripted_multi"] + [f[:-3] for f in q_files] + ["with_extra", "renamed_root"]
    gen_golden(out, stems, notes)
    gen_diff_pairs(out)

    write_text(os.path.join(out, "README.md"), README.format(
        torch_version=torch.__version__, engine=torch.backends.quantized.engine,
        golden_stems=", ".join("`%s.pt`" % s for s in stems)))

    total = 0
    for dirpath, _, files in os.walk(out):
        for fn in files:
            total += os.path.getsize(os.path.join(dirpath, fn))
    for n in notes:
        print("note:", n)
    print("wrote %s (%d bytes total)" % (out, total))
    if total >= 2 * 1024 * 1024:
        print("warning: testdata exceeds 2 MB", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
