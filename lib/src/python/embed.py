# Runs inside tsctl's embedded CPython (lib/src/python/python_backend.cc).
# check_torch() runs before torch is imported; make() builds the archive bytes.
import importlib.util
import io
import json
import os
import sys


def check_torch(tsctl_libtorch):
    """Refuses a torch package whose LibTorch is another file than tsctl's, so
    that two LibTorch copies are never loaded into one process."""
    tsctl_libtorch = os.fsdecode(tsctl_libtorch)
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return "this Python (%s) has no torch package" % sys.executable
    root = list(spec.submodule_search_locations)[0]
    candidates = [os.path.join(root, "lib", n) for n in ("libtorch_cpu.so",)]
    theirs = [os.path.realpath(c) for c in candidates if os.path.exists(c)]
    ours = os.path.realpath(tsctl_libtorch)
    ours_dir = os.path.dirname(ours)
    if theirs and ours not in theirs and not any(os.path.dirname(t) == ours_dir for t in theirs):
        return ("the Python torch at %s is another LibTorch build (%s) than the one tsctl links (%s); "
                "build tsctl against it (scripts/build_torch2.sh) or use the matching Python" % (root, theirs[0], ours))
    return ""


def _import_file(path, name):
    import inspect
    import re
    if not os.path.exists(path):
        raise IoError("cannot read %s: No such file or directory" % path)
    # The module's name becomes part of TorchScript's qualified class names
    # (__torch__.NAME.Net): letters, digits and '_' only.
    stem = os.path.splitext(os.path.basename(path))[0]
    modname = "_tsctl_user_" + re.sub(r"[^A-Za-z0-9_]", "_", stem, flags=re.ASCII)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        path.encode("utf-8")
        module = _load_module(modname, path)
    except UnicodeEncodeError:
        module = _load_odd_module(modname, path)
    if not hasattr(module, name):
        names = sorted(n for n, v in vars(module).items() if not n.startswith("_") and callable(v))
        raise UsageError("%s has no '%s' (callables there: %s)" % (path, name, ", ".join(names) or "none"))
    return getattr(module, name), inspect.isclass(getattr(module, name))


def _run_module(path, run):
    try:
        run()
    except (Exception, SystemExit) as e:  # the user's module failed at import
        raise UsageError("importing %s failed: %s: %s" % (path, type(e).__name__, e))


def _load_module(modname, path):
    spec = importlib.util.spec_from_file_location(modname, path)
    if spec is None:
        raise UsageError("cannot import %s: not a Python file" % path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[modname] = module
    _run_module(path, lambda: spec.loader.exec_module(module))
    return module


def _load_odd_module(modname, path):
    """A file whose name is not UTF-8 (os.fsdecode's surrogates): torch hands
    a function's file name to C++ as text, which surrogates cannot be. The
    code is compiled under the name with its odd bytes written \\xNN, and
    its lines are put in linecache under that name, where inspect (and so
    torch.jit.script) finds the source. Its __file__ is that name too (the
    folder's real path is on sys.path for its imports)."""
    import linecache
    import types
    import tokenize
    shown = os.fsencode(path).decode("utf-8", "backslashreplace")
    with open(path, "rb") as f:
        source = f.read()
    # The lines as linecache reads a file (its coding cookie, universal
    # newlines: no split at a form feed, as str.splitlines would make), so
    # that line numbers match what compile() counts.
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
    except SyntaxError:  # a bad coding cookie: compile() below says so
        encoding = "utf-8"
    lines = io.StringIO(source.decode(encoding, "replace"), newline=None).readlines()
    linecache.cache[shown] = (len(source), None, lines, shown)
    module = types.ModuleType(modname)
    module.__file__ = shown
    sys.modules[modname] = module
    _run_module(path, lambda: exec(compile(source, shown, "exec"), module.__dict__))
    return module


class UsageError(Exception):
    pass


class IoError(Exception):
    pass


_BUILD_2X = ("; scripts/build_torch2.sh builds a tsctl on PyTorch 2.x that has it "
             "(build-torch2/bin/tsctl, docs/manual/building.md)")


class UnavailableError(Exception):
    """This Python's torch lacks what the command needs (exit 6)."""


def _make_input(torch, spec, gen):
    shape, dtype, channels_last, fill, low, high, value, _text = spec
    dt = getattr(torch, dtype)  # tsctl's dtype names are torch's (tsctl/dtype.h), checked by the C++ side
    if fill == "zeros":
        t = torch.zeros(shape, dtype=dt)
    elif fill == "ones":
        t = torch.ones(shape, dtype=dt)
    elif fill == "fill":
        t = torch.full(shape, value).to(dt)
    elif fill == "randint":
        t = torch.randint(int(low), int(high), shape, generator=gen).to(dt)
    elif fill == "uniform":
        t = (torch.rand(shape, generator=gen) * (high - low) + low).to(dt)
    elif dt.is_floating_point:
        t = torch.randn(shape, generator=gen).to(dt)
    elif dt == torch.bool:
        t = torch.randint(0, 2, shape, generator=gen).to(torch.bool)
    else:
        t = torch.randint(0, 10, shape, generator=gen).to(dt)
    if channels_last:
        t = t.contiguous(memory_format=torch.channels_last)
    return t


def _inputs(torch, specs, seed):
    gen = torch.Generator().manual_seed(seed)
    return tuple(_make_input(torch, s, gen) for s in specs)


def _flatten(torch, value):
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _flatten(torch, v)]
    if isinstance(value, dict):
        return [t for k in value for t in _flatten(torch, value[k])]
    return []


