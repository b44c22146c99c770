#!/usr/bin/env python3
"""Checks tsctl migrate's verified programs independently of tsctl (issue
#38's measure): for every archive a `tsctl migrate --json` report calls
packaged, loads the TorchScript archive (torch.jit.load) and the .pt2
(torch.export.load) with this Python's torch, and runs both on inputs whose
size is 2 more in each dimension the program claims dynamic, from the sample
specs the report recorded. Prints how many sets agree, differ, are refused by
the program (a guard) or fail in the archive itself; exits 1 if one differs.

    .venv-torch2/bin/python scripts/migrate_check.py MIGRATE.json
    (scripts/migrate_corpus.sh writes OUT_DIR/migrate.json)
"""
import json, sys, torch, warnings, re
warnings.filterwarnings("ignore")
d = json.load(open(sys.argv[1]))
DT = {"float32": torch.float32, "float64": torch.float64, "int64": torch.int64, "int32": torch.int32, "bool": torch.bool, "uint8": torch.uint8, "float16": torch.float16}
agree = differ = refused = tsfail = 0
for r in d["results"]:
    if r["stage"] != "packaged": continue
    ts = torch.jit.load(r["path"], map_location="cpu"); ep = torch.export.load(r["output"])
    specs = []
    for s in r["inputs"]:
        parts = s.split(":"); shape = [] if parts[0] == "scalar" else [int(x) for x in parts[0].split("x")]
        specs.append((shape, DT.get(parts[1], torch.float32)))
    users = [n for n in ep.graph.nodes if n.op == "placeholder" and n.name in set(ep.graph_signature.user_inputs)]
    sets = []
    for k, n in enumerate(users[:len(specs)]):
        for i, dim in enumerate(getattr(n.meta.get("val"), "shape", ())):
            if isinstance(dim, torch.SymInt):
                sets.append([(sh if j != k else [v + 2 if a == i else v for a, v in enumerate(sh)], dt) for j, (sh, dt) in enumerate(specs)])
    for st in sets:
        g = torch.Generator().manual_seed(3)
        x = tuple(torch.randn(sh, generator=g).to(dt) if dt.is_floating_point else torch.randint(0, 2, sh, generator=g).to(dt) for sh, dt in st)
        try:
            a = ts(*x)
        except Exception:
            tsfail += 1; continue
        try:
            b = ep.module()(*x)
        except Exception as e:
            refused += 1; continue
        fa = [t for t in (a if isinstance(a, (tuple, list)) else [a]) if isinstance(t, torch.Tensor)]
        fb = [t for t in (b if isinstance(b, (tuple, list)) else [b]) if isinstance(t, torch.Tensor)]
        ok = len(fa) == len(fb) and all(p.shape == q.shape and torch.allclose(p.double(), q.double(), rtol=1e-4, atol=1e-5, equal_nan=True) for p, q in zip(fa, fb))
        if ok: agree += 1
        else:
            differ += 1; print("DIFFERS", r["path"], [s[0] for s in st])
print(f"packaged {sum(r['stage']=='packaged' for r in d['results'])}; other-shape sets: agree {agree}, differ {differ}, program refused (guard) {refused}, archive fails {tsfail}")
sys.exit(1 if differ else 0)
