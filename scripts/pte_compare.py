#!/usr/bin/env python3
"""Checks tsctl's C++ reader of ExecuTorch files against ExecuTorch's own
Python deserializer (issue #39): for every .pte, .ptd and .bpte of a folder,
`TSCTL inspect --format json FILE` and ExecuTorch's reading of the same bytes
must say the same thing. Prints one line per file (agree, or the first
difference) and a total; exits 1 on any disagreement, including a file one
side reads and the other refuses.

    scripts/install_executorch.sh
    .venv-executorch/bin/python scripts/pte_compare.py build/bin/tsctl [CORPUS_DIR]

CORPUS_DIR defaults to shared/corpus/pte beside the repository. What is read
on the ExecuTorch side (executorch 1.5.1, see install_executorch.sh):
  .pte   executorch.exir._serialize._program: _get_extended_header, then
         _flatbuffer_to_program and _restore_segments, the two stages of
         deserialize_pte_binary (called apart because the second empties
         program.segments and named_data once it has moved their bytes)
  .ptd   executorch.extension.flat_tensor.serialize: FlatTensorSerializer's
         deserialize and the FlatTensor table it reads (through flatc)
  .bpte  executorch.devtools.bundled_program.serialize:
         deserialize_from_flatbuffer_to_bundled_program (through flatc), then
         the embedded program as a .pte
Compared for a program: version, the extended header, segments (offset,
size), constant buffers, inline delegate blobs, named data (key, segment,
bytes), and per method: name, values, chains, non-constant buffer sizes,
inputs and outputs (value kind; dtype, sizes, dim order, dynamism of
tensors), operators in order (name.overload and calls counted from the
instruction chains), instructions by kind, delegates (backend id, inline or
segment, index, bytes, compile spec keys, calls), and the stored tensors
(constant, mutable or external: method, value index, location, name, dtype,
sizes) by the rule of upstream program.fbs.
"""
import json
import os
import subprocess
import sys
import warnings

warnings.filterwarnings("ignore")
os.environ.setdefault("TORCH_CPP_LOG_LEVEL", "ERROR")
import logging  # noqa: E402

logging.disable(logging.WARNING)

from executorch.exir._serialize import _program as et_program  # noqa: E402
from executorch.exir._serialize._flatbuffer_program import _flatbuffer_to_program  # noqa: E402
from executorch.exir import schema as S  # noqa: E402

# ExecuTorch's ScalarType enum names where the runtime (and tsctl) print another.
DTYPE_ALIASES = {"COMPLEX32": "complexhalf", "COMPLEX64": "complexfloat", "COMPLEX128": "complexdouble"}
DYNAMISM = {0: "static", 1: "dynamic_bound", 2: "dynamic_unbound"}
KINDS = {"Null": "None"}


def dtype_name(scalar_type):
    st = S.ScalarType(int(scalar_type))
    return DTYPE_ALIASES.get(st.name, st.name.lower().replace("_", ""))


def norm_dtype(name):
    return name.lower().replace("_", "")


class Differ(Exception):
    pass


def same(what, tsctl, et):
    if tsctl != et:
        raise Differ(f"{what}: tsctl {tsctl!r}, executorch {et!r}")


# ---- ExecuTorch's side, as plain data -------------------------------------

def et_tensor(t):
    extra = t.extra_tensor_info
    return {"dtype": dtype_name(t.scalar_type), "sizes": list(t.sizes), "dim_order": list(t.dim_order),
            "dynamism": DYNAMISM.get(int(t.shape_dynamism), "unknown"),
            "fqn": (extra.fully_qualified_name or "") if extra else ""}


def et_signature(plan, indices):
    out = []
    for i in indices:
        val = plan.values[i].val
        kind = KINDS.get(type(val).__name__, type(val).__name__)
        out.append({"kind": kind, "tensor": et_tensor(val) if isinstance(val, S.Tensor) else None})
    return out


def et_location(t, program):
    """Where a tensor keeps its bytes, by the rule of upstream program.fbs."""
    extra = t.extra_tensor_info
    if extra is not None and extra.location == S.TensorDataLocation.EXTERNAL:
        return "external"
    if t.data_buffer_idx == 0:
        return None
    if t.allocation_info is not None:
        return "mutable"
    return "inline" if len(program.constant_buffer) > 0 else "segment"