def _compare(torch, want, got, rtol, atol):
    a, b = _flatten(torch, want), _flatten(torch, got)
    if len(a) != len(b) or any(x.shape != y.shape or x.dtype != y.dtype for x, y in zip(a, b)):
        return False, -1.0
    worst = 0.0
    ok = True
    for x, y in zip(a, b):
        if x.numel():
            worst = max(worst, (x.double() - y.double()).abs().max().item())
        ok = ok and torch.allclose(x.double(), y.double(), rtol=rtol, atol=atol, equal_nan=True)
    return ok, worst


def make(file, name, mode, specs, check_specs, freeze, rtol, atol):
    # Paths and names come as bytes (a file name need not be UTF-8): as str
    # the way os.fsdecode gives them, so that open() finds the same file.
    file, name = os.fsdecode(file), os.fsdecode(name)
    return _with_warnings(lambda: _make(file, name, mode, specs, check_specs, freeze, rtol, atol))


def _model(torch, file, name):
    factory, _ = _import_file(file, name)
    try:
        model = factory()
    except (Exception, SystemExit) as e:
        raise UsageError("calling %s() failed: %s: %s" % (name, type(e).__name__, e))
    if not isinstance(model, torch.nn.Module):
        raise UsageError("%s() returned %s, not a torch.nn.Module" % (name, type(model).__name__))
    return model.eval()


def _with_warnings(work):
    """Runs work() and adds the distinct warnings it raised, one line each."""
    import warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = work()
    seen = []
    for w in caught:
        text = "%s: %s" % (w.category.__name__, str(w.message).split("\n")[0])
        if text not in seen:
            seen.append(text)
    result["warnings"] = seen
    return result


def _check(torch, model, made, specs, seed, rtol, atol, eager_first=False):
    """Runs the eager model and the made one on one input set. With
    eager_first, an input set the eager model itself fails on is the
    caller's error (UsageError), not a divergence."""
    def failed(e):
        return {"matched": False, "max_abs": -1.0, "error": "%s: %s" % (type(e).__name__, _first_line(str(e)))}

    x = _inputs(torch, specs, seed)
    try:
        want = model(*x)
    except Exception as e:
        if eager_first:
            raise UsageError("the eager model fails on the check inputs %s: %s: %s" % (
                ", ".join(s[7] for s in specs), type(e).__name__, _first_line(str(e))))
        return failed(e)
    try:
        ok, worst = _compare(torch, want, made(*x), rtol, atol)
        return {"matched": ok, "max_abs": worst, "error": ""}
    except Exception as e:
        return failed(e)


def _first_line(text):
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    return lines[0] if lines else ""


