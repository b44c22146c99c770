#!/usr/bin/env python3
"""Gathers what each runtime registers into lib/data/compat/ (tsctl compat).

For a torch release it runs a snippet in a Python where that torch is
importable and writes, from the running torch itself:
  - every registered operator with its overload (torch._C._jit_get_all_schemas),
  - every registered TorchScript custom class (the `self` types of
    torch._C._jit_get_custom_class_schemas),
  - the operator upgraders (torch._C._get_operator_version_map: the file
    format version at which each operator's schema changed, and the upgrader
    LibTorch applies to older archives),
  - the TorchScript file-format and bytecode versions the loader accepts
    (caffe2/serialize/versions.h of the same install: kMin/kMaxSupported...),
  - the .pt2 schema version (torch._export.serde.schema.SCHEMA_VERSION).
For ExecuTorch it asks the tsctl it is given (`tsctl compat --dump-runtime
executorch`): the kernels and backends linked into tsctl-pte-runner.

Never run in CI: the torch 2.x wheels are several GB each. One venv at a
time, removed once its data is written:

  scripts/gen_compat_data.py torch /usr/bin/python3 --label 1.13.1
  scripts/gen_compat_data.py torch .venv-torch2/bin/python \
      --source "PyPI's torch 2.15.0 wheel (scripts/install_torch2.sh)"
  scripts/gen_compat_data.py torch-wheel 2.13.0 --python .venv-torch2/bin/python
  scripts/gen_compat_data.py executorch build/bin/tsctl
  scripts/gen_compat_data.py torch /srv/venv/bin/python --out serving.txt   (a serving environment:
      tsctl compat --target serving.txt)

`torch-wheel VERSION` downloads PyPI's torch VERSION alone (pip download
--no-deps), unpacks it into a temporary folder and imports it with the given
Python, whose venv supplies the CUDA runtime wheels (nvidia-*): a torch built
for the same CUDA major version loads with them.
"""
import argparse
import datetime
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "lib", "data", "compat")

SNIPPET = r'''
import json, os, re, sys, warnings
warnings.simplefilter("ignore")
import torch
out = {"version": torch.__version__}
ops = set()
for s in torch._C._jit_get_all_schemas():
    ops.add(s.name + ("." + s.overload_name if s.overload_name else ""))
out["operators"] = sorted(ops)
classes = set()
for s in torch._C._jit_get_custom_class_schemas():
    if s.arguments:
        t = str(s.arguments[0].type)
        if t.startswith("__torch__.torch.classes."):
            classes.add(t[len("__torch__.torch.classes."):])
out["classes"] = sorted(classes)
ups = []
for op, entries in torch._C._get_operator_version_map().items():
    for e in entries:
        ups.append([op, e.bumped_at_version, e.upgrader_name])
out["upgraders"] = sorted(ups)
# versions.h of this install: the wheel's torch/include, or the system's
# include folder for a distribution's torch.
here = os.path.dirname(torch.__file__)
for inc in [os.path.join(here, "include"), "/usr/include"]:
    p = os.path.join(inc, "caffe2", "serialize", "versions.h")
    if os.path.exists(p):
        text = open(p).read()
        def const(name):
            m = re.search(r"constexpr uint64_t " + name + r"\s*=\s*(0x[0-9A-Fa-f]+|\d+)", text)
            return int(m.group(1).rstrip("L"), 0) if m else None
        out["file_format"] = [const("kMinSupportedFileFormatVersion"), const("kMaxSupportedFileFormatVersion")]
        out["bytecode"] = [const("kMinSupportedBytecodeVersion"), const("kMaxSupportedBytecodeVersion")]
        out["versions_h"] = p
        break
# The legacy model.json importer (torch::jit::LEGACY_deserialize) is compiled
# in only without C10_MOBILE and C10_DISABLE_LEGACY_IMPORT: look for it in the
# libtorch_cpu this process loaded.
for line in open("/proc/self/maps"):
    path = line.split()[-1]
    if "libtorch_cpu.so" in path and os.path.exists(path):
        out["legacy_import"] = b"LEGACY_deserialize" in open(path, "rb").read()
        break
try:
    from torch._export.serde.schema import SCHEMA_VERSION
    out["pt2_schema"] = list(SCHEMA_VERSION)
except Exception:
    pass
json.dump(out, sys.stdout)
'''


OUT_FILE = None  # --out: one file anywhere (a serving environment's data) instead of lib/data/compat/


def write(name, header, lines):
    os.makedirs(OUT, exist_ok=True)
    path = OUT_FILE or os.path.join(OUT, name)
    with open(path + ".tmp", "w") as f:
        f.write("".join(h + "\n" for h in header))
        f.write("".join(l + "\n" for l in lines))
    os.replace(path + ".tmp", path)
    print(f"gen_compat_data: wrote {os.path.relpath(path)} ({len(lines)} entries)", file=sys.stderr)