def et_program_facts(data):
    """Reads a .pte the way deserialize_pte_binary does; returns plain facts."""
    eh = et_program._get_extended_header(data)
    program_size, base = len(data), 0
    header = None
    if eh and eh.is_valid():
        program_size, base = eh.program_size, eh.segment_base_offset
        header = {"program_size": eh.program_size, "segment_base_offset": eh.segment_base_offset,
                  "segment_data_size": eh.segment_data_size}
    program = _flatbuffer_to_program(data[:program_size])
    facts = {"header": header, "version": program.version,
             "segments": [(s.offset, s.size) for s in program.segments],
             "constant_buffers": len(program.constant_buffer),
             "constant_buffer_bytes": sum(len(b.storage) for b in program.constant_buffer),
             "inline_delegate_blobs": len(program.backend_delegate_data),
             "inline_delegate_bytes": sum(len(b.data) for b in program.backend_delegate_data),
             "named_data": [(n.key, n.segment_index, program.segments[n.segment_index].size
                             if n.segment_index < len(program.segments) else None)
                            for n in (program.named_data or [])],
             "methods": [], "tensors": []}
    for plan in program.execution_plan:
        kinds = {"kernel_calls": 0, "delegate_calls": 0, "moves": 0, "jump_false": 0, "frees": 0}
        op_calls = [0] * len(plan.operators)
        del_calls = [0] * len(plan.delegates)
        for chain in plan.chains:
            for ins in chain.instructions:
                a = ins.instr_args
                if isinstance(a, S.KernelCall):
                    kinds["kernel_calls"] += 1
                    op_calls[a.op_index] += 1
                elif isinstance(a, S.DelegateCall):
                    kinds["delegate_calls"] += 1
                    del_calls[a.delegate_index] += 1
                elif isinstance(a, S.MoveCall):
                    kinds["moves"] += 1
                elif isinstance(a, S.JumpFalseCall):
                    kinds["jump_false"] += 1
                elif isinstance(a, S.FreeCall):
                    kinds["frees"] += 1
        delegates = []
        for d, calls in zip(plan.delegates, del_calls):
            inline = d.processed.location == S.DataLocation.INLINE
            if inline:
                size = len(program.backend_delegate_data[d.processed.index].data)
            else:
                size = program.segments[d.processed.index].size
            delegates.append({"backend_id": d.id, "inline": inline, "index": d.processed.index, "bytes": size,
                              "compile_spec_keys": [c.key for c in d.compile_specs], "calls": calls})
        facts["methods"].append({
            "name": plan.name, "values": len(plan.values), "chains": len(plan.chains),
            "non_const_buffer_sizes": list(plan.non_const_buffer_sizes),
            "inputs": et_signature(plan, plan.inputs), "outputs": et_signature(plan, plan.outputs),
            "operators": [(f"{o.name}.{o.overload}" if o.overload else o.name, c)
                          for o, c in zip(plan.operators, op_calls)],
            "instructions": kinds, "delegates": delegates})
        for i, v in enumerate(plan.values):
            if isinstance(v.val, S.Tensor):
                loc = et_location(v.val, program)
                if loc:
                    t = et_tensor(v.val)
                    facts["tensors"].append((plan.name, i, loc, t["fqn"], t["dtype"], t["sizes"]))
    # The second stage: moves delegate, constant, mutable and named data out of
    # the segments; it refuses what does not fit.
    if base != 0:
        et_program._restore_segments(program=program, segment_data=data[base:])
    return facts


# The FlatTensor schema of executorch 0.6.0 (extension/flat_tensor/serialize/
# flat_tensor.fbs, comments left out). Files written before the schema of
# mid-2025 (version, segments, named_data with a tensor layout) keep their
# tensors in field 2 under the same identifier FT01; executorch 1.5.1's flatc
# crashes on them (SIGSEGV), so they are read with this schema and the same flatc.
FLAT_TENSOR_0_6_FBS = """include "scalar_type.fbs";
namespace flat_tensor_flatbuffer;
file_identifier "FT01";
file_extension "ptd";
table TensorMetadata { fully_qualified_name: string; scalar_type: executorch_flatbuffer.ScalarType;
  sizes: [int32]; dim_order: [uint8]; segment_index: uint32; offset: uint64; }
table DataSegment { offset: uint64; size: uint64; }
table NamedData { key: string; segment_index: uint32; }
table FlatTensor { version: uint32; tensor_alignment: uint32; tensors: [TensorMetadata];
  segments: [DataSegment]; named_data: [NamedData]; }
root_type FlatTensor;
"""


def et_flat_tensor_0_6(flatbuffer):
    import importlib.resources
    import tempfile
    from executorch.exir._serialize._flatbuffer import _flatc_decompile
    from executorch.extension.flat_tensor import serialize as pkg
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "flat_tensor.fbs"), "w") as f:
            f.write(FLAT_TENSOR_0_6_FBS)
        with open(os.path.join(d, "scalar_type.fbs"), "wb") as f:
            f.write(importlib.resources.read_binary(pkg, "scalar_type.fbs"))
        with open(os.path.join(d, "flat_tensor.bin"), "wb") as f:
            f.write(flatbuffer)
        _flatc_decompile(d, os.path.join(d, "flat_tensor.fbs"), os.path.join(d, "flat_tensor.bin"), ["--raw-binary"])
        with open(os.path.join(d, "flat_tensor.json")) as f:
            return json.load(f)