def _make(file, name, mode, specs, check_specs, freeze, rtol, atol):
    import torch
    model = _model(torch, file, name)
    inputs = _inputs(torch, specs, 0)
    with torch.no_grad():
        if mode == "trace":
            if not specs:
                raise UsageError("tracing needs example inputs: --input SHAPE[:DTYPE] per argument")
            made = torch.jit.trace(model, inputs, check_trace=False)
        else:
            try:
                made = torch.jit.script(model)
            except OSError as e:
                raise UsageError("torch.jit.script needs the Python source of %s, and it is not available (%s): "
                                 "a module loaded from .pyc files alone cannot be scripted; ship the .py file or use tsctl trace" % (name, e))
            except Exception as e:  # TorchScript's compiler refused the code
                lines = [l.strip() for l in str(e).splitlines() if l.strip()]
                where = next((l for l in lines[1:] if l.startswith("File ")), "").replace(os.getcwd() + os.sep, "")
                raise UsageError("torch.jit.script cannot compile %s: %s: %s%s" % (
                    name, type(e).__name__, lines[0] if lines else "", " (" + where + ")" if where else ""))
            if specs:
                made(*inputs)  # fails now, not at serving time
        checks = []
        diverged = False
        for i, cs in enumerate(check_specs):
            checks.append(_check(torch, model, made, cs, i + 1, rtol, atol))
            diverged = diverged or not checks[-1]["matched"]
    if diverged:
        return {"diverged": True, "checks": checks, "bytes": b"", "methods": []}
    if freeze:
        made = torch.jit.freeze(made)
    extra = {}
    if specs:
        extra["tsctl_inputs.json"] = json.dumps({"forward": [spec_text(s) for s in specs]}) + "\n"
    buf = io.BytesIO()
    torch.jit.save(made, buf, _extra_files=extra)
    methods = [m for m in made._c._method_names()] if hasattr(made._c, "_method_names") else ["forward"]
    return {"diverged": False, "checks": checks, "bytes": buf.getvalue(), "methods": methods}


def export(file, name, specs, check_specs, aoti, dynamic_batch, strict, rtol, atol, path):
    """tsctl export: torch.export.export of the model on the example inputs,
    saved with torch.export.save, or with --aoti compiled by AOTInductor for
    the CPU (torch._inductor.aoti_compile_and_package), into `path`. The
    artifact (ep.module(), or the package as aoti_load_package runs it) is
    compared with the eager model on every check set; nothing is written
    when one diverges."""
    file, name, path = os.fsdecode(file), os.fsdecode(name), os.fsdecode(path)
    return _quietly(lambda: _export(file, name, specs, check_specs, aoti, dynamic_batch, strict, rtol, atol, path))


def _quietly(work):
    """_with_warnings(work) with torch's logging and the standard streams
    kept out of tsctl's output: torch.export, its TorchScript converter and
    Inductor print graphs and log internals to stderr, and a model may print
    to stdout, where --format json goes. Python warnings are listed in the
    result."""
    import contextlib
    import logging
    logger = logging.getLogger("torch")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            return _with_warnings(work)
    finally:
        logger.setLevel(level)


def _export_error(what, e):
    """torch.export's errors: the first line, and for a constraint violation
    the line that says which dimension and why."""
    lines = [l.strip() for l in str(e).splitlines() if l.strip()]
    text = lines[0] if lines else type(e).__name__
    detail = next((l[2:] for l in lines[1:] if l.startswith("- ")), "")
    if type(e).__name__ == "GuardOnDataDependentSymNode":
        detail = ("(control flow on a tensor's values: rewrite it with torch.cond, or make a TorchScript archive "
                  "with tsctl script)")
    return UsageError("%s: %s: %s%s" % (what, type(e).__name__, text, " " + detail if detail else ""))


def _export(file, name, specs, check_specs, aoti, dynamic_batch, strict, rtol, atol, path):
    import torch
    if importlib.util.find_spec("torch.export") is None or not hasattr(torch.export, "export"):
        raise UnavailableError("tsctl export needs torch.export (PyTorch 2.1 or later); the embedded Python's torch is "
                               + torch.__version__ + _BUILD_2X)
    if aoti:
        import torch._inductor
        if not hasattr(torch._inductor, "aoti_compile_and_package"):
            raise UnavailableError("--aoti needs torch._inductor.aoti_compile_and_package (PyTorch 2.6 or later); "
                                   "the embedded Python's torch is " + torch.__version__ + _BUILD_2X)
    dynamic = None
    if dynamic_batch:  # tsctl checked that every example batch is 2 or more
        batch = torch.export.Dim("batch", min=1)
        dynamic = tuple({0: batch} if len(s[0]) > 0 else None for s in specs)
    model = _model(torch, file, name)
    inputs = _inputs(torch, specs, 0)
    try:
        ep = torch.export.export(model, inputs, dynamic_shapes=dynamic, strict=strict)
    except Exception as e:  # the exporter refused the model
        raise _export_error("torch.export.export cannot export " + name, e)
    if aoti:
        try:
            torch._inductor.aoti_compile_and_package(ep, package_path=path)
        except Exception as e:  # Inductor or the C++ compiler failed
            raise _export_error("AOTInductor cannot compile " + name, e)
        made = torch._inductor.aoti_load_package(path)
    else:
        made = ep.module()
    checks = []
    with torch.no_grad():
        for i, cs in enumerate(check_specs):
            checks.append(_check(torch, model, made, cs, i + 1, rtol, atol, eager_first=True))
    diverged = any(not c["matched"] for c in checks)
    if not aoti and not diverged:
        torch.export.save(ep, path)
    return {"diverged": diverged, "checks": checks, "models": ["model"], "dynamic": _dynamic_dims(torch, ep)}