def torch_data(python, label, how, env=None):
    r = subprocess.run([python, "-c", SNIPPET], capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.exit(f"gen_compat_data: {python}: {r.stderr.strip().splitlines()[-1] if r.stderr.strip() else 'failed'}")
    d = __import__("json").loads(r.stdout)
    version = label or d["version"].split("+")[0]
    header = [
        f"# What torch {version} registers, for tsctl compat. Generated: do not edit.",
        f"# gathered by scripts/gen_compat_data.py on {datetime.date.today().isoformat()}",
        f"# from {how} (torch.__version__ {d['version']})",
        f"runtime torch {version}",
        f"date {datetime.date.today().isoformat()}",
        f"source {how}",
    ]
    if d.get("file_format") and None not in d["file_format"]:
        header.append("file_format %d %d" % tuple(d["file_format"]))
    if d.get("bytecode") and None not in d["bytecode"]:
        header.append("bytecode %d %d" % tuple(d["bytecode"]))
    if "legacy_import" in d:
        header.append("legacy_import " + ("yes" if d["legacy_import"] else "no"))
    if d.get("pt2_schema"):
        header.append("pt2_schema %d %d" % tuple(d["pt2_schema"][:2]))
    lines = [f"class {c}" for c in d["classes"]]
    lines += [f"upgrader {op} {v} {name}" for op, v, name in d["upgraders"]]
    lines += d["operators"]
    write(f"torch-{version}.txt", header, lines)


def torch_wheel(version, python):
    tmp = tempfile.mkdtemp(prefix="tsctl-compat-")
    try:
        subprocess.run([python, "-m", "pip", "download", "--no-deps", "-q", "-d", tmp, f"torch=={version}"], check=True)
        wheel = next(f for f in os.listdir(tmp) if f.endswith(".whl"))
        site = os.path.join(tmp, "site")
        with zipfile.ZipFile(os.path.join(tmp, wheel)) as z:
            z.extractall(site)
        os.remove(os.path.join(tmp, wheel))
        # The venv's CUDA runtime wheels, where an older torch's loader looks
        # elsewhere for them (nvidia/cu13/lib vs nvidia/<lib>/lib).
        venv_site = subprocess.run([python, "-c", "import site; print(site.getsitepackages()[0])"],
                                   capture_output=True, text=True, check=True).stdout.strip()
        libs = [os.path.join(root) for root, _, files in os.walk(os.path.join(venv_site, "nvidia"))
                if any(".so" in f for f in files)]
        env = dict(os.environ, PYTHONPATH=site,
                   LD_LIBRARY_PATH=":".join(libs + [os.environ.get("LD_LIBRARY_PATH", "")]))
        torch_data(python, version, f"PyPI's {wheel}", env)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def executorch(tsctl):
    r = subprocess.run([tsctl, "compat", "--dump-runtime", "executorch"], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"gen_compat_data: {tsctl}: {r.stderr.strip()}")
    lines = r.stdout.splitlines()
    version = next(l.split()[2] for l in lines if l.startswith("runtime executorch "))
    today = datetime.date.today().isoformat()
    header = [f"# What ExecuTorch {version} (PyPI's executorch wheel, its C++ runtime) registers, for tsctl compat.",
              f"# gathered by scripts/gen_compat_data.py on {today} from `tsctl compat --dump-runtime executorch`"]
    body = [l for l in lines if not l.startswith("#")]
    write(f"executorch-{version}.txt", header, body)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=["torch", "torch-wheel", "executorch"])
    ap.add_argument("arg", help="torch: a Python; torch-wheel: a version; executorch: a tsctl")
    ap.add_argument("--label", help="torch: the version to record (default torch.__version__ without +local)")
    ap.add_argument("--python", default=sys.executable, help="torch-wheel: the Python that imports it")
    ap.add_argument("--source", help="torch: how the torch was installed, for the data's source line")
    ap.add_argument("--out", help="write this file instead of lib/data/compat/<runtime>-<version>.txt "
                    "(a serving environment's registry, for tsctl compat --target FILE)")
    a = ap.parse_args()
    global OUT_FILE
    OUT_FILE = a.out
    if a.what == "torch":
        how = a.source or ("Debian 12's python3-torch" if a.arg.startswith("/usr/bin/") else f"the torch of {a.arg}")
        torch_data(a.arg, a.label, how)
    elif a.what == "torch-wheel":
        torch_wheel(a.arg, a.python)
    else:
        executorch(a.arg)


if __name__ == "__main__":
    main()