def et_flat_tensor_facts(data):
    import subprocess as sp
    from executorch.exir._serialize._cord import Cord
    from executorch.extension.flat_tensor.serialize import serialize as ft
    header = ft.FlatTensorHeader.from_bytes(data[8:])
    flatbuffer = data[0:header.flatbuffer_offset + header.flatbuffer_size]
    try:
        payload = ft.FlatTensorSerializer().deserialize(Cord(data))
    except sp.CalledProcessError as ex:
        if ex.returncode >= 0:
            raise
        # flatc died of a signal: try the schema before mid-2025.
        old = et_flat_tensor_0_6(flatbuffer)
        segments = old.get("segments", [])
        return {"version": old["version"], "reader": "executorch 0.6.0's schema",
                "named_data": [{"key": n["key"], "bytes": segments[n["segment_index"]]["size"], "layout": None}
                               for n in old.get("named_data", [])],
                "tensors": [(t["fully_qualified_name"], dtype_name(S.ScalarType[t["scalar_type"]]), t["sizes"])
                            for t in old.get("tensors", [])]}
    flat = ft._deserialize_to_flat_tensor(flatbuffer)
    named = []
    for n in flat.named_data:
        layout = n.tensor_layout
        named.append({"key": n.key, "bytes": flat.segments[n.segment_index].size,
                      "layout": (dtype_name(layout.scalar_type), list(layout.sizes)) if layout else None})
    assert sorted(payload.named_data) == sorted(n["key"] for n in named)
    return {"version": flat.version, "named_data": named,
            "tensors": [(n["key"], *n["layout"]) for n in named if n["layout"]]}


def et_bundled_facts(data):
    from executorch.devtools.bundled_program.serialize import deserialize_from_flatbuffer_to_bundled_program
    bp = deserialize_from_flatbuffer_to_bundled_program(data)
    return {"version": bp.version, "program_bytes": len(bp.program),
            "test_suites": [(s.method_name, len(s.test_cases)) for s in bp.method_test_suites],
            "program": et_program_facts(bytes(bp.program))}


# ---- the comparison ---------------------------------------------------------

def ts_signature(items):
    out = []
    for it in items:
        t = it.get("tensor")
        out.append({"kind": it["kind"], "tensor": None if t is None else {
            "dtype": norm_dtype(t["dtype"]), "sizes": t["sizes"], "dim_order": t["dim_order"],
            "dynamism": t["dynamism"], "fqn": t["fqn"]}})
    return out


def compare_program(p, e, header=None):
    if header is not None:
        # A 24-byte eh00 has no segment data size: tsctl says null, ExecuTorch 0.
        ts_h = ({"program_size": header["program_size"], "segment_base_offset": header["segment_base_offset"],
                 "segment_data_size": header["segment_data_size"] if header["length"] >= 32 else 0}
                if header["present"] else None)
        same("extended header", ts_h, e["header"])
    same("program version", p["version"], e["version"])
    same("segments (offset, size)", [(s["offset"], s["size"]) for s in p["segments"]], e["segments"])
    for k in ("constant_buffers", "constant_buffer_bytes", "inline_delegate_blobs", "inline_delegate_bytes"):
        same(k, p[k], e[k])
    same("named data (key, segment, bytes)",
         [(n["key"], n["segment_index"], n["bytes"]) for n in p["named_data"]], e["named_data"])
    same("method names", [m["name"] for m in p["methods"]], [m["name"] for m in e["methods"]])
    for m, em in zip(p["methods"], e["methods"]):
        w = f"method {m['name']}"
        for k in ("values", "chains", "non_const_buffer_sizes"):
            same(f"{w}: {k}", m[k], em[k])
        same(f"{w}: input count", len(m["inputs"]), len(em["inputs"]))
        same(f"{w}: output count", len(m["outputs"]), len(em["outputs"]))
        same(f"{w}: inputs", ts_signature(m["inputs"]), em["inputs"])
        same(f"{w}: outputs", ts_signature(m["outputs"]), em["outputs"])
        same(f"{w}: operators (name.overload, calls)", [(o["key"], o["calls"]) for o in m["operators"]],
             em["operators"])
        ins = dict(m["instructions"])
        same(f"{w}: instructions of no known kind", ins.pop("unknown"), 0)
        same(f"{w}: instructions by kind", ins, em["instructions"])
        same(f"{w}: delegate count", len(m["delegates"]), len(em["delegates"]))
        same(f"{w}: delegates", [{k: d[k] for k in ("backend_id", "inline", "index", "bytes", "compile_spec_keys",
                                                     "calls")} for d in m["delegates"]], em["delegates"])
    same("stored tensor count", len(p["tensors"]), len(e["tensors"]))
    same("stored tensors (method, value, location, name, dtype, sizes)",
         [(t.get("method"), t.get("value_index"), t["location"], t["fqn"], norm_dtype(t["dtype"]), t["sizes"])
          for t in p["tensors"]], e["tensors"])