def _dynamic_dims(torch, ep):
    """The user inputs' symbolic sizes and their ranges: "x.shape[0] in [1, inf]"."""
    users = set(ep.graph_signature.user_inputs)
    out = []
    for node in ep.graph.nodes:
        val = node.meta.get("val") if node.op == "placeholder" and node.name in users else None
        for i, d in enumerate(getattr(val, "shape", ())):
            if isinstance(d, torch.SymInt):
                r = ep.range_constraints.get(d.node.expr)
                lo = _bound(r.lower, "0") if r is not None else "0"
                hi = _bound(r.upper, "inf") if r is not None else "inf"
                out.append("%s.shape[%d] in [%s, %s]" % (node.name, i, lo, hi))
    return out


def _bound(value, infinite):
    """A range's bound as an integer, or `infinite` (sympy's int_oo has no int())."""
    try:
        return str(int(value))
    except (TypeError, ValueError, AttributeError, OverflowError):
        return infinite


def spec_text(s):
    # The spec as tsctl prints it (InputSpec::ToString), fill included.
    return s[7]


def load_data(file, name):
    """--data-loader-script FILE:NAME (Polygraphy's data loader): NAME is a
    function (called with no arguments) or an iterable; its first item is one
    set of arguments: a tuple or list of them, one value, or a dict of arrays
    by argument name. Returns (suffix, bytes): ".pt" and torch.save of the
    argument tuple, or ".npz" and the named arrays."""
    import torch
    file, name = os.fsdecode(file), os.fsdecode(name)
    source, _ = _import_file(file, name)
    try:
        data = source() if callable(source) else source
        items = iter(data)
    except TypeError:
        raise UsageError("%s:%s gave %s, not an iterable of argument sets (write a generator that yields tuples)"
                         % (file, name, type(data).__name__))
    except Exception as e:
        raise UsageError("calling %s:%s() failed: %s: %s" % (file, name, type(e).__name__, e))
    try:
        first = next(items)
    except StopIteration:
        raise UsageError("%s:%s yielded nothing" % (file, name))
    except Exception as e:
        raise UsageError("%s:%s failed before its first item: %s: %s" % (file, name, type(e).__name__, e))

    def value(v):
        if type(v).__module__ == "numpy" and hasattr(v, "shape"):
            return torch.from_numpy(v.copy())
        return v

    if isinstance(first, dict):
        import numpy
        arrays = {}
        for k, v in first.items():
            if isinstance(v, torch.Tensor):
                v = v.detach().cpu().numpy()
            arrays[str(k)] = numpy.asarray(v)
        buf = io.BytesIO()
        numpy.savez(buf, **arrays)
        return ".npz", buf.getvalue()
    args = tuple(value(v) for v in first) if isinstance(first, (tuple, list)) else (value(first),)
    buf = io.BytesIO()
    torch.save(args, buf)
    return ".pt", buf.getvalue()


def migrate(archive, specs, load_path, aoti, keep_unverified, rtol, atol, path, bench_iters=0, intermediates=False):
    """tsctl migrate: the TorchScript archive converted to a torch.export
    program by the converter torch ships (TS2EPConverter), verified against
    the archive on the sample inputs and on one more input set per dynamic
    dimension the program claims, and saved to `path` (torch.export.save, or
    with `aoti` an AOTInductor package) only when verified or
    `keep_unverified`. With `bench_iters`, a verified model's forms are
    timed on the sample (_bench). With `intermediates`, an input set whose
    outputs differ names the first node whose value differs
    (_first_divergence). Returns how far it got, as data."""
    archive, load_path, path = os.fsdecode(archive), os.fsdecode(load_path), os.fsdecode(path)
    return _quietly(lambda: _migrate(archive, specs, load_path, aoti, keep_unverified, rtol, atol, path, bench_iters,
                                     intermediates))


