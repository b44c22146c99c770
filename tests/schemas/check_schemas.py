#!/usr/bin/env python3
"""Every JSON document tsctl prints validates against its published schema.

Usage: check_schemas.py TSCTL REPO_ROOT

Runs each command below on real test archives, parses each line of stdout as
one JSON document and validates it with python3-jsonschema against
docs/schemas/NAME.schema.json. A document without schema_version, a command
that prints nothing, or a schema that does not exist fails the test.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import jsonschema

tsctl, root = sys.argv[1], sys.argv[2]
td = os.path.join(root, "testdata")
corpus = os.path.join(root, "..", "shared", "corpus")

tmp = tempfile.mkdtemp()
stamped = os.path.join(tmp, "stamped.pt")
shutil.copy(os.path.join(td, "with_extra.pt"), stamped)
os.chmod(stamped, 0o644)
made = os.path.join(tmp, "made.pt")

# (schema, arguments, exit codes accepted)
cases = [
    ("inspect", ["inspect", "--format", "json", f"{td}/traced_cnn.pt", f"{td}/with_extra.pt"], {0}),
    ("inspect", ["inspect", "--json", f"{td}/scripted_multi.pt"], {0}),
    ("graph", ["graph", "--format", "json", f"{td}/traced_cnn.pt"], {0}),
    ("code", ["code", "--format", "json", f"{td}/scripted_multi.pt"], {0}),
    ("code", ["code", "--format", "json", "--compiled", f"{td}/traced_cnn.pt"], {0}),
    ("stamp", ["stamp", "--format", "json", "--set", "team=ml", stamped], {0}),
    ("stamp_show", ["stamp", "--show", "--format", "json", stamped], {0}),
    ("validate", ["validate", "--format", "json", f"{td}/traced_cnn.pt", f"{td}/with_extra.pt"], {0, 1, 7}),
    ("validate", ["validate", "--format", "json", "--no-load", f"{td}/with_extra.pt"], {0, 1}),
    ("validate", ["validate", "--format", "json", "--reference-model", f"{td}/diff/base.pt", "-i", "2x4:float32:ones",
                  f"{td}/diff/weight.pt", f"{td}/diff/resaved.pt"], {1}),
    ("bench", ["bench", "--format", "json", "--iters", "3", "--warmup", "1", "-i", "1x3x32x32", f"{td}/traced_cnn.pt"], {0}),
    ("bench_shapes", ["bench", "--format", "json", "--iters", "3", "--warmup", "1", "--shapes",
                      "x:1x3x32x32,2x3x32x32,4x3x32x32", f"{td}/traced_cnn.pt"], {0}),
    ("validate", ["validate", "--format", "json", "--reference-model", f"{td}/diff/base.pt", "--compare-intermediates",
                  "-i", "2x4:float32:ones", f"{td}/diff/weight.pt", f"{td}/diff/op_added.pt"], {1}),
    ("make", ["trace", "--format", "json", "-i", "1x3x32x32", f"{td}/traced_cnn.pt", "-o", made], {0}),
] + [
    ("diff", ["diff", "--format", "json", f"{td}/diff/base.pt", f"{td}/diff/{v}.pt"], {0, 1})
    for v in ("weight", "op_added", "metadata", "shape", "renamed", "resaved")
] + [
    ("diff", ["diff", "--format", "json", f"{td}/diff/base.pt", f"{td}/mobile.ptl"], {1}),
    ("diff", ["diff", "--format", "json", f"{td}/traced_cnn.pt", f"{td}/quantized.pt"], {1}),
    # .pt2 archives (docs/manual/pt2.md)
    ("inspect", ["inspect", "--json"] + [f"{td}/pt2/{n}.pt2" for n in ("cnn", "two_input", "transformer")], {0}),
    ("graph", ["graph", "--format", "json", f"{td}/pt2/two_input.pt2"], {0}),
    ("validate", ["validate", "--format", "json", "--no-load", f"{td}/pt2/cnn.pt2"], {0}),
    ("diff", ["diff", "--format", "json", f"{td}/pt2/cnn.pt2", f"{td}/pt2/cnn_weight.pt2"], {1}),
    # compat: every format, every kind of target
    ("compat", ["compat", "--format", "json", "--target", "torch==1.13", "--target", "torch==2.15", "--target", "host",
                "--target", "executorch==1.5.1", f"{td}/traced_cnn.pt", f"{td}/mobile.ptl", f"{td}/pt2/cnn.pt2",
                f"{td}/pt2/cnn_aoti_stub.pt2", f"{td}/pte/linear_xnnpack.pte", f"{td}/pte/linear_external.ptd"], {1}),
]
for name in sorted(os.listdir(corpus)) if os.path.isdir(corpus) else []:
    if name.endswith(".pt2"):
        cases.append(("inspect", ["inspect", "--json", os.path.join(corpus, name)], {0}))
if os.path.isdir(corpus):
    for name in sorted(os.listdir(corpus))[:12]:
        path = os.path.join(corpus, name)
        if os.path.isfile(path):
            cases.append(("inspect", ["inspect", "--json", path], {0, 4}))
            cases.append(("validate", ["validate", "--format", "json", "--no-load", path], {0, 1, 4}))
# ExecuTorch files (docs/manual/pte.md): inspect's own schema, validate's report.
pte_dir = os.path.join(corpus, "pte")
for name in sorted(os.listdir(pte_dir)) if os.path.isdir(pte_dir) else []:
    path = os.path.join(pte_dir, name)
    if os.path.isfile(path) and not name.endswith(".md"):
        cases.append(("inspect_pte", ["inspect", "--json", path], {0, 4}))
        cases.append(("validate", ["validate", "--format", "json", path], {0, 1, 7}))

failures = 0
documents = 0
for schema_name, args, codes in cases:
    with open(os.path.join(root, "docs", "schemas", schema_name + ".schema.json")) as f:
        schema = json.load(f)
    p = subprocess.run([tsctl] + args, capture_output=True, text=True, errors="strict")
    where = "tsctl " + " ".join(args)
    if p.returncode not in codes:
        print(f"FAIL {where}: exit {p.returncode}: {p.stderr.strip()}")
        failures += 1
        continue
    lines = [l for l in p.stdout.splitlines() if l.strip()]
    if not lines and p.returncode == 0:
        print(f"FAIL {where}: printed no JSON")
        failures += 1
    for line in lines:
        try:
            doc = json.loads(line)
            jsonschema.validate(doc, schema)
            if "schema_version" not in doc:
                raise ValueError("no schema_version")
            documents += 1
        except Exception as e:  # noqa: BLE001 - any failure is reported
            print(f"FAIL {where}: {str(e).splitlines()[0]}")
            failures += 1
shutil.rmtree(tmp)
print(f"{documents} documents valid; {failures} failures")
sys.exit(1 if failures else 0)