def summary_program(p):
    ops = sum(len(m["operators"]) for m in p["methods"])
    dels = sum(len(m["delegates"]) for m in p["methods"])
    return (f"{len(p['methods'])} method(s), {ops} operator(s), {dels} delegate(s), "
            f"{len(p['segments'])} segment(s), {len(p['tensors'])} stored tensor(s)")


def compare(kind_by_ext, doc, data):
    """Raises Differ at the first difference; returns a short summary."""
    if kind_by_ext == "program":
        same("kind", doc["kind"], "program")
        e = et_program_facts(data)
        compare_program(doc["program"], e, doc["header"])
        return summary_program(doc["program"])
    if kind_by_ext == "flat_tensor":
        same("kind", doc["kind"], "flat_tensor")
        e = et_flat_tensor_facts(data)
        d = doc["data"]
        same("data version", d["version"], e["version"])
        same("named data (key, bytes)", [(n["key"], n["bytes"]) for n in d["named_data"]],
             [(n["key"], n["bytes"]) for n in e["named_data"]])
        same("tensors (name, dtype, sizes)", [(t["fqn"], norm_dtype(t["dtype"]), t["sizes"]) for t in d["tensors"]],
             e["tensors"])
        via = f" (executorch: {e['reader']})" if "reader" in e else ""
        return f"{len(d['named_data'])} named blob(s), {len(d['tensors'])} tensor(s){via}"
    same("kind", doc["kind"], "bundled_program")
    e = et_bundled_facts(data)
    b = doc["bundled"]
    same("bundled version", b["version"], e["version"])
    same("embedded program bytes", b["program_bytes"], e["program_bytes"])
    same("test suites (method, cases)", [(s["method"], s["cases"]) for s in b["test_suites"]], e["test_suites"])
    compare_program(doc["program"], e["program"])
    return f"{len(b['test_suites'])} test suite(s); program: {summary_program(doc['program'])}"


EXT_KIND = {".pte": "program", ".ptd": "flat_tensor", ".bpte": "bundled_program"}


def et_refusal(kind, data):
    """ExecuTorch's reading of a file tsctl refused: None if it reads it."""
    try:
        {"program": et_program_facts, "flat_tensor": et_flat_tensor_facts,
         "bundled_program": et_bundled_facts}[kind](data)
    except Exception as ex:  # any refusal: struct.error, TypeError, ValueError, flatc's failure
        return f"{type(ex).__name__}: {str(ex).splitlines()[0][:120] if str(ex) else ''}"
    return None


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: pte_compare.py TSCTL [CORPUS_DIR]")
    tsctl = sys.argv[1]
    here = os.path.dirname(os.path.abspath(__file__))
    corpus = sys.argv[2] if len(sys.argv) > 2 else os.path.normpath(os.path.join(here, "..", "..", "shared", "corpus", "pte"))
    files = sorted(f for f in os.listdir(corpus) if os.path.splitext(f)[1] in EXT_KIND)
    agree = refused_both = differ = 0
    for name in files:
        path = os.path.join(corpus, name)
        kind = EXT_KIND[os.path.splitext(name)[1]]
        data = open(path, "rb").read()
        r = subprocess.run([tsctl, "inspect", "--format", "json", path], capture_output=True, text=True)
        ts_err = None if r.returncode == 0 else (r.stderr.strip().splitlines() or [f"exit {r.returncode}"])[-1]
        if ts_err:
            et_err = et_refusal(kind, data)
            if et_err:
                refused_both += 1
                print(f"agree   {name}: both refuse (tsctl exit {r.returncode}: {ts_err}; executorch: {et_err})")
            else:
                differ += 1
                print(f"DIFFER  {name}: tsctl refuses ({ts_err}), executorch reads it")
            continue
        try:
            summary = compare(kind, json.loads(r.stdout), data)
        except Differ as d:
            differ += 1
            print(f"DIFFER  {name}: {d}")
            continue
        except Exception as ex:
            differ += 1
            print(f"DIFFER  {name}: tsctl reads it, executorch refuses ({type(ex).__name__}: "
                  f"{str(ex).splitlines()[0][:120] if str(ex) else ''})")
            continue
        agree += 1
        print(f"agree   {name}: {summary}")
    print(f"{len(files)} files: {agree} agree, {refused_both} refused by both, {differ} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