_CONVERTER = "torch._export.converter.TS2EPConverter"


def _converter(torch):
    try:
        from torch._export.converter import TS2EPConverter
    except Exception:
        raise UnavailableError("tsctl migrate needs torch's TorchScript converter (%s, PyTorch 2.4 or later); "
                               "the embedded Python's torch is %s%s" % (_CONVERTER, torch.__version__, _BUILD_2X))
    return TS2EPConverter


def _loaded_inputs(torch, path):
    """--load-inputs or a recorded reference: torch.save of the argument tuple
    (or of a list, one tensor, or a dict holding "inputs")."""
    if path.endswith(".npz"):
        import numpy
        with numpy.load(path) as z:
            return tuple(torch.from_numpy(z[k].copy()) for k in z.files)
    value = torch.load(path, map_location="cpu", weights_only=False)
    if isinstance(value, dict) and "inputs" in value:
        value = value["inputs"]
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


def _blockers(converter, ts, inputs, error):
    """The nodes the converter cannot convert, from its explain(): kind, the
    node as TorchScript prints it, and the source line from the archive's
    debug info. Without a list, the error itself names the blocker."""
    import re
    text = ""
    try:
        text = converter(ts, inputs).explain() or ""
    except Exception:
        pass
    out = []
    for m in re.finditer(r"^\s*\d+\.\s+(\S+)\s+\[(.*)\]\s*$", text, re.M):
        node = m.group(2)
        where = node.rsplit(" # ", 1)[1].strip() if " # " in node else ""
        out.append({"kind": m.group(1), "node": node.rsplit(" # ", 1)[0].strip(), "where": where})
    if not out:
        text = str(error)
        m = re.search(r"failed for node (\S+)", text)
        # A node the converter emitted fails when the program is retraced:
        # "While executing %to_float_tensor : ... target=torch._export.converter.to_float_tensor".
        emitted = re.search(r"While executing %\S+ : .*?target=([\w.]+)", text)
        source = re.search(r"Original trace.*?\n\s*(\S.*)", text, re.S)
        if m:
            kind = m.group(1)
        elif emitted:
            kind = emitted.group(1).rsplit(".", 1)[-1] + " (" + type(error).__name__ + ")"
        else:
            kind = type(error).__name__
        out.append({"kind": kind, "node": _first_line(text), "where": source.group(1).strip() if source else ""})
    return out


def _errors(torch, want, got):
    """(matched shapes and dtypes, max abs error, max rel error, first output
    that differs, each output's {"name", "max_abs", "max_rel"} up to the first
    that cannot be compared)."""
    a, b = _flatten(torch, want), _flatten(torch, got)
    if len(a) != len(b):
        return False, -1.0, -1.0, "the program returns %d tensors, the archive %d" % (len(b), len(a)), []
    worst_abs = worst_rel = 0.0
    outputs = []
    for i, (x, y) in enumerate(zip(a, b)):
        if x.shape != y.shape or x.dtype != y.dtype:
            return False, -1.0, -1.0, "output %d: %s %s vs the archive's %s %s" % (
                i, str(y.dtype), list(y.shape), str(x.dtype), list(x.shape)), outputs
        one_abs = one_rel = 0.0
        if x.numel():
            d = (x.double() - y.double()).abs()
            one_abs = d.max().item()
            one_rel = (d / x.double().abs().clamp_min(1e-12)).max().item()
        outputs.append({"name": "output %d" % i, "max_abs": one_abs, "max_rel": one_rel})
        worst_abs, worst_rel = max(worst_abs, one_abs), max(worst_rel, one_rel)
    return True, worst_abs, worst_rel, "", outputs


# --compare-intermediates: intermediate tensors kept at most, per graph (a
# larger graph is compared up to there).
_MAX_INTERMEDIATES = 20000


def _ts_intermediates(torch, ts, x):
    """Every tensor a TorchScript method's inlined graph computes at its top
    level, as (operator, node, value) in graph order: a copy of forward's
    graph that returns them too, run as a function on the module (the values
    inside a loop's or an if's blocks are the block node's outputs)."""
    g = ts.graph.copy()
    torch._C._jit_pass_inline(g)
    nodes = []
    for n in g.nodes():
        if n.kind() in ("prim::Constant", "prim::GetAttr"):
            continue
        for o in n.outputs():
            if isinstance(o.type(), torch._C.TensorType) and len(nodes) < _MAX_INTERMEDIATES:
                nodes.append((n, o))
    ret = g.return_node()
    outs = list(ret.inputs())
    t = g.create("prim::TupleConstruct", outs + [o for _, o in nodes], 1)
    t.insertBefore(ret)
    t.output().setType(torch._C.TupleType([v.type() for v in outs] + [o.type() for _, o in nodes]))
    while len(list(g.outputs())):
        g.eraseOutput(0)
    g.registerOutput(t.output())
    fn = torch._C._create_function_from_graph("tsctl_intermediates", g)
    values = fn(ts._c, *x)[len(outs):]
    return [(n.kind(), n, v) for (n, _), v in zip(nodes, values)]


def _program_intermediates(torch, program, x):
    """Every tensor the program's graph computes, as (operator, node, value)
    in graph order (torch.fx.Interpreter over ep.module())."""
    out = []

    class Capture(torch.fx.Interpreter):
        def run_node(self, n):
            value = super().run_node(n)
            if n.op == "call_function" and isinstance(value, torch.Tensor) and len(out) < _MAX_INTERMEDIATES:
                schema = getattr(n.target, "_schema", None)
                out.append((schema.name if schema is not None else str(n.target), n, value))
            return value

    Capture(program).run(*x)
    return out


def _where(node):
    """The first line of a TorchScript node's source range: the archive's
    code/ file and line, or the source the model was scripted from."""
    try:
        text = node.sourceRange()
    except Exception:
        return ""
    return text.strip().split("\n", 1)[0].strip() if text else ""


def _first_divergence(torch, ts, program, x, rtol, atol):
    """--compare-intermediates: the two graphs' intermediate tensors matched
    where they can be (difflib's longest matching blocks over each graph's
    sequence of (operator, shape, dtype): the same operator on the same
    shapes in the same order), then compared in the archive's order; the
    first matched pair beyond rtol/atol is the first differing node."""
    import difflib
    d = {"compared": False, "node": "", "where": "", "program_node": "", "max_abs": -1.0, "matched": 0,
         "agreed": 0, "note": ""}
    try:
        a = _ts_intermediates(torch, ts, x)
        b = _program_intermediates(torch, program, x)
    except Exception as e:
        d["note"] = "intermediates not computed: %s: %s" % (type(e).__name__, _first_line(str(e)))
        return d

    def key(item):
        return (item[0], tuple(item[2].shape), str(item[2].dtype))

    blocks = difflib.SequenceMatcher(None, [key(i) for i in a], [key(i) for i in b], autojunk=False).get_matching_blocks()
    pairs = [(i + k, j + k) for i, j, n in blocks for k in range(n)]
    d["matched"] = len(pairs)
    d["compared"] = True
    if not pairs:
        d["note"] = "no node of the archive's %d matches one of the program's %d (operator, shape and dtype)" % (
            len(a), len(b))
        return d
    for i, j in pairs:
        p, q = a[i][2], b[j][2]
        if p.is_floating_point() or p.is_complex():
            same = torch.allclose(p, q, rtol=rtol, atol=atol, equal_nan=True)
        else:
            same = torch.equal(p, q)
        if same:
            d["agreed"] += 1
            continue
        d["node"] = a[i][0]
        d["where"] = _where(a[i][1])
        d["program_node"] = "%s (%s)" % (b[j][1].name, b[j][0])
        if p.numel():
            d["max_abs"] = (p.double() - q.double()).abs().max().item()
        return d
    d["note"] = ("the %d nodes matched agree: the difference arises in the nodes that could not be matched "
                 "(the archive's %d, the program's %d)" % (len(pairs), len(a) - len(pairs), len(b) - len(pairs)))
    return d


def _verify(torch, ts, program, x, label, rtol, atol, intermediates=False):
    """The archive and the program on one input set."""
    shapes = ", ".join("x".join(str(d) for d in t.shape) or "scalar" for t in x if isinstance(t, torch.Tensor))
    c = {"inputs": label + " (" + shapes + ")", "matched": False, "skipped": "", "max_abs": -1.0, "max_rel": -1.0,
         "error": "", "outputs": [], "divergence": None}
    try:
        want = ts(*x)
    except Exception as e:
        c["skipped"] = "the TorchScript archive fails on it too: %s: %s" % (type(e).__name__, _first_line(str(e)))
        return c
    try:
        got = program(*x)
    except Exception as e:
        text = _first_line(str(e))
        if "Guard failed" in text:  # a clean refusal: the program specializes this size, it computes nothing wrong
            c["skipped"] = "the program specializes this size (%s)" % text.replace("AssertionError: ", "")
        else:
            c["error"] = "the program fails on it: %s: %s" % (type(e).__name__, text)
        return c
    same, c["max_abs"], c["max_rel"], why, c["outputs"] = _errors(torch, want, got)
    a, b = _flatten(torch, want), _flatten(torch, got)
    if not same:
        c["error"] = why
        return c
    for i, (p, q) in enumerate(zip(a, b)):
        if not torch.allclose(p.double(), q.double(), rtol=rtol, atol=atol, equal_nan=True):
            n = (~torch.isclose(p.double(), q.double(), rtol=rtol, atol=atol, equal_nan=True)).sum().item()
            c["error"] = "output %d differs: %d of %d values beyond rtol %g, atol %g" % (i, n, p.numel(), rtol, atol)
            if intermediates:
                c["divergence"] = _first_divergence(torch, ts, program, x, rtol, atol)
            return c
    c["matched"] = True
    return c


def _other_shapes(torch, ep, inputs):
    """One input set per symbolic size of the program's user inputs: that
    size moved by one within its range, values drawn like the sample's."""
    users = [n for n in ep.graph.nodes if n.op == "placeholder" and n.name in set(ep.graph_signature.user_inputs)]
    symbols = {}
    for k, node in enumerate(users):
        for i, d in enumerate(getattr(node.meta.get("val"), "shape", ())):
            if isinstance(d, torch.SymInt) and k < len(inputs) and isinstance(inputs[k], torch.Tensor):
                symbols.setdefault(str(d.node.expr), []).append((k, i))
    out = []
    gen = torch.Generator().manual_seed(1)
    for sym, places in symbols.items():
        k, i = places[0]
        size = inputs[k].shape[i]
        r = ep.range_constraints.get(users[k].meta["val"].shape[i].node.expr)
        hi = _bound(r.upper, "inf") if r is not None else "inf"
        lo = _bound(r.lower, "0") if r is not None else "0"
        new = size + 1 if hi == "inf" or size + 1 <= int(hi) else size - 1
        if new < int(lo) or new == size:
            continue
        x = []
        for j, t in enumerate(inputs):
            if not isinstance(t, torch.Tensor):
                x.append(t)
                continue
            shape = [new if (j, a) in places else s for a, s in enumerate(t.shape)]
            if t.dtype.is_floating_point:
                v = torch.randn(shape, generator=gen).to(t.dtype)
            elif t.dtype == torch.bool:
                v = torch.randint(0, 2, shape, generator=gen).to(torch.bool)
            else:
                top = int(t.max().item()) + 1 if t.numel() else 1
                low = min(0, int(t.min().item())) if t.numel() else 0
                v = torch.randint(low, max(top, low + 1), shape, generator=gen).to(t.dtype)
            x.append(v)
        out.append(("%s=%d" % ("%s.shape[%d]" % (users[k].name, i), new), tuple(x)))
    return out


_BENCH_WARMUP = 3  # migrate.h's kMigrateBenchWarmup


def _bench(torch, forms, x, iters):
    """migrate --bench: each (name, callable) form on the inputs `x`, in
    turns: _BENCH_WARMUP untimed calls of each, then `iters` timed calls of
    each, interleaved (form 1, form 2, ..., form 1, ...) so that a machine
    that speeds up or slows down during the run weighs on every form alike.
    A form that fails is left out of the turns, with its error."""
    import time
    out = [{"form": name, "latencies_ns": [], "error": ""} for name, _ in forms]
    live = list(range(len(forms)))

    def call(k):
        try:
            forms[k][1](*x)
            return True
        except Exception as e:
            out[k]["error"] = "%s: %s" % (type(e).__name__, _first_line(str(e)))
            out[k]["latencies_ns"] = []
            live.remove(k)
            return False

    with torch.no_grad():
        for _ in range(_BENCH_WARMUP):
            for k in list(live):
                call(k)
        for _ in range(iters):
            for k in list(live):
                start = time.perf_counter_ns()
                if call(k):
                    out[k]["latencies_ns"].append(time.perf_counter_ns() - start)
    return out


def _migrate(archive, specs, load_path, aoti, keep_unverified, rtol, atol, path, bench_iters=0, intermediates=False):
    import torch
    converter = _converter(torch)
    import hashlib
    digest = hashlib.sha256()
    with open(archive, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    r = {"stage": "", "blockers": [], "error": "", "checks": [], "dynamic": [], "converter": _CONVERTER,
         "torch": torch.__version__, "verified": False, "written": False, "sha256": digest.hexdigest(), "timings": [],
         "bench": [], "bench_warmup": 0}
    import time
    clock = [time.monotonic()]

    def timed(step):  # the seconds since the last step, as r["timings"]' next entry
        now = time.monotonic()
        r["timings"].append({"step": step, "seconds": now - clock[0]})
        clock[0] = now

    try:
        import warnings
        with warnings.catch_warnings():  # torch 2.14+ calls its own torch.jit.load deprecated: not the model's news
            warnings.filterwarnings("ignore", message=".*torch.jit.load. is deprecated")
            ts = torch.jit.load(archive, map_location="cpu")
    except Exception as e:
        timed("load")
        r["error"] = "torch.jit.load: %s: %s" % (type(e).__name__, _first_line(str(e)))
        r["blockers"] = [{"kind": "load", "node": r["error"], "where": ""}]
        return r
    timed("load")
    r["stage"] = "loaded"
    try:
        inputs = _inputs(torch, specs, 0) if specs else _loaded_inputs(torch, load_path)
    except Exception as e:
        raise UsageError("cannot read the inputs %s: %s: %s" % (load_path, type(e).__name__, _first_line(str(e))))
    r["stage"] = "inputs"
    ts.eval()
    try:
        ep = converter(ts, inputs).convert()
    except Exception as e:
        r["error"] = "%s: %s" % (type(e).__name__, _first_line(str(e)))
        r["blockers"] = _blockers(converter, ts, inputs, e)
        timed("conversion")
        return r
    timed("conversion")
    r["stage"] = "converted"
    r["dynamic"] = _dynamic_dims(torch, ep)
    program = ep.module()
    with torch.no_grad():
        sample = _verify(torch, ts, program, inputs, "sample", rtol, atol, intermediates)
        r["checks"].append(sample)
        timed("verification on the sample")
        if sample["matched"]:
            r["stage"] = "verified_sample"
            for label, x in _other_shapes(torch, ep, inputs):
                r["checks"].append(_verify(torch, ts, program, x, label, rtol, atol, intermediates))
            timed("verification on other shapes")
    failed = [c for c in r["checks"] if not c["matched"] and not c["skipped"]]
    r["verified"] = sample["matched"] and not failed
    if r["verified"]:
        r["stage"] = "verified_shapes"
    else:
        c = failed[0] if failed else sample
        r["error"] = "not verified on %s: %s" % (c["inputs"], c["error"] or c["skipped"])
        r["blockers"] = [{"kind": "wrong result" if c["error"].startswith("output") else "refused shape"
                          if "fails on it" in c["error"] else "mismatch", "node": c["error"], "where": ""}]
    if r["verified"] or keep_unverified:
        try:
            if aoti:
                import torch._inductor
                torch._inductor.aoti_compile_and_package(ep, package_path=path)
            else:
                torch.export.save(ep, path)
        except Exception as e:
            timed("packaging")
            r["error"] = "%s: %s: %s" % ("AOTInductor" if aoti else "torch.export.save", type(e).__name__,
                                         _first_line(str(e)))
            r["blockers"] = [{"kind": "packaging", "node": r["error"], "where": ""}]
            return r
        timed("packaging")
        r["written"] = True
        if r["verified"]:
            r["stage"] = "packaged"
    if bench_iters > 0 and r["verified"]:
        forms = [("torchscript", ts), ("program", program)]
        if aoti and r["written"]:
            try:
                import torch._inductor
                forms.append(("aoti", torch._inductor.aoti_load_package(path)))
            except Exception as e:
                forms.append(("aoti", _failing(e)))
        r["bench"] = _bench(torch, forms, inputs, bench_iters)
        r["bench_warmup"] = _BENCH_WARMUP
        timed("bench")
    return r


def _failing(error):
    """A form that could not be loaded: fails when called, with `error`."""
    def call(*args):
        raise error
    return call
